"""The one way the benchmarks time a call: warm-up, repetitions, the median.

Imported by the scripts beside it (run as ``python benchmarks/NAME.py``, so
this folder is first on sys.path).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_time(
    fn: Callable[[], object], repeat: int, *, warmup: int = 0, sync: Callable[[], object] | None = None
) -> float:
    """Median seconds of `repeat` calls of fn after `warmup` untimed ones.

    `sync` (torch.cuda.synchronize) runs after every call inside the timing,
    so work a call left queued on a device is counted.
    """
    sync = sync or (lambda: None)
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
