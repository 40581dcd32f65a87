"""Repeated-run input shared by every reproducibility metric: validation and summaries.

The input is tidy: one row per (run, sample) with the sample's true ``target`` and the run's
``prediction``. :func:`prepare` checks the schema at call time and adds the value checks (two
runs or more, every run predicts every sample exactly once, one target per sample, no nulls),
then renames the roles to internal names so that the metric code never collides with the
caller's column names. :func:`summarize` turns a distribution of per-pair values into the
documented summary statistics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import narwhals.stable.v2 as nw

from frameaudit import _validate as validate
from frameaudit._engine import Source, frame_from_columns
from frameaudit._expr import WHOLE, partitioned, safe_div
from frameaudit._roles import Names, Role, bind
from frameaudit.exceptions import InvalidDtypeError

EmptyUnion = Literal["null", 0, 1]
EMPTY_UNION: tuple[EmptyUnion, ...] = ("null", 0, 1)

RUN = "__fa_run"
SAMPLE = "__fa_sample"
TARGET = "__fa_target"
PRED = "__fa_pred"
RUN_A = "__fa_run_a"
RUN_B = "__fa_run_b"

#: The statistics of a pair distribution, in output order; the first is the headline.
SUMMARY = ("mean", "std", "min", "max", "q05", "q95", "n_pairs", "n_undefined")
_RESERVED = ("run_a", "run_b", "metric", *SUMMARY)


@dataclass
class Runs:
    """A validated repeated-run frame: the ``by`` columns and RUN, SAMPLE, TARGET, PRED.

    ``partition`` is ``by``, or a constant column when there is none. The large frames are
    grouped and joined on ``by`` only (a constant key costs a multi-column hash); the small
    per-run and per-pair tables carry ``partition`` (:meth:`partitioned`).
    """

    source: Source
    frame: nw.LazyFrame[Any]
    by: list[str]
    run: str
    checks: list[validate.Check] = field(default_factory=list)

    @property
    def partition(self) -> list[str]:
        """The columns that identify a partition."""
        return self.by or [WHOLE]

    def partitioned(self, frame: nw.LazyFrame[Any]) -> nw.LazyFrame[Any]:
        """``frame`` with the partition columns (adds the constant one when there is no ``by``)."""
        return partitioned(frame, self.by)


def prepare(
    frame: Any,
    metric: str,
    *,
    run: str,
    sample: str,
    target: str,
    prediction: str,
    by: Names | None,
    regression: bool = False,
) -> Runs:
    """Validate the schema, attach the value checks and rename the roles.

    Classification labels (``regression=False``) may have any comparable dtype; target and
    prediction must share it (or both be numeric) and may not be NaN. Regression values are
    numeric and NaN propagates.
    """
    bound = bind(
        frame,
        [
            Role("run", run),
            Role("sample", sample),
            Role("target", target),
            Role("prediction", prediction),
            Role("by", by, many=True, optional=True),
        ],
        outputs=[metric, *_RESERVED],
    )
    source = bound.source
    by_names = bound.columns["by"]
    roles = {run: "run", sample: "sample", target: "target", prediction: "prediction"}
    columns = {**roles, **dict.fromkeys(by_names, "by")}
    source.refuse_dask(
        metric, "its summaries need grouped quantiles, which Dask's grouped aggregations lack"
    )
    lf = source.frame
    target_expr, prediction_expr = _labels(lf, target, prediction, regression=regression)
    checks = [validate.non_empty(lf, metric), validate.no_nulls(lf, columns)]
    if not regression:
        schema = lf.collect_schema()
        floats = [c for c in dict.fromkeys((target, prediction)) if schema[c].is_float()]
        checks += [_no_nan(lf, column, roles[column]) for column in floats]
    checks += _layout_checks(lf, by_names, run=run, sample=sample, target=target)
    renamed = lf.select(
        *by_names,
        nw.col(run).alias(RUN),
        nw.col(sample).alias(SAMPLE),
        target_expr.alias(TARGET),
        prediction_expr.alias(PRED),
    )
    return Runs(source, renamed, by_names, run, checks)


def _no_nan(lf: nw.LazyFrame[Any], column: str, parameter: str) -> validate.Check:
    """A class label is never NaN (engines disagree on whether NaN equals NaN)."""

    def message(count: int, _: Any, __: int) -> str | None:
        if not count:
            return None
        return (
            f"{parameter}={column!r}: column {column!r} holds {count} NaN value(s); class "
            "labels must not be NaN"
        )

    return validate.Check(
        None, None, base=lf, rules=(validate.Rule(nw.col(column).is_nan(), None, message),)
    )


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
    lf: nw.LazyFrame[Any], by: list[str], *, run: str, sample: str, target: str
) -> list[validate.Check]:
    """At least two runs; every run predicts every sample once; one target per sample.

    One aggregation per sample (rows, distinct runs, target range) and one per partition
    (distinct runs) find all of it: a run that predicts a sample twice gives the sample more
    rows than runs, a run that misses it gives the sample fewer runs than the partition has.
    The rules on the per-sample frame are evaluated together, in one pass.
    """
    partition = by or [WHOLE]
    runs = partitioned(lf.group_by([*by, run]).agg(nw.len().alias("__fa_len")), by)
    runs = runs.group_by(partition).agg(nw.len().cast(nw.Int64).alias("__fa_k"))
    aggregations = [
        nw.len().cast(nw.Int64).alias("__fa_rows"),
        nw.col(run).n_unique().cast(nw.Int64).alias("__fa_runs"),
        nw.col(target).min().alias("__fa_tmin"),
        nw.col(target).max().alias("__fa_tmax"),
    ]
    rows, seen, k = nw.col("__fa_rows"), nw.col("__fa_runs"), nw.col("__fa_k")
    differs = nw.col("__fa_tmin") != nw.col("__fa_tmax")
    if lf.collect_schema()[target].is_float():
        # min/max skip NaN: a target that is NaN in some runs only differs between runs too
        lf = lf.with_columns(nw.col(target).is_nan().cast(nw.Int64).alias("__fa_tnan"))
        aggregations.append(nw.col("__fa_tnan").sum())
        nan = nw.col("__fa_tnan")
        differs = differs | ((nan > 0) & (nan < rows))
    per_sample = partitioned(lf.group_by([*by, sample]).agg(*aggregations), by)
    per_sample = per_sample.join(runs, on=partition, how="left")
    once = "every run must predict every sample of its partition exactly once"

    def layout(
        flag: nw.Expr, parameter: str, column: str, problem: str, hint: str
    ) -> validate.Rule:
        def message(count: int, example: Any, _: int) -> str | None:
            if not count:
                return None
            return (
                f"{parameter}={column!r}: {count} sample(s) {problem} (e.g. "
                f"{_example_text(example, [*by, sample])}); {hint}"
            )

        return validate.Rule(flag, _example([*by, sample]), message)

    def few_runs(count: int, example: Any, _: int) -> str | None:
        if not count:
            return None
        if not by:
            return f"run={run!r}: at least two runs are needed to compare, found {example}"
        return (
            f"run={run!r}: at least two runs are needed to compare, found fewer in {count} "
            f"partition(s) (e.g. {_example_text(example, by)})"
        )

    few = validate.Rule(k < 2, _example(by) if by else k, few_runs)
    rules = (
        layout(rows > seen, "sample", sample, "are predicted more than once by one run", once),
        layout(seen < k, "run", run, "are not predicted by every run", once),
        layout(
            differs, "target", target, "have a target that differs between runs",
            "a sample's target must be the same in every run",
        ),
    )  # fmt: skip
    return [
        validate.Check(None, None, base=runs, rules=(few,)),
        validate.Check(None, None, base=per_sample, rules=rules),
    ]


def _example(names: list[str]) -> nw.Expr:
    """An offending row's key (several columns as text, "g=1, sample=7"); checks keep the least."""
    if len(names) == 1:
        return nw.col(names[0])
    parts = [nw.concat_str(nw.lit(f"{c}="), nw.col(c).cast(nw.String)) for c in names]
    return nw.concat_str(*parts, separator=", ")


