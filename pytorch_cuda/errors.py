"""User-facing errors: one paragraph naming the cause and the fix; exit status 2, or 1 for failed checks."""

from __future__ import annotations

import textwrap

EXIT_USER_ERROR = 2
EXIT_CHECKS_FAILED = 1
# a partial answer: some of what was asked could not be reached (bump: a target's index; audit: an advisory database)
EXIT_PARTIAL = 4


class UserError(Exception):
    """An error caused by input or environment that the user can fix.

    ``cause`` says what went wrong, ``fix`` says what to do about it. The CLI
    prints them as one paragraph and exits with ``exit_status`` (2, or 1 for failed checks).
    """

    exit_status = EXIT_USER_ERROR

    def __init__(self, cause: str, fix: str) -> None:
        super().__init__(cause)
        self.cause = cause.strip().rstrip(".")
        self.fix = fix.strip().rstrip(".")

    def paragraph(self, width: int = 100) -> str:
        text = f"error: {self.cause}. Fix: {self.fix}."
        return textwrap.fill(text, width=width, break_on_hyphens=False, break_long_words=False)


class MatrixError(UserError):
    """matrix.yaml is missing, malformed or invalid."""


class EngineError(UserError):
    """The Docker engine is missing, down, refusing us, or a build step failed."""


class ChecksFailedError(UserError):
    """The in-image checks of a candidate image failed; no alias was moved. Exit status 1, like a stale images/."""

    exit_status = EXIT_CHECKS_FAILED


class BuildBusyError(UserError):
    """Another build of the same variant holds its lock file."""
