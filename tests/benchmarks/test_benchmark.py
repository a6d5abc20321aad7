"""The benchmark's parsing and arithmetic (no timing asserts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.table import (
    README_END,
    README_START,
    duplicate_sonames,
    markdown,
    new_layer_bytes,
    ratio,
    replace_readme_section,
    rows,
)

REPORT = {
    "cpus": 2,
    "naive": {"cold_s": 150.0, "bump_s": 120.0, "size_bytes": 7_750_000_000, "duplicate_sonames": {"a.so": []},
              "bump_new_layer_bytes": 7_000_000_000},
    "ours": {"cold_s": 75.0, "cold_timings": {"build": 60.0, "checks": 15.0}, "bump_s": 15.0, "noop_s": 2.0,
             "bump_timings": {"build": 6.0, "checks": 9.0}, "suite_edit_timings": {"build": 3.0, "checks": 15.0},
             "noop_checks_reused": True, "suite_edit_s": 18.0, "size_bytes": 7_500_000_000, "duplicate_sonames": {},
             "bump_new_layer_bytes": 70_000_000},
    "notes": ["a note"],
}  # fmt: skip


def test_ratio() -> None:
    assert ratio(75.0, 150.0) == 0.5
    assert ratio(None, 150.0) is None
    assert ratio(1.0, 0) is None


def test_rows_carry_ratios_against_the_naive_build() -> None:
    table = dict(zip(("cold", "rebuild", "no-op", "suite", "image", "update"), rows(REPORT), strict=True))
    assert table["cold"].ours == "75.0 s (0.5x naive); build 60.0 s (0.4x) + checks 15.0 s"
    assert table["rebuild"].ours == "15.0 s (0.1x naive cold); build 6.0 s (0.04x) + checks 9.0 s"
    assert table["rebuild"].naive == "120.0 s (0.8x naive cold)"
    assert table["no-op"].ours == "2.0 s (in-image checks reused)"
    assert table["suite"].ours == "18.0 s; build 3.0 s + checks 15.0 s"
    assert table["image"].ours == "7.50 GB (0.97x naive); 0 sonames twice"
    assert table["image"].naive == "7.75 GB; 1 sonames twice"
    assert table["update"].ours == "0.07 GB (0.01x naive)"


def test_missing_measurements_leave_cells_empty() -> None:
    table = rows({"naive": {}, "ours": {"noop_s": 3.0}})
    assert [row.ours for row in table][:3] == ["", "", "3.0 s"]


def test_markdown_has_every_row_and_the_notes() -> None:
    text = markdown(REPORT)
    assert text.splitlines()[0] == "| | naive Dockerfile | pytorch-cuda | goal |"
    assert len([line for line in text.splitlines() if line.startswith("| ")]) == 1 + 6
    assert "a note" in text


def test_duplicate_sonames() -> None:
    listing = [
        "/opt/pytorch/lib/python3.13/site-packages/nvidia/cuda_cupti/lib/libcupti.so.12",
        "/opt/pytorch/lib/python3.13/site-packages/triton/backends/nvidia/lib/cupti/libcupti.so.12",
        "/opt/pytorch/lib/python3.13/site-packages/torch/lib/libtorch.so",
        "/opt/pytorch/lib/python3.13/site-packages/torch/_C.cpython-313-x86_64-linux-gnu.so",
        "/opt/pytorch/lib/python3.13/site-packages/functorch/_C.cpython-313-x86_64-linux-gnu.so",
        "/usr/share/doc/libfoo.so.txt",
    ]
    assert list(duplicate_sonames(listing)) == ["libcupti.so.12"]


def test_new_layer_bytes_counts_everything_after_the_first_difference() -> None:
    old = [("base", 80), ("nvidia", 5000), ("torch", 2000), ("small", 50), ("suite", 1)]
    new = [("base", 80), ("nvidia", 5000), ("torch", 2000), ("small'", 51), ("suite'", 1)]
    assert new_layer_bytes(old, new) == 52
    assert new_layer_bytes(old, old) == 0
    assert new_layer_bytes([], new) == 7132


def test_readme_section_is_replaced_between_the_markers(root: Path) -> None:
    readme = f"a\n{README_START}\nold\n{README_END}\nb\n"
    assert replace_readme_section(readme, "new table\n") == f"a\n{README_START}\nnew table\n{README_END}\nb\n"
    with pytest.raises(ValueError, match="no section"):
        replace_readme_section("no markers", "x")
    real = (root / "README.md").read_text()
    assert README_START in real
    assert README_END in real


def test_a_failing_step_stops_the_benchmark_with_what_it_printed() -> None:
    from benchmarks.compare import StepFailedError, sh

    with pytest.raises(StepFailedError, match=r"exited 3:\nonly 7.6 GiB is free"):
        sh("sh", "-c", "echo 'only 7.6 GiB is free' >&2; exit 3")
