"""Repeated-run input shared by every reproducibility metric: validation and summaries.

The input is tidy: one row per (run, sample) with the sample's true ``target`` and the run's
``prediction``. :func:`prepare` checks the schema at call time and adds the value checks (two
runs or more, every run predicts every sample exactly once, one target per sample, no nulls,
a sample weight that is non-negative and the same in every row of its sample), then renames the
roles to internal names so that the metric code never collides with the caller's column names.
:func:`summarize` turns a distribution of per-pair values into the documented summary
statistics.

Weights and the bootstrap resample the sample (SPEC §5): every count over samples is a sum of
the samples' weights (:meth:`Runs.weighted`), and in a bootstrap replicate each sample counts
as often as the replicate draws it (:meth:`Runs.summed`). An estimate is a partition, and with
a bootstrap a (partition, replicate) pair (:attr:`Runs.estimates`); :func:`with_intervals`
turns the values of the estimates into the point values with their percentile intervals.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Literal

import narwhals.stable.v2 as nw

from frameaudit import _validate as validate
from frameaudit._docs import uncertainty_parameters
from frameaudit._engine import (
    Estimation,
    Estimator,
    exact_means,
    native_step,
)
from frameaudit._expr import WHOLE, divided_in, partitioned
from frameaudit._roles import Names, Role, bind
from frameaudit.exceptions import InvalidDtypeError

EmptyUnion = Literal["null", 0, 1]
EMPTY_UNION: tuple[EmptyUnion, ...] = ("null", 0, 1)

RUN = "__fa_run"
SAMPLE = "__fa_sample"
TARGET = "__fa_target"
PRED = "__fa_pred"
SCORE = "__fa_score"
WEIGHT = "__fa_weight"
RUN_A = "__fa_run_a"
RUN_B = "__fa_run_b"
UNITS = "samples"
"""The output column with the number of samples behind a value (with ``ci=``)."""
SAMPLE_UNCERTAINTY = uncertainty_parameters(
    "sample",
    weights="Column of sample weights: non-negative, finite, the same in every row of a sample. "
    "Every count over samples becomes a weighted sum",
    interval="over the samples (the runs stay fixed)",
    repeated="(with fresh sample ids)",
)
"""The docstring entries of ``weight``, ``ci``, ``n_boot`` and ``seed`` (see ``_docs``)."""

EXAMPLE_RUNS = """\
>>> import polars as pl
>>> import frameaudit as fa
>>> df = pl.DataFrame(
...     {
...         "run": [1] * 4 + [2] * 4 + [3] * 4,
...         "sample": [0, 1, 2, 3] * 3,
...         "target": [0, 1, 0, 1] * 3,
...         "prediction": [1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 1],
...     }
... )"""
"""The frame of three runs the examples of total_consistency, leave_one_out and churn start
from (a docstring fragment)."""

#: The statistics of a pair distribution, in output order; the first is the headline.
SUMMARY = ("mean", "std", "min", "max", "q05", "q95", "n_pairs", "n_undefined")
_RESERVED = ("run_a", "run_b", "metric", *SUMMARY)


@dataclass
class Runs:
    """A validated repeated-run frame: the ``by`` columns and RUN, SAMPLE, TARGET, PRED.

    With ``weight=``, also WEIGHT (Float64; samples of weight 0 are left out). ``partition``
    is ``by``, or a constant column when there is none. The large frames are grouped and
    joined on ``by`` only (a constant key costs a multi-column hash); the small per-run and
    per-pair tables carry ``partition`` (:meth:`partitioned`). The samples are the units of
    the call's :class:`~frameaudit._engine.Estimation`.
    """

    estimation: Estimation
    frame: nw.LazyFrame[Any]
    run: str
    checks: list[validate.Check] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    """The caller's ``group=`` columns (constant within a sample), kept under their names."""

    @property
    def by(self) -> list[str]:
        """The ``by`` columns."""
        return self.estimation.by

    @property
    def partition(self) -> list[str]:
        """The columns that identify a partition."""
        return self.estimation.partition

    @property
    def estimates(self) -> list[str]:
        """The keys of one estimate: the partition, and with a bootstrap the replicate."""
        return self.estimation.estimates

    @property
    def has_weights(self) -> bool:
        """Whether the samples carry weights (``weight=``, in the column WEIGHT)."""
        return self.estimation.weight is not None

    @property
    def count_dtype(self) -> Any:
        """The dtype of counts over samples: Int64, or Float64 (sums of weights)."""
        return nw.Float64 if self.has_weights else nw.Int64

    def partitioned(self, frame: nw.LazyFrame[Any]) -> nw.LazyFrame[Any]:
        """``frame`` with the partition columns (adds the constant one when there is no ``by``)."""
        return partitioned(frame, self.by)

    def weighted(self, value: nw.Expr | None = None) -> nw.Expr:
        """A row's ``value`` (None: 1) times its sample's weight, to be :meth:`summed`."""
        if not self.has_weights:
            return nw.lit(1, dtype=nw.Int64) if value is None else value
        weight: nw.Expr = self.estimation.unit_weight()
        return weight if value is None else weight * value

    def summed(
        self, frame: nw.LazyFrame[Any], keys: Sequence[str], sums: Mapping[str, nw.Expr]
    ) -> nw.LazyFrame[Any]:
        """Each expression of ``sums`` summed over the rows of ``frame``, per estimate and ``keys``.

        ``frame`` holds rows of samples (``by``, SAMPLE). With a bootstrap, each sample counts
        as often as replicate b draws it: a (partition, replicate, keys) that no drawn sample
        holds has no row, as in resampled data. Every repro statistic is a ratio of these
        counts: they are not normalised, and stay exact integers.
        """
        frame = frame.with_columns(*(expr.alias(name) for name, expr in sums.items()))
        return self.estimation.summed(frame, keys, list(sums))

    def point(self) -> Runs:
        """The same runs without the bootstrap: the point estimate's plan, on its own."""
        return replace(self, estimation=self.estimation.point())

    def finish(
        self,
        result: nw.LazyFrame[Any],
        keys: Sequence[str] = (),
        listed: Mapping[str, Sequence[Any]] | None = None,
    ) -> Any:
        """``result`` (per ``by`` and ``keys``) in the caller's kind, with the value checks."""
        return self.estimation.finish(result, keys, checks=self.checks, listed=listed)

    def with_replicates(self, frame: nw.LazyFrame[Any]) -> nw.LazyFrame[Any]:
        """``frame`` (keyed by the partition) once per estimate: × the replicates, if any."""
        return self.estimation.with_replicates(frame)


