"""What a results file says about itself: the suite's name, the schema it is written in and the words it uses.

The writer (``conformance.support.results.recorder``) and the reader (``results_file``) both take them from here;
a metric's own fields are ``metrics``'s.
"""

from __future__ import annotations

from typing import Final

SUITE: Final = "pytorch-cuda-conformance"
RESULTS_SCHEMA: Final = 2  # what the suite writes
SUPPORTED_SCHEMAS: Final = (2,)  # what the reader reads
# not_judged: a check that judges the image's own filesystem, with no equivalent on the shipped stack carried to a
# bare host, did not judge there (only on a "carried" stack; its message starts with NOT_JUDGED_PREFIX). Counted
# apart from passed and skipped; a file written before it has no such key in "totals" (read as 0).
OUTCOMES: Final = ("passed", "failed", "skipped", "not_run", "not_judged")
NOT_JUDGED_PREFIX: Final = "not judged on a bare host:"
VERDICTS: Final = ("native", "emulated", "unsupported")  # a dtype on a device, measured
