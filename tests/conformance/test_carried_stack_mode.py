"""The shipped stack carried to a bare host is a mode the suite knows: its results name the stack, checks of the
image's own files report "not_judged" with the reason there and only there, and a fault still trips a check.

The carried venv is simulated inside the image: a venv whose site-packages is the image's (a symlink, so torch and
the NVIDIA wheels are inside it), holding the carried-stack marker. /etc/pytorch-cuda is empty in these runs
(scripts/suite-tests-in-image.sh), so the run is on a carried stack, as on a bare host.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from _pytest.outcomes import Skipped

from conformance.support.probes.libmaps import expected_library_root, libraries_outside
from conformance.support.results.not_judged import NOT_JUDGED_PREFIX, not_judged_when_carried
from conformance.support.results.recorder import ResultsRecorder
from pytorch_cuda_contract.carried_stack import MARKER, CarriedStack, RunStack
from pytorch_cuda_contract.manifest import ManifestLookup
from tests.support.suite_run import manifest_document, run_suite, write_manifest

PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"
IMAGE_ONLY = (
    "test_ldconfig_has_no_second_cuda_library",
    "test_python_and_venv_match_manifest",
    "test_debian_packages_match_the_base_record",
)
SELECTION = "ldconfig or python_and_venv or debian_packages or ld_library_path or torch_version"


def _carried(prefix: Path) -> CarriedStack:
    return CarriedStack(
        variant="cu128-runtime",
        lock="gpu/shipped-stack/cu128-runtime.lock",
        lock_sha256="cd" * 32,
        root=str(prefix.parent),
        prefix=str(prefix),
        python=PYTHON,
        image_python="3.13",
        image_venv="/opt/pytorch",
        packages={"torch": "2.9.1+cu128"},
    )


def _carried_venv(directory: Path, *, torch_inside: bool = True) -> Path:
    """A venv with the marker. torch_inside: its site-packages is the image's (a symlink); else a .pth file reaches
    the image's, so torch is imported from outside the carried venv (a host's torch seen by the venv)."""
    prefix = directory / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True)
    site_packages = prefix / "lib" / f"python{PYTHON}" / "site-packages"
    image_site = sysconfig.get_paths()["purelib"]
    if torch_inside:
        site_packages.rmdir()
        site_packages.symlink_to(image_site)
    else:
        (site_packages / "image.pth").write_text(image_site + "\n")
    (prefix / MARKER).write_text(json.dumps(_carried(prefix).as_json()))
    return prefix


def _run(tmp_path: Path, prefix: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, object]:
    manifest = write_manifest(tmp_path, manifest_document())
    command = [str(prefix / "bin" / "python"), "-m", "pytest", "-p", "no:cacheprovider", "-q", "-m", "cpu"]
    command += ["-c", str(tmp_path / "pytest.ini"), str(Path(__file__).resolve().parents[2] / "conformance")]
    command += ["-k", SELECTION, "--manifest", str(manifest), "--conformance-json", str(tmp_path / "out.json")]
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTORCH_CUDA_MANIFEST", "LD_LIBRARY_PATH")}
    result = subprocess.run(
        [*command, *args], cwd=tmp_path, env={**environment, **(env or {})}, capture_output=True, text=True
    )
    document: dict[str, object] = json.loads((tmp_path / "out.json").read_text())
    document["_output"] = result.stdout + result.stderr
    document["_returncode"] = result.returncode
    return document


def _outcome(document: dict[str, object], name: str) -> dict[str, object]:
    tests = document["tests"]
    assert isinstance(tests, dict)
    (record,) = [r for nodeid, r in tests.items() if nodeid.endswith(f"::{name}")]
    assert isinstance(record, dict)
    return record


def test_the_helper_judges_everywhere_but_on_a_carried_stack() -> None:
    not_judged_when_carried(RunStack("image"), "the image's Python")  # returns: the check judges
    not_judged_when_carried(RunStack("host"), "the image's Python")
    with pytest.raises(Skipped, match=f"^{NOT_JUDGED_PREFIX} the image's Python$"):
        not_judged_when_carried(RunStack("carried", _carried(Path("/x/venv"))), "the image's Python")
    with pytest.raises(ValueError, match="one non-empty line"):
        not_judged_when_carried(RunStack("image"), "two\nlines")


def _skip_report(message: str) -> pytest.TestReport:
    return pytest.TestReport(
        "conformance/test_pins.py::test_x", ("x", 0, "x"), {}, "skipped", ("x.py", 1, f"Skipped: {message}"), "call"
    )


@pytest.mark.parametrize("kind", ["image", "host", "carried"])
def test_the_recorder_counts_not_judged_apart_and_only_on_a_carried_stack(kind: str) -> None:
    stack = RunStack(kind, _carried(Path("/x/venv")) if kind == "carried" else None)
    recorder = ResultsRecorder(None, ManifestLookup(Path("m.json"), "--manifest", None, None), {}, stack)
    recorder.pytest_runtest_logreport(_skip_report(f"{NOT_JUDGED_PREFIX} the host's loader cache"))
    record = recorder.records["conformance/test_pins.py::test_x"]
    totals = recorder.totals()
    if kind == "carried":
        assert record.outcome == "not_judged"
        assert totals["not_judged"] == 1
        assert totals["skipped"] == totals["passed"] == 0
    else:  # inside an image (a marker there too) and on a bare host, every check judges: a not-judged is a fault
        assert record.outcome == "failed"
        assert f"this run is on the {kind} stack" in (record.message or "")
        assert totals["not_judged"] == 0


def test_a_plain_skip_stays_skipped_on_a_carried_stack() -> None:
    stack = RunStack("carried", _carried(Path("/x/venv")))
    recorder = ResultsRecorder(None, ManifestLookup(Path("m.json"), "--manifest", None, None), {}, stack)
    recorder.pytest_runtest_logreport(_skip_report("dpkg-query is not installed"))
    assert recorder.records["conformance/test_pins.py::test_x"].outcome == "skipped"


def test_a_carried_run_names_its_stack_and_does_not_judge_the_image_only_checks(tmp_path: Path) -> None:
    document = _run(tmp_path, _carried_venv(tmp_path))
    output = str(document["_output"])
    assert document["_returncode"] == 0, output
    stack = document["stack"]
    assert isinstance(stack, dict)
    assert stack["kind"] == "carried"
    assert stack["prefix"] == str(tmp_path / "venv")
    for name in IMAGE_ONLY:
        record = _outcome(document, name)
        assert record["outcome"] == "not_judged", record
        assert str(record["message"]).startswith(NOT_JUDGED_PREFIX)
    assert _outcome(document, "test_ld_library_path_has_no_foreign_cuda_libraries")["outcome"] == "passed"
    assert _outcome(document, "test_torch_version_matches_pin")["outcome"] == "passed"
    totals = document["totals"]
    assert isinstance(totals, dict)
    assert totals["not_judged"] == len(IMAGE_ONLY)
    assert totals["failed"] == 0
    assert "not judged on a bare host (3, counted apart from passed)" in output


def test_a_foreign_library_still_fails_on_a_carried_stack(tmp_path: Path) -> None:
    """A fault must still trip: a folder on LD_LIBRARY_PATH with a second libnccl, outside the carried venv."""
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "libnccl.so.2").write_bytes(b"")
    document = _run(tmp_path, _carried_venv(tmp_path), env={"LD_LIBRARY_PATH": str(foreign)})
    record = _outcome(document, "test_ld_library_path_has_no_foreign_cuda_libraries")
    assert record["outcome"] == "failed", record
    assert str(foreign) in str(record["message"])
    assert document["_returncode"] == 1


def test_torch_from_outside_the_carried_venv_fails(tmp_path: Path) -> None:
    """The venv sees torch through a .pth file: the run is not on the carried stack, and the check says so."""
    document = _run(tmp_path, _carried_venv(tmp_path, torch_inside=False))
    record = _outcome(document, "test_python_and_venv_match_manifest")
    assert record["outcome"] == "failed", record
    assert "outside the carried stack's" in str(record["message"])


def test_without_a_marker_the_run_is_on_the_host_and_judges_as_before(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--manifest", str(write_manifest(tmp_path, manifest_document())), keyword=SELECTION)
    assert run.document["stack"] == {"kind": "host"}
    assert run.document["totals"]["not_judged"] == 0
    assert all(run.outcome(name) != "not_judged" for name in IMAGE_ONLY)


def test_the_library_root_on_a_carried_stack_is_the_carried_venvs() -> None:
    """test_cuda_libraries_loaded_once (a GPU check) judges against the carried venv's wheels: a library from the
    image's venv path, or the host's, is outside it and fails the check."""
    carried = RunStack("carried", _carried(Path("/srv/stack/venv")))
    root = expected_library_root("/opt/pytorch", "3.13", "/x/torch/__init__.py", carried.library_root)
    assert root == f"/srv/stack/venv/lib/python{PYTHON}/site-packages/nvidia"
    inside = {"nccl": [f"{root}/nccl/lib/libnccl.so.2"]}
    host = {"nccl": ["/usr/lib/x86_64-linux-gnu/libnccl.so.2"]}
    image = {"nccl": ["/opt/pytorch/lib/python3.13/site-packages/nvidia/nccl/lib/libnccl.so.2"]}
    assert libraries_outside(inside, root) == []
    assert libraries_outside(host, root) == host["nccl"]
    assert libraries_outside(image, root) == image["nccl"]
    in_image = expected_library_root("/opt/pytorch", "3.13", "/x/torch/__init__.py", RunStack("image").library_root)
    assert in_image == "/opt/pytorch/lib/python3.13/site-packages/nvidia"