def _example_text(example: Any, names: list[str]) -> str:
    return f"{names[0]}={example!r}" if len(names) == 1 else str(example)


def intersection_over_union(
    intersection: nw.Expr, union: nw.Expr, empty_union: EmptyUnion
) -> nw.Expr:
    """|∩| / |∪| of error sets; an empty union gives null, 0 or 1 as ``empty_union`` says."""
    ratio = safe_div(intersection, union)
    if empty_union == "null":
        return ratio
    return nw.when(union == 0).then(nw.lit(float(empty_union))).otherwise(ratio)


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
    nan_flags = [nw.col(c).is_nan().cast(nw.Int64).alias(_stat(c, "nan")) for c in columns]
    aggregations = []
    for c in columns:
        value = nw.col(c)
        aggregations += [
            value.mean().alias(_stat(c, "mean")),
            value.std(ddof=1).alias(_stat(c, "std")),
            value.min().alias(_stat(c, "min")),
            value.max().alias(_stat(c, "max")),
            value.quantile(0.05, interpolation="linear").alias(_stat(c, "q05")),
            value.quantile(0.95, interpolation="linear").alias(_stat(c, "q95")),
            nw.len().cast(nw.Int64).alias(_stat(c, "n_pairs")),
            value.null_count().cast(nw.Int64).alias(_stat(c, "n_undefined")),
            nw.col(_stat(c, "nan")).sum().alias(_stat(c, "nan")),
        ]
    stats = values.with_columns(*nan_flags).group_by(keys).agg(*aggregations)
    # Polars' min/max skip NaN and engines disagree on where quantiles put it
    nan = float("nan")
    return stats.select(
        *keys,
        *(
            nw.when(nw.col(_stat(c, "nan")) > 0)
            .then(nw.lit(nan))
            .otherwise(nw.col(_stat(c, stat)))
            .alias(_stat(c, stat))
            for c in columns
            for stat in SUMMARY[:6]
        ),
        *(nw.col(_stat(c, stat)) for c in columns for stat in SUMMARY[6:]),
    )


def one_summary(stats: nw.LazyFrame[Any], by: Sequence[str], column: str) -> nw.LazyFrame[Any]:
    """The summary of one column: ``by``, the mean named after the column, the statistics."""
    return stats.select(
        *by,
        nw.col(_stat(column, "mean")).alias(column),
        *(nw.col(_stat(column, stat)).alias(stat) for stat in SUMMARY[1:]),
    )


def long_summary(
    stats: nw.LazyFrame[Any], by: Sequence[str], columns: Sequence[str], source: Source
) -> nw.LazyFrame[Any]:
    """The summaries of several columns, one row per (``by``, metric).

    A cross join with the metric names and a choice per row, rather than a concatenation of
    one frame per metric: engines that do not share subplans compute the pairs once.
    """
    names = frame_from_columns({"metric": columns}, source, parameter="metrics")
    metric = nw.col("metric")

    def pick(stat: str) -> nw.Expr:
        first, *rest = columns
        chosen = nw.when(metric == first).then(nw.col(_stat(first, stat)))
        for c in rest:
            chosen = chosen.when(metric == c).then(nw.col(_stat(c, stat)))
        return chosen.alias(stat)

    return stats.join(names, how="cross").select(*by, "metric", *(pick(s) for s in SUMMARY))
