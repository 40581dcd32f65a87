r"""Pairwise reproducibility metrics: agreement of repeated runs, compared two at a time.

Each of k runs predicts the same n samples. For every unordered pair of runs (a, b), oriented
a < b in sorted run order, a metric compares the two prediction vectors — or the two binary
error vectors :math:`e_r(s) = [\hat y_r(s) \ne y(s)]` — and the k(k−1)/2 values form the pair
distribution. A *pairwise reproducibility metric* is a summary of that distribution: by default
its mean, with the spread next to it (the error consistency of Levman et al. 2023).

Everything a pair needs comes from a few counts: n, the error counts n_a and n_b, the
intersection I = |e_a ∧ e_b|, the agreement A = #{s: ŷ_a = ŷ_b}, the chance agreement
Σ_c m_a(c)·m_b(c) of the class marginals, and for Cramér's V the cells of the ŷ_a × ŷ_b table.
They are computed once per call (:func:`summary` shares them between all eight metrics).

Only the samples a run gets wrong are joined: I, the agreement between wrong predictions and
every cell of the class table follow from the per-run confusion matrices plus that join (see
:func:`_cells`), so the join has Σ_s C(w_s, 2) rows for w_s runs wrong on sample s, instead of
k(k−1)/2 · n rows for a join of everything.
"""

from __future__ import annotations

from typing import Any

import narwhals.stable.v2 as nw

from frameaudit._engine import cached, from_engine
from frameaudit._expr import null_float, safe_div
from frameaudit._params import Choice, Flag, constraints
from frameaudit._roles import Names
from frameaudit.repro._runs import (
    EMPTY_UNION,
    PRED,
    RUN,
    RUN_A,
    RUN_B,
    SAMPLE,
    TARGET,
    EmptyUnion,
    Runs,
    intersection_over_union,
    long_summary,
    one_summary,
    prepare,
    summarize,
)

__all__ = [
    "METRICS",
    "cramers_v",
    "ea_kappa",
    "ec_agreement",
    "ec_corr",
    "ec_global",
    "ec_local",
    "pa",
    "pa_kappa",
    "summary",
]

#: The pairwise metrics, in the order :func:`summary` computes them.
METRICS = (
    "ec_local",
    "ec_global",
    "ea_kappa",
    "ec_agreement",
    "ec_corr",
    "pa",
    "pa_kappa",
    "cramers_v",
)

_COUNT = "__fa_count"
_SAMPLES = "__fa_n"
_ERRORS = "__fa_errors"
_ERRORS_A = "__fa_na"
_ERRORS_B = "__fa_nb"
_BOTH_WRONG = "__fa_i"
_SAME_WRONG = "__fa_w"
_CHANCE = "__fa_s"
_CELL_SHARE = "__fa_x"
_CLASSES = "__fa_classes"
_CLASSES_A = "__fa_ka"
_CLASSES_B = "__fa_kb"
_PREDICTED = "__fa_m"
_PREDICTED_A = "__fa_ma"
_PREDICTED_B = "__fa_mb"
_CLASS = "__fa_class"
_PRED_A = "__fa_pa"
_PRED_B = "__fa_pb"
_CELL_A = "__fa_cell_a"
_CELL_B = "__fa_cell_b"

# The extra counts a metric needs beyond n, n_a, n_b, I and W.
_NEEDS: dict[str, frozenset[str]] = {
    "pa_kappa": frozenset({"chance"}),
    "cramers_v": frozenset({"cells"}),
}


