"""The one error type a user sees: a cause and a fix, printed as one paragraph, exit status 2."""

from __future__ import annotations

EXIT_OK = 0
EXIT_BAD_INPUT = 2


class PrecisionCheckError(Exception):
    """Bad input (a missing module, a factory that returns the wrong things, a model that raises)."""

    def __init__(self, cause: str, fix: str) -> None:
        super().__init__(cause)
        self.cause = cause
        self.fix = fix

    def paragraph(self) -> str:
        fix = self.fix.rstrip(".")
        text = f"precision-check: {self.cause.rstrip('.')}. {fix[:1].upper()}{fix[1:]}."
        return " ".join(text.split())


def describe_exception(exc: BaseException) -> str:
    """`TypeError: bad shape` on one line, however long or multi-line the message is."""
    message = " ".join(str(exc).split())
    if len(message) > 300:
        message = message[:297] + "..."
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
