r"""Error consistency over all runs, leave one run out, and for regression residuals.

``total_consistency`` and ``leave_one_out`` compare the error sets of more than two runs at
once; both follow from one number per sample — how many runs get it wrong — so they cost
O(k·n) with no join of runs. ``residual_consistency`` is the regression extension of error
consistency: it compares the residuals of two runs sample by sample (a pairwise metric, with
the same summaries as the classification ones).

With e_r the error set of run r over n samples, w_s the number of runs wrong on sample s and
r_a(s), r_b(s) two runs' residuals:

=======================  ======================================================================
metric                   definition
=======================  ======================================================================
total_consistency        |∩_r e_r| / |∪_r e_r| = #{s: w_s = k} / #{s: w_s > 0}
leave_one_out            per run r, |∩_{q≠r} e_q| / |∪_{q≠r} e_q| over the other k − 1 runs
residual_consistency     per pair, the mean over samples of ``ratio`` ρ = min(|r_a|,|r_b|) /
                         max(|r_a|,|r_b|) or ``ratio-diff`` ||r_a| − |r_b|| / (|r_a| + |r_b|),
                         times sign(r_a·r_b) for the ``-signed`` variants; two zero residuals
                         give 1 for the ratios and 0 for the differences
=======================  ======================================================================
"""

from __future__ import annotations

from typing import Any, Literal, get_args

import narwhals.stable.v2 as nw

from frameaudit._docs import shared_docs
from frameaudit._engine import Estimator, cached
from frameaudit._params import UNCERTAINTY, Choice, Flag, constraints
from frameaudit._registry import registered
from frameaudit._roles import Names
from frameaudit.repro._runs import (
    EMPTY_UNION,
    EXAMPLE_RUNS,
    PRED,
    RUN,
    RUN_A,
    RUN_B,
    SAMPLE,
    SAMPLE_UNCERTAINTY,
    TARGET,
    UNITS,
    WEIGHT,
    EmptyUnion,
    Runs,
    intersection_over_union,
    pair_values,
    per_estimate,
    prepare,
    summaries,
)

__all__ = [
    "RESIDUAL_METHODS",
    "ResidualMethod",
    "leave_one_out",
    "residual_consistency",
    "total_consistency",
]

ResidualMethod = Literal["ratio", "ratio-signed", "ratio-diff", "ratio-diff-signed"]
RESIDUAL_METHODS: tuple[str, ...] = get_args(ResidualMethod)

_RUNS = "__fa_n_runs"
_WRONG = "__fa_wrong"
_SAMPLES = "__fa_samples"
_R_A = "__fa_residual_a"
_R_B = "__fa_residual_b"


def _error_counts(
    runs: Runs,
) -> tuple[nw.LazyFrame[Any], nw.LazyFrame[Any], nw.LazyFrame[Any]]:
    """The runs; per partition their number k; per sample, the number of runs wrong on it.

    The last frame holds only the samples some run gets wrong, with k (and their weight)
    attached.
    """
    partition = runs.partition
    per_run = runs.partitioned(runs.frame.group_by([*runs.by, RUN]).agg(nw.len().alias("__fa_len")))
    per_run = cached(per_run.select(*partition, RUN))
    k = per_run.group_by(partition).agg(nw.len().cast(nw.Int64).alias(_RUNS))
    weight = [nw.col(WEIGHT).max()] if runs.has_weights else []
    wrong = (
        _errors(runs)
        .group_by([*runs.by, SAMPLE])
        .agg(nw.len().cast(nw.Int64).alias(_WRONG), *weight)
    )
    wrong = runs.partitioned(wrong).join(k, on=partition, how="left")
    return per_run, k, wrong


def _errors(runs: Runs) -> nw.LazyFrame[Any]:
    weight = [WEIGHT] if runs.has_weights else []
    return runs.frame.filter(nw.col(TARGET) != nw.col(PRED)).select(*runs.by, SAMPLE, RUN, *weight)


def _flagged(runs: Runs, flags: dict[str, nw.Expr]) -> dict[str, nw.Expr]:
    """Each flag as a weighted count (:meth:`Runs.weighted`): the row's weight where it holds."""
    return {name: runs.weighted(nw.when(flag).then(1).otherwise(0)) for name, flag in flags.items()}


