"""Every comment that works around a Docker, BuildKit, uv or torch behaviour says "workaround" and links the
upstream issue or release note, so that whoever upgrades the tool can see whether the workaround may go."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORD = re.compile(r"\bwork-?arounds?\b", re.IGNORECASE)
# A comment: "#" at the start of a line or after a space, outside the quotes a line opens before it.
COMMENT = re.compile(r"""^(?:[^"'#]|"[^"]*"|'[^']*')*?(?:^|\s)#(?P<text>.*)$""")
LINK = re.compile(r"https://\S+")
PROSE = (".md", ".json", ".txt", ".csv", ".lock", ".svg", ".html")  # not code comments: docs, data, locks
SKIPPED = ("evidence/", "tests/fixtures/", "tests/repo/test_workaround_links.py")


def _comment(line: str) -> str | None:
    match = COMMENT.match(line)
    return None if match is None else match["text"]


def unlinked_workarounds(path: str, text: str) -> list[str]:
    """`path:line` of each comment that names a workaround while neither it nor its block (the comment lines
    around it) links anything."""
    lines = text.splitlines()
    comments = [_comment(line) for line in lines]
    found: list[str] = []
    for number, comment in enumerate(comments):
        if comment is None or not WORD.search(comment):
            continue
        start, end = number, number
        while start > 0 and comments[start - 1] is not None and lines[start - 1].lstrip().startswith("#"):
            start -= 1
        while end + 1 < len(lines) and comments[end + 1] is not None and lines[end + 1].lstrip().startswith("#"):
            end += 1
        if not any(LINK.search(c or "") for c in comments[start : end + 1]):
            found.append(f"{path}:{number + 1}")
    return found


def _tracked() -> list[str]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [p for p in listed.splitlines() if not p.endswith(PROSE) and not p.startswith(SKIPPED)]


def test_every_workaround_comment_links_its_upstream_issue() -> None:
    unlinked: list[str] = []
    marked = 0
    for path in _tracked():
        file = ROOT / path
        if not file.is_file():
            continue
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        marked += sum(1 for line in text.splitlines() if WORD.search(_comment(line) or ""))
        unlinked += unlinked_workarounds(path, text)
    assert not unlinked, (
        "a workaround comment without a link to the upstream issue or release note it works around: "
        + ", ".join(unlinked)
        + ". Fix: add the https:// address of the Docker/BuildKit/uv/torch issue (or release note) to the comment."
    )
    assert marked >= 7, f"only {marked} workaround comments found: the scan no longer reads the code's comments"


def test_a_workaround_without_a_link_is_found_and_one_with_a_link_is_not() -> None:
    bare = "x = 1\n# A workaround: BuildKit 0.8 stamps the wall clock.\n# It is fixed upstream.\ny = 2\n"
    linked = "# A workaround: BuildKit 0.8 stamps the wall clock\n# (https://github.com/moby/buildkit/pull/2918).\n"
    inline = 'run("x")  # workaround for the uv cache\n'
    quoted = 'print("# not a workaround comment")\n'
    assert unlinked_workarounds("a.py", bare) == ["a.py:2"]
    assert unlinked_workarounds("b.sh", linked) == []
    assert unlinked_workarounds("c.py", inline) == ["c.py:1"]
    assert unlinked_workarounds("d.py", quoted) == []
