"""Order cohesion of feature-importance rankings: position parity and rank alignment.

The metrics of holisticai's explainability module (source text: the "Order Cohesion Metrics"
seed). Input is tidy: one row per (group, feature) with the feature's importance in that group
(for example, permutation importance computed on each class or quantile of the output). The
overall ranking R is either the rows whose group equals ``overall=``, or a separate frame (or
dict) of feature importances. Each group's ranking C_g is compared with R.

With C_{g,i} the feature at position i of group g's ranking, R_i that of the overall ranking,
n the number of features (or ``k``) and G the groups:

=====================  ===========================================================================
metric                 definition
=====================  ===========================================================================
position_parity        (1/G) Σ_g (1/n) Σ_i (1/i) Σ_{j≤i} [C_{g,j} = R_j]
rank_alignment         (1/G) Σ_g (1/n) Σ_{j=1..n} |top_j(C_g) ∩ top_j(R)| / j
  ``alpha_jaccard``    (1/G) Σ_g |A_g ∩ B| / |A_g ∪ B|, A_g and B the smallest top sets covering
                       ``alpha`` of the total |importance| (holisticai 1.0.14's rank_alignment)
=====================  ===========================================================================

Order is descending absolute importance, ties broken by ascending feature name, so every
ranking is deterministic. The plan is one ordered window that ranks every ranking, one join on
(partition, feature) that gives each of a group's features its overall position, and one
aggregation per group that computes the metric and, from the same rows, the counts proving that
every group ranks the overall features (only a failed count runs the queries that name an
offending feature). Sums over positions are turned into sums over features with the harmonic
tail T(q) = Σ_{i=q}^{n} 1/i, computed once on the overall ranking, so no second window has to
put the paired rows back in order: position parity equals (1/G) Σ_g (1/n) Σ_{j: C_{g,j} = R_j}
T(j), and rank alignment (1/G) Σ_g (1/n) Σ_f T(max(p_C(f), p_R(f))) over the features f with
their two positions (tests/reference/explain.py computes both plainly, by positions and sets).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import narwhals.stable.v2 as nw

from frameaudit import _validate as validate
from frameaudit._engine import (
    Source,
    cached,
    exact_means,
    exact_sums,
    from_engine,
    is_frame,
    native_step,
    schema_names,
)
from frameaudit._expr import aggregate, distinct, null_float, over
from frameaudit._params import Choice, Flag, Integer, Optional, Real, constraints
from frameaudit._registry import registered
from frameaudit._roles import Names, Role, bind
from frameaudit.exceptions import InvalidParameterError

__all__ = ["Method", "position_parity", "rank_alignment"]

Method = Literal["topk", "alpha_jaccard"]
Overall = str | int | float | bool | Mapping[Any, float] | Any

_POS = "__fa_pos"  # position in the group's ranking
_RPOS = "__fa_rpos"  # position of the same feature in the overall ranking
_RSIZE = "__fa_rsize"  # number of features in the overall ranking
_TAIL = "__fa_tail"  # harmonic tail at the overall position: Σ 1/i for rpos <= i <= n (or k)
_PTAIL = "__fa_ptail"  # the same at the group position
_KEY = "__fa_key"
_ONE = "__fa_one"
_VAL = "__fa_val"
_MATCH = "__fa_match"  # the position agrees with the overall ranking (within the top k)
_NULL = "__fa_null"
_ROWS, _UNKNOWN, _DISTINCT = "__fa_rows", "__fa_unknown", "__fa_distinct"
# alpha_jaccard: running |importance| in ranking order and its last value (the total); whether
# the running sum is still below alpha x the total (true on a prefix of the ranking); the size
# of the overall top set and each feature's membership; whether a ranking has no top set (all
# importances 0); the first feature after the group's prefix, encoded with its membership of B
_RUN, _TOTAL, _BELOW = "__fa_run", "__fa_total", "__fa_below"
_BSIZE, _BOTH, _NEXT = "__fa_bsize", "__fa_both", "__fa_next"
_NO_IMPORTANCE_GROUP, _NO_IMPORTANCE_OVERALL = "__fa_za", "__fa_zb"


@dataclass(frozen=True)
class _NoResamplingUnit:
    """The constraint of ``ci=`` on order cohesion: only None fits (there is no unit to resample).

    Declared like every option (:mod:`frameaudit._params`), so that ``ci=`` is refused before
    any data is read, with a message that says why rather than a range.
    """

    def check(self, parameter: str, value: Any) -> None:
        """Raise unless ``value`` is None."""
        if value is not None:
            msg = (
                f"{parameter}={value!r}: order cohesion has no resampling unit, so it has no "
                "bootstrap interval: its rows are one importance per (group, feature), "
                "neither of them independent draws. To see how the importances vary, compute "
                "them on bootstrap samples of the model's data and call the metric on each"
            )
            raise InvalidParameterError(msg)

    def invalid(self) -> list[Any]:
        """Any level at all."""
        return [0.95, 0.5]


_NO_INTERVAL = _NoResamplingUnit()


@dataclass
class _Pairs:
    """One row per (partition, group, feature), with what checks that it is valid.

    Each row of ``pairs`` holds the feature's position in the group's ranking and in the
    overall ranking and the size of the overall ranking (plus the harmonic tail at the overall
    position, or the alpha top-set columns). ``groups`` are the ranked groups and
    ``reference`` the overall ranking, one row per (partition, feature). ``checks`` are the
    checks of the input; the feature sets are checked on the per-group aggregation
    (:func:`_per_group`).
    """

    source: Source
    groups: nw.LazyFrame[Any]
    reference: nw.LazyFrame[Any]
    pairs: nw.LazyFrame[Any]
    by: list[str]
    group: str
    feature: str
    k: int | None
    checks: list[validate.Check]
    # the check naming the partitions without overall rows (None: the overall ranking is a
    # separate frame)
    missing_overall: validate.Check | None

    @property
    def window(self) -> list[str]:
        return [*self.by, self.group]


def _ranked(
    frame: nw.LazyFrame[Any],
    window: list[str],
    feature: str,
    importance: str,
    alpha: float | None,
) -> nw.LazyFrame[Any]:
    """Rank every ranking of ``frame`` (one per ``window`` value) in one ordered window.

    Adds the 1-based position (descending |importance|, then ascending feature); with
    ``alpha``, also the running |importance|, the ranking's total and whether the running sum
    is below alpha x the total.
    """
    order = [_KEY, feature]

    def size(ns: Any) -> Any:
        return ns.col(importance).cast(ns.Float64).abs()

    def keyed(ns: Any) -> list[Any]:
        return [(-size(ns)).alias(_KEY), ns.lit(1, dtype=ns.Int64).alias(_ONE)]

    def ordered(ns: Any) -> list[Any]:
        position = ns.col(_ONE).cum_sum().over(*window, order_by=order).cast(ns.Int64)
        if alpha is None:
            return [position.alias(_POS)]
        # Running sums of |importance| in ranking order (the same sort as the position); the
        # total is the last running sum rather than a sum(): the same additions in the same
        # order (a streamed sum may add in any order), so an exact cut (alpha = 1 followed by
        # zeros) stays exact. Raw sums, not shares: division by a broadcast total is not
        # correctly rounded in every engine.
        running = size(ns).cum_sum().over(*window, order_by=order)
        return [position.alias(_POS), running.alias(_RUN)]

    ranked = native_step(native_step(frame, "with_columns", keyed), "with_columns", ordered)
    if alpha is None:
        return ranked

    def flagged(ns: Any) -> list[Any]:
        running, total = ns.col(_RUN), ns.col(_TOTAL)
        return [
            (running < alpha * total).cast(ns.Int64).alias(_BELOW),
            (total == 0).cast(ns.Int64).alias(_NO_IMPORTANCE_GROUP),
        ]

    total = native_step(
        ranked, "with_columns", lambda ns: [over(ns.col(_RUN).max(), window).alias(_TOTAL)]
    )
    return native_step(total, "with_columns", flagged)


def _reference(
    ranked: nw.LazyFrame[Any], by: list[str], feature: str, k: int | None, alpha: float | None
) -> nw.LazyFrame[Any]:
    """The overall ranking: one row per (partition, feature) with its position and size.

    For the position metrics also the harmonic tail T(q) = Σ_{i=q}^{n} 1/i at the position q
    (the sum stops at k with ``k``), summed from the end in position order so that T is exactly
    non-increasing; with ``alpha`` the size of the overall top set and whether there is none.
    """

    def columns(ns: Any) -> list[Any]:
        position = ns.col(_POS)
        shown = [*by, feature, position.alias(_RPOS), over(position.max(), by).alias(_RSIZE)]
        if alpha is not None:
            # The overall top set is the prefix of features below the cut and the one after.
            return [
                *shown,
                (over(ns.col(_BELOW).sum(), by) + 1).alias(_BSIZE),
                (ns.col(_TOTAL) == 0).cast(ns.Int64).alias(_NO_IMPORTANCE_OVERALL),
            ]
        share = 1.0 / position.cast(ns.Float64)
        weight = share if k is None else ns.when(position <= k).then(share).otherwise(0.0)
        return [*shown, weight.alias(_TAIL)]

    reference = native_step(ranked, "select", columns)
    if alpha is not None:
        return reference
    return native_step(
        reference,
        "with_columns",
        lambda ns: [ns.col(_TAIL).cum_sum(reverse=True).over(*by, order_by=_RPOS)],
    )


def _rankings(
    frame: Any,
    metric: str,
    *,
    group: str,
    feature: str,
    importance: str,
    overall: Overall | None,
    k: int | None,
    by: Names | None,
    alpha: float | None = None,
) -> _Pairs:
    """Validate the input, rank every group and the overall ranking, and pair them by feature."""
    if overall is None:
        msg = (
            f"{metric}: overall=None; give the overall ranking, either as a value of the "
            f"{group!r} column whose rows hold the overall importances, or as a frame (or dict) "
            "of feature importances"
        )
        raise InvalidParameterError(msg)
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        msg = f"k={k!r}: expected a positive integer (compare the top-k prefix) or None"
        raise InvalidParameterError(msg)
    bound = bind(
        frame,
        [
            Role("group", group),
            Role("feature", feature),
            Role("importance", importance, dtype="numeric"),
            Role("by", by, many=True, optional=True),
        ],
        outputs=[metric],
    )
    source = bound.source
    by_names = bound.columns["by"]
    columns = {group: "group", feature: "feature", importance: "importance"}
    columns.update(dict.fromkeys(by_names, "by"))
    source.require_ordered_windows(metric)
    lf = source.frame
    window = [*by_names, group]
    checks = [
        validate.non_empty(lf, metric),
        validate.no_nulls(lf, columns),
        validate.finite(lf, {importance: f"importance={importance!r}"}),
    ]
    missing_overall = None
    if not isinstance(overall, Mapping) and not is_frame(overall):
        validate.group_value("overall", overall, "group", group, lf.collect_schema()[group])
        # The same window ranks the groups and the overall ranking (each is its own partition,
        # so Polars runs it below the two filters).
        ranked = _ranked(lf, window, feature, importance, alpha)
        groups = native_step(ranked, "filter", lambda ns: [ns.col(group) != overall])
        overall_rows = native_step(ranked, "filter", lambda ns: [ns.col(group) == overall])
        reference = _reference(overall_rows, by_names, feature, k, alpha)
        missing_overall = _overall_missing(lf, reference, by_names, group, overall)
    else:
        overall_frame, overall_checks = _overall_frame(
            overall,
            source,
            lf,
            feature=feature,
            importance=importance,
            by=by_names,
        )
        checks += overall_checks
        groups = _ranked(lf, window, feature, importance, alpha)
        ranked_overall = _ranked(overall_frame, by_names, feature, importance, alpha)
        reference = _reference(ranked_overall, by_names, feature, k, alpha)
    reference = cached(reference)
    flags = [_BELOW, _NO_IMPORTANCE_GROUP] if alpha is not None else []
    groups = groups.select(*window, feature, _POS, *flags)
    pairs = groups.join(reference, on=[*by_names, feature], how="left")
    return _Pairs(
        source, groups, reference, pairs, by_names, group, feature, k, checks, missing_overall
    )


def _overall_missing(
    lf: nw.LazyFrame[Any], reference: nw.LazyFrame[Any], by: list[str], group: str, overall: Any
) -> validate.Check:
    """The partitions without rows of the overall group: its message, null when there are none.

    Diagnostics only (built when they are needed): the proof of :func:`_same_features` counts
    such a partition's features as not in the overall ranking.
    """
    head = f"overall={overall!r}: no rows with {group} == {overall!r}"
    tail = "; the overall ranking is missing"

    def diagnose() -> validate.Diagnosis:
        if not by:
            rows = reference.select(nw.len().cast(nw.Int64).alias("n"))
            return rows, nw.when(nw.col("n") == 0).then(nw.lit(head + tail))
        without = distinct(lf.select(by)).join(distinct(reference.select(by)), on=by, how="anti")
        return validate.offending(without, by, f"{head} in ", " partition(s)", tail).diagnosis()

    return validate.Check(None, None, later=diagnose)


def _overall_frame(
    overall: Any,
    source: Source,
    lf: nw.LazyFrame[Any],
    *,
    feature: str,
    importance: str,
    by: list[str],
) -> tuple[nw.LazyFrame[Any], list[validate.Check]]:
    """Bring the overall ranking given as a dict or a frame into the data's engine."""
    feature_dtype = lf.collect_schema()[feature]
    if isinstance(overall, Mapping):
        if not overall:
            raise InvalidParameterError("overall={}: the overall ranking is empty")
        ranked = source.frame_from_columns(
            {feature: list(overall), importance: list(overall.values())},
            parameter="overall",
        )
        shared: list[str] = []
    else:
        shared = [c for c in by if c in schema_names(overall)]
        columns = {feature: "feature", importance: "importance", **dict.fromkeys(shared, "by")}
        ranked = source.align(overall, columns, frame_name="overall")
        validate.require_dtype(ranked, importance, "importance", "numeric")
    ranked = ranked.with_columns(nw.col(feature).cast(feature_dtype))
    keys = [*shared, feature]
    checks = validate.given(
        [
            validate.non_empty(ranked, "overall"),
            validate.no_nulls(
                ranked, {feature: "overall feature", importance: "overall importance"}
            ),
            validate.finite(ranked, {importance: f"importance={importance!r} (overall)"}),
            validate.unique_within(
                ranked, keys, "overall=", "a feature may appear once in the overall ranking"
            ),
        ]
    )
    if shared != by:
        # The overall ranking is shared by the partitions that differ only in other columns.
        partitions = distinct(lf.select(by))
        ranked = ranked.select(*shared, feature, importance)
        ranked = (
            partitions.join(ranked, on=shared, how="inner")
            if shared
            else partitions.join(ranked, how="cross")
        )
    return ranked, checks


