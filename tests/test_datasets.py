from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from frameaudit import FrameAuditError
from frameaudit.datasets import biased_rankings, group_sizes, ranking_example


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
