"""images/bin/compile-bytecode (issue 40): the venv's .pyc files, the same bytes whatever the load and core count.

It runs here with a venv of the host's Python, as the image's install steps run it with the venv's: every .py under
site-packages without an up-to-date .pyc gets a checked-hash one, compiled in fixed chunks, each chunk by an
interpreter of its own.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.integration import ROOT

SCRIPT = ROOT / "images" / "bin" / "compile-bytecode"
# Two modules that share a constant: B's bytes depend on whether A's code is alive in the same interpreter
# (marshal's FLAG_REF follows the frozenset's reference count), the mechanism behind uv issue 10619
A = 'import sys\ndef c():\n    return sys.platform in {"pytorch_cuda", "issue_forty"}\n'
B = (
    'import sys\ndef a():\n    if sys.platform in {"pytorch_cuda", "issue_forty"}:\n        return 1\n'
    'def b():\n    return sys.platform not in {"pytorch_cuda", "issue_forty"}\n'
)


def _venv(tmp_path: Path) -> tuple[Path, Path]:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    package = site / "shared"
    package.mkdir()
    (package / "a.py").write_text(A)
    (package / "b.py").write_text(B)
    for n in range(450):  # three chunks of 200
        (package / f"m{n:03}.py").write_text(f"VALUE = {n}\n{A if n % 2 else B}")
    (package / "py2_fixture.py").write_text('print "a Python 2 test fixture"\n')
    return python, site


def _compile(python: Path, *, one_cpu: bool = False) -> subprocess.CompletedProcess[str]:
    command = [str(python), "-B", str(SCRIPT)]
    if one_cpu:
        command = ["taskset", "-c", "0", *command]
    return subprocess.run(command, capture_output=True, text=True, check=False, env={"PATH": os.environ["PATH"]})


def _pycs(site: Path) -> dict[str, str]:
    return {
        str(path.relative_to(site)): hashlib.sha256(path.read_bytes()).hexdigest() for path in site.rglob("*.pyc")
    }


def test_the_hazard_is_real_on_this_python() -> None:
    """Without it the test below could not fail: in one fresh interpreter, one source, two byte forms, by what
    else is alive."""
    probe = (
        "import marshal, sys\n"
        "alone = marshal.dumps(compile(sys.argv[2], 'b.py', 'exec'))\n"
        "alive = compile(sys.argv[1], 'a.py', 'exec')\n"
        "print(alone != marshal.dumps(compile(sys.argv[2], 'b.py', 'exec')))\n"
    )
    result = subprocess.run([sys.executable, "-S", "-c", probe, A, B], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "True"


@pytest.mark.skipif(shutil.which("taskset") is None, reason="taskset (util-linux) is not installed")
def test_every_source_gets_one_checked_hash_pyc_whatever_the_cores(tmp_path: Path) -> None:
    python, site = _venv(tmp_path)
    first = _compile(python, one_cpu=True)
    assert first.returncode == 0, first.stderr
    assert "453 files in 3 chunks of 200 (1 at a time), 1 did not compile" in first.stderr
    once = _pycs(site)
    assert len(once) == 452  # all but the Python 2 fixture, which gets none (as with uv)
    assert not (site / "shared" / "__pycache__" / f"py2_fixture.{sys.implementation.cache_tag}.pyc").exists()
    pyc = site / "shared" / "__pycache__" / f"b.{sys.implementation.cache_tag}.pyc"
    header = pyc.read_bytes()[:16]
    assert int.from_bytes(header[4:8], "little") == 0b11  # PEP 552: checked hash
    assert header[8:16] == importlib.util.source_hash((site / "shared" / "b.py").read_bytes())
    for path in site.rglob("*.pyc"):
        path.unlink()
    again = _compile(python)
    assert again.returncode == 0, again.stderr
    assert _pycs(site) == once  # two cores (where there are two), the same bytes


def test_up_to_date_files_are_left_alone_and_stale_ones_compiled_again(tmp_path: Path) -> None:
    python, site = _venv(tmp_path)
    assert _compile(python).returncode == 0
    before = _pycs(site)
    untouched = _compile(python)
    assert "1 files in 1 chunks of 200 (1 at a time), 1 did not compile" in untouched.stderr  # the fixture, again
    assert _pycs(site) == before
    (site / "shared" / "a.py").write_text(A + "EDITED = True\n")
    edited = _compile(python)
    assert "2 files in 1 chunks of 200" in edited.stderr, edited.stderr  # a.py and the fixture
    after = _pycs(site)
    changed = {name for name in after if after[name] != before.get(name)}
    assert changed == {f"shared/__pycache__/a.{sys.implementation.cache_tag}.pyc"}