def _pair_counts(runs: Runs, needs: frozenset[str]) -> nw.LazyFrame[Any]:
    """One row per pair of runs: n, n_a, n_b, I and W (+ Σ m_a·m_b, cell sum, class counts).

    W counts the samples both runs get wrong with the same wrong class, so A = n − U + W.
    """
    partition = runs.partition
    keys = [*partition, RUN_A, RUN_B]
    confusion = runs.frame.group_by([*runs.by, RUN, TARGET, PRED]).agg(
        nw.len().cast(nw.Int64).alias(_COUNT)
    )
    confusion = cached(runs.partitioned(confusion))
    wrong = nw.col(TARGET) != nw.col(PRED)
    per_run = (
        confusion.with_columns(nw.when(wrong).then(nw.col(_COUNT)).otherwise(0).alias(_ERRORS))
        .group_by([*partition, RUN])
        .agg(nw.col(_COUNT).sum().alias(_SAMPLES), nw.col(_ERRORS).sum())
    )
    marginals = confusion.group_by([*partition, RUN, PRED]).agg(
        nw.col(_COUNT).sum().alias(_PREDICTED)
    )
    if "cells" in needs:
        classes = marginals.group_by([*partition, RUN]).agg(nw.len().alias(_CLASSES))
        per_run = per_run.join(classes, on=[*partition, RUN], how="left")
    extra = [_CLASSES] if "cells" in needs else []
    side_a = per_run.select(
        *partition,
        nw.col(RUN).alias(RUN_A),
        nw.col(_SAMPLES),
        nw.col(_ERRORS).alias(_ERRORS_A),
        *(nw.col(c).alias(_CLASSES_A) for c in extra),
    )
    side_b = per_run.select(
        *partition,
        nw.col(RUN).alias(RUN_B),
        nw.col(_ERRORS).alias(_ERRORS_B),
        *(nw.col(c).alias(_CLASSES_B) for c in extra),
    )
    pairs = side_a.join(side_b, on=partition).filter(nw.col(RUN_A) < nw.col(RUN_B))
    both = cached(_both_wrong(runs, by_class="cells" in needs))
    joint = both.group_by(keys).agg(
        nw.col(_COUNT).sum().alias(_BOTH_WRONG), nw.col(_SAME_WRONG).sum()
    )
    counts = [_BOTH_WRONG, _SAME_WRONG]
    pairs = pairs.join(joint, on=keys, how="left")
    if "chance" in needs:
        pairs = pairs.join(_chance(pairs.select(keys), marginals, partition), on=keys, how="left")
        counts.append(_CHANCE)
    if "cells" in needs:
        cells = _cells(pairs.select(keys), confusion, both, marginals, partition)
        pairs = pairs.join(cells, on=keys, how="left")
    # pairs without a common error (or class) are missing from the joins: their counts are 0
    return pairs.with_columns(
        nw.col(_SAMPLES).cast(nw.Int64),
        nw.col(_ERRORS_A).cast(nw.Int64),
        nw.col(_ERRORS_B).cast(nw.Int64),
        *(nw.col(c).fill_null(0).cast(nw.Int64) for c in counts),
    )


def _both_wrong(runs: Runs, *, by_class: bool) -> nw.LazyFrame[Any]:
    """Per pair, the samples both runs get wrong (count), and with the same wrong class (W).

    With ``by_class``, counted per (target, wrong class of a, wrong class of b) too, for the
    cells of the class table; otherwise one row per pair.
    """
    by = runs.by
    errors = runs.frame.filter(nw.col(TARGET) != nw.col(PRED))
    side_a = errors.select(
        *by, SAMPLE, nw.col(RUN).alias(RUN_A), TARGET, nw.col(PRED).alias(_PRED_A)
    )
    side_b = errors.select(*by, SAMPLE, nw.col(RUN).alias(RUN_B), nw.col(PRED).alias(_PRED_B))
    classes = [TARGET, _PRED_A, _PRED_B] if by_class else []
    same = nw.when(nw.col(_PRED_A) == nw.col(_PRED_B)).then(1).otherwise(0)
    both = (
        side_a.join(side_b, on=[*by, SAMPLE])
        .filter(nw.col(RUN_A) < nw.col(RUN_B))
        .with_columns(same.alias(_SAME_WRONG))
        .group_by([*by, RUN_A, RUN_B, *classes])
        .agg(nw.len().cast(nw.Int64).alias(_COUNT), nw.col(_SAME_WRONG).sum())
    )
    return runs.partitioned(both)


def _side(
    marginals: nw.LazyFrame[Any], partition: list[str], run: str, cls: str, m: str
) -> nw.LazyFrame[Any]:
    return marginals.select(
        *partition, nw.col(RUN).alias(run), nw.col(PRED).alias(cls), nw.col(_PREDICTED).alias(m)
    )


