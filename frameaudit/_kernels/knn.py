"""Exact Euclidean k-nearest-neighbour retrieval, batched over queries in bounded memory.

A query engine has no good plan for "the k closest training rows of every query", so this is one
of the two numpy kernels on a metric path (see docs/concepts.md). It is exact, deterministic and
never holds an all-pairs matrix:

1. The training rows (columns of the screening matrix) are split into tiles of ``W``
   consecutive columns, and the tiles into ``B`` blocks of consecutive tiles; group ``(b, w)``
   holds column ``w`` of every tile of block ``b``. For a chunk of queries, BLAS products (a
   stack of tiles per call) give the screening scores ``||t||² − 2 q·t`` (float32), and an
   elementwise minimum over the tiles of a block gives every group's minimum. A stack of
   scores and the minima are sized to stay in a core's cache, so the scores never travel to
   memory.
2. The k smallest minima of "super-groups" (``S`` groups of a block each, the same interleaving
   one level up) bound the k-th smallest score from above, so only the few groups whose minimum
   lies below that bound (plus a rounding margin) can hold a neighbour.
3. Every couple of thousand queries, the members of their candidate groups are screened again
   (one stacked product: each group's candidate queries side by side), and the survivors
   re-scored exactly in float64 from coordinate differences and ranked by (distance, training
   row index).

The float32 margin is a rigorous bound on the screening error (input rounding plus the
accumulated rounding of a length-``d+1`` dot product, in any order of summation), so the result
equals a float64 brute-force search: the same neighbours, ties broken by the lower training row
index.
"""

from __future__ import annotations

import queue
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from frameaudit._kernels import _shared
from frameaudit.exceptions import InvalidValueError

__all__ = ["nearest", "standardize"]

Float = npt.NDArray[np.float64]
Index = npt.NDArray[np.int64]

