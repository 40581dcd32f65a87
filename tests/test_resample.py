"""The bootstrap's Poisson(1) unit counts: their distribution, independence, portability and
pairing across systems."""

from __future__ import annotations

import math
from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from reference.compare import draws

import frameaudit as fa
from frameaudit._engine import (
    POINT,
    REPLICATE,
    SIDE,
    Bootstrap,
    Estimator,
    GroupedViews,
    grouped_views,
    paired_difference,
    paired_replicates,
    to_engine,
)
from frameaudit._engine.resample import with_coin_flips, with_poisson_counts
from tests.conftest import Constructor, to_polars

UNITS, REPLICATES = 4000, 100


def _counts(seed: int) -> np.ndarray:
    pairs = pl.LazyFrame(
        {
            "unit": np.repeat(np.arange(UNITS), REPLICATES),
            "rep": np.tile(np.arange(REPLICATES), UNITS),
        }
    )
    drawn = with_poisson_counts(nw.from_native(pairs), "unit", "rep", seed, "k")
    return drawn.collect().to_native()["k"].to_numpy().reshape(UNITS, REPLICATES)


def test_counts_follow_poisson_one() -> None:
    counts = _counts(0)
    n = counts.size
    observed = np.bincount(counts.ravel(), minlength=6)[:6].astype(float)
    observed[5] = (counts >= 5).sum()
    probabilities = [math.exp(-1) / math.factorial(j) for j in range(5)]
    probabilities.append(1 - sum(probabilities))
    chi2 = (((observed - n * np.array(probabilities)) ** 2) / (n * np.array(probabilities))).sum()
    assert chi2 < 20.5  # the 0.999 quantile of chi-square with 5 degrees of freedom
    assert counts.mean() == pytest.approx(1.0, abs=0.01)  # standard error 0.0016
    assert counts.var() == pytest.approx(1.0, abs=0.02)


def test_counts_are_uncorrelated_across_units_replicates_and_seeds() -> None:
    counts, other = _counts(0), _counts(1)
    # standard error of a correlation over 400,000 pairs: 0.0016
    neighbours = [
        np.corrcoef(counts[:-1].ravel(), counts[1:].ravel())[0, 1],  # adjacent units
        np.corrcoef(counts[:, :-1].ravel(), counts[:, 1:].ravel())[0, 1],  # adjacent replicates
        np.corrcoef(counts.ravel(), other.ravel())[0, 1],  # two seeds
    ]
    assert max(abs(c) for c in neighbours) < 0.008, neighbours
    # replicate sizes: sums of 4,000 independent Poisson(1) counts, variance 4,000
    sizes = counts.sum(axis=0)
    assert sizes.var(ddof=1) == pytest.approx(UNITS, rel=0.35)  # 100 replicates: ±14% s.e.


@pytest.mark.spark
def test_counts_are_the_same_on_every_engine(constructor: Constructor) -> None:
    pairs = pl.DataFrame(
        {
            "unit": [0, 1, 2, 1_000_000, 2_147_483_646, 5, 5],
            "rep": [0, 0, 0, 999, 3, 0, 100_000],
        }
    )
    # the engine frameaudit runs each kind on (pandas and pyarrow through Polars)
    source = to_engine(constructor(pairs), {"unit": "unit", "rep": "rep"})
    drawn = with_poisson_counts(source.frame, "unit", "rep", 123, "k").to_native()
    expected = with_poisson_counts(nw.from_native(pairs.lazy()), "unit", "rep", 123, "k")
    assert (
        to_polars(drawn)
        .sort("unit", "rep")
        .equals(expected.collect().to_native().sort("unit", "rep"))
    )


@pytest.mark.parametrize("level", [0.5, 0.8, 0.9, 0.95])
def test_the_interval_is_numpys_linear_percentiles(level: float) -> None:
    """``interval`` on given replicate values: exactly numpy's default quantiles.

    Two keys, 37 and 8 replicates (values in random order, with undefined ones left out and
    counted), and one key with a single unit (no interval).
    """
    from frameaudit._engine.resample import POINT, REPLICATE, UNDEFINED, Bootstrap, interval

    rng = np.random.default_rng(int(level * 100))
    n_boot = 40
    first = rng.normal(size=n_boot)
    first[[3, 17, 30]] = np.nan  # 3 undefined replicates
    second = rng.exponential(size=8)  # the other 32 replicates have no row: undefined
    values = pl.DataFrame(
        {
            "key": ["a"] * (n_boot + 1) + ["b"] * 9 + ["c"] * 3,
            REPLICATE: [POINT, *range(n_boot), POINT, *range(8), POINT, 0, 1],
            "v": [0.5, *first, 1.5, *second, 2.5, 1.0, 2.0],
        }
    )
    units = pl.DataFrame({"key": ["a", "b", "c"], "units": [10, 10, 1]})
    result = interval(
        nw.from_native(values.lazy()),
        ["key"],
        "v",
        Bootstrap(level, n_boot, 0),
        units=nw.from_native(units.lazy()),
    )
    rows = {r["key"]: r for r in result.collect().to_native().iter_rows(named=True)}
    tail = (1 - level) / 2
    for key, drawn, undefined in (("a", first[~np.isnan(first)], 3), ("b", second, 32)):
        low, high = np.quantile(drawn, [tail, 1 - tail])
        assert rows[key]["v_lo"] == low
        assert rows[key]["v_hi"] == high
        assert rows[key][UNDEFINED] == undefined
    assert rows["a"]["v"] == 0.5
    assert rows["c"]["v_lo"] is None
    assert rows["c"]["v_hi"] is None


