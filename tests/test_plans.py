"""The engine-specific plan steps give every engine's answer: Spark's and DuckDB's checked against
Polars'."""

from __future__ import annotations

import itertools
from typing import Any

import duckdb
import narwhals.stable.v2 as nw
import polars as pl
import pytest

from frameaudit._engine.checks import message_frame
from frameaudit._expr import WHOLE, partitioned
from frameaudit._validate import distinct_within

# per case: (query, block, rank, item) rows; Spark's and DuckDB's integers are grouped 64 values at
# a time (value >> 6, one bit for value & 63), so the values sit on both sides of those edges
DISTINCT: dict[str, list[tuple[int, str, int, str]]] = {
    "distinct, across bit groups": [
        (0, "x", v, str(v)) for v in (-65, -64, -1, 0, 1, 63, 64, 65, 127, 128, 2**40, 2**62)
    ],
    "same bit in other groups": [(0, "x", 1, "a"), (0, "x", 65, "b"), (0, "x", -63, "c")],
    "repeat at a group's last bit": [(0, "x", 63, "a"), (0, "x", 63, "b"), (1, "x", 1, "a")],
    "repeat of a negative value": [(1, "x", -1, "a"), (1, "x", -1, "b"), (0, "x", -1, "c")],
    "repeats in two queries": [
        (2, "x", 5, "a"),
        (2, "x", 5, "b"),
        (1, "y", 7, "a"),
        (1, "y", 7, "b"),
        (0, "x", 1, "c"),
    ],
    "repeated item only": [(0, "x", 1, "a"), (0, "x", 2, "a"), (1, "y", 1, "a")],
    "both repeat, other queries": [
        (3, "x", 1, "a"),
        (3, "x", 1, "b"),
        (4, "x", 1, "c"),
        (4, "x", 2, "c"),
    ],
}
PARTITIONS = {"query": ["query"], "query and block": ["query", "block"], "none": [WHOLE]}


def _messages(frame: nw.LazyFrame[Any], partition: list[str]) -> list[str | None]:
    """The distinctness check's message, of rank and item alone and of both together."""
    frame = partitioned(frame, [] if partition == [WHOLE] else partition)
    columns: list[dict[str, str]] = [{"rank": "rank"}, {"item": "item"}]
    columns.append({"rank": "rank", "item": "item"})
    messages = []
    for named in columns:
        check = distinct_within(frame, partition, named, "ranking")
        result = message_frame(check).collect(backend="polars")
        messages.append(result.item())
    return messages


def _same_messages(
    native_of: Any, rows: list[tuple[int, str, int, str]], partition: list[str]
) -> None:
    schema = {"query": pl.Int64, "block": pl.String, "rank": pl.Int64, "item": pl.String}
    data = pl.DataFrame(rows, schema=schema, orient="row")
    expected = _messages(nw.from_native(data.lazy()), partition)
    assert _messages(nw.from_native(native_of(data.to_arrow())), partition) == expected


@pytest.mark.parametrize("partition", PARTITIONS.values(), ids=list(PARTITIONS))
@pytest.mark.parametrize("rows", DISTINCT.values(), ids=list(DISTINCT))
def test_duckdb_finds_the_repeats_polars_finds(
    rows: list[tuple[int, str, int, str]], partition: list[str]
) -> None:
    _same_messages(duckdb.from_arrow, rows, partition)


# On Spark each case with one partition in turn (every case and every partition run; its
# queries take a second each, DuckDB's a few milliseconds)
_TURNS = zip(DISTINCT.items(), itertools.cycle(PARTITIONS.items()))
SPARK_CASES = [
    pytest.param(rows, partition, id=f"{case}-{name}") for (case, rows), (name, partition) in _TURNS
]


@pytest.mark.spark
@pytest.mark.parametrize(("rows", "partition"), SPARK_CASES)
def test_spark_finds_the_repeats_polars_finds(
    spark_session: Any, rows: list[tuple[int, str, int, str]], partition: list[str]
) -> None:
    _same_messages(spark_session.createDataFrame, rows, partition)
