"""The clustering-fairness report: every label metric per cluster and overall, SFR, silhouette."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from frameaudit import fair
from frameaudit._engine import UNDEFINED
from frameaudit._params import strict
from frameaudit._registry import metrics
from frameaudit._roles import refuse_outputs
from frameaudit.exceptions import UnsupportedBackendError
from frameaudit.fair.clustering import label_metrics
from frameaudit.report import _charts, _layout, _tables
from frameaudit.report._layout import Layout
from frameaudit.report._report import Report

__all__ = ["LAYOUT", "charts", "clustering"]

LAYOUT = Layout(
    per_group="Per cluster (n: the cluster's points of groups a and b)",
    worst="Furthest from parity (reference: balance 1; ratio N_a/N_b; TV and KL terms 0)",
    unit="points",
    rows="clusters",
    shown={"composition": "Composition (share: the cluster's part of the group's points)"},
    lead=("cluster_balance", None),
    needs={m.name: m.needs for m in metrics("clustering") if m.needs},
)


@strict
def clustering(
    frame: Any,
    *,
    cluster: str = "cluster",
    group: str = "group",
    a: Any,
    b: Any,
    features: str | Sequence[str] | None = None,
    centroids: Any = None,
    point: str | None = None,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Report:
    r"""The clustering-fairness report of a clustering: every metric, per cluster and overall.

    Computes the four label metrics (:func:`frameaudit.fair.cluster_balance`,
    :func:`~frameaudit.fair.min_cluster_ratio`, :func:`~frameaudit.fair.cluster_distribution_tv`,
    :func:`~frameaudit.fair.cluster_distribution_kl`) per cluster (``per_cluster=True``) and
    overall, each of the two a single plan for the four (the same values and intervals as
    their own functions give); with ``features``, also
    :func:`~frameaudit.fair.social_fairness_ratio` and
    :func:`~frameaudit.fair.silhouette_difference`. The silhouette is left out, with a
    note, where its metric refuses the input: with ``weight`` (no weighted silhouette) and on
    DuckDB and PySpark (its kernel runs in memory only).

    Parameters
    ----------
    frame
        Any frame the metrics take (Polars DataFrame/LazyFrame, pandas, pyarrow, DuckDB,
        PySpark): one row per point. The report holds eager Polars frames.
    cluster, group, a, b
        The cluster label column, the group column and its two compared values, as for
        :func:`frameaudit.fair.cluster_balance`. Rows of other groups count in the cluster
        sizes behind ρ but not in ``n``.
    features
        The coordinates (numeric columns, or one fixed-size array column). None: the social
        fairness ratio and the silhouette difference are left out.
    centroids
        The centroids for the social fairness ratio, as for
        :func:`frameaudit.fair.social_fairness_ratio`. None: the cluster means.
    point, weight
        Point ids (required with ``ci``) and point weights, as for the metrics.
    ci
        Confidence level of percentile bootstrap intervals over the points (``point``
        required), e.g. 0.95. None: no intervals.
    n_boot, seed
        Bootstrap replicates and seed, as for :func:`frameaudit.fair.cluster_balance`.

    Returns
    -------
    Report
        ``per_group``: one row per cluster: the cluster column, ``n`` (the cluster's points of
        groups a and b, n_a + n_b: points of other groups are not counted; with ``weight``,
        sums of weights), ``n_a``, ``n_b`` and each label metric's term for the cluster (with
        ``ci``: ``<metric>_lo``, ``<metric>_hi`` and ``points``, the intervals the metrics give
        per cluster). ``summary``: one row per metric (combo null) with its direction and
        range; with ``ci``, ``lo``/``hi`` from each metric called with ``ci=``, except the
        silhouette difference, which has no interval (null). ``worst``: per label metric the
        cluster furthest from parity: the lowest balance (parity 1), the lowest ratio
        N_{a,c}/N_{b,c} (parity N_a/N_b, every cluster with the data's ratio), the largest
        TV term and the largest KL term (parity 0). ``tables``: ``composition`` (each
        cluster's share of group a's points and of group b's points, one row per cluster and
        group).

    Examples
    --------
    >>> import frameaudit as fa
    >>> points = fa.datasets.clustering_example()
    >>> r = fa.report.clustering(points, a="a", b="b", features=["x", "y"])
    >>> r.worst.filter(r.worst["metric"] == "cluster_balance")["name"].item()
    '3'
    >>> r.check({"cluster_balance": (">=", 0.8)})["passed"].item()
    False
    """
    refuse_outputs("cluster", [cluster], _COMPOSITION, "this report")
    roles: dict[str, Any] = {"cluster": cluster, "group": group, "a": a, "b": b}
    resampling: dict[str, Any] = {"point": point, "weight": weight}
    boot: dict[str, Any] = {} if ci is None else {"ci": ci, "n_boot": n_boot, "seed": seed}
    labels = metrics("clustering", "clusters")
    detail, whole = (
        _tables.eager(label_metrics(frame, **roles, **resampling, **boot, per_cluster=per_cluster))
        for per_cluster in (True, False)
    )
    n = (pl.col("n_a") + pl.col("n_b")).alias("n")
    bounds = ("lo", "hi") if ci else ()
    per_group = detail.select(
        cluster,
        n,
        "n_a",
        "n_b",
        *(c for m in labels for c in (m.name, *(f"{m.name}_{end}" for end in bounds))),
        *([LAYOUT.unit] if ci else []),
    )
    summary = [_row(m.name, whole, ci, undefined=f"{m.name}_{UNDEFINED}") for m in labels]
    notes = [
        "Each cluster's balance is min(ρ_a, ρ_b), ρ_g the cluster's share of group g over g's "
        "share of all points: 1 when the cluster mirrors the data, 0 when it lacks a group.",
        "Read cluster_distribution_tv first: 0 when a and b spread over the clusters in the "
        "same proportions, 1 when they share no cluster.",
    ]
    if features is not None:
        sfr = fair.social_fairness_ratio(
            frame, **roles, features=features, centroids=centroids, **resampling, **boot
        )
        summary.append(_row("social_fairness_ratio", _tables.eager(sfr), ci))
        silhouette, note = _silhouette(frame, roles, features, weight, ci)
        if silhouette is not None:
            summary.append(_row("silhouette_difference", silhouette, None))
        if note:
            notes.append(note)
    worst = [_worst_cluster(per_group, cluster, m.name, m.worst == "low") for m in labels]
    return Report(
        family="clustering",
        title=f"Clustering-fairness report: {group} {a!s} vs {b!s} over {cluster}",
        keys=(cluster,),
        per_group=per_group.sort(cluster),
        summary=_tables.summary(summary, unit=LAYOUT.unit, ci=ci),
        worst=_tables.worst(worst),
        tables={"composition": _composition(detail, cluster, a, b)},
        parameters={
            "cluster": cluster,
            "group": group,
            "a": a,
            "b": b,
            "features": None if features is None else _names(features),
            "centroids": None if centroids is None else "given",
            "point": point,
            "weight": weight,
            "ci": ci,
            "n_boot": n_boot,
            "seed": seed,
        },
        record=_tables.record(frame, units=[point] if point else [], unit="points"),
        notes=tuple(notes),
    )


def _names(features: str | Sequence[str]) -> list[str]:
    return [features] if isinstance(features, str) else list(features)


def _silhouette(
    frame: Any, roles: dict[str, Any], features: Any, weight: str | None, ci: float | None
) -> tuple[pl.DataFrame | None, str | None]:
    """The silhouette difference (no interval), or None and the note saying why it is left out."""
    if weight is not None:
        return None, (
            "silhouette_difference is left out: it takes no point weights (a weighted "
            "silhouette needs every pairwise distance weighted)."
        )
    try:
        result = fair.silhouette_difference(frame, **roles, features=features)
    except UnsupportedBackendError:
        return None, (
            "silhouette_difference is left out: its all-pairs kernel runs on in-memory engines "
            "only (Polars, pandas, pyarrow); select the columns into Polars to add it."
        )
    note = None
    if ci is not None:
        note = (
            "silhouette_difference has no interval (lo/hi null): a replicate would recompute "
            "all N² distances, which frameaudit does not do."
        )
    return _tables.eager(result), note


def _row(
    metric: str, result: pl.DataFrame, ci: float | None, *, undefined: str = UNDEFINED
) -> dict[str, Any]:
    """A summary row; ``result``: one row with the metric's value.

    With ``ci=``, the row holds its interval, the points and its undefined replicates (in the
    column ``undefined``).
    """
    interval = None
    if ci is not None and f"{metric}_lo" in result.columns:
        interval = {
            "lo": result[f"{metric}_lo"].item(),
            "hi": result[f"{metric}_hi"].item(),
            LAYOUT.unit: result[LAYOUT.unit].item(),
            UNDEFINED: result[undefined].item(),
        }
    value = result[metric].item()
    return _tables.summary_row(
        metric, None, value, _tables.direction(metric), unit=LAYOUT.unit, ci=ci, interval=interval
    )


def _worst_cluster(
    per_group: pl.DataFrame, cluster: str, metric: str, lowest: bool
) -> dict[str, Any]:
    """The cluster furthest from parity under ``metric``: its lowest or largest term.

    Ties go to the first cluster label; undefined (null or NaN) terms are skipped.
    """
    defined = per_group.filter(pl.col(metric).is_not_null() & pl.col(metric).is_not_nan())
    if defined.is_empty():
        return _tables.worst_row(metric, "cluster", "(no defined value)", None, None)
    reference: Any = 1.0 if metric == "cluster_balance" else 0.0
    if metric == "min_cluster_ratio":  # every cluster with the data's ratio
        reference = per_group.select(pl.col("n_a").sum() / pl.col("n_b").sum()).item()
    row = defined.sort(_tables.ordered(metric), cluster, descending=[not lowest, False]).row(
        0, named=True
    )
    return _tables.worst_row(metric, "cluster", row[cluster], row[metric], reference)


_COMPOSITION = ("group", "points", "share", "n", "n_a", "n_b")
"""The columns beside the cluster's: the composition table's and the per-group table's
sizes."""


def _composition(detail: pl.DataFrame, cluster: str, a: Any, b: Any) -> pl.DataFrame:
    """Each cluster's share of group a's points and of group b's (the metrics' P_g(c))."""
    parts = [
        detail.select(
            cluster,
            pl.lit(str(value)).alias(_COMPOSITION[0]),
            pl.col(f"n_{side}").alias(_COMPOSITION[1]),
            pl.col(f"share_{side}").alias(_COMPOSITION[2]),
        )
        for side, value in (("a", a), ("b", b))
    ]
    return pl.concat(parts).sort(cluster, "group")


def charts(report: Report) -> dict[str, Any]:
    """Each cluster's share of each group's points, and each cluster's balance."""
    alt = _charts.altair()
    cluster = report.keys[0]
    composition = report.tables["composition"].with_columns(
        _tables.label([cluster]).alias("cluster_label")
    )
    order = composition["cluster_label"].unique(maintain_order=True).to_list()
    groups = [str(report.parameters["a"]), str(report.parameters["b"])]
    colour = alt.Color(
        "group:N",
        title=str(report.parameters["group"]),
        scale=alt.Scale(domain=groups, range=list(_charts.PALETTE[:2])),
    )
    x = alt.X("cluster_label:N", title=cluster, sort=order, axis=alt.Axis(labelAngle=0))
    bars = (
        alt.Chart(composition)
        .mark_bar()
        .encode(
            x=x,
            xOffset=alt.XOffset("group:N", sort=groups),
            y=alt.Y("share:Q", title="share of the group's points", axis=alt.Axis(format="%")),
            color=colour,
            tooltip=["cluster_label", "group", "points", alt.Tooltip("share:Q", format=".1%")],
        )
    )
    shown: dict[str, Any] = {}
    shown["composition"] = _charts.config(
        bars.properties(
            width=_charts.WIDTH,
            height=260,
            title=alt.Title(
                "Each group's points across the clusters",
                subtitle="Fair: the two bars of every cluster equally long.",
            ),
        )
    )
    interval = [c for c in ("cluster_balance_lo", "cluster_balance_hi") if c in report.per_group]
    data = report.per_group.select(
        _tables.label([cluster]).alias("cluster_label"), "cluster_balance", "n", *interval
    )
    shown["balance"] = _charts.estimates(
        data,
        value="cluster_balance",
        label="cluster_label",
        reference=1.0,
        x=alt.X("cluster_balance:Q", title="balance min(ρ_a, ρ_b)", scale=alt.Scale(domainMin=0)),
        y_title=cluster,
        title="Balance of each cluster",
        subtitle="Fair: every bar reaches the dashed line at 1.",
        bars=True,
        tooltip=["cluster_balance", "n"],
    )
    return shown


_layout.declare("clustering", LAYOUT, charts)
