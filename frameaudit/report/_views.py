"""The report's tables as shown (text and HTML): combos side by side, intervals, worst first."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from frameaudit.report._report import Report

__all__ = ["combos", "intervals", "legend", "per_group", "single"]


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
    """The single-number metrics with their direction."""
    return report.summary.filter(pl.col("combo").is_null()).select("metric", "value", "direction")


def intervals(report: Report) -> pl.DataFrame:
    """The rows that carry a bootstrap interval (empty without ``ci``)."""
    if "rankings" not in report.summary.columns:
        return report.summary.clear().select("metric", "combo", "value", "lo", "hi")
    return report.summary.filter(pl.col("rankings").is_not_null()).select(
        "metric", "combo", "value", "lo", "hi", "rankings", "undefined_replicates"
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
    return frame.select(*keys, "n", *shown, "rankings")


def _sig(column: pl.Expr) -> pl.Expr:
    """Four significant digits, as the text tables show a number."""
    return column.map_elements(lambda v: f"{v:.4g}", return_dtype=pl.String).fill_null("—")