# Tiles of _TILE columns, screened _STACK at a time (one stacked product, then a minimum across
# them) for chunks of about 200 queries (the budget). Measured (2 cores, 20 features, 100,000
# training rows), the products and minima cost 0.67 ns per (query, training row) pair with
# 192 x 192 scores per tile, against 0.84 with 256 x 776 and 0.93 with 64 x 3,032 (a larger
# tile spills the cache between the product and the minimum); stacking keeps the calls few,
# so that the workers seldom wait for each other's GIL.
_TILE = 192
_STACK = 8
_MEMBERS = 128  # tiles per block = members per group: re-screening costs k·_MEMBERS per query
_BUDGET = 2**21  # bytes per worker: a chunk's group minima (4 blocks at 100,000 rows), a stack
# Queries whose candidates a worker re-screens together.
_BATCH = 2048
_SPAN = 8  # groups per super-group: the k-th smallest is selected among 1/_SPAN of the minima
_F32_SAFE = 1e17  # beyond this magnitude float32 squares could overflow: screen in float64
_UNIT64 = float(np.finfo(np.float64).eps) / 2
_PROGRESS_PAIRS = 5e9  # (query, training row) pairs above which a run takes seconds


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
    tiles: npt.NDArray[Any]  # (tiles, d + 1, width) screening matrix [t; ||t||²], by tile
    members: npt.NDArray[Any]  # (blocks * width, d + 1, per): the columns of each group
    blocks: int
    per: int  # tiles per block
    width: int  # columns per tile
    span: int  # groups per super-group (a divisor of width)
    t_max: float
    unit: float  # unit roundoff of the screening dtype

    @classmethod
    def build(cls, train: Float, queries: Float, k: int) -> _Index:
        n, d = train.shape
        # Distances do not change under translation; centring keeps the screening scores
        # small, which keeps the float32 rounding margin small.
        centre = train.mean(axis=0)
        centred = train - centre
        ends = [train.min(axis=0), train.max(axis=0), queries.min(axis=0), queries.max(axis=0)]
        big = float(np.abs(np.stack(ends) - centre).max())  # the largest centred coordinate
        screen: type[np.floating[Any]] = np.float32 if big < _F32_SAFE else np.float64
        tiles = -(-n // _TILE)
        width = -(-n // tiles)
        # Blocks of about _MEMBERS tiles, but at least 4k groups when there are that many
        # columns, so that the k smallest group minima bound the k-th score tightly.
        blocks = min(tiles, max(round(tiles / _MEMBERS), -(-4 * k // width)))
        per = -(-tiles // blocks)
        # At least 4k super-groups too, when there are that many groups.
        span = max(1, min(_SPAN, blocks * width // (4 * k)))
        width = -(-width // span) * span
        norms = np.einsum("ij,ij->i", centred, centred)
        # [-2q, 1]·[t, ||t||²] = ||t||² − 2 q·t, the squared distance minus ||q||²; padding
        # columns score the largest finite number (inf would meet BLAS's zero padding).
        augmented = np.zeros((d + 1, blocks * per * width), screen)
        augmented[:d, :n] = centred.T
        augmented[d, :n] = norms
        augmented[d, n:] = np.finfo(screen).max
        by_tile = augmented.reshape(d + 1, blocks * per, width).transpose(1, 0, 2)
        by_group = augmented.reshape(d + 1, blocks, per, width).transpose(1, 3, 0, 2)
        tiles = np.ascontiguousarray(by_tile)
        members = np.ascontiguousarray(by_group).reshape(blocks * width, d + 1, per)
        unit = float(np.finfo(screen).eps) / 2
        t_max = float(np.sqrt(norms.max()))
        return cls(centre, train, tiles, members, blocks, per, width, span, t_max, unit)

    def chunk_rows(self, budget: int) -> int:
        """Queries screened together: their group minima and scores fit ``budget``."""
        return max(1, budget // (self.scratch_tiles * self.width * self.tiles.dtype.itemsize))

    @property
    def scratch_tiles(self) -> int:
        """Tiles of scores a chunk needs: the minima of every block, a stack, a partial minimum."""
        return self.blocks + _STACK + 1

    def prepare(self, queries: Float) -> tuple[npt.NDArray[Any], Float]:
        """The queries' screening rows ``[−2q, 1]`` and the bound on their screening error."""
        centred = queries - self.centre
        rows, d = queries.shape
        lhs = np.empty((rows, d + 1), self.tiles.dtype)
        lhs[:, :d] = -2.0 * centred
        lhs[:, d] = 1.0
        # Bound on |screening score − exact score|: rounding of q, t and ||t||², then the
        # accumulated rounding of a (d+1)-term dot product (γ_{d+1}), with a factor 2 to spare;
        # plus the float64 rounding of the centring, relative to the centred values.
        q_norm = np.sqrt(np.einsum("ij,ij->i", centred, centred))
        margin = 2.0 * (d + 6) * self.unit * (2.0 * self.t_max * q_norm + self.t_max**2)
        margin += 4.0 * _UNIT64 * (self.t_max + q_norm) ** 2
        return lhs, margin

    def screen(
        self,
        lhs: npt.NDArray[Any],
        scratch: npt.NDArray[Any],
        *,
        own: Index | None,
        k: int,
        margin: Float,
        limit: npt.NDArray[Any],
    ) -> tuple[Index, Index]:
        """Screen a chunk of queries: their candidate (row, group) pairs; fills their ``limit``.

        ``scratch`` is (scratch_tiles, rows, width).
        """
        rows = lhs.shape[0]
        low = scratch[: self.blocks, :rows]
        stack = scratch[self.blocks : self.blocks + _STACK, :rows]
        partial = scratch[-1, :rows]
        if own is not None:
            own_tile, own_at = np.divmod(own, self.width)  # -1 (no own row) falls in no tile
        for block in range(self.blocks):
            for start in range(block * self.per, (block + 1) * self.per, _STACK):
                stop = min((block + 1) * self.per, start + _STACK)
                scores = stack[: stop - start]
                np.matmul(lhs, self.tiles[start:stop], out=scores)
                if own is not None:
                    hit = np.flatnonzero((own_tile >= start) & (own_tile < stop))
                    scores[own_tile[hit] - start, hit, own_at[hit]] = np.inf
                if start == block * self.per:
                    np.min(scores, axis=0, out=low[block])
                else:
                    np.min(scores, axis=0, out=partial)
                    np.minimum(low[block], partial, out=low[block])
        # Any k super-group minima are k distinct rows, so the k-th smallest bounds the k-th
        # smallest score; a neighbour's group (and super-group) minimum, and its own score
        # screened again, lie within 2 margins of it. The limit is rounded up to the
        # screening dtype.
        supers = self.width // self.span  # per block
        top = low.reshape(self.blocks, rows, self.span, supers).min(axis=2)
        top = top.transpose(1, 0, 2).reshape(rows, self.blocks * supers)
        limit[:] = np.partition(top, k - 1, axis=1)[:, k - 1] + 2.0 * margin
        np.nextafter(limit, np.inf, out=limit)
        # (flatnonzero: np.nonzero of a 2-D mask was measured 10x slower)
        candidate = np.flatnonzero(top <= limit[:, None])
        cand_row, cand_super = np.divmod(candidate, self.blocks * supers)
        cand_block, cand_super = np.divmod(cand_super, supers)
        columns = cand_super[:, None] + supers * np.arange(self.span, dtype=np.int64)
        inside = low[cand_block[:, None], cand_row[:, None], columns] <= limit[cand_row, None]
        groups = cand_block[:, None] * self.width + columns
        return np.broadcast_to(cand_row[:, None], groups.shape)[inside], groups[inside]

    def rescore(
        self,
        queries: Float,
        lhs: npt.NDArray[Any],
        limit: npt.NDArray[Any],
        candidates: tuple[Index, Index],
        *,
        own: Index | None,
        k: int,
    ) -> tuple[Index, Index, Float]:
        """Nearest ``k`` rows among the candidates: (query rows, their indices, distances).

        The members of the candidate groups are screened again, and the survivors scored
        exactly in float64 from coordinate differences.
        """
        row, column = self._rescreen(lhs, limit, *candidates)
        keep = column < self.train.shape[0]  # not padding
        if own is not None:
            keep &= column != own[row]
        row, column = row[keep], column[keep]
        diff = queries[row] - self.train[column]
        squared = np.einsum("ij,ij->i", diff, diff)
        order = np.lexsort((column, squared, row))
        row, column, squared = row[order], column[order], squared[order]
        # every query keeps at least its k nearest
        first = np.flatnonzero(np.diff(row, prepend=-1))
        rank = np.arange(row.size) - np.repeat(first, np.diff(first, append=row.size))
        take = rank < k
        return row[first], column[take].reshape(-1, k), np.sqrt(squared[take]).reshape(-1, k)

    def _rescreen(
        self, lhs: npt.NDArray[Any], limit: npt.NDArray[Any], row: Index, group: Index
    ) -> tuple[Index, Index]:
        """The (query row, training row) pairs of the candidate groups that pass the screen.

        Each group's candidates are laid side by side, padded to a common length, so that one
        stacked product screens them all: a loop over groups would hold the GIL between small
        steps, stalling the other workers. Padding rows score 0 against a limit of -inf. A
        group with more than twice the average number of candidates keeps the rest for another
        round, so the padding never more than doubles the work.
        """
        # a radix sort: the groups fit 16 bits at the default sizes
        order = np.argsort(group.astype(np.min_scalar_type(self.members.shape[0])), kind="stable")
        row, group = row[order], group[order]
        rows, columns = [], []
        while row.size:
            first = np.flatnonzero(np.diff(group, prepend=-1))
            count = np.diff(first, append=group.size)
            slot = np.arange(group.size) - np.repeat(first, count)
            length = min(int(count.max()), 2 * -(-group.size // first.size))
            now = slot < length
            which, at = np.repeat(np.arange(first.size), count)[now], row[now]
            padded = np.zeros((first.size, length, lhs.shape[1]), lhs.dtype)
            padded[which, slot[now]] = lhs[at]
            bound = np.full((first.size, length), -np.inf, limit.dtype)
            bound[which, slot[now]] = limit[at]
            present = group[first]
            members = (
                self.members if present.size == self.members.shape[0] else self.members[present]
            )
            score = np.matmul(padded, members)
            hit, place, member = np.unravel_index(
                np.flatnonzero(score <= bound[:, :, None]), score.shape
            )
            by_slot = np.zeros((first.size, length), np.int64)
            by_slot[which, slot[now]] = at
            block, offset = np.divmod(present[hit], self.width)
            rows.append(by_slot[hit, place])
            columns.append((block * self.per + member) * self.width + offset)
            row, group = row[~now], group[~now]
        return np.concatenate(rows), np.concatenate(columns)


def nearest(
    train: Float,
    queries: Float,
    k: int,
    *,
    exclude: Index | None = None,
    memory_budget: int = _BUDGET,
    progress: bool | None = None,
    label: str = "nearest neighbours",
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
    progress
        Show a progress line on stderr: True, False, or None for "when the run is long"
        (more than 5·10⁹ query × training row pairs).
    label
        What the progress line calls the computation.

    Returns
    -------
    ``(indices, distances)``, both ``(m, k)``: training row indices (int64) and distances
    (float64), nearest first, ties broken by the lower training row index.

    Notes
    -----
    O(m·n·d) arithmetic in BLAS, memory O(workers · (memory_budget + b·k·g) + (n + m)·d)
    for the b queries re-screened together and g members per group (about 20 MiB per worker
    at k = 10), with one worker thread per usable core.

    """
    n = train.shape[0]
    m = queries.shape[0]
    own = exclude if exclude is not None and bool((exclude >= 0).any()) else None
    available = n if own is None else n - 1
    if not 1 <= k <= available:
        what = "the training set" if own is None else "the training set without a query's own row"
        msg = f"k={k}: expected 1 <= k <= {available} ({what} has {available} row(s))"
        raise InvalidValueError(msg)
    indices = np.empty((m, k), np.int64)
    distances = np.empty((m, k), np.float64)
    if m == 0:
        return indices, distances
    # Row-major, so that the exact re-scoring gathers each row from one place.
    train, queries = np.ascontiguousarray(train), np.ascontiguousarray(queries)
    index = _Index.build(train, queries, k)
    lhs, margin = index.prepare(queries)
    limit = np.empty(m, index.tiles.dtype)
    chunk = index.chunk_rows(memory_budget)
    starts = range(0, m, chunk)
    workers = min(len(starts), _shared.workers())
    enabled = m * n > _PROGRESS_PAIRS if progress is None else progress
    report = _shared.Progress(len(starts), label, enabled=enabled, unit="query chunks")
    # Chunks are handed out one at a time, so a worker slowed by other load on its core does
    # not hold up the result; each worker re-scores its candidates every _BATCH queries.
    pending: queue.SimpleQueue[int] = queue.SimpleQueue()
    for start in starts:
        pending.put(start)

    def rescore(found: list[tuple[Index, Index]]) -> None:
        candidates = np.concatenate([r for r, _ in found]), np.concatenate([g for _, g in found])
        rows, found_indices, found_distances = index.rescore(
            queries, lhs, limit, candidates, own=own, k=k
        )
        indices[rows], distances[rows] = found_indices, found_distances

    def work(_: int) -> None:
        # A reused buffer: a fresh one per chunk would page-fault on every write.
        scratch = np.empty((index.scratch_tiles, chunk, index.width), index.tiles.dtype)
        found: list[tuple[Index, Index]] = []
        while True:
            try:
                start = pending.get_nowait()
            except queue.Empty:
                break
            part = slice(start, start + chunk)
            cand_row, cand_group = index.screen(
                lhs[part],
                scratch,
                own=None if own is None else own[part],
                k=k,
                margin=margin[part],
                limit=limit[part],
            )
            found.append((cand_row + start, cand_group))
            if len(found) * chunk >= _BATCH:
                rescore(found)
                found = []
            report.step()
        if found:
            rescore(found)

    _shared.in_parallel(work, workers)
    return indices, distances
