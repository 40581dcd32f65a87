"""Input validation shared by every metric family.

Two kinds of check:

* **schema checks** (column names, dtypes, parameter values) run at call time and read no
  data, so a lazy call stays lazy;
* **value checks** (nulls, ranges, duplicates, ties, unmapped items) are :class:`Check`
  objects: a lazy one-row frame of violation counts plus a function that turns that row into an
  error. :func:`frameaudit._engine.from_engine` runs them with the result.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import narwhals.stable.v2 as nw

from frameaudit.exceptions import (
    FrameAuditError,
    InvalidDtypeError,
    InvalidParameterError,
    InvalidValueError,
)

__all__ = [
    "Check",
    "as_names",
    "binary",
    "choice",
    "distinct_within",
    "in_range",
    "no_nulls",
    "non_empty",
    "number_in_range",
    "offending",
    "require_dtype",
    "unique_within",
]

_KEY = "__fa_check_key"


@dataclass(frozen=True)
class Check:
    """A lazy one-row frame of violation counts and the error it means."""

    frame: nw.LazyFrame[Any]
    error: Callable[[Mapping[str, Any]], FrameAuditError | None]


def as_names(value: str | Sequence[str] | None, parameter: str) -> list[str]:
    """Normalise a column-role argument (a name, a list of names, or None) to a list."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    names = list(value)
    if not names or not all(isinstance(v, str) for v in names):
        msg = f"{parameter}={value!r}: expected a column name or a non-empty list of column names"
        raise InvalidParameterError(msg)
    return names


def choice(parameter: str, value: Any, allowed: Sequence[Any]) -> None:
    """Raise unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        raise InvalidParameterError.choice(parameter, value, allowed)


def number_in_range(
    parameter: str,
    value: Any,
    low: float,
    high: float,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Check a numeric parameter against an interval and return it as a float."""
    interval = f"{'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        msg = f"{parameter}={value!r}: expected a number in {interval}, got {type(value).__name__}"
        raise InvalidParameterError(msg)
    number = float(value)
    below = number < low or (low_open and number == low)
    above = number > high or (high_open and number == high)
    if math.isnan(number) or below or above:
        msg = f"{parameter}={value!r}: expected a number in {interval}"
        raise InvalidParameterError(msg)
    return number


_KINDS: dict[str, Callable[[Any], bool]] = {
    "numeric": lambda d: d.is_numeric(),
    "integer": lambda d: d.is_integer(),
}


def require_dtype(
    frame: nw.LazyFrame[Any], column: str, parameter: str, kind: str
) -> None:
    """Raise unless ``column`` has a dtype of ``kind`` ("numeric" or "integer")."""
    dtype = frame.collect_schema()[column]
    if not _KINDS[kind](dtype):
        msg = f"{parameter}={column!r}: expected a column of {kind} dtype, found {dtype}"
        raise InvalidDtypeError(msg)


def _with_example(
    counts: nw.LazyFrame[Any], offenders: nw.LazyFrame[Any], keys: Sequence[str]
) -> nw.LazyFrame[Any]:
    """Attach the first offending key values (in key order) to a one-row counts frame."""
    example = (
        offenders.select(nw.col(k).alias(f"example_{i}") for i, k in enumerate(keys))
        .sort([f"example_{i}" for i in range(len(keys))], nulls_last=True)
        .head(1)
        .with_columns(nw.lit(0).alias(_KEY))
    )
    return counts.with_columns(nw.lit(0).alias(_KEY)).join(example, on=_KEY, how="left").drop(_KEY)


def _example_text(row: Mapping[str, Any], keys: Sequence[str]) -> str:
    """The offending key values, leaving out frameaudit's internal columns."""
    return ", ".join(
        f"{k}={row[f'example_{i}']!r}" for i, k in enumerate(keys) if not k.startswith("__fa_")
    )


def non_empty(frame: nw.LazyFrame[Any], metric: str) -> Check:
    """The frame has at least one row."""

    def error(row: Mapping[str, Any]) -> FrameAuditError | None:
        if row["n"] == 0:
            return InvalidValueError(f"{metric}: the frame has no rows")
        return None

    return Check(frame.select(nw.len().alias("n")), error)


def no_nulls(frame: nw.LazyFrame[Any], columns: Mapping[str, str]) -> Check:
    """No nulls in any role column. ``columns`` maps column name to parameter name."""
    names = list(columns)

    def error(row: Mapping[str, Any]) -> FrameAuditError | None:
        for i, column in enumerate(names):
            count = row[f"nulls_{i}"]
            if count:
                msg = (
                    f"{columns[column]}={column!r}: column {column!r} holds {count} null "
                    "value(s); role columns must not be null (drop or fill them first)"
                )
                return InvalidValueError(msg)
        return None

    counts = frame.select(
        nw.col(c).null_count().cast(nw.Int64).alias(f"nulls_{i}") for i, c in enumerate(names)
    )
    return Check(counts, error)


