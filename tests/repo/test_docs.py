"""README fits a screen and links every page of docs/; the pages keep to the house style and their links resolve."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").glob("*.md"))
COMMANDS = ("scripts/setup.sh && .venv/bin/python build.py --target cu12", "scripts/setup-tests.sh && scripts/test.sh")
# Pages other work writes; README links them already.
SLOTS = {"docs/precision-check.md", "docs/conformance-bounds.md", "docs/testing.md", "docs/release.md"}
# Pages written on branches that may not edit README: the lead links them on merge, then drops them from here.
UNLINKED: set[str] = set()  # pages that may wait for a README link
GENERATED = re.compile(r"<!-- (measured|pulls):start.*?<!-- \1:end -->", re.DOTALL)  # written by benchmarks/
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _prose(path: Path) -> str:
    return GENERATED.sub("", path.read_text(encoding="utf-8"))


def _paragraphs(text: str) -> list[list[str]]:
    """Blocks of prose lines: no code, tables, headings or list items."""
    blocks: list[list[str]] = [[]]
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not line.strip() or line.startswith(("```", "|", "#", "- ", "<!--")) or re.match(r"\d+\. ", line):
            blocks.append([])
        elif not line.startswith(" "):
            blocks[-1].append(line)
    return [b for b in blocks if b]


def test_readme_fits_a_screen_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    for command in COMMANDS:
        assert f"```sh\n{command}\n```" in text, command


def test_readme_links_every_page_and_the_slots() -> None:
    linked = set(LINK.findall(README.read_text(encoding="utf-8")))
    wanted = ({f"docs/{page.name}" for page in PAGES} - UNLINKED) | SLOTS
    assert wanted <= linked, sorted(wanted - linked)


@pytest.mark.parametrize("path", [README, *PAGES], ids=lambda p: p.name)
def test_house_style(path: Path) -> None:
    text = _prose(path)
    # table rows are exempt: a Markdown table row cannot be wrapped
    long = [n for n, line in enumerate(text.splitlines(), 1) if len(line) > 120 and not line.startswith("|")]
    assert not long, f"{path.name}: lines over 120 characters: {long}"
    for block in _paragraphs(text):
        sentences = len(re.findall(r"[.!?](\s|$)", " ".join(block)))
        assert len(block) < 5 or sentences > 1, f"{path.name}: a {len(block)}-line one-sentence paragraph: {block[0]}"


@pytest.mark.parametrize("path", [README, *PAGES], ids=lambda p: p.name)
def test_relative_links_resolve(path: Path) -> None:
    for target in LINK.findall(path.read_text(encoding="utf-8")):
        if "://" in target:
            continue
        resolved = (path.parent / target).resolve()
        if str(resolved.relative_to(ROOT)) in SLOTS:
            continue
        assert resolved.exists(), f"{path.name} links {target}, which does not exist"


def test_published_ports_are_loopback_only() -> None:
    for path in [README, *PAGES]:
        for port in re.findall(r"-p (\S+)", path.read_text(encoding="utf-8")):
            assert port.startswith("127.0.0.1:"), f"{path.name}: -p {port} publishes on every interface"
