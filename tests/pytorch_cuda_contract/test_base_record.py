"""The base record's parsing and drift check (the suite's side) and the builder's use of the same model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytorch_cuda_contract.base_record import (
    BaseRecordError,
    BaseSection,
    dpkg_drift,
    load_base_record,
    parse_dpkg_query,
)


def test_drift_names_changed_added_and_removed_packages() -> None:
    recorded = {"gcc": "4:14.2.0-1", "tini": "0.19.0-1", "gone": "1"}
    live = parse_dpkg_query("gcc\t4:14.2.0-2\ntini\t0.19.0-1\nnew\t2\n")
    assert dpkg_drift(recorded, live) == [
        "gcc: recorded 4:14.2.0-1, installed 4:14.2.0-2",
        "gone: recorded 1, installed absent",
        "new: recorded absent, installed 2",
    ]
    assert dpkg_drift(recorded, recorded) == []


def test_record_loading(tmp_path: Path) -> None:
    assert load_base_record(tmp_path / "none.json") is None
    good = tmp_path / "base.json"
    good.write_text(json.dumps({"image": "b:t", "id": "sha256:1", "dpkg": {"gcc": "1"}}))
    record = load_base_record(good)
    assert record is not None
    assert record.dpkg == {"gcc": "1"}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"image": "b:t"}))
    with pytest.raises(BaseRecordError, match="dpkg"):
        load_base_record(bad)


def test_the_committed_manifests_base_section_reads_back() -> None:
    root = Path(__file__).resolve().parents[2]
    data = json.loads((root / "images/cu128-runtime/manifest.json").read_text())
    section = BaseSection.from_json(data["base"])
    assert section.image == "pytorch-cuda-base/debian:trixie"
    assert section.bootstrap["tool"] == "mmdebstrap"
    assert section.record == "/etc/pytorch-cuda/base.json"
    assert section.as_json() == data["base"]