def _replicate_sums(frame: pl.DataFrame, paired: tuple[str, ...]) -> pl.DataFrame:
    """The sums of ``x`` per (system, replicate), each ranking drawn by the bootstrap."""
    source = to_engine(frame, {c: c for c in frame.columns})
    estimator = Estimator("rankings", Bootstrap(0.9, 40, 7, paired=paired))
    rows, estimated = estimator.over(source.frame, source, by=["system"], units=["ranking"])
    summed = estimated.summed(rows, [], ["x"]).collect().to_native()
    return summed.sort("system", REPLICATE)


def test_paired_draws_give_a_ranking_the_same_count_in_every_system() -> None:
    """SPEC §7: a drawn unit brings every system's rows; each system alone draws as before.

    System b's value is twice a's in every ranking: with paired draws each replicate's sum of
    b is exactly twice a's. Numbered without the system column, the rankings draw what they
    draw in a frame of one system (the same unit numbers), so a's replicates are those of a
    bootstrap over a alone; and they are numpy's Σ_u k_bu x_u with the counts of
    ``with_poisson_counts`` for the rankings' ranks.
    """
    rng = np.random.default_rng(5)
    x = rng.integers(1, 100, 25).astype(float)
    rankings = rng.permutation(np.arange(100, 125))  # not in key order
    a = pl.DataFrame({"system": "a", "ranking": rankings, "x": x})
    frame = pl.concat([a, a.with_columns(pl.lit("b").alias("system"), pl.col("x") * 2.0)])
    paired = _replicate_sums(frame.sample(fraction=1.0, shuffle=True, seed=1), ("system",))
    sums = {s: paired.filter(pl.col("system") == s)["x"].to_numpy() for s in ("a", "b")}
    assert len(sums["a"]) == 41  # the point and 40 replicates
    assert np.array_equal(sums["b"], 2.0 * sums["a"])
    alone = _replicate_sums(a, ("system",))
    assert np.array_equal(alone["x"].to_numpy(), sums["a"])
    # numpy: unit u is the ranking's rank in key order; replicate b counts it k_bu times
    k = draws(with_poisson_counts, len(rankings), 40, 7)[np.argsort(np.argsort(rankings))]
    expected = np.concatenate([[x.sum()], x @ k])
    np.testing.assert_array_equal(sums["a"], expected)
    # unpaired, the systems' rankings are different units: b is not twice a
    unpaired = _replicate_sums(frame, ())
    b_unpaired = unpaired.filter(pl.col("system") == "b")["x"].to_numpy()
    assert not np.array_equal(b_unpaired[1:], 2.0 * sums["a"][1:])


QUERIES, DEPTH = 40, 5


def _two_systems(shares: dict[Any, float], seed: int) -> pl.DataFrame:
    """Two systems ranking the same queries 900, 901, …: group f with the system's share."""
    rng = np.random.default_rng(seed)
    rows = [
        (system, 900 + q, r + 1, str(rng.choice(["f", "m"], p=[share, 1.0 - share])))
        for system, share in shares.items()
        for q in range(QUERIES)
        for r in range(DEPTH)
    ]
    return pl.DataFrame(rows, schema=["system", "query", "rank", "group"], orient="row")


def _exp_replicates(frame: pl.DataFrame, replicates: int, seed: int, **swaps: bool) -> Any:
    """EXP per (system, group, replicate) with group sizes in rows, within paired_replicates."""
    with paired_replicates("system", **swaps):
        return fa.fair.exp(
            frame,
            ranking="query",
            by="system",
            combo=None,
            size="rows",
            ci=0.9,
            n_boot=replicates,
            seed=seed,
        )


