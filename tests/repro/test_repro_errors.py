"""Bad input to the reproducibility metrics: one row per case, error class and message asserted.

Schema problems (names, dtypes, parameters) raise when the metric is called; value problems
(too few runs, missing or repeated predictions, a target that changes, nulls, NaN labels) raise
when the result is computed — for a lazy frame at ``collect()``; the call itself reads no data.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, NamedTuple

import polars as pl
import pytest
from conftest import CONSTRUCTORS, Constructor, to_polars

import frameaudit as fa
from frameaudit import (
    ColumnNotFoundError,
    FrameAuditError,
    InvalidDtypeError,
    InvalidParameterError,
    InvalidValueError,
)
from frameaudit.repro import pairwise
from tests.calls import arguments, names

BASE = pl.DataFrame(
    {
        "part": ["x"] * 6 + ["y"] * 6,
        "run": [1, 1, 1, 2, 2, 2] * 2,
        "sample": [10, 11, 12] * 4,
        "target": [0, 1, 1] * 4,
        "prediction": [0, 1, 0, 1, 1, 1, 0, 0, 1, 0, 1, 1],
        "value": [0.5, 1.0, 2.0] * 4,
        "guess": [0.0, 1.5, 2.0, 0.5, 0.5, 2.5] * 2,
    }
)
X = BASE.filter(pl.col("part") == "x")


class Case(NamedTuple):
    id: str
    frame: pl.DataFrame
    options: dict[str, Any]
    error: type[FrameAuditError]
    match: str


def _set(frame: pl.DataFrame, column: str, row: int, value: Any) -> pl.DataFrame:
    cell = pl.when(pl.int_range(pl.len()) == row).then(pl.lit(value)).otherwise(pl.col(column))
    return frame.with_columns(cell.alias(column))


SCHEMA_CASES = [
    Case(
        "missing-column", X, {"run": "runs"}, ColumnNotFoundError, r"run='runs'.*did you mean 'run'"
    ),
    Case("missing-by", X, {"by": "prt"}, ColumnNotFoundError, r"by='prt'.*did you mean 'part'"),
    Case(
        "label-dtypes",
        X.with_columns(pl.col("prediction").cast(pl.String)),
        {},
        InvalidDtypeError,
        r"target='target' \(Int64\) and prediction='prediction' \(String\): expected class labels",
    ),
    Case(
        "empty-union",
        X,
        {"empty_union": "nan"},
        InvalidParameterError,
        r"empty_union='nan'.*null, 0, 1",
    ),
    Case("empty-union-bool", X, {"empty_union": True}, InvalidParameterError, r"empty_union=True"),
    Case(
        "by-clash",
        X.rename({"part": "metric"}),
        {"by": "metric"},
        InvalidParameterError,
        r"'metric' is an output column",
    ),
    Case("by-list", X, {"by": []}, InvalidParameterError, r"by=\[\]: expected a column name"),
]


@pytest.mark.parametrize("case", SCHEMA_CASES, ids=[c.id for c in SCHEMA_CASES])
def test_schema_errors_raise_at_call_time(case: Case) -> None:
    with pytest.raises(case.error, match=case.match):
        fa.repro.ec_local(case.frame.lazy(), **case.options)


def test_residual_schema_errors() -> None:
    strings = X.with_columns(pl.col("target").cast(pl.String))
    with pytest.raises(InvalidDtypeError, match=r"target='target': expected a column of numeric"):
        fa.repro.residual_consistency(strings.lazy())
    with pytest.raises(
        InvalidParameterError, match=r"method='ratio_diff'.*did you mean 'ratio-diff'"
    ):
        fa.repro.residual_consistency(X.lazy(), method="ratio_diff")  # type: ignore[arg-type]


one_run = X.filter(pl.col("run") == 1)
VALUE_CASES = [
    Case(
        "one-run",
        one_run,
        {},
        InvalidValueError,
        r"run='run': at least two runs are needed to compare, found 1$",
    ),
    Case(
        "one-run-in-a-partition",
        BASE.filter((pl.col("part") == "x") | (pl.col("run") == 2)),
        {"by": "part"},
        InvalidValueError,
        r"found fewer in 1 partition\(s\) \(e.g. part='y'\)",
    ),
    Case(
        "missing-sample",
        X.filter(~((pl.col("run") == 2) & (pl.col("sample") == 11))),
        {},
        InvalidValueError,
        r"run='run': 1 sample\(s\) are not predicted by every run \(e.g. sample=11\)",
    ),
    Case(
        "predicted-twice",
        pl.concat([X, X.head(2)]),
        {},
        InvalidValueError,
        r"sample='sample': 2 sample\(s\) are predicted more than once by one run "
        r"\(e.g. sample=10\)",
    ),
    Case(
        "twice-in-a-partition",
        pl.concat([BASE, BASE.tail(1)]),
        {"by": "part"},
        InvalidValueError,
        r"1 sample\(s\) are predicted more than once by one run \(e.g. part=y, sample=12\)",
    ),
    Case(
        "target-differs",
        _set(X, "target", 4, 0),
        {},
        InvalidValueError,
        r"target='target': 1 sample\(s\) have a target that differs between runs "
        r"\(e.g. sample=11\)",
    ),
    Case(
        "null-run",
        _set(X, "run", 0, None),
        {},
        InvalidValueError,
        r"run='run': column 'run' holds 1 null",
    ),
    Case(
        "null-sample", _set(X, "sample", 0, None), {}, InvalidValueError, r"sample='sample'.*1 null"
    ),
    Case(
        "null-target", _set(X, "target", 0, None), {}, InvalidValueError, r"target='target'.*1 null"
    ),
    Case(
        "null-prediction",
        _set(X, "prediction", 5, None),
        {},
        InvalidValueError,
        r"prediction='prediction'.*1 null",
    ),
    Case(
        "null-by",
        _set(BASE, "part", 0, None),
        {"by": "part"},
        InvalidValueError,
        r"by='part'.*1 null",
    ),
    Case(
        "nan-label",
        _set(X.with_columns(pl.col("prediction").cast(pl.Float64)), "prediction", 2, float("nan")),
        {},
        InvalidValueError,
        r"prediction='prediction': column 'prediction' holds 1 NaN value\(s\); class labels "
        r"must not be NaN",
    ),
    Case("empty", X.clear(), {}, InvalidValueError, r"ec_local: the frame has no rows"),
]


def _applies(case: Case, function: str) -> bool:
    """Whether ``function`` reads the column a case spoils (the multiplicity metrics read no
    target, or no prediction but a score)."""
    given = {"run", "sample", *inspect.signature(getattr(fa.repro, function)).parameters}
    given |= set(arguments(function))
    spoiled = {"target", "prediction"} & {*case.id.split("-"), *case.options}
    spoiled |= {"prediction"} if case.id == "nan-label" else set()
    return spoiled <= given and not ("score" in given and case.id == "nan-label")


# one pairwise metric and every function over all runs at once
VALUE_CALLS = [
    (case, function)
    for function in ["ec_local", *names("repro", "single", "table")]
    for case in VALUE_CASES
    if _applies(case, function)
]


@pytest.mark.parametrize(
    ("case", "function"), VALUE_CALLS, ids=[f"{f}-{c.id}" for c, f in VALUE_CALLS]
)
def test_value_errors_raise_when_computed(case: Case, function: str) -> None:
    options = {**arguments(function), **case.options}
    result = getattr(fa.repro, function)(case.frame.lazy(), **options)  # reads no data
    match = case.match.replace("ec_local:", f"{function}:")
    with pytest.raises(case.error, match=match):
        result.collect()
    with pytest.raises(case.error, match=match):
        getattr(fa.repro, function)(case.frame, **options)


@pytest.mark.parametrize("name", ["pandas", "pyarrow", "duckdb"])
@pytest.mark.parametrize(
    "case",
    [
        c
        for c in VALUE_CASES
        if c.id in ("one-run", "missing-sample", "target-differs", "null-target")
    ],
    ids=lambda c: c.id,
)
def test_value_errors_on_other_backends(name: str, case: Case) -> None:
    frame = CONSTRUCTORS[name](case.frame)
    with pytest.raises(case.error, match=case.match):
        to_polars(fa.repro.summary(frame, **case.options))


def test_regression_target_that_is_nan_in_one_run_only() -> None:
    frame = _set(X, "value", 0, float("nan"))
    with pytest.raises(InvalidValueError, match=r"target='value': 1 sample\(s\) have a target"):
        fa.repro.residual_consistency(frame, target="value", prediction="guess")
    # NaN in every run of a sample is one (NaN) target: it propagates instead
    both = _set(_set(X, "value", 0, float("nan")), "value", 3, float("nan"))
    row = fa.repro.residual_consistency(both, target="value", prediction="guess")
    assert to_polars(row)["residual_consistency"].is_nan().all()


ALWAYS: list[Callable[[pl.DataFrame], Any]] = [
    fa.repro.cramers_v,
    lambda f: fa.repro.residual_consistency(f, target="value", prediction="guess"),
]


@pytest.mark.parametrize("call", ALWAYS)
def test_errors_are_frameaudit_errors_and_value_errors(call: Callable[[pl.DataFrame], Any]) -> None:
    with pytest.raises(FrameAuditError) as info:
        call(pl.concat([X, X.head(1)]))
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("function", ["cramers_v", "summary"])
def test_more_class_cells_than_one_key_numbers_is_an_error_on_every_engine(
    constructor: Constructor, function: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # X: 2 runs and 2 classes, R(R-1)/2 * C^2 = 4 cells; the bound is lowered around it
    monkeypatch.setattr(pairwise, "_MOST_CELLS", 3)
    match = (
        rf"^{function}: runs=2, classes=2 are too many for Cramér's V: one 64-bit key "
        r"numbers each cell .* there may be at most 3; compute it on fewer runs"
    )
    with pytest.raises(InvalidValueError, match=match):
        to_polars(getattr(fa.repro, function)(constructor(X)))
    monkeypatch.setattr(pairwise, "_MOST_CELLS", 4)
    assert to_polars(getattr(fa.repro, function)(constructor(X))).height > 0
