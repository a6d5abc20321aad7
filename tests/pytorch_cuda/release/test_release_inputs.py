"""The build inputs a release records and verify checks (build_inputs.py, provenance_inputs.py), without a registry:
the locks a variant's Dockerfiles read, the pinned base, and each way a provenance can differ from the checkout."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytorch_cuda.release.build_inputs import BuildInputsError, UnknownVariantError, committed_inputs, lock_uri
from pytorch_cuda.release.provenance_inputs import InputMismatchError, UncheckableBaseError, checked_inputs
from pytorch_cuda.release.statements import BuildRun, Source, provenance

ROOT = Path(__file__).resolve().parents[3]
SOURCE = "https://github.com/pytorch-cuda/pytorch-cuda"
COMMIT = "c" * 40
PUBLISHED = "127.0.0.1:5000/ci/base@sha256:" + "1" * 64
CONFIG = "sha256:" + "2" * 64
RUNTIME_LOCKS = [
    "images/installer.lock",
    "images/cu128-runtime/requirements.lock",
    "images/cu128-runtime/layer-1-nvidia.lock",
    "images/cu128-runtime/layer-2-torch.lock",
    "images/cu128-runtime/layer-3-python.lock",
    "images/sbom-tool.lock",
]


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """matrix.yaml, its base pinned and published, and images/ (the Dockerfiles and locks)."""
    shutil.copytree(ROOT / "images", tmp_path / "images")
    upstream = "    upstream: docker.io/library/debian:trixie-slim\n"
    text = (ROOT / "matrix.yaml").read_text()
    assert upstream in text
    (tmp_path / "matrix.yaml").write_text(text.replace(upstream, f"    upstream: {PUBLISHED}\n    digest: {CONFIG}\n"))
    return tmp_path


def sha256(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def dependencies(root: Path, variant: str = "cu128-runtime", base: str | None = PUBLISHED) -> list[dict[str, Any]]:
    """The resolvedDependencies `sign` writes for `variant` from the checkout at `root`."""
    locks = {path: digest for path, digest in committed_inputs(root, variant, strict=True).locks.items() if digest}
    run = BuildRun(
        builder_id="https://example.com/builder", invocation_id="run-1", source=Source(SOURCE, "refs/tags/v1", COMMIT),
        variant=variant, workflow=".github/workflows/release.yml",
        materials={f"docker://{base}": CONFIG} if base else {}, locks=locks,
    )  # fmt: skip
    found: list[dict[str, Any]] = provenance(run)["buildDefinition"]["resolvedDependencies"]
    return found


def mismatch(root: Path, found: list[dict[str, Any]], variant: str = "cu128-runtime") -> str:
    with pytest.raises(InputMismatchError) as caught:
        checked_inputs(root, variant, found, SOURCE)
    reason = caught.value.reason
    return f"{reason.field}: expected {reason.expected}, found {reason.found} ({reason.why})"


def test_a_variant_s_locks_are_those_its_dockerfiles_read_its_parents_included(checkout: Path) -> None:
    runtime = committed_inputs(checkout, "cu128-runtime")
    assert list(runtime.locks) == RUNTIME_LOCKS
    assert runtime.locks["images/installer.lock"] == sha256(checkout / "images/installer.lock")
    assert runtime.base is not None
    assert (runtime.base.uri, runtime.base.config) == (f"docker://{PUBLISHED}", CONFIG)
    jupyter = committed_inputs(checkout, "cu128-jupyter")
    assert list(jupyter.locks) == [*RUNTIME_LOCKS, "images/cu128-jupyter/requirements-flavour.lock"]


def test_sign_refuses_a_variant_that_is_not_locked_or_not_in_the_matrix(checkout: Path) -> None:
    assert committed_inputs(checkout, "cu126-runtime").locks["images/cu126-runtime/requirements.lock"] is None
    with pytest.raises(BuildInputsError, match=r"reads images/cu126-runtime/requirements.lock, which is not in"):
        committed_inputs(checkout, "cu126-runtime", strict=True)
    with pytest.raises(UnknownVariantError, match=r"'cu99-runtime' is not a variant of"):
        committed_inputs(checkout, "cu99-runtime")


def test_the_provenance_records_each_lock_by_path_uri_and_sha256(checkout: Path) -> None:
    found = dependencies(checkout)
    lock = "images/cu128-runtime/requirements.lock"
    entry = {"name": lock, "uri": lock_uri(SOURCE, COMMIT, lock), "digest": {"sha256": sha256(checkout / lock)[7:]}}
    assert entry in found
    assert entry["uri"] == f"git+{SOURCE}@{COMMIT}#{lock}"
    assert {"uri": f"docker://{PUBLISHED}", "digest": {"sha256": "2" * 64}} in found


def test_the_checkout_s_own_inputs_pass(checkout: Path) -> None:
    inputs, base = checked_inputs(checkout, "cu128-runtime", dependencies(checkout), SOURCE)
    assert (len(inputs.locks), base.published) == (6, PUBLISHED)


def test_an_edited_lock_is_named(checkout: Path) -> None:
    found = dependencies(checkout)
    lock = checkout / "images/cu128-runtime/layer-2-torch.lock"
    ours = sha256(lock)
    lock.write_text(lock.read_text() + "# edited\n")
    text = mismatch(checkout, found)
    assert text.startswith(
        f"provenance resolvedDependencies images/cu128-runtime/layer-2-torch.lock: expected {sha256(lock)}"
    )
    assert f"found {ours} (built from another lock than this checkout commits" in text


def test_another_base_and_no_base_are_named(checkout: Path) -> None:
    other = "127.0.0.1:5000/ci/other@sha256:" + "3" * 64
    text = mismatch(checkout, dependencies(checkout, base=other))
    assert (
        f"base: expected docker://{PUBLISHED} ({CONFIG}), matrix.yaml's pinned base 'trixie', found docker://{other}"
        in text
    )
    assert "(built on another base than this checkout pins)" in text
    text = mismatch(checkout, dependencies(checkout, base=None))
    assert "found none (the provenance records no base: signed without the pinned-base check)" in text


def test_a_lock_missing_from_or_added_to_the_provenance_is_named(checkout: Path) -> None:
    found = dependencies(checkout)
    fewer = [d for d in found if d.get("name") != "images/sbom-tool.lock"]
    assert "images/sbom-tool.lock: expected sha256:" in mismatch(checkout, fewer)
    assert "found none (the provenance does not record this lock)" in mismatch(checkout, fewer)
    extra = {"name": "images/extra.lock", "uri": lock_uri(SOURCE, COMMIT, "images/extra.lock"),
             "digest": {"sha256": "4" * 64}}  # fmt: skip
    text = mismatch(checkout, [*found, extra])
    assert "images/extra.lock: expected no such lock (this checkout's cu128-runtime Dockerfiles read none)" in text


def test_a_variant_the_matrix_lacks_is_named(checkout: Path) -> None:
    text = mismatch(checkout, dependencies(checkout), variant="cu99-runtime")
    assert text.startswith("provenance externalParameters.variant: expected a variant of ")
    assert "found cu99-runtime (built from another matrix than this checkout's)" in text


def test_a_checkout_without_a_pinned_base_cannot_check_one(checkout: Path) -> None:
    found = dependencies(checkout)
    shutil.copy(ROOT / "matrix.yaml", checkout / "matrix.yaml")
    with pytest.raises(UncheckableBaseError) as caught:
        checked_inputs(checkout, "cu128-runtime", found, SOURCE)
    assert caught.value.exit_status == 2
    assert "this checkout's matrix.yaml pins no published base for 'trixie'" in caught.value.cause
