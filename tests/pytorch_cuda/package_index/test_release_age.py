"""The release-age gate (policy: min_release_age): a release younger than the policy's days is not moved to
yet, and is listed as waiting; a file without an upload time (a PEP 503 page) is not held back; 0 is no gate."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pytorch_cuda.bump.bump_plan import plan_bump
from pytorch_cuda.bump.bump_policy import BumpPolicyError, parse_policy
from pytorch_cuda.matrix.build_matrix import load_matrix
from pytorch_cuda.package_index.release_age import gate
from pytorch_cuda.package_index.simple_index import IndexFile, _from_json

ROOT = Path(__file__).resolve().parents[3]
NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


def _wheel(name: str, version: str, uploaded: str | None, tag: str = "py3-none-any") -> IndexFile:
    filename = f"{name}-{version}-{tag}.whl"
    return IndexFile(filename, f"https://files.example/{filename}", False, None, True, uploaded)


def test_the_gate_keeps_old_and_undated_files() -> None:
    files = [
        _wheel("numpy", "2.5.6", "2026-11-20T08:00:00.000000Z"),  # 15 days old
        _wheel("numpy", "2.5.7", "2026-12-01T08:00:00.000000Z"),  # 4 days old
        _wheel("numpy", "2.5.8", None),  # no upload time: an HTML index
    ]
    kept, young = gate(files, 7, NOW)
    assert [f.filename for f in kept] == ["numpy-2.5.6-py3-none-any.whl", "numpy-2.5.8-py3-none-any.whl"]
    assert young == ("2.5.7",)
    assert gate(files, 0, NOW) == (files, ())


def test_pep_691_upload_time_is_read() -> None:
    entry = {"filename": "a-1.0-py3-none-any.whl", "url": "a.whl", "upload-time": "2026-12-01T08:00:00.123456Z"}
    body = json.dumps({"files": [entry]})
    (file,) = _from_json("https://pypi.test/simple/a/", body)
    assert file.upload_time == "2026-12-01T08:00:00.123456Z"


def test_a_young_release_waits_and_an_older_one_moves() -> None:
    matrix = load_matrix(ROOT / "matrix.yaml")
    policy = parse_policy({**(matrix.policy.as_section() if matrix.policy else {}), "min_release_age": 7})
    torch_tag = "cp313-cp313-manylinux_2_28_x86_64"
    pages = {
        "torch": [_wheel("torch", "2.9.1", "2025-11-12T00:00:00Z", torch_tag)],
        "numpy": [
            _wheel("numpy", v, when)
            for v, when in (
                ("2.5.5", "2026-06-01T00:00:00Z"),
                ("2.5.6", "2026-11-20T00:00:00Z"),
                ("2.5.7", "2026-12-04T00:00:00Z"),
            )
        ],
    }
    plan = plan_bump(matrix, policy, ["cu128"], lambda index, name: pages.get(name, []), _no_pins, now=NOW)
    numpy = next(m for m in plan.moves if m.where == "python_packages.numpy")
    assert (numpy.resolution.new, numpy.resolution.too_new) == ("2.5.6", ("2.5.7",))
    later = plan_bump(
        matrix,
        policy,
        ["cu128"],
        lambda index, name: pages.get(name, []),
        _no_pins,
        now=datetime(2026, 12, 12, tzinfo=UTC),
    )
    numpy = next(m for m in later.moves if m.where == "python_packages.numpy")
    assert (numpy.resolution.new, numpy.resolution.too_new) == ("2.5.7", ())


def _no_pins(files: list[IndexFile], version: str, python: str, local: str | None, family: str) -> dict[str, str]:
    raise AssertionError("torch does not move here")


@pytest.mark.parametrize("age", [-1, "7", 1.5, True])
def test_a_bad_min_release_age_is_refused(age: object) -> None:
    with pytest.raises(BumpPolicyError, match="min_release_age"):
        parse_policy({"min_release_age": age})