@registered(
    "repro",
    "single",
    unit=UNITS,
    best="1 = most reproducible",
    range="[0, 1]",
    options=("empty_union",),
)
@constraints(empty_union=Choice(EMPTY_UNION), **UNCERTAINTY)
@shared_docs(uncertainty=SAMPLE_UNCERTAINTY, example_runs=EXAMPLE_RUNS)
def total_consistency(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    by: Names | None = None,
    empty_union: EmptyUnion = "null",
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Total error consistency: the samples every run gets wrong, over those any run gets wrong.

    :math:`|\bigcap_r e_r| \,/\, |\bigcup_r e_r|` over all k runs — the "unpredictable" samples
    as a share of the "ever mispredicted" ones (Levman et al. 2023). 1 is most reproducible;
    it is at most the smallest pairwise EC_ℓ.

    Parameters
    ----------
    frame
        Any supported frame: one row per (run, sample).
    run
        Run column; pairs are oriented run_a < run_b.
    sample
        Sample column; every run predicts every sample exactly once.
    target
        True label column, the same in every run of a sample.
    prediction
        Predicted label column (the dtype of ``target``, or both numeric).
    by
        Column(s): one independent result per partition.
    empty_union
        The value when no run makes an error (0/0): ``"null"``, ``0`` or ``1``.
    weight, ci, n_boot, seed
        <<uncertainty>>

    Returns
    -------
    A frame of the input's kind: the ``by`` columns and ``total_consistency`` (Float64), one
    row per partition, sorted by ``by``. With ``ci``: ``total_consistency_lo`` and
    ``total_consistency_hi``, then ``samples`` (the interval is null below 2) and
    ``undefined_replicates`` (replicates without a drawn sample that any run gets wrong,
    under ``empty_union="null"``).

    Notes
    -----
    From the number of runs that get each sample wrong (a grouping of the wrong predictions):
    O(k·n), no join of runs. Weighted: Σ_s w_s·[every run wrong] / Σ_s w_s·[some run wrong].
    A bootstrap replicate costs the samples some run gets wrong.

    Examples
    --------
    <<example_runs>>
    >>> fa.repro.total_consistency(df)
    shape: (1, 1)
    ┌───────────────────┐
    │ total_consistency │
    │ ---               │
    │ f64               │
    ╞═══════════════════╡
    │ 0.25              │
    └───────────────────┘
    """
    name = "total_consistency"
    estimator = Estimator.requested(UNITS, ci, n_boot, seed)
    runs = prepare(
        frame, name, run=run, sample=sample, target=target, prediction=prediction, by=by,
        weight=weight, estimator=estimator, outputs=estimator.outputs(name),
    )  # fmt: skip
    estimates = runs.estimates
    _, k, wrong = _error_counts(runs)
    flags = _flagged(runs, {"__fa_i": nw.col(_WRONG) == nw.col(_RUNS)})
    counts = runs.summed(wrong, [], {**flags, "__fa_u": runs.weighted()})
    totals = (
        runs.with_replicates(k)
        .join(counts, on=estimates, how="left")
        .with_columns(nw.col("__fa_i").fill_null(0), nw.col("__fa_u").fill_null(0))
    )
    value = intersection_over_union(nw, nw.col("__fa_i"), nw.col("__fa_u"), empty_union)
    result = per_estimate(runs, totals.select(*estimates, value.alias(name)), [], name)
    return runs.finish(result)


@registered("repro", "table", unit=UNITS, options=("empty_union",))
@constraints(empty_union=Choice(EMPTY_UNION), **UNCERTAINTY)
@shared_docs(example_runs=EXAMPLE_RUNS)
def leave_one_out(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    by: Names | None = None,
    empty_union: EmptyUnion = "null",
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Leave-one-out error consistency: the total consistency of the other runs, per run.

    For each run r, :math:`|\bigcap_{r' \ne r} e_{r'}| \,/\, |\bigcup_{r' \ne r} e_{r'}|` —
    :func:`total_consistency` of the k − 1 runs left when r is left out (the original error
    consistency code's leave-one-out consistencies). A run whose removal raises the value
    much above the others' makes errors of its own. With two runs, the value is 1 for each
    (one run's error set against itself) unless the other run makes no error.

    Parameters as for :func:`total_consistency`; ``empty_union`` is the value when the other
    runs make no error (0/0).

    Returns
    -------
    A frame of the input's kind: the ``by`` columns, the run column (named as ``run``) and
    ``leave_one_out`` (Float64), one row per run, sorted. With ``ci``, each run's value is
    followed by ``leave_one_out_lo`` and ``leave_one_out_hi``, ``samples`` and
    ``undefined_replicates``.

    Notes
    -----
    With w_s the number of runs that get sample s wrong: leaving r out, s is in every other
    run's error set iff w_s − e_r(s) = k − 1, and in some iff w_s − e_r(s) ≥ 1. So each run
    needs only the counts of its own errors on samples with w_s = k − 1 and w_s = 1: O(k·n),
    no join of runs.

    Examples
    --------
    <<example_runs>>
    >>> fa.repro.leave_one_out(df)
    shape: (3, 2)
    ┌─────┬───────────────┐
    │ run ┆ leave_one_out │
    │ --- ┆ ---           │
    │ i64 ┆ f64           │
    ╞═════╪═══════════════╡
    │ 1   ┆ 0.25          │
    │ 2   ┆ 0.666667      │
    │ 3   ┆ 0.333333      │
    └─────┴───────────────┘
    """
    name = "leave_one_out"
    estimator = Estimator.requested(UNITS, ci, n_boot, seed)
    runs = prepare(
        frame, name, run=run, sample=sample, target=target, prediction=prediction, by=by,
        weight=weight, estimator=estimator, outputs=estimator.outputs(name),
    )  # fmt: skip
    estimates = runs.estimates
    per_run, _, wrong = _error_counts(runs)
    wrong = cached(wrong)
    w, k = nw.col(_WRONG), nw.col(_RUNS)
    every, near, many, one = "__fa_every", "__fa_near", "__fa_many", "__fa_one"
    flags = {every: w == k, near: w == k - 1, many: w >= 2, one: w == 1}
    totals = runs.summed(wrong, [], _flagged(runs, flags))
    # the errors of run r itself on samples with w = k − 1 and w = 1
    own_errors = _errors(runs).join(
        wrong.filter((w == k - 1) | (w == 1)).select(*runs.by, SAMPLE, _WRONG, _RUNS),
        on=[*runs.by, SAMPLE],
    )
    own_flags = {"__fa_own_near": w == k - 1, "__fa_own_one": w == 1}
    own = runs.summed(own_errors, [RUN], _flagged(runs, own_flags))
    counts = [*flags, *own_flags]
    table = (
        runs.with_replicates(per_run)
        .join(totals, on=estimates, how="left")
        .join(own, on=[*estimates, RUN], how="left")
        .with_columns(*(nw.col(c).fill_null(0) for c in counts))
    )
    c = nw.col
    intersection = c(every) + c(near) - c("__fa_own_near")
    union = c(many) + c(one) - c("__fa_own_one")
    values = table.select(
        *estimates, RUN, intersection_over_union(nw, intersection, union, empty_union).alias(name)
    )
    result = per_estimate(runs, values, [RUN], name).rename({RUN: run})
    return runs.finish(result, [run])


def _per_sample(method: ResidualMethod) -> nw.Expr:
    """The consistency of two residuals r_a, r_b of one sample (NaN propagates)."""
    r_a, r_b = nw.col(_R_A), nw.col(_R_B)
    abs_a, abs_b = r_a.abs(), r_b.abs()
    if method.startswith("ratio-diff"):
        numerator, denominator, both_zero = (abs_a - abs_b).abs(), abs_a + abs_b, 0.0
    else:
        smaller = abs_a <= abs_b
        numerator = nw.when(smaller).then(abs_a).otherwise(abs_b)
        denominator = nw.when(smaller).then(abs_b).otherwise(abs_a)
        both_zero = 1.0
    # the denominator is 0 only for two zero residuals, replaced below; no engine divides by 0
    value = numerator / nw.when(denominator == 0).then(nw.lit(1.0)).otherwise(denominator)
    if method.endswith("signed"):
        product = r_a * r_b
        sign = nw.when(product > 0).then(1.0).when(product < 0).then(-1.0).otherwise(0.0)
        value = sign * value
    zero = (abs_a == 0) & (abs_b == 0)
    return nw.when(zero).then(nw.lit(both_zero)).otherwise(value)


@registered(
    "repro",
    "pairs",
    unit=UNITS,
    best="1 = most reproducible for the ratios, 0 for the differences",
    range="[-1, 1]",
)
@constraints(method=Choice(RESIDUAL_METHODS), pairwise=Flag(), **UNCERTAINTY)
def residual_consistency(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    by: Names | None = None,
    method: ResidualMethod = "ratio",
    pairwise: bool = False,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Residual consistency: error consistency for regression, from two runs' residuals.

    With residuals r = prediction − target, each sample of a pair of runs gets a value, and the
    pair's value is their mean over the samples. With :math:`\rho = \min(|r_a|, |r_b|) /
    \max(|r_a|, |r_b|)` and :math:`s = \operatorname{sign}(r_a r_b)`:

    * ``"ratio"``: ρ — 1 when the two runs miss by the same amount (most reproducible);
    * ``"ratio-signed"``: s·ρ — also −1 when they miss by the same amount on opposite sides;
    * ``"ratio-diff"``: :math:`\big||r_a| - |r_b|\big| / (|r_a| + |r_b|)` — 0 is most
      reproducible;
    * ``"ratio-diff-signed"``: s times that.

    Two exact predictions (r_a = r_b = 0, 0/0) count as perfectly consistent: 1 for the ratios,
    0 for the differences. The summaries are those of the classification metrics (the regression
    error consistency code of the same authors; docs/repro.md).

    Parameters
    ----------
    frame
        Any supported frame: one row per (run, sample).
    run
        Run column; pairs are oriented run_a < run_b.
    sample
        Sample column; every run predicts every sample exactly once.
    target
        Numeric true value; the same in every run of a sample.
    prediction
        Numeric predicted value.
    by
        Column(s): one independent result per partition.
    method
        One of ``RESIDUAL_METHODS``.
    pairwise
        Return the pair distribution instead of its summary.
    weight, ci, n_boot, seed
        As for :func:`total_consistency`: sample weights (a pair's value becomes the weighted
        mean over samples) and a percentile bootstrap interval over the samples.

    Returns
    -------
    A frame of the input's kind, one row per partition: the ``by`` columns,
    ``residual_consistency`` (the mean over pairs), ``std``, ``min``, ``max``, ``q05``,
    ``q95``, ``n_pairs`` and ``n_undefined`` (always 0: no pair is undefined). With
    ``pairwise=True``: the ``by`` columns, ``run_a``, ``run_b``, ``residual_consistency``.
    With ``ci``, the interval columns as for :func:`frameaudit.repro.ec_local`.

    Notes
    -----
    A NaN residual makes its sample's value NaN, and so its pair's value and every summary
    statistic: NaN is never skipped (nor by the interval, which is NaN too). Every sample is
    compared in every pair, so this joins all predictions on the sample: O(k²·n) rows,
    streamed by Polars; a bootstrap multiplies them by ``n_boot``.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame(
    ...     {
    ...         "run": [1, 1, 1, 2, 2, 2],
    ...         "sample": [0, 1, 2] * 2,
    ...         "target": [1.0, 2.0, 3.0] * 2,
    ...         "prediction": [1.5, 2.0, 2.0, 2.0, 2.0, 4.0],
    ...     }
    ... )
    >>> fa.repro.residual_consistency(df, pairwise=True)
    shape: (1, 3)
    ┌───────┬───────┬──────────────────────┐
    │ run_a ┆ run_b ┆ residual_consistency │
    │ ---   ┆ ---   ┆ ---                  │
    │ i64   ┆ i64   ┆ f64                  │
    ╞═══════╪═══════╪══════════════════════╡
    │ 1     ┆ 2     ┆ 0.833333             │
    └───────┴───────┴──────────────────────┘
    >>> fa.repro.residual_consistency(df, method="ratio-signed", pairwise=True).item(0, 2)
    0.16666666666666666
    """
    name = "residual_consistency"
    estimator = Estimator.requested(UNITS, ci, n_boot, seed)
    runs = prepare(
        frame, name, run=run, sample=sample, target=target, prediction=prediction, by=by,
        regression=True, weight=weight, estimator=estimator,
        outputs=estimator.outputs(name),
    )  # fmt: skip
    residual = nw.col(PRED) - nw.col(TARGET)
    weight_column = [WEIGHT] if runs.has_weights else []
    side_a = runs.frame.select(
        *runs.by, SAMPLE, nw.col(RUN).alias(RUN_A), residual.alias(_R_A), *weight_column
    )
    side_b = runs.frame.select(*runs.by, SAMPLE, nw.col(RUN).alias(RUN_B), residual.alias(_R_B))
    per_sample = (
        side_a.join(side_b, on=[*runs.by, SAMPLE])
        .filter(nw.col(RUN_A) < nw.col(RUN_B))
        .with_columns(_per_sample(method).alias(name))
    )

    def pair_values_of(runs: Runs) -> nw.LazyFrame[Any]:
        # the mean over samples: weighted, and in a replicate over the drawn samples
        sums = {name: runs.weighted(nw.col(name)), _SAMPLES: runs.weighted()}
        totals = runs.summed(per_sample, [RUN_A, RUN_B], sums)
        mean = (nw.col(name) / nw.col(_SAMPLES)).alias(name)
        return totals.select(*runs.estimates, RUN_A, RUN_B, mean)

    if pairwise:
        result = pair_values(runs, pair_values_of(runs), [name])
        return runs.finish(result, ["run_a", "run_b"])
    result = summaries(runs, pair_values_of, [name], long=False)
    return runs.finish(result)
