"""Exact silhouette coefficients in bounded memory (numpy/BLAS).

The silhouette of a point (Rousseeuw 1987) needs its mean distance to every cluster, so all
N² pairwise distances: the one clustering metric that cannot be a column expression. This
kernel computes them exactly (float64) without ever holding more than one block of them:

1. Points are sorted by cluster and centred (distances are translation invariant, and small
   coordinates keep the expanded form below accurate), then augmented so that one BLAS product
   gives a block of squared distances: ``[x, 1, ||x||²]·[−2y, ||y||², 1] = ||x − y||²``.
2. The expanded form cancels catastrophically for near-coincident points (a duplicate would
   sit √ε·||x|| away instead of at 0), so the few pairs of a block that are close relative to
   their norms are recomputed from coordinate differences. The block is then square-rooted and
   reduced to per-cluster sums with ``np.add.reduceat`` over the sorted cluster segments: O(B²)
   per block whatever the number of clusters.
3. In exact mode only the blocks on and above the diagonal are computed; each one adds to the
   sums of its rows and, transposed, of its columns.

With a_i the mean distance from i to the other members of its cluster and b_i the smallest mean
distance from i to another cluster, s_i = (b_i − a_i) / max(a_i, b_i). A point alone in its
cluster has s_i = 0, and so does a point with a_i = b_i = 0 (scikit-learn's conventions).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["BLAS_SERIAL", "GroupSilhouette", "group_silhouette", "silhouette_samples"]

Float = npt.NDArray[np.float64]
Index = npt.NDArray[np.intp]

# OpenBLAS runs a product of m·n·k ≤ 262144 on one thread. The kernels keep their products that
# small: OpenBLAS threads spin while they wait, and next to other busy processes (or the
# kernel's own threads) that was measured to make a run 10× slower.
BLAS_SERIAL = 262144
_CLOSE = 1e-5  # pairs closer than this (relative, see _exact_close_pairs) are recomputed
_SUMS_BUDGET = 256 * 2**20  # bytes of per-point cluster sums allowed for the symmetric pass
_PROGRESS_PAIRS = 5e8  # distances above which a run takes seconds: show a progress line
_PROGRESS_EVERY = 0.5  # seconds between progress updates


class _Progress:
    """A one-line progress report on stderr, redrawn at most every half second."""

    def __init__(self, total: int, label: str, *, enabled: bool) -> None:
        self.total = total
        self.label = label
        self.enabled = enabled
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
                f"({self.done}/{self.total} blocks, {elapsed:.0f} s elapsed, ~{left:.0f} s left)"
            )
            if self.done == self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


def _workers() -> int:
    """The CPU cores this process may use."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def _block_size(d: int) -> int:
    """Rows (and columns) of one block of distances.

    Small enough that OpenBLAS computes each block's product on one thread (``BLAS_SERIAL``),
    and a block of at most 256 × 256 float64 stays in the L2 cache.
    """
    return int(np.clip(np.sqrt(BLAS_SERIAL / (d + 2)), 32, 256))


def _segments(labels: Index, start: int, stop: int) -> tuple[Index, Index]:
    """Where each cluster's run starts inside ``labels[start:stop]`` (sorted), and its label."""
    block = labels[start:stop]
    first = np.flatnonzero(np.concatenate(([True], block[1:] != block[:-1])))
    return first, block[first]


def _exact_close_pairs(block: Float, points: Float, rows: Index, j0: int, limit: float) -> None:
    """Recompute from coordinate differences the squared distances of the block below ``limit``.

    The expanded form ||x||² + ||y||² − 2x·y loses up to (d + 3)·ε·(||x||² + ||y||²) to
    rounding, all of a small distance's digits (a duplicate point would sit √ε·||x|| away, not
    at 0). Below ``limit`` = _CLOSE·(d + 3)·(largest norms) the pair is recomputed exactly;
    above it the relative error of a distance is at most ε/(2·_CLOSE). Every square left is
    then at least ``limit`` ≥ 0, so no clipping is needed before the square root.
    """
    close = np.flatnonzero(block.ravel() < limit)
    if close.size:
        row, column = np.divmod(close, block.shape[1])
        diff = points[rows[row]] - points[j0 + column]
        block.ravel()[close] = np.einsum("ij,ij->i", diff, diff)


