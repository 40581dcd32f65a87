"""The report's tables as shown (text and HTML): combos side by side, intervals, worst first."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import polars as pl

from frameaudit.exceptions import InvalidParameterError
from frameaudit.report import _tables

if TYPE_CHECKING:
    from frameaudit.report._report import Report

__all__ = [
    "Family",
    "Layout",
    "combos",
    "declare",
    "family",
    "intervals",
    "lead",
    "lead_intervals",
    "legend",
    "per_group",
    "record_lines",
    "refuse_missing",
    "single",
    "undefined",
]


@dataclass(frozen=True)
class Layout:
    """How a family's report names its parts in text and HTML.

    Attributes
    ----------
    per_group
        The heading of the per-group table ("Per group (n: the group size)").
    worst
        What the ``worst`` table lists and the parity it is measured from.
    unit
        The resampling unit of the intervals, plural ("rankings"); the summary's column that
        counts them with ``ci``.
    shown
        The family's further tables that text and HTML show after ``worst``, by name, with
        their headings (the others are in ``tables`` and behind the charts).
    rows
        What a row of ``per_group`` is, plural ("groups", "pairs of runs").
    lead
        The summary row the headline leads with: (metric, combo or None).
    needs
        The metrics a report may leave out, and what each needs ("relevance="): a rule on
        one that the report does not hold says so.
    """

    per_group: str
    worst: str
    unit: str
    shown: Mapping[str, str] = field(default_factory=dict)
    rows: str = "groups"
    lead: tuple[str, str | None] | None = None
    needs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Family:
    """What the renderers need of a family's report: its layout and its charts."""

    layout: Layout
    charts: Callable[[Report], dict[str, Any]]


_FAMILIES: dict[str, Family] = {}


def declare(name: str, layout: Layout, charts: Callable[[Report], dict[str, Any]]) -> None:
    """Declare the family ``name``'s report (each builder module does, once, at its end)."""
    _FAMILIES[name] = Family(layout, charts)


def family(report: Report) -> Family:
    """The report's family as its builder module declared it (:func:`declare`)."""
    return _FAMILIES[report.family]


def refuse_missing(report: Report, metric: str) -> None:
    """Raise, for a rule on a metric the report left out, what the metric needs."""
    needs = family(report).layout.needs
    if metric in needs:
        msg = (
            f"requirement metric={metric!r}: {metric.upper()} needs {needs[metric]}, and this "
            "report was built without it; build the report with it to gate on the metric"
        )
        raise InvalidParameterError(msg)


def lead(report: Report) -> str:
    """The report's lead finding: its headline metric's value, interval and what fair is."""
    chosen = family(report).layout.lead
    if chosen is None or report.summary.is_empty():
        return ""
    metric, combo = chosen
    rows = report.summary.filter(
        (pl.col("metric") == metric)
        & (pl.col("combo").is_null() if combo is None else pl.col("combo") == combo)
    )
    if rows.is_empty():
        return ""
    name = metric.upper() + (f" {combo}" if combo else "")
    direction = rows["direction"][0]
    if report.by:
        defined = rows.filter(pl.col("value").is_not_null())

        def where(row: dict[str, Any]) -> str:
            return ", ".join(f"{c}={row[c]!r}" for c in report.by)

        text = f"{name} over {rows.height} partitions ({direction})"
        if not defined.is_empty():
            low = defined.sort("value").row(0, named=True)
            high = defined.sort("value").row(-1, named=True)
            text += (
                f": from {low['value']:.3g} ({where(low)}) to {high['value']:.3g} ({where(high)})"
            )
        missing = rows.height - defined.height
        return text + (f"; undefined in {missing}." if missing else ".")
    row = rows.row(0, named=True)
    if row["value"] is None:
        reason = row.get("note") or "no value"
        return f"{name} is undefined: {reason}."
    interval = ""
    if row.get("lo") is not None and row.get("hi") is not None:
        level = report.parameters.get("ci")
        interval = f", {level:.0%} interval {row['lo']:.3g} to {row['hi']:.3g}"
    text = f"{name} = {row['value']:.3g} ({direction}{interval})"
    if metric in report.per_group.columns and report.keys:
        groups = report.per_group.filter(pl.col(metric).is_not_null()).sort(metric)
        if groups.height >= 2:
            label = _tables.label(report.keys, report.per_group.schema)
            named = groups.select(label.alias("group"), metric)
            (low, low_value), (high, high_value) = named.row(0), named.row(-1)
            text += (
                f": lowest group {low} ({metric.upper()} {low_value:.3g}), highest {high} "
                f"({high_value:.3g})"
            )
    return text + "."


