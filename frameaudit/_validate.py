"""Input validation shared by every metric family (narwhals only).

Two kinds of check:

* **schema checks** (column names, dtypes, parameter values) run at call time and read no
  data, so a lazy call stays lazy;
* **value checks** (nulls, ranges, duplicates, ties, unmapped items) are
  :class:`~frameaudit._engine.Check` objects: a lazy one-row frame of diagnostics (counts and
  examples) plus the error message as a string expression over it, or row
  :class:`~frameaudit._engine.Rule` objects evaluated together. This module declares them;
  the engine runs them inside the result's plan (:func:`frameaudit._engine.from_engine`).
"""

from __future__ import annotations

import datetime as dt
import functools
import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import narwhals.stable.v2 as nw

from frameaudit._engine import (
    Check,
    Diagnosis,
    Proof,
    Rule,
    Written,
    first_failed,
    given,
    is_bool,
    merge_rules,
    native_step,
    order_marks,
    repeats_within,
    sorted_screen,
    text,
)
from frameaudit._expr import WHOLE, aggregate, distinct, hashed_keys, partitioned
from frameaudit.exceptions import InvalidDtypeError, InvalidParameterError

__all__ = [
    "Check",
    "Diagnosis",
    "Proof",
    "Rule",
    "Written",
    "around_example",
    "as_names",
    "binary",
    "counted_message",
    "distinct_within",
    "example_text",
    "finite",
    "first_failed",
    "first_offender",
    "given",
    "group_value",
    "has_rows",
    "in_range",
    "keyed",
    "magnitudes",
    "message",
    "no_nulls",
    "non_empty",
    "none_counted",
    "offending",
    "relative_weights",
    "require_dtype",
    "row_text",
    "sums_to_one",
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


def require_dtype(
    frame: nw.LazyFrame[Any] | Mapping[str, Any], column: str, parameter: str, kind: str
) -> None:
    """Raise unless ``column`` has a dtype of ``kind`` ("numeric", "integer" or "key").

    ``frame``: the frame, or its schema where several columns are checked (a plan's schema
    costs a resolution each time it is asked for).
    """
    schema = frame if isinstance(frame, Mapping) else frame.collect_schema()
    dtype = schema[column]
    if not _KINDS[kind](dtype):
        polars_dtype, pandas_dtype = _CASTS[kind]
        msg = (
            f"{parameter}={column!r}: expected a column of {_KIND_NAMES[kind]} dtype, found "
            f"{dtype}; cast "
            f"it first, e.g. pl.col({column!r}).cast(pl.{polars_dtype}) in Polars or "
            f".astype({pandas_dtype!r}) in pandas"
        )
        raise InvalidDtypeError(msg)


def first_offender(
    counts: nw.LazyFrame[Any], offenders: nw.LazyFrame[Any], keys: Sequence[str], prefix: str
) -> nw.LazyFrame[Any]:
    """``counts`` (one row) with the first offending ``keys`` (in key order) beside it.

    The keys become columns ``{prefix}0``, ``{prefix}1``, ... (null when nothing offends):
    a top-1 of the offenders, part of the same plan as the counts.
    """
    if not keys:
        return counts
    renamed = [f"{prefix}{j}" for j in range(len(keys))]
    first = offenders.select(*(nw.col(k).alias(r) for k, r in zip(keys, renamed, strict=True)))
    first = first.sort(renamed, nulls_last=True).head(1)
    key = nw.lit(0).alias("__fa_key")
    joined = counts.with_columns(key).join(first.with_columns(key), on="__fa_key", how="left")
    return joined.drop("__fa_key")


def example_text(keys: Sequence[str], prefix: str) -> nw.Expr | None:
    """The first offender of :func:`first_offender` as text ("query=0, group='a'").

    frameaudit's internal key columns are left out; None when no key is left.
    """
    parts: list[str | nw.Expr] = []
    for j, key in enumerate(keys):
        if not key.startswith("__fa_"):
            parts += [", " if parts else "", f"{key}=", text.repr_of(f"{prefix}{j}")]
    return text.joined(*parts) if parts else None


def row_text(columns: Sequence[str]) -> nw.Expr:
    """An offending row shown as text ("group=g1, feature=f3"), for a :class:`Rule` example.

    A rule keeps its smallest example, so the message shows the first offender in that order.
    """
    parts = [nw.concat_str(nw.lit(f"{c}="), nw.col(c).cast(nw.String)) for c in columns]
    return nw.concat_str(*parts, separator=", ")


def proven(proof: nw.LazyFrame[Any], holds: Proof, check: Callable[[], Check]) -> Check:
    """A check with a cheaper proof: ``holds`` of the one-row ``proof``.

    ``check()`` builds the full check (rules, or diagnostics and message), only when its
    diagnostics are needed: on Polars after a failed proof, on DuckDB and Spark for the
    message the result's plan carries. Building them cost more than the proof's plan.
    """

    def diagnose() -> Diagnosis:
        (merged,) = merge_rules([check()])
        return merged.diagnosis()

    return Check.proved_or_diagnosed(lambda: proof, holds, diagnose)


def non_empty(frame: nw.LazyFrame[Any], metric: str) -> Check:
    """The frame has at least one row."""
    return has_rows(frame, f"{metric}: the frame has no rows")


def has_rows(frame: nw.LazyFrame[Any], error: str) -> Check:
    """``frame`` has at least one row, else ``error`` (a row rule, in the one pass over it)."""

    def shown(_: nw.Expr, __: str) -> nw.Expr:
        return nw.lit(error)

    rule = Rule(lambda ns: ns.lit(value=True), shown, count=lambda ns: ns.len(), absent=True)
    return Check.of_rules(frame, rule)


def no_nulls(frame: nw.LazyFrame[Any], columns: Mapping[str, str]) -> Check:
    """No nulls in any role column. ``columns`` maps column name to parameter name."""

    def rule(column: str, parameter: str) -> Rule:
        def shown(count: nw.Expr, _: str) -> nw.Expr:
            head = f"{parameter}={column!r}: column {column!r} holds "
            found = " null value(s); role columns must not be null (drop or fill them first)"
            return message(head, count, found)

        return Rule(
            lambda ns: ns.col(column).is_null(),
            shown,
            count=lambda ns: ns.col(column).null_count(),
        )

    return Check.of_rules(frame, *(rule(c, p) for c, p in columns.items()))


def in_range(
    frame: nw.LazyFrame[Any],
    column: str,
    parameter: str,
    low: float | None,
    high: float | None,
) -> Check:
    """Every value of ``column`` lies in [low, high] (a None bound is open); NaN is outside."""
    is_float = frame.collect_schema()[column].is_float()

    def bad(ns: Any) -> Any:
        value = ns.col(column)
        outside = value.is_nan() if is_float else ns.lit(value=False)
        if low is not None:
            outside = outside | (value < low)
        return outside if high is None else outside | (value > high)

    def screen(ns: Any) -> Any:
        # the extremes within the bounds, and (floats) a finite sum, which NaN spoils
        value = ns.col(column)
        inside = value.sum().is_finite() if is_float else ns.lit(value=True)
        if low is not None:
            inside = inside & (value.min() >= low)
        return inside if high is None else inside & (value.max() <= high)

    interval = f"[{'-inf' if low is None else low}, {'inf' if high is None else high}]"

    def shown(count: nw.Expr, example: str) -> nw.Expr:
        head = f"{parameter}={column!r}: expected values in {interval}, found "
        return message(head, count, " outside it", text.shown(example))

    return Check.of_rules(frame, Rule(bad, shown, example=nw.col(column), screen=screen))


SCALE = (1e-100, 1e100)
"""The magnitudes a weight or a coordinate may have, zero aside: their products and squares
stay normal floats and their sums over 2^40 rows finite. A weight of 5e-324 made its terms
underflow to 0 (EXP and ERBE null, NDKL NaN), a coordinate of 1e155 its squared distances
overflow, one of 1e-200 underflow (the social fairness ratio null)."""


def magnitudes(frame: nw.LazyFrame[Any], columns: Mapping[str, str], advice: str) -> Check:
    """Every non-zero value of the columns has a magnitude within :data:`SCALE`.

    ``columns`` maps each column to how messages name it; ``advice`` ends the message (how
    to rescale). Null, NaN and infinite values are other checks' business.
    """
    low, high = SCALE

    def rule(column: str, name: str) -> Rule:
        def bad(ns: Any) -> Any:
            size = ns.col(column).cast(ns.Float64).abs()
            return size.is_finite() & (size > 0) & ((size < low) | (size > high))

        def screen(ns: Any) -> Any:
            size = ns.col(column).cast(ns.Float64).abs()
            smallest = ns.when(size > 0).then(size).min()
            return (size.max() <= high) & (smallest.is_null() | (smallest >= low))

        def shown(count: nw.Expr, example: str) -> nw.Expr:
            head = f"{name}: expected magnitudes in [{low:g}, {high:g}] (or 0), found "
            return message(head, count, " outside it", text.shown(example), tail=f"; {advice}")

        return Rule(bad, shown, example=nw.col(column), screen=screen)

    return Check.of_rules(frame, *(rule(column, name) for column, name in columns.items()))


def binary(frame: nw.LazyFrame[Any], column: str, parameter: str, metric: str) -> Check:
    """Every value of ``column`` is exactly 0 or 1."""

    def shown(count: nw.Expr, example: str) -> nw.Expr:
        head = f"{parameter}={column!r}: {metric} needs binary relevance (exactly 0 or 1), found "
        return message(head, count, " other value(s)", text.shown(example))

    def bad(ns: Any) -> Any:
        value = ns.col(column).cast(ns.Float64)
        return ((value != 0.0) & (value != 1.0)) | value.is_nan()

    return Check.of_rules(frame, Rule(bad, shown, example=nw.col(column).cast(nw.Float64)))


def unique_within(
    frame: nw.LazyFrame[Any], keys: Sequence[str], what: str, hint: str = ""
) -> Check:
    """No two rows share the values of ``keys`` (e.g. one position twice in one ranking)."""
    keys = list(keys)
    offenders = frame.group_by(keys).agg(nw.len().alias("__fa_n")).filter(nw.col("__fa_n") > 1)
    counts = offenders.select(nw.len().cast(nw.Int64).alias("n"))

    def diagnose() -> Diagnosis:
        named = [k for k in keys if not k.startswith("__fa_")]
        found = f" duplicated combination(s) of ({', '.join(named)})"
        example = example_text(keys, "k")
        tail = f"; {hint}" if hint else ""
        shown = counted_message(f"{what}: ", "n", found, example, around=(", e.g. ", ""), tail=tail)
        return first_offender(counts, offenders, keys, "k"), shown

    return Check.proved_or_diagnosed(lambda: counts, none_counted, diagnose)


def none_counted(row: Mapping[str, Any]) -> bool:
    """The proof of a check whose ``quick`` row counts its offenders in ``n``."""
    return bool(row["n"] == 0)


def message(
    head: str,
    count: nw.Expr,
    found: str,
    example: nw.Expr | None = None,
    *,
    around: tuple[str, str] = (" (e.g. ", ")"),
    tail: str = "",
) -> nw.Expr:
    """An error's text: "``head`` {count} ``found`` (e.g. {example})``tail``".

    ``count`` is an integer expression (a :class:`Rule`'s count, or a column of the
    diagnostics), shown as its digits; ``example`` a text expression (:func:`keyed`,
    :func:`row_text`), enclosed by ``around`` and left out when None.
    """
    shown: list[str | nw.Expr] = [around[0], example, around[1]] if example is not None else []
    return text.joined(head, text.integer(count), found, *shown, tail)


def around_example(head: str, example: str, tail: str) -> nw.Expr:
    """An error's text that shows a :class:`Rule`'s ``example`` (its column) between two texts."""
    return text.joined(head, nw.col(example), tail)


def keyed(key: str, column: str) -> nw.Expr:
    """An example as text: "``key``=" and the value of ``column`` as Python writes it.

    ``column`` is a column of the diagnostics (``sample=7``, ``group='a'``).
    """
    return text.joined(f"{key}=", text.repr_of(column))


def counted_message(
    head: str,
    count: str,
    found: str,
    example: nw.Expr | None = None,
    *,
    around: tuple[str, str] = (" (e.g. ", ")"),
    tail: str = "",
) -> nw.Expr:
    """:func:`message`, when the count (the column ``count``) is positive."""
    shown = message(head, nw.col(count), found, example, around=around, tail=tail)
    return nw.when(nw.col(count) > 0).then(shown)


def _repeating_partitions(
    per_partition: nw.LazyFrame[Any], partition: Sequence[str], columns: int
) -> nw.LazyFrame[Any]:
    """One row: per column i, the partitions where a value repeats (``n{i}``) and the first.

    The first such partition (in key order) is ``p{i}_0``, ``p{i}_1``, ... With at most one
    key that varies (the constant partition key aside), it is the smallest flagged key, taken
    in the same aggregation as the counts: DuckDB and Spark compute a subplan once per reader,
    and a second reader of ``per_partition`` would sort the rows again. With several keys, a
    top-1 of the flagged partitions (:func:`first_offender`).
    """
    flags = [nw.col(f"__fa_r{i}") for i in range(columns)]
    counts = [flag.sum().alias(f"n{i}") for i, flag in enumerate(flags)]
    if len(hashed_keys(partition)) > 1:
        rows = per_partition.select(*counts)
        for i, flag in enumerate(flags):
            rows = first_offender(rows, per_partition.filter(flag > 0), partition, f"p{i}_")
        return rows
    examples = [
        nw.when(flag > 0).then(nw.col(key)).alias(f"p{i}_{j}")
        for i, flag in enumerate(flags)
        for j, key in enumerate(partition)
    ]
    first = [nw.col(f"p{i}_{j}").min() for i in range(columns) for j in range(len(partition))]
    return per_partition.with_columns(*examples).select(*counts, *first)


def screened(
    frame: nw.LazyFrame[Any], partition: Sequence[str], columns: Sequence[str]
) -> tuple[nw.LazyFrame[Any], list[str]]:
    """``frame`` ready for :func:`distinct_within`'s screen of ``columns``; the screened ones.

    Columns that usually come sorted within a partition (positions) are marked on Polars
    (:func:`~frameaudit._engine.order_marks`), so that their check is one streaming comparison
    of neighbouring rows. Mark the frame before any other check or step reads it, so that
    every reader shares the mark; other engines get the frame back unmarked. Where
    ``partition`` holds the constant ``WHOLE``, the frame gets that column too.
    """
    return order_marks(frame, partition, columns)


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

    One pass per partition checks the columns at once (a distinct count, or on Spark the bits
    of integer values OR-ed per partition: :func:`~frameaudit._engine.repeats_within`),
    far cheaper than grouping by every (partition, value) pair; the diagnostics add the
    first offending partition of each column. The columns in ``screen`` (ones that usually come
    sorted, such as positions; on Polars, marked by :func:`screened`)
    are screened first on Polars: rows sorted by (partition, column), strictly
    increasing, have no repeats, which one streaming comparison of neighbouring rows proves.
    Only when a screen fails are the diagnostics computed. The answer never depends on the row
    order, only the cost does.
    """
    partition = list(partition)
    names = list(columns)

    @functools.cache
    def per_partition() -> nw.LazyFrame[Any]:
        # one plan for the counts and the diagnostics, built only if one of them is needed
        return repeats_within(frame, partition, names)

    def diagnose() -> Diagnosis:
        messages = []
        for i, column in enumerate(names):
            head = f"{columns[column]}={column!r}: values must be unique within each {within}; "
            found = f" {within}(s) repeat a value"
            example = example_text(partition, f"p{i}_")
            messages.append(counted_message(head, f"n{i}", found, example))
        rows = _repeating_partitions(per_partition(), partition, len(names))
        return rows, nw.coalesce(*messages)

    in_plan = [i for i, c in enumerate(names) if c not in screen]
    counts = [nw.col(f"__fa_r{i}").sum().alias(f"n{i}") for i in in_plan]
    screened = {c: i for i, c in enumerate(names) if c in screen}

    def proof() -> nw.LazyFrame[Any]:
        parts = [per_partition().select(*counts)] if in_plan else []
        if screened:
            parts.append(sorted_screen(frame, partition, screened))
        return parts[0] if len(parts) == 1 else parts[0].join(parts[1], how="cross")

    def holds(row: Mapping[str, Any]) -> bool:
        unrepeated = all(row[f"n{i}"] == 0 for i in in_plan)
        return unrepeated and all(row[f"sorted{i}"] for i in screened.values())

    return Check.proved_or_diagnosed(proof, holds, diagnose)


def finite(frame: nw.LazyFrame[Any], columns: Mapping[str, str]) -> Check:
    """Every value of the columns is a finite number: no null, NaN or ±inf.

    ``columns`` maps each column to how messages name it (e.g. ``"features='x'"``), so derived
    columns (the elements of an array column) can be reported as the user wrote them.

    The diagnostics count the nulls and the NaN or infinite values of each column. On Polars
    one cheap aggregate per column proves the common case instead: NaN and ±inf make the
    column's sum non-finite, and the null count is metadata (a per-row flag costs about six
    times as much on wide numeric data); only a failed proof counts, and a sum that merely
    overflowed on huge finite values passes there.
    """
    names = list(columns)

    def counted(ns: Any) -> list[Any]:
        return [
            ns.col(c).null_count().cast(ns.Int64).alias(f"nulls_{i}") for i, c in enumerate(names)
        ]

    def diagnose() -> Diagnosis:
        flags = [
            (~nw.col(c).is_finite()).cast(nw.Int64).alias(f"__fa_bad{i}")
            for i, c in enumerate(names)
        ]
        bad = (
            nw.col(f"__fa_bad{i}").sum().cast(nw.Int64).alias(f"bad_{i}") for i in range(len(names))
        )
        counts = frame.with_columns(*flags).select(*counted(nw), *bad)
        messages = [
            nw.when((nw.col(f"nulls_{i}") > 0) | (nw.col(f"bad_{i}") > 0)).then(
                text.joined(
                    f"{columns[column]}: expected finite numbers, found ",
                    text.integer(nw.col(f"nulls_{i}")),
                    " null and ",
                    text.integer(nw.col(f"bad_{i}")),
                    " NaN or infinite value(s)",
                )
            )
            for i, column in enumerate(names)
        ]
        return counts, nw.coalesce(*messages)

    def screened(ns: Any) -> list[Any]:
        sums = (ns.col(c).sum().cast(ns.Float64).is_finite() for c in names)
        return [*counted(ns), *(s.alias(f"sum_{i}") for i, s in enumerate(sums))]

    def holds(row: Mapping[str, Any]) -> bool:
        return all(row[f"nulls_{i}"] == 0 and row[f"sum_{i}"] for i in range(len(names)))

    return Check.proved_or_diagnosed(
        lambda: native_step(frame, "select", screened), holds, diagnose
    )


def values_present(
    frame: nw.LazyFrame[Any],
    column: str,
    parameter: str,
    values: Mapping[str, Any],
    limit: int = 10,
) -> Check:
    """Each of ``values`` (parameter name → value) occurs in ``column``.

    A row rule (it joins the one validation pass over ``frame``). The diagnostics list the
    values found (the first ``limit`` in sorted order, and how many there are) for the message;
    :meth:`frameaudit.exceptions.InvalidValueError.of_check` adds a hint when one of them is
    close.
    """
    found = functools.cache(lambda: _values_found(frame, column, limit))  # for the diagnostics
    total = nw.col("__fa_found_total")
    more = nw.when(total > limit).then(
        text.joined(", ... (", text.integer(total - limit), " more)")
    )

    def rule(name: str, value: Any) -> Rule:
        def shown(_: nw.Expr, __: str) -> nw.Expr:
            return text.joined(
                f"{name}={value!r}: value not found in {parameter}={column!r}; values found (",
                text.integer(total),
                "): ",
                nw.col("__fa_found"),
                more.otherwise(nw.lit("")),
            )

        return Rule(lambda ns: ns.col(column) == value, shown, absent=True, context=found)

    return Check.of_rules(frame, *(rule(name, value) for name, value in values.items()))


def _values_found(frame: nw.LazyFrame[Any], column: str, limit: int) -> nw.LazyFrame[Any]:
    """One row: the number of distinct values of ``column`` and the first ``limit`` as text.

    The values are shown as the text of each (quoted, as ``repr`` quotes a string).
    """
    values = distinct(frame.select(column)).filter(~nw.col(column).is_null())
    return text.value_listing(values, column, limit)


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
    counts = offenders.select(nw.len().cast(nw.Int64).alias("n"))

    def diagnose() -> Diagnosis:
        head = f"{parameter}={column!r}: expected one value within each {within}, found "
        example = example_text(partition, "k")
        shown = counted_message(head, "n", f" {within}(s) with several", example)
        return first_offender(counts, offenders, partition, "k"), shown

    return Check.proved_or_diagnosed(lambda: counts, none_counted, diagnose)


def relative_weights(frame: nw.LazyFrame[Any], column: str) -> Check:
    """The weights' magnitudes are within :data:`SCALE` (only their ratios matter)."""
    advice = "only the weights' ratios matter: divide them by their largest"
    return magnitudes(frame, {column: f"weight={column!r}"}, advice)


