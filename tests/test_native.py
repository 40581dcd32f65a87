"""Steps written for either namespace (``frameaudit._engine.native``) give narwhals' answer.

On Polars they are built in Polars' own expressions. The same function of the namespace given
narwhals' module is the reference, and so is DuckDB, which always takes narwhals' branch: the
plans must give the same rows, dtypes and bits.
"""

from __future__ import annotations

from typing import Any

import duckdb
import narwhals.stable.v2 as nw
import polars as pl
import pytest

from frameaudit._engine.native import aggregated, from_polars, native_step, stepped
from frameaudit._expr import WHOLE, aggregate, divided_in, partitioned

# a null key is a group of its own; the floats are dyadic, so any order sums them exactly
ROWS = pl.DataFrame(
    {
        "g": ["a", "b", "a", "c", None, "b"],
        "x": [1.5, -2.0, 0.25, 3.0, 7.0, 0.5],
        "n": [1, 2, 3, 4, 5, 6],
    }
)
KEYS = {"a key": ["g"], "the whole frame": [WHOLE], "both": [WHOLE, "g"], "none": []}


def _aggregations(ns: Any) -> list[Any]:
    return [
        ns.col("x").sum(),
        ns.col("n").max().alias("top"),
        ns.len().cast(ns.Int64).alias("rows"),
    ]


def _frame(native: Any, keys: list[str]) -> nw.LazyFrame[Any]:
    frame = nw.from_native(native)
    return partitioned(frame, []) if WHOLE in keys else frame


def _sorted(frame: nw.LazyFrame[Any]) -> pl.DataFrame:
    result: pl.DataFrame = frame.collect(backend="polars").to_native()
    return result.sort(pl.all(), nulls_last=True)


@pytest.mark.parametrize("keys", KEYS.values(), ids=KEYS.keys())
def test_aggregated_on_polars_is_narwhals_aggregate(keys: list[str]) -> None:
    frame = _frame(ROWS.lazy(), keys)
    native = _sorted(aggregated(frame, keys, _aggregations))
    reference = _sorted(aggregate(frame, keys, *_aggregations(nw)))
    assert native.schema == reference.schema
    assert native.equals(reference)
    assert native.height == (4 if "g" in keys else 1)


@pytest.mark.parametrize("keys", KEYS.values(), ids=KEYS.keys())
def test_aggregated_on_duckdb_gives_polars_answer(keys: list[str]) -> None:
    on_polars = _sorted(aggregated(_frame(ROWS.lazy(), keys), keys, _aggregations))
    relation = duckdb.from_arrow(ROWS.to_arrow())
    on_duckdb = _sorted(aggregated(_frame(relation, keys), keys, _aggregations))
    assert on_duckdb.columns == on_polars.columns
    # DuckDB's constant partition column and counts come back in its own integer types
    assert on_duckdb.cast(on_polars.schema).equals(on_polars)


def test_native_filter_keeps_the_same_rows_on_every_engine() -> None:
    def positive(ns: Any) -> list[Any]:
        return [ns.col("x") > 0, ~ns.col("g").is_null()]

    on_polars = _sorted(native_step(nw.from_native(ROWS.lazy()), "filter", positive))
    relation = duckdb.from_arrow(ROWS.to_arrow())
    on_duckdb = _sorted(native_step(nw.from_native(relation), "filter", positive))
    assert sorted(on_polars["n"].to_list()) == [1, 3, 4, 6]
    assert on_duckdb.equals(on_polars)


def test_stepped_wraps_the_step_and_leaves_the_frame_alone() -> None:
    frame = nw.from_native(ROWS.lazy())
    native: pl.LazyFrame = frame.to_native()
    step = stepped(frame, native.with_columns((pl.col("n") * 2).alias("m")))
    assert isinstance(step, nw.LazyFrame)
    assert step.implementation is nw.Implementation.POLARS
    assert step.collect_schema().names() == ["g", "x", "n", "m"]
    assert frame.collect_schema().names() == ["g", "x", "n"]
    assert sorted(_sorted(step)["m"].to_list()) == [2, 4, 6, 8, 10, 12]


def test_from_polars_is_a_narwhals_frame_like_from_native() -> None:
    wrapped = from_polars(ROWS.lazy())
    reference = nw.from_native(ROWS.lazy())
    assert type(wrapped) is type(reference)
    assert wrapped.implementation is nw.Implementation.POLARS
    # narwhals' own steps on it, and a join with a frame narwhals wrapped
    joined = wrapped.with_columns(nw.col("n") + 1).join(reference.select("g", "x"), on="x")
    assert sorted(_sorted(joined)["n"].to_list()) == [2, 3, 4, 5, 6, 7]
    # a second wrap of another plan leaves the first alone
    other = from_polars(ROWS.lazy().select("n"))
    assert wrapped.collect_schema().names() == ["g", "x", "n"]
    assert other.collect_schema().names() == ["n"]


DIVISIONS = pl.DataFrame(
    {
        "a": [1.0, 1.0, -1.0, 0.0, None, 3.0],
        "b": [2.0, 0.0, 0.0, 0.0, 1.0, None],
    }
)
"""x/y by hand: 0.5, +inf, -inf, null (0/0), null and null (a null operand)."""
QUOTIENTS = [0.5, float("inf"), float("-inf"), None, None, None]


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_division_by_names_is_the_division_of_columns(engine: str) -> None:
    native = DIVISIONS.lazy() if engine == "polars" else duckdb.from_arrow(DIVISIONS.to_arrow())
    frame = nw.from_native(native)

    def quotients(ns: Any) -> list[Any]:
        return [
            divided_in(ns, "a", "b").alias("named"),
            divided_in(ns, ns.col("a"), ns.col("b")).alias("written"),
            divided_in(ns, "a", 2.0).alias("halved"),
        ]

    # twice: the second call reuses the expressions the first built
    for _ in range(2):
        got = native_step(frame, "with_columns", quotients).collect(backend="polars").to_native()
        assert got["named"].to_list() == QUOTIENTS
        assert got["written"].to_list() == QUOTIENTS
        assert got["halved"].to_list() == [0.5, 0.5, -0.5, 0.0, None, 1.5]
