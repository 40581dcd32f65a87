"""Exact Euclidean k-nearest-neighbour retrieval, batched over queries in bounded memory.

A query engine has no good plan for "the k closest training rows of every query", so this is one
of the two numpy kernels on a metric path (see docs/concepts.md). It is exact, deterministic and
never holds an all-pairs matrix:

1. The training rows (columns of the screening matrix) are split into tiles of ``W``
   consecutive columns, and the tiles into ``B`` blocks of consecutive tiles; group ``(b, w)``
   holds column ``w`` of every tile of block ``b`` (rows far from the others aside, see
   below). For a chunk of queries, BLAS products (a stack of tiles per call) give the
   screening scores ``||t||² − 2 q·t`` (float32), and an elementwise minimum over the tiles of
   a block gives every group's minimum. A stack of scores and the minima are sized to stay in
   a core's cache, so the scores never travel to memory.
2. The k smallest minima of "super-groups" (``S`` groups of a block each, interleaved), each
   plus its rounding margin, bound the k-th smallest score from above, so only the few groups
   whose minimum lies below that bound (plus their margin) can hold a neighbour.
3. Every couple of thousand queries, the members of their candidate groups are screened again
   (one stacked product: each group's candidate queries side by side), and the survivors
   re-scored exactly in float64 from coordinate differences and ranked by (distance, training
   row index).

The float32 margin is a rigorous bound on the screening error (input rounding plus the
accumulated rounding of a length-``d+1`` dot product, in any order of summation), so the result
equals a float64 brute-force search: the same neighbours, ties broken by the lower training row
index. The margin of a (query, training row) pair grows with the pair's own centred norms, so
it is never taken from the largest norm of all: each group and super-group carries the largest
norm of its own members, and a re-screened member must be within the margin of its own norm.
The rows beyond 8 times the third quartile of the norms fill the last groups, in order of
norm, so far rows (one at 1e15, or 1% of them between 1e3 and 1e15) share groups with each
other only and widen no ordinary row's margin. With one margin from the largest norm, a
single such row made every row a candidate for every query (measured: 100,000 rows x 8
features, 1,000 queries, one row at 1e5: 60 s and 12 GB instead of about 0.1 s). The centre
is a coordinate-wise median (see ``_distance``), which such rows do not move.

Limits: queries far from the centre next to the spacing of their neighbours (a tight cluster
1e6 away from another one) still get wide margins — their neighbours stay exact, but their
search approaches brute force (memory per re-screened batch grows with it). Coordinates beyond
~1e154 overflow: their squared norms and scores become inf or NaN, NaN scores keep their rows
candidates, and the distances that overflow are inf, as in a direct computation.
"""

from __future__ import annotations

import queue
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from frameaudit._kernels import _distance, _shared
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
_FAR = 8.0  # rows beyond this many times the third quartile of the norms are grouped apart
_F32_SAFE = 1e17  # beyond this magnitude float32 squares could overflow: screen in float64
_UNIT64 = float(np.finfo(np.float64).eps) / 2
_PROGRESS_PAIRS = 5e9  # (query, training row) pairs above which a run takes seconds


def standardize(train: Float, queries: Float) -> tuple[Float, Float]:
    """Scale both arrays by the training population standard deviation of each feature.

    The scale is scikit-learn's ``StandardScaler``'s (used by case-explainer): a feature whose
    variance is indistinguishable from zero in floating point keeps scale 1 instead of being
    divided by (almost) zero. The arrays are not centred: distances do not depend on the
    origin, and subtracting a mean that one far outlier pulls away would round off the small
    coordinates (the search centres robustly itself).
    """
    n = train.shape[0]
    mean = train.mean(axis=0)
    var = train.var(axis=0)
    eps = np.finfo(np.float64).eps
    constant = var <= n * eps * var + (n * mean * eps) ** 2
    scale = np.where(constant, 1.0, np.sqrt(var))
    return train / scale, queries / scale


