"""One chart of a written report as an SVG file, for a page that links it (README's precision answer).

python -m pytorch_cuda.precision_report.chart_file REPORT.json {gemm,amp,compile} OUT.svg
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pytorch_cuda.precision_report.charts import all_charts


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[1] not in ("gemm", "amp", "compile"):
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    report, name, out = Path(argv[0]), argv[1], Path(argv[2])
    chart = all_charts(json.loads(report.read_text(encoding="utf-8"))["entries"])[name]
    if chart is None:
        print(f"chart_file: {report} has no measurements for the {name} chart", file=sys.stderr)
        return 1
    out.write_text(chart + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