def _chance(
    pairs: nw.LazyFrame[Any], marginals: nw.LazyFrame[Any], partition: list[str]
) -> nw.LazyFrame[Any]:
    """Σ_c m_a(c)·m_b(c): n² times the chance agreement of the two runs' predictions."""
    keys = [*partition, RUN_A, RUN_B]
    return (
        pairs.join(_side(marginals, partition, RUN_A, _CLASS, _PREDICTED_A), on=[*partition, RUN_A])
        .join(
            _side(marginals, partition, RUN_B, _CLASS, _PREDICTED_B), on=[*partition, RUN_B, _CLASS]
        )
        .with_columns((nw.col(_PREDICTED_A) * nw.col(_PREDICTED_B)).alias(_CHANCE))
        .group_by(keys)
        .agg(nw.col(_CHANCE).sum())
    )


def _cells(
    pairs: nw.LazyFrame[Any],
    confusion: nw.LazyFrame[Any],
    both: nw.LazyFrame[Any],
    marginals: nw.LazyFrame[Any],
    partition: list[str],
) -> nw.LazyFrame[Any]:
    """Σ over the non-empty cells of the ŷ_a × ŷ_b table of O² / (m_a(i)·m_b(j)).

    The table is assembled without joining every sample. Start from run a's confusion matrix
    as if run b were always right (a sample of target y that a predicts as i sits in cell
    (i, y)). Each error of run b (y → j) moves its sample from (y, y) to (y, j), which is right
    when a is right too; for the samples both runs get wrong (y → i, y → j) the two moves are
    undone — (i, y) and (y, j) lose one, (y, y) and (i, j) gain one.
    """
    keys = [*partition, RUN_A, RUN_B]
    errors = confusion.filter(nw.col(TARGET) != nw.col(PRED))
    of_a = pairs.join(confusion.rename({RUN: RUN_A}), on=[*partition, RUN_A])
    of_b = pairs.join(errors.rename({RUN: RUN_B}), on=[*partition, RUN_B])

    def moved(frame: nw.LazyFrame[Any], cell_a: str, cell_b: str, sign: int) -> nw.LazyFrame[Any]:
        return frame.select(
            *keys,
            nw.col(cell_a).alias(_CELL_A),
            nw.col(cell_b).alias(_CELL_B),
            (nw.col(_COUNT) * sign).alias(_COUNT),
        )

    observed = (
        nw.concat(
            [
                moved(of_a, PRED, TARGET, 1),
                moved(of_b, TARGET, PRED, 1),
                moved(of_b, TARGET, TARGET, -1),
                moved(both, _PRED_A, _PRED_B, 1),
                moved(both, _PRED_A, TARGET, -1),
                moved(both, TARGET, _PRED_B, -1),
                moved(both, TARGET, TARGET, 1),
            ]
        )
        .group_by([*keys, _CELL_A, _CELL_B])
        .agg(nw.col(_COUNT).sum())
        .filter(nw.col(_COUNT) > 0)
    )
    count = nw.col(_COUNT).cast(nw.Float64)
    return (
        observed.join(
            _side(marginals, partition, RUN_A, _CELL_A, _PREDICTED_A),
            on=[*partition, RUN_A, _CELL_A],
        )
        .join(
            _side(marginals, partition, RUN_B, _CELL_B, _PREDICTED_B),
            on=[*partition, RUN_B, _CELL_B],
        )
        .with_columns(
            (
                count
                * count
                / (nw.col(_PREDICTED_A).cast(nw.Float64) * nw.col(_PREDICTED_B).cast(nw.Float64))
            ).alias(_CELL_SHARE)
        )
        .group_by(keys)
        .agg(nw.col(_CELL_SHARE).sum())
    )


