"""What the numpy kernels share: the cores they may use and a progress line for long runs."""

from __future__ import annotations

import os
import sys
import threading
import time

__all__ = ["Progress", "workers"]

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
