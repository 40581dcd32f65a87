"""Order cohesion of feature-importance rankings: position parity and rank alignment.

The metrics of holisticai's explainability module (source text: the "Order Cohesion Metrics"
seed). Input is tidy: one row per (group, feature) with the feature's importance in that group
(for example, permutation importance computed on each class or quantile of the output). The
overall ranking R is either the rows whose group equals ``overall=``, or a separate frame (or
dict) of feature importances. Each group's ranking C_g is compared with R.

Order is descending absolute importance, ties broken by ascending feature name, so every
ranking is deterministic. Positions come from one ordered window; one join on (partition, group,
feature) then pairs each feature's position in its group with its position in the overall
ranking, which is all both metrics need, so nothing loops over groups.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
    shared,
    to_engine,
)
from frameaudit._expr import null_float
from frameaudit.exceptions import InvalidParameterError

__all__ = ["Method", "position_parity", "rank_alignment"]

Method = Literal["topk", "alpha_jaccard"]
Names = str | Sequence[str]
Overall = str | int | float | bool | Mapping[Any, float] | Any

_ALL = "__fa_all"
_POS = "__fa_pos"  # position in the group's ranking
_RPOS = "__fa_rpos"  # position in the overall ranking
_RIMP = "__fa_rimp"  # importance in the overall ranking
_KEY = "__fa_key"
_ONE = "__fa_one"
_VAL = "__fa_val"
_NULL = "__fa_null"


@dataclass
class _Pairs:
    """One row per (partition, group, feature), with the checks that make it valid.

    Each row holds the feature's importance and position in the group's ranking and in the
    overall ranking.
    """

    source: Source
    pairs: nw.LazyFrame[Any]
    by: list[str]
    partition: list[str]
    group: str
    importance: str
    checks: list[v.Check]


def _offenders(frame: nw.LazyFrame[Any], example: nw.Expr | None, message: Any) -> v.Check:
    """Fail when ``frame`` (the offending rows of a derived frame) is not empty."""
    return v.Check(None, None, base=frame, rules=(v.Rule(nw.lit(value=True), example, message),))


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


def _with_positions(
    frame: nw.LazyFrame[Any], window: list[str], feature: str, importance: str
) -> nw.LazyFrame[Any]:
    """1-based position in each ranking: descending |importance|, then ascending feature."""
    return (
        frame.with_columns(
            (-nw.col(importance).cast(nw.Float64).abs()).alias(_KEY),
            nw.lit(1, dtype=nw.Int64).alias(_ONE),
        )
        .with_columns(
            nw.col(_ONE)
            .cum_sum()
            .over(*window, order_by=[_KEY, feature])
            .cast(nw.Int64)
            .alias(_POS)
        )
        .drop(_KEY, _ONE)
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
    partition = by_names or [_ALL]
    if not by_names:
        lf = lf.with_columns(nw.lit(0).alias(_ALL))
    checks = [
        v.non_empty(lf, metric),
        v.no_nulls(lf, columns),
        v.finite(lf, {importance: f"importance={importance!r}"}),
        v.unique_within(
            lf,
            [*partition, group, feature],
            f"feature={feature!r}",
            "a feature may appear once per group",
        ),
    ]
    if _scalar(overall):
        _check_overall_value(lf, group, overall)
        # One window ranks the groups and the overall ranking together.
        ranked = shared(_with_positions(lf, [*partition, group], feature, importance))
        is_overall = nw.col(group) == overall
        groups = ranked.filter(~is_overall)
        reference = ranked.filter(is_overall)
        checks.append(
            _overall_present(
                lf, reference, partition=partition, by=by_names, group=group, overall=overall
            )
        )
    else:
        reference, overall_checks = _overall_frame(
            overall,
            source,
            lf,
            feature=feature,
            importance=importance,
            by=by_names,
            partition=partition,
        )
        checks += overall_checks
        groups = _with_positions(lf, [*partition, group], feature, importance)
        reference = _with_positions(reference, partition, feature, importance)
    reference = shared(
        reference.select(
            *partition, feature, nw.col(_POS).alias(_RPOS), nw.col(importance).alias(_RIMP)
        )
    )
    groups = shared(groups.select(*partition, group, feature, importance, _POS))
    keys = [*partition, group, feature]
    expected = groups.select(*partition, group).unique().join(reference, on=partition)
    joined = groups.join(expected, on=keys, how="full")
    pairs = joined.select(
        *(nw.coalesce(key, f"{key}_right").alias(key) for key in keys),
        importance,
        _POS,
        _RPOS,
        _RIMP,
    )
    checks += _same_features(pairs, by_names, group, feature)
    if k is not None:
        checks.append(_k_within(reference, partition, k))
    return _Pairs(source, pairs, by_names, partition, group, importance, checks)


def _overall_present(
    lf: nw.LazyFrame[Any],
    reference: nw.LazyFrame[Any],
    *,
    partition: list[str],
    by: list[str],
    group: str,
    overall: Any,
) -> v.Check:
    """Check that every partition holds the overall group's rows."""
    without = (
        lf.select(partition)
        .unique()
        .join(reference.select(partition).unique(), on=partition, how="anti")
    )

    def message(count: int, example: Any, _: int) -> str | None:
        if not count:
            return None
        msg = f"overall={overall!r}: no rows with {group} == {overall!r}"
        if by:
            msg += f" in {count} partition(s) (e.g. {example})"
        return msg + "; the overall ranking is missing"

    return _offenders(without, v.row_text(by) if by else None, message)


