"""The explanations report: case-based correspondence per predicted class and order cohesion."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import narwhals.stable.v2 as nw
import polars as pl

from frameaudit._params import strict
from frameaudit._roles import refuse_outputs
from frameaudit.exceptions import InvalidParameterError
from frameaudit.explain import correspondence, position_parity, rank_alignment
from frameaudit.explain.correspondence import SUMMARY_COLUMNS
from frameaudit.report import _charts, _layout, _tables
from frameaudit.report._layout import Layout
from frameaudit.report._report import Report

__all__ = ["BANDS", "COHESION", "LAYOUT", "charts", "explain"]

LAYOUT = Layout(
    per_group=(
        "Per predicted class and per importance group "
        "(n: the queries of the class, or the features ranked)"
    ),
    worst="Least supported and least cohesive (reference: 1, full agreement)",
    unit="queries",
    rows="classes and importance groups",
    lead=("correspondence", None),
    needs={
        "correspondence": "a cases frame",
        "low_share": "a cases frame",
        "position_parity": "importances= and overall=",
        "rank_alignment_topk": "importances= and overall=",
        "rank_alignment_alpha_jaccard": "importances= and overall=",
    },
)

# the report's rows that are not a registered metric's (a share of one, a method of one)
_DERIVED: dict[str, tuple[str, str]] = {
    "low_share": ("lower is better (0 = no query in the low band)", "[0, 1]"),
    "rank_alignment_topk": ("1 = most cohesive (top-k as overall)", "[0, 1]"),
    "rank_alignment_alpha_jaccard": ("1 = most cohesive (top set as overall)", "[0, 1]"),
}


def _direction(row: str) -> tuple[str, str]:
    """What the best value of a summary row means, and its range."""
    return _DERIVED[row] if row in _DERIVED else _tables.direction(row)


BANDS = ("low", "medium", "high")
"""The correspondence bands, least supported first."""
COHESION = ("position_parity", "rank_alignment_topk", "rank_alignment_alpha_jaccard")
"""The cohesion metrics in report order (rank alignment under each method)."""
# the band colours run from warm (low support) to green (high), Okabe–Ito; undefined in grey
_BAND_COLOURS = {
    "low": _charts.PALETTE[3],
    "medium": _charts.PALETTE[1],
    "high": _charts.PALETTE[2],
    "undefined": "#999999",
}
_SHOWN_QUERIES = 5  # the least supported queries in ``worst``
_LEAST = 10  # ... and in the ``least_supported`` table


@strict
def explain(
    cases: Any = None,
    importances: Any = None,
    *,
    query: str | Sequence[str] = "query",
    distance: str = "distance",
    label: str = "label",
    predicted: str = "predicted",
    class_weights: Mapping[Any, float] | None = None,
    weighted: bool = True,
    high: float = 0.85,
    medium: float = 0.7,
    group: str = "group",
    feature: str = "feature",
    importance: str = "importance",
    overall: Any = None,
    k: int | None = None,
    alpha: float = 0.8,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Report:
    r"""The explanations report: how far predictions agree with their nearest cases, and cohesion.

    With ``cases``, :func:`frameaudit.explain.correspondence` summarises the queries per
    predicted class (mean correspondence and the count of queries in each band) and over all
    queries (a constant partition), and its per-query result names the least supported
    queries. With ``importances``, :func:`frameaudit.explain.position_parity` and
    :func:`frameaudit.explain.rank_alignment` (``method="topk"`` and ``"alpha_jaccard"``) give
    the mean over groups and each group's value.

    Parameters
    ----------
    cases
        One row per (query, neighbour), as :func:`frameaudit.explain.correspondence` takes
        (e.g. the output of :func:`frameaudit.explain.nearest_cases`); any frame kind it takes.
    importances
        One row per (group, feature), as :func:`frameaudit.explain.position_parity` takes.
        At least one of ``cases`` and ``importances`` is required.
    query, distance, label, predicted, class_weights, weighted, high, medium
        As for :func:`frameaudit.explain.correspondence`.
    group, feature, importance, overall, k
        As for :func:`frameaudit.explain.position_parity` (``k`` for position parity and
        top-k rank alignment).
    alpha
        The share of the total \|importance\| of the alpha-Jaccard rank alignment's top sets.
    weight
        Column of query weights for the correspondence summaries (the per-query values
        ignore it), as for :func:`frameaudit.explain.correspondence`.
    ci, n_boot, seed
        Percentile bootstrap intervals over the queries of the mean correspondence (overall
        and per class). Cohesion has no resampling unit and gets no interval.

    Returns
    -------
    Report
        ``per_group``: with ``cases``, one row per predicted class: ``n`` (queries),
        ``correspondence`` (with ``ci``: ``correspondence_lo``, ``correspondence_hi`` and
        ``queries``), ``n_undefined``, ``n_high``, ``n_medium`` and ``n_low`` (the band
        counts; their shares are in ``tables["bands"]``); with ``importances`` alone, the
        ``cohesion`` table. ``summary``: ``correspondence`` (mean over all queries) and
        ``low_share`` (share of the queries in the low band), then ``position_parity``,
        ``rank_alignment_topk`` and ``rank_alignment_alpha_jaccard`` (combo null).
        ``worst``: the predicted class with the lowest mean correspondence, the five least
        supported queries, and per cohesion metric the least cohesive group (reference 1).
        ``tables``: ``bands`` (per class and band, the queries and their share),
        ``least_supported`` (the ten lowest per-query correspondences) and ``cohesion`` (per
        group, every cohesion metric and ``n``, the features compared).

    Raises
    ------
    InvalidParameterError
        Neither ``cases`` nor ``importances`` given; and whatever the metric functions raise.

    Examples
    --------
    >>> import frameaudit as fa
    >>> importances = fa.datasets.importance_example()
    >>> r = fa.report.explain(importances=importances, overall="overall")
    >>> r.worst.select("metric", "name", "value").rows()[0]
    ('position_parity', 'g2', 0.0)
    """
    if cases is None and importances is None:
        msg = (
            "cases=None and importances=None: expected at least one of them (cases: one row per "
            "(query, neighbour); importances: one row per (group, feature))"
        )
        raise InvalidParameterError(msg)
    queries = [query] if isinstance(query, str) else list(query)
    summary: list[dict[str, Any]] = []
    worst: list[dict[str, Any]] = []
    tables: dict[str, pl.DataFrame] = {}
    per_group: pl.DataFrame | None = None
    keys: list[str] = []
    if cases is not None:
        roles: dict[str, Any] = {
            "query": query,
            "distance": distance,
            "label": label,
            "predicted": predicted,
            "class_weights": class_weights,
            "weighted": weighted,
            "high": high,
            "medium": medium,
        }
        # the per-class table is the summary by the predicted class, its count renamed ``n``
        refuse_outputs("predicted", [predicted], [*SUMMARY_COLUMNS, "n"], "this report")
        boot: dict[str, Any] = {} if ci is None else {"ci": ci, "n_boot": n_boot, "seed": seed}
        per_group = _per_class(cases, roles, weight, boot)
        keys = [predicted]
        summary += _overall(cases, roles, weight, boot, ci)
        tables["bands"] = _bands(per_group, predicted)
        tables["least_supported"] = _least_supported(cases, roles, queries)
        worst += _worst_correspondence(per_group, predicted, tables["least_supported"], queries)
    if importances is not None:
        means, cohesion = _cohesion(
            importances,
            {"group": group, "feature": feature, "importance": importance, "overall": overall},
            k,
            alpha,
        )
        summary += [
            _tables.summary_row(metric, None, value, _direction(metric), unit=LAYOUT.unit, ci=ci)
            for metric, value in means.items()
        ]
        tables["cohesion"] = cohesion
        worst += [_least_cohesive(cohesion, group, metric) for metric in COHESION]
        if per_group is None:
            per_group, keys = cohesion, [group]
    assert per_group is not None
    parts = [f"correspondence by {predicted}" if cases is not None else None]
    parts.append(f"cohesion by {group}" if importances is not None else None)
    return Report(
        family="explain",
        title="Explanation report: " + " and ".join(p for p in parts if p),
        keys=tuple(keys),
        per_group=per_group,
        summary=_tables.summary(summary, unit=LAYOUT.unit, ci=ci),
        worst=_tables.worst(worst),
        tables=tables,
        parameters={
            "query": queries,
            "distance": distance,
            "label": label,
            "predicted": predicted,
            "class_weights": None if class_weights is None else _pairs(class_weights),
            "weighted": weighted,
            "high": float(high),
            "medium": float(medium),
            "group": group,
            "feature": feature,
            "importance": importance,
            "overall": _plain_overall(overall),
            "k": k,
            "alpha": float(alpha),
            "weight": weight,
            "ci": ci,
            "n_boot": n_boot,
            "seed": seed,
        },
        record=_tables.record(
            cases if cases is not None else importances,
            units=queries if cases is not None else [],
            unit="queries",
        ),
        notes=_notes(cases is not None, importances is not None, ci, high, medium),
    )


def _per_class(
    cases: Any, roles: dict[str, Any], weight: str | None, boot: dict[str, Any]
) -> pl.DataFrame:
    """Per predicted class: the function's summary, with ``n`` for its queries."""
    predicted = roles["predicted"]
    values = _tables.eager(correspondence(cases, **roles, by=predicted, weight=weight, **boot))
    return values.drop("undefined_replicates", strict=False).rename({"n_queries": "n"})


