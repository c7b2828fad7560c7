"""A progress bar on stderr for long commands: (done, total) updates in, one rewritten line out.

Nothing is drawn during the first second (a quick run stays quiet); after that the line is
redrawn at most ten times a second, and cleared when the work ends. On a stream that is not
a terminal the bar is written as whole lines, at most one every ten seconds.
"""

from __future__ import annotations

import time
from typing import TextIO

WIDTH = 30


class ProgressBar:
    def __init__(self, stream: TextIO, label: str, *, delay: float = 1.0, clock=time.monotonic) -> None:
        self.stream, self.label, self.delay, self.clock = stream, label, delay, clock
        self.started = clock()
        self.drawn_at: float | None = None
        try:
            self.terminal = stream.isatty()
        except (AttributeError, ValueError):
            self.terminal = False

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if now - self.started < self.delay:
            return
        gap = 0.1 if self.terminal else 10.0
        if self.drawn_at is not None and now - self.drawn_at < gap and done < total:
            return
        self.drawn_at = now
        share = done / total if total else 1.0
        filled = int(WIDTH * share)
        line = f"{self.label} [{'#' * filled}{'.' * (WIDTH - filled)}] {done}/{total} ({share:.0%}, {now - self.started:.0f} s)"
        self.stream.write(f"\r{line}\x1b[K" if self.terminal else line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.drawn_at is not None and self.terminal:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
