"""Input validation shared by every metric family (narwhals only).

Two kinds of check:

* **schema checks** (column names, dtypes, parameter values) run at call time and read no
  data, so a lazy call stays lazy;
* **value checks** (nulls, ranges, duplicates, ties, unmapped items) are
  :class:`~frameaudit._engine.Check` objects: a lazy one-row frame of violation counts plus a
  function that turns that row into an error, or row :class:`~frameaudit._engine.Rule` objects
  evaluated together. This module declares them; the engine runs them with the result
  (:func:`frameaudit._engine.from_engine`).
"""

from __future__ import annotations

import datetime as dt
import difflib
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import narwhals.stable.v2 as nw

from frameaudit._engine import Check, Rule, count_distinct, is_bool, sorted_screen
from frameaudit._expr import aggregate
from frameaudit.exceptions import (
    FrameAuditError,
    InvalidDtypeError,
    InvalidParameterError,
    InvalidValueError,
)

__all__ = [
    "Check",
    "Rule",
    "as_names",
    "binary",
    "distinct_within",
    "finite",
    "group_value",
    "in_range",
    "no_nulls",
    "non_empty",
    "require_dtype",
    "row_text",
    "unique_within",
    "values_present",
]


def as_names(value: str | Sequence[str] | None, parameter: str) -> list[str]:
    """Normalise a column-role argument (a name, a list of names, or None) to a list."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    names = list(value) if isinstance(value, (list, tuple)) else []
    if not names or not all(isinstance(v, str) for v in names):
        msg = f"{parameter}={value!r}: expected a column name or a non-empty list of column names"
        raise InvalidParameterError(msg)
    return names


def _holds(dtype: Any, value: Any) -> bool | None:  # noqa: PLR0911 (one return per dtype family)
    """Whether ``value`` can be a value of a column of ``dtype``; None: no value can."""
    if isinstance(dtype, (nw.String, nw.Categorical, nw.Enum)):
        return isinstance(value, str)
    if isinstance(dtype, nw.Boolean):
        return is_bool(value)
    if dtype.is_numeric():
        return isinstance(value, numbers.Real) and not is_bool(value)
    if isinstance(dtype, nw.Datetime):
        return isinstance(value, dt.datetime)
    if isinstance(dtype, nw.Date):
        return isinstance(value, dt.date) and not isinstance(value, dt.datetime)
    if isinstance(dtype, nw.Duration):
        return isinstance(value, dt.timedelta)
    if isinstance(dtype, nw.Time):
        return isinstance(value, dt.time)
    return None


def group_value(parameter: str, value: Any, role: str, column: str, dtype: Any) -> None:
    """Raise unless ``value`` (e.g. ``a=``) can be a value of ``column`` (the ``role`` column).

    Schema only: whether the value occurs is a value check.
    """
    holds = _holds(dtype, value)
    if holds is None:
        msg = (
            f"{role}={column!r}: a column of dtype {dtype} cannot hold the compared groups; "
            "cast it to a string, numeric, boolean or temporal dtype first"
        )
        raise InvalidDtypeError(msg)
    if not holds:
        msg = (
            f"{parameter}={value!r}: expected a value of the dtype of {role}={column!r} "
            f"({dtype}), got {type(value).__name__}; a {type(value).__name__} cannot be a "
            f"value of the {role} column"
        )
        raise InvalidParameterError(msg)


def _is_key(dtype: Any) -> bool:
    """Values that every engine can group, join and sort."""
    keys = (nw.String, nw.Categorical, nw.Enum, nw.Boolean, nw.Date, nw.Datetime, nw.Duration)
    return dtype.is_numeric() or isinstance(dtype, (*keys, nw.Time))


_KINDS: dict[str, Callable[[Any], bool]] = {
    # Decimal is numeric, but NaN checks and float arithmetic refuse it
    "numeric": lambda d: d.is_numeric() and not isinstance(d, nw.Decimal),
    "integer": lambda d: d.is_integer(),
    "key": _is_key,
}
# the cast that fixes a column of the wrong dtype: (Polars dtype, pandas dtype)
_CASTS = {
    "numeric": ("Float64", "float64"),
    "integer": ("Int64", "int64"),
    "key": ("String", "str"),
}
# what the message calls each kind
_KIND_NAMES = {
    "numeric": "numeric",
    "integer": "integer",
    "key": "groupable (number, text, category, boolean or temporal)",
}


def require_dtype(frame: nw.LazyFrame[Any], column: str, parameter: str, kind: str) -> None:
    """Raise unless ``column`` has a dtype of ``kind`` ("numeric", "integer" or "key")."""
    dtype = frame.collect_schema()[column]
    if not _KINDS[kind](dtype):
        polars_dtype, pandas_dtype = _CASTS[kind]
        msg = (
            f"{parameter}={column!r}: expected a column of {_KIND_NAMES[kind]} dtype, found "
            f"{dtype}; cast "
            f"it first, e.g. pl.col({column!r}).cast(pl.{polars_dtype}) in Polars or "
            f".astype({pandas_dtype!r}) in pandas"
        )
        raise InvalidDtypeError(msg)


def _first_offender(offenders: nw.LazyFrame[Any], keys: Sequence[str]) -> dict[str, Any]:
    """The first offending key values (in key order).

    A second query, run only when a check has failed: the checks that run with every result
    count offenders and nothing more.
    """
    keys = list(keys)
    first = offenders.select(keys).sort(keys, nulls_last=True).head(1).collect()
    rows = first.rows(named=True)
    return rows[0] if rows else {}


def _example_text(row: Mapping[str, Any], keys: Sequence[str]) -> str:
    """The offending key values, leaving out frameaudit's internal columns."""
    return ", ".join(f"{k}={row[k]!r}" for k in keys if k in row and not k.startswith("__fa_"))