@dataclass(frozen=True)
class _Index:
    """Training rows prepared for screening: centred, augmented, with the rounding margin."""

    centre: Float
    train: Float  # as given, for exact re-scoring
    column: Index  # (n,) each training row's column in the layout
    row_of: Index  # (columns,) each column's training row, n for padding
    norms: Float  # centred norm of each column of the layout (0 for padding)
    group_norms: Float  # (blocks * width,) the largest norm of each group's members
    super_norms: Float  # (blocks * width / span,) the same per super-group, block-major
    d: int
    tiles: npt.NDArray[Any]  # (tiles, d + 1, width) screening matrix [t; ||t||²], by tile
    members: npt.NDArray[Any]  # (blocks * width, d + 1, per): the columns of each group
    blocks: int
    per: int  # tiles per block
    width: int  # columns per tile
    span: int  # groups per super-group (a divisor of width)
    unit: float  # unit roundoff of the screening dtype

    @classmethod
    def build(cls, train: Float, queries: Float, k: int) -> _Index:
        n, d = train.shape
        # Distances do not change under translation; centring keeps the screening scores
        # small, which keeps the float32 rounding margins small.
        centre = _distance.centre(train)
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
        # Far rows, beyond _FAR times the third quartile of the norms, fill the last groups in
        # order of norm (the members of group (b, w) are column w of the tiles of block b), so
        # a far row widens the margin of a group of far rows only. The other rows fill the
        # remaining columns in their own order, tile by tile, which deals consecutive rows out
        # to different groups: no group is made of the rows near the centre (the neighbours of
        # many queries) or of one run of similar rows, which would be re-screened for most
        # queries. Without far rows the columns are the rows' own positions.
        slots = blocks * per * width
        far = norms > _FAR**2 * np.partition(norms, 3 * (n - 1) // 4)[3 * (n - 1) // 4]
        column = np.arange(n, dtype=np.int64)  # each training row's column in the layout
        if far.any():
            tail = np.flatnonzero(far)
            tail = tail[np.argsort(norms[tail], kind="stable")]
            block, rest = np.divmod(np.arange(slots - tail.size, slots), per * width)
            group, member = np.divmod(rest, per)
            column[tail] = (block * per + member) * width + group
            free = np.ones(slots, bool)
            free[column[tail]] = False
            column[~far] = np.flatnonzero(free)[: n - tail.size]
        row_of = np.full(slots, n, np.int64)  # each column's training row; n: padding
        row_of[column] = np.arange(n)
        # [-2q, 1]·[t, ||t||²] = ||t||² − 2 q·t, the squared distance minus ||q||²; padding
        # columns score the largest finite number (inf would meet BLAS's zero padding).
        augmented = np.zeros((d + 1, slots), screen)
        augmented[d] = np.finfo(screen).max
        augmented[:d, column] = centred.T
        augmented[d, column] = norms
        by_tile = augmented.reshape(d + 1, blocks * per, width).transpose(1, 0, 2)
        by_group = augmented.reshape(d + 1, blocks, per, width).transpose(1, 3, 0, 2)
        tiles = np.ascontiguousarray(by_tile)
        members = np.ascontiguousarray(by_group).reshape(blocks * width, d + 1, per)
        unit = float(np.finfo(screen).eps) / 2
        padded = np.zeros(slots)  # padding columns: norm 0
        padded[column] = norms
        by_group = padded.reshape(blocks, per, width).max(axis=1)  # (blocks, width)
        by_super = by_group.reshape(blocks, span, width // span).max(axis=1)
        return cls(
            centre,
            train,
            column,
            row_of,
            np.sqrt(padded),
            np.sqrt(by_group.ravel()),
            np.sqrt(by_super.ravel()),
            d,
            tiles,
            members,
            blocks,
            per,
            width,
            span,
            unit,
        )

    def chunk_rows(self, budget: int) -> int:
        """Queries screened together: their group minima and scores fit ``budget``."""
        return max(1, budget // (self.scratch_tiles * self.width * self.tiles.dtype.itemsize))

    @property
    def scratch_tiles(self) -> int:
        """Tiles of scores a chunk needs: the minima of every block, a stack, a partial minimum."""
        return self.blocks + _STACK + 1

    def prepare(self, queries: Float) -> tuple[npt.NDArray[Any], Float]:
        """The queries' screening rows ``[−2q, 1]`` and their centred norms."""
        centred = queries - self.centre
        rows, d = queries.shape
        lhs = np.empty((rows, d + 1), self.tiles.dtype)
        lhs[:, :d] = -2.0 * centred
        lhs[:, d] = 1.0
        return lhs, np.sqrt(np.einsum("ij,ij->i", centred, centred))

    def margin(self, q_norm: Float, t_norm: Float) -> Float:
        """Bound on |screening score − exact score| of queries and rows of these centred norms.

        Rounding of q, t and ||t||², then the accumulated rounding of a (d+1)-term dot product
        (γ_{d+1}), with a factor 2 to spare; plus the float64 rounding of the centring, relative
        to the centred values. It grows with either norm, so a larger norm bounds the margin of
        every row up to that norm. (Broadcasts; inf beyond ~1e154.)
        """
        # fmax: a NaN from 0·inf (a norm of 0 next to one beyond ~1e154) is covered by the
        # second term, which is then inf.
        margin: Float = np.fmax(
            2.0 * (self.d + 6) * self.unit * t_norm * (2.0 * q_norm + t_norm), 0
        )
        margin += 4.0 * _UNIT64 * (t_norm + q_norm) ** 2
        return margin

    def screen(
        self,
        lhs: npt.NDArray[Any],
        scratch: npt.NDArray[Any],
        *,
        own: Index | None,
        k: int,
        q_norm: Float,
        limit: Float,
    ) -> tuple[Index, Index]:
        """Screen a chunk of queries: their candidate (row, group) pairs; fills their ``limit``.

        ``scratch`` is (scratch_tiles, rows, width); ``limit`` receives an upper bound on each
        query's k-th smallest exact score.
        """
        rows = lhs.shape[0]
        low = scratch[: self.blocks, :rows]
        stack = scratch[self.blocks : self.blocks + _STACK, :rows]
        partial = scratch[-1, :rows]
        if own is not None:
            own_column = np.where(own >= 0, self.column[own], -1)
            own_tile, own_at = np.divmod(own_column, self.width)  # -1 (none) falls in no tile
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
        # Any k super-group minima are k distinct rows, each of an exact score at most its
        # minimum plus the margin of the super-group's largest norm: the k-th smallest of
        # these sums bounds the k-th smallest exact score (the limit, rounded up). A
        # neighbour's score screened, and so its group's and super-group's minimum, is at most
        # the limit plus the margin of its own norm, and so of the group's largest.
        supers = self.width // self.span  # per block
        top = low.reshape(self.blocks, rows, self.span, supers).min(axis=2)
        top = top.transpose(1, 0, 2).reshape(rows, self.blocks * supers)
        widen = self.margin(q_norm[:, None], self.super_norms)
        limit[:] = np.partition(top + widen, k - 1, axis=1)[:, k - 1]
        np.nextafter(limit, np.inf, out=limit)
        widen += limit[:, None]
        # `not >` rather than `<=` here and below: a NaN score (squares overflowed, beyond
        # ~1e154) leaves its rows candidates, to be measured exactly. (flatnonzero: np.nonzero
        # of a 2-D mask was measured 10x slower)
        candidate = np.flatnonzero(~(top > widen))
        cand_row, cand_super = np.divmod(candidate, self.blocks * supers)
        cand_block, cand_super = np.divmod(cand_super, supers)
        columns = cand_super[:, None] + supers * np.arange(self.span, dtype=np.int64)
        groups = cand_block[:, None] * self.width + columns
        bound = self.margin(q_norm[cand_row, None], self.group_norms[groups])
        bound += limit[cand_row, None]
        inside = ~(low[cand_block[:, None], cand_row[:, None], columns] > bound)
        return np.broadcast_to(cand_row[:, None], groups.shape)[inside], groups[inside]

    def rescore(
        self,
        queries: Float,
        lhs: npt.NDArray[Any],
        q_norm: Float,
        limit: Float,
        candidates: tuple[Index, Index],
        *,
        own: Index | None,
        k: int,
    ) -> tuple[Index, Index, Float]:
        """Nearest ``k`` rows among the candidates: (query rows, their indices, distances).

        The members of the candidate groups are screened again, and the survivors scored
        exactly in float64 from coordinate differences.
        """
        row, column = self._rescreen(lhs, q_norm, limit, *candidates)
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
        self, lhs: npt.NDArray[Any], q_norm: Float, limit: Float, row: Index, group: Index
    ) -> tuple[Index, Index]:
        """The (query row, training row) pairs of the candidate groups that pass the screen.

        A member passes when its score is at most the query's limit plus the margin of the
        member's own norm: first against the margin of its group's largest norm (rounded up to
        the screening dtype, in the product's layout), then the few that pass that, against
        their own. Training row n stands for padding.

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
            present = group[first]
            bound = np.full((first.size, length), -np.inf, lhs.dtype)
            bound[which, slot[now]] = limit[at] + self.margin(
                q_norm[at], self.group_norms[present[which]]
            )
            np.nextafter(bound, np.inf, out=bound)  # rounded up (-inf: -max, still below 0)
            members = (
                self.members if present.size == self.members.shape[0] else self.members[present]
            )
            score = np.matmul(padded, members)
            beyond = np.greater(score, bound[:, :, None])
            passed = np.flatnonzero(np.logical_not(beyond, out=beyond))
            hit, place, member = np.unravel_index(passed, score.shape)
            by_slot = np.zeros((first.size, length), np.int64)
            by_slot[which, slot[now]] = at
            block, offset = np.divmod(present[hit], self.width)
            hit_row = by_slot[hit, place]
            hit_column = (block * self.per + member) * self.width + offset
            own_bound = limit[hit_row] + self.margin(q_norm[hit_row], self.norms[hit_column])
            sieve = ~(score.ravel()[passed] > own_bound)
            rows.append(hit_row[sieve])
            columns.append(self.row_of[hit_column[sieve]])
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
        Show a progress bar (tqdm): True, False, or None for "when the run is long"
        (more than 5·10⁹ query × training row pairs).
    label
        What the progress bar calls the computation.

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
    lhs, q_norm = index.prepare(queries)
    limit = np.empty(m)
    chunk = index.chunk_rows(memory_budget)
    starts = range(0, m, chunk)
    workers = min(len(starts), _shared.workers())
    # Chunks are handed out one at a time, so a worker slowed by other load on its core does
    # not hold up the result; each worker re-scores its candidates every _BATCH queries.
    pending: queue.SimpleQueue[int] = queue.SimpleQueue()
    for start in starts:
        pending.put(start)

    def rescore(found: list[tuple[Index, Index]]) -> None:
        candidates = np.concatenate([r for r, _ in found]), np.concatenate([g for _, g in found])
        rows, found_indices, found_distances = index.rescore(
            queries, lhs, q_norm, limit, candidates, own=own, k=k
        )
        indices[rows], distances[rows] = found_indices, found_distances

    def work(_: int) -> None:
        # np.errstate is per thread. Values beyond ~1e154 overflow the squared norms and
        # margins to inf (every row a candidate); that is expected, not worth a warning.
        with np.errstate(over="ignore", invalid="ignore"):
            search()

    def search() -> None:
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
                q_norm=q_norm[part],
                limit=limit[part],
            )
            found.append((cand_row + start, cand_group))
            if len(found) * chunk >= _BATCH:
                rescore(found)
                found = []
            report.step()
        if found:
            rescore(found)

    enabled = m * n > _PROGRESS_PAIRS if progress is None else progress
    with _shared.Progress(len(starts), label, enabled=enabled, unit="query chunks") as report:
        _shared.in_parallel(work, workers)
    return indices, distances