def prepare(
    frame: Any,
    metric: str,
    *,
    run: str,
    sample: str,
    target: str | None,
    prediction: str | None,
    by: Names | None,
    regression: bool = False,
    weight: str | None = None,
    estimator: Estimator,
    outputs: Sequence[str] = (),
    score: str | None = None,
    group: Names | None = None,
    optional: Collection[str] = ("score",),
) -> Runs:
    """Validate the schema, attach the value checks and rename the roles.

    Classification labels (``regression=False``) may have any comparable dtype; target and
    prediction must share it (or both be numeric) and may not be NaN. Regression values are
    numeric and NaN propagates. ``outputs`` are the result's columns beyond the metric and the
    summary statistics (the interval's). The multiplicity metrics take no ``target`` or no
    ``prediction`` where they need none (``optional``: the roles that may be None; by default the
    score, which only the score range needs), a numeric
    ``score`` (not NaN) and ``group`` columns, the same in every run of a sample.
    """
    bound = bind(
        frame,
        [
            Role("run", run),
            Role("sample", sample),
            Role("target", target, optional="target" in optional),
            Role("prediction", prediction, optional="prediction" in optional),
            Role("score", score, optional="score" in optional, dtype="numeric"),
            Role("group", group, many=True, optional=True),
            Role("by", by, many=True, optional=True),
            Role("weight", weight, optional=True, dtype="numeric"),
        ],
        # group= the sample column gives each sample's own value
        sharing=[frozenset(("sample", "group"))],
        outputs=[metric, *_RESERVED, *outputs],
    )
    source = bound.source
    by_names, groups = bound.columns["by"], bound.columns["group"]
    roles = {run: "run", sample: "sample"}
    labels = {c: p for c, p in ((target, "target"), (prediction, "prediction")) if c is not None}
    roles |= labels
    if score is not None:
        roles[score] = "score"
    if weight is not None:
        roles[weight] = "weight"
    columns = {**roles, **dict.fromkeys(groups, "group"), **dict.fromkeys(by_names, "by")}
    source.refuse_dask(
        metric, "its summaries need grouped quantiles, which Dask's grouped aggregations lack"
    )
    lf = source.frame
    renamed_labels = _renamed_labels(lf, target, prediction, regression=regression)
    checks = [validate.non_empty(lf, metric), validate.no_nulls(lf, columns)]
    schema = lf.collect_schema()
    floats = [c for c in labels if not regression and schema[c].is_float()]
    floats += [score] if score is not None else []
    checks += [_no_nan(lf, column, roles[column]) for column in floats]
    constant = {c: "target" for c in [target] if c is not None} | dict.fromkeys(groups, "group")
    checks += _layout_checks(lf, by_names, run=run, sample=sample, constant=constant)
    if weight is not None:
        checks += validate.unit_weights(lf, weight, [*by_names, sample], "sample")
    renamed = lf.select(
        *by_names,
        *groups,
        nw.col(run).alias(RUN),
        nw.col(sample).alias(SAMPLE),
        *renamed_labels,
        *([nw.col(score).cast(nw.Float64).alias(SCORE)] if score is not None else []),
        *([nw.col(weight).cast(nw.Float64).alias(WEIGHT)] if weight is not None else []),
    )
    # weight 0 leaves the sample out (of every run)
    renamed, estimated = estimator.over(
        renamed, source, by=by_names, units=[SAMPLE], weight=None if weight is None else WEIGHT
    )
    return Runs(estimated, renamed, run, checks, groups)


