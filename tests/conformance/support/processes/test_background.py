"""The background probe keeps what a crashed probe learned before it died and names the crash: a real SIGSEGV in a
real child (the CPU Inductor probe died so on an H100 host with torch 2.9.1, evidence/shipped-stack)."""

from __future__ import annotations

from pathlib import Path

from conformance.support.processes.background import BackgroundProbe

FIRST = (
    "import json, os, signal\n"
    'print(json.dumps({"openmp": True, "vec_isa": "avx512", "stage": "vector ISA"}), flush=True)\n'
)


def _probe(tmp_path: Path, body: str) -> dict[str, object]:
    script = tmp_path / "probe.py"
    script.write_text(body)
    return BackgroundProbe(script).result()


def test_a_crash_keeps_the_first_answers_and_names_the_signal_and_frames(tmp_path: Path) -> None:
    result = _probe(
        tmp_path, FIRST + "def compile_kernel():\n    os.kill(os.getpid(), signal.SIGSEGV)\ncompile_kernel()\n"
    )
    assert (result["openmp"], result["vec_isa"]) == (True, "avx512")
    error = str(result["error"])
    assert error.startswith("probe.py died of SIGSEGV (exit -11) after its vector ISA step: Fatal Python error: Segm")
    assert "compile_kernel" in error, "faulthandler's innermost frame names where it died"


def test_a_finished_probe_has_no_error(tmp_path: Path) -> None:
    result = _probe(tmp_path, FIRST + 'print(json.dumps({"openmp": True, "stage": "done"}))\n')
    assert "error" not in result
    assert result["stage"] == "done"


def test_a_probe_that_stops_early_or_says_nothing_is_an_error(tmp_path: Path) -> None:
    assert _probe(tmp_path, FIRST)["error"] == "probe.py exited 0 after its vector ISA step: "
    assert str(_probe(tmp_path, "import sys\nsys.exit(3)\n")["error"]).startswith("probe.py exited 3 before its first")