def in_range(
    frame: nw.LazyFrame[Any],
    column: str,
    parameter: str,
    low: float | None,
    high: float | None,
) -> Check:
    """Every value of ``column`` lies in [low, high] (a None bound is open); NaN is outside."""
    bad = nw.col(column).is_nan() if frame.collect_schema()[column].is_float() else nw.lit(False)
    if low is not None:
        bad = bad | (nw.col(column) < low)
    if high is not None:
        bad = bad | (nw.col(column) > high)
    offenders = frame.filter(bad)
    counts = offenders.select(nw.len().alias("n"))
    interval = f"[{'-inf' if low is None else low}, {'inf' if high is None else high}]"

    def error(row: Mapping[str, Any]) -> FrameAuditError | None:
        if row["n"]:
            msg = (
                f"{parameter}={column!r}: expected values in {interval}, found {row['n']} "
                f"outside it (e.g. {row['example_0']!r})"
            )
            return InvalidValueError(msg)
        return None

    return Check(_with_example(counts, offenders, [column]), error)


def binary(frame: nw.LazyFrame[Any], column: str, parameter: str, metric: str) -> Check:
    """Every value of ``column`` is exactly 0 or 1."""
    value = nw.col(column).cast(nw.Float64)
    offenders = frame.filter(((value != 0.0) & (value != 1.0)) | value.is_nan())
    counts = offenders.select(nw.len().alias("n"))

    def error(row: Mapping[str, Any]) -> FrameAuditError | None:
        if row["n"]:
            msg = (
                f"{parameter}={column!r}: {metric} needs binary relevance (exactly 0 or 1), "
                f"found {row['n']} other value(s) (e.g. {row['example_0']!r})"
            )
            return InvalidValueError(msg)
        return None

    return Check(_with_example(counts, offenders, [column]), error)


def unique_within(
    frame: nw.LazyFrame[Any], keys: Sequence[str], what: str, hint: str = ""
) -> Check:
    """No two rows share the values of ``keys`` (e.g. one position twice in one ranking)."""
    keys = list(keys)
    offenders = frame.group_by(keys).agg(nw.len().alias("__fa_n")).filter(nw.col("__fa_n") > 1)
    counts = offenders.select(nw.len().alias("n"))
    shown = [k for k in keys if not k.startswith("__fa_")]

    def error(row: Mapping[str, Any]) -> FrameAuditError | None:
        if row["n"]:
            example = _example_text(row, keys)
            msg = f"{what}: {row['n']} duplicated combination(s) of ({', '.join(shown)})"
            if example:
                msg += f", e.g. {example}"
            if hint:
                msg += f"; {hint}"
            return InvalidValueError(msg)
        return None

    return Check(_with_example(counts, offenders, keys), error)


def distinct_within(
    frame: nw.LazyFrame[Any], partition: Sequence[str], columns: Mapping[str, str], within: str
) -> Check:
    """Within each partition (a ``within``, e.g. "ranking"), the columns have distinct values.

    ``columns`` maps each column to the parameter that named it.

    One aggregation per partition (row count against distinct count) checks all the columns at
    once, far cheaper than grouping by every (partition, value) pair.
    """
    partition = list(partition)
    names = list(columns)
    per_partition = frame.group_by(partition).agg(
        nw.len().alias("__fa_n"),
        *(nw.col(c).n_unique().alias(f"__fa_u{i}") for i, c in enumerate(names)),
    )
    combined: nw.LazyFrame[Any] | None = None
    for i in range(len(names)):
        bad = per_partition.filter(nw.col(f"__fa_u{i}") < nw.col("__fa_n"))
        summary = _with_example(bad.select(nw.len().alias("n")), bad, partition)
        summary = summary.select(nw.all().name.prefix(f"c{i}_"))
        combined = summary if combined is None else combined.join(summary, how="cross")
    assert combined is not None

    def error(row: Mapping[str, Any]) -> FrameAuditError | None:
        for i, column in enumerate(names):
            prefix = f"c{i}_"
            own = {k.removeprefix(prefix): val for k, val in row.items() if k.startswith(prefix)}
            if own["n"]:
                msg = (
                    f"{columns[column]}={column!r}: values must be unique within each {within}; "
                    f"{own['n']} {within}(s) repeat a value"
                )
                example = _example_text(own, partition)
                if example:
                    msg += f" (e.g. {example})"
                return InvalidValueError(msg)
        return None

    return Check(combined, error)


def offending(
    offenders: nw.LazyFrame[Any],
    keys: Sequence[str],
    error: Callable[[int, Mapping[str, Any]], FrameAuditError],
) -> Check:
    """Fail when ``offenders`` has rows; ``error(count, first)`` builds the error.

    ``first`` maps each of ``keys`` to its value in the first offending row (in key order), so a
    message can show an example with whatever context columns the offenders carry.
    """
    keys = list(keys)
    counts = offenders.select(nw.len().alias("n"))

    def build(row: Mapping[str, Any]) -> FrameAuditError | None:
        if not row["n"]:
            return None
        return error(row["n"], {k: row[f"example_{i}"] for i, k in enumerate(keys)})

    return Check(_with_example(counts, offenders, keys), build)
