"""The suite's helpers, grouped by role. The checks (``conformance/test_*.py``) import from here.

- ``probes/``: what this process, device and driver stack are and have (read, not loaded).
- ``workloads/``: the work a check runs and times (GEMM, AMP and training steps, compile, collectives).
- ``processes/``: extra processes: ranks spawned for distributed checks, background CPU jobs, their env.
- ``expectations/``: what a number must reach: datasheet peaks, architecture ratios, bounds, pin rules.
- ``results/``: the run's results: the recorder (pytest plugin), identity, the summary and its advice.

Formats other parts read (paths, manifest, results file, metric fields, GPU capabilities) live in
``pytorch_cuda_contract``, not here.
"""

from pathlib import Path
from typing import Final

SUITE_SOURCE: Final = Path(__file__).resolve().parent.parent  # the suite's folder (conformance/), where it runs from