def _same_features(pairs: _Pairs, per_group: nw.LazyFrame[Any]) -> list[validate.Check]:
    """Check that each group ranks each overall feature exactly once, and that k fits.

    Counted on the per-group aggregation the metric needs: a group ranks the overall features
    exactly once each when all its features have an overall position, those positions are
    distinct, and there are as many as overall features. When the overall ranking is rows of
    the frame, its own features are counted too (distinct, per partition). These counts are
    the proof; the diagnostics, which find the problem and an example, are built only when
    they are needed (:func:`~frameaudit._validate.proven`).
    """
    by, feature, reference = pairs.by, pairs.feature, pairs.reference

    def counted(ns: Any) -> list[Any]:
        rows, rsize = ns.col(_ROWS), ns.col(_RSIZE)
        wrong = (ns.col(_UNKNOWN) > 0) | (ns.col(_DISTINCT) != rows) | (rows != rsize)
        return [wrong.fill_null(value=True).cast(ns.Int64).sum().alias("wrong")]

    proof = native_step(per_group, "select", counted)
    checked = ["wrong"]
    if pairs.missing_overall is not None:
        # The overall rows are a ranking of the frame too: no feature twice in a partition.
        counts = aggregate(
            reference,
            by,
            nw.len().cast(nw.Int64).alias(_ROWS),
            nw.col(feature).n_unique().cast(nw.Int64).alias(_DISTINCT),
        )
        repeated = (nw.col(_DISTINCT) != nw.col(_ROWS)).cast(nw.Int64).sum().alias("repeated")
        proof = proof.join(counts.select(repeated), how="cross")
        checked.append("repeated")

    def holds(row: Mapping[str, Any]) -> bool:
        return all(row[name] == 0 for name in checked)

    checks = [validate.proven(proof, holds, lambda: _feature_problems(pairs))]
    if pairs.k is not None:
        checks.append(_k_within(reference, pairs.k))
    return checks


