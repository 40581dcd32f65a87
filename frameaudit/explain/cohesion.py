"""Order cohesion of feature-importance rankings: position parity and rank alignment.

The metrics of holisticai's explainability module (source text: the "Order Cohesion Metrics"
seed). Input is tidy: one row per (group, feature) with the feature's importance in that group
(for example, permutation importance computed on each class or quantile of the output). The
overall ranking R is either the rows whose group equals ``overall=``, or a separate frame (or
dict) of feature importances. Each group's ranking C_g is compared with R.

Order is descending absolute importance, ties broken by ascending feature name, so every
ranking is deterministic. Positions come from one ordered window; one join on (partition,
feature) then pairs each feature's position in its group with its position in the overall
ranking, which is all both metrics need, so nothing loops over groups. The same rows, with the
sizes of both rankings, prove that every group ranks the overall features; only a failed check
runs the queries that name an offending feature.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import narwhals.stable.v2 as nw
import polars as pl

from frameaudit import _validate as v
from frameaudit._engine import (
    Source,
    _native_schema_names,
    align,
    from_engine,
    lazy_from_arrow,
    reuses_plans,
    shared,
    to_engine,
)
from frameaudit._expr import null_float
from frameaudit.exceptions import InvalidParameterError

__all__ = ["Method", "position_parity", "rank_alignment"]

Method = Literal["topk", "alpha_jaccard"]
Names = str | Sequence[str]
Overall = str | int | float | bool | Mapping[Any, float] | Any

_POS = "__fa_pos"  # position in the group's ranking
_SIZE = "__fa_size"  # number of features in the group's ranking
_RPOS = "__fa_rpos"  # position in the overall ranking
_RSIZE = "__fa_rsize"  # number of features in the overall ranking
_KEY = "__fa_key"
_ONE = "__fa_one"
_VAL = "__fa_val"
_NULL = "__fa_null"
_BEFORE = "__fa_before"  # |importance| of the features ranked before this one
_TOTAL = "__fa_total"  # |importance| of the whole ranking
# alpha_jaccard: membership of the group's (A) and the overall (B) top set, and whether the
# ranking has no top set (all importances 0)
_A, _ZA, _B, _ZB = "__fa_a", "__fa_za", "__fa_b", "__fa_zb"


@dataclass
class _Pairs:
    """One row per (partition, group, feature), with the checks that make it valid.

    Each row holds the feature's position in the group's ranking and in the overall ranking,
    and the sizes of both rankings (plus the alpha top-set flags when they were asked for).
    """

    source: Source
    pairs: nw.LazyFrame[Any]
    by: list[str]
    group: str
    checks: list[v.Check]

    @property
    def window(self) -> list[str]:
        return [*self.by, self.group]


def _reduce(frame: nw.LazyFrame[Any], by: list[str], *values: nw.Expr) -> nw.LazyFrame[Any]:
    """Aggregate per ``by`` partition (over the whole frame when there is none)."""
    return frame.group_by(by).agg(*values) if by else frame.select(*values)


def _over(value: nw.Expr, window: list[str]) -> nw.Expr:
    """An aggregate broadcast over each ranking (the whole frame when ``window`` is empty)."""
    return value.over(*window) if window else value


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool))


def _check_overall_value(lf: nw.LazyFrame[Any], group: str, overall: Any) -> None:
    """Check that the overall group value can be a value of the group column (schema only)."""
    dtype = lf.collect_schema()[group]
    textual = dtype in (nw.String, nw.Categorical, nw.Enum)
    if dtype == nw.Boolean:
        ok = isinstance(overall, bool)
    elif textual:
        ok = isinstance(overall, str)
    else:
        ok = dtype.is_numeric() and not isinstance(overall, (bool, str))
    if not ok:
        msg = (
            f"overall={overall!r}: a {type(overall).__name__} cannot be a value of the group "
            f"column {group!r} ({dtype}); give one of its values, or a frame of feature "
            "importances"
        )
        raise InvalidParameterError(msg)


def _ranked(
    frame: nw.LazyFrame[Any],
    window: list[str],
    feature: str,
    importance: str,
    alpha: float | None,
) -> nw.LazyFrame[Any]:
    """Rank every ranking of ``frame`` (one per ``window`` value).

    Adds the 1-based position (descending |importance|, then ascending feature) and the size
    of the ranking; with ``alpha``, also whether the feature is in the ranking's alpha top set
    and whether the ranking has none.
    """
    order = [_KEY, feature]
    one = nw.col(_ONE)
    size = nw.col(importance).cast(nw.Float64).abs()
    ranked = frame.with_columns((-size).alias(_KEY), nw.lit(1, dtype=nw.Int64).alias(_ONE))
    positions = [
        one.cum_sum().over(*window, order_by=order).cast(nw.Int64).alias(_POS),
        _over(one.sum(), window).cast(nw.Int64).alias(_SIZE),
    ]
    if alpha is None:
        return ranked.with_columns(*positions)
    # Running sums of |importance| in ranking order; the total is the last running sum rather
    # than a sum(): the same additions in the same order (a streamed sum may add in any
    # order), so everything before the last non-zero feature is never compared with a total
    # that rounded differently. Raw sums, not shares: division by a broadcast total is not
    # correctly rounded in every engine, and an exact cut (alpha = 1 followed by zeros) must
    # stay exact.
    running = nw.col(_VAL)
    ranked = ranked.with_columns(
        *positions, size.cum_sum().over(*window, order_by=order).alias(_VAL)
    ).with_columns(
        running.shift(1).over(*window, order_by=order).alias(_BEFORE),
        _over(running.max(), window).alias(_TOTAL),
    )
    # A feature is in the top set when the |importance| before it sums to less than alpha x
    # the total (the first feature always is); a ranking whose total is 0 has no top set.
    total = nw.col(_TOTAL)
    return ranked.with_columns(
        ((nw.col(_POS) == 1) | (nw.col(_BEFORE) < alpha * total))
        .fill_null(value=False)
        .cast(nw.Int64)
        .alias(_A),
        (total == 0).cast(nw.Int64).alias(_ZA),
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
    by_names = v.as_names(by, "by")
    columns = {group: "group", feature: "feature", importance: "importance"}
    columns.update(dict.fromkeys(by_names, "by"))
    source = to_engine(frame, columns)
    source.require_ordered_windows(metric)
    lf = source.frame
    v.require_dtype(lf, importance, "importance", "numeric")
    window = [*by_names, group]
    checks = [
        v.non_empty(lf, metric),
        v.no_nulls(lf, columns),
        v.finite(lf, {importance: f"importance={importance!r}"}),
        # Cheaper than grouping by (group, feature): one row and distinct count per group.
        v.distinct_within(lf, window, {feature: "feature"}, "group"),
    ]
    missing_overall = None
    if _scalar(overall):
        _check_overall_value(lf, group, overall)
        # One set of windows ranks the groups and the overall ranking together.
        ranked = shared(_ranked(lf, window, feature, importance, alpha))
        is_overall = nw.col(group) == overall
        groups = ranked.filter(~is_overall)
        reference = ranked.filter(is_overall)
        missing_overall = _overall_missing(lf, reference, by_names, group, overall)
    else:
        reference, overall_checks = _overall_frame(
            overall,
            source,
            lf,
            feature=feature,
            importance=importance,
            by=by_names,
        )
        checks += overall_checks
        groups = _ranked(lf, window, feature, importance, alpha)
        reference = _ranked(reference, by_names, feature, importance, alpha)
    flags = [_A, _ZA] if alpha is not None else []
    renamed = {_POS: _RPOS, _SIZE: _RSIZE, _A: _B, _ZA: _ZB}
    reference = reference.select(
        *by_names, feature, *(nw.col(c).alias(renamed[c]) for c in [_POS, _SIZE, *flags])
    )
    groups = groups.select(*window, feature, _POS, _SIZE, *flags)
    pairs = shared(groups.join(reference, on=[*by_names, feature], how="left"))
    checks.append(
        _same_features(
            pairs,
            groups,
            reference,
            missing_overall=missing_overall,
            by=by_names,
            group=group,
            feature=feature,
        )
    )
    if k is not None:
        checks.append(_k_within(reference, k))
    return _Pairs(source, pairs, by_names, group, checks)


def _overall_missing(
    lf: nw.LazyFrame[Any], reference: nw.LazyFrame[Any], by: list[str], group: str, overall: Any
) -> Callable[[], str | None]:
    """The error when some partition has no rows of the overall group (a query, run on failure)."""

    def message() -> str | None:
        msg = f"overall={overall!r}: no rows with {group} == {overall!r}"
        if not by:
            empty = not reference.select(nw.len()).collect().item()
            return msg + "; the overall ranking is missing" if empty else None
        without = lf.select(by).unique().join(reference.select(by).unique(), on=by, how="anti")
        count, example = without.select(nw.len(), v.row_text(by).min()).collect().row(0)
        if not count:
            return None
        return msg + f" in {count} partition(s) (e.g. {example}); the overall ranking is missing"

    return message


def _overall_frame(
    overall: Any,
    source: Source,
    lf: nw.LazyFrame[Any],
    *,
    feature: str,
    importance: str,
    by: list[str],
) -> tuple[nw.LazyFrame[Any], list[v.Check]]:
    """Bring the overall ranking given as a dict or a frame into the data's engine."""
    feature_dtype = lf.collect_schema()[feature]
    if isinstance(overall, Mapping):
        if not overall:
            raise InvalidParameterError("overall={}: the overall ranking is empty")
        table = pl.DataFrame(
            {feature: list(overall), importance: list(overall.values())}
        ).to_arrow()
        ranked = lazy_from_arrow(table, source)
        shared: list[str] = []
    else:
        shared = [c for c in by if c in _native_schema_names(overall)]
        columns = {feature: "feature", importance: "importance", **dict.fromkeys(shared, "by")}
        ranked = align(overall, source, columns, frame_name="overall")
        v.require_dtype(ranked, importance, "importance", "numeric")
    ranked = ranked.with_columns(nw.col(feature).cast(feature_dtype))
    keys = [*shared, feature]
    checks = [
        v.non_empty(ranked, "overall"),
        v.no_nulls(ranked, {feature: "overall feature", importance: "overall importance"}),
        v.finite(ranked, {importance: f"importance={importance!r} (overall)"}),
        v.unique_within(
            ranked, keys, "overall=", "a feature may appear once in the overall ranking"
        ),
    ]
    if shared != by:
        # The overall ranking is shared by the partitions that differ only in other columns.
        partitions = lf.select(by).unique()
        ranked = ranked.select(*shared, feature, importance)
        ranked = (
            partitions.join(ranked, on=shared, how="inner")
            if shared
            else partitions.join(ranked, how="cross")
        )
    return ranked, checks


