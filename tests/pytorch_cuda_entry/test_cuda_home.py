"""The devel flavour's CUDA_HOME: a tree of links into the nvidia-* wheels, never a copy."""

from __future__ import annotations

from pathlib import Path

from pytorch_cuda_entry.cuda_home import main, make_cuda_home


def _touch(path: Path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_cuda13_layout(tmp_path: Path) -> None:
    nvidia = tmp_path / "nvidia"
    for name in ("bin/nvcc", "bin/ptxas", "bin/cicc", "include/cuda_runtime.h", "include/crt/host_config.h"):
        _touch(nvidia / "cu13" / name, name)
    _touch(nvidia / "cu13/lib/libcudart.so.13")
    _touch(nvidia / "cu13/nvvm/libdevice/libdevice.10.bc")
    _touch(nvidia / "cu13/__init__.py")
    home = tmp_path / "cuda"
    assert main([str(home), "--nvidia", str(nvidia)]) == 0
    assert (home / "bin/nvcc").read_text() == "bin/nvcc"
    assert (home / "include/crt/host_config.h").exists()
    assert (home / "lib64/libcudart.so").resolve() == (nvidia / "cu13/lib/libcudart.so.13").resolve()
    assert (home / "nvvm/libdevice/libdevice.10.bc").exists()
    assert (home / "nvvm/bin/cicc").read_text() == "bin/cicc"  # where nvcc.profile looks for it
    assert not (home / "include/__init__.py").exists()
    assert all(p.is_symlink() for p in (home / "bin").iterdir())  # links, not copies


def test_components_merge_into_one_include(tmp_path: Path) -> None:
    """CUDA 12 style: one folder per component; two components' include/cuda/ merge."""
    nvidia = tmp_path / "nvidia"
    _touch(nvidia / "cuda_nvcc/bin/nvcc")
    _touch(nvidia / "cuda_runtime/include/cuda_runtime.h")
    _touch(nvidia / "cuda_runtime/include/cuda/std/a.h")
    _touch(nvidia / "cuda_cccl/include/cuda/std/b.h")
    _touch(nvidia / "cuda_cccl/include/cub/cub.cuh")
    _touch(nvidia / "cuda_runtime/lib/libcudart.so.12")
    counts = make_cuda_home(nvidia, tmp_path / "cuda")
    include = tmp_path / "cuda/include"
    assert (include / "cuda/std/a.h").exists()
    assert (include / "cuda/std/b.h").exists()
    assert (include / "cub/cub.cuh").exists()
    assert (tmp_path / "cuda/lib64/libcudart.so").exists()
    assert counts["bin"] == 1


def test_no_nvcc_fails_with_the_fix(tmp_path: Path, capsys: object) -> None:
    nvidia = tmp_path / "nvidia"
    _touch(nvidia / "cuda_nvcc/bin/ptxas")  # what nvidia-cuda-nvcc-cu12 ships: no nvcc
    assert main([str(tmp_path / "cuda"), "--nvidia", str(nvidia)]) == 1
    assert main([str(tmp_path / "cuda2"), "--nvidia", str(tmp_path / "missing")]) == 2
