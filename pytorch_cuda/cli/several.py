"""`build`/`push` of several targets: each in turn, a failure reported without hiding the others' results."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console

from pytorch_cuda.console.output import dumps
from pytorch_cuda.errors import UserError


@dataclass(frozen=True)
class TargetResult:
    """What one target of the command came to: its plan or outcome as JSON, or the error that stopped it."""

    target: str
    found: dict[str, Any] | None
    error: UserError | None = None

    def as_dict(self) -> dict[str, Any]:
        if self.error is None:
            return {"target": self.target, "ok": True, **(self.found or {})}
        error = self.error
        shown = {"error": type(error).__name__, "cause": error.cause, "fix": error.fix}
        return {"target": self.target, "ok": False, "exit_status": error.exit_status, **shown}


def build_each(targets: Sequence[str], one: Callable[[str], dict[str, Any]], err: Console) -> list[TargetResult]:
    """Run `one` for every target in order; a UserError (bad lock, failed checks, a failed push, ...) is that
    target's result, printed as it happens, and the next target starts. Ctrl-C stops them all."""
    results = []
    for number, target in enumerate(targets, 1):
        err.print(f"[{number}/{len(targets)}] target {target}", style="bold", highlight=False)
        try:
            results.append(TargetResult(target, one(target)))
        except UserError as error:
            err.print(f"{target}: {error.paragraph()}", style="bold red", highlight=False, markup=False)
            results.append(TargetResult(target, None, error))
    return results


def exit_status(results: Sequence[TargetResult]) -> int:
    """0 when every target succeeded; else the worst failure's status (2, bad input or environment, over 1,
    failed checks)."""
    return max((r.error.exit_status for r in results if r.error is not None), default=0)


def results_json(results: Sequence[TargetResult]) -> dict[str, Any]:
    return {
        "targets": [r.as_dict() for r in results],
        "failed": [r.target for r in results if r.error is not None],
        "exit_status": exit_status(results),
    }


def print_results(out: Console, results: Sequence[TargetResult], *, dry_run: bool) -> None:
    """The plans (with --dry-run), then one line per target: what it came to (a dry run: planned, or left out
    and why: what a build would refuse, e.g. a variant with no lock)."""
    if dry_run:
        for result in results:
            if result.found is not None:
                out.print(f"target {result.target}:", style="bold", highlight=False)
                out.print_json(dumps(result.found))
    out.print(f"{len(results)} targets:", style="bold", highlight=False)
    for result in results:
        if result.error is None:
            done = "planned" if dry_run else f"built {result.found['variant'] if result.found else ''}"
            out.print(f"  {result.target}: {done}", style="green", highlight=False)
        else:
            what = "left out" if dry_run else "failed"
            line = f"  {result.target}: {what} (exit {result.error.exit_status}): {result.error.cause}"
            out.print(line, style="red", highlight=False, markup=False)