def _same_features(
    pairs: nw.LazyFrame[Any],
    groups: nw.LazyFrame[Any],
    reference: nw.LazyFrame[Any],
    *,
    missing_overall: Callable[[], str | None] | None,
    by: list[str],
    group: str,
    feature: str,
) -> v.Check:
    """Check that each group ranks exactly the overall ranking's features (naming one).

    Features are unique within each ranking (checked before), so a group ranks the overall
    features exactly when each of its features has an overall position and the two rankings
    have the same size. Only a failure runs the queries that find an example.
    """
    shown = v.row_text([*by, group, feature]).alias(_VAL)
    window = [*by, group]

    def text(count: int, problem: str, example: Any) -> str:
        return (
            f"group={group!r}: every group must rank the same features as the overall "
            f"ranking; {count} (group, feature) pair(s) {problem} (e.g. {example})"
        )

    def unknown(count: int, _: Any, __: int) -> str | None:
        if not count:
            return None
        # A partition without the overall rows leaves all its features unmatched.
        if missing_overall is not None and (msg := missing_overall()) is not None:
            return msg
        example = pairs.filter(nw.col(_RPOS).is_null()).select(shown.min()).collect().item()
        return text(count, "are not in the overall ranking", example)

    def missing(count: int, _: Any, __: int) -> str | None:
        if not count:
            return None
        features = reference.select(*by, feature)
        ranked = groups.select(window).unique()
        expected = ranked.join(features, on=by) if by else ranked.join(features, how="cross")
        absent = expected.join(groups.select(*window, feature), on=[*window, feature], how="anti")
        found, example = absent.select(nw.len(), shown.min()).collect().row(0)
        return text(found, "of the overall ranking are missing from a group", example)

    rules = (
        v.Rule(nw.col(_RPOS).is_null(), None, unknown),
        v.Rule(nw.col(_SIZE) != nw.col(_RSIZE), None, missing),
    )
    return v.Check(None, None, base=pairs, rules=rules)


