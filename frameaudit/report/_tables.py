"""The tables every family's report builds: the summary and worst rows, metric results as Polars."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import narwhals.stable.v2 as nw
import polars as pl

from frameaudit.exceptions import frameaudit_errors

__all__ = ["eager", "label", "summary", "summary_row", "worst", "worst_row"]


def eager(result: Any) -> pl.DataFrame:
    """A metric's result (of the input's kind) as an eager Polars frame.

    Bad values found inside a DuckDB or Spark query raise the frameaudit error.
    """
    native = nw.from_native(result)
    with frameaudit_errors():
        frame = native.collect(backend="polars") if isinstance(native, nw.LazyFrame) else native
    polars: pl.DataFrame = frame.to_polars()
    return polars


def label(names: Sequence[str]) -> pl.Expr:
    """One string naming a row's group (or ranking, cluster, pair): its keys joined by '/'."""
    return pl.concat_str([pl.col(c).cast(pl.String) for c in names], separator="/")


def summary_row(
    metric: str,
    combo: str | None,
    value: Any,
    direction: tuple[str, str],
    *,
    unit: str,
    ci: float | None,
    interval: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A summary row: the value, its interval and what fair looks like.

    ``direction`` is (what parity or fairness looks like, the range). ``interval`` holds
    ``lo``, ``hi``, the ``unit`` count and ``undefined_replicates`` when this row has an
    interval (with ``ci``, the other rows hold nulls there).
    """
    row: dict[str, Any] = {"metric": metric, "combo": combo, "value": value, "lo": None, "hi": None}
    if ci is not None:
        row |= {unit: None, "undefined_replicates": None}
        row |= dict(interval or {})
    return row | {"direction": direction[0], "range": direction[1]}


def summary(rows: Sequence[dict[str, Any]], *, unit: str, ci: float | None) -> pl.DataFrame:
    """The summary table of :func:`summary_row` rows."""
    schema: dict[str, Any] = {
        "metric": pl.String,
        "combo": pl.String,
        "value": pl.Float64,
        "lo": pl.Float64,
        "hi": pl.Float64,
    }
    if ci is not None:
        schema |= {unit: pl.Int64, "undefined_replicates": pl.Int64}
    schema |= {"direction": pl.String, "range": pl.String}
    return pl.DataFrame(rows, schema=schema, orient="row")


def worst_row(metric: str, kind: str, name: Any, value: Any, reference: Any) -> dict[str, Any]:
    """A row of ``worst``: what is furthest from parity, its value and the reference."""
    gap = None if value is None or reference is None else value - reference
    return {
        "metric": metric,
        "kind": kind,
        "name": str(name),
        "value": value,
        "reference": reference,
        "gap": gap,
    }


def worst(rows: Sequence[dict[str, Any]]) -> pl.DataFrame:
    """The ``worst`` table of :func:`worst_row` rows."""
    schema = {
        "metric": pl.String,
        "kind": pl.String,
        "name": pl.String,
        "value": pl.Float64,
        "reference": pl.Float64,
        "gap": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema, orient="row")
