r"""Multiplicity and churn across runs, per protected group (SPEC §8).

The model-multiplicity literature asks how arbitrary a model's decisions are across equally
good runs (seeds, bootstrap samples, retrainings) — and, the question Cooper et al. (AAAI 2024)
show changes the conclusion of fairness benchmarks, whether that arbitrariness falls on one
group. On the family's tidy input (one row per run and sample), with k runs, ŷ_r(s) the
prediction of run r on sample s, e_r(s) = [ŷ_r(s) ≠ y(s)] its error and c_y(s) the number of
runs predicting class y:

=====================  ==================================================================  ====
function               per sample s (a partition's value is the mean over its samples)    best
=====================  ==================================================================  ====
churn                  share of the pairs of runs that predict s differently (all pairs;     0
                       consecutive pairs of ``order=``; or each run against ``reference=``);
                       with ``target``, ``win``: pairs where the earlier run is wrong and
                       the later right, ``loss``: right then wrong (Milani Fard et al. 2016)
flip_rate              ``negative_flip_rate`` (right, then wrong) and ``positive_flip_rate``  0
                       (wrong, then right) between consecutive runs (Yan et al. 2021)
ambiguity              [some run predicts s differently from another] (Marx, Calmon &        0
                       Ustun 2020: any run differs from the reference, the same thing)
discrepancy            max over runs r of the share of samples where ŷ_r ≠ ŷ_reference       0
                       (a maximum over runs, not a mean over samples; Marx et al. 2020)
score_range            max_r score_r(s) − min_r score_r(s), the viable prediction range      0
                       (Watson-Daniels, Parkes & Ustun 2023), its mean and quantiles
self_consistency       Σ_y c_y(c_y − 1) / (k(k − 1)): the chance that two runs agree on s    1
                       (Cooper et al. 2024); with ``threshold=``, the share of samples
                       below it
=====================  ==================================================================  ====

Every one takes ``group=`` (a column constant within a sample): one row per group with its
samples ``n``, or with ``combo=`` the groups' values combined as the fair-ranking family's
group metrics are (``MaxMinDiff``: the gap between the most and the least arbitrary group).
Intervals resample the samples (the runs stay fixed). The all-pairs churn is 1 − self
consistency, and the pairs' win and loss come from each sample's error count W and
Σ_r e_r(s)(k + 1 − 2·pos_r): win + loss = W(k − W), win − loss = that sum — O(k·n), no pair
of runs joined. Consecutive pairs and a reference join each run's rows with one other run's.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import narwhals.stable.v2 as nw

from frameaudit import _validate as validate
from frameaudit._combos import COMBO, Combos
from frameaudit._docs import shared_docs
from frameaudit._engine import Estimator, order_within
from frameaudit._expr import distinct, safe_div
from frameaudit._params import (
    COMBO_OPTION,
    UNCERTAINTY,
    Bounds,
    Levels,
    Optional,
    Real,
    constraints,
)
from frameaudit._registry import registered
from frameaudit._roles import Names
from frameaudit.exceptions import InvalidParameterError
from frameaudit.repro._runs import (
    EXAMPLE_RUNS,
    PRED,
    RUN,
    SAMPLE,
    SAMPLE_UNCERTAINTY,
    SCORE,
    TARGET,
    UNITS,
    WEIGHT,
    Runs,
    prepare,
)

__all__ = [
    "ambiguity",
    "churn",
    "discrepancy",
    "flip_rate",
    "score_range",
    "self_consistency",
]

_POS = "__fa_pos"
_K = "__fa_k"
_N = "__fa_n"
_REF = "__fa_ref"
_PREDICTIONS_ONLY = ("target", "score")
"""The roles a metric of the predicted classes does without: a score, and a target (churn's win
and loss read one when given; the others take none)."""
RATE = "[0, 1]"


def _start(
    frame: Any,
    name: str,
    columns: Sequence[str],
    *,
    run: str,
    sample: str,
    prediction: str | None,
    target: str | None = None,
    score: str | None = None,
    group: Names | None,
    combo: Combos | None,
    by: Names | None,
    weight: str | None,
    ci: float | None,
    n_boot: int,
    seed: int,
    also: Sequence[str] = (),
    optional: Sequence[str] = ("score",),
) -> Runs:
    """The validated runs of a call whose outputs are ``columns`` (and ``also``).

    ``optional``: the roles the metric does without (``target``, ``prediction``, ``score``).
    """
    if combo is not None and group is None:
        msg = f"combo={combo!r}: a combo compares groups; give group= the group column(s)"
        raise InvalidParameterError(msg)
    estimator = Estimator.requested(UNITS, ci, n_boot, seed)
    outputs = [*columns, *also, "n", COMBO, *estimator.outputs(*columns)]
    outputs += [f"{c}_undefined_replicates" for c in columns]
    return prepare(
        frame,
        name,
        run=run,
        sample=sample,
        target=target,
        prediction=prediction,
        score=score,
        group=group,
        by=by,
        weight=weight,
        estimator=estimator,
        outputs=outputs,
        optional=optional,
    )


def _per_sample(
    runs: Runs, rows: nw.LazyFrame[Any], *aggregations: nw.Expr, within: Sequence[str] = ()
) -> nw.LazyFrame[Any]:
    """``aggregations`` over ``rows`` per sample (and ``within``), with its groups and weight."""
    weight = [nw.col(WEIGHT).max()] if runs.has_weights else []
    keys = [*runs.by, SAMPLE, *runs.groups, *within]
    return rows.group_by(keys).agg(*aggregations, *weight)


def _means(
    runs: Runs,
    per_sample: nw.LazyFrame[Any],
    values: dict[str, nw.Expr],
    keys: Sequence[str] = (),
) -> nw.LazyFrame[Any]:
    """Each of ``values`` (per sample) averaged over the samples, per (estimate, group, keys).

    Weighted by the samples' weights; in a bootstrap replicate each sample counts as often as
    it is drawn. Every group of a partition has a row in every estimate: a group no drawn
    sample holds has the value null (0/0). The group's samples (their weights) are ``n``.
    """
    keys = [*runs.groups, *keys]
    sums = {f"__fa_{c}": runs.weighted(v) for c, v in values.items()}
    summed = runs.summed(per_sample, keys, {**sums, _N: runs.weighted()})
    estimates = runs.estimates
    if runs.groups or keys:
        seen = runs.partitioned(distinct(per_sample.select(*runs.by, *keys)))
        grid = runs.estimation.grid(seen).join(seen, on=runs.partition, how="inner")
        summed = grid.join(summed, on=[*estimates, *keys], how="left").with_columns(
            *(nw.col(c).fill_null(0) for c in [*sums, _N])
        )
    n = nw.col(_N)
    return summed.select(
        *estimates,
        *keys,
        *(
            safe_div(nw.col(f"__fa_{c}").cast(nw.Float64), n.cast(nw.Float64)).alias(c)
            for c in values
        ),
        n.alias("n"),
    )


def _finish(
    runs: Runs, values: nw.LazyFrame[Any], columns: Sequence[str], combo: Combos | None
) -> Any:
    """Per partition (and group, or combo): ``columns`` with their intervals, the caller's kind."""
    also = ["n"] if runs.groups and combo is None else []
    return runs.estimation.grouped(
        values, runs.groups, columns, combo, also=also, checks=runs.checks
    )


