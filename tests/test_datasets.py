from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest

from frameaudit import FrameAuditError
from frameaudit.datasets import (
    biased_rankings,
    cases_example,
    clustering_example,
    group_sizes,
    importance_example,
    ranking_example,
    runs_example,
)


@pytest.mark.parametrize(
    ("proportions", "n", "expected"),
    [([0.5, 0.3, 0.2], 7, [4, 2, 1]), ([0.1, 0.9], 1000, [100, 900]), ([1 / 3] * 3, 10, [4, 3, 3])],
)
def test_group_sizes_are_exact_largest_remainder(
    proportions: list[float], n: int, expected: list[int]
) -> None:
    assert group_sizes(proportions, n).tolist() == expected


@pytest.mark.parametrize("phi", [0.0, 0.3, 1.0])
def test_every_ranking_is_a_permutation_with_exact_group_sizes(phi: float) -> None:
    df = biased_rankings({"a": 0.2, "b": 0.3, "c": 0.5}, 50, phi=phi, num_rankings=30, seed=3)
    assert df.height == 50 * 30
    per_ranking = df.group_by("ranking").agg(
        pl.col("item").sort().alias("items"),
        pl.col("rank").sort().alias("ranks"),
        (pl.col("group") == "a").sum().alias("n_a"),
    )
    for row in per_ranking.iter_rows(named=True):
        assert row["items"] == list(range(50))
        assert row["ranks"] == list(range(1, 51))
        assert row["n_a"] == 10
    # an item keeps its group in every ranking
    assert df.group_by("item").agg(pl.col("group").n_unique()).get_column("group").max() == 1


def test_phi_zero_puts_the_smallest_group_on_top() -> None:
    df = biased_rankings({"big": 0.75, "small": 0.25}, 40, phi=0.0, num_rankings=5, seed=0)
    top = df.filter(pl.col("rank") <= 10)
    assert top.get_column("group").unique().to_list() == ["small"]


def test_phi_one_is_proportional_on_average() -> None:
    df = biased_rankings([0.3, 0.7], 200, phi=1.0, num_rankings=400, seed=0)
    share_top = df.filter(pl.col("rank") <= 20).get_column("group").eq("0").mean()
    assert share_top == pytest.approx(0.3, abs=0.02)


def test_same_seed_same_rankings() -> None:
    first = biased_rankings([0.4, 0.6], 30, phi=0.5, num_rankings=3, seed=11)
    second = biased_rankings([0.4, 0.6], 30, phi=0.5, num_rankings=3, seed=11)
    assert first.equals(second)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"group_proportions": [0.5, 0.6]}, "summing to 1"),
        ({"group_proportions": [1.0]}, "at least two groups"),
        ({"phi": 1.5}, "phi=1.5"),
        ({"num_items": 1}, "num_items=1"),
        ({"num_rankings": 0}, "num_rankings=0"),
    ],
)
def test_bad_parameters(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"group_proportions": [0.5, 0.5], "num_items": 10, "phi": 0.5}
    arguments.update(kwargs)
    with pytest.raises(FrameAuditError, match=message):
        biased_rankings(**arguments)  # type: ignore[arg-type]


def test_ranking_example_is_valid_input() -> None:
    df = ranking_example()
    assert df.columns == ["query", "rank", "item", "gender", "age", "relevance", "relevant", "ctr"]
    assert df.get_column("relevance").is_between(0, 1).all()
    assert set(np.unique(df.get_column("relevant").to_numpy())) <= {0, 1}


def test_clustering_example_skews_group_a_only() -> None:
    points = clustering_example()
    assert points.columns == ["cluster", "group", "x", "y"]
    assert points.height == 2_000
    shares = (
        points.group_by("group", "cluster")
        .len()
        .with_columns(pl.col("len") / pl.col("len").sum().over("group"))
    )
    a = shares.filter(pl.col("group") == "a").sort("cluster").get_column("len").to_numpy()
    b = shares.filter(pl.col("group") == "b").sort("cluster").get_column("len").to_numpy()
    np.testing.assert_allclose(a, [0.4, 0.3, 0.2, 0.1], atol=0.05)
    np.testing.assert_allclose(b, [0.25] * 4, atol=0.05)
    assert points.get_column("group").eq("a").mean() == pytest.approx(0.3, abs=0.03)
    # every point lies near its cluster's centre
    spread = points.group_by("cluster").agg(pl.col("x").std(), pl.col("y").std())
    np.testing.assert_allclose(spread.select("x", "y").to_numpy(), 1.0, atol=0.15)


def test_runs_example_repeats_hard_mistakes() -> None:
    runs = runs_example()
    assert runs.columns == ["run", "sample", "target", "prediction"]
    assert runs.select(pl.struct("run", "sample").n_unique()).item() == 5 * 1_000
    # the target is the sample's, whatever the run
    assert runs.group_by("sample").agg(pl.col("target").n_unique()).get_column("target").max() == 1
    wrong = runs.with_columns(wrong=pl.col("prediction") != pl.col("target"))
    # 0.2 x 0.8 + 0.8 x 0.05 of the predictions are wrong
    assert wrong.get_column("wrong").mean() == pytest.approx(0.2, abs=0.02)
    errors_per_sample = wrong.group_by("sample").agg(pl.col("wrong").sum()).get_column("wrong")
    # hard samples are wrong in most runs: far more samples wrong 4-5 times than independence gives
    assert (errors_per_sample >= 4).mean() > 0.1
    assert set(runs.get_column("prediction").unique().to_list()) <= {0, 1, 2}


def test_cases_example_labels_and_predictions_follow_their_rules() -> None:
    train, queries = cases_example()
    assert (train.height, queries.height) == (500, 200)
    assert train.get_column("label").equals(
        (train.get_column("f1") + train.get_column("f2") > 0).cast(pl.Int64), check_names=False
    )
    assert queries.get_column("predicted").equals(
        (queries.get_column("f1") > 0).cast(pl.Int64), check_names=False
    )


def test_importance_example_g1_follows_and_g2_reverses_overall() -> None:
    frame = importance_example()
    order = {
        group: frame.filter(pl.col("group") == group)
        .sort("importance", descending=True)
        .get_column("feature")
        .to_list()
        for group in ("overall", "g1", "g2")
    }
    assert order["overall"] == [f"f{i}" for i in range(8)]
    assert order["g2"] == order["overall"][::-1]
    overall = frame.filter(pl.col("group") == "overall").get_column("importance").to_numpy()
    g1 = frame.filter(pl.col("group") == "g1").get_column("importance").to_numpy()
    np.testing.assert_allclose(overall, np.linspace(1.0, 0.1, 8))
    assert np.abs(g1 - overall).max() < 0.2


@pytest.mark.parametrize("example", [clustering_example, runs_example, importance_example])
def test_examples_are_seeded(example: Any) -> None:
    assert example(seed=4).equals(example(seed=4))
    assert not example(seed=4).equals(example(seed=5))
