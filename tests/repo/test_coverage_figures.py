"""Coverage figures are recomputed, never typed (issue 52): each card's matrix is rebuilt from its committed runs
with today's `fault_coverage`, and every coverage figure stated in README, docs/fault-coverage.md and each card's
matrix.md/json must be what it computes. Editing a stated figure fails this test (shown below on a copy)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fault_coverage.catalogue import CASES
from fault_coverage.coverage_matrix import build_matrix
from fault_coverage.coverage_page import render

REPO = Path(__file__).resolve().parents[2]
EVIDENCE = REPO / "evidence" / "fault-coverage"
CARDS = sorted(p.name for p in EVIDENCE.iterdir() if (p / "runs").is_dir())
LABELS = {card: card.upper() for card in CARDS}
FIGURE = re.compile(r"\b(\d+) of (\d+)\b")


@dataclass(frozen=True)
class CardFigures:
    tripped: int
    real_tripped: int
    gated: int
    percent: float | None
    real_percent: float | None
    by_kind: tuple[tuple[str, int], ...]
    findings: int
    not_run: int
    suites: int


def _figures(matrix: dict[str, Any]) -> CardFigures:
    coverage = matrix["coverage"]
    return CardFigures(
        coverage["tripped"], coverage["real_tripped"], coverage["gated"], coverage["percent"],
        coverage["real_percent"], tuple(coverage["by_kind"].items()), len(matrix["findings"]),
        len(matrix["not_run"]), len(matrix["suites"]["by_digest"]),
    )  # fmt: skip


@pytest.fixture(scope="module")
def matrices() -> dict[str, dict[str, Any]]:
    return {card: build_matrix(CASES, EVIDENCE / card / "runs", card) for card in CARDS}


def table_row_problems(text: str, card: str, figures: CardFigures) -> list[str]:
    """The docs table's row of ``card`` against the tool's figures."""
    rows = [line for line in text.splitlines() if line.startswith(f"| [{LABELS[card]}](")]
    if len(rows) != 1:
        return [f"{card}: {len(rows)} rows in the coverage table"]
    cells = [cell.strip() for cell in rows[0].strip("|").split("|")]
    kinds = ", ".join(f"{kind} {count}" for kind, count in figures.by_kind)
    wanted = [
        f"{figures.tripped} of {figures.gated} ({figures.percent}%)",
        f"{figures.real_tripped} of {figures.gated} ({figures.real_percent}%)",
        kinds, str(figures.findings), str(figures.not_run), str(figures.suites),
    ]  # fmt: skip
    if len(cells) != len(wanted) + 2:
        return [f"{card}: the table row has {len(cells)} cells"]
    return [f"{card}: the table says {got!r}, the tool {want!r}" for got, want in zip(cells[2:], wanted, strict=True)
            if got != want]  # fmt: skip


def prose_problems(text: str, where: str, figures: dict[str, CardFigures]) -> list[str]:
    """Every "X of Y" in ``text`` must be a computed (tripped or by-real-fault, gated) pair of some card; after
    "on an CARD" the first two are that card's (tripped, gated) and (real, gated)."""
    computed = {(f.tripped, f.gated) for f in figures.values()} | {(f.real_tripped, f.gated) for f in figures.values()}
    problems = [f"{where}: {m.group(0)!r} is no figure the tool computes ({sorted(computed)})"
                for m in FIGURE.finditer(text) if (int(m.group(1)), int(m.group(2))) not in computed]  # fmt: skip
    for card, card_figures in figures.items():
        for start in (m.end() for m in re.finditer(rf"on an {LABELS[card]}\b", text)):
            stated = [(int(a), int(b)) for a, b in FIGURE.findall(text[start : start + 400])][:2]
            wanted = [(card_figures.tripped, card_figures.gated), (card_figures.real_tripped, card_figures.gated)]
            if stated and stated != wanted[: len(stated)]:
                problems.append(f"{where}: after 'on an {LABELS[card]}' it states {stated}, the tool {wanted}")
    return problems


def test_each_matrix_page_and_json_is_what_todays_tool_writes(matrices: dict[str, dict[str, Any]]) -> None:
    for card, matrix in matrices.items():
        assert json.loads((EVIDENCE / card / "matrix.json").read_text()) == json.loads(json.dumps(matrix)), card
        assert (EVIDENCE / card / "matrix.md").read_text() == render(matrix), (
            f"{card}: matrix.md differs from `python3 -m fault_coverage matrix --card {card}` on its runs"
        )


def test_docs_and_readme_state_only_the_computed_figures(matrices: dict[str, dict[str, Any]]) -> None:
    figures = {card: _figures(matrix) for card, matrix in matrices.items()}
    doc = (REPO / "docs" / "fault-coverage.md").read_text()
    readme = (REPO / "README.md").read_text()
    problems = [p for card, f in figures.items() for p in table_row_problems(doc, card, f)]
    problems += prose_problems(doc, "docs/fault-coverage.md", figures)
    problems += prose_problems(readme, "README.md", figures)
    assert not problems, "\n".join(problems)


def test_the_false_statements_are_gone() -> None:
    doc = (REPO / "docs" / "fault-coverage.md").read_text()
    readme = (REPO / "README.md").read_text()
    assert not doc.startswith("# Fault coverage: every gated check is shown failing by a real fault")
    assert "every gated check failed by a real fault" not in readme
    for card in CARDS:
        page = (EVIDENCE / card / "matrix.md").read_text()
        assert "every fault tripped what it targets," not in page or "**Findings:** none" in page, card


def test_an_edited_figure_fails(matrices: dict[str, dict[str, Any]]) -> None:
    """The check above on copies with one figure edited each: the table's total, its kind count, the README's."""
    figures = {card: _figures(matrix) for card, matrix in matrices.items()}
    doc = (REPO / "docs" / "fault-coverage.md").read_text()
    readme = (REPO / "README.md").read_text()
    h200 = figures["h200"]
    typed_total = doc.replace(f"| {h200.tripped} of {h200.gated} ({h200.percent}%) |", f"| {h200.gated} of "
                              f"{h200.gated} (100.0%) |")  # fmt: skip
    assert typed_total != doc
    assert table_row_problems(typed_total, "h200", h200)  # 76 of 76 is the H100's pair: only the row tells
    typed_kind = doc.replace("replaced value 11 | 1 |", "replaced value 13 | 1 |")
    assert typed_kind != doc
    assert table_row_problems(typed_kind, "h200", h200)
    typed_readme = readme.replace(f"{h200.tripped} of {h200.gated}, {h200.real_tripped}", f"{h200.gated} of "
                                  f"{h200.gated}, {h200.real_tripped}")  # fmt: skip
    assert typed_readme != readme
    assert prose_problems(typed_readme, "README.md", figures)