def _class_counts(runs: Runs, reference: nw.Expr | None = None) -> nw.LazyFrame[Any]:
    """Per sample, from the runs predicting each class (one aggregation of the rows).

    k, the agreeing ordered pairs Σ_y c_y(c_y − 1); with a target, the wrong runs W; with a
    ``reference`` run, the runs predicting its class (itself included) and whether it is
    wrong.
    """
    labelled = TARGET in runs.frame.collect_schema()
    is_reference = (
        [(nw.col(RUN) == reference).cast(nw.Int64).sum().alias("__fa_is_ref")]
        if reference is not None
        else []
    )
    per_class = _per_sample(
        runs,
        runs.frame,
        nw.len().cast(nw.Int64).alias("__fa_c"),
        *is_reference,
        within=[PRED, *([TARGET] if labelled else [])],
    )
    c = nw.col("__fa_c")
    sums = [(c * (c - 1)).sum().alias("__fa_agree"), c.sum().alias(_K)]
    wrong = (nw.col(PRED) != nw.col(TARGET)).cast(nw.Int64) if labelled else None
    if wrong is not None:
        sums.append((c * wrong).sum().alias("__fa_wrong"))
    if reference is not None:
        sums.append((c * nw.col("__fa_is_ref")).sum().alias("__fa_same"))
        if wrong is not None:
            sums.append((nw.col("__fa_is_ref") * wrong).sum().alias("__fa_ref_wrong"))
    return _per_sample(runs, per_class, *sums)


def _agreement() -> nw.Expr:
    """A sample's self-consistency (:func:`_class_counts`): agreeing ordered pairs / k(k − 1)."""
    k = nw.col(_K).cast(nw.Float64)
    return nw.col("__fa_agree").cast(nw.Float64) / (k * (k - 1.0))


