"""Show build progress events on the console: each step once, cache hits, and the long step's notable lines."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from rich.console import Console
from rich.text import Text

from pytorch_cuda.engine.protocol import ProgressEvent

_INTERESTING = re.compile(
    r"(Downloading|Collecting|Installing collected|Successfully installed|Setting up |Get:\d+|ERROR|error:)"
)


PROGRESS_MODES = ("auto", "plain", "tty", "quiet")


def make_progress(console: Console, mode: str) -> Callable[[ProgressEvent], None]:
    """``auto``: steps, cache hits and notable lines (coloured on a terminal); ``tty``: the same, coloured;
    ``plain``: every line of the build log, uncoloured; ``quiet``: nothing (failures still explain themselves)."""
    if mode == "quiet":
        return lambda _event: None
    if mode == "plain":
        return _plain(Console(stderr=console.stderr, no_color=True, highlight=False, soft_wrap=True))
    if mode == "tty":
        return console_progress(Console(stderr=console.stderr, force_terminal=True, soft_wrap=True))
    return console_progress(console)


def _plain(console: Console) -> Callable[[ProgressEvent], None]:
    def sink(event: ProgressEvent) -> None:
        if event.kind == "log":
            console.print(event.text, markup=False)
        elif event.kind != "tick":
            console.print(f"[{event.kind}] {event.step} {event.text}".rstrip(), markup=False)

    return sink


def console_progress(console: Console) -> Callable[[ProgressEvent], None]:
    """A sink that prints each real step once and, for long steps, their notable lines (throttled)."""
    started: dict[str, float] = {}
    last_log = [0.0]

    def sink(event: ProgressEvent) -> None:
        if event.kind == "step" and "[internal]" not in event.step and not event.step.startswith("[auth]"):
            started[event.step] = time.monotonic()
            console.print(Text("build ", style="bold") + Text(_short(event.step)), highlight=False)
        elif event.kind == "cached" and event.step in started:
            console.print(f"      cached: {_short(event.step, 60)}", style="dim", highlight=False, markup=False)
        elif event.kind == "done" and event.step in started:
            console.print(
                f"      done in {event.text}: {_short(event.step, 60)}", style="green", highlight=False, markup=False
            )
        elif event.kind == "tick":
            line = (
                f"      ... running for {event.text}: {_short(event.step, 70)}"
                if event.step
                else f"      ... {event.text}"
            )
            console.print(line, style="dim", highlight=False, markup=False)
        elif event.kind == "error":
            console.print(
                f"      failed: {_short(event.step, 60)}: {event.text}", style="red", highlight=False, markup=False
            )
        elif event.kind == "log" and _INTERESTING.search(event.text):
            now = time.monotonic()
            if now - last_log[0] >= 2.0 or "Successfully" in event.text or "rror" in event.text:
                last_log[0] = now
                console.print(f"      | {event.text[:150]}", style="dim", highlight=False, markup=False)

    return sink


def _short(text: str, width: int = 110) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."
