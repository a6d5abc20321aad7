"""The pull benchmark's arithmetic over registry manifests, its table and its README section (no timing asserts)."""

from __future__ import annotations

import pytest

from benchmarks.pull_table import MARKERS, compressed_bytes, markdown, rows, update_bytes
from benchmarks.table import replace_readme_section


def _manifest(*layers: tuple[str, int]) -> dict[str, object]:
    return {
        "schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "layers": [{"digest": f"sha256:{d}", "size": s, "mediaType": "tar+gzip"} for d, s in layers],
    }


OLD = _manifest(("base", 30), ("nvidia", 3000), ("torch", 1200), ("python", 60), ("suite", 1))
NEW = _manifest(("base", 30), ("nvidia", 3000), ("torch", 1200), ("python2", 61), ("suite2", 1))


def test_update_bytes_are_the_new_layers_the_old_image_lacks() -> None:
    assert compressed_bytes(NEW) == 4292
    assert update_bytes(OLD, NEW) == 62
    assert update_bytes(NEW, NEW) == 0
    assert update_bytes(_manifest(), NEW) == 4292  # nothing present: everything moves


def test_a_repeated_layer_is_counted_once() -> None:
    assert compressed_bytes(_manifest(("a", 5), ("a", 5), ("b", 1))) == 6


REPORT = {
    "naive": {"first_pull_s": 120.0, "update_pull_s": 118.0, "compressed_bytes": 4_300_000_000,
              "update_bytes": 4_300_000_000},
    "ours": {"first_pull_s": 125.0, "update_pull_s": 4.0, "compressed_bytes": 4_290_000_000,
             "update_bytes": 60_000_000},
    "notes": ["a note"],
}  # fmt: skip


def test_rows_give_ratios_and_shares_of_the_image() -> None:
    first, update = rows(REPORT)
    assert first.ours == "125.0 s (1.04x naive); 4.29 GB compressed"
    assert first.naive == "120.0 s; 4.30 GB compressed"
    assert update.ours == "4.0 s (0.03x naive); 0.06 GB, 1.4% of the image"
    assert update.naive == "118.0 s; 4.30 GB, 100.0% of the image"


def test_markdown_and_readme_section() -> None:
    table = markdown(REPORT)
    assert table.splitlines()[0] == "| | naive Dockerfile | pytorch-cuda | goal |"
    assert "\na note\n" in table
    readme = f"# x\n{MARKERS[0]}\nold\n{MARKERS[1]}\nrest\n"
    assert (
        replace_readme_section(readme, table, MARKERS) == f"# x\n{MARKERS[0]}\n{table.rstrip()}\n{MARKERS[1]}\nrest\n"
    )
    with pytest.raises(ValueError, match="pulls:start"):
        replace_readme_section("# no markers\n", table, MARKERS)


def test_a_partial_report_renders_without_numbers() -> None:
    first, update = rows({"naive": {}, "ours": {}})
    assert first.ours == ""
    assert update.ours == ""