def _no_nan(lf: nw.LazyFrame[Any], column: str, parameter: str) -> validate.Check:
    """A class label or a score is never NaN (engines disagree on whether NaN equals NaN)."""
    what = "scores" if parameter == "score" else "class labels"

    def message(count: nw.Expr, _: str) -> nw.Expr:
        head = f"{parameter}={column!r}: column {column!r} holds "
        return validate.message(head, count, f" NaN value(s); {what} must not be NaN")

    return validate.Check.of_rules(lf, validate.Rule(lambda ns: ns.col(column).is_nan(), message))


def _renamed_labels(
    lf: nw.LazyFrame[Any], target: str | None, prediction: str | None, *, regression: bool
) -> list[nw.Expr]:
    """The target and prediction columns given, as TARGET and PRED (:func:`_labels`)."""
    if target is not None and prediction is not None:
        target_expr, prediction_expr = _labels(lf, target, prediction, regression=regression)
        return [target_expr.alias(TARGET), prediction_expr.alias(PRED)]
    given = [(c, name) for c, name in ((target, TARGET), (prediction, PRED)) if c is not None]
    return [_label(lf, c).alias(name) for c, name in given]


def _label(lf: nw.LazyFrame[Any], column: str) -> nw.Expr:
    """One label column, comparable within itself (categories as their labels)."""
    dtype = lf.collect_schema()[column]
    return nw.col(column).cast(nw.String) if dtype in (nw.Categorical, nw.Enum) else nw.col(column)


def _labels(
    lf: nw.LazyFrame[Any], target: str, prediction: str, *, regression: bool
) -> tuple[nw.Expr, nw.Expr]:
    """Target and prediction as expressions of one common dtype (schema only)."""
    if regression:
        validate.require_dtype(lf, target, "target", "numeric")
        validate.require_dtype(lf, prediction, "prediction", "numeric")
        return nw.col(target).cast(nw.Float64), nw.col(prediction).cast(nw.Float64)
    schema = lf.collect_schema()
    dtypes = (schema[target], schema[prediction])
    if all(d in (nw.Categorical, nw.Enum) for d in dtypes):
        # category codes differ between columns; compare and group the labels themselves
        return nw.col(target).cast(nw.String), nw.col(prediction).cast(nw.String)
    if dtypes[0] == dtypes[1]:
        return nw.col(target), nw.col(prediction)
    if all(d.is_numeric() for d in dtypes):
        return nw.col(target).cast(nw.Float64), nw.col(prediction).cast(nw.Float64)
    msg = (
        f"target={target!r} ({dtypes[0]}) and prediction={prediction!r} ({dtypes[1]}): "
        "expected class labels of the same dtype (or both numeric)"
    )
    raise InvalidDtypeError(msg)


