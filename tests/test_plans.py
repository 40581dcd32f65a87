"""The engine-specific plan steps give every engine's answer: Spark's and DuckDB's checked against
Polars'."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import duckdb
import narwhals.stable.v2 as nw
import numpy as np
import polars as pl
import pytest

import frameaudit
from frameaudit._engine import plans
from frameaudit._engine.checks import message_frame
from frameaudit._expr import WHOLE, distinct, partitioned
from frameaudit._validate import distinct_within
from tests.reference import clustering as clustering_ref

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


# --- distinct rows -------------------------------------------------------------------------------

ROWS = pl.DataFrame(
    {
        "g": ["a", "b", "a", None, None, "a", "b"],
        "x": [1.0, float("nan"), 1.0, 2.0, 2.0, float("nan"), float("nan")],
        "k": [1, 2, 1, None, None, 3, 2],
    }
)
# by hand: (a, 1.0, 1) twice, (b, NaN, 2) twice, (None, 2.0, None) twice, (a, NaN, 3) once
DISTINCT_ROWS = {("a", 1.0, 1), ("b", "nan", 2), (None, 2.0, None), ("a", "nan", 3)}


def _distinct_rows(native: Any) -> set[tuple[Any, ...]]:
    rows = distinct(nw.from_native(native)).collect(backend="polars").rows()
    return {tuple(_named_nan(v) for v in row) for row in rows}


def _named_nan(value: Any) -> Any:
    return "nan" if isinstance(value, float) and math.isnan(value) else value


def test_distinct_rows_on_polars_and_duckdb() -> None:
    """Nulls and NaN are values like any other: each distinct row once, on either engine."""
    assert _distinct_rows(ROWS.lazy()) == DISTINCT_ROWS
    assert _distinct_rows(duckdb.from_arrow(ROWS.to_arrow())) == DISTINCT_ROWS


def test_distinct_rows_group_on_duckdb() -> None:
    """A grouping, not narwhals' ``row_number()`` window, which sorts every partition."""
    sql = distinct(nw.from_native(duckdb.from_arrow(ROWS.to_arrow()))).to_native().sql_query()
    assert "GROUP BY" in sql
    assert "row_number" not in sql


@pytest.mark.spark
def test_distinct_rows_on_spark(spark_session: Any) -> None:
    native = spark_session.createDataFrame(ROWS.to_arrow())
    assert _distinct_rows(native) == DISTINCT_ROWS
    plan = distinct(nw.from_native(native)).to_native()._jdf.queryExecution().analyzed()
    assert "row_number" not in plan.toString()


def test_the_lazy_layers_take_distinct_rows_through_distinct() -> None:
    """No ``.unique()`` on a lazy frame below the faces (:func:`frameaudit._expr.distinct`)."""
    package = Path(frameaudit.__file__).parent
    folders = ("_engine", "fair", "repro", "explain")
    lazy = [package / "_validate.py", *(package / folder for folder in folders)]
    found = [
        f"{path.relative_to(package)}:{number}"
        for root in lazy
        for path in ([root] if root.is_file() else sorted(root.glob("*.py")))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if ".unique(" in line
    ]
    assert found == []


# --- the nearest of a few centroids --------------------------------------------------------------

# coordinates at several scales and centroids whose shortest texts take 17 digits, a signed zero
# and exponents: written into DuckDB's query, each must read back as the same double
_RNG = np.random.default_rng(11)
_X = _RNG.normal(size=(40, 3)) * [1.0, 1e-7, 1e3]
_X = np.vstack([_X, _X[:7]])  # seven points twice: the join collapses them, with weight 2
_CENTRES = np.vstack(
    [
        [0.1, 1 / 3, -2.5e-7],
        [1.2345678901234567, -0.0, 5e-9],
        _RNG.normal(size=(3, 3)) * [1.0, 1e-7, 1e3],
    ]
)
_FEATURES = ["x0", "x1", "x2"]