def _feature_problems(pairs: _Pairs) -> validate.Check:
    """The diagnostics of :func:`_same_features`, in the order they are reported.

    A feature twice in one ranking, a feature not in the overall ranking (all of a
    partition's when it has no overall rows), an overall feature missing from a group.
    """
    by, group, feature, groups = pairs.by, pairs.group, pairs.feature, pairs.groups
    window = pairs.window
    head = f"group={group!r}: every group must rank the same features as the overall ranking; "

    def problem(found: nw.LazyFrame[Any], what: str) -> validate.Check:
        return validate.offending(
            found, [*window, feature], head, f" (group, feature) pair(s) {what}"
        )

    repeats = validate.distinct_within(pairs.source.frame, window, {feature: "feature"}, "group")
    unmatched = pairs.pairs.filter(nw.col(_RPOS).is_null())
    unknown = problem(unmatched, "are not in the overall ranking")
    if pairs.missing_overall is not None:
        unknown = validate.first_failed([_when_any(unmatched, pairs.missing_overall), unknown])
    features = pairs.reference.select(*by, feature)
    ranked = distinct(groups.select(window))
    expected = ranked.join(features, on=by) if by else ranked.join(features, how="cross")
    absent = expected.join(groups.select(*window, feature), on=[*window, feature], how="anti")
    missing = problem(absent, "of the overall ranking are missing from a group")
    return validate.first_failed([repeats, unknown, missing])


