"""The loader checks: a failing ``ldconfig -p`` is a failure, and a copy in a default directory is found."""

from __future__ import annotations

import os
from pathlib import Path

from conformance.support.probes.libmaps import (
    default_library_directories,
    ldconfig_problem,
    parse_ldconfig,
    scan_default_directories,
    scan_ldconfig,
)
from tests.support.suite_run import manifest_document, run_suite, write_manifest

CACHE = (
    "2 libs found in cache `/etc/ld.so.cache'\n"
    "\tlibnccl.so.2 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnccl.so.2\n"
    "\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1\n"
)


def test_ldconfig_problem_names_exit_status_and_empty_listing() -> None:
    assert ldconfig_problem(0, CACHE, "") is None
    failed = ldconfig_problem(1, "", "ldconfig: Can't open cache file /etc/ld.so.cache\n")
    assert failed is not None
    assert "exited with status 1" in failed
    assert "Can't open cache file" in failed
    assert "no message on stderr" in (ldconfig_problem(139, "", "") or "")
    empty = ldconfig_problem(0, "", "")
    assert empty is not None
    assert "listed no libraries" in empty


def test_default_directories_include_multiarch() -> None:
    directories = default_library_directories("x86_64-linux-gnu")
    assert directories[:2] == ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu")
    assert {"/lib", "/usr/lib", "/lib64", "/usr/lib64"} <= set(directories)
    assert default_library_directories(None) == ("/lib", "/usr/lib", "/lib64", "/usr/lib64")


def test_copy_in_default_directory_not_in_cache_is_a_finding() -> None:
    multiarch = ["libcudnn.so.9", "libcudnn_graph.so.9", "libnccl.so.2", "libz.so.1"]
    listings = {
        "/usr/lib/x86_64-linux-gnu": multiarch,
        "/lib/x86_64-linux-gnu": multiarch,  # merged /usr: the same folder, counted once
        "/opt/pytorch/nvidia": ["libcublas.so.12"],
    }

    def listdir(path: str) -> list[str]:
        if path not in listings:
            raise FileNotFoundError(path)
        return listings[path]

    def resolve(path: str) -> str:
        return path.replace("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu").replace("/usr/usr/", "/usr/")

    cached = scan_ldconfig(parse_ldconfig(CACHE), ["/opt/pytorch"])
    assert [f.location for f in cached] == ["/usr/lib/x86_64-linux-gnu/libnccl.so.2"]
    directories = ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/missing", "/opt/pytorch/nvidia"]
    findings = scan_default_directories(
        directories, ["/opt/pytorch"], known=[f.location for f in cached], listdir=listdir, resolve=resolve
    )
    assert [f.location for f in findings] == [
        "/lib/x86_64-linux-gnu/libcudnn.so.9",
        "/lib/x86_64-linux-gnu/libcudnn_graph.so.9",
    ]
    assert findings[0].source == "default directory"
    assert "without the cache" in str(findings[0])


def test_failing_ldconfig_fails_the_check(tmp_path: Path) -> None:
    """A fake ldconfig first on PATH that exits 1: the check fails naming the status and stderr."""
    tools = tmp_path / "bin"
    tools.mkdir()
    fake = tools / "ldconfig"
    fake.write_text("#!/bin/sh\necho 'ldconfig: Malformed extension data in cache file' >&2\nexit 1\n")
    fake.chmod(0o755)
    manifest = write_manifest(tmp_path, manifest_document())

    path = f"{tools}{os.pathsep}{os.environ.get('PATH', '')}"
    run = run_suite(tmp_path, "--manifest", str(manifest), keyword="ldconfig", env={"PATH": path})
    assert run.outcome("test_ldconfig_has_no_second_cuda_library") == "failed"
    message = run.message("test_ldconfig_has_no_second_cuda_library")
    assert "exited with status 1" in message
    assert "Malformed extension data" in message
    assert "regenerate it with `ldconfig`" in message


def test_working_ldconfig_passes_the_check(tmp_path: Path) -> None:
    """The control: the image's own loader cache and default directories hold no second CUDA library."""
    manifest = write_manifest(tmp_path, manifest_document())
    run = run_suite(tmp_path, "--manifest", str(manifest), keyword="ldconfig")
    assert run.outcome("test_ldconfig_has_no_second_cuda_library") in ("passed", "skipped"), run.output[-3000:]