def _shown(example: Any) -> str:
    """An offending value for a message; the aggregation skips NaN, so a missing one is NaN."""
    return (
        "NaN"
        if example is None or (isinstance(example, float) and math.isnan(example))
        else repr(example)
    )


def row_text(columns: Sequence[str]) -> nw.Expr:
    """An offending row shown as text ("group=g1, feature=f3"), for a :class:`Rule` example.

    A rule keeps its smallest example, so the message shows the first offender in that order.
    """
    parts = [nw.concat_str(nw.lit(f"{c}="), nw.col(c).cast(nw.String)) for c in columns]
    return nw.concat_str(*parts, separator=", ")


def _rule_check(frame: nw.LazyFrame[Any], rule: Rule) -> Check:
    return Check(frame=None, error=None, base=frame, rules=(rule,))


def non_empty(frame: nw.LazyFrame[Any], metric: str) -> Check:
    """The frame has at least one row."""

    def message(_: int, __: Any, rows: int) -> str | None:
        return f"{metric}: the frame has no rows" if rows == 0 else None

    return _rule_check(frame, Rule(nw.lit(value=False), None, message, count=nw.len()))


def no_nulls(frame: nw.LazyFrame[Any], columns: Mapping[str, str]) -> Check:
    """No nulls in any role column. ``columns`` maps column name to parameter name."""

    def rule(column: str, parameter: str) -> Rule:
        def message(count: int, _: Any, __: int) -> str | None:
            if not count:
                return None
            return (
                f"{parameter}={column!r}: column {column!r} holds {count} null "
                "value(s); role columns must not be null (drop or fill them first)"
            )

        return Rule(nw.col(column).is_null(), None, message, count=nw.col(column).null_count())

    rules = tuple(rule(c, p) for c, p in columns.items())
    return Check(frame=None, error=None, base=frame, rules=rules)


def in_range(
    frame: nw.LazyFrame[Any],
    column: str,
    parameter: str,
    low: float | None,
    high: float | None,
) -> Check:
    """Every value of ``column`` lies in [low, high] (a None bound is open); NaN is outside."""
    value = nw.col(column)
    is_float = frame.collect_schema()[column].is_float()
    bad = value.is_nan() if is_float else nw.lit(value=False)
    # the screen: the extremes within the bounds, and (floats) a finite sum, which NaN spoils
    screen = value.sum().is_finite() if is_float else nw.lit(value=True)
    if low is not None:
        bad = bad | (value < low)
        screen = screen & (value.min() >= low)
    if high is not None:
        bad = bad | (value > high)
        screen = screen & (value.max() <= high)
    interval = f"[{'-inf' if low is None else low}, {'inf' if high is None else high}]"

    def message(count: int, example: Any, _: int) -> str | None:
        if not count:
            return None
        shown = _shown(example)
        return (
            f"{parameter}={column!r}: expected values in {interval}, found {count} "
            f"outside it (e.g. {shown})"
        )

    return _rule_check(frame, Rule(bad, value, message, screen=screen))