def _when_any(rows: nw.LazyFrame[Any], check: validate.Check) -> validate.Check:
    """``check``, reported only when ``rows`` is not empty."""

    def diagnose() -> validate.Diagnosis:
        frame, message = check.diagnosis()
        present = rows.select(nw.len().cast(nw.Int64).alias("__fa_rows"))
        shown = nw.when(nw.col("__fa_rows") > 0).then(message)
        return frame.join(present, how="cross"), shown

    return validate.Check(None, None, later=diagnose)


def _k_within(reference: nw.LazyFrame[Any], k: int) -> validate.Check:
    """Check that k is at most the number of features (one row per partition is tested)."""

    def message(count: nw.Expr, example: str) -> nw.Expr:
        head = f"k={k}: larger than the number of features in "
        shown = validate.keyed("features", example)
        tail = "; expected k <= the number of features"
        return validate.message(head, count, " partition(s)", shown, tail=tail)

    def short(ns: Any) -> Any:
        return (ns.col(_RPOS) == 1) & (ns.col(_RSIZE) < k)

    return validate.Check.of_rules(reference, validate.Rule(short, message, example=nw.col(_RSIZE)))


def _per_group(
    pairs: _Pairs, values: nw.LazyFrame[Any], sums: validate.Written, exact: Sequence[str] = ()
) -> tuple[nw.LazyFrame[Any], list[validate.Check]]:
    """Aggregate the pairs per group: ``sums`` plus the counts that check the feature sets.

    ``sums`` writes the aggregations for either namespace (:func:`exact_sums`' ``also``); the
    float columns ``exact`` are summed too, exactly.
    """

    def aggregations(ns: Any) -> list[Any]:
        rpos = ns.col(_RPOS)
        return [
            *sums(ns),
            ns.len().cast(ns.Int64).alias(_ROWS),
            rpos.null_count().cast(ns.Int64).alias(_UNKNOWN),
            rpos.n_unique().cast(ns.Int64).alias(_DISTINCT),
            ns.col(_RSIZE).max(),
        ]

    per_group = exact_sums(values, pairs.window, exact, also=aggregations, floats=exact)
    per_group = cached(per_group)
    return per_group, [*pairs.checks, *_same_features(pairs, per_group)]


