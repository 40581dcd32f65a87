"""The reproducibility report: every pairwise metric per pair of runs and over the pairs."""

from __future__ import annotations

import inspect
from typing import Any

import narwhals.stable.v2 as nw
import polars as pl

from frameaudit import repro as metrics
from frameaudit._params import strict
from frameaudit._registry import Metric, entry
from frameaudit._registry import metrics as registered
from frameaudit._roles import Names, Role, column_names
from frameaudit.report import _charts, _layout, _tables
from frameaudit.report._layout import Layout
from frameaudit.report._report import Report
from frameaudit.repro import EmptyUnion

__all__ = ["LAYOUT", "charts", "repro"]

LAYOUT = Layout(
    per_group="Per pair of runs (n: the samples compared)",
    worst=(
        "Least reproducible pair per metric, then run (reference: the mean over them), then "
        "with groups the most arbitrary group (reference: all samples)"
    ),
    unit="samples",
    rows="pairs of runs",
    shown={
        "leave_one_out": "Leave-one-out consistency (the other runs' with each run left out)",
        "multiplicity": "Multiplicity per group (n: the group's samples)",
    },
    lead=("ec_local", None),
)

# the pairs furthest from the most reproducible value (EC_g has none: two perfect runs score 0)
_RANKED = tuple(name for name in metrics.METRICS if entry(name).worst == "low")
_PAIR = ("run_a", "run_b")
_HEADLINE = "ec_local"
_LABELLED_RUNS = 12  # the matrix shows each cell's value up to this many runs


