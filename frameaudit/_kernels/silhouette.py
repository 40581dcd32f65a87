"""Exact silhouette coefficients in bounded memory (numpy/BLAS).

The silhouette of a point (Rousseeuw 1987) needs its mean distance to every cluster, so all
N² pairwise distances: the one clustering metric that cannot be a column expression. This
kernel computes them exactly (float64) without ever holding more than one block of them:

1. Points are sorted by cluster and centred on a robust centre (a coordinate-wise median, see
   ``_distance``: distances are translation invariant, and small coordinates keep the
   expanded form below accurate), then augmented so that one BLAS product gives a block of
   squared distances: ``[x, 1, ||x||²]·[−2y, ||y||², 1] = ||x − y||²``.
2. The expanded form's rounding error for a pair is at most PAIR_ERROR·(||x||² + ||y||²) (the
   pair's own centred norms), all the digits of a distance that is small next to them (a
   duplicate would sit √ε·||x|| away instead of at 0). So the pairs whose computed square is
   below ``κ·(||x||² + ||y||²)``, κ = 2(d + 3)·_CLOSE, are recomputed from coordinate
   differences of the uncentred points (as exact as a direct computation), and every other
   distance is within about ε/(2·_CLOSE) ≈ 1.1e-12 (relative) of the exact one, whatever the
   other points are: one point at 1e15 makes only its own pairs large. A block is searched
   for such pairs only when its smallest square is below κ times its largest row and column
   norms (one cheap pass for most blocks). When more than 1/_CROWDED of a block's pairs are
   close — its points lie far from the centre next to their spread, e.g. a cluster 1e8 away
   from the others — the block is computed again centred on its rows' own median (one more
   product instead of thousands of exact pairs), and only the pairs still close for their new
   norms are recomputed. The block is then square-rooted and reduced to per-cluster sums by a
   second BLAS product with the one-hot cluster matrix of its columns (points are sorted by
   cluster, so a block meets few clusters: O(B²) per block when its points lie in a bounded
   number of clusters).
3. In exact mode only the blocks on and above the diagonal are computed; each one adds to the
   sums of its rows and, transposed, of its columns.

With a_i the mean distance from i to the other members of its cluster and b_i the smallest mean
distance from i to another cluster, s_i = (b_i − a_i) / max(a_i, b_i). A point alone in its
cluster has s_i = 0, and so does a point with a_i = b_i = 0 (scikit-learn's conventions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from frameaudit._kernels import _distance, _shared

__all__ = ["GroupSilhouette", "group_silhouette", "silhouette_samples"]

Float = npt.NDArray[np.float64]
Index = npt.NDArray[np.intp]

_BLOCK = 256  # rows (and columns) of one block of distances: 512 KiB, it stays in the L2 cache
_CLOSE = 1e-4  # pairs closer than this (relative, see the module docstring) are recomputed
_CROWDED = 16  # a block with more than 1/16 of its pairs close is centred on its own
_SUMS_BUDGET = 256 * 2**20  # bytes of per-point cluster sums allowed for the symmetric pass
_PROGRESS_PAIRS = 5e8  # distances above which a run takes seconds: show a progress bar


def _indicator(labels: Index, start: int, stop: int) -> tuple[Float, Index]:
    """The one-hot (rows × clusters present) matrix of ``labels[start:stop]``, and the clusters.

    A block of distances times it gives each row's per-cluster sums in one BLAS product, several
    times faster than ``np.add.reduceat`` over the cluster runs.
    """
    block = labels[start:stop]
    present = np.unique(block)
    return (block[:, None] == present).astype(np.float64), present


class _Side(NamedTuple):
    """The rows or the columns of a block: points (rows of ``originals``) and centred norms."""

    points: Index
    norms: Float
    largest: float  # the largest of the norms


def _side(points: Index, norms: Float) -> _Side:
    return _Side(points, norms, float(norms.max()))


def _exact_close_pairs(
    block: Float, originals: Float, rows: _Side, columns: _Side, kappa: float
) -> None:
    """Recompute from coordinate differences the pairs of the block that are close for their norms.

    ``block[r, c]`` is the computed ||x − y||² of ``rows.points[r]`` and ``columns.points[c]``;
    it is recomputed from the uncentred ``originals`` when below ``kappa`` times the sum of the
    two centred norms (see the module docstring). Every square left is then at least its limit
    ≥ 0, so no clipping is needed before the square root. NaN squares stay NaN.
    """
    largest = kappa * (rows.largest + columns.largest)
    if block.min() >= largest:
        return  # most blocks: one cheap pass (a NaN min goes on to the search)
    # The pairs below the block's largest limit, then below their own: usually a few (a
    # point and itself); all of them next to a point far away.
    close = np.flatnonzero(block < largest)
    if close.size > block.size // _CROWDED:
        limit = np.add.outer(rows.norms, columns.norms)
        limit *= kappa
        close = np.flatnonzero(block < limit)
    else:
        row, column = np.divmod(close, block.shape[1])
        close = close[block.ravel()[close] < kappa * (rows.norms[row] + columns.norms[column])]
    if close.size > block.size // _CROWDED:
        # Many pairs close for their norms: the block's points lie far from the centre next to
        # their spread (a cluster far from the others). Centred on their own median, most
        # pairs are far apart for their new norms: one more product instead of many exact
        # pairs. (Same error bound, with the new norms.)
        left = originals[rows.points]
        centre = _distance.centre(left)
        left -= centre
        right = originals[columns.points] - centre
        left_norms = np.einsum("ij,ij->i", left, left)
        right_norms = np.einsum("ij,ij->i", right, right)
        np.matmul(left, right.T, out=block)
        block *= -2.0
        block += left_norms[:, None]
        block += right_norms
        limit = np.add.outer(left_norms, right_norms)
        limit *= kappa
        close = np.flatnonzero(block < limit)
    if close.size:
        row, column = np.divmod(close, block.shape[1])
        diff = originals[rows.points[row]] - originals[columns.points[column]]
        block.ravel()[close] = np.einsum("ij,ij->i", diff, diff)


def _cluster_sums(
    points: Float,
    originals: Float,
    order: Index,
    labels: Index,
    *,
    targets: Index | None,
    k: int,
    progress: bool | None,
    label: str,
) -> Float:
    """Σ_{j ∈ c} ||x_i − x_j|| for every target row i and cluster c, as an (m, k) array.

    ``points`` are centred and sorted by ``labels``; ``originals[order]`` are the same rows
    uncentred (for the exact recomputations); ``targets`` are row numbers into ``points``, or
    None for every row (in that sorted order). Row blocks are shared out among threads (numpy
    releases the GIL in every step); in the symmetric pass each thread adds into its own array.
    """
    n, d = points.shape
    norms = np.einsum("ij,ij->i", points, points)
    kappa = 2 * (d + 3) * _CLOSE
    # Stored as (d + 2) rows: a block's columns are then a strided slice, which BLAS multiplies
    # faster (measured 1.6×) than the transpose of a slice of rows.
    right = np.empty((d + 2, n))
    right[:d] = -2.0 * points.T
    right[d] = norms
    right[d + 1] = 1.0

    workers = _shared.workers()
    symmetric = targets is None and workers * n * k * 8 <= _SUMS_BUDGET
    rows_of = np.arange(n) if targets is None else targets
    m = rows_of.size
    columns = [(j0, min(n, j0 + _BLOCK)) for j0 in range(0, n, _BLOCK)]
    indicators = [_indicator(labels, j0, j1) for j0, j1 in columns]
    column_sides = [_side(order[j0:j1], norms[j0:j1]) for j0, j1 in columns]
    row_blocks = len(range(0, m, _BLOCK))
    steps = len(columns) * (len(columns) + 1) // 2 if symmetric else row_blocks * len(columns)
    pairs = m * n / (2 if symmetric else 1)
    shared = np.zeros((m, k))

    def work(worker: int) -> Float:
        # np.errstate is per thread: invalid input flows through as NaN here too.
        with np.errstate(invalid="ignore", over="ignore"):
            return blocks(worker)

    def blocks(worker: int) -> Float:
        sums = np.zeros((m, k)) if symmetric else shared
        buffer = np.empty(_BLOCK * _BLOCK)
        for bi in range(worker, row_blocks, workers):
            i0, i1 = bi * _BLOCK, min(m, (bi + 1) * _BLOCK)
            rows = rows_of[i0:i1]
            lhs = np.empty((rows.size, d + 2))
            lhs[:, :d] = points[rows]
            lhs[:, d] = 1.0
            lhs[:, d + 1] = norms[rows]
            row_side = _side(order[rows], norms[rows])
            for bj in range(bi if symmetric else 0, len(columns)):
                j0, j1 = columns[bj]
                block = buffer[: (i1 - i0) * (j1 - j0)].reshape(i1 - i0, j1 - j0)
                np.matmul(lhs, right[:, j0:j1], out=block)
                _exact_close_pairs(block, originals, row_side, column_sides[bj], kappa)
                np.sqrt(block, out=block)
                one_hot, present = indicators[bj]
                sums[i0:i1, present] += block @ one_hot
                if symmetric and bi != bj:
                    one_hot, present = indicators[bi]
                    sums[j0:j1, present] += block.T @ one_hot
                report.step()
        return sums

    enabled = pairs > _PROGRESS_PAIRS if progress is None else progress
    with _shared.Progress(steps, label, enabled=enabled) as report:
        partial = _shared.in_parallel(work, workers)
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
        Show a progress bar (tqdm): True, False, or None for "when the run is long"
        (more than 5·10⁸ distances).
    label
        What the progress bar calls the computation.

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
        points -= _distance.centre(x)
        sums = _cluster_sums(
            points, x, order, sorted_labels, targets=targets, k=k, progress=progress, label=label
        )
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


def _allocation(sizes: npt.NDArray[np.int64], total: int) -> npt.NDArray[np.int64]:
    """How many points to sample from each stratum, for ``total`` from all of them.

    Proportional to the stratum's size (largest remainders, ties to the lower stratum), and at
    least two (or the whole stratum when smaller): every stratum is represented, so the
    estimate is unbiased, and has a variance. The result may exceed ``total`` by up to two per
    stratum; a population of at most ``total`` points is taken whole.
    """
    population = int(sizes.sum())
    total = min(total, population)
    # integer arithmetic: exact quotas and remainders, no rounding to break ties
    take, remainder = np.divmod(total * sizes, population)
    take[np.argsort(-remainder, kind="stable")[: total - int(take.sum())]] += 1
    allocated: npt.NDArray[np.int64] = np.minimum(sizes, np.maximum(take, 2))
    return allocated


def _stratified_sample(
    members: Index, labels: Index, k: int, priority: npt.NDArray[np.uint64], size: int
) -> tuple[Index, npt.NDArray[np.int64]]:
    """A sample of ``members`` stratified by cluster (labels 0 .. k−1), and the strata sizes N_h.

    In each cluster, the allocated number of members with the smallest priority.
    """
    sizes = np.bincount(labels[members], minlength=k)
    if not members.size:
        return members, sizes
    take = _allocation(sizes, size)
    ordered = members[np.lexsort((priority[members], labels[members]))]
    cluster = labels[ordered]
    rank = np.arange(ordered.size) - (np.cumsum(sizes) - sizes)[cluster]
    return ordered[rank < take[cluster]], sizes


def _stratified_estimate(
    values: Float, labels: Index, sizes: npt.NDArray[np.int64]
) -> tuple[float, float]:
    """The stratified mean Σ_h W_h·ȳ_h and its variance Σ_h W_h²·(1 − m_h/N_h)·s_h²/m_h.

    ``values`` are the sampled s_i, ``labels`` their strata (clusters), ``sizes`` the N_h,
    W_h = N_h/N, m_h the values per stratum (at least one in every non-empty stratum), s_h²
    their variance (ddof 1). A stratum taken whole contributes no variance.
    """
    k = sizes.size
    m = np.bincount(labels, minlength=k)
    sampled = m > 0
    means = np.zeros(k)
    means[sampled] = np.bincount(labels, weights=values, minlength=k)[sampled] / m[sampled]
    squares = np.bincount(labels, weights=(values - means[labels]) ** 2, minlength=k)
    weights = sizes / sizes.sum()
    part = sampled & (m < sizes)  # m_h ≥ 2 there (see _allocation)
    variance = (
        weights[part] ** 2 * (1 - m[part] / sizes[part]) * squares[part] / (m[part] - 1) / m[part]
    )
    return float(weights[sampled] @ means[sampled]), float(variance.sum())


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

    Every s_i is computed against all points (any group). With ``sample``, only about
    ``sample`` points of each group are evaluated: a sample stratified by cluster (see
    :func:`_allocation`), in each cluster the members with the smallest ``priority`` (a random
    number per point). Each group's mean is then the stratified estimate Σ_h W_h·ȳ_h, and the
    standard error of mean_b − mean_a is √(Σ_g Σ_h W_h²·(1 − m_h/N_h)·s_h²/m_h), sampling
    without replacement: the silhouette's differences between clusters add nothing to it.
    """
    members = [np.flatnonzero(groups == code) for code in (1, 2)]
    means: list[float | None] = []
    if sample is None:
        s = silhouette_samples(x, labels, progress=progress, label=label)
        means = [float(s[m].mean()) if m.size else None for m in members]
        return GroupSilhouette(means[0], means[1], None, sum(m.size for m in members))
    assert priority is not None
    k = int(labels.max()) + 1
    drawn = [_stratified_sample(m, labels, k, priority, sample) for m in members]
    rows = np.concatenate([picked for picked, _ in drawn])
    s = silhouette_samples(x, labels, rows, progress=progress, label=label)
    variance = 0.0
    for (picked, sizes), values in zip(drawn, np.split(s, [drawn[0][0].size]), strict=True):
        if picked.size:
            mean, part = _stratified_estimate(values, labels[picked], sizes)
            means.append(mean)
            variance += part
        else:
            means.append(None)
    return GroupSilhouette(means[0], means[1], float(np.sqrt(variance)), rows.size)
