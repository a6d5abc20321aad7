"""What a case's injection makes of the suite's command and environment (no GPU, no root needed)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from fault_coverage.case_model import Case, Injection, env, patch
from fault_coverage.case_runner import run_case, suite_command, units
from fault_coverage.catalogue import TIMED
from fault_coverage.host_expectations import drifted
from fault_coverage.injection import InjectionError, find_host_library, find_torch_libraries, prepared

ROOT = Path(__file__).resolve().parents[2]


def test_a_patch_becomes_the_first_sitecustomize_on_pythonpath(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    with prepared(patch("cudnn_off"), ROOT) as setup:
        site = Path(setup.env["PYTHONPATH"].split(":")[0])
        assert (site / "sitecustomize.py").read_text().startswith('"""Fault: cuDNN switched off')
        assert setup.env["PYTHONPATH"].endswith(":/elsewhere")
        assert setup.prefix == ()
        assert setup.cwd == ROOT
    assert not site.exists()  # removed afterwards


def test_deterministic_mode_starts_the_sitecustomize_before_the_patch_and_sets_the_workspace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":0:0")
    with prepared(Injection(deterministic=True, patch="sdpa_fused_off", patch_kind="setting"), ROOT) as setup:
        site = Path(setup.env["PYTHONPATH"].split(":")[0])
        body = (site / "sitecustomize.py").read_text()
        assert body.index("torch.use_deterministic_algorithms(True)") < body.index("enable_flash_sdp(False)")
        assert setup.env["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
        compile(body, "sitecustomize.py", "exec")  # one module: the two parts joined stay valid Python
    with prepared(Injection(deterministic=True), ROOT) as alone:
        assert (
            "use_deterministic_algorithms(True)"
            in (Path(alone.env["PYTHONPATH"].split(":")[0]) / "sitecustomize.py").read_text()
        )


def test_env_shm_and_uid_make_the_prefix_and_a_readable_copy_of_the_suite() -> None:
    injection = Injection(env={"NVIDIA_TF32_OVERRIDE": "1"}, shm_mib=16, uid=12345)
    with prepared(injection, ROOT) as setup:
        assert setup.env["NVIDIA_TF32_OVERRIDE"] == "1"
        assert setup.env["USER"] == "uid-12345"
        assert Path(setup.env["HOME"]).stat().st_mode & 0o777 == 0o777
        assert setup.prefix[:3] == ("unshare", "-m", "sh")
        assert setup.prefix[4] == 'mount -t tmpfs -o size=16m tmpfs /dev/shm\nexec "$@"'
        assert setup.prefix[-4:] == ("setpriv", "--reuid=12345", "--regid=12345", "--clear-groups")
        assert (setup.cwd / "conformance/conftest.py").stat().st_mode & 0o444 == 0o444
        assert (setup.results_dir.stat().st_mode & 0o1777) == 0o1777
    assert "uid and gid 12345" in injection.describe()
    assert "/dev/shm of 16 MiB" in injection.describe()


def test_a_library_that_is_not_in_the_wheels_is_a_named_setup_failure(tmp_path: Path) -> None:
    with pytest.raises(InjectionError, match="no libnothing"):
        find_torch_libraries("libnothing.so*")
    case = Case("copy", "fault", "a foreign copy", Injection(preload_copy="libnothing.so*"), trips=("test_x",))
    run = run_case(case, ROOT, tmp_path)
    assert run.exit_status is None
    assert run.problem is not None
    assert "cannot be set up here" in run.problem


def test_the_suite_command_is_what_a_user_types_with_the_case_selection(tmp_path: Path) -> None:
    case = Case("tf32", "fault", "TF32", env(NVIDIA_TF32_OVERRIDE="1"), trips=("t",), select="gemm", markers="gpu")
    command = suite_command(case, sys.executable, tmp_path / "r.json")
    assert command[1:4] == ("-m", "pytest", "-p")
    assert "conformance" in command
    assert command[-2:] == ("-k", "gemm")
    assert "--require-gpu" in command
    assert command[command.index("-m", 4) + 1] == "(gpu) and not informational"
    untouched = Case("untouched", "control", "untouched", env(), markers="gpu")
    assert suite_command(untouched, sys.executable, tmp_path / "r.json")[9:11] == ("-m", "gpu")
    control = Case("plain", "control", "a legitimate setup", env(), markers="gpu")
    assert suite_command(control, sys.executable, tmp_path / "r.json")[9:11] == ("-m", "(gpu) and not informational")
    timed, rest = units(control)
    assert (timed.name, timed.alone, rest.name, rest.alone) == ("plain.timed", True, "plain", False)
    assert suite_command(control, sys.executable, tmp_path / "r.json", select=timed.select)[-2:] == ("-k", TIMED)
    assert units(untouched)[0].select is None
    assert len(units(untouched)) == 1


def test_the_host_own_library_is_found_in_the_loader_cache_outside_the_wheels(tmp_path: Path) -> None:
    library = tmp_path / "libcudnn.so.9"
    library.write_bytes(b"")
    wheel = "/opt/v/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9"
    listing = (f"2 libs found\n\tlibcudnn.so.9 (libc6,x86-64) => {wheel}\n"
               f"\tlibcudnn.so.9 (libc6,x86-64) => {library}\n")  # fmt: skip
    assert find_host_library("libcudnn.so.9", listing) == library
    with pytest.raises(InjectionError, match=r"the host has no libnccl\.so\.2 of its own"):
        find_host_library("libnccl.so.2", listing)


def test_the_host_expectations_file_goes_to_every_run_with_the_case_changes() -> None:
    host = {"schema": 1, "python": "3.12", "pins": {"torch": "2.11.0+cu130", "nccl": "2.28.3"}}
    assert drifted(host, {"pins.torch": "2.9.1+cu128", "python": "3.9"}) == {
        "schema": 1, "python": "3.9", "pins": {"torch": "2.9.1+cu128", "nccl": "2.28.3"}}  # fmt: skip
    assert host["pins"] == {"torch": "2.11.0+cu130", "nccl": "2.28.3"}  # not changed in place
    injection = Injection(expectations={"min_driver": "999.0"})
    with prepared(injection, ROOT, host) as setup:
        assert setup.manifest is not None
        assert json.loads(setup.manifest.read_text())["min_driver"] == "999.0"
        command = suite_command(Case("old", "fault", "old driver", injection, trips=("t",)), "python3", Path("r"),
                                setup.manifest)  # fmt: skip
        assert command[command.index("--manifest") + 1] == str(setup.manifest)
    with pytest.raises(InjectionError, match="need the host's expectations"), prepared(injection, ROOT):
        pass
