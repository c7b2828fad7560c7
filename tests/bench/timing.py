"""The one timing rule the benchmarks share."""

from __future__ import annotations

import time


def fastest(fn, repeats: int) -> float:
    """Fastest of `repeats` runs (a first run warms caches and is dropped): the least disturbed by
    other load on the machine, which only ever adds time."""
    fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return min(samples)
