"""The numpy kernels' distances are accurate for their own size, next to points far away.

The kernels get squared distances from BLAS through ||x||² + ||y||² − 2x·y, whose rounding
error grows with the norms involved. With one point at 1e5 .. 1e15 among points near 0, an
error bound (or a centre) taken from all the points once spoiled the small distances of the
ordinary points: the social fairness ratio was 1.77e-9 for an exact 1.006e-9, silhouettes
drifted past 1e-7, and a nearest-neighbour search re-scored every training row for every
query. Every expected value here comes from explicit coordinate differences in float64
(``tests/reference``), never from frameaudit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest
from reference import clustering as ref
from sklearn.metrics import silhouette_samples

import frameaudit as fa
from frameaudit._kernels import centroid, knn, silhouette

SCALES = [1e5, 1e10, 1e12, 1e15]
FEATURES = ["x0", "x1", "x2"]


def _clusters(scale: float, *, n: int = 600, k: int = 4, seed: int = 0) -> tuple[Any, Any]:
    """Points in k blobs near the origin, two of them moved far away (in clusters 0 and 1).

    The far points drag their clusters' means away too.
    """
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=4.0, size=(k, 3))
    labels = rng.integers(0, k, size=n)
    x = centres[labels] + rng.normal(size=(n, 3))
    x[0], labels[0] = scale * np.array([0.6, -0.64, 0.48]), 0
    x[1], labels[1] = scale / 3 * np.array([-0.8, 0.0, 0.6]), 1
    return x, labels


def _frame(x: Any, labels: Any, seed: int = 0) -> pl.DataFrame:
    """The points as a frame: cluster, group (the far points in b) and the features."""
    groups = np.random.default_rng(seed).choice(["a", "b", "c"], size=len(x))
    groups[:2] = "b"
    return pl.DataFrame(
        {
            "cluster": [f"c{c}" for c in labels],
            "group": groups.tolist(),
            **{name: x[:, j] for j, name in enumerate(FEATURES)},
        }
    )


def _exact_silhouettes(x: Any, labels: Any) -> Any:
    return silhouette_samples(ref.exact_distances(x, x), labels, metric="precomputed")


@pytest.mark.parametrize("scale", SCALES)
def test_nearest_centroid_distances(scale: float) -> None:
    x, labels = _clusters(scale)
    centres = np.array([x[labels == c].mean(axis=0) for c in range(4)])
    expected = ref.exact_distances(x, centres).min(axis=1)
    n = len(x)  # one label per point: the sums are the distances
    got = centroid.nearest_centroid_sums(np.ascontiguousarray(x.T), centres, np.arange(n), n)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)


@pytest.mark.parametrize("scale", SCALES)
def test_social_fairness_ratio(scale: float) -> None:
    x, labels = _clusters(scale)
    frame = _frame(x, labels)
    got = fa.fair.social_fairness_ratio(frame, a="a", b="b", features=FEATURES).item()
    (expected,) = ref.social_fairness_ratio(frame, "a", "b")
    assert got == pytest.approx(expected, rel=1e-12, abs=0)


@pytest.mark.parametrize("scale", SCALES)
def test_silhouette_samples(scale: float) -> None:
    x, labels = _clusters(scale)
    got = silhouette.silhouette_samples(x, labels.astype(np.intp))
    np.testing.assert_allclose(got, _exact_silhouettes(x, labels), rtol=0, atol=1e-12)


@pytest.mark.parametrize("scale", SCALES)
def test_silhouette_difference(scale: float) -> None:
    x, labels = _clusters(scale)
    frame = _frame(x, labels)
    got = fa.fair.silhouette_difference(frame, a="a", b="b", features=FEATURES).row(0)
    s = _exact_silhouettes(x, labels)
    groups = frame["group"].to_numpy()
    mean_a, mean_b = s[groups == "a"].mean(), s[groups == "b"].mean()
    np.testing.assert_allclose(got, [mean_b - mean_a, mean_a, mean_b], rtol=0, atol=1e-12)


def test_silhouette_of_far_apart_clusters() -> None:
    """Half the clusters 1e8 away: their points are far from any one centre, next to their own
    spread, and their blocks are measured again around a centre of their own."""
    x, labels = _clusters(0.0, n=900)
    x[labels >= 2] += 1e8
    got = silhouette.silhouette_samples(x, labels.astype(np.intp))
    np.testing.assert_allclose(got, _exact_silhouettes(x, labels), rtol=0, atol=1e-12)


def _cases(scale: float, seed: int = 0) -> tuple[Any, Any]:
    """Training rows near 0, a cloud of six around a far point and one more far row; queries
    near 0 and near the far cloud."""
    rng = np.random.default_rng(seed)
    far = scale * np.array([0.5, -0.5, 0.5, 0.5])
    train = np.vstack(
        [
            rng.normal(size=(500, 4)) * 3,
            far + rng.normal(size=(6, 4)),
            -far[::-1] / 7,
        ]
    )
    queries = np.vstack([rng.normal(size=(60, 4)) * 3, far + rng.normal(size=(3, 4))])
    return train, queries


def _brute_force(train: Any, queries: Any, k: int) -> tuple[Any, Any]:
    """The k nearest by exact distance; the data must not tie at the k-th (checked)."""
    distances = ref.exact_distances(queries, train)
    order = np.argsort(distances, axis=1, kind="stable")
    ranked = np.take_along_axis(distances, order, axis=1)
    assert (ranked[:, k - 1] < ranked[:, k] * (1 - 1e-9)).all(), "ambiguous data: a tie at k"
    return order[:, :k], ranked[:, :k]


@pytest.mark.parametrize("scale", SCALES)
def test_knn(scale: float) -> None:
    train, queries = _cases(scale)
    indices, distances = knn.nearest(train, queries, 4)
    expected_indices, expected_distances = _brute_force(train, queries, 4)
    np.testing.assert_array_equal(indices, expected_indices)
    np.testing.assert_allclose(distances, expected_distances, rtol=1e-12, atol=0)


@pytest.mark.parametrize("scale", SCALES)
def test_nearest_cases(scale: float) -> None:
    train, queries = _cases(scale)
    names = ["f0", "f1", "f2", "f3"]
    train_frame = pl.DataFrame(train, schema=names).with_columns(label=pl.lit(1))
    query_frame = pl.DataFrame(queries, schema=names)
    cases = fa.explain.nearest_cases(
        train_frame, query_frame, features=names, k=4, standardize=False
    )
    expected_indices, expected_distances = _brute_force(train, queries, 4)
    assert cases["case"].to_list() == expected_indices.ravel().tolist()
    np.testing.assert_allclose(
        cases["distance"].to_numpy(), expected_distances.ravel(), rtol=1e-12, atol=0
    )


@pytest.mark.parametrize("scale", SCALES)
def test_nearest_cases_standardized(scale: float) -> None:
    """Standardised distances: the features divided by the training population SD (numpy,
    two-pass), then exact distances; a mean pulled far away by the outliers must not round
    off the small coordinates."""
    train, queries = _cases(scale)
    names = ["f0", "f1", "f2", "f3"]
    train_frame = pl.DataFrame(train, schema=names).with_columns(label=pl.lit(1))
    cases = fa.explain.nearest_cases(
        train_frame, pl.DataFrame(queries, schema=names), features=names, k=4
    )
    sd = np.sqrt(((train - train.mean(axis=0)) ** 2).mean(axis=0))
    expected_indices, expected_distances = _brute_force(train / sd, queries / sd, 4)
    assert cases["case"].to_list() == expected_indices.ravel().tolist()
    np.testing.assert_allclose(
        cases["distance"].to_numpy(), expected_distances.ravel(), rtol=1e-12, atol=0
    )


@pytest.mark.parametrize("far", [*SCALES, "many"])
def test_knn_far_rows_do_not_make_every_row_a_candidate(
    far: float | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A far training row (or 1% of them, at 1e3 .. 1e15) must not widen the screening bound
    of the ordinary rows: only a few rows per query are re-scored exactly, as without it.
    (A bound from the largest norm re-scored all 20,000 for every query.)"""
    rng = np.random.default_rng(4)
    train = rng.normal(size=(20_000, 4)) * 3
    queries = rng.normal(size=(200, 4)) * 3
    if far == "many":
        rows = rng.choice(len(train), 200, replace=False)
        train[rows] *= 10.0 ** rng.uniform(3, 15, size=(200, 1))
    else:
        train[123] = far
    rescored: list[int] = []
    original = knn._Index._rescreen

    def spy(*args: Any) -> Any:
        found = original(*args)
        rescored.append(found[0].size)
        return found

    monkeypatch.setattr(knn._Index, "_rescreen", spy)
    indices, distances = knn.nearest(train, queries, 5)
    assert sum(rescored) <= 10 * 5 * len(queries)
    expected_indices, expected_distances = _brute_force(train, queries, 5)
    np.testing.assert_array_equal(indices, expected_indices)
    np.testing.assert_allclose(distances, expected_distances, rtol=1e-12, atol=0)


def test_knn_with_squares_that_overflow() -> None:
    """A row beyond ~1e154: its squared distances overflow to inf, as in a direct computation;
    the other queries' neighbours and the row's own (itself, at 0) are still found."""
    train, _ = _cases(1.0)
    train[7] = [1e200, -1e200, 0.0, 3.0]
    queries = train[[7, 8, 9]]
    indices, distances = knn.nearest(train, queries, 3)
    with np.errstate(over="ignore"):
        expected = ref.exact_distances(queries, train)
    order = np.argsort(expected, axis=1, kind="stable")[:, :3]
    np.testing.assert_array_equal(indices, order)
    np.testing.assert_allclose(distances, np.take_along_axis(expected, order, axis=1), rtol=1e-12)
    assert distances[0].tolist() == [0.0, np.inf, np.inf]
