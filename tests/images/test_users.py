"""Who the image runs as: uid 1000 by number, any --user with a usable HOME, and root."""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from tests.support.docker_cli import Ran, docker_run
from tests.support.integration import BuiltImage

pytestmark = pytest.mark.integration


def _shell_as(built: BuiltImage, user: str, script: str) -> Ran:
    return docker_run(built.ref, "sh", "-c", script, options=("--user", user))


def test_default_user_is_numeric_1000(built: BuiltImage, client: docker.DockerClient) -> None:
    assert client.images.get(built.ref).attrs["Config"]["User"] == "1000"  # runAsNonRoot can verify it
    ran = docker_run(built.ref, "sh", "-c", 'id -u; echo "$HOME"; test -w "$HOME" && echo writable')
    assert ran.output.split() == ["1000", "/home/torch", "writable"]


def test_arbitrary_uid_with_a_mounted_workdir(built: BuiltImage, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    work.chmod(0o777)
    script = (
        'echo "home=$HOME"; pip cache dir; '
        'python -c "import torch, pathlib; d = pathlib.Path(torch.hub.get_dir()); d.mkdir(parents=True); '
        "torch.save(torch.ones(2), d / 'x.pt'); print('torch cache', d)\"; "
        "echo hello > /work/out.txt"
    )
    ran = docker_run(
        built.ref, "sh", "-c", script, options=("--user", "4242:4242", "-v", f"{work}:/work", "-w", "/work")
    )
    assert ran.code == 0, ran.output
    assert "home=/tmp/home-4242" in ran.output
    assert "/tmp/home-4242/.cache/pip" in ran.output  # pip's cache works (it is disabled when HOME is not ours)
    assert "torch cache /tmp/home-4242/.cache/torch/hub" in ran.output
    assert (work / "out.txt").read_text() == "hello\n"
    assert (work / "out.txt").stat().st_uid == 4242


def test_any_uid_runs_the_cpu_checks_with_no_mount(built: BuiltImage) -> None:
    """Exactly this command once crashed (HOME 0700, pytest chdirs into the working directory).

    No --shm-size either, so the one check that may fail is the one naming Docker's 64 MiB /dev/shm.
    """
    ran = docker_run(built.ref, "conformance", "-m", "cpu", options=("--user", "12345:12345"), timeout_s=600)
    assert "Traceback" not in ran.output, ran.output[-4000:]
    failed = {
        line.split("::")[-1].split()[0] for line in ran.output.splitlines() if line.startswith(("FAILED ", "ERROR "))
    }
    # Docker's default /dev/shm is 64 MiB: that check fails by name, with its fix, and nothing else does
    assert failed == {"test_dev_shm_is_large_enough"}, ran.output[-4000:]
    assert "--shm-size=1g" in ran.output, ran.output[-4000:]
    assert ran.code == 1, ran.output[-4000:]
    assert " passed" in ran.output, ran.output[-4000:]


def test_home_is_group_0_and_group_writable_for_openshift(built: BuiltImage) -> None:
    """OpenShift runs an arbitrary uid in group 0: that uid writes in the home directory, like its owner."""
    script = 'stat -c "%g %a" /home/torch; touch /home/torch/x && echo home-writable; echo "HOME=$HOME"'
    ran = _shell_as(built, "23456:0", script)
    assert ran.code == 0, ran.output
    assert ran.output.split() == ["0", "2775", "home-writable", "HOME=/tmp/home-23456"], ran.output


def test_user_root_works(built: BuiltImage) -> None:
    ran = _shell_as(built, "root", 'id -u; echo "$HOME"; python -c "import torch; print(torch.__version__)"')
    assert ran.output.split() == ["0", "/root", "2.9.1+cu128"]


def test_default_user_can_pip_install_into_the_venv(built: BuiltImage, tmp_path: Path) -> None:
    """No network needed: a local, pure-Python project, installed into the venv the user owns."""
    project = tmp_path / "tinyproject"
    (project / "tinyproject").mkdir(parents=True)
    (project / "tinyproject" / "__init__.py").write_text("VALUE = 41 + 1\n")
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "tinyproject"\nversion = "1.0"\n'
    )
    project.chmod(0o755)
    ran = docker_run(
        built.ref,
        "sh",
        "-c",
        "cp -r /src /tmp/p && pip install --no-build-isolation --no-index --no-deps -q /tmp/p "
        "&& python -c 'import tinyproject, sys; print(tinyproject.VALUE, tinyproject.__file__.startswith(sys.prefix))'",
        options=("-v", f"{project}:/src:ro", "--network", "none"),
    )
    assert ran.code == 0, ran.output
    assert ran.output.strip().splitlines()[-1] == "42 True"
