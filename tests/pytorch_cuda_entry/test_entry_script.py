"""The rendered entry script, run by sh: banner only on a TTY, HOME fallback, the command exec'd unchanged."""

from __future__ import annotations

import os
import pty
import signal
import subprocess
from pathlib import Path

import pytest

from pytorch_cuda_contract import paths

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def entry(tmp_path: Path) -> Path:
    """The committed entry script, with the venv's python replaced by a fake that prints BANNER."""
    fake_python = tmp_path / "python"
    fake_python.write_text("#!/bin/sh\necho BANNER >&2\n")
    fake_python.chmod(0o755)
    script = (ROOT / "images/bin/entrypoint").read_text()
    assert f"{paths.VENV_PATH}/bin/python -c" in script
    copy = tmp_path / "entrypoint"
    copy.write_text(script.replace(f"{paths.VENV_PATH}/bin/python", str(fake_python)))
    copy.chmod(0o755)
    return copy


def _env(**extra: str) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"), **extra}


def run_without_tty(entry: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(entry), *argv], stdin=subprocess.DEVNULL, capture_output=True, text=True, env=_env(**env), timeout=30
    )


def run_with_tty(entry: Path, *argv: str, **env: str) -> tuple[int, str]:
    """Run with stdin, stdout and stderr on a pseudo-terminal, like `docker run -t`."""
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.execve(str(entry), [str(entry), *argv], _env(**env))
    output = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), output.decode()


def test_silent_without_a_tty(entry: Path) -> None:
    result = run_without_tty(entry, "echo", "hello")
    assert (result.returncode, result.stdout, result.stderr) == (0, "hello\n", "")


def test_banner_on_a_tty(entry: Path) -> None:
    code, output = run_with_tty(entry, "echo", "hello")
    assert code == 0
    assert output.index("BANNER") < output.index("hello")


def test_quiet_silences_the_tty_banner(entry: Path) -> None:
    code, output = run_with_tty(entry, "echo", "hello", **{paths.QUIET_ENV: "1"})
    assert (code, "BANNER" in output, "hello" in output) == (0, False, True)


def test_command_is_execd_unchanged_with_its_exit_status(entry: Path) -> None:
    result = run_without_tty(entry, "sh", "-c", 'printf "%s|" "$@"; exit 7', "sh", "a b", "", "*")
    assert result.returncode == 7
    assert result.stdout == "a b||*|"


def test_signals_reach_the_command(entry: Path) -> None:
    """exec: the command is the process the signal is sent to, so its own handler answers (exit 42)."""
    process = subprocess.Popen(
        [str(entry), "sh", "-c", 'trap "exit 42" TERM; echo ready; while :; do sleep 0.1; done'],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    assert process.stdout is not None
    assert process.stdout.readline() == "ready\n"
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=10) == 42


def test_unwritable_home_falls_back(entry: Path, tmp_path: Path) -> None:
    result = run_without_tty(entry, "sh", "-c", 'echo "$HOME"; test -w "$HOME" && echo writable', HOME="/nonexistent")
    home, writable = result.stdout.split()
    assert home == f"/tmp/home-{os.getuid()}"
    assert writable == "writable"
    kept = run_without_tty(entry, "sh", "-c", 'echo "$HOME"', HOME=str(tmp_path))
    assert kept.stdout.strip() == str(tmp_path)
