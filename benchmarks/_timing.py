"""Timing helper shared by the benchmark scripts (run as ``python benchmarks/X.py``)."""

import statistics
import time


def timed(func, repeats):
    """(median seconds over ``repeats`` calls of ``func()``, the last call's result)."""
    times = []
    out = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = func()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out