def _overall(
    cases: Any,
    roles: dict[str, Any],
    weight: str | None,
    boot: dict[str, Any],
    ci: float | None,
) -> list[dict[str, Any]]:
    """The summary rows of all queries: the function's summary over one constant partition."""
    native = nw.from_native(cases)
    names = native.collect_schema().names()
    whole = "all_queries"
    while whole in names:
        whole += "_"
    constant = native.with_columns(nw.lit(0).alias(whole)).to_native()
    result = _tables.eager(correspondence(constant, **roles, by=whole, weight=weight, **boot))
    row = result.row(0, named=True)
    interval = None
    if ci is not None:
        interval = {
            "lo": row["correspondence_lo"],
            "hi": row["correspondence_hi"],
            LAYOUT.unit: row["queries"],
            "undefined_replicates": row["undefined_replicates"],
        }
    low_share = row["n_low"] / row["n_queries"] if row["n_queries"] else None
    return [
        _tables.summary_row(
            "correspondence",
            None,
            row["correspondence"],
            _direction("correspondence"),
            unit=LAYOUT.unit,
            ci=ci,
            interval=interval,
        ),
        _tables.summary_row(
            "low_share", None, low_share, _direction("low_share"), unit=LAYOUT.unit, ci=ci
        ),
    ]