def _values(empty_union: EmptyUnion) -> dict[str, nw.Expr]:
    """Each metric as an expression of the pair counts (Int64 products are exact)."""
    n, na, nb, i = nw.col(_SAMPLES), nw.col(_ERRORS_A), nw.col(_ERRORS_B), nw.col(_BOTH_WRONG)
    union = na + nb - i
    neither = n - union
    agree = neither + nw.col(_SAME_WRONG)
    # the 2×2 table of (e_a, e_b) is [[I, n_a − I], [n_b − I, n − U]]; ad − bc:
    cross = i * neither - (na - i) * (nb - i)
    # one square root of the product: φ of identical vectors is exactly 1
    spread = ((na * (n - na)).cast(nw.Float64) * (nb * (n - nb)).cast(nw.Float64)).sqrt()
    fewer_classes = nw.min_horizontal(nw.col(_CLASSES_A), nw.col(_CLASSES_B))
    chi2_over_n = (nw.col(_CELL_SHARE) - 1.0).clip(lower_bound=0.0)  # rounding can dip below 0
    return {
        "ec_local": intersection_over_union(i, union, empty_union),
        "ec_global": safe_div(i, n),
        "ea_kappa": safe_div(2 * cross, na * (n - nb) + nb * (n - na)),
        "ec_agreement": safe_div(i + neither, n),
        "ec_corr": safe_div(cross, spread),
        "pa": safe_div(agree, n),
        "pa_kappa": safe_div(n * agree - nw.col(_CHANCE), n * n - nw.col(_CHANCE)),
        "cramers_v": nw.when(fewer_classes < 2)
        .then(null_float())
        .otherwise((chi2_over_n / (fewer_classes - 1).cast(nw.Float64)).sqrt()),
    }


def _compute(
    frame: Any,
    name: str,
    *,
    run: str,
    sample: str,
    target: str,
    prediction: str,
    by: Names | None,
    empty_union: EmptyUnion,
    pairwise: bool,
) -> Any:
    """One metric (or all, for ``name="summary"``): the pair values or their summary."""
    metrics = METRICS if name == "summary" else (name,)
    runs = prepare(frame, name, run=run, sample=sample, target=target, prediction=prediction, by=by)
    needs = frozenset().union(*(_NEEDS.get(m, frozenset()) for m in metrics))
    values = _values(empty_union)
    keys = [*runs.partition, RUN_A, RUN_B]
    per_pair = _pair_counts(runs, needs).select(*keys, *(values[m].alias(m) for m in metrics))
    if pairwise:
        result = per_pair.select(
            *runs.by, nw.col(RUN_A).alias("run_a"), nw.col(RUN_B).alias("run_b"), *metrics
        )
        sort_by = [*runs.by, "run_a", "run_b"]
    elif name == "summary":
        stats = summarize(per_pair, runs.partition, metrics)
        result = long_summary(stats, runs.by, metrics, runs.source)
        sort_by = [*runs.by, "metric"]
    else:
        stats = summarize(per_pair, runs.partition, metrics)
        result = one_summary(stats, runs.by, name)
        sort_by = runs.by
    return from_engine(result, runs.source, sort_by=sort_by, checks=runs.checks)