def _layout_checks(
    lf: nw.LazyFrame[Any],
    by: list[str],
    *,
    run: str,
    sample: str,
    constant: Mapping[str, str],
) -> list[validate.Check]:
    """Two runs or more; every run predicts every sample once; one target, group per sample.

    One aggregation per sample (rows, distinct runs, the range of each ``constant`` column:
    column → its parameter) and one per partition (distinct runs) find all of it: a run that
    predicts a sample twice gives the sample more rows than runs, a run that misses it gives
    the sample fewer runs than the partition has. The rules on the per-sample frame are
    evaluated together, in one pass.
    """
    partition = by or [WHOLE]
    runs = partitioned(lf.group_by([*by, run]).agg(nw.len().alias("__fa_len")), by)
    runs = runs.group_by(partition).agg(nw.len().cast(nw.Int64).alias("__fa_k"))
    aggregations = [
        nw.len().cast(nw.Int64).alias("__fa_rows"),
        nw.col(run).n_unique().cast(nw.Int64).alias("__fa_runs"),
    ]

    def differing(low: str, high: str, nan: str | None) -> validate.Written:
        def flag(ns: Any) -> Any:
            differ = ns.col(low) != ns.col(high)
            if nan is None:
                return differ
            # min/max skip NaN: a value that is NaN in some runs only differs between runs too
            return differ | ((ns.col(nan) > 0) & (ns.col(nan) < ns.col("__fa_rows")))

        return flag

    differs: dict[str, validate.Written] = {}
    schema = lf.collect_schema()
    for i, column in enumerate(constant):
        low, high = f"__fa_min{i}", f"__fa_max{i}"
        aggregations += [nw.col(column).min().alias(low), nw.col(column).max().alias(high)]
        nan = f"__fa_nan{i}" if schema[column].is_float() else None
        if nan is not None:
            lf = lf.with_columns(nw.col(column).is_nan().cast(nw.Int64).alias(nan))
            aggregations.append(nw.col(nan).sum())
        differs[column] = differing(low, high, nan)
    per_sample = partitioned(lf.group_by([*by, sample]).agg(*aggregations), by)
    per_sample = per_sample.join(runs, on=partition, how="left")
    once = "every run must predict every sample of its partition exactly once"

    def layout(
        flag: validate.Written, parameter: str, column: str, problem: str, hint: str
    ) -> validate.Rule:
        def message(count: nw.Expr, example: str) -> nw.Expr:
            shown = _example_text(example, [*by, sample])
            found = f" sample(s) {problem}"
            return validate.message(
                f"{parameter}={column!r}: ", count, found, shown, tail=f"; {hint}"
            )

        return validate.Rule(flag, message, example=_example([*by, sample]))

    def few_runs(count: nw.Expr, example: str) -> nw.Expr:
        head = f"run={run!r}: at least two runs are needed to compare, found "
        if not by:  # the example is the number of runs
            return validate.message(head, nw.col(example), "")
        return validate.message(
            f"{head}fewer in ", count, " partition(s)", _example_text(example, by)
        )

    few = validate.Rule(
        lambda ns: ns.col("__fa_k") < 2, few_runs, example=_example(by) if by else nw.col("__fa_k")
    )

    def more(ns: Any) -> Any:  # a sample with more rows than runs
        return ns.col("__fa_rows") > ns.col("__fa_runs")

    def fewer(ns: Any) -> Any:  # a sample predicted by fewer runs than its partition has
        return ns.col("__fa_runs") < ns.col("__fa_k")

    rules = (
        layout(more, "sample", sample, "are predicted more than once by one run", once),
        layout(fewer, "run", run, "are not predicted by every run", once),
        *(
            layout(
                flag, constant[column], column,
                f"have a {constant[column]} that differs between runs",
                f"a sample's {constant[column]} must be the same in every run",
            )
            for column, flag in differs.items()
        ),
    )  # fmt: skip
    return [validate.Check.of_rules(runs, few), validate.Check.of_rules(per_sample, *rules)]


def _example(names: list[str]) -> nw.Expr:
    """An offending row's key (several columns as text, "g=1, sample=7"); checks keep the least."""
    return nw.col(names[0]) if len(names) == 1 else validate.row_text(names)