def _k_within(reference: nw.LazyFrame[Any], k: int) -> v.Check:
    """Check that k is at most the number of features (one row per partition is tested)."""

    def message(count: int, example: Any, _: int) -> str | None:
        if not count:
            return None
        return (
            f"k={k}: larger than the number of features ({example}); expected k <= the "
            f"number of features ({count} partition(s) too short)"
        )

    short = (nw.col(_RPOS) == 1) & (nw.col(_RSIZE) < k)
    return v.Check(None, None, base=reference, rules=(v.Rule(short, nw.col(_RSIZE), message),))


def _per_group(
    r: _Pairs, values: nw.LazyFrame[Any], k: int | None, metric: str
) -> nw.LazyFrame[Any]:
    """Per group: the sum of ``_VAL`` over its rows divided by n (or k)."""
    size = nw.col(_SIZE) if k is None else nw.lit(k)
    return (
        values.group_by(r.window)
        .agg(nw.col(_VAL).sum(), nw.col(_SIZE).max())
        .with_columns((nw.col(_VAL) / size.cast(nw.Float64)).alias(metric))
    )


def _finish(
    r: _Pairs, per_group: nw.LazyFrame[Any], metric: str, grouped: bool, *, nullable: bool
) -> Any:
    """Per-group values, or their mean over groups (null if any group's value is null)."""
    if grouped:
        result = per_group.select(*r.by, r.group, metric)
        return from_engine(result, r.source, sort_by=[*r.by, r.group], checks=r.checks)
    if not nullable:
        result = _reduce(per_group, r.by, nw.col(metric).mean())
        return from_engine(result, r.source, sort_by=r.by, checks=r.checks)
    flagged = per_group.with_columns(nw.col(metric).is_null().cast(nw.Int64).alias(_NULL))
    result = _reduce(flagged, r.by, nw.col(metric).mean(), nw.col(_NULL).sum()).select(
        *r.by,
        nw.when(nw.col(_NULL) > 0).then(null_float()).otherwise(nw.col(metric)).alias(metric),
    )
    return from_engine(result, r.source, sort_by=r.by, checks=r.checks)