def _bands(per_group: pl.DataFrame, predicted: str) -> pl.DataFrame:
    """Per class and band, the queries and their share (undefined only when there are any)."""
    bands = [*BANDS, *(["undefined"] if per_group["n_undefined"].sum() > 0 else [])]
    long = pl.concat(
        per_group.select(
            _tables.label([predicted]).alias("class"),
            pl.lit(band).alias("band"),
            pl.lit(order, pl.Int64).alias("order"),
            pl.col(f"n_{band}").cast(pl.Float64).alias("queries"),
            (pl.col(f"n_{band}") / pl.col("n")).alias("share"),
        )
        for order, band in enumerate(bands)
    )
    return long.sort("class", "order")


def _least_supported(cases: Any, roles: dict[str, Any], queries: list[str]) -> pl.DataFrame:
    """The queries with the lowest correspondence (lowest first; undefined ones left out)."""
    per_query = _tables.eager(correspondence(cases, **roles))
    predicted = roles["predicted"]
    native = nw.from_native(cases).select(*queries, predicted).unique()
    classes = _tables.eager(native)
    return (
        per_query.filter(pl.col("correspondence").is_not_null())
        .join(classes, on=queries, how="left", nulls_equal=True)
        .sort("correspondence", *queries)
        .head(_LEAST)
        .select(*queries, predicted, "correspondence", "band")
    )


def _worst_correspondence(
    per_group: pl.DataFrame, predicted: str, least: pl.DataFrame, queries: list[str]
) -> list[dict[str, Any]]:
    """The class with the lowest mean correspondence, then the least supported queries."""
    defined = per_group.filter(pl.col("correspondence").is_not_null())
    rows = []
    if defined.is_empty():
        rows.append(_tables.worst_row("correspondence", "class", "(no defined value)", None, None))
    else:
        name, value = (
            defined.select(_tables.label([predicted]).alias("name"), "correspondence")
            .sort("correspondence", "name")
            .row(0)
        )
        rows.append(_tables.worst_row("correspondence", "class", name, value, 1.0))
    rows.extend(
        _tables.worst_row("correspondence", "query", name, value, 1.0)
        for name, value in least.head(_SHOWN_QUERIES)
        .select(_tables.label(queries), "correspondence")
        .iter_rows()
    )
    return rows


