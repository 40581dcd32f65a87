"""Bad input to the fair-ranking metrics: one row per case, class and message asserted.

Schema problems (names, dtypes, parameters) raise when the metric is called; value problems
(nulls, ties, duplicates, ranges, unmapped items) raise when the result is computed — for a
lazy frame at ``collect()``, and the call itself reads no data.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, NamedTuple

import polars as pl
import pytest
from conftest import to_polars
from reference.ranking import COMBOS, explicit_size

import frameaudit as fa
from frameaudit import (
    ColumnNotFoundError,
    FrameAuditError,
    InvalidDtypeError,
    InvalidParameterError,
    InvalidValueError,
    Metric,
    UnsupportedBackendError,
)
from tests.calls import arguments

BASE = pl.DataFrame(
    {
        "query": [0, 0, 0, 1, 1, 1],
        "rank": [1, 2, 3, 1, 2, 3],
        "item": [1, 2, 3, 1, 2, 3],
        "group": ["a", "b", "a", "a", "b", "a"],
        "relevance": [0.5, 1.0, 0.0, 0.25, 0.75, 1.0],
        "ctr": [0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
        "binary": [1, 0, 1, 0, 1, 1],
    }
)
MAPPING = {1: "a", 2: "b", 3: "a"}


def at(column: str, value: Any, row: int = 1) -> Callable[[pl.DataFrame], pl.DataFrame]:
    """Put ``value`` in one cell of ``column`` (row 1: query 0, rank 2)."""

    def change(frame: pl.DataFrame) -> pl.DataFrame:
        index = pl.int_range(pl.len())
        cell = pl.when(index == row).then(pl.lit(value)).otherwise(pl.col(column))
        return frame.with_columns(cell.alias(column))

    return change


def same(frame: pl.DataFrame) -> pl.DataFrame:
    return frame


class Case(NamedTuple):
    """A bad input: the metric, how the frame changes, its arguments, the expected error."""

    name: str
    metric: str
    change: Callable[[pl.DataFrame], pl.DataFrame]
    kwargs: dict[str, Any]
    error: type[FrameAuditError]
    fragments: list[str]


SCHEMA_CASES = [
    Case(
        "missing rank column, did-you-mean",
        "exp",
        same,
        {"rank": "rnak"},
        ColumnNotFoundError,
        ["rank='rnak'", "not found", "available: query, rank", "did you mean 'rank'?"],
    ),
    Case(
        "missing group column, did-you-mean",
        "arp",
        same,
        {"group": "gruop"},
        ColumnNotFoundError,
        ["group='gruop'", "did you mean 'group'?"],
    ),
    Case(
        "missing relevance column",
        "expu",
        same,
        {"relevance": "rel_score"},
        ColumnNotFoundError,
        ["relevance='rel_score'", "not found"],
    ),
    Case(
        "missing by column",
        "ndkl",
        same,
        {"by": "segment"},
        ColumnNotFoundError,
        ["by='segment'", "not found"],
    ),
    Case(
        "mapping frame without the group column",
        "exp",
        same,
        {"item": "item", "groups": pl.DataFrame({"item": [1, 2, 3], "grp": ["a", "b", "a"]})},
        ColumnNotFoundError,
        ["group='group'", "not found in groups", "did you mean 'grp'?"],
    ),
    Case(
        "float rank",
        "ndkl",
        lambda f: f.with_columns(pl.col("rank").cast(pl.Float64)),
        {},
        InvalidDtypeError,
        ["rank='rank'", "integer", "Float64", "pl.col('rank').cast(pl.Int64)", ".astype('int64')"],
    ),
    Case(
        "string relevance",
        "expu",
        lambda f: f.with_columns(pl.col("relevance").cast(pl.String)),
        {},
        InvalidDtypeError,
        ["relevance='relevance'", "numeric", "String", "cast(pl.Float64)", ".astype('float64')"],
    ),
    Case(
        "string ctr",
        "expru",
        lambda f: f.with_columns(pl.col("ctr").cast(pl.String)),
        {},
        InvalidDtypeError,
        ["ctr='ctr'", "numeric", "String"],
    ),
    Case("p = 0", "awrf", same, {"p": 0}, InvalidParameterError, ["p=0", "(0.0, 1.0]"]),
    Case("p > 1", "awrf", same, {"p": 1.5}, InvalidParameterError, ["p=1.5", "(0.0, 1.0]"]),
    Case("p not a number", "awrf", same, {"p": "0.5"}, InvalidParameterError, ["p='0.5'", "str"]),
    Case("decay = 1", "erbe", same, {"decay": 1}, InvalidParameterError, ["decay=1", "[0.0, 1.0)"]),
    Case(
        "decay < 0",
        "erbp",
        same,
        {"decay": -0.1},
        InvalidParameterError,
        ["decay=-0.1", "[0.0, 1.0)"],
    ),
    Case(
        "decay NaN",
        "erbr",
        same,
        {"decay": float("nan"), "relevance": "binary"},
        InvalidParameterError,
        ["decay=nan", "[0.0, 1.0)"],
    ),
    Case(
        "unknown combo lists the seven",
        "exp",
        same,
        {"combo": "MinMax"},
        InvalidParameterError,
        ["combo='MinMax'", *COMBOS, "did you mean 'MinMaxRatio'?"],
    ),
    Case(
        "unknown combo, wrong case",
        "arp",
        same,
        {"combo": "ltwo"},
        InvalidParameterError,
        ["combo='ltwo'", *COMBOS],
    ),
    Case(
        "groups= without item=",
        "exp",
        same,
        {"groups": MAPPING},
        InvalidParameterError,
        ["item=None", "groups="],
    ),
    Case(
        "groups= with intersectional group",
        "erbe",
        same,
        {"item": "item", "groups": MAPPING, "group": ["group", "query"]},
        InvalidParameterError,
        ["group=['group', 'query']", "groups="],
    ),
    Case(
        "empty mapping",
        "exp",
        same,
        {"item": "item", "groups": {}},
        InvalidParameterError,
        ["groups={}", "empty"],
    ),
]

VALUE_CASES = [
    Case(
        "null rank",
        "exp",
        at("rank", None),
        {},
        InvalidValueError,
        ["rank='rank'", "1 null value(s)"],
    ),
    Case(
        "null group",
        "ndkl",
        at("group", None),
        {},
        InvalidValueError,
        ["group='group'", "1 null value(s)"],
    ),
    Case(
        "null ranking",
        "arp",
        at("query", None),
        {},
        InvalidValueError,
        ["ranking='query'", "1 null value(s)"],
    ),
    Case(
        "null relevance",
        "iaa",
        at("relevance", None),
        {},
        InvalidValueError,
        ["relevance='relevance'", "1 null value(s)"],
    ),
    Case(
        "null item",
        "erbp",
        at("item", None),
        {"item": "item"},
        InvalidValueError,
        ["item='item'", "1 null value(s)"],
    ),
    Case(
        "tied positions",
        "exp",
        at("rank", 1),
        {},
        InvalidValueError,
        ["rank='rank'", "unique within each ranking", "1 ranking(s)", "query=0"],
    ),
    Case(
        "tied positions, ARP",
        "arp",
        at("rank", 3, row=4),
        {},
        InvalidValueError,
        ["rank='rank'", "unique within each ranking", "query=1"],
    ),
    Case(
        "duplicate item in a ranking",
        "awrf",
        at("item", 1),
        {"item": "item"},
        InvalidValueError,
        ["item='item'", "unique within each ranking", "1 ranking(s)", "query=0"],
    ),
    Case(
        "rank below 1",
        "erbe",
        at("rank", 0),
        {},
        InvalidValueError,
        ["rank='rank'", "[1, inf]", "found 1 outside", "e.g. 0"],
    ),
    Case(
        "relevance above 1",
        "expu",
        at("relevance", 1.5),
        {},
        InvalidValueError,
        ["relevance='relevance'", "[0, 1]", "found 1 outside", "1.5"],
    ),
    Case(
        "relevance below 0",
        "iaa",
        at("relevance", -0.25),
        {},
        InvalidValueError,
        ["relevance='relevance'", "[0, 1]", "-0.25"],
    ),
    Case(
        "relevance NaN",
        "expru",
        at("relevance", float("nan")),
        {},
        InvalidValueError,
        ["relevance='relevance'", "[0, 1]", "NaN"],
    ),
    Case(
        "ctr above 1",
        "expru",
        at("ctr", 2.0),
        {},
        InvalidValueError,
        ["ctr='ctr'", "[0, 1]", "found 1 outside", "2.0"],
    ),
    Case(
        "non-binary relevance for ERBR",
        "erbr",
        same,
        {},
        InvalidValueError,
        ["relevance='relevance'", "ERBR", "exactly 0 or 1", "found 3", "0.25"],
    ),
    Case(
        "ranked item missing from groups=",
        "exp",
        same,
        {"item": "item", "groups": {1: "a", 2: "b"}},
        InvalidValueError,
        ["groups=", "2 ranked row(s)", "item=3", "missing from the mapping"],
    ),
    Case(
        "ranked item missing from a groups= frame",
        "ndkl",
        same,
        {"item": "item", "groups": pl.DataFrame({"item": [1, 3], "group": ["a", "a"]})},
        InvalidValueError,
        ["groups=", "item=2", "missing from the mapping"],
    ),
    Case(
        "item in two groups of the mapping",
        "arp",
        same,
        {
            "item": "item",
            "groups": pl.DataFrame({"item": [1, 2, 3, 3], "group": ["a", "b", "a", "b"]}),
        },
        InvalidValueError,
        ["groups=", "item=3", "one group only"],
    ),
    Case("no rows", "iaa", lambda f: f.head(0), {}, InvalidValueError, ["iaa", "no rows"]),
]


def call(metric: str, frame: Any, kwargs: dict[str, Any]) -> Any:
    return getattr(fa.fair, metric)(frame, **explicit_size(metric, {"ranking": "query", **kwargs}))


def _check(error: pytest.ExceptionInfo[FrameAuditError], fragments: list[str]) -> None:
    message = str(error.value)
    for fragment in fragments:
        assert fragment in message, (fragment, message)


@pytest.mark.parametrize("case", SCHEMA_CASES, ids=[c.name for c in SCHEMA_CASES])
@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
def test_schema_errors_raise_at_call(case: Case, *, lazy: bool) -> None:
    frame = case.change(BASE)
    with pytest.raises(case.error) as raised:
        call(case.metric, frame.lazy() if lazy else frame, case.kwargs)
    _check(raised, case.fragments)


@pytest.mark.parametrize("case", VALUE_CASES, ids=[c.name for c in VALUE_CASES])
def test_value_errors(case: Case) -> None:
    with pytest.raises(case.error) as raised:
        call(case.metric, case.change(BASE), case.kwargs)
    _check(raised, case.fragments)


@pytest.mark.parametrize("case", VALUE_CASES, ids=[c.name for c in VALUE_CASES])
def test_value_errors_on_lazy_input_surface_at_collect(case: Case) -> None:
    """The call builds a plan without reading a row; collecting it raises the same error."""
    reads = []

    def spy(rank: pl.Series) -> pl.Series:
        reads.append(len(rank))
        return rank

    lazy = (
        case.change(BASE)
        .lazy()
        .with_columns(pl.col("rank").map_batches(spy, return_dtype=pl.Int64))
    )
    result = call(case.metric, lazy, case.kwargs)
    assert isinstance(result, pl.LazyFrame)
    assert reads == []
    with pytest.raises(case.error) as raised:
        result.collect()
    _check(raised, case.fragments)
    assert reads


def test_duckdb_value_errors_are_frameaudit_errors() -> None:
    """On DuckDB the checks run as one aggregate query when the metric is called."""
    import duckdb

    for case in VALUE_CASES:
        relation = duckdb.from_arrow(case.change(BASE).to_arrow())
        with pytest.raises(case.error) as raised:
            to_polars(call(case.metric, relation, case.kwargs))
        _check(raised, case.fragments)


@pytest.mark.parametrize("metric", fa.metrics("ranking", "group", "single"), ids=lambda m: m.name)
def test_valid_base_frame_raises_nothing(metric: Metric) -> None:
    """The cases above fail because of their change, not because the base frame is bad."""
    grouped = "groups" in inspect.signature(metric.function).parameters
    kwargs = {"item": "item", "groups": MAPPING} if grouped else {}
    assert call(metric.name, BASE, kwargs | arguments(metric, {"relevant": "binary"})).height


def test_unsupported_frame_type() -> None:
    with pytest.raises(
        UnsupportedBackendError, match=r"frame: unsupported frame type builtins\.dict"
    ):
        fa.fair.exp(BASE.to_dict(as_series=False))


def test_error_classes_are_value_errors() -> None:
    """``except ValueError`` keeps working for callers who do not know frameaudit."""
    with pytest.raises(ValueError, match="combo"):
        fa.fair.exp(BASE, ranking="query", size="rows", combo="Ratio")  # type: ignore[arg-type]


# Inputs that once escaped as non-frameaudit errors (or a silently wrong number).
FORMER_BUGS = [
    pytest.param(
        lambda: fa.fair.exp(BASE, ranking=3),
        id="non-name role argument",
    ),
    pytest.param(
        lambda: fa.fair.exp(BASE, ranking="query", item="item", groups={"x": "a", "y": "b"}),
        id="mapping keys of another type",
    ),
    pytest.param(
        lambda: fa.fair.exp(BASE, ranking="query", item="item", groups={1.5: "a", 2: "b", 3: "a"}),
        id="mapping key truncated onto an item",
    ),
    pytest.param(
        lambda: fa.fair.exp(BASE, ranking="query", item="item", groups={1: "a", 2: 5, 3: "a"}),
        id="mapping values of mixed types",
    ),
    pytest.param(
        lambda: fa.fair.exp(BASE, ranking="query", size="rows", group="query", by="query"),
        id="one column for two roles",
    ),
]


@pytest.mark.parametrize("bad_call", FORMER_BUGS)
def test_former_bugs_raise_frameaudit_errors(bad_call: Callable[[], Any]) -> None:
    with pytest.raises(FrameAuditError):
        to_polars(bad_call())


def test_numpy_scalar_parameters_are_numbers() -> None:
    import numpy as np

    expected = fa.fair.awrf(BASE, ranking="query", size="rows", p=0.5).item()
    assert fa.fair.awrf(BASE, ranking="query", size="rows", p=np.float32(0.5)).item() == expected
