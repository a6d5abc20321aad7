"""Retry an action on transient errors, with exponential backoff; the sleeper is injectable for tests."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")
Sleeper = Callable[[float], None]


@dataclass(frozen=True)
class Backoff:
    """``attempts`` tries in all; the waits between them grow from ``first_s`` by ``factor`` up to ``max_s``."""

    attempts: int = 4
    first_s: float = 2.0
    factor: float = 3.0
    max_s: float = 60.0

    def delays(self) -> tuple[float, ...]:
        """The waits before the 2nd, 3rd, ... try (2, 6, 18 s with the defaults)."""
        return tuple(min(self.max_s, self.first_s * self.factor**i) for i in range(max(0, self.attempts - 1)))


class TransientError(Exception):
    """An error worth another try (a dropped connection, a 5xx, a 429, a timeout)."""


@dataclass(frozen=True)
class Attempted(Generic[T]):
    value: T
    attempts: int


class GaveUpError(Exception):
    """The action still failed with a transient error after every try; ``last`` is that error."""

    def __init__(self, last: TransientError, attempts: int) -> None:
        super().__init__(f"{last} (after {attempts} tries)")
        self.last = last
        self.attempts = attempts


def with_retries(
    action: Callable[[], T],
    *,
    backoff: Backoff,
    sleep: Sleeper,
    on_retry: Callable[[int, float, TransientError], None] = lambda attempt, wait, error: None,
) -> Attempted[T]:
    """Run ``action``; on a TransientError wait and try again, up to ``backoff.attempts`` tries in all.

    Any other exception passes through at once (a refused login, a missing image: retrying cannot help).
    """
    delays = backoff.delays()
    attempt = 1
    while True:
        try:
            return Attempted(action(), attempt)
        except TransientError as error:
            if attempt > len(delays):
                raise GaveUpError(error, attempt) from error
            wait = delays[attempt - 1]
            on_retry(attempt, wait, error)
            sleep(wait)
            attempt += 1
