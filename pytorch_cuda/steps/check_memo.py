"""Remember which image IDs passed the in-image checks, so that a no-op rebuild does not rerun them.

A memo is keyed by the image ID, a digest of the suite's files and the check command; it lives
under the log directory (build-output/checks/). Only passing results are remembered; `--recheck`
ignores the memo and runs the checks again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from pytorch_cuda.steps.in_image_checks import CHECK_COMMAND, CheckReport
from pytorch_cuda_contract.suite_digest import suite_tree_digest

__all__ = ["memo_key", "recall", "remember", "suite_tree_digest"]


def memo_key(image_id: str, suite: str, command: Sequence[str] = CHECK_COMMAND) -> str:
    return hashlib.sha256(f"{image_id}\n{suite}\n{' '.join(command)}".encode()).hexdigest()[:32]


def recall(folder: Path, image_id: str, suite: str) -> CheckReport | None:
    """The remembered passing report for this image and suite, or None."""
    path = folder / f"{memo_key(image_id, suite)}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if data.get("image_id") != image_id or data.get("suite") != suite or not data.get("passed"):
        return None
    counts = {str(k): int(v) for k, v in dict(data.get("counts", {})).items()}
    return CheckReport(True, 0, counts, (), str(data.get("output_tail", "")), None, reused=True)


def remember(folder: Path, image_id: str, suite: str, report: CheckReport) -> None:
    if not report.passed:
        return
    folder.mkdir(parents=True, exist_ok=True)
    record = {k: v for k, v in asdict(report).items() if k not in ("results", "failures", "reused")}
    record.update(image_id=image_id, suite=suite)
    path = folder / f"{memo_key(image_id, suite)}.json"
    partial = path.with_suffix(".tmp")
    partial.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    partial.replace(path)