def _positions(
    runs: Runs, order: Sequence[Any] | None
) -> tuple[nw.LazyFrame[Any], list[validate.Check]]:
    """Each run's 1-based position in its partition: (partition, RUN, _POS), and its checks.

    In sorted run order, or in ``order=`` (a list of every run, each once).
    """
    partition = runs.partition
    per_run = runs.partitioned(distinct(runs.frame.select(*runs.by, RUN)))
    checks: list[validate.Check] = []
    if order is None:
        return per_run.with_columns(order_within(per_run, RUN, partition).alias(_POS)), checks
    listed = list(order)
    if len(set(map(repr, listed))) < len(listed):
        msg = f"order={listed!r}: a run is listed more than once; list every run once"
        raise InvalidParameterError(msg)
    dtype = runs.frame.collect_schema()[RUN]
    ranks = runs.estimation.source.frame_from_columns(
        {RUN: listed, "__fa_index": list(range(len(listed)))}, parameter="order"
    )
    ranks = ranks.with_columns(nw.col(RUN).cast(dtype))
    missing = per_run.join(ranks, on=RUN, how="anti").select(nw.col(RUN).alias(runs.run))
    checks.append(
        validate.offending(
            missing,
            [runs.run],
            "order=: ",
            " run(s) of the data are not listed",
            "; list every run once",
        )
    )
    indexed = per_run.join(ranks, on=RUN, how="inner")
    return indexed.with_columns(order_within(indexed, "__fa_index", partition).alias(_POS)), checks


def _run_value(runs: Runs, reference: Any) -> nw.Expr:
    """``reference=`` as a literal of the run column's dtype, or a clear error."""
    dtype = runs.frame.collect_schema()[RUN]
    fits = (
        isinstance(reference, str)
        if dtype == nw.String
        else isinstance(reference, numbers.Real) and not isinstance(reference, bool)
        if dtype.is_numeric()
        else True
    )
    if not fits:
        msg = (
            f"reference={reference!r}: expected a run id like the run column's values "
            f"({dtype}), found a {type(reference).__name__}"
        )
        raise InvalidParameterError(msg)
    return nw.lit(reference).cast(dtype)


def _against_reference(runs: Runs, reference: Any | None) -> nw.LazyFrame[Any]:
    """Every other run's rows with the reference run's prediction (and error) beside them.

    The reference is ``reference=``, else the first run of its partition in sorted order. A
    partition without the reference run fails a check.
    """
    partition = runs.partition
    rows = runs.partitioned(runs.frame)
    chosen = _chosen_reference(runs, rows, reference)
    rows = rows.join(chosen, on=partition, how="left")
    has_target = TARGET in rows.collect_schema()
    picked = rows.filter(nw.col(RUN) == nw.col(_REF)).select(
        *partition,
        SAMPLE,
        nw.col(PRED).alias("__fa_ref_pred"),
        *([nw.col(TARGET).alias("__fa_ref_target")] if has_target else []),
    )
    _check_reference(runs, chosen, picked)
    others = rows.filter(nw.col(RUN) != nw.col(_REF))
    return others.join(picked, on=[*partition, SAMPLE], how="inner")


def _chosen_reference(
    runs: Runs, rows: nw.LazyFrame[Any], reference: Any | None
) -> nw.LazyFrame[Any]:
    """Each partition of ``rows`` and its reference run ``_REF``.

    ``reference=``, else the partition's first run in sorted order. Without by= the one
    partition is a first row, not a scan.
    """
    partition = runs.partition
    if reference is None:
        return rows.group_by(partition).agg(nw.col(RUN).min().alias(_REF))
    partitions = rows.select(partition)
    partitions = distinct(partitions) if runs.by else partitions.head(1)
    return partitions.with_columns(_run_value(runs, reference).alias(_REF))


def _check_reference(runs: Runs, chosen: nw.LazyFrame[Any], picked: nw.LazyFrame[Any]) -> None:
    """Check that every partition of ``chosen`` has rows of its reference run in ``picked``."""
    partition = runs.partition
    absent = chosen.join(distinct(picked.select(partition)), on=partition, how="anti")
    runs.checks.append(
        validate.offending(
            absent.select(nw.col(_REF).alias(runs.run)),
            [runs.run],
            "reference=: ",
            " partition(s) have no run with this id",
            "; give one of the runs",
        )
    )


