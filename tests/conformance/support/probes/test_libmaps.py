"""Where the CUDA libraries were loaded from: /proc/self/maps, LD_LIBRARY_PATH and ldconfig read and grouped."""

from __future__ import annotations

import torch

from conformance.support.probes.libmaps import (
    cudnn_directories,
    expected_library_root,
    group_libraries,
    parse_ldconfig,
    parse_proc_maps,
    scan_ld_library_path,
    scan_ldconfig,
)

SITE = "/opt/pytorch/lib/python3.13/site-packages/nvidia"
MAPS = "\n".join(
    [
        f"7f0000000000-7f0000001000 r--p 00000000 08:01 1 {SITE}/cublas/lib/libcublas.so.12",
        f"7f0000001000-7f0000002000 r-xp 00001000 08:01 1 {SITE}/cublas/lib/libcublas.so.12",
        f"7f0000002000-7f0000003000 r--p 00000000 08:01 2 {SITE}/cublas/lib/libcublasLt.so.12",
        "7f0000003000-7f0000004000 r--p 00000000 08:01 3 /usr/local/cuda/lib64/libcublas.so.12 (deleted)",
        f"7f0000004000-7f0000005000 r--p 00000000 08:01 4 {SITE}/cudnn/lib/libcudnn.so.9",
        f"7f0000005000-7f0000006000 r--p 00000000 08:01 5 {SITE}/cudnn/lib/libcudnn_graph.so.9",
        f"7f0000006000-7f0000007000 r--p 00000000 08:01 6 {SITE}/nccl/lib/libnccl.so.2",
        "7f0000007000-7f0000008000 rw-p 00000000 00:00 0 [heap]",
        "7f0000008000-7f0000009000 r--p 00000000 08:01 7 /tmp/dir with space/libfoo.so",
    ]
)


def test_proc_maps_parsing_and_grouping() -> None:
    paths = parse_proc_maps(MAPS)
    assert "/usr/local/cuda/lib64/libcublas.so.12" in paths
    assert "/tmp/dir with space/libfoo.so" in paths
    assert "[heap]" not in paths
    assert len(paths) == len(set(paths))
    groups = group_libraries(paths, resolve=lambda p: p)
    assert len(groups["cublas"]) == 2  # the foreign copy is detected
    assert len(groups["cublasLt"]) == 1
    assert groups["nccl"] == [f"{SITE}/nccl/lib/libnccl.so.2"]
    assert cudnn_directories(paths, resolve=lambda p: p) == [f"{SITE}/cudnn/lib"]


def test_ld_library_path_scan() -> None:
    listings = {"/foreign/lib64": ["libcudnn.so.9", "libz.so"], "/opt/ok": ["libcublas.so.12"], "/empty": []}

    def listdir(path: str) -> list[str]:
        if path not in listings:
            raise FileNotFoundError(path)
        return listings[path]

    value = "/foreign/lib64::/opt/ok:/usr/local/cuda/lib64/stubs:/empty:/missing"
    findings = scan_ld_library_path(value, ["/opt/ok"], listdir=listdir)
    assert [f.location for f in findings] == ["/foreign/lib64", "/usr/local/cuda/lib64/stubs"]
    assert "libcudnn.so.9" in findings[0].detail
    assert scan_ld_library_path("", ["/opt/ok"], listdir=listdir) == []


def test_ldconfig_scan() -> None:
    text = (
        "3 libs found in cache `/etc/ld.so.cache'\n"
        "\tlibnccl.so.2 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnccl.so.2\n"
        "\tlibcudnn_graph.so.9 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn_graph.so.9\n"
        "\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1\n"
    )
    pairs = parse_ldconfig(text)
    assert len(pairs) == 3
    findings = scan_ldconfig(pairs, ["/opt/pytorch"])
    assert [f.location for f in findings] == [
        "/usr/lib/x86_64-linux-gnu/libnccl.so.2",
        "/usr/lib/x86_64-linux-gnu/libcudnn_graph.so.9",
    ]


def test_expected_library_root() -> None:
    assert expected_library_root("/opt/pytorch", "3.13", "/x/torch/__init__.py") == (
        "/opt/pytorch/lib/python3.13/site-packages/nvidia"
    )
    root = expected_library_root(None, None, torch.__file__)
    assert root.endswith("site-packages/nvidia")