def _example_text(example: str, names: list[str]) -> nw.Expr:
    """The example column of :func:`_example` in a message ("sample=7", or its row text)."""
    return validate.keyed(names[0], example) if len(names) == 1 else nw.col(example)


def intersection_over_union(ns: Any, intersection: Any, union: Any, empty_union: EmptyUnion) -> Any:
    """|∩| / |∪| of error sets; an empty union gives null, 0 or 1 as ``empty_union`` says.

    In the expressions of ``ns``: narwhals', or Polars' own (``pl``).
    """
    ratio = divided_in(ns, intersection, union)
    if empty_union == "null":
        return ratio
    return ns.when(union == 0).then(ns.lit(float(empty_union))).otherwise(ratio)


def _stat(column: str, stat: str) -> str:
    return f"__fa_{column}_{stat}"


def summarize(
    values: nw.LazyFrame[Any], keys: Sequence[str], columns: Sequence[str]
) -> nw.LazyFrame[Any]:
    """Summary statistics of per-pair values, one row per ``keys``, every column in one pass.

    Undefined (null) pairs are left out of every statistic and counted in ``n_undefined``; a
    NaN pair value (from a NaN input) makes every statistic of its column NaN, as numpy's
    would be. ``std`` has ddof 1; the quantiles interpolate linearly. Read the result with
    :func:`one_summary` or :func:`long_summary`.
    """
    keys = list(keys)

    # the per-row and per-statistic steps in Polars' own expressions on Polars (native_step)
    def aggregations(ns: Any) -> list[Any]:
        written = []
        for c in columns:
            value = ns.col(c)
            written += [
                value.min().alias(_stat(c, "min")),
                value.max().alias(_stat(c, "max")),
                value.quantile(0.05, interpolation="linear").alias(_stat(c, "q05")),
                value.quantile(0.95, interpolation="linear").alias(_stat(c, "q95")),
                ns.len().cast(ns.Int64).alias(_stat(c, "n_pairs")),
                value.null_count().cast(ns.Int64).alias(_stat(c, "n_undefined")),
                ns.col(_stat(c, "nan")).sum().alias(_stat(c, "nan")),
            ]
        return written

    def nan_flags(ns: Any) -> list[Any]:
        return [ns.col(c).is_nan().cast(ns.Int64).alias(_stat(c, "nan")) for c in columns]

    # the mean and std exact, so that they have the same bits whatever the pairs' order
    flagged = native_step(values, "with_columns", nan_flags)
    stats = exact_means(flagged, keys, columns, also=aggregations, spread=True).rename(
        {
            name: _stat(c, stat)
            for c in columns
            for name, stat in ((c, "mean"), (f"{c}__std", "std"))
        }
    )

    # Polars' min/max skip NaN and engines disagree on where quantiles put it
    def masked(ns: Any) -> list[Any]:
        nan = ns.lit(float("nan"))
        return [
            *map(ns.col, keys),
            *(
                ns.when(ns.col(_stat(c, "nan")) > 0)
                .then(nan)
                .otherwise(ns.col(_stat(c, stat)))
                .alias(_stat(c, stat))
                for c in columns
                for stat in SUMMARY[:6]
            ),
            *(ns.col(_stat(c, stat)) for c in columns for stat in SUMMARY[6:]),
        ]

    return native_step(stats, "select", masked)


def one_summary(stats: nw.LazyFrame[Any], by: Sequence[str], column: str) -> nw.LazyFrame[Any]:
    """The summary of one column: ``by``, the mean named after the column, the statistics."""
    return stats.select(
        *by,
        nw.col(_stat(column, "mean")).alias(column),
        *(nw.col(_stat(column, stat)).alias(stat) for stat in SUMMARY[1:]),
    )


def long_summary(
    runs: Runs, stats: nw.LazyFrame[Any], by: Sequence[str], columns: Sequence[str]
) -> nw.LazyFrame[Any]:
    """The summaries of several columns, one row per (``by``, metric)."""
    picks = {stat: partial(_stat, stat=stat) for stat in SUMMARY}
    return runs.estimation.long_form(stats, by, columns, name="metric", picks=picks)


