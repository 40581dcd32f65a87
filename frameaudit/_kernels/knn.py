"""Exact Euclidean k-nearest-neighbour retrieval, batched over queries in bounded memory.

A query engine has no good plan for "the k closest training rows of every query", so this is one
of the two numpy kernels on a metric path (see DESIGN.md). It is exact, deterministic and never
holds an all-pairs matrix:

1. The training rows (columns of the screening matrix) are split into ``T`` tiles of ``W``
   consecutive columns; group ``w`` holds column ``w`` of every tile (``w, w + W, w + 2W,
   ...``). For a chunk of queries, one small BLAS product per tile gives the screening scores
   ``||t||² − 2 q·t`` (float32) of that tile, and a running elementwise minimum over the tiles
   gives every group's minimum. A tile and the minima are sized to stay in a core's cache, so
   the scores never travel to memory.
2. The k smallest minima of "super-groups" (``S`` groups each, the same interleaving one level
   up) bound the k-th smallest score from above, so only the few groups whose minimum lies below
   that bound (plus a rounding margin) can hold a neighbour. Their members are re-screened, and
   the survivors re-scored exactly in float64 from coordinate differences and ranked by
   (distance, training row index).

The float32 margin is a rigorous bound on the screening error (input rounding plus the
accumulated rounding of a length-``d+1`` dot product, in any order of summation), so the result
equals a float64 brute-force search: the same neighbours, ties broken by the lower training row
index.
"""

from __future__ import annotations

import math
import os
import queue
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

