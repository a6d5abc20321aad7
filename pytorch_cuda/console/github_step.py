"""What a GitHub Actions step hands on: its outputs ($GITHUB_OUTPUT, `name=value` lines) and its job summary
($GITHUB_STEP_SUMMARY, Markdown). The verbs write them (`--github-output FILE`, `--summary FILE`), so that a
workflow step is one call of build.py, not jq and echo."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pytorch_cuda.errors import UserError


def _append(path: Path, text: str, option: str) -> None:
    try:
        with path.open("a", encoding="utf-8") as file:
            file.write(text)
    except OSError as error:
        raise UserError(
            cause=f"cannot append to {option} {path} ({error.strerror})",
            fix=f'pass a writable file (in a workflow: {option} "$GITHUB_OUTPUT" or "$GITHUB_STEP_SUMMARY")',
        ) from None


def write_step_outputs(path: Path, outputs: Mapping[str, str]) -> None:
    """Append one `name=value` line per output: the one-line form, so a value must not hold a line break."""
    for name, value in outputs.items():
        if "\n" in value or "\r" in value:
            raise ValueError(f"step output {name!r} holds a line break; give it as one line (compact JSON)")
    _append(path, "".join(f"{name}={value}\n" for name, value in outputs.items()), "--github-output")


def append_step_summary(path: Path, markdown: str) -> None:
    """Append Markdown to the job summary, ending in a line break."""
    _append(path, markdown if markdown.endswith("\n") else markdown + "\n", "--summary")
