"""Differential tests: holisticai 1.0.14 and scikit-learn against frameaudit (docs/clustering.md).

Equal: total variation, KL, social fairness ratio, minimum cluster ratio (up to holisticai's
1e-32 term) and the per-group mean silhouettes. Documented differences: holisticai's silhouette
difference is −½ × frameaudit's; its cluster balance is min(ρ, 1/ρ) (frameaudit follows the seed's
definition, checked against tests/reference). The silhouette kernel must match scikit-learn's
``silhouette_samples`` point by point.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
from holisticai.bias import metrics as hai
from reference import clustering as ref
from sklearn.datasets import make_blobs
from sklearn.metrics import silhouette_samples

import frameaudit as fa

# (seed, points, clusters, features, groups): every cluster holds members of a and b.
CASES = [
    (1, 300, 3, 2, ("a", "b")),
    (2, 500, 6, 4, ("a", "b", "c")),
    (3, 800, 10, 5, ("x", "a", "b")),
]


def _frame(seed: int, n: int, k: int, d: int, groups: tuple[str, ...]) -> pl.DataFrame:
    frame = ref.random_clustering(seed, n=n, k=k, d=d, groups=groups, spread=2.0)
    per_cluster = frame.group_by("cluster").agg(
        (pl.col("group") == "a").sum().alias("na"), (pl.col("group") == "b").sum().alias("nb")
    )
    assert per_cluster.filter((pl.col("na") == 0) | (pl.col("nb") == 0)).height == 0
    return frame


@pytest.fixture(params=CASES, ids=[f"seed{c[0]}" for c in CASES])
def frame(request: pytest.FixtureRequest) -> pl.DataFrame:
    return _frame(*request.param)


@pytest.mark.parametrize(
    ("metric", "reference"),
    [
        ("min_cluster_ratio", hai.min_cluster_ratio),
        ("cluster_distribution_tv", hai.cluster_dist_l1),
        ("cluster_distribution_kl", hai.cluster_dist_kl),
    ],
)
def test_label_metrics_equal_holisticai(
    frame: pl.DataFrame, metric: str, reference: object
) -> None:
    inputs = ref.holisticai_inputs(frame, "a", "b")
    expected = reference(inputs["group_a"], inputs["group_b"], inputs["y_pred"])  # type: ignore[operator]
    got = getattr(fa.fair, metric)(frame, a="a", b="b").item()
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_cluster_balance_follows_spec(frame: pl.DataFrame) -> None:
    """frameaudit: min over g, c of ρ; holisticai: min over g, c of min(ρ, 1/ρ) (ε = 1e-20)."""
    got = fa.fair.cluster_balance(frame, a="a", b="b").item()
    assert got == pytest.approx(ref.label_metric("cluster_balance", frame, "a", "b")[0], rel=1e-12)
    detail = fa.fair.cluster_balance(frame, a="a", b="b", per_cluster=True)
    rho = np.concatenate([detail["rho_a"].to_numpy(), detail["rho_b"].to_numpy()])
    folded = np.minimum(rho, 1 / rho).min()
    inputs = ref.holisticai_inputs(frame, "a", "b")
    theirs = hai.cluster_balance(inputs["group_a"], inputs["group_b"], inputs["y_pred"])
    assert theirs == pytest.approx(min(folded, 1.0), rel=1e-12)
    assert got == pytest.approx(rho.min(), rel=1e-15)


def test_empty_cluster_of_b() -> None:
    """N_{b,c} = 0 < N_{a,c}: the cluster's ratio is +inf here, N_{a,c}·1e32 in holisticai
    (which only shows when it is the minimum: here the other cluster's 0.5 is); KL is +inf in
    both."""
    frame = pl.DataFrame({"group": ["a", "a", "b", "a", "b"], "cluster": [0, 0, 1, 1, 1]})
    inputs = ref.holisticai_inputs(frame, "a", "b")
    theirs = hai.min_cluster_ratio(inputs["group_a"], inputs["group_b"], inputs["y_pred"])
    assert fa.fair.min_cluster_ratio(frame, a="a", b="b").item() == theirs == 0.5
    detail = fa.fair.min_cluster_ratio(frame, a="a", b="b", per_cluster=True)
    assert detail["min_cluster_ratio"].to_list() == [math.inf, 0.5]
    only_a = hai.min_cluster_ratio(
        inputs["group_a"][:2], inputs["group_b"][:2], inputs["y_pred"][:2]
    )
    assert only_a == pytest.approx(2e32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # holisticai divides by zero
        kl = hai.cluster_dist_kl(inputs["group_a"], inputs["group_b"], inputs["y_pred"])
    assert kl == math.inf
    assert fa.fair.cluster_distribution_kl(frame, a="a", b="b").item() == math.inf


@pytest.mark.parametrize("given", [True, False])
def test_social_fairness_ratio_equals_holisticai(frame: pl.DataFrame, given: bool) -> None:
    names = ref.features(frame)
    means = frame.group_by("cluster").agg(pl.col(names).mean()).sort("cluster")
    centroids = means.with_columns(pl.col(names) + 0.25) if given else means
    got = fa.fair.social_fairness_ratio(
        frame, a="a", b="b", features=names, centroids=centroids if given else None
    ).item()
    inputs = ref.holisticai_inputs(frame, "a", "b")
    expected = hai.social_fairness_ratio(
        inputs["group_a"], inputs["group_b"], inputs["data"], centroids.select(names).to_numpy()
    )
    assert got == pytest.approx(expected, rel=1e-12)


def test_silhouette_equals_holisticai(frame: pl.DataFrame) -> None:
    """holisticai returns ½(mean_a − mean_b) = −½ × frameaudit's value; the means are equal."""
    names = ref.features(frame)
    got = fa.fair.silhouette_difference(frame, a="a", b="b", features=names)
    inputs = ref.holisticai_inputs(frame, "a", "b")
    theirs = hai.silhouette_diff(
        inputs["group_a"], inputs["group_b"], inputs["data"], inputs["y_pred"]
    )
    assert got["silhouette_difference"].item() == pytest.approx(-2 * theirs, rel=1e-9, abs=1e-12)
    s = silhouette_samples(inputs["data"], inputs["y_pred"])
    assert got["silhouette_a"].item() == pytest.approx(s[inputs["group_a"] == 1].mean(), abs=1e-9)
    assert got["silhouette_b"].item() == pytest.approx(s[inputs["group_b"] == 1].mean(), abs=1e-9)


@pytest.mark.parametrize(("spread", "offset"), [(0.5, 0.0), (4.0, 0.0), (1.0, 1000.0)])
def test_silhouette_kernel_equals_sklearn(spread: float, offset: float) -> None:
    """Every s_i within 1e-7 of scikit-learn, per-group means within 1e-9: well-separated,
    overlapping, and far-from-origin blobs (where the expanded distance form cancels)."""
    from frameaudit._kernels.silhouette import silhouette_samples as kernel

    x, labels = make_blobs(
        n_samples=1500, n_features=6, centers=8, cluster_std=spread, random_state=5
    )
    x = x + offset
    expected = silhouette_samples(x, labels)
    got = kernel(x, labels.astype(np.intp))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-7)
    groups = np.random.default_rng(0).integers(0, 3, size=len(x))
    frame = pl.DataFrame(
        {"cluster": labels, "group": groups, **{f"x{j}": x[:, j] for j in range(6)}}
    )
    means = fa.fair.silhouette_difference(frame, a=0, b=1, features=[f"x{j}" for j in range(6)])
    assert means["silhouette_a"].item() == pytest.approx(expected[groups == 0].mean(), abs=1e-9)
    assert means["silhouette_b"].item() == pytest.approx(expected[groups == 1].mean(), abs=1e-9)


@pytest.mark.slow
def test_silhouette_kernel_equals_sklearn_at_size() -> None:
    """40,000 points, 10 features, 10 clusters (the benchmark's size)."""
    from frameaudit._kernels.silhouette import silhouette_samples as kernel

    x, labels = make_blobs(
        n_samples=40_000, n_features=10, centers=10, cluster_std=3.0, random_state=1
    )
    np.testing.assert_allclose(
        kernel(x, labels.astype(np.intp)), silhouette_samples(x, labels), atol=1e-7
    )
