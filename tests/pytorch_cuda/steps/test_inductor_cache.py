"""The in-image checks' Inductor cache: one volume per host CPU and torch version, mounted into the check."""

from __future__ import annotations

import platform
from pathlib import Path

from pytorch_cuda.image_build.pipeline import PipelineHooks, execute
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.variants import select_variant
from pytorch_cuda.steps.inductor_cache import CACHE_ENV, MOUNT_POINT, cpu_key, host_cache, volume_name
from tests.support.fake_engine import FakeEngine
from tests.support.plans import cu12_plan

XEON = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R)\nflags\t\t: fpu sse avx2 avx512f\n"


def test_same_cpu_same_key_whatever_the_core_count_or_flag_order() -> None:
    two_cores = XEON + "\n" + XEON.replace("processor\t: 0", "processor\t: 1")
    reordered = XEON.replace("fpu sse avx2 avx512f", "avx512f avx2 sse fpu")
    assert cpu_key(XEON, "x86_64") == cpu_key(two_cores, "x86_64") == cpu_key(reordered, "x86_64")


def test_a_new_cpu_or_torch_starts_cold() -> None:
    """Another CPU (other ISA flags or model) or another torch names another, empty volume."""
    no_avx512 = XEON.replace(" avx512f", "")
    epyc = XEON.replace("Intel(R) Xeon(R)", "AMD EPYC 9654")
    keys = {cpu_key(XEON, "x86_64"), cpu_key(no_avx512, "x86_64"), cpu_key(epyc, "x86_64"), cpu_key(XEON, "aarch64")}
    assert len(keys) == 4
    cpu = cpu_key(XEON, "x86_64")
    assert volume_name("2.9.1+cu128", cpu) != volume_name("2.10.0+cu128", cpu)
    assert volume_name("2.9.1+cu128", cpu) == f"pytorch-cuda-inductor-torch2.9.1-cu128-cpu{cpu}"


def test_host_cache_reads_the_cpu(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(XEON)
    cache = host_cache("2.9.1+cu128", cpuinfo)
    assert cache.volume.endswith(cpu_key(XEON, platform.machine()))
    assert cache.environment == {CACHE_ENV: MOUNT_POINT}
    assert host_cache("2.9.1+cu128", tmp_path / "missing").volume.startswith("pytorch-cuda-inductor-torch2.9.1")


def test_the_check_container_gets_the_cache(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    engine = FakeEngine(images={"pytorch-cuda-base/debian:trixie": "sha256:base"})
    variant = select_variant(matrix, "cu12")
    plan = cu12_plan(matrix, root, variant, run_checks=True)
    hooks = PipelineHooks(log=lambda _: None, progress=lambda _: None, index_probe=lambda: None, log_dir=tmp_path)
    execute(plan, engine, hooks)
    assert engine.run_volumes == {host_cache(variant.torch_version).volume: MOUNT_POINT}
    assert engine.run_environment == {CACHE_ENV: MOUNT_POINT}
