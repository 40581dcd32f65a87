"""What the distance kernels share: where to centre the points, and what rounding costs there.

The kernels get squared distances from one BLAS product per block, through the expanded form
``||x||² + ||y||² − 2x·y`` of coordinates centred on a point ``o``. Its rounding error is
proportional to the norms of the pair it measures, not to the distance:

    |computed − ||x − y||²|  ≤  PAIR_ERROR(d) · (||x − o||² + ||y − o||²)

with ``||x − y||²`` the exact squared distance of the *uncentred* points. The bound adds up the
rounding of the centring (x − o, y − o: at most 4u·(a² + b²) on the squared distance, a and b
the two centred norms), of the two squared norms (γ_d each) and of a length-(d + 2) dot product
(at most 2γ_{d+2}·(a² + b²)), u = ε/2 the unit roundoff, γ_n = n·u/(1 − n·u): (3d + 8)·u in all,
rounded up to 2(d + 3)·ε. Any order of summation (any BLAS) obeys it.

So a distance is as accurate as its pair is small next to the pair's *own* norms, whatever the
other points are: a kernel recomputes from coordinate differences only the pairs whose computed
square is below ``κ·(a² + b²)``, and every other distance then has a relative error of at most
about PAIR_ERROR/(2κ). One point far away only makes its own pairs large, never the error of
the pairs of ordinary points — provided the centre stays among the ordinary points: a mean
would move towards a distant outlier (one point at 1e15 among a thousand near 0 puts it at
1e12, and every ordinary pair would need recomputing), so the centre is a coordinate-wise
median (:func:`centre`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["centre", "pair_error"]

Float = npt.NDArray[np.float64]

_EPS = float(np.finfo(np.float64).eps)
_SAMPLE = 4096  # rows the median is taken from: any point among the ordinary ones will do


def pair_error(d: int) -> float:
    """PAIR_ERROR(d): the bound on the rounding of a squared distance, per unit of a² + b²."""
    return 2.0 * (d + 3) * _EPS


def centre(rows: Float) -> Float:
    """A robust centre of the ``(n, d)`` rows: each coordinate's lower median.

    Taken over at most 4,096 rows evenly spaced through the array (deterministic, O(d) per
    row taken). Unlike the mean it stays among the bulk of the points when a few lie far away,
    and each coordinate is one a row has (with two far-apart halves it is in one of them, not
    halfway between). NaN coordinates sort last and only matter when they are the majority.
    Zeros for no rows.
    """
    n = rows.shape[0]
    if n == 0:
        return np.zeros(rows.shape[1])
    sample = rows[:: max(1, n // _SAMPLE)]
    middle = (sample.shape[0] - 1) // 2
    lower: Float = np.partition(sample, middle, axis=0)[middle]
    return lower
