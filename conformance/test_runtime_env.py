"""Runtime environment: shared memory, DataLoader workers, a C compiler with Python.h, libcuda."""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path

import pytest
from torch.utils.data import DataLoader

from conformance.support.probes.c_compiler import CompilerProblem, compile_python_h_probe, resolve_c_compiler
from conformance.support.results.recorder import RecordMetric, RecordNote
from conformance.support.workloads.data import ChunkDataset
from pytorch_cuda_contract.shared_memory import MIN_SHM_BYTES, shm_problem, shm_size_bytes


@pytest.mark.cpu
def test_dev_shm_is_large_enough(record_metric: RecordMetric) -> None:
    """Fails when /dev/shm < 1 GiB ("--shm-size=1g or --ipc=host")."""
    size = shm_size_bytes()
    if size is not None:
        record_metric("dev_shm_size", size / 2**20, "MiB", bound=MIN_SHM_BYTES / 2**20, bound_kind="min")
    problem = shm_problem(size, MIN_SHM_BYTES)
    assert problem is None, problem


@pytest.mark.cpu
def test_dataloader_with_two_workers() -> None:
    """Fails when 2 workers cannot move 16 × 2 MiB tensors."""
    dataset = ChunkDataset(items=16, numel=1 << 19)  # 2 MiB float32 tensors
    loader = DataLoader(dataset, batch_size=2, num_workers=2, timeout=120)
    total = 0.0
    seen = 0
    for batch in loader:
        total += float(batch.sum())
        seen += batch.shape[0]
    expected = float(sum(range(16))) * (1 << 19)
    assert (seen, total) == (16, expected), (
        f"DataLoader with 2 workers returned {seen} items summing to {total}, expected 16 and {expected}"
    )


@pytest.mark.cpu
def test_c_compiler_builds_against_python_h(tmp_path: Path, record_note: RecordNote) -> None:
    """Fails when Python.h is missing, `$CC` is not a compiler, no gcc/clang/cc is on PATH, or compiling `#include
    <Python.h>` fails (Triton needs this)."""
    include = sysconfig.get_paths()["include"]
    assert Path(include, "Python.h").exists(), (
        f"Python.h not found in {include}: Triton and torch C++ extensions need the Python headers "
        "(install the python3-dev package matching this interpreter)"
    )
    compiler = resolve_c_compiler(os.environ)
    assert not isinstance(compiler, CompilerProblem), compiler.message if isinstance(compiler, CompilerProblem) else ""
    record_note(f"compiler {' '.join(compiler.argv)} (from {compiler.origin})")
    includes = sorted({include, sysconfig.get_paths()["platinclude"]})
    result = compile_python_h_probe(compiler, includes, tmp_path)
    assert result.returncode == 0, (
        f"{' '.join(compiler.argv)} cannot compile a file including Python.h:\n{result.stderr[-2000:]}"
    )
