"""What the benchmarks share: the best of several timed runs (the least disturbed by the machine)."""

from __future__ import annotations

import time


def best(fn, runs: int = 5) -> float:
    """The shortest of `runs` calls of `fn`, in seconds."""
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return min(out)