def _overall_frame(
    overall: Any,
    source: Source,
    lf: nw.LazyFrame[Any],
    *,
    feature: str,
    importance: str,
    by: list[str],
    partition: list[str],
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
    if shared != partition:
        # The overall ranking is shared by the partitions that differ only in other columns.
        partitions = lf.select(partition).unique()
        ranked = ranked.select(*shared, feature, importance)
        ranked = (
            partitions.join(ranked, on=shared, how="inner")
            if shared
            else partitions.join(ranked, how="cross")
        )
    return ranked, checks


def _same_features(
    pairs: nw.LazyFrame[Any], by: list[str], group: str, feature: str
) -> list[v.Check]:
    """Check that each group ranks exactly the overall ranking's features (naming one)."""

    def check(position: str, problem: str) -> v.Check:
        def message(count: int, example: Any, _: int) -> str | None:
            if not count:
                return None
            return (
                f"group={group!r}: every group must rank the same features as the overall "
                f"ranking; {count} (group, feature) pair(s) {problem} (e.g. {example})"
            )

        # Filtered first, so that the example text is built for the offending rows only.
        offenders = pairs.filter(nw.col(position).is_null())
        return _offenders(offenders, v.row_text([*by, group, feature]), message)

    return [
        check(_RPOS, "are not in the overall ranking"),
        check(_POS, "of the overall ranking are missing from a group"),
    ]


def _k_within(overall: nw.LazyFrame[Any], partition: list[str], k: int) -> v.Check:
    sizes = overall.group_by(partition).agg(nw.len().cast(nw.Int64).alias(_VAL))

    def message(count: int, example: Any, _: int) -> str | None:
        if not count:
            return None
        return (
            f"k={k}: larger than the number of features ({example}); expected k <= the "
            f"number of features ({count} partition(s) too short)"
        )

    return _offenders(sizes.filter(nw.col(_VAL) < k), nw.col(_VAL), message)


def _finish(r: _Pairs, per_group: nw.LazyFrame[Any], metric: str, grouped: bool) -> Any:
    """Per-group values, or their mean over groups (null if any group's value is null)."""
    if grouped:
        result = per_group.select(*r.by, r.group, metric)
        return from_engine(result, r.source, sort_by=[*r.by, r.group], checks=r.checks)
    combined = (
        per_group.with_columns(nw.col(metric).is_null().cast(nw.Int64).alias(_NULL))
        .group_by(r.partition)
        .agg(nw.col(metric).mean(), nw.col(_NULL).sum())
        .with_columns(
            nw.when(nw.col(_NULL) > 0).then(null_float()).otherwise(nw.col(metric)).alias(metric)
        )
        .select(*r.by, metric)
    )
    return from_engine(combined, r.source, sort_by=r.by, checks=r.checks)


def _prefix_mean(
    frame: nw.LazyFrame[Any], r: _Pairs, k: int | None, metric: str
) -> nw.LazyFrame[Any]:
    """Mean of ``_VAL`` over positions 1..k (all positions when k is None), per group."""
    if k is not None:
        frame = frame.filter(nw.col(_POS) <= k)
    return frame.group_by([*r.partition, r.group]).agg(nw.col(_VAL).mean().alias(metric))


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
    (partition, position) compares the features, one more window accumulates the matches.
    Never null on valid input. holisticai truncates to the shorter list when feature sets
    differ; frameaudit raises instead (see the Differences page).

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
    matches = (
        r.pairs.with_columns((nw.col(_POS) == nw.col(_RPOS)).cast(nw.Int64).alias(_ONE))
        .with_columns(
            nw.col(_ONE)
            .cum_sum()
            .over(*r.partition, r.group, order_by=_POS)
            .cast(nw.Float64)
            .alias(_VAL)
        )
        .with_columns((nw.col(_VAL) / nw.col(_POS).cast(nw.Float64)).alias(_VAL))
    )
    return _finish(r, _prefix_mean(matches, r, k, "position_parity"), "position_parity", per_group)


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
    ``topk`` in O(n) per group after ranking: a feature with positions :math:`p_c` in C_g and
    :math:`p_r` in R is in both top-j sets exactly for :math:`j \ge \max(p_c, p_r)`, so counting
    features by that maximum and accumulating over j gives every intersection in one window.
    ``alpha_jaccard``: a cumulative-share window per ranking and one join on feature.

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
    )
    values = _topk_alignment(r, k) if method == "topk" else _alpha_jaccard(r, alpha)
    return _finish(r, values, "rank_alignment", per_group)


