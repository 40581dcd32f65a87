"""The reproducibility report: every pairwise metric per pair of runs and over the pairs."""

from __future__ import annotations

from typing import Any

import narwhals.stable.v2 as nw
import polars as pl

from frameaudit import repro as metrics
from frameaudit._registry import entry
from frameaudit.report import _charts, _layout, _tables
from frameaudit.report._layout import Layout
from frameaudit.report._report import Report
from frameaudit.repro import EmptyUnion

__all__ = ["LAYOUT", "charts", "repro"]

LAYOUT = Layout(
    per_group="Per pair of runs (n: the samples compared)",
    worst="Least reproducible pair per metric, then run (reference: the mean over them)",
    unit="samples",
    rows="pairs of runs",
    shown={"leave_one_out": "Leave-one-out consistency (the other runs' with each run left out)"},
    lead=("ec_local", None),
)

# the pairs furthest from the most reproducible value (EC_g has none: two perfect runs score 0)
_RANKED = tuple(name for name in metrics.METRICS if entry(name).worst == "low")
_PAIR = ("run_a", "run_b")
_HEADLINE = "ec_local"
_LABELLED_RUNS = 12  # the matrix shows each cell's value up to this many runs


def repro(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    empty_union: EmptyUnion = "null",
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
    n = _samples(frame, sample, weight)
    per_group = pairs.select(
        *_PAIR,
        pl.lit(n, pl.Int64).alias("n"),
        *(c for c in pairs.columns if c not in _PAIR and not c.endswith("_undefined_replicates")),
    )
    means = {row["metric"]: row for row in overall.iter_rows(named=True)}
    summary = [_row(name, means[name], ci) for name in metrics.METRICS]
    worst = [_worst(per_group, list(_PAIR), name, "pair", means[name]["mean"]) for name in _RANKED]
    worst.append(_worst(left_out, [run], "leave_one_out", "run", left_out["leave_one_out"].mean()))
    return Report(
        family="repro",
        title=f"Reproducibility report: {left_out.height} runs, {n} samples",
        keys=_PAIR,
        per_group=per_group,
        summary=_tables.summary(summary, unit=LAYOUT.unit, ci=ci),
        worst=_tables.worst(worst),
        tables={"leave_one_out": left_out},
        parameters=options,
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
    """The run × run matrix of EC_ℓ, and each run's leave-one-out consistency."""
    return {"matrix": _matrix(report), "leave_one_out": _leave_one_out(report)}


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
