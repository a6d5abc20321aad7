"""Issue 51's bounded reads, from the command line: `build.py release verify` against a registry on a loopback port
that declares, or sends, a manifest larger than its cap is refused with the named paragraph and exit status 2,
before the bytes are read or as they arrive, never holding them (the client's own tests:
tests/pytorch_cuda/oci/test_registry_client.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytorch_cuda.oci.registry_client import MOST_MANIFEST_BYTES
from tests.support.open_registry import HUGE, IMAGE, OpenRegistry, serving
from tests.support.release_checkout import folded, make_checkout


@pytest.fixture
def host() -> Iterator[str]:
    with serving() as address:
        yield address


@pytest.mark.parametrize("how", [str(10 << 30), "none", "gzip"])
def test_verify_refuses_an_oversized_manifest_declared_or_not(host: str, tmp_path: Path, how: str) -> None:
    checkout = make_checkout(tmp_path / "checkout", f"{host}/o/pytorch-cuda", pinned=False)
    OpenRegistry.objects = {"/v2/o/pytorch-cuda/manifests/v9.9": (IMAGE, HUGE)}
    OpenRegistry.declared = {"/v2/o/pytorch-cuda/manifests/v9.9": how}
    done = checkout.release("verify", f"{host}/o/pytorch-cuda:v9.9")
    said = folded(done.stderr)
    assert done.returncode == 2, said
    assert said.startswith(f"error: the manifest of {host}/o/pytorch-cuda:v9.9 is larger than the "
                           f"{MOST_MANIFEST_BYTES} bytes allowed for it (")  # fmt: skip
    assert ("refused before reading" if how.isdigit() else "read no further") in said
    assert "Fix: an answer this large is not one this project writes" in said
    assert "Traceback" not in done.stderr