def _topk_alignment(r: _Pairs, k: int | None) -> nw.LazyFrame[Any]:
    """Mean over j ≤ n (or k) of |top-j(C_g) ∩ top-j(R)| / j, per group."""
    window = [*r.partition, r.group]
    both_from = (
        r.pairs.with_columns(nw.max_horizontal(_POS, _RPOS).alias(_POS))
        .group_by([*window, _POS])
        .agg(nw.len().cast(nw.Int64).alias(_ONE))
    )
    counts = (
        r.pairs.select(*window, _POS)
        .join(both_from, on=[*window, _POS], how="left")
        .with_columns(nw.col(_ONE).fill_null(0))
        .with_columns(
            nw.col(_ONE).cum_sum().over(*window, order_by=_POS).cast(nw.Float64).alias(_VAL)
        )
        .with_columns((nw.col(_VAL) / nw.col(_POS).cast(nw.Float64)).alias(_VAL))
    )
    return _prefix_mean(counts, r, k, "rank_alignment")


def _in_top(
    frame: nw.LazyFrame[Any],
    window: list[str],
    columns: tuple[str, str],
    outputs: tuple[str, str],
    alpha: float,
) -> nw.LazyFrame[Any]:
    """Flag the smallest top set covering ``alpha`` of a ranking's total |importance|.

    ``columns`` names the ranking's (importance, position); ``outputs`` the two flags added:
    membership, and "all importances are 0" (no top set). A feature is in the set when the
    |importance| of the features before it sums to less than alpha × the total (the first
    feature always is). Raw sums, not shares: division by a broadcast total is not correctly
    rounded in every engine, and an exact cut (alpha = 1 followed by zeros) must stay exact.
    """
    importance, position = columns
    member, zero = outputs
    size = nw.col(importance).cast(nw.Float64).abs()
    running = nw.col(member).shift(1).over(*window, order_by=position)
    return (
        frame.with_columns(size.cum_sum().over(*window, order_by=position).alias(member))
        # The total is the last running sum rather than a sum(): the same additions in the
        # same order (a streamed sum may add in any order), so everything before the last
        # non-zero feature is never compared with a total that rounded differently.
        .with_columns(nw.col(member).max().over(*window).alias(zero))
        .with_columns(
            ((nw.col(position) == 1) | (running < alpha * nw.col(zero)))
            .fill_null(value=False)
            .cast(nw.Int64)
            .alias(member),
            (nw.col(zero) == 0).cast(nw.Int64).alias(zero),
        )
    )


def _alpha_jaccard(r: _Pairs, alpha: float) -> nw.LazyFrame[Any]:
    """Jaccard index of the alpha-coverage top sets of C_g and R, per group (null if undefined)."""
    window = [*r.partition, r.group]
    flags = _in_top(r.pairs, window, (r.importance, _POS), ("__fa_a", "__fa_za"), alpha)
    flags = _in_top(flags, window, (_RIMP, _RPOS), ("__fa_b", "__fa_zb"), alpha)
    a, b, both = nw.col("__fa_a"), nw.col("__fa_b"), nw.col("__fa_both")
    return (
        flags.with_columns(
            (a * b).alias("__fa_both"), nw.max_horizontal("__fa_za", "__fa_zb").alias(_NULL)
        )
        .group_by(window)
        .agg(a.sum(), b.sum(), both.sum(), nw.col(_NULL).max())
        .with_columns(
            nw.when(nw.col(_NULL) > 0)
            .then(null_float())
            .otherwise(both.cast(nw.Float64) / (a + b - both).cast(nw.Float64))
            .alias("rank_alignment")
        )
    )
