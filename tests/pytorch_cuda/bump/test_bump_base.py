"""`build.py bump` and the base, for real: a base pinned by digest follows its tag on the loopback registry
(127.0.0.1:5000: two tiny images pushed under one tag, one after the other), and Debian's updates, read from a
loopback archive on 127.0.0.1, make the result "rebuild needed" (exit 3) with no pin moved."""

from __future__ import annotations

import uuid
from pathlib import Path

import docker
import pytest

from pytorch_cuda.bump.plan_output import EXIT_REBUILD_NEEDED
from pytorch_cuda.cli.main import main
from pytorch_cuda.matrix.build_matrix import load_matrix
from tests.support import local_registry as registry
from tests.support.bump_checkout import bump, checkout, committed_debian_packages
from tests.support.loopback_debian import LoopbackArchive
from tests.support.loopback_index import LoopbackIndex
from tests.support.tiny_images import build_and_push_image

pytestmark = pytest.mark.integration


def test_a_registry_base_follows_its_tag(
    tmp_path: Path, loopback_index: LoopbackIndex, debian_archive: LoopbackArchive, capsys: pytest.CaptureFixture[str]
) -> None:
    registry.require_registry()
    client = docker.from_env(timeout=300)
    repository, tag = f"{registry.REGISTRY}/bump-base-{uuid.uuid4().hex[:8]}", "trixie"
    _, first = build_and_push_image(client, repository, tag, "first")
    base = {"upstream": f"{repository}:{tag}", "digest": first}
    root = checkout(tmp_path / "repo", loopback_index.url, debian_archive.mirror, base)
    assert bump(root, capsys, "--target", "cu12", status=0)["result"] == "current"  # the tag serves the pin

    _, second = build_and_push_image(client, repository, tag, "second")  # the tag moves to a new image
    before = (root / "matrix.yaml").read_bytes()
    dry = bump(root, capsys, "--target", "cu12", "--dry-run", status=EXIT_REBUILD_NEEDED)
    assert (root / "matrix.yaml").read_bytes() == before
    [moved] = dry["bases"]
    assert (moved["old"], moved["new"], moved["moved"]) == (first, second, True)
    assert moved["why"] == f"policy base: follow ({repository}:{tag} serves it now)"
    assert dry["moved"] == []  # no Python pin moved: the base alone needs the rebuild

    capsys.readouterr()
    assert main(["bump", "--root", str(root), "--target", "cu12"]) == EXIT_REBUILD_NEEDED
    table = capsys.readouterr().out
    assert "bases.trixie.digest" in table
    assert second[:19] in table
    pinned = load_matrix(root / "matrix.yaml").bases["trixie"]  # still a valid matrix
    assert (pinned.digest, pinned.upstream) == (second, f"{repository}:{tag}")
    assert f"# pinned by build.py bump: what {repository}:{tag} served" in (root / "matrix.yaml").read_text()
    again = bump(root, capsys, "--target", "cu12", status=0)
    assert again["result"] == "current"
    assert [b["moved"] for b in again["bases"]] == [False]


def test_debian_security_updates_alone_need_a_rebuild(
    tmp_path: Path, loopback_index: LoopbackIndex, capsys: pytest.CaptureFixture[str]
) -> None:
    packages = committed_debian_packages()
    served = LoopbackArchive(tmp_path / "archive")
    served.publish("", packages)
    served.publish("-updates", {"tzdata": packages["tzdata"] + "+deb13u9"})
    served.publish("-security", {"passwd": packages["passwd"] + "+deb13u9", "bash": "0.1-1"})  # bash: older
    served.start()
    try:
        root = checkout(tmp_path / "repo", loopback_index.url, served.mirror)
        result = bump(root, capsys, "--target", "cu12", "--dry-run", status=EXIT_REBUILD_NEEDED)
        assert result["result"] == "rebuild needed"
        assert result["moved"] == []
        updates = {u["package"]: (u["new"], u["suite"], u["security"]) for u in result["debian_updates"]}
        assert updates == {
            "passwd": (packages["passwd"] + "+deb13u9", "trixie-security", True),
            "tzdata": (packages["tzdata"] + "+deb13u9", "trixie-updates", False),
        }
        assert main(["bump", "--root", str(root), "--target", "cu12", "--dry-run"]) == EXIT_REBUILD_NEEDED
        out = capsys.readouterr().out
        assert f"rebuild: Debian security update passwd {packages['passwd']} -> {packages['passwd']}+deb13u9" in out
        assert "result: rebuild needed (2 newer Debian package(s), 1 from -security)" in out
    finally:
        served.stop()
    # the archive gone: one paragraph and exit 2, never a verdict without the archive
    assert main(["bump", "--root", str(root), "--target", "cu12", "--dry-run"]) == 2
    assert "cannot read http://127.0.0.1" in " ".join(capsys.readouterr().err.split())