def _finish(
    pairs: _Pairs,
    per_group: nw.LazyFrame[Any],
    checks: list[validate.Check],
    metric: str,
    grouped: bool,
    *,
    nullable: bool,
) -> Any:
    """Per-group values, or their mean over groups (null if any group's value is null)."""
    if grouped:
        result = per_group.select(*pairs.by, pairs.group, metric)
        return from_engine(result, pairs.source, sort_by=[*pairs.by, pairs.group], checks=checks)
    if not nullable:
        result = exact_means(per_group, pairs.by, [metric])
        return from_engine(result, pairs.source, sort_by=pairs.by, checks=checks)
    flagged = per_group.with_columns(nw.col(metric).is_null().cast(nw.Int64).alias(_NULL))
    nulls = exact_means(flagged, pairs.by, [metric], also=lambda ns: [ns.col(_NULL).sum()])
    result = nulls.select(
        *pairs.by,
        nw.when(nw.col(_NULL) > 0).then(null_float()).otherwise(nw.col(metric)).alias(metric),
    )
    return from_engine(result, pairs.source, sort_by=pairs.by, checks=checks)


@registered("explain", "single", best="1 = most cohesive (order as overall)", range="[0, 1]")
@constraints(k=Optional(Integer(1)), per_group=Flag(), ci=_NO_INTERVAL)
def position_parity(
    frame: Any,
    *,
    group: str = "group",
    feature: str = "feature",
    importance: str = "importance",
    overall: Overall | None = None,
    k: int | None = None,
    by: Names | None = None,
    per_group: bool = False,
    ci: float | None = None,  # noqa: ARG001 (any value but None is refused by its constraint)
) -> Any:
    r"""Position parity: how far each group's feature order matches the overall order.

    With :math:`C_{g,i}` the feature at position i of group g's ranking and :math:`R_i` that of
    the overall ranking, :math:`M_g(i) = [C_{g,i} = R_i]`,
    :math:`M_{g,\mathrm{cum}}(i) = \frac{1}{i}\sum_{j \le i} M_g(j)`, and

    .. math:: PP = \frac{1}{|G|} \sum_{g \in G} \frac{1}{n} \sum_{i=1}^{n} M_{g,\mathrm{cum}}(i)

    (holisticai's Position Parity; n = the number of features, or ``k`` to compare only the
    top-k prefix). 1 (most cohesive) when every group orders the features as the overall
    ranking does; 0 when no group agrees at any position.

    Parameters
    ----------
    frame
        Polars DataFrame/LazyFrame, pandas DataFrame, pyarrow Table, DuckDB relation, PySpark
        DataFrame: one row per (group, feature).
    group
        Column naming the group (class, output quantile, ...) of each importance.
    feature
        Column with the feature name.
    importance
        Numeric column with the feature's importance in that group; the order is descending
        \|importance\|, ties broken by ascending feature name.
    overall
        The overall ranking: a value of the ``group`` column (its rows are the overall
        importances and the other groups are compared with them), or a frame with columns
        ``feature`` and ``importance`` (plus the ``by`` columns if it differs per partition),
        or a dict ``{feature: importance}``.
    k
        Compare only the top-k prefix (``1 <= k <=`` the number of features).
    by
        Column(s): one independent result per partition.
    per_group
        Return one row per (partition, group) instead of the mean over groups.
    ci
        None. Order cohesion has no resampling unit (its rows are one importance per group and
        feature, not independent draws), so any level is an ``InvalidParameterError`` saying
        so; for the same reason it takes no ``weight=`` (see the Uncertainty page).

    Returns
    -------
    A frame of the input's kind: the ``by`` columns and ``position_parity`` (Float64), one row
    per partition sorted by ``by``; with ``per_group=True`` also the group column.

    Raises
    ------
    FrameAuditError
        No overall ranking, a group whose feature set differs from the overall one (the error
        names a feature), a feature twice in one group, null or non-finite importances, k < 1
        or larger than the number of features, any ``ci``.

    Notes
    -----
    One ordered window ranks every group (O(n log n) per group for the sort) and one join on
    (partition, feature) pairs each feature's two positions. Position i adds
    :math:`M_{g,\mathrm{cum}}(i)/n`, so a position j where the orders agree adds
    :math:`T(j)/n` in all, with the harmonic tail :math:`T(j) = \sum_{i=j}^{n} 1/i` (computed
    once, on the overall ranking): one aggregation per group sums it over the agreeing
    features, with no second window. Identical orders give exactly 1. Defined for every
    group; the mean is null only when there is no group to average (the frame holds only the
    overall ranking). holisticai truncates to the shorter list when feature sets differ;
    frameaudit raises instead (see the Differences page).

    Examples
    --------
    holisticai's documented example (two groups, three features; holisticai gives 0.638889):

    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame({
    ...     "group": ["g1"] * 3 + ["g2"] * 3 + ["all"] * 3,
    ...     "feature": ["f1", "f2", "f3"] * 3,
    ...     "importance": [0.40, 0.35, 0.25, 0.20, 0.25, 0.55, 0.50, 0.40, 0.10],
    ... })
    >>> fa.explain.position_parity(df, overall="all", per_group=True)
    shape: (2, 2)
    ┌───────┬─────────────────┐
    │ group ┆ position_parity │
    │ ---   ┆ ---             │
    │ str   ┆ f64             │
    ╞═══════╪═════════════════╡
    │ g1    ┆ 1.0             │
    │ g2    ┆ 0.277778        │
    └───────┴─────────────────┘
    >>> round(fa.explain.position_parity(df, overall="all").item(), 6)
    0.638889

    """
    pairs = _rankings(
        frame,
        "position_parity",
        group=group,
        feature=feature,
        importance=importance,
        overall=overall,
        k=k,
        by=by,
    )

    # The feature at position i of the group is R_i exactly when its overall position is i.
    def columns(ns: Any) -> list[Any]:
        agrees = ns.col(_POS) == ns.col(_RPOS)
        value = ns.when(agrees).then(ns.col(_TAIL)).otherwise(0.0)
        return [value.alias(_VAL), _agreeing(ns, agrees, k)]

    values = native_step(pairs.pairs, "with_columns", columns)
    sums, checks = _per_group(pairs, values, _matches, exact=[_VAL])
    result = _positional(sums, k, "position_parity")
    return _finish(pairs, result, checks, "position_parity", per_group, nullable=False)


