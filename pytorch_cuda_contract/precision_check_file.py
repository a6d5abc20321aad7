"""The precision-check report file (``precision-check ... --json``) as a page shows it. Standard library only.

precision-check writes the file: its measurements and verdict (precision_check/check_report.py) and, from version 5,
``display``, the lines it judged (precision_check/display.py): the table, the facts and what the verdict's kind
means, exactly as it prints them. A reader shows those lines and the loss curves; it never judges again, so the
host that draws the page needs neither torch nor precision-check. The JSON Schema is
precision_check/report.schema.json. A file older than version 5 has no judged lines: ``read_check_file`` refuses
it (``OldCheckFileError``), naming the command that upgrades it where precision-check is installed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from pytorch_cuda_contract import paths

SCHEMA: Final = "pytorch-cuda/precision-check"
VERSION: Final = 5  # the version precision-check writes
DISPLAY_FROM: Final = 5  # the first version that carries the judged lines
KNOWN_VERSIONS: Final = (1, 2, 3, 4, 5)
# In the image precision_check sits under SHARE_DIR (the precision-check wrapper puts it on PYTHONPATH).
UPGRADE_COMMAND: Final = f"PYTHONPATH={paths.SHARE_DIR} python -m precision_check.upgrade OLD.json NEW.json"

# What kind of answer the verdict is, one line each (`precision-check --help` and the HTML page print these;
# docs/precision-check.md says more):
VERDICT_KIND_MEANING: Final[dict[str, str]] = {
    "faster": "a lower precision is safe for this model and faster on this GPU",
    "not-faster": "a lower precision is safe but buys no speed here: stay in fp32",
    "numerics-only": "a CPU run: which precisions are safe in numerics; no speed evidence, so no dtype for speed",
    "precision-limited": "a precision's loss stalls far above fp32's: it cannot fit this model and is never chosen",
    "unsafe": "no lower precision is safe for this model (overflow, drift, non-finite values or underflow)",
    "model-unstable": "fp32 itself diverges or is on the edge of it: fix the model before choosing a dtype",
    "no-reference": "fp32 did not run: there was nothing to compare with",
}


@dataclass(frozen=True)
class Display:
    """The lines precision-check judged, as it prints them: one table row per dtype, the facts, the kind's
    meaning ("" for a verdict without a kind)."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    facts: tuple[str, ...]
    kind_meaning: str


@dataclass(frozen=True)
class Curve:
    label: str
    losses: tuple[float | None, ...]  # None: a non-finite loss (a gap in the curve)
    style: str  # "solid": a dtype's run; "dashed": fp32's control run; "dotted": fp32 with a run's skipped steps


@dataclass(frozen=True)
class CheckDevice:
    kind: str  # "cuda" | "cpu"
    name: str
    compute_capability: str | None
    torch: str


@dataclass(frozen=True)
class CheckVerdict:
    dtype: str
    headline: str
    reasons: tuple[str, ...]
    numbers: dict[str, float | str | None]
    kind: str  # "" before version 4


@dataclass(frozen=True)
class CheckFile:
    version: int
    target: str
    created_at: str
    steps: int
    device: CheckDevice
    verdict: CheckVerdict
    display: Display
    curves: tuple[Curve, ...]


class OldCheckFileError(ValueError):
    """A precision-check report from before version 5: it has no judged lines to show."""

    def __init__(self, version: int) -> None:
        super().__init__(
            f"version {version} predates the judged lines (display) that a page shows, written from version "
            f"{DISPLAY_FROM} on"
        )
        self.version = version


def is_check_file(doc: object) -> bool:
    return isinstance(doc, dict) and doc.get("schema") == SCHEMA


def _curves(doc: dict[str, Any]) -> tuple[Curve, ...]:
    runs = list(doc["runs"].values())
    curves = [Curve(run["dtype"], tuple(run["losses"]), "solid") for run in runs]
    if doc.get("noise_floor") is not None:
        curves.append(Curve("fp32 control", tuple(doc["noise_floor"]["losses"]), "dashed"))
    for run in runs:
        same_skips = (run.get("scaler") or {}).get("fp32_same_skips")
        if same_skips is not None:
            curves.append(Curve(f"fp32 skipping {run['dtype']}'s skipped steps", tuple(same_skips), "dotted"))
    return tuple(curves)


def _display(d: dict[str, Any]) -> Display:
    rows = tuple(tuple(str(cell) for cell in row) for row in d["rows"])
    return Display(tuple(str(cell) for cell in d["header"]), rows, tuple(d["facts"]), str(d["kind_meaning"]))


def read_check_file(text: str) -> CheckFile:
    """The file in ``text``. Raises ValueError (not JSON, not a known version; OldCheckFileError before version
    5), KeyError (a missing field: the error names it) or TypeError (a field of the wrong shape)."""
    doc = json.loads(text)
    if not is_check_file(doc) or doc.get("version") not in KNOWN_VERSIONS:
        raise ValueError(f"not a {SCHEMA} document of version {' or '.join(map(str, KNOWN_VERSIONS))}")
    if doc["version"] < DISPLAY_FROM:
        raise OldCheckFileError(doc["version"])
    device, v = doc["device"], doc["verdict"]
    verdict = CheckVerdict(
        v["dtype"], v["headline"], tuple(v.get("reasons", ())), dict(v.get("numbers", {})), v.get("kind", "")
    )
    return CheckFile(
        version=doc["version"],
        target=doc["target"],
        created_at=doc["created_at"],
        steps=doc["steps"],
        device=CheckDevice(device["kind"], device["name"], device.get("compute_capability"), device.get("torch", "")),
        verdict=verdict,
        display=_display(doc["display"]),
        curves=_curves(doc),
    )