def _cluster_sums(
    points: Float,
    labels: Index,
    targets: Index | None,
    k: int,
    *,
    progress: bool | None,
    label: str,
) -> Float:
    """Σ_{j ∈ c} ||x_i − x_j|| for every target row i and cluster c, as an (m, k) array.

    ``points`` are centred and sorted by ``labels``; ``targets`` are row numbers into them, or
    None for every row (in that sorted order). Row blocks are shared out among threads (numpy
    releases the GIL in every step); in the symmetric pass each thread adds into its own array.
    """
    n, d = points.shape
    norms = np.einsum("ij,ij->i", points, points)
    right = np.empty((n, d + 2))
    right[:, :d] = -2.0 * points
    right[:, d] = norms
    right[:, d + 1] = 1.0

    workers = _workers()
    symmetric = targets is None and workers * n * k * 8 <= _SUMS_BUDGET
    rows_of = np.arange(n) if targets is None else targets
    m = rows_of.size
    size = _block_size(d)
    columns = [(j0, min(n, j0 + size)) for j0 in range(0, n, size)]
    segments = [_segments(labels, j0, j1) for j0, j1 in columns]
    column_norm = [norms[j0:j1].max() for j0, j1 in columns]
    row_blocks = len(range(0, m, size))
    steps = len(columns) * (len(columns) + 1) // 2 if symmetric else row_blocks * len(columns)
    pairs = m * n / (2 if symmetric else 1)
    report = _Progress(
        steps, label, enabled=pairs > _PROGRESS_PAIRS if progress is None else progress
    )
    shared = np.zeros((m, k))

    def work(worker: int) -> Float:
        # np.errstate is per thread: invalid input flows through as NaN here too.
        with np.errstate(invalid="ignore", over="ignore"):
            return blocks(worker)

    def blocks(worker: int) -> Float:
        sums = np.zeros((m, k)) if symmetric else shared
        buffer = np.empty(size * size)
        for bi in range(worker, row_blocks, workers):
            i0, i1 = bi * size, min(m, (bi + 1) * size)
            rows = rows_of[i0:i1]
            lhs = np.empty((rows.size, d + 2))
            lhs[:, :d] = points[rows]
            lhs[:, d] = 1.0
            lhs[:, d + 1] = norms[rows]
            row_norm = norms[rows].max()
            for bj in range(bi if symmetric else 0, len(columns)):
                j0, j1 = columns[bj]
                block = buffer[: (i1 - i0) * (j1 - j0)].reshape(i1 - i0, j1 - j0)
                np.matmul(lhs, right[j0:j1].T, out=block)
                _exact_close_pairs(
                    block, points, rows, j0, _CLOSE * (d + 3) * (row_norm + column_norm[bj])
                )
                np.sqrt(block, out=block)
                first, present = segments[bj]
                sums[i0:i1, present] += np.add.reduceat(block, first, axis=1)
                if symmetric and bi != bj:
                    first, present = segments[bi]
                    sums[j0:j1, present] += np.add.reduceat(block, first, axis=0).T
                report.step()
        return sums

    with ThreadPoolExecutor(workers) as pool:
        partial = list(pool.map(work, range(workers)))
    return np.sum(partial, axis=0) if symmetric else shared


def _coefficients(sums: Float, own: Index, sizes: npt.NDArray[np.int64]) -> Float:
    """s_i from the per-cluster distance sums of each row, its cluster and the cluster sizes."""
    rows = np.arange(own.size)
    size = sizes[own].astype(np.float64)
    a = sums[rows, own] / np.maximum(size - 1.0, 1.0)
    means = sums / sizes
    means[rows, own] = np.inf
    b = means.min(axis=1)
    s: Float = (b - a) / np.maximum(a, b)
    s[(size == 1) | ((a == 0) & (b == 0))] = 0.0
    return s


