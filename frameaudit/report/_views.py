"""The report's tables as shown (text and HTML): combos side by side, intervals, worst first."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    from frameaudit.report._report import Report

__all__ = ["Layout", "combos", "family", "intervals", "legend", "per_group", "single"]


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
    """

    per_group: str
    worst: str
    unit: str
    shown: Mapping[str, str] = field(default_factory=dict)


def family(report: Report) -> Any:
    """The module of the report's family: its ``LAYOUT`` and its ``charts(report)``."""
    return importlib.import_module(f"frameaudit.report._{report.family}")


def combos(report: Report) -> pl.DataFrame:
    """One row per group metric, one column per combo."""
    grouped = report.summary.filter(pl.col("combo").is_not_null())
    order = grouped["combo"].unique(maintain_order=True).to_list()
    return grouped.pivot(on="combo", index="metric", values="value").select("metric", *order)


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
        "metric", "value", "direction", "range"
    )


def intervals(report: Report) -> pl.DataFrame:
    """The rows that carry a bootstrap interval (empty without ``ci``).

    A family without combos shows no combo column.
    """
    unit = family(report).LAYOUT.unit
    combo = ["combo"] if report.summary["combo"].is_not_null().any() else []
    if unit not in report.summary.columns:
        return report.summary.clear().select("metric", *combo, "value", "lo", "hi")
    return report.summary.filter(pl.col(unit).is_not_null()).select(
        "metric", *combo, "value", "lo", "hi", unit, "undefined_replicates"
    )


def per_group(report: Report) -> pl.DataFrame:
    """The per-group values; with intervals, each metric as one "value [lo, hi]" column."""
    frame = report.per_group
    keys = list(report.keys)
    metrics = [c for c in frame.columns if f"{c}_lo" in frame.columns]
    if not metrics:
        return frame
    shown = [
        pl.format(
            "{} [{}, {}]",
            *(_sig(pl.col(name)) for name in (metric, f"{metric}_lo", f"{metric}_hi")),
        ).alias(metric)
        for metric in metrics
    ]
    units = [c for c in (family(report).LAYOUT.unit,) if c in frame.columns]
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
