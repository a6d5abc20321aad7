"""`build.py render [--check]`: render templates/ into images/, or say what is stale."""

from __future__ import annotations

import argparse

from pytorch_cuda.cli.options import Session, SharedOptions, examples
from pytorch_cuda.console.output import dumps, print_stale
from pytorch_cuda.render_outputs import check_outputs, write_outputs


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    both = [shared.matrix, shared.common]
    render_verb = verbs.add_parser(
        "render",
        parents=both,
        help="render templates/ into images/",
        description="Render templates/ with matrix.yaml into images/ (one folder per variant: Dockerfile, manifest, "
        "requirements). --check writes nothing and exits 1 when images/ is stale (CI's up-to-date check).",
        epilog=examples("render", "render --check --json"),
    )
    render_verb.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 when images/ differs from the templates, or a lock from its requirements",
    )
    render_verb.set_defaults(run=run_render)


def run_render(args: argparse.Namespace, session: Session) -> int:
    if args.check:
        return check_render(args, session)
    changed = write_outputs(session.matrix(args), session.root())
    if args.json:
        print(dumps({"changed": [str(p) for p in changed]}))
    else:
        session.out.print("\n".join(f"rendered {p}" for p in changed) or "images/ is up to date", highlight=False)
    return 0


def check_render(args: argparse.Namespace, session: Session) -> int:
    checked, out = check_outputs(session.matrix(args), session.root()), session.out
    if args.json:
        stale_rows = [{"path": str(s.path), "reason": s.reason} for s in checked.stale]
        print(dumps({"up_to_date": checked.up_to_date, "stale": stale_rows, "not_locked": list(checked.not_locked)}))
        return 0 if checked.up_to_date else 1
    for path in checked.not_locked:
        out.print(f"note: {path} does not exist: that variant cannot be built until `build.py lock` makes it")
    if checked.stale:
        print_stale(out, list(checked.stale))
        out.print("images/ is stale: run `python build.py render` and commit the result", style="red")
    else:
        out.print("images/ matches templates/ and matrix.yaml")
    return 0 if checked.up_to_date else 1
