"""Execute a notebook's code cells in one namespace and save their output, with the standard library only.

For hosts without Jupyter (the bare GPU host). Where Jupyter is there, prefer
`jupyter execute` (nbclient), which the jupyter image's integration test uses.
Usage: python examples/run_notebook.py IN.ipynb OUT.ipynb; exits 1 when a cell raises.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import traceback
from pathlib import Path
from typing import Any


def run(notebook: dict[str, Any]) -> bool:
    namespace: dict[str, Any] = {"__name__": "__main__"}
    count = 0
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        count += 1
        out, err = io.StringIO(), io.StringIO()
        failed = False
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                exec(compile("".join(cell["source"]), f"<cell {count}>", "exec"), namespace)
            except Exception:
                traceback.print_exc()
                failed = True
        cell["execution_count"] = count
        cell["outputs"] = [
            {"output_type": "stream", "name": name, "text": text.getvalue().splitlines(keepends=True)}
            for name, text in (("stdout", out), ("stderr", err))
            if text.getvalue()
        ]
        sys.stdout.write(out.getvalue())
        sys.stderr.write(err.getvalue())
        if failed:
            return False
    return True


def main(argv: list[str]) -> int:
    source, target = Path(argv[0]), Path(argv[1])
    notebook = json.loads(source.read_text(encoding="utf-8"))
    ok = run(notebook)
    target.write_text(json.dumps(notebook, indent=1) + "\n", encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
