"""What a results file says about itself: the suite's name, the schema it is written in and the words it uses.

The writer (``conformance.support.results.recorder``) and the reader (``results_file``) both take them from here;
a metric's own fields are ``metrics``'s.
"""

from __future__ import annotations

from typing import Final

SUITE: Final = "pytorch-cuda-conformance"
RESULTS_SCHEMA: Final = 2  # what the suite writes
SUPPORTED_SCHEMAS: Final = (2,)  # what the reader reads
OUTCOMES: Final = ("passed", "failed", "skipped", "not_run")
VERDICTS: Final = ("native", "emulated", "unsupported")  # a dtype on a device, measured
