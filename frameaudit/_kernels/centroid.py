"""Distances from points to their nearest centroid, summed per group (numpy/BLAS).

The social fairness ratio needs, for each point, the Euclidean distance to the closest of k
centroids, and their mean per group. As a query this is a points × centroids join and a
per-point minimum, which costs about as much as holisticai's broadcast (measured: 1 million
points × 10 centroids × 10 features, both near one second). On in-memory engines this kernel
does it in one pass of small BLAS products instead, summing the distances per group as it goes.

Points and centroids are centred on a robust centre o (a coordinate-wise median of the points,
see ``_distance``), and the squared distance to centroid c is ``||x||² + (||c||² − 2 x·c)``; the
bracket, the screening score, comes from one BLAS product for a block of points and all
centroids, and its minimum over c gives the nearest centroid's squared distance. The expanded
form's rounding error for the pair (x, c) is at most PAIR_ERROR·(||x||² + ||c||²), in centred
norms — the pair's own, so a far-away point or centroid spoils only its own distances. The
nearest centroid c of x satisfies ||c|| ≤ ||x|| + D(x), so its error is at most
PAIR_ERROR·(3||x||² + 2D²): a point whose computed D² is at least ``6(d + 3)·_CLOSE·||x||²``
has D within about ε/(2·_CLOSE) ≈ 1.1e-12 (relative) of the exact distance of the uncentred
coordinates, even when rounding picked another centroid whose screened score was as small.
Every other point (close to a centroid next to its distance from o, or with non-finite
scores) is measured again from coordinate differences of the uncentred coordinates, against
each centroid whose score could, within its own error bound, be the smallest: such distances
are as exact as a direct computation. NaN coordinates give NaN, distances beyond ~1e154
overflow to inf, as in a direct computation.

The general k-nearest-neighbour kernel (``knn``) is built for many training rows; with a
handful of centroids its candidate bookkeeping costs more than the whole screening here.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from frameaudit._kernels import _distance, _shared

__all__ = ["nearest_centroid_sums"]

Float = npt.NDArray[np.float64]
Index = npt.NDArray[np.intp]

_CLOSE = 1e-4  # squared distances this small (relative, see above) are measured exactly
_CHUNK_VALUES = 2**17  # coordinates and scores of one chunk of points: 1 MiB, cache-resident


def nearest_centroid_sums(points: Float, centroids: Float, labels: Index, k: int) -> Float:
    """Per label, the sum of the distances from its points to their nearest centroid.

    Parameters
    ----------
    points
        ``(d, n)`` float64 array: one column per point (the layout of a frame's feature
        columns).
    centroids
        ``(m, d)`` float64 array, m ≥ 1.
    labels
        ``(n,)`` label of each point, in 0 .. k−1 (e.g. its group).
    k
        Number of labels.

    Returns
    -------
    ``(k,)`` float64 sums. A point equidistant (to rounding) from two centroids may be measured
    to either; the two distances agree to rounding. Non-finite input gives NaN or inf (the
    coordinate differences decide, as in a direct computation).

    Notes
    -----
    O(n·m·d) arithmetic in BLAS, O(n·d) elsewhere, in one thread per usable core; memory
    O((m + d)·chunk) per thread. The distances are summed chunk by chunk while they are in the
    cache (no array of n distances).
    """
    d, n = points.shape
    m = centroids.shape[0]
    chunk = int(np.clip(_CHUNK_VALUES // (m + d), 256, 8192))
    starts = range(0, n, chunk)
    workers = max(1, min(len(starts), _shared.workers()))
    # Coordinates beyond ~1e154 overflow to inf distances (and NaN scores); the caller turns
    # that undefined result into null (and reports non-finite input), so warnings are noise.
    with np.errstate(over="ignore", invalid="ignore"):
        centre = _distance.centre(points.T)[:, None]
        shifted = (centroids - centre.T).T  # (d, m)
        norms = np.einsum("ij,ij->j", shifted, shifted)
        # One product gives the scores: [−2c, ||c||²]·[x, 1] = ||c||² − 2x·c.
        weights = np.column_stack((-2.0 * shifted.T, norms))
    threshold = 6 * (d + 3) * _CLOSE
    error = _distance.pair_error(d)

    def remeasure(out: Float, scores: Float, own: Float, close: Index, start: int) -> None:
        """Measure ``out[close]`` again, from coordinate differences.

        Against every centroid that may be the nearest: those whose score, less its error
        bound, is below the smallest score plus its own (NaN scores make every centroid one).
        """
        estimate = scores[:, close] + own[close]
        bound = np.add.outer(norms, own[close])
        bound *= error
        upper = (estimate + bound).min(axis=0)
        estimate -= bound
        candidate = np.flatnonzero(~(estimate > upper))
        which, point = np.divmod(candidate, close.size)
        diff = points[:, start + close[point]].T - centroids[which]
        exact = np.full(estimate.shape, np.inf)
        exact.ravel()[candidate] = np.einsum("ij,ij->i", diff, diff)
        out[close] = exact.min(axis=0)

    def work(worker: int) -> Float:
        sums = np.zeros(k)
        block_buffer = np.ones((d + 1, chunk))  # the last row stays 1
        score_buffer = np.empty((m, chunk))
        distance_buffer = np.empty(chunk)
        with np.errstate(over="ignore", invalid="ignore"):  # per thread
            for start in starts[worker::workers]:
                stop = min(n, start + chunk)
                block = block_buffer[:, : stop - start]
                np.subtract(points[:, start:stop], centre, out=block[:d])
                scores = score_buffer[:, : stop - start]
                np.matmul(weights, block, out=scores)
                own = np.einsum("ij,ij->j", block[:d], block[:d])
                out = distance_buffer[: stop - start]
                np.min(scores, axis=0, out=out)
                out += own
                # `not >=` also catches NaN: non-finite input takes the exact path as well.
                close = np.flatnonzero(~(out >= threshold * own))
                if close.size:
                    remeasure(out, scores, own, close, start)
                np.sqrt(out, out=out)
                sums += np.bincount(labels[start:stop], weights=out, minlength=k)
        return sums

    partial = _shared.in_parallel(work, workers)
    total: Float = np.sum(partial, axis=0)
    return total
