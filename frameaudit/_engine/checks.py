"""Value checks: what a check is, and how the checks of a call run with its result.

A metric's value checks (nulls, ranges, duplicates, ...) are declared by
:mod:`frameaudit._validate` and the families as :class:`Check` objects: a lazy one-row frame
of violation counts and a function that turns that row into an error. Declaring them lazily is
what keeps a call lazy; running them is the engine's business, because how a failed count
becomes an exception depends on the engine:

* on Polars the counts are joined into the result's plan (:func:`attach`), so a lazy result
  raises when it is computed, and an eager one computes counts and result together;
* on the other lazy engines (DuckDB, PySpark) the counts run as one aggregate query when the
  metric is called, and only the counts leave the engine.

Row-level rules on one frame are merged first (:func:`merge_rules`), so that all of them cost
one pass over the data instead of one query each.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import narwhals.stable.v2 as nw
import polars as pl

from frameaudit.exceptions import FrameAuditError, InvalidValueError

__all__ = ["Check", "Rule", "attach", "diagnostics", "merge_rules", "raise_first"]

_DIAG_KEY = "__fa_diag_key"
_PRESENT = "__fa_present"


@dataclass(frozen=True)
class Check:
    """A lazy one-row frame of violation counts and the error it means.

    Row-level checks instead carry ``rules`` on a ``base`` frame; :func:`merge_rules` turns
    all the rules on one frame into a single frame-and-error check before they run.
    """

    frame: nw.LazyFrame[Any] | None
    error: Callable[[Mapping[str, Any]], FrameAuditError | None] | None
    base: nw.LazyFrame[Any] | None = None
    rules: tuple[Rule, ...] = ()


@dataclass(frozen=True)
class Rule:
    """A row-level rule: rows where ``flag`` is true offend; ``example`` shows one of them.

    Rules on the same frame are evaluated together in one pass (:func:`merge_rules`).
    ``message`` gets the number of offending rows, the smallest example value (or None) and the
    number of rows, and returns the error text, or None when the rule holds.
    """

    flag: nw.Expr
    example: nw.Expr | None
    message: Callable[[int, Any, int], str | None]
    # an aggregate giving the count directly (e.g. a null count, which Polars keeps as metadata)
    count: nw.Expr | None = None
    # an aggregate that is true when no row can offend (e.g. a minimum and a maximum inside the
    # bounds): cheaper than a per-row flag; when it is not true, a second query counts
    screen: nw.Expr | None = None


def merge_rules(checks: Sequence[Check]) -> list[Check]:
    """Evaluate all rules on one frame in one aggregation instead of one query per rule.

    The merged check takes the place of the first rule check on its frame, so errors keep the
    order in which the checks were listed.
    """
    slots: list[Check | int] = []
    groups: dict[int, tuple[nw.LazyFrame[Any], list[Rule]]] = {}
    for check in checks:
        if check.base is None:
            slots.append(check)
            continue
        key = id(check.base)
        if key not in groups:
            groups[key] = (check.base, [])
            slots.append(key)
        groups[key][1].extend(check.rules)
    return [slot if isinstance(slot, Check) else _merged(*groups[slot]) for slot in slots]


def _merged(base: nw.LazyFrame[Any], rules: Sequence[Rule]) -> Check:
    columns: list[nw.Expr] = []
    aggregations = [nw.len().cast(nw.Int64).alias("rows")]
    for i, rule in enumerate(rules):
        if rule.count is not None:
            aggregations.append(rule.count.alias(f"n{i}"))
        elif rule.screen is not None:
            aggregations.append(rule.screen.alias(f"s{i}"))
        else:
            columns.append(rule.flag.cast(nw.Int64).alias(f"__fa_flag{i}"))
            aggregations.append(nw.col(f"__fa_flag{i}").sum().cast(nw.Int64).alias(f"n{i}"))
    frame = (base.with_columns(*columns) if columns else base).select(*aggregations)
    return Check(frame, _rules_error(base, rules))


def _rules_error(
    base: nw.LazyFrame[Any], rules: Sequence[Rule]
) -> Callable[[Mapping[str, Any]], FrameAuditError | None]:
    def error(row: Mapping[str, Any]) -> FrameAuditError | None:
        for i, rule in enumerate(rules):
            if rule.screen is None:
                count = row[f"n{i}"] or 0
            elif row[f"s{i}"]:
                count = 0
            else:
                # a second query, run only when the screen has failed
                count = base.filter(rule.flag).select(nw.len()).collect().item()
            example = None
            if count and rule.example is not None:
                # a second query, run only when the rule has failed
                offending = base.filter(rule.flag).select(rule.example.min().alias("e"))
                example = offending.collect().item()
            text = rule.message(count, example, row["rows"])
            if text is not None:
                return InvalidValueError(text)
        return None

    return error


def _prefix(index: int) -> str:
    return f"__fa_c{index}_"


def diagnostics(checks: Sequence[Check]) -> nw.LazyFrame[Any]:
    """The merged checks' one-row frames side by side, the columns of check i prefixed.

    On Polars this is built natively: the checks are part of every call, and a native plan
    costs a fraction of the narwhals one.
    """
    frames: list[nw.LazyFrame[Any]] = []
    for check in checks:
        assert check.frame is not None  # rule checks were merged into frame checks
        frames.append(check.frame)
    if all(f.implementation is nw.Implementation.POLARS for f in frames):
        natives = [
            f.to_native().select(pl.all().name.prefix(_prefix(i))) for i, f in enumerate(frames)
        ]
        side_by_side: nw.LazyFrame[Any] = nw.from_native(pl.concat(natives, how="horizontal"))
        return side_by_side
    combined: nw.LazyFrame[Any] | None = None
    for i, frame in enumerate(frames):
        renamed = frame.select(nw.all().name.prefix(_prefix(i)))
        combined = renamed if combined is None else combined.join(renamed, how="cross")
    assert combined is not None
    return combined


def raise_first(checks: Sequence[Check], row: Mapping[str, Any]) -> None:
    """Raise the error of the first failed check, reading the :func:`diagnostics` ``row``."""
    for index, check in enumerate(checks):
        assert check.error is not None
        prefix = _prefix(index)
        own = {k.removeprefix(prefix): v for k, v in row.items() if k.startswith(prefix)}
        error = check.error(own)
        if error is not None:
            raise error


def attach(native: pl.LazyFrame, checks: Sequence[Check], sort_by: list[str]) -> pl.LazyFrame:
    """Make the merged checks part of a Polars plan: they raise when the result is computed.

    The one-row diagnostics frame is on the left of a left join so that an empty result still
    carries the diagnostics to the check.
    """
    schema = native.collect_schema()
    combined: pl.LazyFrame = diagnostics(checks).to_native()
    flat = combined.collect_schema().names()
    diag = combined.with_columns(pl.lit(0).alias(_DIAG_KEY))
    joined = diag.join(
        native.with_columns(pl.lit(0).alias(_DIAG_KEY), pl.lit(True).alias(_PRESENT)),
        on=_DIAG_KEY,
        how="left",
    )

    def check_and_strip(frame: pl.DataFrame) -> pl.DataFrame:
        if frame.height:
            raise_first(checks, frame.row(0, named=True))
        out = frame.filter(pl.col(_PRESENT).is_not_null()).drop([*flat, _DIAG_KEY, _PRESENT])
        return out.sort(sort_by, nulls_last=True) if sort_by else out

    return joined.map_batches(check_and_strip, schema=schema)
