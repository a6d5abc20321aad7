"""One pull request per group, planned from the whole bump: which pin goes to which group and branch (a security
fix whatever its size, torch's dragged pins with torch, the base with patch, Debian's updates together), which
branch is made again, which pull request is closed as overtaken, and which is kept because the run was partial;
`--group G` keeps G's moves only."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytorch_cuda import cli
from pytorch_cuda.bump.base_digest import BaseMove
from pytorch_cuda.bump.bump_plan import BumpPlan, Move, TargetCheck
from pytorch_cuda.bump.debian_archive import DebianUpdate
from pytorch_cuda.bump.group_prs import plan_pull_requests
from pytorch_cuda.bump.groups import PinAdvisory, advisories_from, group_of, only
from pytorch_cuda.bump.resolver import Resolution
from tests.support.bump_indexes import numpy_held_and_waiting
from tests.support.offline_bump import bump_offline

CHECKED = (TargetCheck("cu128", "https://download.pytorch.org/whl/cu128"), TargetCheck("cu126", "https://x/cu126"))


def move(where: str, old: str, new: str) -> Move:
    path = tuple(where.split("."))
    return Move(path, Resolution(path[-1], old, new, "policy", None, ()))


MOVES = (
    move("targets.cu128.torch", "2.9.1", "2.10.0"),  # minor, and what it drags along with it
    move("targets.cu128.triton", "3.5.1", "3.6.0"),
    move("targets.cu128.cudnn", "9.10.2.21", "9.10.2.21"),  # not moved
    move("targets.cu128.nccl", "2.27.5", "2.28.1"),
    move("python_packages.numpy", "2.3.4", "2.3.5"),  # patch
    move("python_packages.jinja2", "3.1.4", "3.1.6"),  # patch, but it fixes an advisory: security
    move("python_packages.pillow", "11.3.0", "12.0.0"),  # major
    move("flavours.jupyter.python_packages.jupyterlab", "4.4.9", "4.5.0"),  # minor
)
JINJA = PinAdvisory("Jinja2", "3.1.4", "GHSA-q2x7-8rv6-6q7h", ("3.1.5",))
BASE = BaseMove("trixie", "debian:trixie-slim", "sha256:" + "a" * 64, "sha256:" + "b" * 64, "", "", "tag moved", False)


def plan(**changes: Any) -> BumpPlan:
    return replace(BumpPlan(MOVES, targets=CHECKED, bases=(BASE,)), **changes)


def by_group(found: BumpPlan, advisories: tuple[PinAdvisory, ...] = ()) -> dict[str, dict[str, object]]:
    return {g.group: g.as_json() for g in plan_pull_requests(found, advisories)}


def test_each_pin_goes_to_its_groups_branch() -> None:
    groups = by_group(plan(), (JINJA,))
    assert list(groups) == ["security", "major", "minor", "patch"]
    assert groups["security"] == {
        "group": "security",
        "branch": "bump/pins-security",
        "action": "update",
        "why": "its branch made again from the default branch (1 pin(s))",
        "pins": ["python_packages.jinja2"],
        "debian": [],
        "advisories": ["GHSA-q2x7-8rv6-6q7h"],
    }
    assert groups["major"]["pins"] == ["python_packages.pillow"]
    assert groups["minor"]["pins"] == [
        "targets.cu128.torch",
        "targets.cu128.triton",  # a patch-sized move of its own, but torch's wheel drags it: torch's group
        "targets.cu128.nccl",
        "flavours.jupyter.python_packages.jupyterlab",
    ]
    assert groups["patch"]["pins"] == ["python_packages.numpy", "bases.trixie.digest"]
    assert {g["branch"] for g in groups.values()} == {f"bump/pins-{g}" for g in groups}


def test_an_advisory_counts_only_for_the_version_it_names_and_a_move_past_its_fix() -> None:
    jinja = MOVES[5]
    assert group_of(jinja, plan(), (JINJA,)) == "security"
    assert group_of(jinja, plan(), ()) == "patch"
    for other in (
        PinAdvisory("jinja2", "3.1.3", "X", ("3.1.5",)),  # another version than the pin's
        PinAdvisory("jinja2", "3.1.4", "X", ("3.1.7",)),  # fixed only beyond the move
        PinAdvisory("markupsafe", "3.1.4", "X", ("3.1.5",)),  # another package
    ):
        assert group_of(jinja, plan(), (other,)) == "patch", other
    torch = PinAdvisory("torch", "2.9.1", "PYSEC-1", ("2.10.0",))
    assert group_of(MOVES[1], plan(), (torch,)) == "security"  # triton follows its torch into security
    audit = {"findings": [
        {"ecosystem": "pypi", "package": "Jinja2", "version": "3.1.4", "id": "GHSA-q2x7-8rv6-6q7h",
         "fix_versions": ["3.1.5"]},
        {"ecosystem": "pypi", "package": "pip", "version": "1", "id": "NOFIX", "fix_versions": []},
        {"ecosystem": "deb", "package": "passwd", "version": "1", "id": "DSA-1", "fix_versions": ["2"]},
    ]}  # fmt: skip
    assert advisories_from(audit) == (JINJA,)


def test_debian_updates_go_together_with_security_when_any_is_from_security() -> None:
    tzdata = DebianUpdate("tzdata", "2025a-1", "2025b-0+deb13u1", "trixie-updates", security=False)
    passwd = DebianUpdate("passwd", "1:4.17.4-2", "1:4.17.4-2+deb13u1", "trixie-security", security=True)
    groups = by_group(plan(debian=(tzdata,)))
    assert (groups["patch"]["debian"], groups["security"]["debian"]) == (["tzdata"], [])
    assert groups["security"]["action"] == "close"  # an audit with no advisory, no Debian security update
    unaudited = {g.group: g for g in plan_pull_requests(plan(debian=(tzdata,)), audited=False)}
    assert (unaudited["security"].action, unaudited["minor"].action) == ("keep", "update")
    assert unaudited["security"].why == "no security fix found, but no audit was given (bump --advisories): not closed"
    groups = by_group(plan(debian=(tzdata, passwd)))
    assert (groups["patch"]["debian"], groups["security"]["debian"]) == ([], ["tzdata", "passwd"])
    assert groups["security"]["why"] == "its branch made again from the default branch (2 Debian package(s))"


def test_a_group_the_default_branch_overtook_is_closed_unless_the_run_was_partial() -> None:
    only_patch = tuple(m for m in MOVES if m.path[-1] in ("numpy", "cudnn"))
    groups = by_group(plan(moves=only_patch, bases=()))
    assert [g["action"] for g in groups.values()] == ["close", "close", "close", "update"]
    assert groups["minor"]["why"] == "overtaken: the default branch has every pin this group would move"
    down = (CHECKED[0], TargetCheck("cu126", "https://x/cu126", unreachable="cannot read https://x/cu126"))
    groups = by_group(plan(moves=only_patch, bases=(), targets=down))
    assert [g["action"] for g in groups.values()] == ["keep", "keep", "keep", "update"]
    assert groups["minor"]["why"] == "nothing to move on the targets checked; not closed: cu126 not checked this run"


def test_only_keeps_one_groups_moves_and_says_whose_the_others_are() -> None:
    passwd = DebianUpdate("passwd", "1:4.17.4-2", "1:4.17.4-2+deb13u1", "trixie-security", security=True)
    whole = plan(debian=(passwd,))
    security = only(whole, "security", (JINJA,))
    assert [m.where for m in security.moved] == ["python_packages.jinja2"]
    assert (security.bases, security.debian) == ((), (passwd,))
    minor = only(whole, "minor", (JINJA,))
    assert [m.where for m in minor.moved] == [
        "targets.cu128.torch", "targets.cu128.triton", "targets.cu128.nccl",
        "flavours.jupyter.python_packages.jupyterlab",
    ]  # fmt: skip
    numpy = next(m for m in minor.moves if m.path[-1] == "numpy").resolution
    assert (numpy.new, numpy.why) == ("2.3.4", "patch update to 2.3.5: the patch group's")
    assert (minor.bases, minor.debian) == ((), ())
    patch = only(whole, "patch", (JINJA,))
    assert [m.where for m in patch.moved] == ["python_packages.numpy"]
    assert (patch.moved_bases, patch.debian) == ([BASE], ())
    every = [m.where for g in ("security", "major", "minor", "patch") for m in only(whole, g, (JINJA,)).moved]
    assert sorted(every) == sorted(m.where for m in whole.moved)  # every move in exactly one group's request


def test_bump_reads_an_audits_advisories_and_plans_the_groups_in_its_json(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bump_offline(monkeypatch, numpy_held_and_waiting)
    audit = tmp_path / "audit.json"
    finding = {"ecosystem": "pypi", "package": "numpy", "version": "2.5.5", "id": "GHSA-numpy", "fix_versions": []}
    audit.write_text(json.dumps({"findings": [finding | {"fix_versions": ["2.5.6"]}]}))

    def bump(*argv: str) -> dict[str, Any]:
        capsys.readouterr()
        assert cli.main(["bump", "--dry-run", "--json", *argv]) == 4  # partial: cu130's index is down
        found: dict[str, Any] = json.loads(capsys.readouterr().out)
        return found

    found = bump("--advisories", str(audit))
    numpy = next(m for m in found["moved"] if m["pin"] == "python_packages.numpy")
    assert (numpy["group"], numpy["fixes"]) == ("security", ["GHSA-numpy"])
    groups = {g["group"]: g for g in found["groups"]}
    assert (groups["security"]["action"], groups["security"]["pins"]) == ("update", ["python_packages.numpy"])
    assert groups["patch"]["pins"] == [f"targets.cu128.{key}" for key in ("torch", "triton", "cudnn", "nccl")]
    assert groups["minor"]["action"] == "keep"  # partial: nothing is closed
    body = tmp_path / "body.md"
    alone = bump("--advisories", str(audit), "--group", "security", "--pr-body", str(body))
    assert [m["pin"] for m in alone["moved"]] == ["python_packages.numpy"]
    assert [g["group"] for g in alone["groups"]] == ["security"]
    assert "The **security** group (branch `bump/pins-security`); it fixes GHSA-numpy." in body.read_text()
    assert [m["group"] for m in bump()["moved"]] == ["patch"] * 5  # without the audit: sizes only
    audit.write_text(json.dumps({"results": []}))
    capsys.readouterr()
    assert cli.main(["bump", "--dry-run", "--advisories", str(audit)]) == 2
    assert "has no findings in `build.py audit --json`'s shape" in " ".join(capsys.readouterr().err.split())
