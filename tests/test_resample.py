"""The bootstrap's Poisson(1) unit counts: their distribution, independence and portability."""

from __future__ import annotations

import math

import narwhals.stable.v2 as nw
import numpy as np
import polars as pl
import pytest

from frameaudit._engine import to_engine
from frameaudit._engine.resample import with_poisson_counts
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