@registered(
    "explain", "single", best="1 = most cohesive (top-k or top set as overall)", range="[0, 1]"
)
@constraints(
    k=Optional(Integer(1)),
    per_group=Flag(),
    method=Choice(("topk", "alpha_jaccard")),
    alpha=Real(0.0, 1.0, low_open=True),
    ci=_NO_INTERVAL,
)
def rank_alignment(
    frame: Any,
    *,
    group: str = "group",
    feature: str = "feature",
    importance: str = "importance",
    overall: Overall | None = None,
    k: int | None = None,
    by: Names | None = None,
    per_group: bool = False,
    method: Method = "topk",
    alpha: float = 0.8,
    ci: float | None = None,  # noqa: ARG001 (any value but None is refused by its constraint)
) -> Any:
    r"""Rank alignment: how far each group's top features overlap the overall top features.

    ``method="topk"`` (the seed's definition): with
    :math:`I_{g,j} = |\mathrm{top}_j(C_g) \cap \mathrm{top}_j(R)| / j`,

    .. math:: RA = \frac{1}{|G|} \sum_{g \in G} \frac{1}{n} \sum_{j=1}^{n} I_{g,j}

    (n = the number of features, or ``k`` for the top-k prefix). 1 when every group orders
    the features as the overall ranking does.

    ``method="alpha_jaccard"`` (what holisticai 1.0.14's ``rank_alignment`` computes): per
    group, the Jaccard index :math:`|A_g \cap B| / |A_g \cup B|` of the smallest top sets
    covering ``alpha`` of the total \|importance\| — a feature belongs to the top set when the
    \|importance\| of the features ranked before it sums to less than ``alpha`` × the total —
    averaged over groups. A ranking whose importances are all 0 has no top set: its value is null.

    Parameters
    ----------
    frame, group, feature, importance, overall, k, by, per_group, ci
        As for :func:`position_parity` (``k`` applies to ``method="topk"`` only; ``ci`` is
        refused: no resampling unit).
    method
        ``"topk"`` or ``"alpha_jaccard"``.
    alpha
        Share of the total \|importance\| the top sets cover, in (0, 1]
        (``method="alpha_jaccard"``).

    Returns
    -------
    A frame of the input's kind: the ``by`` columns and ``rank_alignment`` (Float64), one row
    per partition; with ``per_group=True`` also the group column.

    Raises
    ------
    FrameAuditError
        As for :func:`position_parity`; also an unknown ``method``, ``alpha`` outside (0, 1],
        ``k`` with ``method="alpha_jaccard"``.

    Notes
    -----
    ``topk`` in O(n log n) per group for the ranking: a feature with positions :math:`p_c` in
    C_g and :math:`p_r` in R is in both top-j sets exactly for :math:`j \ge \max(p_c, p_r)`,
    so it adds :math:`T(\max(p_c, p_r))` to the sum over j, with the harmonic tail
    :math:`T(q) = \sum_{j=q}^{n} 1/j` computed once on the overall ranking (a second join
    looks it up at the group position). ``alpha_jaccard``: the running \|importance\| comes
    from the window that ranks; a top set is the prefix of features whose running sum before
    them is below the cut (the overall one is computed once), so the per-group aggregation
    counts the intersection without a second window.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame({
    ...     "group": ["g1"] * 3 + ["g2"] * 3 + ["all"] * 3,
    ...     "feature": ["f1", "f2", "f3"] * 3,
    ...     "importance": [0.40, 0.35, 0.25, 0.20, 0.25, 0.55, 0.50, 0.40, 0.10],
    ... })
    >>> topk = fa.explain.rank_alignment(df, overall="all", per_group=True)
    >>> topk["rank_alignment"].round(6).to_list()
    [1.0, 0.5]

    holisticai's ``rank_alignment`` gives [0.666667, 0.333333] on this input:

    >>> jaccard = fa.explain.rank_alignment(
    ...     df, overall="all", method="alpha_jaccard", alpha=0.8, per_group=True
    ... )
    >>> jaccard["rank_alignment"].round(6).to_list()
    [0.666667, 0.333333]

    """
    if method == "alpha_jaccard" and k is not None:
        msg = f"k={k!r}: k applies to method='topk' only (alpha_jaccard compares coverage sets)"
        raise InvalidParameterError(msg)
    pairs = _rankings(
        frame,
        "rank_alignment",
        group=group,
        feature=feature,
        importance=importance,
        overall=overall,
        k=k,
        by=by,
        alpha=alpha if method == "alpha_jaccard" else None,
    )
    if method == "topk":
        result, checks = _topk_alignment(pairs, k)
        return _finish(pairs, result, checks, "rank_alignment", per_group, nullable=False)
    result, checks = _alpha_jaccard(pairs)
    return _finish(pairs, result, checks, "rank_alignment", per_group, nullable=True)