def binary(frame: nw.LazyFrame[Any], column: str, parameter: str, metric: str) -> Check:
    """Every value of ``column`` is exactly 0 or 1."""
    value = nw.col(column).cast(nw.Float64)

    def message(count: int, example: Any, _: int) -> str | None:
        if not count:
            return None
        shown = _shown(example)
        return (
            f"{parameter}={column!r}: {metric} needs binary relevance (exactly 0 or 1), "
            f"found {count} other value(s) (e.g. {shown})"
        )

    bad = ((value != 0.0) & (value != 1.0)) | value.is_nan()
    return _rule_check(frame, Rule(bad, value, message))


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
            example = _example_text(_first_offender(offenders, keys), keys)
            msg = f"{what}: {row['n']} duplicated combination(s) of ({', '.join(shown)})"
            if example:
                msg += f", e.g. {example}"
            if hint:
                msg += f"; {hint}"
            return InvalidValueError(msg)
        return None

    return Check(counts, error)


def distinct_within(
    frame: nw.LazyFrame[Any],
    partition: Sequence[str],
    columns: Mapping[str, str],
    within: str,
    *,
    screen: Sequence[str] = (),
) -> Check:
    """Within each partition (a ``within``, e.g. "ranking"), the columns have distinct values.

    ``columns`` maps each column to the parameter that named it.

    One aggregation per partition (row count against distinct count) checks the columns at
    once, far cheaper than grouping by every (partition, value) pair. The columns in ``screen``
    (ones that usually come sorted, such as positions; pass them only for in-memory Polars data,
    which costs nothing to read twice) are screened first: rows sorted by (partition, column),
    strictly increasing, have no repeats, which one streaming comparison of neighbouring rows
    proves. Only a screened column whose rows are not in that order is counted, by a second
    query. The answer never depends on the row order, only the cost does.
    """
    partition = list(partition)
    names = list(columns)

    def per_partition(subset: Sequence[str]) -> nw.LazyFrame[Any]:
        return count_distinct(
            frame,
            partition,
            {c: f"__fa_u{names.index(c)}" for c in subset},
            also=[nw.len().alias("__fa_n")],
        )

    def repeats(i: int) -> nw.Expr:
        return nw.col(f"__fa_u{i}") < nw.col("__fa_n")

    def counted(subset: Sequence[str]) -> nw.LazyFrame[Any]:
        """Per column of ``subset``: the number of partitions that repeat a value."""
        indices = [names.index(c) for c in subset]
        return (
            per_partition(subset)
            .with_columns(*(repeats(i).cast(nw.Int64).alias(f"__fa_r{i}") for i in indices))
            .select(*(nw.col(f"__fa_r{i}").sum().alias(f"n{i}") for i in indices))
        )

    screened = [c for c in names if c in screen]
    in_plan = [c for c in names if c not in screened]
    parts = [counted(in_plan)] if in_plan else []
    if screened:
        parts.append(sorted_screen(frame, partition, {c: names.index(c) for c in screened}))
    counts = parts[0] if len(parts) == 1 else parts[0].join(parts[1], how="cross")

    def error(row: Mapping[str, Any]) -> FrameAuditError | None:
        unsorted = [c for c in screened if not row[f"sorted{names.index(c)}"]]
        if unsorted:
            row = {**row, **counted(unsorted).collect().rows(named=True)[0]}
        for i, column in enumerate(names):
            if row.get(f"n{i}"):
                msg = (
                    f"{columns[column]}={column!r}: values must be unique within each {within}; "
                    f"{row[f'n{i}']} {within}(s) repeat a value"
                )
                offender = _first_offender(per_partition([column]).filter(repeats(i)), partition)
                example = _example_text(offender, partition)
                if example:
                    msg += f" (e.g. {example})"
                return InvalidValueError(msg)
        return None

    return Check(counts, error)


