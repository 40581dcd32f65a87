"""What the numpy kernels share: the cores, the worker threads and a progress bar."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

if TYPE_CHECKING:
    from tqdm import tqdm

__all__ = ["Progress", "in_parallel", "workers"]

T = TypeVar("T")

_PROGRESS_EVERY = 0.5  # seconds between redraws of the progress bar


def workers() -> int:
    """The CPU cores this process may use."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


class Progress:
    """A tqdm progress bar over ``total`` steps, or nothing when not ``enabled``.

    A context manager: the bar is closed on exit, also when the work raised. ``step()`` may be
    called from several worker threads; ``unit`` names what is counted. The bar is
    ``tqdm.auto``'s: a widget in Jupyter, a line on stderr elsewhere.
    """

    def __init__(self, total: int, label: str, *, enabled: bool, unit: str = "blocks") -> None:
        self._lock = threading.Lock()
        self._bar: tqdm[Any] | None = None
        if enabled:
            # imported here: in Jupyter without ipywidgets, importing tqdm.auto warns
            from tqdm.auto import tqdm as auto_tqdm  # noqa: PLC0415

            self._bar = auto_tqdm(
                total=total, desc=label, unit=f" {unit}", mininterval=_PROGRESS_EVERY
            )

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def step(self) -> None:
        """Count one step done (thread-safe: tqdm's counter is not)."""
        with self._lock:
            if self._bar is not None:
                self._bar.update(1)

    def close(self) -> None:
        """Draw the bar's final state and release it (once)."""
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None


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
