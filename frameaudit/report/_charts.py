"""A report's charts (Altair), and their static SVG (vl-convert) for the HTML file."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

from frameaudit.report import _layout, _tables
from frameaudit.report._layout import Shown

if TYPE_CHECKING:
    import altair as alt

__all__ = [
    "MOST_SHOWN",
    "PALETTE",
    "WIDTH",
    "altair",
    "build",
    "config",
    "estimates",
    "shortened",
    "svg",
]

# Okabe & Ito's colour-blind-safe palette (the yellow left out: too light on white)
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000")
WIDTH = 380
MOST_SHOWN = 40
"""The most rows a chart of groups (or clusters, classes) draws: those furthest from parity."""


def altair() -> Any:
    # imported on first use: the tables need neither Altair nor vl-convert (an optional extra)
    try:
        import altair  # noqa: PLC0415
    except ImportError as error:  # pragma: no cover - the extra is installed in the tests
        msg = "charts need the report extra: pip install 'frameaudit[report]'"
        raise ImportError(msg) from error
    return altair


def build(report: Shown) -> dict[str, alt.Chart | alt.LayerChart]:
    """The charts of ``report``, by name (a family's own charts after the per-group ones)."""
    charts: dict[str, Any] = _per_group(report)
    charts |= _layout.family(report.family).charts(report)
    return charts


def svg(chart: alt.Chart | alt.LayerChart) -> str:
    """The chart as a static SVG document (no script, no network)."""
    try:
        import vl_convert  # noqa: PLC0415
    except ImportError as error:  # pragma: no cover - the extra is installed in the tests
        msg = "charts need the report extra: pip install 'frameaudit[report]'"
        raise ImportError(msg) from error
    alt = altair()
    # a chart's rows are the report's small tables: Altair's 5,000-row guard is for raw data
    with alt.data_transformers.disable_max_rows():
        specification = chart.to_dict()
    text: str = vl_convert.vegalite_to_svg(specification)
    return text


def config(chart: Any) -> Any:
    return chart.configure_axis(labelFontSize=11, titleFontSize=12).configure_title(
        fontSize=13, anchor="start", subtitleFontSize=11, subtitleColor="#444"
    )


def estimates(
    data: pl.DataFrame,
    *,
    value: str,
    label: str,
    reference: float | None,
    x: Any,
    y_title: str | None,
    title: str,
    subtitle: str,
    bars: bool = False,
    tooltip: Sequence[Any] = (),
) -> Any:
    """One estimate per row of ``data``: a point (or bar), whiskers and a parity rule.

    A point (or bar) at ``value`` for each ``label``, the bootstrap whiskers
    ``<value>_lo``–``<value>_hi`` where ``data`` has them, and a dashed rule at ``reference``
    (what the values would be under parity; None: no rule).

    ``x`` is the Altair X encoding of ``value``; ``subtitle`` says what fair looks like (the
    whiskers are named after it when drawn).
    """
    alt = altair()
    interval = [f"{value}_lo", f"{value}_hi"]
    has_ci = all(c in data.columns for c in interval)
    y = alt.Y(f"{label}:N", title=y_title, sort=None)
    base = alt.Chart(data)
    marks = (
        base.mark_bar(color=PALETTE[0], opacity=0.85)
        if bars
        else base.mark_point(filled=True, size=80, color=PALETTE[0])
    )
    layers = [marks.encode(x=x, y=y, tooltip=[label, *tooltip])]
    if has_ci:
        # over a bar, black whiskers; under a point, the point's colour
        whiskers = base.mark_rule(color=PALETTE[6] if bars else PALETTE[0], strokeWidth=2)
        drawn = whiskers.encode(x=f"{interval[0]}:Q", x2=f"{interval[1]}:Q", y=y)
        layers.insert(len(layers) if bars else 0, drawn)
        subtitle += " Whiskers: bootstrap intervals."
    if reference is not None:
        rule = alt.Chart(pl.DataFrame({"reference": [reference]})).mark_rule(
            color=PALETTE[3], strokeDash=[5, 3], strokeWidth=2
        )
        layers.append(rule.encode(x="reference:Q"))
    return config(
        alt.layer(*layers).properties(
            width=WIDTH,
            height=max(60, 28 * data.height),
            title=alt.Title(title, subtitle=subtitle),
        )
    )


def _per_group(report: Shown) -> dict[str, Any]:
    """Each group metric's per-group values, interval whiskers and the parity reference."""
    alt = altair()
    keys = [*report.by, *report.keys]
    metrics = report.summary.filter(pl.col("combo").is_not_null())["metric"].unique(
        maintain_order=True
    )
    label = shortened(_tables.label(keys, report.per_group.schema)).alias("group")
    charts: dict[str, Any] = {}
    for metric in metrics:
        interval = [c for c in (f"{metric}_lo", f"{metric}_hi") if c in report.per_group.columns]
        data = report.per_group.select(label, metric, "n", *interval).filter(
            pl.col(metric).is_finite()
        )
        mean = data[metric].mean()
        subtitle = "Fair: every point on the dashed line (the groups' mean)."
        if data.height > MOST_SHOWN:
            subtitle += f" The {MOST_SHOWN} of {data.height} groups furthest from it."
            data = data.sort(
                _tables.ordered((pl.col(metric) - mean).abs()), "group", descending=[True, False]
            ).head(MOST_SHOWN)
        # the groups are named in the title: a vertical axis title is clipped on a short chart
        charts[metric] = estimates(
            data,
            value=metric,
            label="group",
            reference=mean,
            x=alt.X(f"{metric}:Q", title=f"{metric.upper()} per group (V_g)"),
            y_title=None,
            title=f"{metric.upper()} by {' × '.join(keys)}",
            subtitle=subtitle,
            tooltip=[metric, "n"],
        )
    return charts


def shortened(label: pl.Expr, most: int = 40) -> pl.Expr:
    """A label cut to ``most`` characters (with an ellipsis): chart axes stay readable."""
    return (
        pl.when(label.str.len_chars() > most)
        .then(pl.concat_str(label.str.slice(0, most - 1), pl.lit("…")))
        .otherwise(label)
    )
