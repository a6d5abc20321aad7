"""The base image: the Debian packages in the image are the ones the build recorded."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conformance.support.results.not_judged import not_judged_when_carried
from pytorch_cuda_contract import paths
from pytorch_cuda_contract.base_record import dpkg_drift, load_base_record, parse_dpkg_query
from pytorch_cuda_contract.carried_stack import RunStack


@pytest.mark.cpu
def test_debian_packages_match_the_base_record(run_stack: RunStack) -> None:
    """Fails when a Debian package was added, removed or changed since the build recorded them in
    `/etc/pytorch-cuda/base.json` (the manifest's `base.record`), or the record names no base image ID (skips
    without a record; not judged on a carried stack)."""
    not_judged_when_carried(
        run_stack,
        f"the base image's Debian packages ({paths.BASE_RECORD_PATH}) are the image's; a bare host has its own",
    )
    record = load_base_record(Path(paths.BASE_RECORD_PATH))
    if record is None:
        pytest.skip(f"no base record at {paths.BASE_RECORD_PATH} (not a pytorch-cuda image)")
    if shutil.which("dpkg-query") is None:
        pytest.skip("dpkg-query is not installed")
    live = subprocess.run(
        ["dpkg-query", "-W", "-f=${Package}\t${Version}\n"], capture_output=True, text=True, check=True
    ).stdout
    assert record.id.startswith("sha256:"), f"the base record names no image ID: {record.id!r}"
    drift = dpkg_drift(record.dpkg, parse_dpkg_query(live))
    assert not drift, "Debian packages changed since the build recorded them: " + "; ".join(drift[:10])