def _cohesion(
    importances: Any, roles: dict[str, Any], k: int | None, alpha: float
) -> tuple[dict[str, Any], pl.DataFrame]:
    """Every cohesion metric: the mean over groups, and the per-group table with ``n``."""
    calls: dict[str, tuple[Any, dict[str, Any]]] = {
        "position_parity": (position_parity, {"k": k}),
        "rank_alignment_topk": (rank_alignment, {"k": k, "method": "topk"}),
        "rank_alignment_alpha_jaccard": (
            rank_alignment,
            {"method": "alpha_jaccard", "alpha": alpha},
        ),
    }
    group = roles["group"]
    summary: dict[str, Any] = {}
    table: pl.DataFrame | None = None
    for metric, (function, options) in calls.items():
        column = function.__name__
        summary[metric] = _tables.eager(function(importances, **roles, **options)).item()
        values = _tables.eager(function(importances, **roles, **options, per_group=True))
        values = values.rename({column: metric})
        table = values if table is None else table.join(values, on=group, nulls_equal=True)
    assert table is not None
    counts = _tables.eager(nw.from_native(importances).group_by(group).agg(nw.len().alias("n")))
    counts = counts.with_columns(pl.col("n").cast(pl.Int64))
    if k is not None:
        counts = counts.with_columns(pl.min_horizontal("n", pl.lit(k, pl.Int64)).alias("n"))
    table = table.join(counts, on=group, how="left", nulls_equal=True)
    return summary, table.select(group, "n", *COHESION).sort(group)


def _least_cohesive(table: pl.DataFrame, group: str, metric: str) -> dict[str, Any]:
    """The group with the lowest value of ``metric`` (most cohesive: 1)."""
    defined = table.filter(pl.col(metric).is_not_null())
    if defined.is_empty():
        return _tables.worst_row(metric, "group", "(no defined value)", None, None)
    name, value = (
        defined.select(_tables.label([group]).alias("name"), metric).sort(metric, "name").row(0)
    )
    return _tables.worst_row(metric, "group", name, value, 1.0)


def _pairs(mapping: Mapping[Any, Any]) -> list[list[Any]]:
    """A mapping as [key, value] pairs: JSON keeps non-string keys that way."""
    return [[key, value] for key, value in mapping.items()]


def _plain_overall(overall: Any) -> Any:
    if overall is None or isinstance(overall, str | int | float | bool):
        return overall
    if isinstance(overall, Mapping):
        return _pairs(overall)
    return "(a frame)"


def _notes(
    cases: bool, importances: bool, ci: float | None, high: float, medium: float
) -> tuple[str, ...]:
    notes = []
    if cases:
        notes += [
            "Correspondence is the weighted share of a query's nearest training cases whose "
            "label is the predicted class (1 = every neighbour agrees); it measures support by "
            "similar cases, not correctness.",
            f"Bands: high when correspondence >= {high:g}, medium when >= {medium:g}, else low. "
            "Read low_share first: the share of the queries whose neighbours mostly disagree.",
        ]
    if importances:
        notes.append(
            "Cohesion compares each group's feature-importance order with the overall order: "
            "position parity (same feature at each position) and rank alignment (top-k overlap; "
            "alpha-Jaccard: overlap of the features covering alpha of the importance); 1 is most "
            "cohesive."
        )
        if ci is not None:
            notes.append(
                "Cohesion has no interval: its rows are one importance per group and feature, "
                "not independent draws, so there is nothing to resample (ci applies to the "
                "correspondence only)."
            )
    return tuple(notes)


def charts(report: Report) -> dict[str, Any]:
    """The correspondence bands and means per predicted class, and the cohesion per group."""
    charts: dict[str, Any] = {}
    if "bands" in report.tables:
        charts["bands"] = _bands_chart(report)
        charts["correspondence"] = _correspondence_chart(report)
    if "cohesion" in report.tables:
        charts["cohesion"] = _cohesion_chart(report)
    return charts


