"""Open a report in a real headless browser (Debian's chromium): the DOM as rendered, console messages, a screenshot.

``python -m pytorch_cuda.precision_report.browser REPORT.html SCREENSHOT.png`` checks the page
(no console messages, the charts present as SVG) and writes the screenshot; exit 1 when the
check fails, 2 when no chromium is installed (scripts/setup-browser.sh installs it).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

CANDIDATES: Final = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CONSOLE: Final = re.compile(r":CONSOLE[:(]\d+\)?\] (.*)$", re.MULTILINE)
FLAGS: Final = (
    "--headless",
    "--no-sandbox",  # root in CI containers
    "--disable-gpu",
    "--hide-scrollbars",
    "--no-first-run",
    "--enable-logging=stderr",
    "--v=0",
)


@dataclass(frozen=True)
class PageLoad:
    dom: str
    console: tuple[str, ...]  # every console message the page produced (our page has no scripts: expect none)
    svg_count: int


def find_chromium() -> str | None:
    return next((found for name in CANDIDATES if (found := shutil.which(name))), None)


def _run(binary: str, profile: str, extra: Sequence[str], page: Path) -> subprocess.CompletedProcess[str]:
    command = [binary, *FLAGS, f"--user-data-dir={profile}", *extra, page.resolve().as_uri()]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def load(page: Path, screenshot: Path | None = None, width: int = 1280, height: int = 2400) -> PageLoad:
    """Render ``page``: its DOM after load, its console messages, and optionally a PNG screenshot."""
    binary = find_chromium()
    if binary is None:
        raise FileNotFoundError("no chromium found (looked for " + ", ".join(CANDIDATES) + ")")
    with tempfile.TemporaryDirectory(prefix="report-browser-") as profile:
        dumped = _run(binary, profile, ["--dump-dom"], page)
        if dumped.returncode != 0 or "<html" not in dumped.stdout:
            raise RuntimeError(f"chromium exited {dumped.returncode}: {dumped.stderr[-2000:]}")
        if screenshot is not None:
            shot = _run(
                binary, profile, [f"--screenshot={screenshot.resolve()}", f"--window-size={width},{height}"], page
            )
            if shot.returncode != 0 or not screenshot.exists():
                raise RuntimeError(f"chromium took no screenshot (exit {shot.returncode}): {shot.stderr[-2000:]}")
    console = tuple(CONSOLE.findall(dumped.stderr))
    return PageLoad(dumped.stdout, console, len(re.findall(r"<svg\b", dumped.stdout)))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        print("usage: python -m pytorch_cuda.precision_report.browser REPORT.html SCREENSHOT.png", file=sys.stderr)
        return 2
    try:
        page = load(Path(args[0]), Path(args[1]))
    except FileNotFoundError as error:
        print(
            f"error: {error}. Fix: run scripts/setup-browser.sh (as root) to install Debian's chromium.",
            file=sys.stderr,
        )
        return 2
    print(f"{args[0]}: {page.svg_count} charts (SVG), {len(page.console)} console messages; screenshot {args[1]}")
    for message in page.console:
        print(f"console: {message}", file=sys.stderr)
    return 1 if page.console or page.svg_count == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