def _consecutive(runs: Runs, order: Sequence[Any] | None) -> nw.LazyFrame[Any]:
    """Each run's rows beside the previous run's (in ``order``, or sorted).

    The earlier run's columns are named as the reference's of :func:`_against_reference`:
    both give (earlier, later) pairs to :func:`_pair_terms`.
    """
    positions, checks = _positions(runs, order)
    runs.checks.extend(checks)
    partition = runs.partition
    rows = runs.partitioned(runs.frame).join(positions, on=[*partition, RUN], how="inner")
    has_target = TARGET in rows.collect_schema()
    earlier = rows.select(
        *partition,
        SAMPLE,
        (nw.col(_POS) + 1).alias(_POS),
        nw.col(PRED).alias("__fa_ref_pred"),
        *([nw.col(TARGET).alias("__fa_ref_target")] if has_target else []),
    )
    return rows.join(earlier, on=[*partition, SAMPLE, _POS], how="inner")


def _pair_terms(*, win_loss: bool) -> dict[str, nw.Expr]:
    """Per pair row (earlier = the reference columns, later = the row): its flags as 0/1."""
    flags = {"churn": nw.col(PRED) != nw.col("__fa_ref_pred")}
    if win_loss:
        right_before = nw.col("__fa_ref_target") == nw.col("__fa_ref_pred")
        right_now = nw.col(TARGET) == nw.col(PRED)
        flags |= {"win": ~right_before & right_now, "loss": right_before & ~right_now}
    return {name: nw.when(flag).then(1).otherwise(0) for name, flag in flags.items()}


def _paired_means(
    runs: Runs, paired: nw.LazyFrame[Any], columns: dict[str, str]
) -> nw.LazyFrame[Any]:
    """The pairs' flags averaged per sample, then over the samples.

    ``columns`` maps the flags of :func:`_pair_terms` to the output columns.
    """
    terms = _pair_terms(win_loss="win" in columns)
    per_sample = _per_sample(
        runs,
        paired,
        *(terms[flag].sum().alias(f"__fa_{flag}") for flag in columns),
        nw.len().cast(nw.Int64).alias("__fa_pairs"),
    )
    pairs = nw.col("__fa_pairs").cast(nw.Float64)
    shares = {out: nw.col(f"__fa_{flag}").cast(nw.Float64) / pairs for flag, out in columns.items()}
    return _means(runs, per_sample, shares)


_GROUPED = (
    "group\n    Column(s) constant within a sample (a protected attribute): one result per "
    "group.\n"
    "combo\n    With ``group=``: None (one row per group with its samples ``n``), one of the "
    'combos of the fair-ranking family\'s group metrics (``"MaxMinDiff"``: the largest gap '
    'between groups, ``"MinMaxRatio"``, …), or a list of them (one row per combo).'
)
"""The docstring entries of ``group`` and ``combo``."""