def _matches(ns: Any) -> list[Any]:
    """The number of agreeing positions (:func:`_agreeing`) of a group (a ``Written``)."""
    return [ns.col(_MATCH).sum()]


def _agreeing(ns: Any, agrees: Any, k: int | None) -> Any:
    """1 where the position agrees with the overall ranking within the compared prefix.

    In the expressions of ``ns`` (:func:`~frameaudit._engine.native_step`), as ``agrees``.
    """
    within = agrees if k is None else agrees & (ns.col(_POS) <= k)
    return within.cast(ns.Int64).alias(_MATCH)


def _positional(per_group: nw.LazyFrame[Any], k: int | None, metric: str) -> nw.LazyFrame[Any]:
    """Per group: the sum of ``_VAL`` divided by n (or k); exactly 1 when every position agrees.

    The sums of harmonic tails are n (or k) up to rounding when the orders are identical; the
    count of agreeing positions says so exactly.
    """

    def columns(ns: Any) -> list[Any]:
        size = ns.col(_ROWS) if k is None else ns.lit(k)
        value = ns.col(_VAL) / size.cast(ns.Float64)
        return [ns.when(ns.col(_MATCH) == size).then(1.0).otherwise(value).alias(metric)]

    return native_step(per_group, "with_columns", columns)