@strict
def repro(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    empty_union: EmptyUnion = "null",
    group: Names | None = None,
    score: str | None = None,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Report:
    r"""The reproducibility report of repeated runs: every pairwise metric, per pair and overall.

    Compares every pair of runs with the eight metrics of :data:`frameaudit.repro.METRICS`
    (one :func:`frameaudit.repro.summary` call with ``pairwise=True`` for the pairs, one
    without for the means over the pairs) and adds :func:`frameaudit.repro.leave_one_out`.

    Parameters
    ----------
    frame
        Any frame the metrics take (Polars DataFrame/LazyFrame, pandas, pyarrow, DuckDB,
        PySpark): one row per (run, sample). The report holds eager Polars frames.
    run, sample, target, prediction
        The column roles, as for :func:`frameaudit.repro.ec_local`.
    empty_union
        EC_ℓ (and leave-one-out consistency) when no run of a pair makes an error (0/0):
        ``"null"``, ``0`` or ``1``.
    group
        Column(s) constant within a sample (a protected attribute): the multiplicity metrics
        per group.
    score
        A numeric score column in [0, 1] (the runs' probabilities): adds the score range.
    weight
        Column of sample weights (non-negative, the same in every run of a sample).
    ci
        Confidence level of percentile bootstrap intervals over the samples (the runs stay
        fixed), e.g. 0.95. None: no intervals.
    n_boot, seed
        Bootstrap replicates and seed, as for :func:`frameaudit.repro.ec_local`.

    Returns
    -------
    Report
        ``per_group``: one row per pair of runs, ``run_a`` < ``run_b``: ``n`` (the samples of
        positive weight) and each metric's value (with ``ci``: ``<metric>_lo``,
        ``<metric>_hi`` and ``samples``). ``summary``: one row per metric (combo null), the
        mean over the pairs, with ``ci`` its interval. ``worst``: per metric (EC_g left out:
        it has no most-reproducible value) the pair with the lowest value, on a tie the first
        in run order, against the mean over the pairs; then the run whose leaving out raises
        the other runs' consistency most, against the mean over the runs. ``tables``:
        ``leave_one_out`` (each run's leave-one-out consistency).

        With ``group`` or ``score``, the multiplicity metrics
        (:mod:`frameaudit.repro.multiplicity`: churn over all pairs with its win and loss,
        the flip rates in run order, ambiguity, discrepancy against the first run,
        self-consistency, and with ``score`` the score range) are summary rows too. With
        ``group``, ``tables["multiplicity"]`` holds their per-group values (with ``ci``, their
        intervals) and ``worst`` names, per metric, the group furthest from its best value
        against the value over all samples.

    Examples
    --------
    >>> import frameaudit as fa
    >>> r = fa.report.repro(fa.datasets.runs_example())
    >>> r.worst.filter(kind="run")["name"].item()
    '3'
    >>> r.passed({"ec_local": (">=", 0.4), "pa_kappa": (">=", 0.8)})
    False
    """
    # the report's options are the metric functions' own (n_boot and seed unused without ci)
    options: dict[str, Any] = {
        "run": run,
        "sample": sample,
        "target": target,
        "prediction": prediction,
        "empty_union": empty_union,
        "weight": weight,
        "ci": ci,
        "n_boot": n_boot,
        "seed": seed,
    }
    pairs = _tables.eager(metrics.summary(frame, **options, pairwise=True))
    overall = _tables.eager(metrics.summary(frame, **options))
    left_out = _tables.eager(metrics.leave_one_out(frame, **options))
    columns = {"target": target, "prediction": prediction, "score": score}
    common = {"run": run, "sample": sample, "weight": weight, "ci": ci, "n_boot": n_boot}
    arbitrary = [
        _Arbitrary(m, frame, {**common, "seed": seed}, columns, group)
        for m in _MULTIPLICITY
        if (group is not None or score is not None)
        and (score is not None or "score" not in m.roles)
    ]
    n = _samples(frame, sample, weight)
    per_group = pairs.select(
        *_PAIR,
        pl.lit(n, pl.Int64).alias("n"),
        *(c for c in pairs.columns if c not in _PAIR and not c.endswith("_undefined_replicates")),
    )
    means = {row["metric"]: row for row in overall.iter_rows(named=True)}
    summary = [_row(name, means[name], ci) for name in metrics.METRICS]
    summary += [row for a in arbitrary for row in a.summary_rows(ci)]
    worst = [_worst(per_group, list(_PAIR), name, "pair", means[name]["mean"]) for name in _RANKED]
    worst.append(_worst(left_out, [run], "leave_one_out", "run", left_out["leave_one_out"].mean()))
    tables = {"leave_one_out": left_out}
    if group is not None:
        worst += [a.worst_row() for a in arbitrary]
        tables["multiplicity"] = _per_group_table(arbitrary)
    return Report(
        family="repro",
        title=f"Reproducibility report: {left_out.height} runs, {n} samples",
        keys=_PAIR,
        per_group=per_group,
        summary=_tables.summary(summary, unit=LAYOUT.unit, ci=ci),
        worst=_tables.worst(worst),
        tables=tables,
        parameters={**options, "group": group, "score": score},
        record=_tables.record(frame, units=[sample], unit="samples"),
        notes=(
            "Every pair of runs is compared on the same samples; each metric but EC_g is 1 when "
            "two runs agree completely (summary: the mean over the pairs).",
            "Read ec_local first: of the samples either run gets wrong, the share both get wrong. "
            "ea_kappa and pa_kappa discount the agreement expected by chance (0 = chance).",
            "Leave-one-out: the other runs' total consistency with one run left out; a run whose "
            "leaving out raises it above the others' makes errors of its own.",
        ),
    )


_MULTIPLICITY = tuple(
    m for m in registered("repro", "table") if m.function.__module__.endswith(".multiplicity")
)
"""The multiplicity metrics, from the registry (each one call with, one without groups)."""


class _Arbitrary:
    """One multiplicity metric of the report: its values over all samples, and per group."""

    def __init__(
        self,
        metric: Metric,
        frame: Any,
        common: dict[str, Any],
        columns: dict[str, Any],
        group: Names | None,
    ) -> None:
        parameters = inspect.signature(metric.function).parameters
        given = {role: column for role, column in columns.items() if role in parameters}
        self.metric, self.ci = metric, common["ci"]
        call = {**common, **given}
        self.overall = _tables.eager(metric.function(frame, **call))
        self.columns = [c for c in metric.outputs if c in self.overall.columns]
        self.groups: list[str] = []
        self.per_group: pl.DataFrame | None = None
        if group is not None:
            self.per_group = _tables.eager(metric.function(frame, group=group, **call))
            self.groups = column_names(Role("group", group, many=True))

    def summary_rows(self, ci: float | None) -> list[dict[str, Any]]:
        """Each output column over all samples (with ``ci``, its interval)."""
        values = self.overall.row(0, named=True)
        rows = []
        for column in self.columns:
            interval = None
            if ci is not None:
                several = len(self.columns) > 1
                undefined = f"{column}_undefined_replicates" if several else "undefined_replicates"
                interval = {
                    "lo": values[f"{column}_lo"],
                    "hi": values[f"{column}_hi"],
                    LAYOUT.unit: values[LAYOUT.unit],
                    "undefined_replicates": values[undefined],
                }
            row = _tables.summary_row(
                column, None, values[column], _tables.direction(column), unit=LAYOUT.unit, ci=ci,
                interval=interval,
            )  # fmt: skip
            rows.append(row)
        return rows

    def worst_row(self) -> dict[str, Any]:
        """The group furthest from the best value of the headline column."""
        assert self.per_group is not None
        column = self.columns[0]
        defined = self.per_group.filter(pl.col(column).is_not_null() & pl.col(column).is_not_nan())
        reference = self.overall[column].item()
        if defined.is_empty():
            return _tables.worst_row(column, "group", "(no defined value)", None, reference)
        highest = self.metric.worst == "high"
        order = defined.sort(
            _tables.ordered(column), *self.groups, descending=[highest] + [False] * len(self.groups)
        )
        name, value = order.select(_tables.label(self.groups), column).row(0)
        return _tables.worst_row(column, "group", name, value, reference)


def _per_group_table(arbitrary: list[_Arbitrary]) -> pl.DataFrame:
    """Per group, every multiplicity column (with its interval) and the group's samples."""
    first = arbitrary[0]
    assert first.per_group is not None
    keys = [*first.groups, "n"]
    table = first.per_group.select(keys)
    for a in arbitrary:
        assert a.per_group is not None
        shown = [
            f"{c}{end}"
            for c in a.columns
            for end in ("", "_lo", "_hi")
            if f"{c}{end}" in a.per_group.columns
        ]
        table = table.join(a.per_group.select(*a.groups, *shown), on=a.groups, how="left")
    return table


def _samples(frame: Any, sample: str, weight: str | None) -> int:
    """The samples every pair is compared on (those of positive weight), counted in the engine."""
    native = nw.from_native(frame)
    if weight is not None:
        native = native.filter(nw.col(weight) > 0)
    count = _tables.eager(native.select(nw.col(sample).n_unique().alias("n"))).item()
    return int(count)


def _row(metric: str, result: dict[str, Any], ci: float | None) -> dict[str, Any]:
    """A summary row from the metric's row of :func:`frameaudit.repro.summary`."""
    interval = None
    if ci is not None:
        interval = {
            "lo": result["mean_lo"],
            "hi": result["mean_hi"],
            LAYOUT.unit: result[LAYOUT.unit],
            "undefined_replicates": result["undefined_replicates"],
        }
    return _tables.summary_row(
        metric,
        None,
        result["mean"],
        _tables.direction(metric),
        unit=LAYOUT.unit,
        ci=ci,
        interval=interval,
    )


def _worst(
    values: pl.DataFrame, keys: list[str], metric: str, kind: str, reference: Any
) -> dict[str, Any]:
    """The least reproducible row: a pair's lowest value, or the highest leave-one-out value.

    Leaving out the run least consistent with the others raises their consistency most. Ties
    go to the first row in run order; undefined (null or NaN) values are left out.
    """
    highest = kind == "run"
    defined = values.filter(pl.col(metric).is_not_null() & pl.col(metric).is_not_nan())
    if defined.is_empty():
        return _tables.worst_row(metric, kind, "(no defined value)", None, None)
    order = defined.sort(_tables.ordered(metric), *keys, descending=[highest] + [False] * len(keys))
    name, value = order.select(_tables.label(keys), metric).row(0)
    return _tables.worst_row(metric, kind, name, value, reference)


def charts(report: Report) -> dict[str, Any]:
    """The run × run matrix of EC_ℓ, each run's leave-one-out consistency, the groups."""
    shown = {"matrix": _matrix(report), "leave_one_out": _leave_one_out(report)}
    if "multiplicity" in report.tables:
        shown["multiplicity"] = _multiplicity_chart(report)
    return shown


def _multiplicity_chart(report: Report) -> Any:
    """Each multiplicity metric's headline per group, one panel each on its own scale.

    A point, its interval, and a dashed rule at the value over all samples.
    """
    alt = _charts.altair()
    table = report.tables["multiplicity"]
    group = report.parameters["group"]
    groups = column_names(Role("group", group, many=True))
    overall = dict(report.summary.select("metric", "value").iter_rows())
    headlines = [
        next(iter(m.outputs)) for m in _MULTIPLICITY if next(iter(m.outputs)) in table.columns
    ]
    parts = []
    for column in headlines:
        bounds = [
            pl.col(f"{column}{end}")
            if f"{column}{end}" in table.columns
            else pl.lit(None, pl.Float64)
            for end in ("_lo", "_hi")
        ]
        parts.append(
            table.select(
                pl.lit(column).alias("metric"),
                _tables.label(groups).alias("group"),
                pl.col(column).alias("value"),
                bounds[0].alias("lo"),
                bounds[1].alias("hi"),
                pl.lit(overall[column], pl.Float64).alias("overall"),
            )
        )
    data = pl.concat(parts)
    y = alt.Y("group:N", title=", ".join(groups), sort=None)
    base = alt.Chart().encode(y=y)
    layers = [
        base.mark_rule(color=_charts.PALETTE[0], strokeWidth=2).encode(x="lo:Q", x2="hi:Q"),
        base.mark_point(filled=True, size=80, color=_charts.PALETTE[0]).encode(
            x=alt.X("value:Q", title=None),
            tooltip=["metric:N", "group:N", alt.Tooltip("value:Q", format=".3f")],
        ),
        alt.Chart().mark_rule(color=_charts.PALETTE[3], strokeDash=[5, 3]).encode(x="overall:Q"),
    ]
    faceted = (
        alt.layer(*layers, data=data)
        .properties(width=_charts.WIDTH, height=max(40, 24 * table.height))
        .facet(
            row=alt.Row(
                "metric:N",
                title=None,
                sort=headlines,
                header=alt.Header(labelAngle=0, labelAlign="left"),
            )
        )
        .resolve_scale(x="independent")
        .properties(
            title=alt.Title(
                "Arbitrariness per group",
                subtitle="Lower is better but for self-consistency; dashed: all samples. "
                "Whiskers: bootstrap intervals where computed.",
            )
        )
    )
    return _charts.config(faceted)


def _matrix(report: Report) -> Any:
    """A heatmap of the headline metric, both triangles (the metric is symmetric)."""
    alt = _charts.altair()
    pairs = report.per_group.select(
        *(pl.col(c).cast(pl.String) for c in _PAIR), pl.col(_HEADLINE).alias("value")
    )
    cells = pl.concat([pairs, pairs.select(run_a="run_b", run_b="run_a", value="value")])
    runs = report.tables["leave_one_out"][report.parameters["run"]].cast(pl.String).to_list()
    side = max(16, min(48, 400 // max(len(runs), 1)))
    x = alt.X("run_b:O", title="run", sort=runs, axis=alt.Axis(labelAngle=0, orient="top"))
    y = alt.Y("run_a:O", title="run", sort=runs)
    heat = (
        alt.Chart(cells)
        .mark_rect(stroke="#ffffff", strokeWidth=1)
        .encode(
            x=x,
            y=y,
            color=alt.condition(
                "isValid(datum.value)",
                alt.Color(
                    "value:Q",
                    title=_HEADLINE,
                    scale=alt.Scale(scheme="viridis", domain=[0, 1]),
                    # a symbol legend: a gradient legend's SVG id changes on every render
                    legend=alt.Legend(type="symbol", values=[0, 0.2, 0.4, 0.6, 0.8, 1]),
                ),
                alt.value("#d9d9d9"),  # undefined: neither run makes an error
            ),
            tooltip=[
                alt.Tooltip("run_a:O", title="run"),
                alt.Tooltip("run_b:O", title="with run"),
                alt.Tooltip("value:Q", title=_HEADLINE, format=".3f"),
            ],
        )
    )
    layers = [heat]
    if len(runs) <= _LABELLED_RUNS:
        labels = (
            alt.Chart(cells)
            .transform_filter("isValid(datum.value)")
            .mark_text(fontSize=11)
            .encode(
                x=x,
                y=y,
                text=alt.Text("value:Q", format=".2f"),
                # dark cells (low values in viridis) take white text
                color=alt.condition(
                    "datum.value < 0.5", alt.value("#ffffff"), alt.value("#000000")
                ),
            )
        )
        layers.append(labels)
    return _charts.config(
        alt.layer(*layers).properties(
            width=side * len(runs),
            height=side * len(runs),
            title=alt.Title(
                f"{_HEADLINE} of every pair of runs",
                subtitle="Reproducible: every cell near 1 (the runs err on the same samples).",
            ),
        )
    )


def _leave_one_out(report: Report) -> Any:
    """Each run's leave-one-out consistency, with its interval and the mean over the runs."""
    alt = _charts.altair()
    run = report.parameters["run"]
    table = report.tables["leave_one_out"]
    interval = [c for c in ("leave_one_out_lo", "leave_one_out_hi") if c in table.columns]
    data = table.select(pl.col(run).cast(pl.String).alias("run"), "leave_one_out", *interval)
    return _charts.estimates(
        data,
        value="leave_one_out",
        label="run",
        reference=data["leave_one_out"].mean(),  # type: ignore[arg-type]
        x=alt.X(
            "leave_one_out:Q", title="consistency of the other runs", scale=alt.Scale(domain=[0, 1])
        ),
        y_title="run left out",
        title="Leave-one-out consistency per run",
        subtitle="Reproducible: every bar near 1 and none longer than the rest (dashed: the mean).",
        bars=True,
        tooltip=[alt.Tooltip("leave_one_out:Q", format=".3f")],
    )


_layout.declare("repro", LAYOUT, charts)
