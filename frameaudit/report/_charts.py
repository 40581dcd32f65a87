"""A report's charts (Altair), and their static SVG (vl-convert) for the HTML file."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    import altair as alt

    from frameaudit.report._report import Report

__all__ = ["PALETTE", "build", "svg"]

# Okabe & Ito's colour-blind-safe palette (the yellow left out: too light on white)
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000")
_WIDTH = 380


def _altair() -> Any:
    # imported on first use: the tables need neither Altair nor vl-convert (an optional extra)
    try:
        import altair  # noqa: PLC0415
    except ImportError as error:  # pragma: no cover - the extra is installed in the tests
        msg = "charts need the report extra: pip install 'frameaudit[report]'"
        raise ImportError(msg) from error
    return altair


def build(report: Report) -> dict[str, alt.Chart | alt.LayerChart]:
    """The charts of ``report``, by name (a family's own charts after the per-group ones)."""
    charts = _per_group(report)
    family = _FAMILY_CHARTS.get(report.family)
    if family is not None:
        charts |= family(report)
    return charts


def svg(chart: alt.Chart | alt.LayerChart) -> str:
    """The chart as a static SVG document (no script, no network)."""
    import vl_convert  # noqa: PLC0415

    text: str = vl_convert.vegalite_to_svg(chart.to_dict())
    return text


def _config(chart: Any) -> Any:
    return chart.configure_axis(labelFontSize=11, titleFontSize=12).configure_title(
        fontSize=13, anchor="start", subtitleFontSize=11, subtitleColor="#444"
    )


def _per_group(report: Report) -> dict[str, Any]:
    """Each group metric's per-group values, interval whiskers and the parity reference."""
    alt = _altair()
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
        charts[metric] = _config(
            alt.layer(*layers).properties(
                width=_WIDTH,
                height=max(60, 28 * data.height),
                title=alt.Title(f"{metric.upper()} by {' × '.join(keys)}", subtitle=subtitle),
            )
        )
    return charts


def _ranking(report: Report) -> dict[str, Any]:
    """The share of each group by position, and the worst rankings by NDKL."""
    alt = _altair()
    charts: dict[str, Any] = {}
    positions = report.tables["positions"]
    order = positions.sort("bucket")["positions"].unique(maintain_order=True).to_list()
    groups = positions["group"].unique().sort().to_list()
    colour = alt.Color(
        "group:N",
        title=" × ".join(report.keys),
        scale=alt.Scale(domain=groups, range=list(PALETTE[: len(groups)])),
    )
    x = alt.X("positions:O", title="positions (bucket)", sort=order, axis=alt.Axis(labelAngle=0))
    lines = (
        alt.Chart(positions)
        .mark_line(point=True, strokeWidth=2)
        .encode(
            x=x,
            y=alt.Y(
                "share:Q", title="share of the rows at these positions", axis=alt.Axis(format="%")
            ),
            color=colour,
            tooltip=["positions", "group", "rows", alt.Tooltip("share:Q", format=".1%")],
        )
    )
    overall = (
        alt.Chart(positions.unique(["group"], maintain_order=True).select("group", "overall"))
        .mark_rule(strokeDash=[5, 3], strokeWidth=1.5)
        .encode(y="overall:Q", color=colour)
    )
    charts["positions"] = _config(
        alt.layer(overall, lines).properties(
            width=_WIDTH + 160,
            height=260,
            title=alt.Title(
                "Share of each group at each position",
                subtitle="Fair: each line flat on its dashed line (the group's share of all rows).",
            ),
        )
    )
    by_ranking = report.tables.get("ndkl_by_ranking")
    if by_ranking is not None:
        rankings = report.parameters["ranking"]
        label = pl.concat_str([pl.col(c).cast(pl.String) for c in rankings], separator="/")
        worst = by_ranking.head(10).select(label.alias("ranking"), "ndkl")
        mean = report.summary.filter(pl.col("metric") == "ndkl")["value"].item()
        bars = (
            alt.Chart(worst)
            .mark_bar(color=PALETTE[3])
            .encode(
                x=alt.X("ndkl:Q", title="NDKL (0 = the top prefixes mirror the groups)"),
                y=alt.Y("ranking:N", title=" / ".join(rankings), sort=None),
                tooltip=["ranking", "ndkl"],
            )
        )
        average = (
            alt.Chart(pl.DataFrame({"mean": [mean]}))
            .mark_rule(color="#000000", strokeDash=[5, 3])
            .encode(x="mean:Q")
        )
        charts["ndkl"] = _config(
            alt.layer(bars, average).properties(
                width=_WIDTH,
                height=max(60, 24 * worst.height),
                title=alt.Title(
                    f"The {worst.height} rankings with the highest NDKL",
                    subtitle="Fair: bars near 0. Dashed: the mean over all rankings.",
                ),
            )
        )
    return charts


_FAMILY_CHARTS: dict[str, Callable[[Report], dict[str, Any]]] = {"ranking": _ranking}
