"""``python -m precision_check.upgrade OLD.json NEW.json``: rewrite a report of an older version (1 to 4) as the
current one, with the lines precision-check judges (``display``) that a page on the host shows.

The measurements and the verdict are kept as they were recorded; the table and the facts are judged from them by
this precision-check, as `precision-check` would print them now. Exit status: 0 when written; 2 when OLD cannot
be read or NEW cannot be written (one paragraph on stderr: the cause and the fix).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from precision_check.bad_input import EXIT_BAD_INPUT, EXIT_OK, PrecisionCheckError
from precision_check.check_report import READABLE_VERSIONS, SCHEMA, report_from_json
from precision_check.display import to_json


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise PrecisionCheckError(f"bad arguments: {message}", f"see `{self.prog} --help`")


def upgrade(old: Path, new: Path) -> None:
    try:
        text = old.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PrecisionCheckError(
            f"cannot read {old}: {exc}", "give the path of a precision-check --json report"
        ) from exc
    try:
        report = report_from_json(text)
    except (ValueError, KeyError, TypeError) as exc:
        what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
        raise PrecisionCheckError(
            f"{old} is not a {SCHEMA} report this precision-check reads ({what})",
            f"give a file `precision-check ... --json` wrote, unchanged (versions {READABLE_VERSIONS[0]} to "
            f"{READABLE_VERSIONS[-1]})",
        ) from exc
    try:
        new.parent.mkdir(parents=True, exist_ok=True)
        new.write_text(to_json(report), encoding="utf-8")
    except OSError as exc:
        raise PrecisionCheckError(f"cannot write {new}: {exc.strerror}", "give a writable NEW path") from exc


def main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(prog="python -m precision_check.upgrade", description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path, metavar="OLD.json", help="a precision-check --json report, any version")
    parser.add_argument("new", type=Path, metavar="NEW.json", help="where to write it as the current version")
    try:
        args = parser.parse_args(sys.argv[1:] if argv is None else argv)
        upgrade(args.old, args.new)
    except PrecisionCheckError as err:
        print(err.paragraph(), file=sys.stderr)
        return EXIT_BAD_INPUT
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
