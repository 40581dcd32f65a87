"""NDKL's precision on long rankings, against an exact closed form.

One ranking alternating two groups, D = (1/2, 1/2): the prefix KL is 0 at even i and, at
i = 2k + 1, ((k + 1)/i)·ln(1 + 1/i) + (k/i)·ln(1 − 1/i); summed with ``math.fsum`` (each term
computed with ``log1p``, no cancellation). A rearranged sum that cancels terms of size n·ln n
loses digits with n (5e-5 relative at 10^7); frameaudit's per-row steps keep about 1e-13.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from conftest import Constructor, to_polars

import frameaudit as fa

TOLERANCE = 1e-12


def _closed_form(n: int) -> float:
    i = np.arange(1, n + 1, dtype=np.float64)
    weights = 1.0 / np.log2(i + 1.0)
    odd = i[::2]  # i = 2k + 1
    k = (odd - 1.0) / 2.0
    below = np.where(k > 0, (k / odd) * np.log1p(-1.0 / np.maximum(odd, 2.0)), 0.0)
    divergence = ((k + 1.0) / odd) * np.log1p(1.0 / odd) + below
    return math.fsum(weights[::2] * divergence) / math.fsum(weights)


def _alternating(n: int) -> pl.DataFrame:
    return pl.DataFrame(
        {"rank": np.arange(1, n + 1), "group": np.where(np.arange(n) % 2 == 0, "m", "f")}
    )


@pytest.mark.parametrize("n", [10, 1_000, 100_000, 1_000_000])
def test_ndkl_of_a_long_ranking_keeps_its_digits(n: int) -> None:
    value = fa.fair.ndkl(_alternating(n)).item()
    assert value == pytest.approx(_closed_form(n), rel=TOLERANCE)


@pytest.mark.spark
def test_every_engine_keeps_the_digits(constructor: Constructor) -> None:
    n = 200_000
    value = to_polars(fa.fair.ndkl(constructor(_alternating(n)))).item()
    assert value == pytest.approx(_closed_form(n), rel=TOLERANCE)


@pytest.mark.slow
def test_ndkl_of_ten_million_rows_keeps_its_digits() -> None:
    n = 10_000_000
    value = fa.fair.ndkl(_alternating(n)).item()
    assert value == pytest.approx(_closed_form(n), rel=TOLERANCE)


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_log1p_is_within_two_ulps_of_libm(engine: str) -> None:
    import duckdb
    import narwhals.stable.v2 as nw

    from frameaudit._expr import log1p

    rng = np.random.default_rng(3)
    magnitudes = 10.0 ** rng.uniform(-20, 3, 5000)
    x = np.concatenate([magnitudes, -np.minimum(magnitudes, 0.999), [0.0, 1e-300, -1e-17]])
    frame = pl.DataFrame({"x": x})
    native = duckdb.from_arrow(frame.to_arrow()) if engine == "duckdb" else frame.lazy()
    got = nw.from_native(native).select("x", log1p(nw.col("x")).alias("y"))
    got = got.collect("polars").to_native().sort("x")
    expected = np.array([math.log1p(v) for v in got["x"]])
    ulps = np.abs(got["y"].to_numpy() - expected) / np.spacing(np.abs(expected))
    assert ulps.max() <= 2.0
    # plain ln(1 + x) is off by up to 2^53 ulps for tiny x: the test can tell
    plain = np.log(1.0 + got["x"].to_numpy())
    assert (np.abs(plain - expected) / np.spacing(np.abs(expected))).max() > 1e6
