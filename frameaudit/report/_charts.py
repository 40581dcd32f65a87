"""A report's charts (Altair), and their static SVG (vl-convert) for the HTML file."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from frameaudit.report import _views

if TYPE_CHECKING:
    import altair as alt

    from frameaudit.report._report import Report

__all__ = ["PALETTE", "WIDTH", "altair", "build", "config", "svg"]

# Okabe & Ito's colour-blind-safe palette (the yellow left out: too light on white)
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000")
WIDTH = 380


def altair() -> Any:
    # imported on first use: the tables need neither Altair nor vl-convert (an optional extra)
    try:
        import altair  # noqa: PLC0415
    except ImportError as error:  # pragma: no cover - the extra is installed in the tests
        msg = "charts need the report extra: pip install 'frameaudit[report]'"
        raise ImportError(msg) from error
    return altair


def build(report: Report) -> dict[str, alt.Chart | alt.LayerChart]:
    """The charts of ``report``, by name (a family's own charts after the per-group ones)."""
    charts: dict[str, Any] = _per_group(report)
    charts |= _views.family(report).charts(report)
    return charts


def svg(chart: alt.Chart | alt.LayerChart) -> str:
    """The chart as a static SVG document (no script, no network)."""
    import vl_convert  # noqa: PLC0415

    text: str = vl_convert.vegalite_to_svg(chart.to_dict())
    return text


def config(chart: Any) -> Any:
    return chart.configure_axis(labelFontSize=11, titleFontSize=12).configure_title(
        fontSize=13, anchor="start", subtitleFontSize=11, subtitleColor="#444"
    )


def _per_group(report: Report) -> dict[str, Any]:
    """Each group metric's per-group values, interval whiskers and the parity reference."""
    alt = altair()
    keys = list(report.keys)
    metrics = report.summary.filter(pl.col("combo").is_not_null())["metric"].unique(
        maintain_order=True
    )
    label = pl.concat_str([pl.col(c).cast(pl.String) for c in keys], separator="/").alias("group")
    charts: dict[str, Any] = {}
    for metric in metrics:
        interval = [f"{metric}_lo", f"{metric}_hi"]
        has_ci = all(c in report.per_group.columns for c in interval)
        data = report.per_group.select(
            label, pl.col(metric).alias("value"), "n", *(interval if has_ci else [])
        ).filter(pl.col("value").is_finite())
        parity = data["value"].mean()
        # the groups are named in the title: a vertical axis title is clipped on a short chart
        y = alt.Y("group:N", title=None, sort=None)
        points = (
            alt.Chart(data)
            .mark_point(filled=True, size=80, color=PALETTE[0])
            .encode(
                x=alt.X("value:Q", title=f"{metric.upper()} per group (V_g)"),
                y=y,
                tooltip=["group", "value", "n"],
            )
        )
        layers = [points]
        if has_ci:
            whiskers = (
                alt.Chart(data)
                .mark_rule(color=PALETTE[0], strokeWidth=2)
                .encode(x=f"{metric}_lo:Q", x2=f"{metric}_hi:Q", y=y)
            )
            layers.insert(0, whiskers)
        if parity is not None:
            rule = (
                alt.Chart(pl.DataFrame({"parity": [parity]}))
                .mark_rule(color=PALETTE[3], strokeDash=[5, 3], strokeWidth=2)
                .encode(x="parity:Q")
            )
            layers.append(rule)
        subtitle = "Fair: every point on the dashed line (the groups' mean)."
        if has_ci:
            subtitle += " Whiskers: bootstrap intervals."
        charts[metric] = config(
            alt.layer(*layers).properties(
                width=WIDTH,
                height=max(60, 28 * data.height),
                title=alt.Title(f"{metric.upper()} by {' × '.join(keys)}", subtitle=subtitle),
            )
        )
    return charts
