"""Distances from points to their nearest centroid, summed per group (numpy/BLAS).

The social fairness ratio needs, for each point, the Euclidean distance to the closest of k
centroids, and their mean per group. As a query this is a points × centroids join and a
per-point minimum, which costs about as much as holisticai's broadcast (measured: 1 million
points × 10 centroids × 10 features, both near one second). On in-memory engines this kernel
does it in one pass of small BLAS products instead, summing the distances per group as it goes.

With points and centroids centred on the centroids' mean, the squared distance to centroid c is
``||x||² + (||c||² − 2 x·c)``; the bracket, the screening score, comes from one BLAS product for
a block of points and all centroids, and its minimum over c gives the nearest centroid's squared
distance. The expanded form loses up to 2(d + 2)·ε·(||x||² + ||c||²) to rounding, all the
digits of a distance that is small next to the norms, so the few points whose squared distance
is below ``_CLOSE``·2(d + 2)·(||x||² + max ||c||²) are measured again from coordinate
differences to their nearest centroid. Every other distance is then within ε/(2·_CLOSE) ≈ 1e-13
(relative) of the exact one.

The general k-nearest-neighbour kernel (``knn``) is built for many training rows; with a
handful of centroids its candidate bookkeeping costs more than the whole screening here.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from frameaudit._kernels import _shared

__all__ = ["nearest_centroid_sums"]

Float = npt.NDArray[np.float64]
Index = npt.NDArray[np.intp]

_CLOSE = 1e-3  # squared distances this small (relative, see above) are measured exactly
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
        centre = centroids.mean(axis=0)[:, None]
        shifted = (centroids - centre.T).T  # (d, m)
        norms = np.einsum("ij,ij->j", shifted, shifted)
        # One product gives the scores: [−2c, ||c||²]·[x, 1] = ||c||² − 2x·c.
        weights = np.column_stack((-2.0 * shifted.T, norms))
    threshold = _CLOSE * (2 * d + 4)
    floor = threshold * norms.max()

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
                own *= threshold
                own += floor  # now the limit below which the expanded form is not trusted
                # `not >=` also catches NaN: non-finite input takes the exact path as well.
                close = np.flatnonzero(~(out >= own))
                if close.size:
                    nearest = scores[:, close].argmin(axis=0)
                    diff = block[:d, close] - shifted[:, nearest]
                    out[close] = np.einsum("ij,ij->j", diff, diff)
                np.sqrt(out, out=out)
                sums += np.bincount(labels[start:stop], weights=out, minlength=k)
        return sums

    partial = _shared.in_parallel(work, workers)
    total: Float = np.sum(partial, axis=0)
    return total