def _bands_chart(report: Report) -> Any:
    alt = _charts.altair()
    bands = report.tables["bands"].with_columns(
        pl.when(pl.col("share") >= 0.06)
        .then(pl.col("share").map_elements(lambda s: f"{s:.0%}", return_dtype=pl.String))
        .otherwise(pl.lit(""))
        .alias("text")
    )
    present = bands["band"].unique(maintain_order=True).to_list()
    colour = alt.Color(
        "band:N",
        title="band",
        sort=present,
        scale=alt.Scale(domain=present, range=[_BAND_COLOURS[b] for b in present]),
    )
    y = alt.Y("class:N", title=None, sort=None)
    base = alt.Chart(bands).encode(
        x=alt.X(
            "share:Q",
            stack="zero",
            title="share of the class's queries",
            axis=alt.Axis(format="%"),
            scale=alt.Scale(domain=[0, 1]),
        ),
        y=y,
        order=alt.Order("order:Q"),
    )
    bars = base.mark_bar().encode(
        color=colour,
        tooltip=["class", "band", "queries", alt.Tooltip("share:Q", format=".1%")],
    )
    text = base.mark_text(dx=-4, align="right", color="#ffffff", fontWeight="bold").encode(
        x=alt.X("share:Q", stack="zero", bandPosition=1), text="text:N"
    )
    parameters = report.parameters
    classes = bands["class"].n_unique()
    predicted = parameters["predicted"]
    return _charts.config(
        alt.layer(bars, text).properties(
            width=_charts.WIDTH,
            height=max(60, 34 * classes),
            title=alt.Title(
                f"Correspondence bands per {predicted} class",
                subtitle=(
                    f"Supported: bars mostly green (high: >= {parameters['high']:g}; "
                    f"low: < {parameters['medium']:g})."
                ),
            ),
        )
    )


def _correspondence_chart(report: Report) -> Any:
    alt = _charts.altair()
    predicted = report.parameters["predicted"]
    interval = [c for c in ("correspondence_lo", "correspondence_hi") if c in report.per_group]
    data = report.per_group.select(
        _tables.label([predicted]).alias("class"), "correspondence", "n", *interval
    )
    overall = report.summary.filter(pl.col("metric") == "correspondence")["value"].item()
    return _charts.estimates(
        data,
        value="correspondence",
        label="class",
        reference=overall,
        x=alt.X("correspondence:Q", title="mean correspondence", scale=alt.Scale(domain=[0, 1])),
        y_title=None,
        title=f"Mean correspondence per {predicted} class",
        subtitle="Supported: points near 1, every class alike (dashed: all queries).",
        tooltip=["correspondence", "n"],
    )


def _cohesion_chart(report: Report) -> Any:
    alt = _charts.altair()
    group = report.parameters["group"]
    table = report.tables["cohesion"]
    long = table.select(_tables.label([group]).alias("group"), *COHESION).unpivot(
        index="group", variable_name="metric", value_name="value"
    )
    colour = alt.Color(
        "metric:N",
        title="metric",
        sort=list(COHESION),
        scale=alt.Scale(domain=list(COHESION), range=list(_charts.PALETTE[:3])),
        legend=alt.Legend(orient="bottom", direction="vertical"),
    )
    bars = (
        alt.Chart(long)
        .mark_bar(height=10)
        .encode(
            x=alt.X(
                "value:Q",
                title="agreement with the overall ranking",
                scale=alt.Scale(domain=[0, 1]),
            ),
            y=alt.Y("group:N", title=None, sort=None),
            yOffset=alt.YOffset("metric:N", sort=list(COHESION)),
            color=colour,
            tooltip=["group", "metric", alt.Tooltip("value:Q", format=".4g")],
        )
    )
    parity = (
        alt.Chart(pl.DataFrame({"parity": [1.0]}))
        .mark_rule(color="#000000", strokeDash=[5, 3], strokeWidth=1.5)
        .encode(x="parity:Q")
    )
    return _charts.config(
        alt.layer(bars, parity).properties(
            width=_charts.WIDTH,
            height=max(60, 40 * table.height),
            title=alt.Title(
                f"Importance-rank agreement per {group}",
                subtitle="Fair (cohesive): every bar reaches the dashed line at 1.",
            ),
        )
    )


_layout.declare("explain", LAYOUT, charts)