def lead_intervals(report: Report) -> pl.DataFrame:
    """The intervals of the headline combo and of the single-number metrics (text, Markdown).

    Every combo's interval is in ``summary``; a terminal shows the ones read first.
    """
    shown = intervals(report)
    chosen = family(report).layout.lead
    if "combo" not in shown.columns or chosen is None or chosen[1] is None:
        return shown
    return shown.filter(pl.col("combo").is_null() | (pl.col("combo") == chosen[1]))


def record_lines(report: Report) -> list[tuple[str, str]]:
    """The audit record as (name, text) lines: the parameters, then each part of the record."""
    return [
        (key, _inline(value))
        for key, value in {"parameters": report.parameters, **report.record}.items()
    ]


def _inline(value: Any) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_inline(v)}" for k, v in value.items() if v is not None)
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    return str(value)


def undefined(report: Report) -> pl.DataFrame:
    """The undefined values and why: one row per (partition,) metric and reason."""
    if "note" not in report.summary.columns:
        return pl.DataFrame(schema={"metric": pl.String, "combos": pl.String, "why": pl.String})
    missing = report.summary.filter(pl.col("value").is_null())
    every = report.summary.group_by("metric").agg(pl.col("combo").n_unique().alias("__all"))
    return (
        missing.group_by([*report.by, "metric", "note"], maintain_order=True)
        .agg(pl.col("combo").drop_nulls(), pl.len().alias("__count"))
        .join(every, on="metric", how="left")
        .select(
            *report.by,
            "metric",
            pl.when(pl.col("combo").list.len() == 0)
            .then(pl.lit("—"))
            .when(pl.col("__count") == pl.col("__all"))
            .then(pl.lit("every combo"))
            .otherwise(pl.col("combo").list.join(", "))
            .alias("combos"),
            pl.col("note").fill_null("undefined").alias("why"),
        )
    )


def combos(report: Report) -> pl.DataFrame:
    """One row per (partition and) group metric, one column per combo."""
    grouped = report.summary.filter(pl.col("combo").is_not_null())
    order = grouped["combo"].unique(maintain_order=True).to_list()
    index = [*report.by, "metric"]
    return grouped.pivot(on="combo", index=index, values="value").select(*index, *order)


def legend(report: Report) -> list[str]:
    """What parity looks like under each combo, one line per direction."""
    grouped = report.summary.filter(pl.col("combo").is_not_null())
    by_direction = grouped.unique(["combo"], maintain_order=True).group_by(
        "direction", maintain_order=True
    )
    return [
        f"{', '.join(rows['combo'].to_list())}: {direction}" for (direction,), rows in by_direction
    ]


def single(report: Report) -> pl.DataFrame:
    """The single-number metrics with their direction and range."""
    return report.summary.filter(pl.col("combo").is_null()).select(
        *report.by, "metric", "value", "direction", "range"
    )


def intervals(report: Report) -> pl.DataFrame:
    """The rows that carry a bootstrap interval (empty without ``ci``).

    A family without combos shows no combo column.
    """
    unit = family(report).layout.unit
    combo = ["combo"] if report.summary["combo"].is_not_null().any() else []
    shown = [*report.by, "metric", *combo, "value", "lo", "hi"]
    if unit not in report.summary.columns:
        return report.summary.clear().select(shown)
    return report.summary.filter(pl.col(unit).is_not_null()).select(
        *shown, unit, "undefined_replicates"
    )


def per_group(report: Report) -> pl.DataFrame:
    """The per-group values; with intervals, each metric as one "value [lo, hi]" column."""
    frame = report.per_group
    keys = [*report.by, *report.keys]
    metrics = [c for c in frame.columns if f"{c}_lo" in frame.columns]
    if not metrics:
        first = [*keys, *(["n"] if "n" in frame.columns else [])]
        return frame.select(*first, pl.exclude(first))
    shown = [
        pl.format(
            "{} [{}, {}]",
            *(_sig(pl.col(name)) for name in (metric, f"{metric}_lo", f"{metric}_hi")),
        ).alias(metric)
        for metric in metrics
    ]
    units = [c for c in (family(report).layout.unit,) if c in frame.columns]
    # columns without an interval (e.g. counts) are kept, after the values with one
    rest = [
        c
        for c in frame.columns
        if c not in {*keys, "n", *metrics, *units} and not c.endswith(("_lo", "_hi"))
    ]
    return frame.select(*keys, "n", *shown, *rest, *units)


def _sig(column: pl.Expr) -> pl.Expr:
    """Four significant digits, as the text tables show a number."""
    return column.map_elements(lambda v: f"{v:.4g}", return_dtype=pl.String).fill_null("—")
