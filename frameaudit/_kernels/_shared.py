"""What the numpy kernels share: the cores, the worker threads and a progress line."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

__all__ = ["Progress", "in_parallel", "workers"]

T = TypeVar("T")

_PROGRESS_EVERY = 0.5  # seconds between progress updates


def workers() -> int:
    """The CPU cores this process may use."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


class Progress:
    """A one-line progress report on stderr, redrawn at most every half second.

    ``step()`` may be called from several threads; ``unit`` names what is counted.
    """

    def __init__(self, total: int, label: str, *, enabled: bool, unit: str = "blocks") -> None:
        self.total = total
        self.label = label
        self.enabled = enabled
        self.unit = unit
        self.done = 0
        self.start = self.last = time.perf_counter()
        self.lock = threading.Lock()

    def step(self) -> None:
        with self.lock:
            self.done += 1
            if not self.enabled:
                return
            now = time.perf_counter()
            if now - self.last < _PROGRESS_EVERY and self.done < self.total:
                return
            self.last = now
            elapsed = now - self.start
            left = elapsed * (self.total - self.done) / self.done
            sys.stderr.write(
                f"\r{self.label}: {100 * self.done / self.total:3.0f}% "
                f"({self.done}/{self.total} {self.unit}, {elapsed:.0f} s elapsed, "
                f"~{left:.0f} s left)"
            )
            if self.done == self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


# One BLAS thread per kernel worker. The limit is process-wide (BLAS has one thread count), so
# concurrent kernels share it: the first to start sets it and the last to finish restores it.
# The libraries are looked up once, under the lock: threadpoolctl finds them by walking the
# loaded libraries (dl_iterate_phdr) with a Python callback, which was seen to deadlock when it
# ran on every call from several threads at once.
_blas_lock = threading.Lock()
_blas_users = 0
_blas_limit: Any = None
_controller: Any = None


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    global _blas_users, _blas_limit, _controller  # noqa: PLW0603 (one process-wide limit)
    with _blas_lock:
        if _controller is None:
            _controller = ThreadpoolController()
        if _blas_users == 0:
            _blas_limit = _controller.limit(limits=1, user_api="blas")
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0:
                _blas_limit.restore_original_limits()
                _blas_limit = None


def in_parallel(work: Callable[[int], T], count: int) -> list[T]:
    """``[work(0), ..., work(count - 1)]``, each in its own thread with one BLAS thread.

    numpy releases the GIL in every step, so the workers run in parallel. One BLAS thread per
    worker: OpenBLAS's own threads spin while they wait, and next to other busy processes (or
    the kernel's own threads) that was measured to make a run up to 10× slower.
    """
    with _one_blas_thread(), ThreadPoolExecutor(count) as pool:
        return list(pool.map(work, range(count)))
