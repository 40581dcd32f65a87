"""The numpy kernels behind the distance-based clustering metrics, against plain references.

The silhouette kernel (blocked, symmetric, threaded, expanded-form distances) must equal the
direct N × N computation of tests/reference; the nearest-centroid kernel must equal explicit
coordinate differences. Plus the sampled mode's estimate and standard error, memory bounds,
progress reporting, and degenerate inputs.
"""

from __future__ import annotations

import math
import tracemalloc
from typing import Any

import numpy as np
import pytest
from conftest import final_bar
from reference import clustering as ref
from sklearn.datasets import make_blobs
from threadpoolctl import threadpool_info

from frameaudit._kernels import _shared, centroid, silhouette


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
        monkeypatch.setattr(_shared, "workers", lambda w=workers: w)
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


def test_blas_runs_single_threaded_inside_the_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel's threads each multiply on one BLAS thread (spinning OpenBLAS threads next to
    them were measured to make a run 10x slower); the limit is lifted afterwards."""
    seen: list[int] = []
    original = silhouette._exact_close_pairs

    def spy(*args: Any) -> None:
        seen.extend(info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas")
        original(*args)

    monkeypatch.setattr(silhouette, "_exact_close_pairs", spy)
    before = [info["num_threads"] for info in threadpool_info()]
    x, labels = _blobs(600)
    silhouette.silhouette_samples(x, labels)
    assert seen
    assert set(seen) == {1}
    assert [info["num_threads"] for info in threadpool_info()] == before


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


def test_progress_bar(capsys: pytest.CaptureFixture[str]) -> None:
    x, labels = _blobs(3_000)
    silent = silhouette.silhouette_samples(x, labels)
    assert capsys.readouterr().err == ""  # short runs are silent by default
    shown = silhouette.silhouette_samples(x, labels, progress=True, label="silhouette_difference")
    last, done, total = final_bar(capsys.readouterr().err)
    assert last.startswith("silhouette_difference: 100%|")
    assert done == total > 1  # every block counted
    assert " blocks/s]" in last
    np.testing.assert_array_equal(shown, silent)


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


def _allocation(sizes: list[int], total: int) -> list[int]:
    """Proportional allocation by largest remainders (ties to the lower stratum), then at least
    two per stratum or all of it, written out step by step."""
    quotas = [total * size / sum(sizes) for size in sizes]
    take = [math.floor(quota) for quota in quotas]
    by_remainder = sorted(range(len(sizes)), key=lambda h: (take[h] - quotas[h], h))
    for h in by_remainder[: total - sum(take)]:
        take[h] += 1
    return [min(size, max(t, 2)) for size, t in zip(sizes, take, strict=True)]


@pytest.mark.parametrize(
    ("sizes", "total", "expected"),
    [
        ([50, 30, 20], 10, [5, 3, 2]),  # exactly proportional
        ([1, 1, 98], 10, [1, 1, 10]),  # the remainder goes to 9.8; small strata taken whole
        ([3, 3, 3], 100, [3, 3, 3]),  # a population of at most `total` is taken whole
        ([0, 10, 10], 5, [0, 3, 2]),  # tied remainders: the lower stratum first
        ([7, 0, 5], 4, [2, 0, 2]),  # at least two: 2.33 and 1.67 round to 2 and 2
        ([40, 30, 30], 3, [2, 2, 2]),  # at least two each: more than `total`
    ],
)
def test_allocation(sizes: list[int], total: int, expected: list[int]) -> None:
    assert _allocation(sizes, total) == expected
    got = silhouette._allocation(np.array(sizes, dtype=np.int64), total)
    assert got.tolist() == expected


def test_allocation_matches_the_written_out_rule() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        sizes = rng.integers(0, 60, size=int(rng.integers(1, 9))).tolist()
        if sum(sizes):
            total = int(rng.integers(1, 120))
            got = silhouette._allocation(np.array(sizes, dtype=np.int64), total)
            assert got.tolist() == _allocation(sizes, total)


def test_group_silhouette_sample() -> None:
    """In each (group, cluster) stratum the allocated points with the smallest priority; the
    stratified mean and its without-replacement standard error on their exact s_i."""
    x, labels = _blobs(3000, k=6, spread=2.5)
    groups = np.random.default_rng(3).integers(0, 3, size=3000).astype(np.int8)
    priority = np.random.default_rng(4).permutation(3000).astype(np.uint64)
    got = silhouette.group_silhouette(x, labels, groups, sample=150, priority=priority)
    s = ref.silhouette_samples(x, labels.tolist())
    estimate, variance, sampled = {}, 0.0, 0
    for code in (1, 2):
        strata = [np.flatnonzero((groups == code) & (labels == c)) for c in range(6)]
        sizes = [stratum.size for stratum in strata]
        estimate[code] = 0.0
        for stratum, m in zip(strata, _allocation(sizes, 150), strict=True):
            chosen = stratum[np.argsort(priority[stratum])[:m]]
            weight = stratum.size / sum(sizes)
            estimate[code] += weight * s[chosen].mean()
            if m < stratum.size:
                variance += weight**2 * (1 - m / stratum.size) * s[chosen].var(ddof=1) / m
            sampled += m
    assert got.mean_a == pytest.approx(estimate[1], abs=1e-12)
    assert got.mean_b == pytest.approx(estimate[2], abs=1e-12)
    assert got.std_error == pytest.approx(np.sqrt(variance), rel=1e-9)
    assert got.n_sampled == sampled


def test_group_silhouette_sample_is_unbiased_with_an_honest_error() -> None:
    """Over many seeds the estimates centre on the exact difference, spread as much as the
    reported standard error says, and cover it; clusters with different silhouette levels
    (the between-cluster spread that stratification removes)."""
    rng = np.random.default_rng(11)
    centres = np.array([[0.0, 0.0], [9.0, 0.0], [0.0, 9.0], [30.0, 30.0]])
    spreads = np.array([0.5, 2.0, 3.5, 1.0])
    labels = rng.integers(0, 4, size=2400).astype(np.intp)
    x = centres[labels] + rng.normal(size=(2400, 2)) * spreads[labels, None]
    groups = rng.integers(0, 3, size=2400).astype(np.int8)
    exact = silhouette.group_silhouette(x, labels, groups)
    truth = exact.mean_b - exact.mean_a  # type: ignore[operator]
    estimates, errors = [], []
    for _ in range(300):
        priority = rng.permutation(2400).astype(np.uint64)
        got = silhouette.group_silhouette(x, labels, groups, sample=60, priority=priority)
        estimates.append(got.mean_b - got.mean_a)  # type: ignore[operator]
        errors.append(got.std_error)
    spread = np.std(estimates, ddof=1)
    assert abs(np.mean(estimates) - truth) < 4 * spread / np.sqrt(300)
    assert 0.8 < np.mean(errors) / spread < 1.25
    covered = np.abs(np.array(estimates) - truth) < 1.96 * np.array(errors)
    assert covered.mean() > 0.9


def _distances(points: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Each point's own nearest-centroid distance: the kernel with one label per point."""
    labels = np.arange(points.shape[0])
    return centroid.nearest_centroid_sums(
        np.ascontiguousarray(points.T), centres, labels, points.shape[0]
    )