def finite(frame: nw.LazyFrame[Any], columns: Mapping[str, str]) -> Check:
    """Every value of the columns is a finite number: no null, NaN or ±inf.

    ``columns`` maps each column to how messages name it (e.g. ``"features='x'"``), so derived
    columns (the elements of an array column) can be reported as the user wrote them.

    One cheap aggregate per column screens the data: NaN and ±inf make the column's sum
    non-finite, and the null count is metadata on Polars (a per-row flag costs about six times
    as much on wide numeric data). Only a failed screen runs a second query counting the
    offending values; a sum that merely overflowed on huge finite values passes there.
    """
    names = list(columns)
    screen = frame.select(
        *(nw.col(c).sum().cast(nw.Float64).alias(f"sum_{i}") for i, c in enumerate(names)),
        *(nw.col(c).null_count().cast(nw.Int64).alias(f"nulls_{i}") for i, c in enumerate(names)),
    )

    def error(row: Mapping[str, Any]) -> FrameAuditError | None:
        for i, column in enumerate(names):
            total, nulls = row[f"sum_{i}"], row[f"nulls_{i}"] or 0
            if not nulls and total is not None and math.isfinite(total):
                continue
            flag = (~nw.col(column).is_finite()).cast(nw.Int64)
            bad = frame.select(flag.sum()).collect().item() or 0
            if nulls or bad:
                msg = (
                    f"{columns[column]}: expected finite numbers, found {nulls} null and {bad} "
                    "NaN or infinite value(s)"
                )
                return InvalidValueError(msg)
        return None

    return Check(screen, error)


def values_present(
    frame: nw.LazyFrame[Any],
    column: str,
    parameter: str,
    values: Mapping[str, Any],
    limit: int = 10,
) -> Check:
    """Each of ``values`` (parameter name → value) occurs in ``column``.

    A row rule (it joins the one validation pass over ``frame``). Only when a value is missing
    does a second, small query list the values found (the first ``limit`` in sorted order, and
    how many there are) for the message, with a hint when one of them is close.
    """
    distinct = frame.select(column).unique().filter(~nw.col(column).is_null())

    def rule(name: str, value: Any) -> Rule:
        def message(count: int, _: Any, __: int) -> str | None:
            if count:
                return None
            found = [str(f) for f in distinct.sort(column).head(limit).collect()[column]]
            total = distinct.select(nw.len()).collect().item()
            shown = ", ".join(repr(f) for f in found)
            if total > len(found):
                shown += f", ... ({total - len(found)} more)"
            msg = (
                f"{name}={value!r}: value not found in {parameter}={column!r}; "
                f"values found ({total}): {shown}"
            )
            close = difflib.get_close_matches(str(value), found, n=1, cutoff=0.6)
            return f"{msg}; did you mean {close[0]!r}?" if close else msg

        return Rule(nw.col(column) == value, None, message)

    rules = tuple(rule(name, value) for name, value in values.items())
    return Check(frame=None, error=None, base=frame, rules=rules)


def constant_within(
    frame: nw.LazyFrame[Any], partition: Sequence[str], column: str, parameter: str, within: str
) -> Check:
    """Within each partition (a ``within``, e.g. "ranking"), ``column`` holds a single value."""
    partition = list(partition)
    spread = aggregate(
        frame,
        partition,
        nw.col(column).min().alias("__fa_lo"),
        nw.col(column).max().alias("__fa_hi"),
    )
    offenders = spread.filter(nw.col("__fa_lo") != nw.col("__fa_hi"))
    counts = offenders.select(nw.len().alias("n"))

    def error(row: Mapping[str, Any]) -> FrameAuditError | None:
        if not row["n"]:
            return None
        msg = (
            f"{parameter}={column!r}: expected one value within each {within}, found "
            f"{row['n']} {within}(s) with several"
        )
        example = _example_text(_first_offender(offenders, partition), partition)
        return InvalidValueError(f"{msg} (e.g. {example})" if example else msg)

    return Check(counts, error)


def unit_weights(
    frame: nw.LazyFrame[Any], column: str, units: Sequence[str], within: str
) -> list[Check]:
    """The checks of a ``weight=`` column: finite, non-negative, one value within each unit."""
    return [
        in_range(frame, column, "weight", 0, None),
        finite(frame, {column: f"weight={column!r}"}),
        constant_within(frame, units, column, "weight", within),
    ]