@constraints(empty_union=Choice(EMPTY_UNION), pairwise=Flag())
def ec_local(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    by: Names | None = None,
    empty_union: EmptyUnion = "null",
    pairwise: bool = False,
) -> Any:
    r"""Local error consistency EC_ℓ: the intersection over union of two runs' error sets.

    For a pair of runs, :math:`\mathrm{EC}_\ell = |e_a \cap e_b| / |e_a \cup e_b|`: of the
    samples either run gets wrong, the share both get wrong (Levman et al. 2023). 1 is most
    reproducible (the runs err on exactly the same samples), 0 means disjoint errors.

    Parameters
    ----------
    frame
        Polars DataFrame/LazyFrame, pandas DataFrame, pyarrow Table, DuckDB relation, PySpark
        DataFrame: one row per (run, sample).
    run
        Column identifying the run (any orderable dtype); pairs are oriented run_a < run_b.
    sample
        Column identifying the sample. Every run must predict every sample exactly once.
    target
        True class label; the same in every run of a sample.
    prediction
        Predicted class label, of the same dtype as ``target`` (or both numeric).
    by
        Column(s): one independent result per partition (runs are paired within it).
    empty_union
        The value of a pair whose runs make no error at all (0/0): ``"null"`` (undefined:
        left out of the statistics and counted in ``n_undefined``), ``0`` or ``1``.
    pairwise
        Return the pair distribution instead of its summary.

    Returns
    -------
    A frame of the input's kind, one row per partition sorted by ``by``: the ``by`` columns,
    ``ec_local`` (the mean over pairs, Float64), ``std`` (ddof 1), ``min``, ``max``, ``q05``,
    ``q95`` (linear interpolation), ``n_pairs`` and ``n_undefined`` (Int64). With
    ``pairwise=True``: the ``by`` columns, ``run_a``, ``run_b`` and ``ec_local``, one row per
    pair, sorted.

    Notes
    -----
    Undefined when neither run makes an error (see ``empty_union``; the original error
    consistency code uses 0). Only the rows of wrong predictions are joined on the sample:
    O(k·n) plus the Σ_s C(w_s, 2) joined rows of samples that w_s runs get wrong — O(k²·n)
    only when nearly every prediction is wrong.

    Examples
    --------
    The seed's two runs with disjoint errors, and a third run that repeats the first:

    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame(
    ...     {
    ...         "run": [1] * 4 + [2] * 4 + [3] * 4,
    ...         "sample": [0, 1, 2, 3] * 3,
    ...         "target": [0, 1, 0, 1] * 3,
    ...         "prediction": [1, 1, 0, 1, 0, 1, 0, 0, 1, 1, 0, 1],
    ...     }
    ... )
    >>> fa.repro.ec_local(df, pairwise=True)
    shape: (3, 3)
    ┌───────┬───────┬──────────┐
    │ run_a ┆ run_b ┆ ec_local │
    │ ---   ┆ ---   ┆ ---      │
    │ i64   ┆ i64   ┆ f64      │
    ╞═══════╪═══════╪══════════╡
    │ 1     ┆ 2     ┆ 0.0      │
    │ 1     ┆ 3     ┆ 1.0      │
    │ 2     ┆ 3     ┆ 0.0      │
    └───────┴───────┴──────────┘
    >>> fa.repro.ec_local(df).select("ec_local", "std", "n_pairs")
    shape: (1, 3)
    ┌──────────┬─────────┬─────────┐
    │ ec_local ┆ std     ┆ n_pairs │
    │ ---      ┆ ---     ┆ ---     │
    │ f64      ┆ f64     ┆ i64     │
    ╞══════════╪═════════╪═════════╡
    │ 0.333333 ┆ 0.57735 ┆ 3       │
    └──────────┴─────────┴─────────┘
    """
    return _compute(
        frame, "ec_local", run=run, sample=sample, target=target, prediction=prediction,
        by=by, empty_union=empty_union, pairwise=pairwise,
    )  # fmt: skip


@constraints(pairwise=Flag())
def ec_global(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    by: Names | None = None,
    pairwise: bool = False,
) -> Any:
    r"""Global error consistency EC_g: the share of all samples both runs get wrong.

    For a pair of runs, :math:`\mathrm{EC}_g = |e_a \cap e_b| / n` (Levman et al. 2023). It
    is at most the error rate of the better run; unlike EC_ℓ it is always defined, and it is 0
    for two perfect runs as for two runs with disjoint errors.

    Parameters as for :func:`ec_local` (whose ``empty_union`` option is its own).

    Returns
    -------
    A frame of the input's kind, as for :func:`ec_local`: the ``by`` columns, ``ec_global`` (the
    mean over pairs) and the summary statistics; with ``pairwise=True``, one row per pair.

    Notes
    -----
    Never undefined. The mean over pairs has an O(k·n) closed form (Σ_s C(w_s, 2) / (n·C(k, 2))
    for w_s runs wrong on sample s), but the spread needs every pair; only wrong predictions
    are joined on the sample (see :func:`ec_local`).

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame(
    ...     {
    ...         "run": [1] * 6 + [2] * 6,
    ...         "sample": [0, 1, 2, 3, 4, 5] * 2,
    ...         "target": ["a", "b", "c"] * 4,
    ...         "prediction": list("abcbba") + list("accabb"),
    ...     }
    ... )
    >>> fa.repro.ec_global(df)["ec_global"].item()
    0.16666666666666666
    """
    return _compute(
        frame, "ec_global", run=run, sample=sample, target=target, prediction=prediction,
        by=by, empty_union="null", pairwise=pairwise,
    )  # fmt: skip