def _nearest(
    engine: str, centres: np.ndarray, *, part: list[int] | None = None
) -> tuple[list[tuple[int, float]], str]:
    """nearest_distances of the points (each of weight 1, with its part, a key kept) on
    ``engine``: each point's (part, distance) as many times as its total, and the query's
    text (DuckDB)."""
    points = pl.DataFrame(
        {"part": part or [0] * len(_X), **dict(zip(_FEATURES, _X.T, strict=True))}
    )
    centroids = pl.DataFrame(dict(zip(_FEATURES, centres.T, strict=True)))
    on = ["part"] if part else [WHOLE]
    if part:  # each part has every centroid
        centroids = pl.concat([centroids.with_columns(part=pl.lit(p)) for p in sorted(set(part))])
    else:
        centroids = centroids.with_columns(pl.lit(0).alias(WHOLE))
        points = points.with_columns(pl.lit(0).alias(WHOLE))
    if engine == "duckdb":
        connection = duckdb.connect()
        frames = [nw.from_native(connection.from_arrow(f.to_arrow())) for f in (points, centroids)]
    else:
        frames = [nw.from_native(f.lazy()) for f in (points, centroids)]
    result = plans.nearest_distances(
        frames[0],
        frames[1],
        keep=sorted({"part", *on}),
        on=on,
        features=_FEATURES,
        weight=None,
        total="total",
        distance="distance",
    )
    rows = result.select("part", "total", "distance").collect(backend="polars").rows()
    expanded = sorted((p, d) for p, total, d in rows for _ in range(total))
    return expanded, result.to_native().sql_query() if engine == "duckdb" else ""


def _expected(centres: np.ndarray, part: list[int] | None = None) -> list[tuple[int, float]]:
    distances = clustering_ref.nearest_distances(_X, centres)
    return sorted(zip(part or [0] * len(_X), distances.tolist(), strict=True))


@pytest.mark.parametrize("terms", [plans._LITERAL_TERMS, 0], ids=["literals", "join"])
def test_duckdb_nearest_distances_have_the_bits_of_the_squares_added_in_order(
    terms: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the centroids written into the query or joined: the same bits as the squares
    (x − c)·(x − c) added feature by feature, and each point counted once."""
    monkeypatch.setattr(plans, "_LITERAL_TERMS", terms)
    got, query = _nearest("duckdb", _CENTRES)
    assert got == _expected(_CENTRES)
    assert ("__fa_c0" in query) is (terms == 0)
    assert ("least(" in query) is (terms > 0)


def test_polars_nearest_distances_join_the_centroids() -> None:
    """Polars' plan joins them (never reading the centroids to build it), with the same bits."""
    got, _ = _nearest("polars", _CENTRES)
    assert got == _expected(_CENTRES)


@pytest.mark.parametrize(
    ("case", "centres", "part"),
    [
        ("a centroid not finite", np.vstack([_CENTRES, [[np.nan, 0.0, 0.0]]]), None),
        ("two partitions", _CENTRES, [0, 1] * (len(_X) // 2) + [0] * (len(_X) % 2)),
        ("more terms than written", np.tile(_CENTRES, (18, 1)), None),
    ],
)
def test_duckdb_nearest_distances_join_what_they_do_not_write(
    case: str, centres: np.ndarray, part: list[int] | None
) -> None:
    """A centroid that is not finite (its check fails when the result is read), centroids per
    partition, or more than _LITERAL_TERMS (centroid, feature) terms: the join."""
    got, query = _nearest("duckdb", centres, part=part)
    assert "__fa_c0" in query, case
    if case != "a centroid not finite":
        assert got == _expected(centres, part), case


def test_the_docs_give_the_most_terms_written() -> None:
    """social_fairness_ratio's notes say how many centroid coordinates DuckDB writes in."""
    doc = " ".join((frameaudit.fair.social_fairness_ratio.__doc__ or "").split())
    assert f"centroids × features up to {plans._LITERAL_TERMS})" in doc