@registered(
    "repro",
    "table",
    unit=UNITS,
    worst="high",
    roles={"target": "target"},
    outputs={
        "churn": ("0 = no prediction flips between runs", RATE),
        "win": ("share of pairs where a wrong prediction became right", RATE),
        "loss": ("0 = no right prediction became wrong", RATE),
    },
)
@constraints(combo=COMBO_OPTION, **UNCERTAINTY)
@shared_docs(uncertainty=SAMPLE_UNCERTAINTY, grouped=_GROUPED, example_runs=EXAMPLE_RUNS)
def churn(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    prediction: str = "prediction",
    target: str | None = None,
    order: Sequence[Any] | None = None,
    reference: Any | None = None,
    group: Names | None = None,
    combo: Combos | None = None,
    by: Names | None = None,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Prediction churn: the share of samples two runs predict differently, over pairs of runs.

    Per pair of runs (earlier, later), churn is the share of samples whose prediction
    differs; with ``target``, ``win`` is the share the earlier run gets wrong and the later
    right, ``loss`` the share it gets right and the later wrong (Milani Fard et al. 2016's
    good and bad churn; churn = win + loss + the changes between two wrong classes). The
    value is the mean over the pairs: all pairs of runs (oriented in sorted run order), the
    consecutive pairs of ``order=``, or each run against ``reference=``.

    Parameters
    ----------
    frame
        Any supported frame: one row per (run, sample).
    run, sample, prediction
        The run, sample and predicted-label columns; every run predicts every sample once.
    target
        The true label column (the same in every run of a sample): adds ``win`` and ``loss``.
    order
        A list of every run once: the pairs are its consecutive runs (releases in time).
    reference
        A run id: the pairs are this run against each other run (a baseline model).
    group, combo
        <<grouped>>
    by
        Column(s): one independent result per partition.
    weight, ci, n_boot, seed
        <<uncertainty>>

    Returns
    -------
    A frame of the input's kind: the ``by`` columns (the group columns and ``n``, or
    ``combo``), ``churn`` (and ``win``, ``loss``) in [0, 1], one row per partition; with
    ``ci`` each followed by ``_lo`` and ``_hi``, then ``samples`` and each column's undefined
    replicates.

    Examples
    --------
    <<example_runs>>
    >>> fa.repro.churn(df, target="target").rows()  # 6 of the 12 (pair, sample) cells differ
    [(0.5, 0.16666666666666666, 0.3333333333333333)]
    """
    if order is not None and reference is not None:
        raise InvalidParameterError("order=, reference=: give the pairs by one of them, not both")
    columns = ["churn", "win", "loss"] if target is not None else ["churn"]
    runs = _start(
        frame, "churn", columns, run=run, sample=sample, prediction=prediction, target=target,
        group=group, combo=combo, by=by, weight=weight, ci=ci, n_boot=n_boot, seed=seed,
        optional=_PREDICTIONS_ONLY,
    )  # fmt: skip
    if order is not None:
        values = _paired_means(runs, _consecutive(runs, order), {c: c for c in columns})
        return _finish(runs, values, columns, combo)
    k = nw.col(_K).cast(nw.Float64)
    wrong = nw.col("__fa_wrong").cast(nw.Float64)
    if reference is not None:
        # against the reference: the other runs of its class agree, the rest differ; a wrong
        # reference wins where another run is right, a right one loses where another is wrong
        value = _run_value(runs, reference)
        counts = _class_counts(runs, value)
        rows = runs.partitioned(runs.frame)
        # the check that every partition holds the run reads its rows (a filtered scan)
        chosen = _chosen_reference(runs, rows, reference)
        _check_reference(runs, chosen, rows.filter(nw.col(RUN) == value))
        others = k - 1.0
        shares = {"churn": (k - nw.col("__fa_same").cast(nw.Float64)) / others}
        if target is not None:
            ref_wrong = nw.col("__fa_ref_wrong").cast(nw.Float64)
            shares |= {
                "win": ref_wrong * (k - wrong) / others,
                "loss": (1.0 - ref_wrong) * wrong / others,
            }
        return _finish(runs, _means(runs, counts, shares), columns, combo)
    counts = _class_counts(runs)
    shares = {"churn": 1.0 - _agreement()}
    if target is not None:
        counts = counts.join(_win_loss_terms(runs), on=[*runs.by, SAMPLE], how="left")
        tilt = nw.col("__fa_tilt").cast(nw.Float64)
        pairs = k * (k - 1.0) / 2.0
        differing = wrong * (k - wrong)
        shares |= {
            "win": (differing + tilt) / 2.0 / pairs,
            "loss": (differing - tilt) / 2.0 / pairs,
        }
    return _finish(runs, _means(runs, counts, shares), columns, combo)


def _win_loss_terms(runs: Runs) -> nw.LazyFrame[Any]:
    """Per sample over all pairs: Σ_r e_r(k + 1 − 2 pos_r) = win − loss (e_r: run r wrong)."""
    positions, _ = _positions(runs, None)
    k = nw.col(_POS).max().over(*runs.partition)
    positions = positions.with_columns(k.alias("__fa_runs"))
    rows = runs.partitioned(runs.frame).join(positions, on=[*runs.partition, RUN], how="inner")
    wrong = nw.when(nw.col(TARGET) != nw.col(PRED)).then(1).otherwise(0)
    tilt = wrong * (nw.col("__fa_runs") + 1 - 2 * nw.col(_POS))
    return rows.group_by([*runs.by, SAMPLE]).agg(tilt.sum().cast(nw.Int64).alias("__fa_tilt"))


@registered(
    "repro",
    "table",
    unit=UNITS,
    worst="high",
    outputs={
        "negative_flip_rate": ("0 = no right prediction became wrong", RATE),
        "positive_flip_rate": ("share of wrong predictions that became right", RATE),
    },
)
@constraints(combo=COMBO_OPTION, **UNCERTAINTY)
@shared_docs(uncertainty=SAMPLE_UNCERTAINTY, grouped=_GROUPED)
def flip_rate(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    order: Sequence[Any] | None = None,
    group: Names | None = None,
    combo: Combos | None = None,
    by: Names | None = None,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Negative and positive flip rates between consecutive runs (Yan et al. 2021).

    Between a run and the next (in ``order=``, else in sorted run order): the negative flip
    rate is the share of samples the earlier run gets right and the later wrong (a
    regression a user notices), the positive flip rate the share it gets wrong and the later
    right; each averaged over the consecutive pairs.

    Parameters
    ----------
    frame
        Any supported frame: one row per (run, sample).
    run, sample, target, prediction
        The run, sample, true-label and predicted-label columns.
    order
        A list of every run once (releases in time); None: sorted run order.
    group, combo
        <<grouped>>
    by
        Column(s): one independent result per partition.
    weight, ci, n_boot, seed
        <<uncertainty>>

    Returns
    -------
    A frame of the input's kind: the ``by`` columns (the group columns and ``n``, or
    ``combo``), ``negative_flip_rate`` and ``positive_flip_rate`` in [0, 1]; with ``ci`` each
    followed by its interval, then ``samples`` and the undefined replicates.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame(
    ...     {
    ...         "run": ["v1"] * 4 + ["v2"] * 4,
    ...         "sample": [0, 1, 2, 3] * 2,
    ...         "target": [0, 1, 0, 1] * 2,
    ...         "prediction": [0, 1, 1, 0, 1, 1, 0, 1],
    ...     }
    ... )
    >>> fa.repro.flip_rate(df).rows()  # sample 0 right → wrong; 2 and 3 wrong → right
    [(0.25, 0.5)]
    """
    columns = ["negative_flip_rate", "positive_flip_rate"]
    runs = _start(
        frame, "flip_rate", columns, run=run, sample=sample, prediction=prediction,
        target=target, group=group, combo=combo, by=by, weight=weight, ci=ci, n_boot=n_boot,
        seed=seed,
    )  # fmt: skip
    paired = _consecutive(runs, order)
    values = _paired_means(runs, paired, {"loss": columns[0], "win": columns[1]})
    return _finish(runs, values, columns, combo)


