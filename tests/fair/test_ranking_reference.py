"""frameaudit.fair against FairRankTune 0.0.7 on seeded random rankings (docs/ranking.md).

The tidy frame is converted to FairRankTune's wide input in the test. Where the documentation says
frameaudit agrees (the EXP family with a ``groups=`` mapping, single-ranking ARP) the numbers
must be equal; where it documents a difference the test asserts exactly that difference.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import polars as pl
import pytest
from reference.ranking import (
    COMBOS,
    GROUP_METRICS,
    expected,
    kl,
    ndkl_one,
    random_rankings,
    to_wide,
)

import frameaudit as fa

FairRankTune = pytest.importorskip("FairRankTune")

REL = 1e-12

# (id, (seed, items, groups, rankings))
CONFIGS = [
    ("2groups-1ranking", 21, 10, 2, 1),
    ("3groups-4rankings", 22, 12, 3, 4),
    ("5groups-3rankings", 23, 15, 5, 3),
]

# metric → (FairRankTune's function, its arguments between item_group_dict and combo — a str
# names a wide value frame —, frameaudit's extra keyword arguments)
FRT_CALLS: dict[str, tuple[Callable[..., Any], tuple[str | float, ...], dict[str, Any]]] = {
    "exp": (FairRankTune.Metrics.EXP, (), {}),
    "expu": (FairRankTune.Metrics.EXPU, ("relevance",), {}),
    "expru": (FairRankTune.Metrics.EXPRU, ("relevance", "ctr"), {}),
    "awrf": (FairRankTune.Metrics.AWRF, (0.2,), {"p": 0.2}),
    "erbe": (FairRankTune.Metrics.ERBE, (0.8,), {"decay": 0.8}),
    "erbp": (FairRankTune.Metrics.ERBP, (0.8,), {"decay": 0.8}),
    "erbr": (FairRankTune.Metrics.ERBR, ("binary", 0.8), {"decay": 0.8, "relevance": "binary"}),
    "arp": (FairRankTune.Metrics.ARP, (), {}),
}
# the group metrics compared with FairRankTune: those it implements (a metric it lacks, such as
# one of our own, is checked against the numpy reference alone)
FRT_METRICS = tuple(m for m in GROUP_METRICS if m in FRT_CALLS)


def test_every_group_metric_fairranktune_has_is_compared() -> None:
    implemented = {m for m in GROUP_METRICS if hasattr(FairRankTune.Metrics, m.upper())}
    assert implemented == set(FRT_CALLS)


@contextmanager
def quiet() -> Iterator[None]:
    """FairRankTune divides by zero with numpy warnings; the suite turns warnings into errors."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


def documented(frt_value: float, combo: str, n_groups: int, scale: float = 1.0) -> float:
    """frameaudit's combo value from FairRankTune's, by the differences in docs/differences.md.

    ``scale`` multiplies every per-group value (1/|R| for ARP over |R| full rankings, where
    FairRankTune sums per-ranking fractions and frameaudit pools the pair counts).
    """
    if combo in ("MinMaxRatio", "MaxMinRatio"):
        return frt_value
    if combo == "LTwo":  # FairRankTune: the unsquared norm
        return (scale * frt_value) ** 2
    if combo == "Variance":  # FairRankTune: ddof 0
        return scale**2 * frt_value * n_groups / (n_groups - 1)
    return scale * frt_value


def _run(
    metric: str, frame: pl.DataFrame, mapping: dict[int, str], combo: str | None
) -> tuple[Any, Any]:
    """(FairRankTune's result, frameaudit's result: the combo value, or the per-group frame)."""
    call, extras, options = FRT_CALLS[metric]
    ranking_df, wide = to_wide(frame, ("relevance", "ctr", "binary"))
    arguments = [wide[e] if isinstance(e, str) else e for e in extras]
    with quiet():
        frt = call(ranking_df, mapping, *arguments, combo or "MinMaxRatio")
    function = getattr(fa.fair, metric)
    ours = function(frame, ranking="query", item="item", groups=mapping, combo=combo, **options)
    return frt, ours if combo is None else ours.item()


CONFIG_IDS = [c[0] for c in CONFIGS]


