"""Commands that need no Docker engine: list, report, render, check-render and lock."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from pytorch_cuda.cli.arguments import ROOT
from pytorch_cuda.console.output import dumps, matrix_rows, print_lock_changes, print_matrix, print_stale
from pytorch_cuda.errors import UserError
from pytorch_cuda.locks.child_flavour import own_lock_path
from pytorch_cuda.locks.resolving import refresh_locks, stale_locks
from pytorch_cuda.matrix import Matrix
from pytorch_cuda.probes.ca_bundle import find_ca_bundle
from pytorch_cuda.probes.index_probe import probe_index
from pytorch_cuda.render import find_stale, render_all, write_rendered
from pytorch_cuda.variants import all_variants, select_variant


def list_matrix(matrix: Matrix, out: Console, as_json: bool) -> int:
    if as_json:
        print(dumps(matrix_rows(matrix)))
    else:
        print_matrix(out, matrix)
    return 0


def report(paths: list[Path], out_dir: Path, out: Console, as_json: bool) -> int:
    from pytorch_cuda.precision_report import write_report  # matplotlib loads only for --report

    written = write_report(paths, out_dir)
    if as_json:
        print(dumps({"written": [str(p) for p in written]}))
    else:
        out.print("\n".join(f"wrote {p}" for p in written), highlight=False)
    return 0


def render(matrix: Matrix, out: Console, as_json: bool) -> int:
    changed = write_rendered(render_all(matrix, ROOT / "templates"), ROOT)
    if as_json:
        print(dumps({"changed": [str(p) for p in changed]}))
    else:
        out.print("\n".join(f"rendered {p}" for p in changed) or "images/ is up to date", highlight=False)
    return 0


def check_render(matrix: Matrix, out: Console, as_json: bool) -> int:
    variants = all_variants(matrix)
    stale = find_stale(render_all(matrix, ROOT / "templates", ROOT), ROOT) + stale_locks(matrix, variants, ROOT)
    unlocked = [  # a child's lock is made once its parent's is; until then neither can be built
        str(path.relative_to(ROOT)) for path in (own_lock_path(ROOT, v) for v in variants) if not path.exists()
    ]
    unlocked = [path for path in unlocked if not any(path == str(s.path) for s in stale)]
    if as_json:
        stale_rows = [{"path": str(s.path), "reason": s.reason} for s in stale]
        print(dumps({"up_to_date": not stale, "stale": stale_rows, "not_locked": unlocked}))
        return 1 if stale else 0
    for path in unlocked:
        out.print(f"note: {path} does not exist: that variant cannot be built until `build.py --lock` makes it")
    if stale:
        print_stale(out, stale)
        out.print("images/ is stale: run `python build.py --render` and commit the result", style="red")
    else:
        out.print("images/ matches templates/ and matrix.yaml")
    return 1 if stale else 0


def lock(matrix: Matrix, args: argparse.Namespace, out: Console) -> int:
    ca = find_ca_bundle(args.ca_bundle)
    ca_path = ca.path if ca else None
    variants = [select_variant(matrix, args.target, args.flavour)] if args.target else all_variants(matrix)
    changes, failures = refresh_locks(
        matrix, variants, ROOT, ca_bundle=ca_path, probe=lambda i: probe_index(i, ca_path)
    )
    write_rendered(render_all(matrix, ROOT / "templates", ROOT), ROOT)  # the layer slices of the locks
    if args.json and not failures:
        print(dumps([{"path": str(c.path), "created": c.created, "changes": list(c.changes)} for c in changes]))
    elif not args.json:
        print_lock_changes(out, changes)
    if len(failures) == 1:
        raise failures[0]
    if failures:
        raise UserError(cause="; ".join(f.cause for f in failures), fix="; ".join(f.fix for f in failures))
    return 0