@registered(
    "repro",
    "table",
    unit=UNITS,
    worst="high",
    outputs={"ambiguity": ("0 = every run predicts every sample alike", RATE)},
)
@constraints(combo=COMBO_OPTION, **UNCERTAINTY)
@shared_docs(uncertainty=SAMPLE_UNCERTAINTY, grouped=_GROUPED)
def ambiguity(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    prediction: str = "prediction",
    group: Names | None = None,
    combo: Combos | None = None,
    by: Names | None = None,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Ambiguity: the share of samples that some run predicts differently (Marx et al. 2020).

    Marx, Calmon & Ustun define it against a reference model: the samples on which some
    model of the set differs from it. Some run differs from the reference exactly when two
    runs differ, so the value does not depend on which run is the reference.

    Parameters
    ----------
    frame
        Any supported frame: one row per (run, sample).
    run, sample, prediction
        The run, sample and predicted-label columns.
    group, combo
        <<grouped>>
    by
        Column(s): one independent result per partition.
    weight, ci, n_boot, seed
        <<uncertainty>>

    Returns
    -------
    A frame of the input's kind: the ``by`` columns (the group columns and ``n``, or
    ``combo``) and ``ambiguity`` in [0, 1]; with ``ci``, its interval, ``samples`` and
    ``undefined_replicates``.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame(
    ...     {"run": [1] * 3 + [2] * 3, "sample": [0, 1, 2] * 2, "prediction": [0, 1, 1, 0, 0, 1]}
    ... )
    >>> fa.repro.ambiguity(df).item()  # sample 1 gets 1 and 0
    0.3333333333333333
    """
    runs = _start(
        frame, "ambiguity", ["ambiguity"], run=run, sample=sample, prediction=prediction,
        group=group, combo=combo, by=by, weight=weight, ci=ci, n_boot=n_boot, seed=seed,
        optional=_PREDICTIONS_ONLY,
    )  # fmt: skip
    per_sample = _per_sample(
        runs,
        runs.frame,
        nw.col(PRED).min().alias("__fa_low"),
        nw.col(PRED).max().alias("__fa_high"),
    )
    differs = nw.when(nw.col("__fa_low") != nw.col("__fa_high")).then(1.0).otherwise(0.0)
    return _finish(runs, _means(runs, per_sample, {"ambiguity": differs}), ["ambiguity"], combo)


@registered(
    "repro",
    "table",
    unit=UNITS,
    worst="high",
    outputs={"discrepancy": ("0 = no run changes a decision of the reference", RATE)},
)
@constraints(combo=COMBO_OPTION, **UNCERTAINTY)
@shared_docs(uncertainty=SAMPLE_UNCERTAINTY, grouped=_GROUPED)
def discrepancy(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    prediction: str = "prediction",
    reference: Any | None = None,
    group: Names | None = None,
    combo: Combos | None = None,
    by: Names | None = None,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Discrepancy: the most decisions one run changes against the reference (Marx et al. 2020).

    The largest share, over the other runs r, of the samples where r's prediction differs
    from the reference run's. A maximum over runs: with ``group=`` each group's own maximum
    (the run that changes a group's decisions most may differ from group to group).

    Parameters
    ----------
    frame
        Any supported frame: one row per (run, sample).
    run, sample, prediction
        The run, sample and predicted-label columns.
    reference
        The reference run's id (the deployed model); None: the first run in sorted order.
    group, combo
        <<grouped>>
    by
        Column(s): one independent result per partition.
    weight, ci, n_boot, seed
        <<uncertainty>>

    Returns
    -------
    A frame of the input's kind: the ``by`` columns (the group columns and ``n``, or
    ``combo``) and ``discrepancy`` in [0, 1]; with ``ci``, its interval (each replicate's
    maximum over the runs), ``samples`` and ``undefined_replicates``.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame(
    ...     {
    ...         "run": [1] * 4 + [2] * 4 + [3] * 4,
    ...         "sample": [0, 1, 2, 3] * 3,
    ...         "prediction": [0, 0, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1],
    ...     }
    ... )
    >>> fa.repro.discrepancy(df).item()  # run 3 changes 3 of run 1's 4 decisions
    0.75
    """
    runs = _start(
        frame, "discrepancy", ["discrepancy"], run=run, sample=sample, prediction=prediction,
        group=group, combo=combo, by=by, weight=weight, ci=ci, n_boot=n_boot, seed=seed,
        optional=_PREDICTIONS_ONLY,
    )  # fmt: skip
    paired = _against_reference(runs, reference)
    differs = _pair_terms(win_loss=False)["churn"]
    per_run = _means(runs, paired, {"discrepancy": differs}, [RUN])
    values = per_run.group_by([*runs.estimates, *runs.groups]).agg(
        nw.col("discrepancy").max(), nw.col("n").max()
    )
    return _finish(runs, values, ["discrepancy"], combo)