def summaries(
    runs: Runs,
    pair_values_of: Callable[[Runs], nw.LazyFrame[Any]],
    columns: Sequence[str],
    *,
    long: bool,
) -> nw.LazyFrame[Any]:
    """The summaries of the pair values of ``columns`` per partition.

    ``pair_values_of(runs)`` gives the values per estimate and pair. One column: ``by``, the
    mean named after it and the statistics; ``long``: one row per (``by``, metric) with the
    ``metric`` column and the statistics. With a bootstrap the statistics are the point
    estimate's, from its own plan (engines without a plan cache then read the replicates' plan
    only for the interval), and the mean (the headline) gains its interval.
    """
    columns = list(columns)
    stats = summarize(pair_values_of(runs.point()), runs.partition, columns)
    if runs.estimation.bootstrap is None:
        if long:
            return long_summary(runs, stats, runs.by, columns)
        return one_summary(stats, runs.by, columns[0])
    means = exact_means(pair_values_of(runs), runs.estimates, columns)
    if runs.estimation.bootstrap.replicates and not long:  # a comparison's: every replicate's mean
        return _shown(runs, with_intervals(runs, means, [], columns))
    if long:
        shown = long_summary(runs, stats, runs.partition, columns)
        keys, headline = [*runs.partition, "metric"], "mean"
        means = runs.estimation.long_form(
            means, runs.estimates, columns, name="metric", picks={headline: str}
        )
    else:
        shown = one_summary(stats, runs.partition, columns[0])
        keys, headline = runs.partition, columns[0]
    low, high, *behind = runs.estimation.outputs(headline)  # the bounds, the units, undefined
    intervals = with_intervals(runs, means, keys[len(runs.partition) :], [headline])
    order = [*keys, headline, low, high, *shown.collect_schema().names()[len(keys) + 1 :]]
    result = shown.join(intervals.drop(headline), on=keys, how="left")
    return _shown(runs, result.select(*order, *behind))


def with_intervals(
    runs: Runs, values: nw.LazyFrame[Any], keys: Sequence[str], columns: Sequence[str]
) -> nw.LazyFrame[Any]:
    """Per (partition, ``keys``): each of ``columns``, its percentile interval, the samples.

    ``values`` holds the estimates' keys, ``keys`` and ``columns``. Each column c is followed by
    ``c_lo`` and ``c_hi``; then ``samples`` and the undefined replicates: ``undefined_replicates``
    for one column, ``c_undefined_replicates`` for each of several. A NaN value (from a NaN
    input) has a NaN interval: the replicates that do not draw the NaN sample do not hide it.
    A comparison's bootstrap (one column) gives every replicate's value instead.
    """
    assert runs.estimation.bootstrap is not None
    if len(columns) == 1:
        (column,) = columns
        result = runs.estimation.interval(values, keys, column)
        if runs.estimation.bootstrap.replicates:  # a comparison's: every replicate's value
            return result
        point = nw.col(column)
        return result.with_columns(
            *(
                nw.when(point.is_nan())
                .then(point)
                .otherwise(nw.col(f"{column}_{end}"))
                .alias(f"{column}_{end}")
                for end in ("lo", "hi")
            )
        )
    return runs.estimation.intervals(values, keys, columns)


def _shown(runs: Runs, result: nw.LazyFrame[Any]) -> nw.LazyFrame[Any]:
    """``result`` without the constant partition column (there when ``by`` is not given)."""
    return result if runs.by else result.drop(WHOLE)


def pair_values(
    runs: Runs, per_pair: nw.LazyFrame[Any], columns: Sequence[str]
) -> nw.LazyFrame[Any]:
    """The pair distribution: ``by``, ``run_a``, ``run_b`` and ``columns`` (with intervals)."""
    if runs.estimation.bootstrap is not None:
        per_pair = _shown(runs, with_intervals(runs, per_pair, [RUN_A, RUN_B], columns))
        columns = per_pair.collect_schema().names()[len(runs.by) + 2 :]
    return per_pair.select(
        *runs.by, nw.col(RUN_A).alias("run_a"), nw.col(RUN_B).alias("run_b"), *columns
    )


def per_estimate(
    runs: Runs, values: nw.LazyFrame[Any], keys: Sequence[str], column: str
) -> nw.LazyFrame[Any]:
    """``by``, ``keys`` and ``column`` per partition (with a bootstrap, and its interval)."""
    if runs.estimation.bootstrap is None:
        return values.select(*runs.by, *keys, column)
    return _shown(runs, with_intervals(runs, values, keys, [column]))