@reuses_plans
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

    Returns
    -------
    A frame of the input's kind: the ``by`` columns and ``position_parity`` (Float64), one row
    per partition sorted by ``by``; with ``per_group=True`` also the group column.

    Raises
    ------
    FrameAuditError
        No overall ranking, a group whose feature set differs from the overall one (the error
        names a feature), a feature twice in one group, null or non-finite importances, k < 1
        or larger than the number of features.

    Notes
    -----
    One ordered window ranks every group (O(n log n) per group for the sort), one join on
    (partition, feature) pairs each feature's two positions, one more window accumulates the
    matches. Defined for every group; the mean is null only when there is no group to average
    (the frame holds only the overall ranking). holisticai truncates to the shorter list when
    feature sets differ; frameaudit raises instead (see the Differences page).

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
    r = _rankings(
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
    pos = nw.col(_POS)
    matches = (pos == nw.col(_RPOS)).cast(nw.Int64).cum_sum().over(*r.window, order_by=_POS)
    cumulative = _within(pos, k, matches.cast(nw.Float64) / pos.cast(nw.Float64))
    values = _per_group(r, r.pairs.with_columns(cumulative.alias(_VAL)), k, "position_parity")
    return _finish(r, values, "position_parity", per_group, nullable=False)


@reuses_plans
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
    frame, group, feature, importance, overall, k, by, per_group
        As for :func:`position_parity` (``k`` applies to ``method="topk"`` only).
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
    ``topk`` in O(n log n) per group after ranking: a feature with positions :math:`p_c` in
    C_g and :math:`p_r` in R is in both top-j sets exactly for :math:`j \ge \max(p_c, p_r)`.
    Counting in group order the features whose maximum is :math:`p_c`, and in overall order
    those whose maximum is :math:`p_r`, gives every intersection from two windows, without
    grouping by j. ``alpha_jaccard``: cumulative-sum windows per ranking (the overall top set
    is computed once, not per group) and the join on feature.

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
    v.choice("method", method, ("topk", "alpha_jaccard"))
    if method == "alpha_jaccard":
        if k is not None:
            msg = f"k={k!r}: k applies to method='topk' only (alpha_jaccard compares coverage sets)"
            raise InvalidParameterError(msg)
        alpha = v.number_in_range("alpha", alpha, 0.0, 1.0, low_open=True)
    r = _rankings(
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
        return _finish(r, _topk_alignment(r, k), "rank_alignment", per_group, nullable=False)
    return _finish(r, _alpha_jaccard(r), "rank_alignment", per_group, nullable=True)


def _within(position: nw.Expr, k: int | None, value: nw.Expr) -> nw.Expr:
    """``value`` at positions 1..k (all when k is None), 0 beyond."""
    return value if k is None else nw.when(position <= k).then(value).otherwise(nw.lit(0.0))


def _topk_alignment(r: _Pairs, k: int | None) -> nw.LazyFrame[Any]:
    """Sum over j <= n (or k) of |top-j(C_g) ∩ top-j(R)| / j, per group (then / n or k).

    A feature at position p in C_g and q in R is in both top-j sets for j >= max(p, q). The
    features whose maximum is their group position are counted in group order (X_j: those
    with p <= j and q <= p), the others in overall order (Y_j: q <= j and p < q), so the
    intersection at j is X at the row with p = j plus Y at the row with q = j. Every j is one
    row's p and one row's q, so the sum over j is a sum over rows: two windows, no join.
    """
    pos, rpos = nw.col(_POS), nw.col(_RPOS)
    by_group = (rpos <= pos).cast(nw.Int64).cum_sum().over(*r.window, order_by=_POS)
    by_overall = (pos < rpos).cast(nw.Int64).cum_sum().over(*r.window, order_by=_RPOS)
    value = _within(pos, k, by_group.cast(nw.Float64) / pos.cast(nw.Float64)) + _within(
        rpos, k, by_overall.cast(nw.Float64) / rpos.cast(nw.Float64)
    )
    return _per_group(r, r.pairs.with_columns(value.alias(_VAL)), k, "rank_alignment")


def _alpha_jaccard(r: _Pairs) -> nw.LazyFrame[Any]:
    """Jaccard index of the alpha-coverage top sets of C_g and R, per group (null if undefined)."""
    a, b, both = nw.col(_A), nw.col(_B), nw.col("__fa_both")
    return (
        r.pairs.with_columns((a * b).alias("__fa_both"), nw.max_horizontal(_ZA, _ZB).alias(_NULL))
        .group_by(r.window)
        .agg(a.sum(), b.sum(), both.sum(), nw.col(_NULL).max())
        .with_columns(
            nw.when(nw.col(_NULL) > 0)
            .then(null_float())
            .otherwise(both.cast(nw.Float64) / (a + b - both).cast(nw.Float64))
            .alias("rank_alignment")
        )
    )
