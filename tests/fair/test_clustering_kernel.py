"""The numpy kernels behind the distance-based clustering metrics, against plain references.

The silhouette kernel (blocked, symmetric, threaded, expanded-form distances) must equal the
direct N × N computation of tests/reference; the nearest-centroid kernel must equal explicit
coordinate differences. Plus the sampled mode's estimate and standard error, memory bounds,
progress reporting, and degenerate inputs.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from reference import clustering as ref
from sklearn.datasets import make_blobs

from frameaudit._kernels import centroid, silhouette


def _blobs(
    n: int, *, d: int = 4, k: int = 5, spread: float = 1.5, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    x, labels = make_blobs(
        n_samples=n, n_features=d, centers=k, cluster_std=spread, random_state=seed
    )
    return x, labels.astype(np.intp)


@pytest.mark.parametrize("offset", [0.0, 1e4])
def test_silhouette_equals_direct_reference(offset: float) -> None:
    x, labels = _blobs(700)
    x = x + offset
    expected = ref.silhouette_samples(x, labels.tolist())
    np.testing.assert_allclose(
        silhouette.silhouette_samples(x, labels), expected, rtol=0, atol=1e-12
    )


def test_paths_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """Symmetric and row-by-row passes, any thread count, any subset of rows: same numbers."""
    x, labels = _blobs(900, k=7)
    exact = silhouette.silhouette_samples(x, labels)
    rows = np.array([899, 0, 450, 3, 3, 17])
    np.testing.assert_allclose(
        silhouette.silhouette_samples(x, labels, rows), exact[rows], atol=1e-13
    )
    for workers in (1, 3):
        monkeypatch.setattr(silhouette, "_workers", lambda w=workers: w)
        np.testing.assert_allclose(silhouette.silhouette_samples(x, labels), exact, atol=1e-13)
    monkeypatch.setattr(silhouette, "_SUMS_BUDGET", 0)  # too many clusters for the symmetric pass
    np.testing.assert_allclose(silhouette.silhouette_samples(x, labels), exact, atol=1e-13)


def test_conventions() -> None:
    """A singleton cluster has s = 0; duplicates are at distance exactly 0; labels need not be
    sorted; one cluster gives NaN (undefined) without a warning."""
    x = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [5.0, 5.0], [5.0, 5.1], [9.0, 9.0]])
    labels = np.array([2, 2, 0, 1, 1, 2])
    got = silhouette.silhouette_samples(x, labels)
    np.testing.assert_allclose(got, ref.silhouette_samples(x, labels.tolist()), atol=1e-15)
    assert got[2] == 0.0
    one = silhouette.silhouette_samples(x, np.zeros(6, dtype=np.intp))
    assert np.isnan(one).all()
    nan = x.copy()
    nan[0, 0] = np.nan
    assert np.isnan(silhouette.silhouette_samples(nan, labels)).any()
    assert silhouette.silhouette_samples(x[:0], labels[:0]).shape == (0,)


@pytest.mark.parametrize("d", [1, 2, 10, 50, 500])
def test_block_size_keeps_blas_single_threaded(d: int) -> None:
    size = silhouette._block_size(d)
    assert 32 <= size <= 256
    assert size == 32 or size * size * (d + 2) <= silhouette.BLAS_SERIAL


def test_memory_is_bounded() -> None:
    """4,000 points: an N × N float64 matrix would take 128 MB; the kernel stays far below."""
    x, labels = _blobs(4000, d=3)
    tracemalloc.start()
    try:
        silhouette.silhouette_samples(x, labels, progress=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20


def test_progress_line(capsys: pytest.CaptureFixture[str]) -> None:
    x, labels = _blobs(600)
    silhouette.silhouette_samples(x, labels)
    assert capsys.readouterr().err == ""  # short runs are silent by default
    silhouette.silhouette_samples(x, labels, progress=True, label="silhouette_difference")
    err = capsys.readouterr().err
    assert err.startswith("\rsilhouette_difference: ")
    assert "100% (" in err
    assert err.endswith(" s left)\n")


def test_group_silhouette_exact_and_whole_sample() -> None:
    x, labels = _blobs(500)
    groups = np.random.default_rng(1).integers(0, 3, size=500).astype(np.int8)
    s = ref.silhouette_samples(x, labels.tolist())
    exact = silhouette.group_silhouette(x, labels, groups)
    assert exact.mean_a == pytest.approx(s[groups == 1].mean(), abs=1e-12)
    assert exact.mean_b == pytest.approx(s[groups == 2].mean(), abs=1e-12)
    assert exact.std_error is None
    assert exact.n_sampled == int((groups > 0).sum())
    priority = np.random.default_rng(2).integers(0, 2**63, size=500).astype(np.uint64)
    whole = silhouette.group_silhouette(x, labels, groups, sample=1000, priority=priority)
    assert whole.mean_a == pytest.approx(exact.mean_a, abs=1e-12)
    assert whole.std_error == 0.0


def test_group_silhouette_sample() -> None:
    """The sampled points are the m of each group with the smallest priority; the standard
    error is the stratified without-replacement formula on their exact s_i."""
    x, labels = _blobs(3000, k=6, spread=2.5)
    groups = np.random.default_rng(3).integers(0, 3, size=3000).astype(np.int8)
    priority = np.random.default_rng(4).permutation(3000).astype(np.uint64)
    got = silhouette.group_silhouette(x, labels, groups, sample=150, priority=priority)
    s = silhouette.silhouette_samples(x, labels)
    estimate, variance = {}, 0.0
    for code in (1, 2):
        members = np.flatnonzero(groups == code)
        chosen = members[np.argsort(priority[members])[:150]]
        estimate[code] = s[chosen].mean()
        variance += (1 - 150 / members.size) * s[chosen].var(ddof=1) / 150
    assert got.mean_a == pytest.approx(estimate[1], abs=1e-12)
    assert got.mean_b == pytest.approx(estimate[2], abs=1e-12)
    assert got.std_error == pytest.approx(np.sqrt(variance), rel=1e-12)
    assert got.n_sampled == 300
    truth = s[groups == 2].mean() - s[groups == 1].mean()
    assert abs((got.mean_b - got.mean_a) - truth) < 4 * got.std_error  # type: ignore[operator]


@pytest.mark.parametrize(("n", "offset"), [(1, 0.0), (5000, 0.0), (3001, 1e6)])
def test_nearest_centroid_distance(n: int, offset: float) -> None:
    rng = np.random.default_rng(n)
    points = rng.normal(size=(n, 3)) * 5 + offset
    centres = rng.normal(size=(7, 3)) * 5 + offset
    expected = np.sqrt(((points[:, None, :] - centres[None]) ** 2).sum(axis=-1)).min(axis=1)
    got = centroid.nearest_centroid_distance(np.ascontiguousarray(points.T), centres)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-9)
    on_centre = centroid.nearest_centroid_distance(np.ascontiguousarray(centres.T), centres)
    assert (on_centre == 0.0).all()