def _topk_alignment(pairs: _Pairs, k: int | None) -> tuple[nw.LazyFrame[Any], list[validate.Check]]:
    """Sum over j <= n (or k) of |top-j(C_g) ∩ top-j(R)| / j, per group (then / n or k).

    A feature at position p in C_g and q in R is in both top-j sets for j >= max(p, q), so it
    adds T(max(p, q)) = min(T(p), T(q)) (T is non-increasing; 0 beyond k): T(q) came with the
    pairing, T(p) is looked up at the group position.
    """
    tails = pairs.reference.select(
        *pairs.by, nw.col(_RPOS).alias(_POS), nw.col(_TAIL).alias(_PTAIL)
    )
    values = native_step(
        pairs.pairs.join(tails, on=[*pairs.by, _POS], how="left"),
        "with_columns",
        lambda ns: [
            ns.min_horizontal(_TAIL, _PTAIL).alias(_VAL),
            _agreeing(ns, ns.col(_POS) == ns.col(_RPOS), k),
        ],
    )
    per_group, checks = _per_group(pairs, values, _matches, exact=[_VAL])
    return _positional(per_group, k, "rank_alignment"), checks


def _alpha_jaccard(pairs: _Pairs) -> tuple[nw.LazyFrame[Any], list[validate.Check]]:
    """Jaccard index of the alpha-coverage top sets of C_g and R, per group (null if undefined).

    The group's top set A is its p features below the cut plus the next one (position p + 1);
    the overall one B is the first ``_BSIZE`` overall positions. The intersection counts the
    features below the cut that are in B, plus the next one if it is in B: the smallest
    2 x position + [not in B] over the features not below the cut is 2(p + 1) + [not in B].
    """

    def columns(ns: Any) -> list[Any]:
        pos, below = ns.col(_POS), ns.col(_BELOW)
        b = (ns.col(_RPOS) <= ns.col(_BSIZE)).cast(ns.Int64)  # in B
        return [
            (below * b).alias(_BOTH),
            ns.when(below == 0).then(2 * pos + 1 - b).alias(_NEXT),
            ns.max_horizontal(_NO_IMPORTANCE_GROUP, _NO_IMPORTANCE_OVERALL).alias(_NULL),
        ]

    def sums(ns: Any) -> list[Any]:
        return [
            ns.col(_BELOW).sum(),
            ns.col(_BOTH).sum(),
            ns.col(_NEXT).min(),
            ns.col(_BSIZE).max(),
            ns.col(_NULL).max(),
        ]

    values = native_step(pairs.pairs, "with_columns", columns)
    per_group, checks = _per_group(pairs, values, sums)

    def jaccard(ns: Any) -> list[Any]:
        below = ns.col(_BELOW)
        both = ns.col(_BOTH) + 2 * below + 3 - ns.col(_NEXT)
        union = below + 1 + ns.col(_BSIZE) - both
        value = both.cast(ns.Float64) / union.cast(ns.Float64)
        null = ns.lit(None, dtype=ns.Float64)
        return [ns.when(ns.col(_NULL) > 0).then(null).otherwise(value).alias("rank_alignment")]

    return native_step(per_group, "with_columns", jaccard), checks
