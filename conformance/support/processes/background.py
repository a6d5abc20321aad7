"""CPU-only work started in the background once the selection is known, collected by the checks that need it:
the Inductor C++ compile probe (a subprocess) and the gloo ranks (spawned processes).

Only CPU work runs in the background: a GPU job would disturb the timed benchmarks.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Final

import pytest

from conformance.support.processes.kernel_linkage import static_libstdcxx_finding

CPU_COMPILE_PROBE: Final = Path(__file__).resolve().with_name("cpu_compile_probe.py")
TIMEOUT_S: Final = 300.0
# Checks that read the background CPU-compile probe; they run last so that the compile overlaps the rest.
CPU_COMPILE_TESTS: Final = ("test_inductor_cpu_generates_cpp_and_matches_eager", "test_openmp_and_cpu_vector_isa")
GLOO_TESTS: Final = ("test_gloo_allreduce_exact", "test_ddp_compression_hooks_match_plain_ddp_gloo")
GLOO_TASKS: Final = ("collectives", "ddp_hooks")
GLOO_WORLD_SIZE: Final = 2


DONE: Final = "done"  # the "stage" of the probe's last line when it finished; an earlier line names where it was


def last_json_object(stdout: str) -> dict[str, object]:
    """The last line of `stdout` that is a JSON object ({} when none is)."""
    for line in reversed(stdout.strip().splitlines()):
        try:
            parsed = json.loads(line)
        except ValueError:
            continue
        if isinstance(parsed, dict):
            return parsed
    return {}


KILLED_BY_SIGNAL: Final = " died of "  # in death_of's paragraph when a signal killed the probe


def death_of(script: str, returncode: int, stage: object, stderr: str) -> str:
    """One paragraph on why the probe gave no complete result: the signal that killed it (with faulthandler's fatal
    error and innermost frames), else its exit status and the end of its stderr."""
    where = "before its first result" if stage is None else f"after its {stage} step"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        lines = stderr.splitlines()
        start = next((i for i, line in enumerate(lines) if line.startswith("Fatal Python error")), None)
        trace = " | ".join(line.strip() for line in lines[start : start + 8]) if start is not None else stderr[-1500:]
        return f"{script} died of {name} (exit {returncode}) {where}: {trace}"
    return f"{script} exited {returncode} {where}: {stderr.strip()[-2000:]}"


class BackgroundProbe:
    def __init__(self, script: Path) -> None:
        self.script = script
        self.started = time.monotonic()
        self._result: dict[str, object] | None = None
        self.process: subprocess.Popen[str] | None = None
        try:
            self.process = subprocess.Popen(
                # faulthandler: a crash in native code prints the Python frames it happened under
                [sys.executable, "-X", "faulthandler", str(script)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        except OSError as exc:
            self._result = {"error": f"cannot start {script.name}: {exc}"}

    def result(self) -> dict[str, object]:
        """The probe's JSON (waits for it): its last complete line, so that what it learned before a crash (the
        vector ISA, OpenMP) is kept; ``"error"`` names a crash (the signal and faulthandler's fatal frames), an exit
        status other than 0, or a hang."""
        if self._result is not None or self.process is None:
            return self._result or {"error": f"{self.script.name} was not started"}
        try:
            stdout, stderr = self.process.communicate(timeout=max(1.0, TIMEOUT_S - (time.monotonic() - self.started)))
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate()
            self._result = {"error": f"{self.script.name} did not finish within {TIMEOUT_S:.0f} s"}
            return self._result
        parsed = last_json_object(stdout)
        if self.process.returncode != 0 or parsed.get("stage") != DONE:
            parsed["error"] = death_of(self.script.name, self.process.returncode, parsed.get("stage"), stderr)
        parsed["wall_s"] = round(time.monotonic() - self.started, 2)
        self._result = parsed
        return parsed

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.communicate()


CPU_COMPILE_KEY: Final = pytest.StashKey[BackgroundProbe]()
GLOO_PENDING_KEY: Final = pytest.StashKey[object]()  # a spawn.PendingRun (that module imports torch)


def start_compile_probe_early(config: pytest.Config) -> None:
    """Start the CPU-compile probe before collection, so that its `import torch` overlaps pytest's collection
    (about 3 s of a 10 s CPU run), when the command line will most likely select its checks: the whole suite,
    no -k, a marker expression of cpu or none. start_background_jobs stops it when no selected check reads it."""
    option = config.option
    whole_suite = all(not arg.endswith(".py") and "::" not in arg for arg in config.args)
    if whole_suite and not option.keyword and not option.collectonly and option.markexpr in ("", "cpu"):
        config.stash[CPU_COMPILE_KEY] = BackgroundProbe(CPU_COMPILE_PROBE)


def start_background_jobs(config: pytest.Config, selected: list[str]) -> None:
    """Never raises: a job that cannot start runs in the foreground later and fails there, named."""
    early = config.stash.get(CPU_COMPILE_KEY, None)
    if any(name in CPU_COMPILE_TESTS for name in selected):
        if early is None:
            config.stash[CPU_COMPILE_KEY] = BackgroundProbe(CPU_COMPILE_PROBE)
    elif early is not None:
        early.stop()
        del config.stash[CPU_COMPILE_KEY]
    if any(name in GLOO_TESTS for name in selected):
        try:
            import tempfile

            from conformance.support.processes.spawn import start_distributed

            out_dir = Path(tempfile.mkdtemp(prefix="conformance-gloo-"))
            config.stash[GLOO_PENDING_KEY] = start_distributed(
                GLOO_TASKS,
                "gloo",
                GLOO_WORLD_SIZE,
                out_dir,
                fork=True,  # no check has run yet
            )
        except Exception:
            config.stash[GLOO_PENDING_KEY] = None


def stop_background_jobs(config: pytest.Config) -> None:
    probe = config.stash.get(CPU_COMPILE_KEY, None)
    if probe is not None:
        probe.stop()
    pending = config.stash.get(GLOO_PENDING_KEY, None)
    if pending is not None:
        pending.kill()  # type: ignore[attr-defined]


def cpu_compile_result(config: pytest.Config) -> dict[str, object]:
    """The CPU-compile probe's result; when a signal killed it, ``"kernel_linkage"`` names kernels of its
    Inductor cache linked against a libstdc++ of their own (support/processes/kernel_linkage.py), if any."""
    probe = config.stash.get(CPU_COMPILE_KEY, None)
    if probe is None:
        probe = BackgroundProbe(CPU_COMPILE_PROBE)
        config.stash[CPU_COMPILE_KEY] = probe
    result = probe.result()
    if KILLED_BY_SIGNAL in str(result.get("error", "")) and "kernel_linkage" not in result:
        result["kernel_linkage"] = static_libstdcxx_finding()
    return result


def take_pending_gloo(config: pytest.Config) -> object | None:
    """The gloo ranks started at collection (once; None when they were not started)."""
    pending = config.stash.get(GLOO_PENDING_KEY, None)
    config.stash[GLOO_PENDING_KEY] = None
    return pending
