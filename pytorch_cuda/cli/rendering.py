"""`build.py render [--check]`: render templates/ into images/, or say what is stale."""

from __future__ import annotations

import argparse

from pytorch_cuda.cli.options import Session, SharedOptions, examples
from pytorch_cuda.console.output import dumps, print_stale
from pytorch_cuda.locks.resolving import not_locked, stale_locks
from pytorch_cuda.matrix.json_schema import stale_schema, write_schema
from pytorch_cuda.matrix.variants import all_variants
from pytorch_cuda.render import find_stale, render_all, write_rendered


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    both = [shared.matrix, shared.common]
    render_verb = verbs.add_parser(
        "render",
        parents=both,
        help="render templates/ into images/",
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
    matrix, root = session.matrix(args), session.root()
    changed = write_rendered(render_all(matrix, root / "templates"), root) + write_schema(root)
    if args.json:
        print(dumps({"changed": [str(p) for p in changed]}))
    else:
        session.out.print("\n".join(f"rendered {p}" for p in changed) or "images/ is up to date", highlight=False)
    return 0


def check_render(args: argparse.Namespace, session: Session) -> int:
    matrix, root, out = session.matrix(args), session.root(), session.out
    variants = all_variants(matrix)
    stale = find_stale(render_all(matrix, root / "templates", root), root) + stale_locks(matrix, variants, root)
    stale += stale_schema(root)
    unlocked = not_locked(root, variants, stale)
    if args.json:
        stale_rows = [{"path": str(s.path), "reason": s.reason} for s in stale]
        print(dumps({"up_to_date": not stale, "stale": stale_rows, "not_locked": unlocked}))
        return 1 if stale else 0
    for path in unlocked:
        out.print(f"note: {path} does not exist: that variant cannot be built until `build.py lock` makes it")
    if stale:
        print_stale(out, stale)
        out.print("images/ is stale: run `python build.py render` and commit the result", style="red")
    else:
        out.print("images/ matches templates/ and matrix.yaml")
    return 1 if stale else 0
