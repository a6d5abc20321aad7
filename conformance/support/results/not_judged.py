"""Checks that judge the image's own filesystem, on the shipped stack carried to a bare host: "not judged".

On a carried stack (``pytorch_cuda_contract.carried_stack``) the image's own files are not there: its Python and
venv path, its base record, the loader cache of the host. A check with a carried-stack equivalent judges that
equivalent (the libraries loaded once, from the carried venv); one with none calls :func:`not_judged_when_carried`
first. There it stops the check with a skip whose message starts with ``NOT_JUDGED_PREFIX``, which the recorder
records as the outcome "not_judged" (counted apart from passed and skipped, listed in the terminal summary). On
any other stack it returns, and the check judges exactly as before; a not-judged skip raised on an image or a
bare host is recorded as a failure.
"""

from __future__ import annotations

import pytest

from pytorch_cuda_contract.carried_stack import RunStack
from pytorch_cuda_contract.results_format import NOT_JUDGED_PREFIX

__all__ = ["NOT_JUDGED_PREFIX", "is_not_judged", "not_judged_when_carried"]


def not_judged_when_carried(stack: RunStack, reason: str) -> None:
    """Stop the calling check as not judged when the run is on a carried stack; else return (judge as ever).

    `reason` is one line: what the check judges in the image, and why a bare host has nothing to judge instead."""
    reason = reason.strip()
    if not reason or "\n" in reason:
        raise ValueError(f"a not-judged reason is one non-empty line, not {reason!r}")
    if stack.kind == "carried":
        pytest.skip(f"{NOT_JUDGED_PREFIX} {reason}")


def is_not_judged(message: str | None) -> bool:
    """Whether a skip's message is a not-judged one (the recorder's test)."""
    return message is not None and message.startswith(NOT_JUDGED_PREFIX)