@constraints(pairwise=Flag())
def ea_kappa(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    by: Names | None = None,
    pairwise: bool = False,
) -> Any:
    r"""Kappa-based error agreement EA_κ: Cohen's κ of two runs' binary error vectors.

    With p_o the share of samples where both runs are right or both wrong and p_e the same share
    expected by chance from the two error rates, :math:`\kappa = (p_o - p_e) / (1 - p_e)`
    (Cohen 1960; the error consistency of Geirhos et al. 2020). 1 is most reproducible, 0 is
    chance-level agreement of the errors, negative is worse than chance.

    Parameters as for :func:`ec_local` (whose ``empty_union`` option is its own).

    Returns
    -------
    A frame of the input's kind, as for :func:`ec_local`: the ``by`` columns, ``ea_kappa`` (the
    mean over pairs) and the summary statistics; with ``pairwise=True``, one row per pair.

    Notes
    -----
    Null when p_e = 1: both runs are always right, or both always wrong. Computed exactly from
    the 2×2 table [[I, n_a − I], [n_b − I, n − U]] as 2(ad − bc) / ((a+b)(b+d) + (a+c)(c+d)).
    Only wrong predictions are joined on the sample (see :func:`ec_local`).

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame(
    ...     {
    ...         "run": [1] * 6 + [2] * 6,
    ...         "sample": [0, 1, 2, 3, 4, 5] * 2,
    ...         "target": ["a", "b", "c"] * 4,
    ...         "prediction": list("abcbba") + list("accabb"),
    ...     }
    ... )
    >>> fa.repro.ea_kappa(df)["ea_kappa"].item()
    0.25
    """
    return _compute(
        frame, "ea_kappa", run=run, sample=sample, target=target, prediction=prediction,
        by=by, empty_union="null", pairwise=pairwise,
    )  # fmt: skip


@constraints(pairwise=Flag())
def ec_agreement(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    by: Names | None = None,
    pairwise: bool = False,
) -> Any:
    r"""Error agreement: the share of samples where both runs are right or both wrong.

    :math:`\operatorname{mean}(e_a = e_b) = (|e_a \cap e_b| + n - |e_a \cup e_b|) / n`, the
    observed agreement p_o of :func:`ea_kappa` without the chance correction. 1 is most
    reproducible.

    Parameters as for :func:`ec_local` (whose ``empty_union`` option is its own).

    Returns
    -------
    A frame of the input's kind, as for :func:`ec_local`: the ``by`` columns, ``ec_agreement`` (the
    mean over pairs) and the summary statistics; with ``pairwise=True``, one row per pair.

    Notes
    -----
    Never undefined. The mean over pairs has an O(k·n) closed form from the per-sample error
    counts; the spread needs every pair.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame(
    ...     {
    ...         "run": [1] * 6 + [2] * 6,
    ...         "sample": [0, 1, 2, 3, 4, 5] * 2,
    ...         "target": ["a", "b", "c"] * 4,
    ...         "prediction": list("abcbba") + list("accabb"),
    ...     }
    ... )
    >>> fa.repro.ec_agreement(df)["ec_agreement"].item()
    0.6666666666666666
    """
    return _compute(
        frame, "ec_agreement", run=run, sample=sample, target=target, prediction=prediction,
        by=by, empty_union="null", pairwise=pairwise,
    )  # fmt: skip


@constraints(pairwise=Flag())
def ec_corr(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    by: Names | None = None,
    pairwise: bool = False,
) -> Any:
    r"""Error correlation: Pearson's φ between two runs' binary error vectors.

    :math:`\varphi = (ad - bc) / \sqrt{n_a (n - n_a)\, n_b (n - n_b)}` for the 2×2 table of
    (e_a, e_b), the Pearson correlation of the two 0/1 vectors. 1 is most reproducible.

    Parameters as for :func:`ec_local` (whose ``empty_union`` option is its own).

    Returns
    -------
    A frame of the input's kind, as for :func:`ec_local`: the ``by`` columns, ``ec_corr`` (the
    mean over pairs) and the summary statistics; with ``pairwise=True``, one row per pair.

    Notes
    -----
    Null when either error vector is constant (a run that is always right, or always wrong):
    its variance is 0.
    Only wrong predictions are joined on the sample (see :func:`ec_local`).

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame(
    ...     {
    ...         "run": [1] * 6 + [2] * 6,
    ...         "sample": [0, 1, 2, 3, 4, 5] * 2,
    ...         "target": ["a", "b", "c"] * 4,
    ...         "prediction": list("abcbba") + list("accabb"),
    ...     }
    ... )
    >>> fa.repro.ec_corr(df)["ec_corr"].item()
    0.25
    """
    return _compute(
        frame, "ec_corr", run=run, sample=sample, target=target, prediction=prediction,
        by=by, empty_union="null", pairwise=pairwise,
    )  # fmt: skip


