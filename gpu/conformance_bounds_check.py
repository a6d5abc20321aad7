"""Judge one conformance results file for gpu/conformance-bounds.sh and print CHECK ok/FAIL lines.

usage: conformance_bounds_check.py LABEL RESULTS.json [--fails NODE ...] [--clean] [--skips NODE=TEXT ...]
       [--bounded] [--max-wall S]
  --fails NODE      a test whose node id contains NODE must have failed (a fault ends as a named failure)
  --clean           no test failed (a legitimate setup passes or skips)
  --skips NODE=TEXT a test whose node id contains NODE was skipped with TEXT in its reason
  --bounded         every numeric metric has a bound/ceiling or says "informational": true
  --max-wall S      the run took at most S seconds
Exit status: 0 when every CHECK is ok, 1 otherwise, 2 when the file is missing or unreadable.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("label")
    parser.add_argument("results", type=Path)
    parser.add_argument("--fails", nargs="*", default=[])
    parser.add_argument("--skips", nargs="*", default=[])
    parser.add_argument("--clean", action="store_true")
    parser.add_argument("--bounded", action="store_true")
    parser.add_argument("--max-wall", type=float)
    args = parser.parse_args()
    try:
        doc = json.loads(args.results.read_text())
    except (OSError, ValueError) as exc:
        print(f"CHECK FAIL {args.label}: no results JSON ({exc}): the run crashed before writing it")
        return 2
    tests = doc["tests"]
    checks: list[tuple[bool, str]] = []
    print(f"  {args.label}: totals {doc['totals']}, exit {doc['exit_status']}, wall {doc.get('wall_time_s')} s")
    failed = {n: t for n, t in tests.items() if t["outcome"] == "failed"}
    for nodeid, record in failed.items():
        print(f"  FAILED {nodeid} [{record['phase']}]: {(record['message'] or '')[:400]}")
    for needle in args.fails:
        hits = [n for n in failed if needle in n]
        checks.append((bool(hits), f"{needle} fails ({', '.join(hits) or 'it did not fail'})"))
    for item in args.skips:
        needle, text = item.split("=", 1)
        hits = [
            n for n, t in tests.items() if needle in n and t["outcome"] == "skipped" and text in (t["message"] or "")
        ]
        shown = [f"{n}: {t['outcome']} {(t['message'] or '')[:200]}" for n, t in tests.items() if needle in n]
        checks.append((bool(hits), f"{needle} skips naming {text!r} ({'; '.join(shown) or 'not run'})"))
    if args.clean:
        crashed = list(failed)
        checks.append((not crashed, f"no failure, no crash ({len(crashed)} failed: {', '.join(crashed)[:600]})"))
    if args.bounded:
        loose = [
            f"{n}::{name}"
            for n, t in tests.items()
            for name, m in t["metrics"].items()
            if not isinstance(m["value"], str) or m["value"] in ("nan", "inf", "-inf")
            if m.get("bound") is None and m.get("ceiling") is None and m.get("informational") is not True
        ]
        checks.append((not loose, f"every number is bounded or informational ({len(loose)} not: {loose[:5]})"))
        informational = sorted({n for t in tests.values() for n, m in t["metrics"].items() if m.get("informational")})
        print(f"  informational ({len(informational)}): {', '.join(informational)}")
        for name, m in sorted(doc.get("measurements", {}).items()):
            limits = f"bound {m.get('bound_kind')} {m.get('bound')} ceiling {m.get('ceiling')}"
            print(f"  {name} = {m['value']} {m['unit']} {limits}")
    if args.max_wall is not None:
        wall = float(doc.get("wall_time_s") or 0.0)
        checks.append((wall <= args.max_wall, f"wall {wall} s <= {args.max_wall} s"))
    for ok, text in checks:
        print(f"CHECK {'ok' if ok else 'FAIL'} {args.label}: {text}")
    return 0 if all(ok for ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