def unit_weights(
    frame: nw.LazyFrame[Any], column: str, units: Sequence[str], within: str
) -> list[Check]:
    """The checks of a ``weight=`` column: finite, non-negative, in scale, one per unit.

    In scale: :func:`relative_weights`.
    """
    return [
        in_range(frame, column, "weight", 0, None),
        finite(frame, {column: f"weight={column!r}"}),
        relative_weights(frame, column),
        constant_within(frame, units, column, "weight", within),
    ]


def offending(
    offenders: nw.LazyFrame[Any], keys: Sequence[str], head: str, found: str, tail: str = ""
) -> Check:
    """A check that ``offenders`` has no row: "``head`` {n}``found`` (e.g. …)``tail``"."""
    keys = list(keys)
    counts = offenders.select(nw.len().cast(nw.Int64).alias("n"))

    def diagnose() -> Diagnosis:
        shown = counted_message(head, "n", found, example_text(keys, "k"), tail=tail)
        return first_offender(counts, offenders, keys, "k"), shown

    return Check.proved_or_diagnosed(lambda: counts, none_counted, diagnose)


SUM_TOLERANCE = 1e-9
"""How far from 1 a distribution's shares or an item's weights may sum (float rounding)."""


def sums_to_one(
    frame: nw.LazyFrame[Any], column: str, keys: Sequence[str], head: str, found: str
) -> Check:
    """Per ``keys`` (none: the whole frame), ``column`` sums to 1 (NaN does not).

    The message as :func:`offending` writes it: "``head`` {n}``found`` (e.g. …)".
    """
    keys = list(keys)
    total = nw.col(column).cast(nw.Float64).sum().alias("__fa_total")
    totals = aggregate(partitioned(frame, keys), keys or [WHOLE], total)
    off = totals.filter(
        ((nw.col("__fa_total") - 1.0).abs() > SUM_TOLERANCE) | nw.col("__fa_total").is_nan()
    )
    return offending(off, keys, head, found)
