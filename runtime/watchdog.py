"""One thread that fires abort signals at deadlines, so a timeout costs no thread per call."""

from __future__ import annotations

import heapq
import itertools
import os
import threading
import time

from .signals import Signal


class Watchdog:
    def __init__(self) -> None:
        self._heap: list = []
        self._counter = itertools.count()
        self._cv = threading.Condition()
        self._thread: threading.Thread | None = None

    def arm(self, seconds: float, signal: Signal) -> None:
        with self._cv:
            heapq.heappush(self._heap, (time.monotonic() + seconds, next(self._counter), signal))
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="dshc-watchdog", daemon=True)
                self._thread.start()
            self._cv.notify()

    def _loop(self) -> None:
        with self._cv:
            while True:
                if not self._heap:
                    self._cv.wait()
                    continue
                deadline, _, signal = self._heap[0]
                delay = deadline - time.monotonic()
                if delay > 0:
                    self._cv.wait(delay)
                    continue
                heapq.heappop(self._heap)
                signal.set()


WATCHDOG = Watchdog()
# a forked child has no watchdog thread and may have inherited a held lock: start afresh
os.register_at_fork(after_in_child=lambda: Watchdog.__init__(WATCHDOG))
