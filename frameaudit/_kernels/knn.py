"""Exact Euclidean k-nearest-neighbour retrieval, batched over queries in bounded memory.

A query engine has no good plan for "the k closest training rows of every query", so this is one
of the two numpy kernels on a metric path (see DESIGN.md). It is exact, deterministic and never
holds an all-pairs matrix:

1. Queries are processed in chunks sized so that one chunk's block of screening scores
   ``||t||² − 2 q·t`` (one BLAS matrix product, float32) stays within ``memory_budget`` bytes.
2. The columns of the block are split into ``G`` interleaved groups; the k smallest group minima
   bound the k-th smallest score from above, so only the few groups whose minimum lies below
   that bound (plus a rounding margin) can hold a neighbour. Selecting among group minima costs
   ``1/G`` of a full partition.
3. The surviving candidates are re-scored exactly in float64 from coordinate differences and
   ranked by (distance, training row index).

The float32 margin is a rigorous bound on the screening error (input rounding plus the
accumulated rounding of a length-``d+1`` dot product), so the result equals a float64 brute-force
search: the same neighbours, ties broken by the lower training row index.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

from frameaudit.exceptions import InvalidValueError

__all__ = ["nearest", "standardize"]

Float = npt.NDArray[np.float64]
Index = npt.NDArray[np.int64]

_GROUPS = 32
_F32_SAFE = 1e17  # beyond this magnitude float32 squares could overflow: screen in float64
_UNIT64 = float(np.finfo(np.float64).eps) / 2


def standardize(train: Float, queries: Float) -> tuple[Float, Float]:
    """Scale both arrays with the training mean and population standard deviation.

    Matches scikit-learn's ``StandardScaler`` (used by case-explainer): a feature whose variance
    is indistinguishable from zero in floating point keeps scale 1 instead of being divided by
    (almost) zero.
    """
    n = train.shape[0]
    mean = train.mean(axis=0)
    var = train.var(axis=0)
    eps = np.finfo(np.float64).eps
    constant = var <= n * eps * var + (n * mean * eps) ** 2
    scale = np.where(constant, 1.0, np.sqrt(var))
    return (train - mean) / scale, (queries - mean) / scale


@dataclass(frozen=True)
class _Index:
    """Training rows prepared for screening: centred, augmented, with the rounding margin."""

    centre: Float
    train: Float  # as given, for exact re-scoring
    augmented: npt.NDArray[Any]  # (d + 1, groups * width) screening matrix [t; ||t||²]
    groups: int
    width: int
    t_max: float
    unit: float  # unit roundoff of the screening dtype

    @classmethod
    def build(cls, train: Float, queries: Float, k: int) -> _Index:
        n, d = train.shape
        # Distances do not change under translation; centring keeps the screening scores
        # small, which keeps the float32 rounding margin small.
        centre = train.mean(axis=0)
        centred = train - centre
        big = max(np.abs(centred).max(initial=0.0), np.abs(queries - centre).max(initial=0.0))
        screen: type[np.floating[Any]] = np.float32 if big < _F32_SAFE else np.float64
        groups = max(1, min(_GROUPS, n // (4 * k)))
        width = -(-n // groups)
        norms = np.einsum("ij,ij->i", centred, centred)
        # [-2q, 1]·[t, ||t||²] = ||t||² − 2 q·t, the squared distance minus ||q||²; padding
        # columns score +inf.
        augmented = np.zeros((d + 1, groups * width), screen)
        augmented[:d, :n] = centred.T
        augmented[d, :n] = norms
        augmented[d, n:] = np.inf
        unit = float(np.finfo(screen).eps) / 2
        return cls(centre, train, augmented, groups, width, float(np.sqrt(norms.max())), unit)

    def search(
        self, block: Float, own: Index | None, k: int, scores: npt.NDArray[Any]
    ) -> tuple[Index, Float]:
        """Nearest ``k`` rows for the query rows of ``block``; ``scores`` is scratch space."""
        centred = block - self.centre
        rows, d = block.shape
        lhs = np.empty((rows, d + 1), self.augmented.dtype)
        lhs[:, :d] = -2.0 * centred
        lhs[:, d] = 1.0
        score = np.matmul(lhs, self.augmented, out=scores[:rows])
        if own is not None:
            hit = np.flatnonzero(own >= 0)
            score[hit, own[hit]] = np.inf
        # Bound on |screening score − exact score|: rounding of q, t and ||t||², then the
        # accumulated rounding of a (d+1)-term dot product (γ_{d+1}), with a factor 2 to spare;
        # plus the float64 rounding of the centring, relative to the centred values.
        q_norm = np.sqrt(np.einsum("ij,ij->i", centred, centred))
        margin = 2.0 * (d + 6) * self.unit * (2.0 * self.t_max * q_norm + self.t_max**2)
        margin += 4.0 * _UNIT64 * (self.t_max + q_norm) ** 2
        # Any k group minima are k distinct rows, so the k-th smallest group minimum bounds
        # the k-th smallest score; a neighbour's group minimum lies within 2 margins of it.
        low = score.reshape(rows, self.groups, self.width).min(axis=1)
        limit = np.partition(low, k - 1, axis=1)[:, k - 1] + 2.0 * margin
        cand_row, cand_group = np.nonzero(low <= limit[:, None])
        columns = cand_group[:, None] + self.width * np.arange(self.groups, dtype=np.int64)
        keep = score[cand_row[:, None], columns] <= limit[cand_row, None]
        row = np.broadcast_to(cand_row[:, None], columns.shape)[keep]
        column = columns[keep]
        diff = block[row] - self.train[column]
        squared = np.einsum("ij,ij->i", diff, diff)
        order = np.lexsort((column, squared, row))
        row, column, squared = row[order], column[order], squared[order]
        rank = np.arange(row.size) - np.searchsorted(row, np.arange(rows))[row]
        take = rank < k
        return column[take].reshape(rows, k), np.sqrt(squared[take]).reshape(rows, k)


def nearest(
    train: Float,
    queries: Float,
    k: int,
    *,
    exclude: Index | None = None,
    memory_budget: int = 64 * 2**20,
) -> tuple[Index, Float]:
    """Find the ``k`` nearest training rows of every query row (Euclidean).

    Parameters
    ----------
    train
        ``(n, d)`` float64 array of training rows, finite.
    queries
        ``(m, d)`` float64 array of query rows, finite.
    k
        Number of neighbours, ``1 <= k <= n`` (``n - 1`` when a query's own row is excluded).
    exclude
        Optional ``(m,)`` int64 array: the training row to leave out for each query (its own
        row), or -1 for none.
    memory_budget
        Bytes for one chunk's block of screening scores (one block per worker thread).

    Returns
    -------
    ``(indices, distances)``, both ``(m, k)``: training row indices (int64) and distances
    (float64), nearest first, ties broken by the lower training row index.

    Notes
    -----
    O(m·n·d) arithmetic in BLAS, O(m·n) memory traffic for the screening, memory
    O(workers · memory_budget + (n + m)·d), with one worker thread per usable core.

    """
    n = train.shape[0]
    m = queries.shape[0]
    excluding = exclude is not None and bool((exclude >= 0).any())
    available = n - 1 if excluding else n
    if not 1 <= k <= available:
        what = "the training set without a query's own row" if excluding else "the training set"
        msg = f"k={k}: expected 1 <= k <= {available} ({what} has {available} row(s))"
        raise InvalidValueError(msg)
    indices = np.empty((m, k), np.int64)
    distances = np.empty((m, k), np.float64)
    if m == 0:
        return indices, distances
    index = _Index.build(train, queries, k)
    per_row = index.augmented.shape[1] * index.augmented.dtype.itemsize
    chunk = max(1, min(m, memory_budget // per_row))
    starts = range(0, m, chunk)
    workers = min(len(starts), len(os.sched_getaffinity(0)))

    def work(worker: int) -> None:
        # A reused buffer: a fresh block per chunk would page-fault on every write.
        scores = np.empty((chunk, index.augmented.shape[1]), index.augmented.dtype)
        for start in starts[worker::workers]:
            stop = min(m, start + chunk)
            own = exclude[start:stop] if excluding and exclude is not None else None
            found = index.search(queries[start:stop], own, k, scores)
            indices[start:stop], distances[start:stop] = found

    # One BLAS thread per worker: OpenBLAS's own threads spin while they wait, which was
    # measured to halve the speed (more next to other busy processes); numpy releases the GIL
    # in every step, so the workers run in parallel.
    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(workers) as pool:
        list(pool.map(work, range(workers)))
    return indices, distances