@constraints(pairwise=Flag())
def pa(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    by: Names | None = None,
    pairwise: bool = False,
) -> Any:
    r"""Percent agreement: the share of samples on which two runs predict the same class.

    :math:`A / n` with :math:`A = \#\{s : \hat y_a(s) = \hat y_b(s)\}`. It ignores the target.
    1 is most reproducible.

    Parameters as for :func:`ec_local` (whose ``empty_union`` option is its own).

    Returns
    -------
    A frame of the input's kind, as for :func:`ec_local`: the ``by`` columns, ``pa`` (the
    mean over pairs) and the summary statistics; with ``pairwise=True``, one row per pair.

    Notes
    -----
    Never undefined. Two runs that are both wrong may still agree (the same wrong class):
    A = n − |e_a ∪ e_b| + W, with W counted on the joined wrong predictions.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame(
    ...     {
    ...         "run": [1] * 6 + [2] * 6,
    ...         "sample": [0, 1, 2, 3, 4, 5] * 2,
    ...         "target": ["a", "b", "c"] * 4,
    ...         "prediction": list("abcbba") + list("accabb"),
    ...     }
    ... )
    >>> fa.repro.pa(df)["pa"].item()
    0.5
    """
    return _compute(
        frame, "pa", run=run, sample=sample, target=target, prediction=prediction,
        by=by, empty_union="null", pairwise=pairwise,
    )  # fmt: skip


@constraints(pairwise=Flag())
def pa_kappa(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    by: Names | None = None,
    pairwise: bool = False,
) -> Any:
    r"""Prediction agreement κ: Cohen's κ of two runs' predicted classes.

    :math:`\kappa = (p_o - p_e) / (1 - p_e)` with p_o = A/n (:func:`pa`) and
    :math:`p_e = \sum_c m_a(c)\, m_b(c) / n^2` from each run's class counts m (Cohen 1960;
    scikit-learn's ``cohen_kappa_score``). 1 is most reproducible, 0 is chance-level.

    Parameters as for :func:`ec_local` (whose ``empty_union`` option is its own).

    Returns
    -------
    A frame of the input's kind, as for :func:`ec_local`: the ``by`` columns, ``pa_kappa`` (the
    mean over pairs) and the summary statistics; with ``pairwise=True``, one row per pair.

    Notes
    -----
    Null when p_e = 1: both runs predict one and the same class everywhere. The chance term
    joins the runs' class counts (k²·c rows for c classes), not the samples.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame(
    ...     {
    ...         "run": [1] * 6 + [2] * 6,
    ...         "sample": [0, 1, 2, 3, 4, 5] * 2,
    ...         "target": ["a", "b", "c"] * 4,
    ...         "prediction": list("abcbba") + list("accabb"),
    ...     }
    ... )
    >>> fa.repro.pa_kappa(df)["pa_kappa"].item()
    0.25
    """
    return _compute(
        frame, "pa_kappa", run=run, sample=sample, target=target, prediction=prediction,
        by=by, empty_union="null", pairwise=pairwise,
    )  # fmt: skip