def silhouette_samples(
    x: Float,
    labels: Index,
    rows: Index | None = None,
    *,
    progress: bool | None = None,
    label: str = "silhouette",
) -> Float:
    """The exact silhouette coefficient of every point, or of the points ``rows``.

    Parameters
    ----------
    x
        ``(n, d)`` float64 coordinates.
    labels
        ``(n,)`` cluster codes ``0 .. k−1``, every code used.
    rows
        Optional row numbers: compute s_i for these points only (each still against all n
        points). None: every point.
    progress
        Show a progress line on stderr: True, False, or None for "when the run is long"
        (more than 5·10⁸ distances).
    label
        What the progress line calls the computation.

    Returns
    -------
    s_i for every point (in the order of ``x``) or for ``rows`` (in their order). NaN input
    gives NaN; a single cluster gives NaN (b_i is undefined).

    Notes
    -----
    O(n·m·(d + 1)) arithmetic for m target rows (exact mode: half the n² pairs), memory
    O(n·(d + k)) plus one block. scikit-learn's ``silhouette_samples`` computes the same numbers.
    """
    n = x.shape[0]
    wanted = np.arange(n) if rows is None else np.asarray(rows, dtype=np.intp)
    if n == 0 or wanted.size == 0:
        return np.empty(wanted.size)
    k = int(labels.max()) + 1
    order = np.argsort(labels, kind="stable")
    position = np.empty(n, dtype=np.intp)
    position[order] = np.arange(n)
    sorted_labels = labels[order]
    targets = None if rows is None else position[wanted]
    # Invalid input (NaN, ±inf, one cluster) is reported by the metric's value checks; here it
    # only has to flow through as NaN without warnings.
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        points = x[order]
        points -= x.mean(axis=0)
        sums = _cluster_sums(points, sorted_labels, targets, k, progress=progress, label=label)
        sizes = np.bincount(sorted_labels, minlength=k)
        if targets is None:
            return _coefficients(sums, sorted_labels, sizes)[position]
        return _coefficients(sums, sorted_labels[targets], sizes)


@dataclass(frozen=True)
class GroupSilhouette:
    """Mean silhouette of groups a and b (None when a group has no point)."""

    mean_a: float | None
    mean_b: float | None
    std_error: float | None
    n_sampled: int


def _take(members: Index, priority: npt.NDArray[np.uint64], size: int) -> Index:
    """The ``size`` members with the smallest priority (all of them when there are fewer)."""
    if members.size <= size:
        return members
    return members[np.argpartition(priority[members], size - 1)[:size]]


def group_silhouette(
    x: Float,
    labels: Index,
    groups: npt.NDArray[np.int8],
    *,
    sample: int | None = None,
    priority: npt.NDArray[np.uint64] | None = None,
    progress: bool | None = None,
    label: str = "silhouette",
) -> GroupSilhouette:
    """Mean silhouette of the points of group a (``groups == 1``) and b (``groups == 2``).

    Every s_i is computed against all points (any group). With ``sample``, only ``sample``
    points of each group are evaluated, the ones with the smallest ``priority`` (a random
    number per point), and the standard error of mean_b − mean_a is estimated from the
    sampled values: Σ_g (1 − m_g/N_g)·var_g/m_g (without replacement, ddof 1).
    """
    members = [np.flatnonzero(groups == code) for code in (1, 2)]
    if sample is None:
        s = silhouette_samples(x, labels, progress=progress, label=label)
        values = [s[m] for m in members]
        std_error = None
    else:
        assert priority is not None
        picked = [_take(m, priority, sample) for m in members]
        s = silhouette_samples(x, labels, np.concatenate(picked), progress=progress, label=label)
        values = [s[: picked[0].size], s[picked[0].size :]]
        variance = 0.0
        for value, population in zip(values, members, strict=True):
            if 0 < value.size < population.size:
                variance += (1 - value.size / population.size) * value.var(ddof=1) / value.size
        std_error = float(np.sqrt(variance))
    means = [float(v.mean()) if v.size else None for v in values]
    return GroupSilhouette(means[0], means[1], std_error, sum(v.size for v in values))