def _per_query(frame: pl.DataFrame, system: Any, group: str) -> tuple[np.ndarray, np.ndarray]:
    """Per query (in key order): the exposure 1/log2(1 + rank) of its rows of the system and
    group, and their number."""
    mine = (frame["system"] == system).to_numpy() & (frame["group"] == group).to_numpy()
    unit = frame["query"].to_numpy()[mine] - 900
    exposure = 1.0 / np.log2(1.0 + frame["rank"].to_numpy()[mine])
    e = np.bincount(unit, weights=exposure, minlength=QUERIES)
    return e, np.bincount(unit, minlength=QUERIES).astype(float)


def test_a_metric_inside_paired_replicates_returns_each_replicates_value() -> None:
    """Any metric called within ``paired_replicates`` gives every replicate's value per system.

    EXP with ``size="rows"``: in replicate b, V_g = Σ_u k_bu E_ug / Σ_u k_bu n_ug over the
    queries u (E_ug the exposure of g's rows of u, n_ug their number), with the counts k of
    ``with_poisson_counts`` for each query's rank in key order: numpy's, the same k in both
    systems.
    """
    frame = _two_systems({"a": 0.4, "b": 0.5}, seed=11)
    values = _exp_replicates(frame, 30, 4)
    assert values.columns == ["system", "group", REPLICATE, "exp", "n"]
    k = draws(with_poisson_counts, QUERIES, 30, 4)
    for (system, group), got in values.group_by(["system", "group"]):
        e, n = _per_query(frame, system, group)
        expected = np.concatenate([[e.sum() / n.sum()], (e @ k) / (n @ k)])
        ordered = got.sort(REPLICATE)
        assert ordered[REPLICATE].to_list() == [POINT, *range(30)]
        np.testing.assert_allclose(ordered["exp"].to_numpy(), expected, rtol=1e-12)
    # outside the block the same call gives the interval
    plain = fa.fair.exp(frame, ranking="query", by="system", size="rows", ci=0.9, n_boot=30)
    assert {"exp_lo", "exp_hi"} <= set(plain.columns)


def _weighted_days() -> pl.DataFrame:
    """Rankings of 4 positions (groups a/b) on three days; every ranking of day 3 weighs 0."""
    rng = np.random.default_rng(5)
    rows = []
    for query in range(18):
        day, weight = query % 3 + 1, float(rng.integers(1, 4))
        for position, group in enumerate(rng.choice(["a", "b", "c"], size=4), start=1):
            rows.append((day, query, position, str(group), 0.0 if day == 3 else weight))
    return pl.DataFrame(rows, schema=["day", "query", "rank", "group", "w"], orient="row")


@pytest.mark.spark(cases=["exp"])
@pytest.mark.parametrize(("metric", "sized"), [("exp", {"size": "rows"}), ("erbe", {})])
def test_every_view_of_a_bootstrap_is_the_call_that_asks_for_it(
    constructor: Constructor, metric: str, sized: dict[str, str]
) -> None:
    """Within ``grouped_views``, one call gives what three calls give one by one: the
    per-group intervals, every combo's, and the replicates of ``paired_replicates`` — on a
    weighted frame whose day 3 weighs 0 (its combos: null values over 0 units).

    The three calls run on Polars: each of them is the same on every frame kind (the
    same-seed tests of each family), and on PySpark each is seconds of planning.
    """
    frame = _weighted_days()
    function = getattr(fa.fair, metric)
    options: dict[str, Any] = {"rank": "rank", "group": "group", "ranking": "query"}
    options |= {"by": "day", "weight": "w", "ci": 0.8, "n_boot": 25, "seed": 3, **sized}
    with grouped_views():
        views = function(constructor(frame), combo=None, **options)
    assert isinstance(views, GroupedViews)
    one_by_one = [
        function(frame, combo=None, **options),
        function(frame, combo=list(fa.fair.COMBOS), **options),
    ]
    with paired_replicates():
        one_by_one.append(function(frame, combo=None, **options))
    for view, expected in zip(views, one_by_one, strict=True):
        assert_frame_equal(view, expected, check_exact=False, rel_tol=1e-12)
    # day 3: no group to show, and each combo null over 0 units
    assert views.values["day"].unique().sort().to_list() == [1, 2]
    weightless = views.combos.filter(pl.col("day") == 3)
    assert weightless["rankings"].to_list() == [0] * len(fa.fair.COMBOS)
    assert weightless[metric].null_count() == len(fa.fair.COMBOS)