@constraints(pairwise=Flag())
def cramers_v(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    by: Names | None = None,
    pairwise: bool = False,
) -> Any:
    r"""Cramér's V of the table of two runs' predicted classes.

    :math:`V = \sqrt{\chi^2 / (n \,(\min(r, c) - 1))}` for the r × c contingency table of
    (ŷ_a, ŷ_b) over the classes each run predicts, χ² without Yates' correction (Cramér 1946;
    scipy's ``contingency.association(..., method="cramer", correction=False)``). It measures
    association, not agreement: a run that relabels the other's classes consistently has V = 1.
    1 is most reproducible.

    Parameters as for :func:`ec_local` (whose ``empty_union`` option is its own).

    Returns
    -------
    A frame of the input's kind, as for :func:`ec_local`: the ``by`` columns, ``cramers_v`` (the
    mean over pairs) and the summary statistics; with ``pairwise=True``, one row per pair.

    Notes
    -----
    Null when either run predicts a single class. χ² = n(Σ O²/(m_a m_b) − 1) over the
    non-empty cells, which are assembled from the per-run confusion matrices and the joined
    wrong predictions, never from a join of all samples.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame(
    ...     {
    ...         "run": [1] * 6 + [2] * 6,
    ...         "sample": [0, 1, 2, 3, 4, 5] * 2,
    ...         "target": ["a", "b", "c"] * 4,
    ...         "prediction": list("abcbba") + list("accabb"),
    ...     }
    ... )
    >>> fa.repro.cramers_v(df)["cramers_v"].item()
    0.5
    """
    return _compute(
        frame, "cramers_v", run=run, sample=sample, target=target, prediction=prediction,
        by=by, empty_union="null", pairwise=pairwise,
    )  # fmt: skip


@constraints(empty_union=Choice(EMPTY_UNION), pairwise=Flag())
def summary(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    by: Names | None = None,
    empty_union: EmptyUnion = "null",
    pairwise: bool = False,
) -> Any:
    r"""Every pairwise reproducibility metric at once, from one computation of the pair counts.

    The eight metrics of :data:`METRICS` — :func:`ec_local`, :func:`ec_global`,
    :func:`ea_kappa`, :func:`ec_agreement`, :func:`ec_corr`, :func:`pa`, :func:`pa_kappa`,
    :func:`cramers_v` — summarised over the pairs of runs.

    Parameters as for :func:`ec_local`; ``empty_union`` applies to EC_ℓ, and ``pairwise=True``
    returns one row per pair with a column per metric instead of the summaries.

    Returns
    -------
    A frame of the input's kind in long format, one row per (partition, metric), sorted: the
    ``by`` columns, ``metric``, ``mean``, ``std`` (ddof 1), ``min``, ``max``, ``q05``, ``q95``
    (linear interpolation), ``n_pairs`` and ``n_undefined``. With ``pairwise=True``: the
    ``by`` columns, ``run_a``, ``run_b`` and one Float64 column per metric.

    Notes
    -----
    The pair counts are shared: one grouping of all rows into per-run confusion matrices, one
    join of the wrong predictions on the sample, small joins of per-run tables. Undefined pair
    values are left out of the statistics and counted in ``n_undefined``.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame(
    ...     {
    ...         "run": [1] * 6 + [2] * 6,
    ...         "sample": [0, 1, 2, 3, 4, 5] * 2,
    ...         "target": ["a", "b", "c"] * 4,
    ...         "prediction": list("abcbba") + list("accabb"),
    ...     }
    ... )
    >>> fa.repro.summary(df).select("metric", "mean", "n_pairs")
    shape: (8, 3)
    ┌──────────────┬──────────┬─────────┐
    │ metric       ┆ mean     ┆ n_pairs │
    │ ---          ┆ ---      ┆ ---     │
    │ str          ┆ f64      ┆ i64     │
    ╞══════════════╪══════════╪═════════╡
    │ cramers_v    ┆ 0.5      ┆ 1       │
    │ ea_kappa     ┆ 0.25     ┆ 1       │
    │ ec_agreement ┆ 0.666667 ┆ 1       │
    │ ec_corr      ┆ 0.25     ┆ 1       │
    │ ec_global    ┆ 0.166667 ┆ 1       │
    │ ec_local     ┆ 0.333333 ┆ 1       │
    │ pa           ┆ 0.5      ┆ 1       │
    │ pa_kappa     ┆ 0.25     ┆ 1       │
    └──────────────┴──────────┴─────────┘
    """
    return _compute(
        frame, "summary", run=run, sample=sample, target=target, prediction=prediction,
        by=by, empty_union=empty_union, pairwise=pairwise,
    )  # fmt: skip
