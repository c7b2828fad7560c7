"""Abort signals: a caller's signal, and fused signals a wrapper may substitute.

A wrapper may only replace the signal; the pipeline fuses the caller's original back in, so
nobody can stop a caller's abort from reaching the tool body.
"""

from __future__ import annotations

import threading
import time


class Signal:
    def __init__(self, *parents: "Signal"):
        self._event = threading.Event()
        self._parents = parents

    def set(self) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set() or any(p.is_set() for p in self._parents)

    def wait(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.is_set():
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            self._event.wait(0.02 if remaining is None else min(0.02, remaining))
        return True


def fuse(original: Signal, replacement: Signal) -> Signal:
    return replacement if replacement is original else Signal(original, replacement)
