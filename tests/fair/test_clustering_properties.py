"""Properties of the clustering metrics on random small clusterings (hypothesis).

Invariance under relabelling the clusters and under row order, the effect of swapping a and b,
bounds, and agreement with the plain reference of tests/reference/clustering.py.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl
from conftest import assert_frame_close
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from reference import clustering as ref

import frameaudit as fa

SETTINGS = settings(max_examples=20, deadline=None)
FEATURES = ["x0", "x1"]


@st.composite
def clusterings(draw: st.DrawFn) -> pl.DataFrame:
    """4–40 points on a small integer grid (ties and duplicates happen), 1–5 clusters, groups
    a, b and c, both a and b present."""
    n = draw(st.integers(4, 40))
    k = draw(st.integers(1, 5))
    coordinate = st.integers(-4, 4).map(float)
    frame = pl.DataFrame(
        {
            "cluster": draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)),
            "group": draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n)),
            "x0": draw(st.lists(coordinate, min_size=n, max_size=n)),
            "x1": draw(st.lists(coordinate, min_size=n, max_size=n)),
        }
    )
    assume({"a", "b"} <= set(frame["group"]))
    return frame


def _all(frame: pl.DataFrame, a: str = "a", b: str = "b") -> dict[str, Any]:
    """Every metric's result on ``frame`` (the silhouette only with at least 2 clusters)."""
    results = {m: getattr(fa.fair, m)(frame, a=a, b=b) for m in ref.LABEL_METRICS}
    results["social_fairness_ratio"] = fa.fair.social_fairness_ratio(
        frame, a=a, b=b, features=FEATURES
    )
    if frame["cluster"].n_unique() > 1:
        results["silhouette_difference"] = fa.fair.silhouette_difference(
            frame, a=a, b=b, features=FEATURES
        )
    return results


@SETTINGS
@given(clusterings(), st.randoms(use_true_random=False))
def test_relabelling_clusters(frame: pl.DataFrame, random: Any) -> None:
    labels = sorted(frame["cluster"].unique())
    names = [f"k{i}" for i in range(len(labels))]
    random.shuffle(names)
    renamed = frame.with_columns(pl.col("cluster").replace_strict(labels, names))
    expected, got = _all(frame), _all(renamed)
    for metric, result in expected.items():
        assert_frame_close(got[metric], result)


@SETTINGS
@given(clusterings(), st.integers(0, 2**32))
def test_row_order(frame: pl.DataFrame, seed: int) -> None:
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=seed)
    expected, got = _all(frame), _all(shuffled)
    for metric, result in expected.items():
        assert_frame_close(got[metric], result)
    if frame["cluster"].n_unique() > 1:
        options = {"a": "a", "b": "b", "features": FEATURES, "sample": 3, "seed": 11}
        assert_frame_close(
            fa.fair.silhouette_difference(shuffled, **options),
            fa.fair.silhouette_difference(frame, **options),
        )


@SETTINGS
@given(clusterings())
def test_swapping_a_and_b(frame: pl.DataFrame) -> None:
    ab, ba = _all(frame), _all(frame, a="b", b="a")
    for metric in ("cluster_balance", "cluster_distribution_tv"):
        assert_frame_close(ba[metric], ab[metric])
    ratio, inverse = ab["social_fairness_ratio"].item(), ba["social_fairness_ratio"].item()
    if ratio is None or ratio in (0.0, math.inf):
        assert inverse == {None: None, 0.0: math.inf, math.inf: 0.0}[ratio]
    else:
        assert math.isclose(ratio * inverse, 1.0, rel_tol=1e-12)
    if "silhouette_difference" in ab:
        swapped = ba["silhouette_difference"]
        assert_frame_close(
            swapped.select(
                -pl.col("silhouette_difference"),
                pl.col("silhouette_b").alias("silhouette_a"),
                pl.col("silhouette_a").alias("silhouette_b"),
            ),
            ab["silhouette_difference"],
        )
    per_ab = fa.fair.min_cluster_ratio(frame, a="a", b="b", per_cluster=True)["min_cluster_ratio"]
    per_ba = fa.fair.min_cluster_ratio(frame, a="b", b="a", per_cluster=True)["min_cluster_ratio"]
    for x, y in zip(per_ab, per_ba, strict=True):
        if x is None or x in (0.0, math.inf):
            assert y == {None: None, 0.0: math.inf, math.inf: 0.0}[x]
        else:
            assert math.isclose(x * y, 1.0, rel_tol=1e-15)


@SETTINGS
@given(clusterings())
def test_bounds_and_reference(frame: pl.DataFrame) -> None:
    results = _all(frame)
    for metric in ref.LABEL_METRICS:
        value = results[metric].item()
        expected = ref.label_metric(metric, frame, "a", "b")[0]
        assert (value is None and expected is None) or math.isclose(
            value, expected, rel_tol=1e-12, abs_tol=1e-15
        )
    assert 0.0 <= results["cluster_distribution_tv"].item() <= 1.0 + 1e-15
    assert results["cluster_distribution_kl"].item() >= -1e-15
    assert results["cluster_balance"].item() >= 0.0
    expected_sfr = ref.social_fairness_ratio(frame, "a", "b")[0]
    got_sfr = results["social_fairness_ratio"].item()
    assert (got_sfr is None and expected_sfr is None) or math.isclose(
        got_sfr, expected_sfr, rel_tol=1e-12
    )
    if "silhouette_difference" in results:
        row = results["silhouette_difference"].row(0)
        expected_row = ref.silhouette_difference(frame, "a", "b")[0]
        for value, reference in zip(row, expected_row, strict=True):
            assert math.isclose(value, reference, abs_tol=1e-12)
        assert -2.0 <= row[0] <= 2.0
        assert -1.0 <= row[1] <= 1.0
        assert -1.0 <= row[2] <= 1.0