def _scale(metric: str, n_rankings: int) -> float:
    """ARP over several rankings: FairRankTune sums the per-ranking fractions. Every ranking
    holds every item, so the pair counts are the same in each and ours is theirs / |R|."""
    return 1.0 / n_rankings if metric == "arp" else 1.0


@pytest.mark.parametrize("metric", FRT_METRICS)
@pytest.mark.parametrize("config", [c[1:] for c in CONFIGS], ids=CONFIG_IDS)
def test_per_group_values_against_fairranktune(
    metric: str, config: tuple[int, int, int, int]
) -> None:
    seed, n_items, n_groups, n_rankings = config
    frame, mapping = random_rankings(
        seed, n_items=n_items, n_groups=n_groups, n_rankings=n_rankings
    )
    (_, frt_groups), per_group = _run(metric, frame, mapping, None)
    values = np.array(list(frt_groups.values()), dtype=float)
    assert np.isfinite(values).all(), "test data must give finite per-group values"
    assert [str(g) for g in frt_groups] == per_group["group"].to_list()  # np.unique order
    np.testing.assert_allclose(
        per_group[metric].to_numpy(), _scale(metric, n_rankings) * values, rtol=REL
    )


@pytest.mark.parametrize("combo", COMBOS)
@pytest.mark.parametrize("metric", FRT_METRICS)
@pytest.mark.parametrize("config", [c[1:] for c in CONFIGS], ids=CONFIG_IDS)
def test_combos_against_fairranktune(
    metric: str, combo: str, config: tuple[int, int, int, int]
) -> None:
    seed, n_items, n_groups, n_rankings = config
    frame, mapping = random_rankings(
        seed, n_items=n_items, n_groups=n_groups, n_rankings=n_rankings
    )
    (frt_value, _), ours = _run(metric, frame, mapping, combo)
    want = documented(frt_value, combo, n_groups, _scale(metric, n_rankings))
    assert ours == pytest.approx(want, rel=REL, abs=1e-15)


@pytest.mark.parametrize(("combo", "relation"), [("LTwo", "squared"), ("Variance", "ddof")])
def test_ltwo_and_variance_differences_are_real(combo: str, relation: str) -> None:
    """Guard against a vacuous comparison: the documented relation is not the identity here."""
    frame, mapping = random_rankings(22, n_items=12, n_groups=3, n_rankings=4)
    (frt_value, _), ours = _run("exp", frame, mapping, combo)
    assert ours != pytest.approx(frt_value, rel=1e-6)
    expected_value = frt_value**2 if relation == "squared" else frt_value * 3 / 2
    assert ours == pytest.approx(expected_value, rel=REL)


def test_arp_single_ranking_agrees_and_several_rankings_pool() -> None:
    frame, mapping = random_rankings(31, n_items=11, n_groups=3, n_rankings=3)
    first = frame.filter(pl.col("query") == 0)
    (frt_one, _), ours_one = _run("arp", first, mapping, "MaxMinDiff")
    assert ours_one == pytest.approx(frt_one, rel=REL)
    (_, frt_groups), per_group = _run("arp", frame, mapping, None)
    pooled = expected(frame, "arp", ranking="query", item="item", groups=mapping, combo=None)
    np.testing.assert_allclose(per_group["arp"].to_numpy(), pooled["arp"].to_numpy(), rtol=REL)
    # FairRankTune's values are sums of three fractions: up to 3, not a fraction.
    assert max(frt_groups.values()) > 1.0
    assert np.array(list(frt_groups.values())) == pytest.approx(
        3 * pooled["arp"].to_numpy(), rel=REL
    )


def _nan_and_inf_case() -> tuple[pl.DataFrame, dict[int, str]]:
    """EXPU with a never-ranked group (V = 0/0) and ERBR with a group without relevant items."""
    frame = pl.DataFrame(
        {
            "query": [0, 0, 0, 0],
            "rank": [1, 2, 3, 4],
            "item": [1, 2, 3, 4],
            "relevance": [0.5, 1.0, 0.25, 0.5],
            "ctr": [0.1, 0.2, 0.3, 0.4],
            "binary": [0, 1, 0, 1],
        }
    )
    return frame, {1: "a", 2: "b", 3: "a", 4: "b", 5: "c"}