# Tiles are sized for chunks of _ROWS queries within the budget. Measured (2 cores, 20
# features, 100,000 training rows): ~64 queries x ~3,000 columns keep a tile and the group
# minima in a core's cache; larger ones spill and run up to 1.5x slower.
_ROWS = 64
_BUDGET = 3 * 2**19
# Members re-screened per query (k groups of T) against group minima selected among (n / T):
# a member was measured to cost about 32 times a minimum, so T ~ sqrt(n / 32k) balances them.
_RESCREEN = 32
_SPAN = 8  # groups per super-group: the k-th smallest is selected among 1/_SPAN of the minima
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
    augmented: npt.NDArray[Any]  # (d + 1, tiles * width) screening matrix [t; ||t||²]
    members: npt.NDArray[Any]  # (width, d + 1, tiles): the columns of each group, together
    tiles: int
    width: int  # columns per tile = number of groups
    span: int  # groups per super-group (a divisor of width)
    t_max: float
    unit: float  # unit roundoff of the screening dtype

    @classmethod
    def build(cls, train: Float, queries: Float, k: int, budget: int) -> _Index:
        n, d = train.shape
        # Distances do not change under translation; centring keeps the screening scores
        # small, which keeps the float32 rounding margin small.
        centre = train.mean(axis=0)
        centred = train - centre
        big = max(np.abs(centred).max(initial=0.0), np.abs(queries - centre).max(initial=0.0))
        screen: type[np.floating[Any]] = np.float32 if big < _F32_SAFE else np.float64
        # Tiles narrow enough for _ROWS queries within the budget, more if that balances the
        # selection against re-screening; but at least 4k groups (tile columns), so that the
        # k smallest group minima bound the k-th score tightly.
        cached = round(n * 2 * _ROWS * np.dtype(screen).itemsize / budget)
        wanted = max(cached, round(math.sqrt(n / (_RESCREEN * k))))
        tiles = max(1, min(n // (4 * k), wanted))
        width = -(-n // tiles)
        # At least 4k super-groups too; a single tile narrower than that keeps its n >= k
        # groups as they are (span 1).
        span = max(1, min(_SPAN, width // (4 * k)))
        width = -(-width // span) * span
        norms = np.einsum("ij,ij->i", centred, centred)
        # [-2q, 1]·[t, ||t||²] = ||t||² − 2 q·t, the squared distance minus ||q||²; padding
        # columns score the largest finite number (inf would meet BLAS's zero padding).
        augmented = np.zeros((d + 1, tiles * width), screen)
        augmented[:d, :n] = centred.T
        augmented[d, :n] = norms
        augmented[d, n:] = np.finfo(screen).max
        members = np.ascontiguousarray(augmented.reshape(d + 1, tiles, width).transpose(2, 0, 1))
        unit = float(np.finfo(screen).eps) / 2
        t_max = float(np.sqrt(norms.max()))
        return cls(centre, train, augmented, members, tiles, width, span, t_max, unit)

    def chunk_rows(self, budget: int) -> int:
        """Queries per chunk: a chunk's group minima and one tile of scores fit ``budget``."""
        return max(1, budget // (2 * self.width * self.augmented.dtype.itemsize))

    def search(
        self, block: Float, own: Index | None, k: int, scratch: npt.NDArray[Any]
    ) -> tuple[Index, Float]:
        """Nearest ``k`` rows for the query rows of ``block``; ``scratch`` is (2, rows, width)."""
        centred = block - self.centre
        rows, d = block.shape
        lhs = np.empty((rows, d + 1), self.augmented.dtype)
        lhs[:, :d] = -2.0 * centred
        lhs[:, d] = 1.0
        low, tile = scratch[0, :rows], scratch[1, :rows]
        if own is not None:
            own_tile, own_at = np.divmod(own, self.width)  # -1 (no own row) falls in no tile
        for t in range(self.tiles):
            score = low if t == 0 else tile
            np.matmul(lhs, self.augmented[:, t * self.width : (t + 1) * self.width], out=score)
            if own is not None:
                hit = np.flatnonzero(own_tile == t)
                score[hit, own_at[hit]] = np.inf
            if t:
                np.minimum(low, tile, out=low)
        # Bound on |screening score − exact score|: rounding of q, t and ||t||², then the
        # accumulated rounding of a (d+1)-term dot product (γ_{d+1}), with a factor 2 to spare;
        # plus the float64 rounding of the centring, relative to the centred values.
        q_norm = np.sqrt(np.einsum("ij,ij->i", centred, centred))
        margin = 2.0 * (d + 6) * self.unit * (2.0 * self.t_max * q_norm + self.t_max**2)
        margin += 4.0 * _UNIT64 * (self.t_max + q_norm) ** 2
        # Any k super-group minima are k distinct rows, so the k-th smallest bounds the k-th
        # smallest score; a neighbour's group (and super-group) minimum, and its own score
        # screened again below, lie within 2 margins of it.
        supers = self.width // self.span
        top = low.reshape(rows, self.span, supers).min(axis=1)
        limit = np.partition(top, k - 1, axis=1)[:, k - 1] + 2.0 * margin
        # (flatnonzero: np.nonzero of a 2-D mask was measured 10x slower)
        cand_row, cand_super = np.divmod(np.flatnonzero(top <= limit[:, None]), supers)
        groups = cand_super[:, None] + supers * np.arange(self.span, dtype=np.int64)
        inside = low[cand_row[:, None], groups] <= limit[cand_row, None]
        cand_row = np.broadcast_to(cand_row[:, None], groups.shape)[inside]
        cand_group = groups[inside]
        offsets = self.width * np.arange(self.tiles, dtype=np.int64)
        # The candidate groups' members are screened again, and the survivors re-scored in
        # float64, in slices of bounded memory.
        found = []
        step = max(1, scratch.nbytes // self.members[0].nbytes)
        for start in range(0, cand_row.size, step):
            rows_at, groups_at = cand_row[start : start + step], cand_group[start : start + step]
            # (1 x (d+1)) @ ((d+1) x tiles) per group: measured the fastest batched form
            score = np.matmul(lhs[rows_at, None, :], self.members[groups_at])[:, 0, :]
            columns = groups_at[:, None] + offsets
            if own is not None:
                score[columns == own[rows_at, None]] = np.inf
            keep = (score <= limit[rows_at, None]) & (columns < self.train.shape[0])
            row = np.broadcast_to(rows_at[:, None], columns.shape)[keep]
            column = columns[keep]
            diff = block[row] - self.train[column]
            found.append((row, column, np.einsum("ij,ij->i", diff, diff)))
        row, column, squared = (np.concatenate(parts) for parts in zip(*found, strict=True))
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
    memory_budget: int = _BUDGET,
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
        Bytes of screening scores per worker thread (a chunk's group minima and one tile of
        scores); the default keeps them in a core's cache.

    Returns
    -------
    ``(indices, distances)``, both ``(m, k)``: training row indices (int64) and distances
    (float64), nearest first, ties broken by the lower training row index.

    Notes
    -----
    O(m·n·d) arithmetic in BLAS, memory O(workers · memory_budget + (n + m)·d), with one
    worker thread per usable core.

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
    index = _Index.build(train, queries, k, memory_budget)
    chunk = min(m, index.chunk_rows(memory_budget))
    starts = range(0, m, chunk)
    workers = min(len(starts), len(os.sched_getaffinity(0)))
    # Chunks are handed out one at a time, so a worker slowed by other load on its core does
    # not hold up the result.
    pending: queue.SimpleQueue[int] = queue.SimpleQueue()
    for start in starts:
        pending.put(start)

    def work(_: int) -> None:
        # A reused buffer: a fresh one per chunk would page-fault on every write.
        scratch = np.empty((2, chunk, index.width), index.augmented.dtype)
        while True:
            try:
                start = pending.get_nowait()
            except queue.Empty:
                return
            stop = min(m, start + chunk)
            own = exclude[start:stop] if excluding and exclude is not None else None
            found = index.search(queries[start:stop], own, k, scratch)
            indices[start:stop], distances[start:stop] = found

    # One BLAS thread per worker: OpenBLAS's own threads spin while they wait, which was
    # measured to halve the speed (more next to other busy processes); numpy releases the GIL
    # in every step, so the workers run in parallel.
    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(workers) as pool:
        list(pool.map(work, range(workers)))
    return indices, distances