def test_swapped_replicates_relabel_each_querys_systems_by_a_fair_coin() -> None:
    """A randomisation test's replicate b: query u's rows of system s count as s XOR f_bu.

    EXP with ``size="rows"`` per relabelled system, against numpy with the coins of
    ``with_coin_flips``; the point replicate swaps nothing, and the coins are fair and
    unlike the bootstrap's counts for the same seed.
    """
    perms = 30
    frame = _two_systems({0: 0.3, 1: 0.6}, seed=3)
    values = _exp_replicates(frame, perms, 8, swaps=True)
    f = draws(with_coin_flips, QUERIES, perms, 8)
    assert 0.4 < f.mean() < 0.6
    # from a stream of their own: drawn from the counts' hash, a coin would be h > p/2 and
    # correlate with the count #{j : h >= T_j} at 0.75 (standard error here 0.03)
    counts = draws(with_poisson_counts, QUERIES, perms, 8)
    assert abs(np.corrcoef(f.ravel(), counts.ravel())[0, 1]) < 0.12
    for group in ("f", "m"):
        for system in (0, 1):
            # system s in replicate b: each query's own s-rows where f = 0, its other rows where 1
            own, other = _per_query(frame, system, group), _per_query(frame, 1 - system, group)
            e, n = (own[i] @ (1 - f) + other[i] @ f for i in (0, 1))
            expected = np.concatenate([[own[0].sum() / own[1].sum()], e / n])
            got = values.filter((pl.col("system") == system) & (pl.col("group") == group))
            np.testing.assert_allclose(got.sort(REPLICATE)["exp"].to_numpy(), expected, rtol=1e-12)


def test_paired_difference_is_numpys_paired_bootstrap_and_randomisation_test() -> None:
    """EXP's MinMaxRatio of two systems: the difference's percentile interval over the paired
    replicates and the p-value (1 + #{|T*| ≥ |T|}) / (1 + B) over the swaps, by numpy."""
    boots, perms, level = 200, 150, 0.9
    frame = _two_systems({0: 0.35, 1: 0.55}, seed=21)

    def ratios(replicates: int, swaps: bool) -> nw.LazyFrame[Any]:
        with paired_replicates("system", swaps=swaps):
            values = fa.fair.exp(
                frame,
                ranking="query",
                by="system",
                size="rows",
                ci=level,
                n_boot=replicates,
                seed=6,
            )
        labelled = values.rename({"system": SIDE}).with_columns(pl.lit("x").alias("audit"))
        return nw.from_native(labelled.lazy())

    units = nw.from_native(pl.LazyFrame({"audit": ["x"], "queries": [QUERIES]}))
    result = paired_difference(
        ratios(boots, swaps=False),
        ratios(perms, swaps=True),
        ["audit"],
        "exp",
        Bootstrap(level, boots, 6),
        units=units,
        permutations=perms,
    )
    got = result.collect().to_native().row(0, named=True)

    def min_max(e: dict[int, np.ndarray], n: dict[int, np.ndarray]) -> np.ndarray:
        values = np.array([e[g] / n[g] for g in (0, 1)])  # groups f, m
        return values.min(axis=0) / values.max(axis=0)

    per_query = {s: [_per_query(frame, s, g) for g in ("f", "m")] for s in (0, 1)}

    def ratio(system: int, weights: np.ndarray, other: np.ndarray | None = None) -> np.ndarray:
        own = per_query[system]
        if other is None:  # bootstrap: the system's own rows, counted k times
            e = {g: own[g][0] @ weights for g in (0, 1)}
            n = {g: own[g][1] @ weights for g in (0, 1)}
        else:  # swaps: the other system's rows where the coin is 1
            rest = per_query[1 - system]
            e = {g: own[g][0] @ (1 - other) + rest[g][0] @ other for g in (0, 1)}
            n = {g: own[g][1] @ (1 - other) + rest[g][1] @ other for g in (0, 1)}
        return min_max(e, n)

    ones = np.ones((QUERIES, 1))
    observed = (ratio(1, ones) - ratio(0, ones))[0]
    k = draws(with_poisson_counts, QUERIES, boots, 6)
    d = ratio(1, k) - ratio(0, k)
    lo, hi = np.percentile(d, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    f = draws(with_coin_flips, QUERIES, perms, 6)
    t = np.abs(ratio(1, ones, f) - ratio(0, ones, f))
    p_value = (1 + (t >= abs(observed) * (1 - 1e-12)).sum()) / (1 + perms)
    assert got["difference"] == pytest.approx(observed, rel=1e-12)
    assert got["exp"] - got["baseline_exp"] == pytest.approx(observed, rel=1e-12)
    assert (got["difference_lo"], got["difference_hi"]) == pytest.approx((lo, hi), rel=1e-12)
    assert got["p_value"] == pytest.approx(p_value, rel=1e-15)
    assert (got["queries"], got["undefined_replicates"]) == (QUERIES, 0)
    assert 0.0 < got["p_value"] < 1.0