def test_maxabsdiff_on_nan_is_null_not_int_zero() -> None:
    frame, mapping = _nan_and_inf_case()
    (frt_value, frt_groups), ours = _run("expu", frame, mapping, "MaxAbsDiff")
    assert math.isnan(frt_groups["c"])
    assert frt_value == 0
    assert isinstance(frt_value, int)  # FairRankTune's loop never updates its int 0
    assert ours is None


def test_maxabsdiff_on_inf_is_null_not_inf() -> None:
    """FairRankTune's loop skips the NaN deviation of an infinite V_g and returns inf."""
    frame, _ = _nan_and_inf_case()
    mapping = {1: "a", 2: "b", 3: "a", 4: "b"}  # group a: exposure, no relevant item
    (frt_value, frt_groups), ours = _run("erbr", frame, mapping, "MaxAbsDiff")
    assert math.isinf(frt_groups["a"])
    assert math.isinf(frt_value)
    assert ours is None


@pytest.mark.parametrize(("seed", "n_items", "n_groups"), [(41, 8, 2), (42, 12, 3), (43, 20, 5)])
def test_ndkl_smoothing(seed: int, n_items: int, n_groups: int) -> None:
    frame, mapping = random_rankings(seed, n_items=n_items, n_groups=n_groups, n_rankings=1)
    ranking_df, _ = to_wide(frame)
    frt = FairRankTune.Metrics.NDKL(ranking_df, mapping)
    rows = frame.to_dicts()

    def group_of(row: dict[str, Any]) -> str:
        return mapping[row["item"]]

    smoothed = ndkl_one(rows, rank="rank", group_of=group_of, target=None, eps=1e-7)
    exact = ndkl_one(rows, rank="rank", group_of=group_of, target=None)
    assert frt == pytest.approx(smoothed, rel=REL)
    assert frt != pytest.approx(exact, rel=1e-9)  # the smoothing is visible at this tolerance
    ours = fa.fair.ndkl(frame, item="item", groups=mapping).item()
    assert ours == pytest.approx(exact, rel=REL, abs=1e-15)
    assert fa.fair.ndkl(frame, group="group").item() == pytest.approx(exact, rel=REL, abs=1e-15)


def test_ndkl_kl_matches_a_hand_worked_value() -> None:
    """KL((1, 0) ‖ (½, ½)) = ln 2, exactly; with ε it is not."""
    assert kl({"a": 1.0}, {"a": 0.5, "b": 0.5}) == pytest.approx(math.log(2), rel=1e-15)
    assert kl({"a": 1.0}, {"a": 0.5, "b": 0.5}, eps=1e-7) != pytest.approx(math.log(2), rel=1e-9)


def test_ndkl_several_rankings() -> None:
    frame, mapping = random_rankings(44, n_items=9, n_groups=3, n_rankings=3)
    ranking_df, _ = to_wide(frame)
    with pytest.raises(AssertionError, match="single ranking"):
        FairRankTune.Metrics.NDKL(ranking_df, mapping)
    ours = fa.fair.ndkl(frame, ranking="query", item="item", groups=mapping).item()
    per_ranking = fa.fair.ndkl(frame, ranking="query", item="item", groups=mapping, by="query")
    assert ours == pytest.approx(per_ranking["ndkl"].mean(), rel=REL)
    for query, value in per_ranking.iter_rows():
        one, _ = to_wide(frame.filter(pl.col("query") == query))
        assert value == pytest.approx(FairRankTune.Metrics.NDKL(one, mapping), rel=1e-5)


def test_iaa_reads_every_ranking() -> None:
    frame, _ = random_rankings(51, n_items=8, n_rankings=3)
    ranking_df, wide = to_wide(frame, ("relevance",))
    frt = FairRankTune.Metrics.IAA(ranking_df, wide["relevance"])
    per_ranking = fa.fair.iaa(frame, ranking="query", item="item", by="query")
    assert per_ranking["iaa"][0] == pytest.approx(frt, rel=REL)  # FairRankTune: first only
    ours = fa.fair.iaa(frame, ranking="query", item="item").item()
    assert ours == pytest.approx(
        expected(frame, "iaa", ranking="query", item="item").item(), rel=REL
    )
    assert ours != pytest.approx(frt, rel=1e-3)
