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

With ``weight=`` every count is a weighted sum over samples; with ``ci=`` every count is
computed per bootstrap replicate too (the samples resampled, the runs fixed), from the drawn
samples, the drawn wrong predictions and the drawn rows of that join — never the right
predictions × the replicates (see :func:`_confusion`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import narwhals.stable.v2 as nw

from frameaudit import _validate as validate
from frameaudit._docs import shared_docs
from frameaudit._engine import Estimator, cached, exact_sums, native_step
from frameaudit._expr import aggregate, distinct, divided_in, over
from frameaudit._params import UNCERTAINTY, Choice, Flag, constraints
from frameaudit._registry import metrics, registered
from frameaudit._roles import Names
from frameaudit.repro._runs import (
    EMPTY_UNION,
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
    prepare,
    summaries,
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


_COUNT = "__fa_count"
_SAMPLES = "__fa_n"
_ERRORS_A = "__fa_na"
_ERRORS_B = "__fa_nb"
_BOTH_WRONG = "__fa_i"
_SAME_WRONG = "__fa_w"
_CHANCE = "__fa_s"
_CELL_SHARE = "__fa_x"
_CLASSES_A = "__fa_ka"
_CLASSES_B = "__fa_kb"
_PREDICTED_A = "__fa_ma"
_PREDICTED_B = "__fa_mb"
_PRED_A = "__fa_pa"
_PRED_B = "__fa_pb"
_CELL_A = "__fa_cell_a"
_CELL_B = "__fa_cell_b"
_DRAWN = "__fa_draws"
_IS_A = "__fa_is_a"
_MOVE = "__fa_move"
_CODE = "__fa_number"
_CODE_A = "__fa_number_a"
_CODE_B = "__fa_number_b"
_CLASSES = "__fa_class_count"
_RUNS = "__fa_run_count"
_SQUARE = "__fa_class_square"
_BASE = "__fa_pair_base"
_BASE_A = "__fa_base_a"
_BASE_B = "__fa_base_b"
_PA = "__fa_pa"
_KEY = "__fa_class_cell"
_ROW_A = "__fa_row_a"
_ROW_B = "__fa_row_b"
_Y = "__fa_y"
_YC = "__fa_yc"
_P = "__fa_p"
_PC = "__fa_pc"

_MOST_CELLS = 2**53
"""The most cells the pairs' class tables may have: one Int64 numbers each (:class:`_Coding`).

2^53, not 2^63: Spark's floor division (as narwhals writes it) divides as doubles, which is
exact for integers up to 2^53.
"""


def _pair_counts(runs: Runs, coding: _Coding | None) -> nw.LazyFrame[Any]:
    """One row per estimate and pair of runs: n, n_a, n_b, I and W (+ Σ m_a·m_b, cell sum, ...).

    W counts the samples both runs get wrong with the same wrong class, so A = n − U + W.
    Every count is a sum over samples (Int64; Float64, of weights, with ``weight=``), per
    estimate: with a bootstrap, per replicate too. ``coding`` (for the cells of the class
    table, which Cramér's V needs) numbers the runs and the classes.

    Each shared table (the runs' confusion matrices) is read by as few steps as possible, as
    engines without a plan cache (DuckDB, Spark) compute it once per reader: the confusion
    matrices reach the pairs once, on the side of run a and on the side of run b, and every
    per-run count (n, errors, classes, class counts) is summed from there.
    """
    keys = [*runs.estimates, RUN_A, RUN_B]
    on_sides = cached(_on_sides(runs, coding))
    is_a, wrong, count = nw.col(_IS_A), nw.col(TARGET) != nw.col(PRED), nw.col(_COUNT)
    zero = nw.lit(0).cast(runs.count_dtype)
    split = {
        _PREDICTED_A: is_a,
        _PREDICTED_B: ~is_a,
        _ERRORS_A: is_a & wrong,
        _ERRORS_B: ~is_a & wrong,
    }
    by_class = exact_sums(
        on_sides.with_columns(
            *(nw.when(side).then(count).otherwise(zero).alias(name) for name, side in split.items())
        ),
        [*keys, PRED],
        list(split),
    )
    m_a, m_b = nw.col(_PREDICTED_A), nw.col(_PREDICTED_B)
    predicts = {_CLASSES_A: m_a > 0, _CLASSES_B: m_b > 0}
    pairs = exact_sums(
        by_class.with_columns(
            *(nw.when(has).then(1).otherwise(0).alias(name) for name, has in predicts.items()),
            (m_a * m_b).alias(_CHANCE),
            m_a.alias(_SAMPLES),
        ),
        keys,
        [_SAMPLES, _ERRORS_A, _ERRORS_B, _CHANCE],
        also=lambda ns: [ns.col(name).sum().cast(ns.Int64) for name in predicts],
    )
    counts = [_BOTH_WRONG, _SAME_WRONG]
    # read twice with coding (the pair counts and the cells): computed once
    joined = cached(_joined_errors(runs, coding))
    pairs = pairs.join(_both_wrong(runs, coding, joined), on=keys, how="left")
    if coding is not None:
        pairs = pairs.join(_cells(runs, on_sides, coding, joined), on=keys, how="left")
    # pairs without a common error (or class) are missing from the joins: their counts are 0
    return pairs.with_columns(
        nw.col(_SAMPLES).cast(runs.count_dtype),
        nw.col(_ERRORS_A).cast(runs.count_dtype),
        nw.col(_ERRORS_B).cast(runs.count_dtype),
        nw.col(_CHANCE).cast(runs.count_dtype),
        *(nw.col(c).fill_null(0).cast(runs.count_dtype) for c in counts),
    )


@dataclass(frozen=True)
class _Coding:
    """Numbers for the runs and the classes, so that one Int64 names a cell of a pair's table.

    ``runs``: (``by``, RUN, _CODE, _BASE_A, _BASE_B), the R runs of every partition numbered
    0…R−1 in (``by``, run) order, so that run a < run b within a partition exactly when code
    a < code b; a run's part of p·C² as run a (a·C²) and as run b (b(b−1)/2·C²).
    ``classes``: (TARGET, _CODE, _CLASSES), the C classes of the targets and the predictions
    numbered 0…C−1 in their order, and C. ``sizes``: one row of R, C and C².

    The cell (i, j) of the pair of codes a < b is the key p·C² + i·C + j, p = b(b−1)/2 + a:
    the cells of all pairs are grouped by that one integer, which engines hash several times
    faster than the four columns (run a, run b, class i, class j) of any dtype it stands for.
    The keys stay below R(R−1)/2·C², which :meth:`fits` checks against :data:`_MOST_CELLS`.
    """

    runs: nw.LazyFrame[Any]
    classes: nw.LazyFrame[Any]
    sizes: nw.LazyFrame[Any]

    @classmethod
    def of(cls, runs: Runs) -> _Coding:
        """The numbers of the runs and classes of ``runs``."""
        frame, by = runs.frame, runs.by
        coded_runs = cached(
            distinct(frame.select(*by, RUN)).with_row_index(_CODE, order_by=[*by, RUN])
        )
        labels = nw.concat(
            [distinct(frame.select(TARGET)), distinct(frame.select(nw.col(PRED).alias(TARGET)))]
        )
        coded = cached(distinct(labels).with_row_index(_CODE, order_by=[TARGET]))
        counted = (nw.col(_CODE).max() + 1).cast(nw.Int64)
        # only the two numberings are cached: caching the tables below too, which read them
        # both directly and through ``sizes``, made Polars 2.1's optimizer panic
        # (cse/cache_states.rs, "narrowed_shared_subplan") when one of them was collected alone
        sizes = (
            coded_runs.select(counted.alias(_RUNS))
            .join(coded.select(counted.alias(_CLASSES)), how="cross")
            .with_columns((nw.col(_CLASSES) * nw.col(_CLASSES)).alias(_SQUARE))
        )
        code = nw.col(_CODE).cast(nw.Int64)
        return cls(
            coded_runs.join(sizes.select(_SQUARE), how="cross").select(
                *by,
                RUN,
                code.alias(_CODE),
                (code * nw.col(_SQUARE)).alias(_BASE_A),
                (code * (code - 1) // 2 * nw.col(_SQUARE)).alias(_BASE_B),
            ),
            coded.join(sizes.select(_CLASSES), how="cross").select(
                TARGET, code.alias(_CODE), _CLASSES
            ),
            sizes,
        )

    def fits(self, metric: str) -> validate.Check:
        """The keys fit in an Int64: R(R−1)/2·C² ≤ :data:`_MOST_CELLS` (else ``metric``'s error)."""
        most = _MOST_CELLS

        def too_many(ns: Any) -> Any:
            r, c = ns.col("runs").cast(ns.Float64), ns.col("classes").cast(ns.Float64)
            return r * (r - 1) / 2 * c * c > float(most)

        def shown(_: nw.Expr, example: str) -> nw.Expr:
            tail = (
                " are too many for Cramér's V: one 64-bit key numbers each cell of the class "
                f"tables of all pairs of runs, R(R-1)/2 * C^2 for R runs (of all partitions) "
                f"and C classes, and there may be at most {most}; compute it on fewer runs or "
                "classes at a time"
            )
            return validate.around_example(f"{metric}: ", example, tail)

        sizes = self.sizes.select(nw.col(_RUNS).alias("runs"), nw.col(_CLASSES).alias("classes"))
        rule = validate.Rule(too_many, shown, example=validate.row_text(["runs", "classes"]))
        return validate.Check.of_rules(sizes, rule)

    def labelled(self, frame: nw.LazyFrame[Any], label: str, code: str, scaled: str) -> Any:
        """``frame`` with the class of ``label`` as ``code`` and as ``scaled`` (code·C)."""
        classes = self.classes.select(
            nw.col(TARGET).alias(label),
            nw.col(_CODE).alias(code),
            (nw.col(_CODE) * nw.col(_CLASSES)).alias(scaled),
        )
        return frame.join(classes, on=label)


def _on_sides(runs: Runs, coding: _Coding | None) -> nw.LazyFrame[Any]:
    """Each cell of each run's confusion matrix, once for every pair the run is part of.

    (estimate, RUN_A, RUN_B, _IS_A: the run is the pair's run a, TARGET, PRED, count; with
    ``coding`` also the pair's _BASE = p·C² and the classes' codes _Y, _YC, _P, _PC.)
    """
    pairs_of_runs = _pairs_of_runs(runs, coding)
    sides = nw.concat(
        [
            pairs_of_runs.with_columns(nw.col(RUN_A).alias(RUN), nw.lit(value=True).alias(_IS_A)),
            pairs_of_runs.with_columns(nw.col(RUN_B).alias(RUN), nw.lit(value=False).alias(_IS_A)),
        ]
    )
    confusion = _confusion(runs)
    if coding is not None:
        confusion = coding.labelled(coding.labelled(confusion, TARGET, _Y, _YC), PRED, _P, _PC)
    return confusion.join(sides, on=[*runs.partition, RUN]).drop(RUN)


def _pairs_of_runs(runs: Runs, coding: _Coding | None) -> nw.LazyFrame[Any]:
    """The pairs of runs of each partition, oriented run_a < run_b (partition, RUN_A, RUN_B).

    With ``coding``, also the pair's _BASE = p·C² (:class:`_Coding`).
    """
    if coding is None:
        run_list = cached(runs.partitioned(distinct(runs.frame.select(*runs.by, RUN))))
        side_a, side_b = run_list.rename({RUN: RUN_A}), run_list.rename({RUN: RUN_B})
    else:
        run_list = runs.partitioned(coding.runs)
        side_a = run_list.select(*runs.partition, nw.col(RUN).alias(RUN_A), _BASE_A)
        side_b = run_list.select(*runs.partition, nw.col(RUN).alias(RUN_B), _BASE_B)
    pairs = side_a.join(side_b, on=runs.partition).filter(nw.col(RUN_A) < nw.col(RUN_B))
    if coding is not None:
        base = (nw.col(_BASE_A) + nw.col(_BASE_B)).alias(_BASE)
        pairs = pairs.select(*runs.partition, RUN_A, RUN_B, base)
    return cached(pairs)


_Move = tuple[Sequence[nw.Expr], int, "nw.Expr | None"]
"""A move of :func:`_moved`: the values of the cell it moves a row to, its sign, its condition."""


def _moved(
    runs: Runs,
    frame: nw.LazyFrame[Any],
    keys: list[str],
    *,
    cells: Sequence[str],
    moves: Sequence[_Move],
    counts: list[str],
) -> nw.LazyFrame[Any]:
    """Each row of ``frame`` once per move: the columns ``cells`` and signed counts.

    A move applies to the rows where its condition holds (None: every row). Several moves
    cross ``frame`` with a small table of moves instead of concatenating one copy per move, so
    that engines without a plan cache compute ``frame`` once.
    """
    table = runs.estimation.source.frame_from_columns(
        {_MOVE: list(range(len(moves)))}, parameter="moves"
    )
    move = nw.col(_MOVE)

    def chosen(values: list[nw.Expr]) -> nw.Expr:
        expr = nw.when(move == 0).then(values[0])
        for i, value in enumerate(values[1:], start=1):
            expr = expr.when(move == i).then(value)
        return expr

    applies = chosen([nw.lit(value=True) if c is None else c for _, _, c in moves])
    sign = chosen([nw.lit(s) for _, s, _ in moves])
    return (
        frame.join(table, how="cross")
        .filter(applies)
        .select(
            *keys,
            *(chosen([m[0][k] for m in moves]).alias(cell) for k, cell in enumerate(cells)),
            *((nw.col(c) * sign).alias(c) for c in counts),
        )
    )


def _confusion(runs: Runs) -> nw.LazyFrame[Any]:
    """Each run's confusion matrix per estimate: (estimate, RUN, TARGET, PRED) → count > 0."""
    cell = [RUN, TARGET, PRED]
    if runs.estimation.bootstrap is None:
        return runs.summed(runs.frame, cell, {_COUNT: runs.weighted()})
    # Per replicate, from the samples and the wrong predictions only, not rows × n_boot: every
    # run starts right on each drawn sample (cell (y, y)); a wrong prediction y → p moves its
    # sample to (y, p). The number of draws behind a cell (an integer) says exactly whether it
    # is empty, which a difference of weighted sums cannot.
    est = runs.estimates
    weight = [WEIGHT] if runs.has_weights else []
    sums = {_COUNT: runs.weighted(), _DRAWN: nw.lit(1, dtype=nw.Int64)}
    samples = distinct(runs.frame.select(*runs.by, SAMPLE, TARGET, *weight))
    totals = runs.summed(samples, [TARGET], sums)
    run_list = runs.partitioned(distinct(runs.frame.select(*runs.by, RUN)))
    right = run_list.join(totals, on=runs.partition).select(
        *est, RUN, nw.col(TARGET).alias(_CELL_A), nw.col(TARGET).alias(_CELL_B), _COUNT, _DRAWN
    )
    errors = runs.frame.filter(nw.col(TARGET) != nw.col(PRED))
    wrong = runs.summed(errors.select(*runs.by, SAMPLE, *cell, *weight), cell, sums)
    moves: list[_Move] = [
        ([nw.col(TARGET), nw.col(PRED)], 1, None),
        ([nw.col(TARGET), nw.col(TARGET)], -1, None),
    ]
    moved = _moved(
        runs, wrong, [*est, RUN], cells=[_CELL_A, _CELL_B], moves=moves, counts=[_COUNT, _DRAWN]
    )
    return (
        aggregate(
            nw.concat([right, moved]),
            [*est, RUN, _CELL_A, _CELL_B],
            nw.col(_COUNT).sum(),
            nw.col(_DRAWN).sum(),
        )
        .filter(nw.col(_DRAWN) > 0)
        .select(*est, RUN, nw.col(_CELL_A).alias(TARGET), nw.col(_CELL_B).alias(PRED), _COUNT)
    )


def _both_wrong(runs: Runs, coding: _Coding | None, joined: nw.LazyFrame[Any]) -> nw.LazyFrame[Any]:
    """Per estimate and pair, the samples both runs get wrong, and with the same wrong class (W).

    From ``joined`` (:func:`_joined_errors` with ``coding``): with numbers, counted per pair
    number and named by the pairs' runs.
    """
    if coding is None:
        keys, same = [RUN_A, RUN_B], nw.col(_PRED_A) == nw.col(_PRED_B)
    else:
        keys, same = [_BASE], nw.col(_PA) == nw.col(_P)
    both = runs.summed(
        joined,
        keys,
        {
            _BOTH_WRONG: runs.weighted(),
            _SAME_WRONG: runs.weighted(nw.when(same).then(1).otherwise(0)),
        },
    )
    if coding is None:
        return both
    pairs = _pairs_of_runs(runs, coding).select(*runs.partition, _BASE, RUN_A, RUN_B)
    return both.join(pairs, on=[*runs.partition, _BASE]).drop(_BASE)


def _joined_errors(runs: Runs, coding: _Coding | None) -> nw.LazyFrame[Any]:
    """The samples two runs a < b both get wrong: one row per (sample, pair).

    Without ``coding``: ``by``, SAMPLE, RUN_A, RUN_B, the wrong classes _PRED_A and _PRED_B
    (and WEIGHT). With it, numbers instead of labels: the pair's _BASE = p·C², the target's
    code _Y and _YC = code·C, run a's wrong class _PA and _PC = code·C, run b's _P.
    """
    by = runs.by
    errors = runs.frame.filter(nw.col(TARGET) != nw.col(PRED))
    weight = [WEIGHT] if runs.has_weights else []
    if coding is None:
        side_a = errors.select(
            *by, SAMPLE, nw.col(RUN).alias(RUN_A), nw.col(PRED).alias(_PRED_A), *weight
        )
        side_b = errors.select(*by, SAMPLE, nw.col(RUN).alias(RUN_B), nw.col(PRED).alias(_PRED_B))
        return side_a.join(side_b, on=[*by, SAMPLE]).filter(nw.col(RUN_A) < nw.col(RUN_B))
    coded = errors.join(coding.runs, on=[*by, RUN])
    coded = cached(coding.labelled(coding.labelled(coded, TARGET, _Y, _YC), PRED, _P, _PC))
    side_a = coded.select(
        *by,
        SAMPLE,
        nw.col(_CODE).alias(_CODE_A),
        _BASE_A,
        _Y,
        _YC,
        nw.col(_P).alias(_PA),
        _PC,
        *weight,
    )
    side_b = coded.select(*by, SAMPLE, nw.col(_CODE).alias(_CODE_B), _BASE_B, _P)
    joined = side_a.join(side_b, on=[*by, SAMPLE]).filter(nw.col(_CODE_A) < nw.col(_CODE_B))
    return joined.select(
        *by,
        SAMPLE,
        (nw.col(_BASE_A) + nw.col(_BASE_B)).alias(_BASE),
        _Y,
        _YC,
        _PA,
        _PC,
        _P,
        *weight,
    )


def _cells(
    runs: Runs, on_sides: nw.LazyFrame[Any], coding: _Coding, joined: nw.LazyFrame[Any]
) -> nw.LazyFrame[Any]:
    """Σ over the non-empty cells of the ŷ_a × ŷ_b table of O² / (m_a(i)·m_b(j)).

    The table is assembled without joining every sample. Start from run a's confusion matrix
    as if run b were always right (a sample of target y that a predicts as i sits in cell
    (i, y)). Each error of run b (y → j) moves its sample from (y, y) to (y, j), which is right
    when a is right too; for the samples both runs get wrong (y → i, y → j) the two moves are
    undone — (i, y) and (y, j) lose one, (y, y) and (i, j) gain one. The margins m_a(i) and
    m_b(j) are the table's row and column sums. Every cell is one integer key
    (:class:`_Coding`): the moves add up per key, and the margins are sums per key // C
    (pair, i) and per (pair, j).
    """
    estimates = runs.estimates
    base, y, yc, p, pc = (nw.col(c) for c in (_BASE, _Y, _YC, _P, _PC))
    is_a = nw.col(_IS_A)
    b_wrong = ~is_a & (nw.col(TARGET) != nw.col(PRED))
    moves_of_runs: list[_Move] = [
        ([base + pc + y], 1, is_a),
        ([base + yc + p], 1, b_wrong),
        ([base + yc + y], -1, b_wrong),
    ]
    # both wrong: a's wrong class is _PC (as a row), b's _P (as a column)
    moves_of_both: list[_Move] = [
        ([base + pc + p], 1, None),
        ([base + pc + y], -1, None),
        ([base + yc + p], -1, None),
        ([base + yc + y], 1, None),
    ]
    joined = joined.with_columns(runs.weighted().alias(_COUNT))
    both = runs.summed(
        _moved(
            runs, joined, [*runs.by, SAMPLE], cells=[_KEY], moves=moves_of_both, counts=[_COUNT]
        ),
        [_KEY],
        {_COUNT: nw.col(_COUNT)},
    )
    observed = exact_sums(
        nw.concat(
            [
                _moved(
                    runs, on_sides, estimates, cells=[_KEY], moves=moves_of_runs, counts=[_COUNT]
                ),
                both.select(*estimates, _KEY, _COUNT),
            ]
        ),
        [*estimates, _KEY],
        [_COUNT],
    ).filter(nw.col(_COUNT) > 0)
    key, classes, square = nw.col(_KEY), nw.col(_CLASSES), nw.col(_SQUARE)
    observed = observed.join(coding.sizes.select(_CLASSES, _SQUARE), how="cross").with_columns(
        (key // classes).alias(_ROW_A),
        (key // square * classes + key % classes).alias(_ROW_B),
        (key // square * square).alias(_BASE),
    )
    count = nw.col(_COUNT).cast(nw.Float64)
    margins = observed.with_columns(
        over(count.sum(), [*estimates, _ROW_A]).alias(_PREDICTED_A),
        over(count.sum(), [*estimates, _ROW_B]).alias(_PREDICTED_B),
    )
    share = count * count / (nw.col(_PREDICTED_A) * nw.col(_PREDICTED_B))
    per_pair = exact_sums(
        margins.with_columns(share.alias(_CELL_SHARE)), [*estimates, _BASE], [_CELL_SHARE]
    )
    pairs = _pairs_of_runs(runs, coding).select(*runs.partition, _BASE, RUN_A, RUN_B)
    return per_pair.join(pairs, on=[*runs.partition, _BASE]).select(
        *estimates, RUN_A, RUN_B, _CELL_SHARE
    )


def _values(ns: Any, empty_union: EmptyUnion) -> dict[str, Any]:
    """Each metric as an expression of the pair counts (Int64 products are exact).

    In the expressions of ``ns`` (:func:`~frameaudit._engine.native_step`): Polars' own on
    Polars, where narwhals' took a tenth of a summary's call to build.
    """
    n, na, nb, i = ns.col(_SAMPLES), ns.col(_ERRORS_A), ns.col(_ERRORS_B), ns.col(_BOTH_WRONG)
    union = na + nb - i
    neither = n - union
    agree = neither + ns.col(_SAME_WRONG)
    # the 2×2 table of (e_a, e_b) is [[I, n_a − I], [n_b − I, n − U]]; ad − bc:
    cross = i * neither - (na - i) * (nb - i)
    # one square root of the product: φ of identical vectors is exactly 1
    spread = ((na * (n - na)).cast(ns.Float64) * (nb * (n - nb)).cast(ns.Float64)).sqrt()
    fewer_classes = ns.min_horizontal(ns.col(_CLASSES_A), ns.col(_CLASSES_B))
    chi2_over_n = (ns.col(_CELL_SHARE) - 1.0).clip(lower_bound=0.0)  # rounding can dip below 0
    chance = ns.col(_CHANCE)
    return {
        "ec_local": intersection_over_union(ns, i, union, empty_union),
        "ec_global": divided_in(ns, i, n),
        "ea_kappa": divided_in(ns, 2 * cross, na * (n - nb) + nb * (n - na)),
        "ec_agreement": divided_in(ns, i + neither, n),
        "ec_corr": divided_in(ns, cross, spread),
        "pa": divided_in(ns, agree, n),
        "pa_kappa": divided_in(ns, n * agree - chance, n * n - chance),
        "cramers_v": ns.when(fewer_classes < 2)
        .then(ns.lit(None, dtype=ns.Float64))
        .otherwise((chi2_over_n / (fewer_classes - 1).cast(ns.Float64)).sqrt()),
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
    weight: str | None,
    ci: float | None,
    n_boot: int,
    seed: int,
) -> Any:
    """One metric (or all, for ``name="summary"``): the pair values or their summary."""
    names = METRICS if name == "summary" else (name,)
    estimator = Estimator.requested(UNITS, ci, n_boot, seed)
    headlines = names if pairwise or name != "summary" else ("mean",)
    runs = prepare(
        frame, name, run=run, sample=sample, target=target, prediction=prediction, by=by,
        weight=weight, estimator=estimator, outputs=estimator.outputs(*headlines),
    )  # fmt: skip
    coding = _Coding.of(runs) if "cramers_v" in names else None
    if coding is not None:
        runs = replace(runs, checks=[*runs.checks, coding.fits(name)])

    def pair_values_of(runs: Runs) -> nw.LazyFrame[Any]:
        keys = [*runs.estimates, RUN_A, RUN_B]

        def columns(ns: Any) -> list[Any]:
            values = _values(ns, empty_union)
            return [*map(ns.col, keys), *(values[m].alias(m) for m in names)]

        return native_step(_pair_counts(runs, coding), "select", columns)

    if pairwise:
        return runs.finish(pair_values(runs, pair_values_of(runs), names), ["run_a", "run_b"])
    result = summaries(runs, pair_values_of, names, long=name == "summary")
    if name == "summary":
        return runs.finish(result, ["metric"], listed={"metric": names})
    return runs.finish(result)


@registered(
    "repro",
    "pairs",
    unit=UNITS,
    best="1 = most reproducible (0 = disjoint errors)",
    range="[0, 1]",
    options=("empty_union",),
    worst="low",
)
@constraints(empty_union=Choice(EMPTY_UNION), pairwise=Flag(), **UNCERTAINTY)
@shared_docs(uncertainty=SAMPLE_UNCERTAINTY)
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
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
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
    weight, ci, n_boot, seed
        <<uncertainty>>

    Returns
    -------
    A frame of the input's kind, one row per partition sorted by ``by``: the ``by`` columns,
    ``ec_local`` (the mean over pairs, Float64), ``std`` (ddof 1), ``min``, ``max``, ``q05``,
    ``q95`` (linear interpolation), ``n_pairs`` and ``n_undefined`` (Int64). With
    ``pairwise=True``: the ``by`` columns, ``run_a``, ``run_b`` and ``ec_local``, one row per
    pair, sorted. With ``ci``, ``ec_local_lo`` and ``ec_local_hi`` (Float64) follow the mean
    (or each pair's value), and ``samples`` (the samples behind it; the interval is null below
    2) and ``undefined_replicates`` (replicates whose value is null, e.g. where no drawn sample
    is wrong in either run, left out of the interval) close the row.

    Notes
    -----
    Undefined when neither run makes an error (see ``empty_union``; the original error
    consistency code uses 0). Only the rows of wrong predictions are joined on the sample:
    O(k·n) plus the Σ_s C(w_s, 2) joined rows of samples that w_s runs get wrong — O(k²·n)
    only when nearly every prediction is wrong. A bootstrap replicate counts each sample a
    Poisson(1) number of times in every run at once and recomputes the pair values and
    their mean; it costs ``n_boot`` times the samples, the wrong predictions and the joined
    rows, never the right predictions (docs/uncertainty.md).

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
        by=by, empty_union=empty_union, pairwise=pairwise, weight=weight, ci=ci, n_boot=n_boot,
        seed=seed,
    )  # fmt: skip


# The frame of two runs the examples of the pair metrics and of summary start from.
_EXAMPLE_RUNS = """\
>>> import polars as pl
>>> import frameaudit as fa
>>> df = pl.DataFrame(
...     {
...         "run": [1] * 6 + [2] * 6,
...         "sample": [0, 1, 2, 3, 4, 5] * 2,
...         "target": ["a", "b", "c"] * 4,
...         "prediction": list("abcbba") + list("accabb"),
...     }
... )"""

# The shared sections of the seven pair metrics but EC_l ({metric}: the metric's name).
_PAIR_METRIC_SECTIONS = """\
Parameters as for :func:`ec_local` (whose ``empty_union`` option is its own).

Returns
-------
A frame of the input's kind, as for :func:`ec_local`: the ``by`` columns, ``{metric}`` (the
mean over pairs) and the summary statistics; with ``pairwise=True``, one row per pair; with
``ci``, the interval columns as for :func:`ec_local`."""


def _pair_sections(metric: str) -> str:
    """The "Parameters as for ..." and Returns sections of the pair metric ``metric``."""
    return _PAIR_METRIC_SECTIONS.replace("{metric}", metric)


@registered(
    "repro",
    "pairs",
    unit=UNITS,
    best="no most-reproducible value (at most the error rate)",
    range="[0, 1]",
)
@constraints(pairwise=Flag(), **UNCERTAINTY)
@shared_docs(parameters_and_returns=_pair_sections("ec_global"), example_runs=_EXAMPLE_RUNS)
def ec_global(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    by: Names | None = None,
    pairwise: bool = False,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Global error consistency EC_g: the share of all samples both runs get wrong.

    For a pair of runs, :math:`\mathrm{EC}_g = |e_a \cap e_b| / n` (Levman et al. 2023). It
    is at most the error rate of the better run; unlike EC_ℓ it is always defined, and it is 0
    for two perfect runs as for two runs with disjoint errors.

    <<parameters_and_returns>>

    Notes
    -----
    Never undefined. The mean over pairs has an O(k·n) closed form (Σ_s C(w_s, 2) / (n·C(k, 2))
    for w_s runs wrong on sample s), but the spread needs every pair; only wrong predictions
    are joined on the sample (see :func:`ec_local`).

    Examples
    --------
    <<example_runs>>
    >>> fa.repro.ec_global(df)["ec_global"].item()
    0.16666666666666666
    """
    return _compute(
        frame, "ec_global", run=run, sample=sample, target=target, prediction=prediction,
        by=by, empty_union="null", pairwise=pairwise, weight=weight, ci=ci, n_boot=n_boot,
        seed=seed,
    )  # fmt: skip


@registered(
    "repro",
    "pairs",
    unit=UNITS,
    best="1 = most reproducible (0 = errors agree by chance)",
    range="[-1, 1]",
    worst="low",
)
@constraints(pairwise=Flag(), **UNCERTAINTY)
@shared_docs(parameters_and_returns=_pair_sections("ea_kappa"), example_runs=_EXAMPLE_RUNS)
def ea_kappa(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    by: Names | None = None,
    pairwise: bool = False,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Kappa-based error agreement EA_κ: Cohen's κ of two runs' binary error vectors.

    With p_o the share of samples where both runs are right or both wrong and p_e the same share
    expected by chance from the two error rates, :math:`\kappa = (p_o - p_e) / (1 - p_e)`
    (Cohen 1960; the error consistency of Geirhos et al. 2020). 1 is most reproducible, 0 is
    chance-level agreement of the errors, negative is worse than chance.

    <<parameters_and_returns>>

    Notes
    -----
    Null when p_e = 1: both runs are always right, or both always wrong. Computed exactly from
    the 2×2 table [[I, n_a − I], [n_b − I, n − U]] as 2(ad − bc) / ((a+b)(b+d) + (a+c)(c+d)).
    Only wrong predictions are joined on the sample (see :func:`ec_local`).

    Examples
    --------
    <<example_runs>>
    >>> fa.repro.ea_kappa(df)["ea_kappa"].item()
    0.25
    """
    return _compute(
        frame, "ea_kappa", run=run, sample=sample, target=target, prediction=prediction,
        by=by, empty_union="null", pairwise=pairwise, weight=weight, ci=ci, n_boot=n_boot,
        seed=seed,
    )  # fmt: skip


@registered("repro", "pairs", unit=UNITS, best="1 = most reproducible", range="[0, 1]", worst="low")
@constraints(pairwise=Flag(), **UNCERTAINTY)
@shared_docs(parameters_and_returns=_pair_sections("ec_agreement"), example_runs=_EXAMPLE_RUNS)
def ec_agreement(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    by: Names | None = None,
    pairwise: bool = False,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Error agreement: the share of samples where both runs are right or both wrong.

    :math:`\operatorname{mean}(e_a = e_b) = (|e_a \cap e_b| + n - |e_a \cup e_b|) / n`, the
    observed agreement p_o of :func:`ea_kappa` without the chance correction. 1 is most
    reproducible.

    <<parameters_and_returns>>

    Notes
    -----
    Never undefined. The mean over pairs has an O(k·n) closed form from the per-sample error
    counts; the spread needs every pair.

    Examples
    --------
    <<example_runs>>
    >>> fa.repro.ec_agreement(df)["ec_agreement"].item()
    0.6666666666666666
    """
    return _compute(
        frame, "ec_agreement", run=run, sample=sample, target=target, prediction=prediction,
        by=by, empty_union="null", pairwise=pairwise, weight=weight, ci=ci, n_boot=n_boot,
        seed=seed,
    )  # fmt: skip


@registered(
    "repro",
    "pairs",
    unit=UNITS,
    best="1 = most reproducible (0 = uncorrelated errors)",
    range="[-1, 1]",
    worst="low",
)
@constraints(pairwise=Flag(), **UNCERTAINTY)
@shared_docs(parameters_and_returns=_pair_sections("ec_corr"), example_runs=_EXAMPLE_RUNS)
def ec_corr(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    by: Names | None = None,
    pairwise: bool = False,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Error correlation: Pearson's φ between two runs' binary error vectors.

    :math:`\varphi = (ad - bc) / \sqrt{n_a (n - n_a)\, n_b (n - n_b)}` for the 2×2 table of
    (e_a, e_b), the Pearson correlation of the two 0/1 vectors. 1 is most reproducible.

    <<parameters_and_returns>>

    Notes
    -----
    Null when either error vector is constant (a run that is always right, or always wrong):
    its variance is 0.
    Only wrong predictions are joined on the sample (see :func:`ec_local`).

    Examples
    --------
    <<example_runs>>
    >>> fa.repro.ec_corr(df)["ec_corr"].item()
    0.25
    """
    return _compute(
        frame, "ec_corr", run=run, sample=sample, target=target, prediction=prediction,
        by=by, empty_union="null", pairwise=pairwise, weight=weight, ci=ci, n_boot=n_boot,
        seed=seed,
    )  # fmt: skip


@registered("repro", "pairs", unit=UNITS, best="1 = most reproducible", range="[0, 1]", worst="low")
@constraints(pairwise=Flag(), **UNCERTAINTY)
@shared_docs(parameters_and_returns=_pair_sections("pa"), example_runs=_EXAMPLE_RUNS)
def pa(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    by: Names | None = None,
    pairwise: bool = False,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Percent agreement: the share of samples on which two runs predict the same class.

    :math:`A / n` with :math:`A = \#\{s : \hat y_a(s) = \hat y_b(s)\}`. It ignores the target.
    1 is most reproducible.

    <<parameters_and_returns>>

    Notes
    -----
    Never undefined. Two runs that are both wrong may still agree (the same wrong class):
    A = n − |e_a ∪ e_b| + W, with W counted on the joined wrong predictions.

    Examples
    --------
    <<example_runs>>
    >>> fa.repro.pa(df)["pa"].item()
    0.5
    """
    return _compute(
        frame, "pa", run=run, sample=sample, target=target, prediction=prediction,
        by=by, empty_union="null", pairwise=pairwise, weight=weight, ci=ci, n_boot=n_boot,
        seed=seed,
    )  # fmt: skip


@registered(
    "repro",
    "pairs",
    unit=UNITS,
    best="1 = most reproducible (0 = predictions agree by chance)",
    range="[-1, 1]",
    worst="low",
)
@constraints(pairwise=Flag(), **UNCERTAINTY)
@shared_docs(parameters_and_returns=_pair_sections("pa_kappa"), example_runs=_EXAMPLE_RUNS)
def pa_kappa(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    by: Names | None = None,
    pairwise: bool = False,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Prediction agreement κ: Cohen's κ of two runs' predicted classes.

    :math:`\kappa = (p_o - p_e) / (1 - p_e)` with p_o = A/n (:func:`pa`) and
    :math:`p_e = \sum_c m_a(c)\, m_b(c) / n^2` from each run's class counts m (Cohen 1960;
    scikit-learn's ``cohen_kappa_score``). 1 is most reproducible, 0 is chance-level.

    <<parameters_and_returns>>

    Notes
    -----
    Null when p_e = 1: both runs predict one and the same class everywhere. The chance term
    joins the runs' class counts (k²·c rows for c classes), not the samples.

    Examples
    --------
    <<example_runs>>
    >>> fa.repro.pa_kappa(df)["pa_kappa"].item()
    0.25
    """
    return _compute(
        frame, "pa_kappa", run=run, sample=sample, target=target, prediction=prediction,
        by=by, empty_union="null", pairwise=pairwise, weight=weight, ci=ci, n_boot=n_boot,
        seed=seed,
    )  # fmt: skip


@registered(
    "repro",
    "pairs",
    unit=UNITS,
    best="1 = most reproducible (association, not agreement)",
    range="[0, 1]",
    worst="low",
)
@constraints(pairwise=Flag(), **UNCERTAINTY)
@shared_docs(parameters_and_returns=_pair_sections("cramers_v"), example_runs=_EXAMPLE_RUNS)
def cramers_v(
    frame: Any,
    *,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    by: Names | None = None,
    pairwise: bool = False,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Cramér's V of the table of two runs' predicted classes.

    :math:`V = \sqrt{\chi^2 / (n \,(\min(r, c) - 1))}` for the r × c contingency table of
    (ŷ_a, ŷ_b) over the classes each run predicts, χ² without Yates' correction (Cramér 1946;
    scipy's ``contingency.association(..., method="cramer", correction=False)``). It measures
    association, not agreement: a run that relabels the other's classes consistently has V = 1.
    1 is most reproducible.

    <<parameters_and_returns>>

    Notes
    -----
    Null when either run predicts a single class. χ² = n(Σ O²/(m_a m_b) − 1) over the
    non-empty cells, which are assembled from the per-run confusion matrices and the joined
    wrong predictions, never from a join of all samples.

    Examples
    --------
    <<example_runs>>
    >>> fa.repro.cramers_v(df)["cramers_v"].item()
    0.5
    """
    return _compute(
        frame, "cramers_v", run=run, sample=sample, target=target, prediction=prediction,
        by=by, empty_union="null", pairwise=pairwise, weight=weight, ci=ci, n_boot=n_boot,
        seed=seed,
    )  # fmt: skip


@registered("repro", "table", unit=UNITS, options=("empty_union",))
@constraints(empty_union=Choice(EMPTY_UNION), pairwise=Flag(), **UNCERTAINTY)
@shared_docs(example_runs=_EXAMPLE_RUNS)
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
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
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
    ``by`` columns, ``run_a``, ``run_b`` and one Float64 column per metric. With ``ci``:
    ``mean_lo`` and ``mean_hi`` follow ``mean``, and ``samples`` and ``undefined_replicates``
    close each row; with ``pairwise=True``, each metric's column is followed by its ``_lo``
    and ``_hi``, and ``samples`` and one ``<metric>_undefined_replicates`` per metric close
    the row.

    Notes
    -----
    The pair counts are shared: one grouping of all rows into per-run confusion matrices, one
    join of the wrong predictions on the sample, small joins of per-run tables. Undefined pair
    values are left out of the statistics and counted in ``n_undefined``.

    Examples
    --------
    <<example_runs>>
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
        by=by, empty_union=empty_union, pairwise=pairwise, weight=weight, ci=ci, n_boot=n_boot,
        seed=seed,
    )  # fmt: skip


#: The pairwise metrics of classification runs, in the order :func:`summary` computes them.
METRICS = tuple(m.name for m in metrics("repro", "pairs") if m.function.__module__ == __name__)