@pytest.mark.parametrize(("n", "offset"), [(1, 0.0), (5000, 0.0), (3001, 1e6)])
def test_nearest_centroid_distance(n: int, offset: float) -> None:
    rng = np.random.default_rng(n)
    points = rng.normal(size=(n, 3)) * 5 + offset
    centres = rng.normal(size=(7, 3)) * 5 + offset
    expected = np.sqrt(((points[:, None, :] - centres[None]) ** 2).sum(axis=-1)).min(axis=1)
    np.testing.assert_allclose(_distances(points, centres), expected, rtol=1e-12, atol=1e-9)
    assert (_distances(centres, centres) == 0.0).all()


def test_nearest_centroid_sums_per_label(monkeypatch: pytest.MonkeyPatch) -> None:
    """Per-label sums equal the direct computation, with any number of threads; a NaN
    coordinate spoils its own label's sum only; no points, zero sums."""
    rng = np.random.default_rng(5)
    points = rng.normal(size=(20_000, 4)) * 3
    centres = rng.normal(size=(6, 4)) * 3
    labels = rng.integers(0, 5, size=20_000)
    direct = np.sqrt(((points[:, None, :] - centres[None]) ** 2).sum(axis=-1)).min(axis=1)
    expected = [math.fsum(direct[labels == c]) for c in range(5)]
    columns = np.ascontiguousarray(points.T)
    results = []
    for workers in (1, 3):
        monkeypatch.setattr(_shared, "workers", lambda w=workers: w)
        results.append(centroid.nearest_centroid_sums(columns, centres, labels, 5))
        np.testing.assert_allclose(results[-1], expected, rtol=1e-12)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-14)
    columns[2, 7] = np.nan
    got = centroid.nearest_centroid_sums(columns, centres, labels, 5)
    assert np.isnan(got[labels[7]])
    assert np.isfinite(np.delete(got, labels[7])).all()
    empty = centroid.nearest_centroid_sums(columns[:, :0], centres, labels[:0], 5)
    assert empty.tolist() == [0.0] * 5
