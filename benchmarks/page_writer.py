"""What both benchmarks' command lines share: the --readme and --from-json options, and writing the table
(a Markdown page under benchmarks/, the README's generated section with --readme, stdout)."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.table import replace_readme_section

ROOT = Path(__file__).resolve().parents[1]


def parser(doc: str | None, section: str) -> argparse.ArgumentParser:
    """The benchmark's parser with the two options every benchmark takes; `section` names the README's part."""
    found = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    found.add_argument("--readme", action="store_true", help=f"also rewrite the README's {section} section")
    found.add_argument("--from-json", type=Path, help="skip measuring; render the table from this JSON")
    return found


def write_page(table: str, page: Path, title: str, markers: tuple[str, str] | None) -> None:
    """Write the table to `page` under a `title` heading, into the README between `markers` (None: leave
    the README alone), and to stdout."""
    page.write_text(f"# {title}\n\n" + table)
    if markers is not None:
        readme = ROOT / "README.md"
        readme.write_text(replace_readme_section(readme.read_text(), table, markers))
    print(table)