def _quantile_names(quantiles: Sequence[float]) -> list[str]:
    """``q50`` for 0.5, ``q97_5`` for 0.975: the columns of the quantiles."""
    return ["q" + f"{round(q * 100, 6):g}".replace(".", "_").zfill(2) for q in quantiles]


@registered(
    "repro",
    "table",
    unit=UNITS,
    worst="high",
    roles={"score": "score"},
    outputs={"score_range": ("0 = every run gives every sample the same score", "[0, inf)")},
)
@constraints(
    bounds=Optional(Bounds()),
    quantiles=Optional(Levels()),
    combo=COMBO_OPTION,
    **UNCERTAINTY,
)
@shared_docs(uncertainty=SAMPLE_UNCERTAINTY, grouped=_GROUPED)
def score_range(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    score: str = "score",
    bounds: tuple[float, float] | None = (0.0, 1.0),
    quantiles: Sequence[float] | None = None,
    group: Names | None = None,
    combo: Combos | None = None,
    by: Names | None = None,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""The viable prediction range: how far apart the runs score a sample.

    Per sample, the largest score any run gives it minus the smallest (Watson-Daniels,
    Parkes & Ustun 2023's viable prediction range over the runs given); the value is its
    mean over the samples, and ``quantiles=`` adds quantiles of its distribution.

    Parameters
    ----------
    frame
        Any supported frame: one row per (run, sample).
    run, sample
        The run and sample columns; every run scores every sample once.
    score
        The numeric score column (a probability, a risk score), not NaN.
    bounds
        The scores' declared range (low, high), checked; None: any number.
    quantiles
        Levels in [0, 1] (e.g. ``[0.5, 0.9]``): columns ``q50``, ``q90`` of the per-sample
        ranges (linear interpolation, as numpy's default), point estimates beside the
        mean. Not with ``weight=`` or ``combo=``.
    group, combo
        <<grouped>>
    by
        Column(s): one independent result per partition.
    weight, ci, n_boot, seed
        <<uncertainty>>

    Returns
    -------
    A frame of the input's kind: the ``by`` columns (the group columns and ``n``, or
    ``combo``), ``score_range`` (Float64) and the quantile columns; with ``ci`` the mean's
    interval, ``samples`` and ``undefined_replicates``.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame(
    ...     {"run": [1, 1, 2, 2], "sample": [0, 1, 0, 1], "score": [0.2, 0.9, 0.6, 0.8]}
    ... )
    >>> round(fa.repro.score_range(df).item(), 12)  # (0.4 + 0.1) / 2
    0.25
    """
    levels = [float(q) for q in quantiles or []]
    if levels and (weight is not None or combo is not None):
        given = "weight=" if weight is not None else "combo="
        msg = (
            f"quantiles= with {given}: the quantiles are of the unweighted per-group ranges; "
            "give quantiles=None"
        )
        raise InvalidParameterError(msg)
    names = _quantile_names(levels)
    runs = _start(
        frame, "score_range", ["score_range"], run=run, sample=sample, prediction=None,
        score=score, group=group, combo=combo, by=by, weight=weight, ci=ci, n_boot=n_boot,
        seed=seed, also=names,
        optional=("target", "prediction"),
    )  # fmt: skip
    if bounds is not None:
        low, high = (float(b) for b in bounds)
        runs.checks.append(
            validate.in_range(runs.estimation.source.frame, score, "score", low, high)
        )
    per_sample = _per_sample(
        runs, runs.frame, (nw.col(SCORE).max() - nw.col(SCORE).min()).alias("__fa_range")
    )
    values = _means(runs, per_sample, {"score_range": nw.col("__fa_range")})
    if not names:
        return _finish(runs, values, ["score_range"], combo)
    cells = [*runs.partition, *runs.groups]
    spread = (
        runs.partitioned(per_sample)
        .group_by(cells)
        .agg(
            *(
                nw.col("__fa_range").quantile(q, interpolation="linear").alias(name)
                for q, name in zip(levels, names, strict=True)
            )
        )
    )
    values = values.join(spread, on=cells, how="left")
    also = [*(["n"] if runs.groups else []), *names]
    return runs.estimation.grouped(
        values, runs.groups, ["score_range"], None, also=also, checks=runs.checks
    )


@registered(
    "repro",
    "table",
    unit=UNITS,
    worst="low",
    outputs={
        "self_consistency": ("1 = every pair of runs agrees on every sample", RATE),
        "below_threshold": ("0 = no sample below the consistency threshold", RATE),
    },
)
@constraints(
    threshold=Optional(Real(0.0, 1.0)),
    combo=COMBO_OPTION,
    **UNCERTAINTY,
)
@shared_docs(uncertainty=SAMPLE_UNCERTAINTY, grouped=_GROUPED)
def self_consistency(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    prediction: str = "prediction",
    threshold: float | None = None,
    group: Names | None = None,
    combo: Combos | None = None,
    by: Names | None = None,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Self-consistency: the chance that two runs agree on a sample (Cooper et al. 2024).

    Per sample, the share of the ordered pairs of distinct runs that predict it alike,
    :math:`\sum_y c_y (c_y - 1) / (k (k - 1))` with c_y the runs predicting class y; the
    value is its mean over the samples. 1 − self-consistency is the mean churn over all
    pairs of runs. With ``threshold=``, ``below_threshold`` is the share of samples whose
    self-consistency is below it (those Cooper et al. abstain on).

    Parameters
    ----------
    frame
        Any supported frame: one row per (run, sample).
    run, sample, prediction
        The run, sample and predicted-label columns.
    threshold
        A level in [0, 1]: adds ``below_threshold``.
    group, combo
        <<grouped>>
    by
        Column(s): one independent result per partition.
    weight, ci, n_boot, seed
        <<uncertainty>>

    Returns
    -------
    A frame of the input's kind: the ``by`` columns (the group columns and ``n``, or
    ``combo``), ``self_consistency`` (and ``below_threshold``) in [0, 1]; with ``ci`` each
    followed by its interval, then ``samples`` and the undefined replicates.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame(
    ...     {"run": [1, 1, 2, 2, 3, 3], "sample": [0, 1] * 3, "prediction": [0, 1, 0, 0, 0, 1]}
    ... )
    >>> fa.repro.self_consistency(df, threshold=0.5).rows()  # sample 1: 1 of 3 pairs agree
    [(0.6666666666666666, 0.5)]
    """
    columns = ["self_consistency", *(["below_threshold"] if threshold is not None else [])]
    runs = _start(
        frame, "self_consistency", columns, run=run, sample=sample, prediction=prediction,
        group=group, combo=combo, by=by, weight=weight, ci=ci, n_boot=n_boot, seed=seed,
        optional=_PREDICTIONS_ONLY,
    )  # fmt: skip
    counts = _class_counts(runs)
    agreement = _agreement()
    shares = {"self_consistency": agreement}
    if threshold is not None:
        shares["below_threshold"] = nw.when(agreement < float(threshold)).then(1.0).otherwise(0.0)
    return _finish(runs, _means(runs, counts, shares), columns, combo)
