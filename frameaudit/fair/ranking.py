"""Fair-ranking metrics: EXP, EXPU, EXPRU, AWRF, ERBE, ERBP, ERBR, ARP, NDKL and IAA.

The metrics of FairRankTune (Cachel & Rundensteiner), computed as lazy column expressions on
tidy input: one row per ranked item, with its 1-based position (``rank``), its group, and
optionally the ranking it belongs to, an item id, a relevance and a click-through rate.

Group metrics reduce each group's rows (pooled over every ranking of a ``by`` partition) to a
per-group value V_g, then combine the vector V with one of seven ``combo`` formulas
(:func:`combine`). NDKL and IAA are single-number metrics. With k a row's position, sums over
the rows of group g, and n_g its size (mapping items with ``groups=``, else distinct items with
``item=``, else rows):

=======  ==============================================================================
metric   definition
=======  ==============================================================================
EXP      V_g = Σ 1/log2(k+1) / n_g
EXPU     V_g = Σ 1/log2(k+1) / Σ relevance
EXPRU    V_g = Σ ctr / Σ relevance
AWRF     V_g = Σ 100·p·(1−p)^(k−1) / n_g
ERBE     V_g = (1−γ)·Σ γ^(k−1)
ERBP     V_g = (1−γ)·Σ γ^(k−1) / n_g
ERBR     V_g = (1−γ)·Σ γ^(k−1) / (relevant items of g)
ARP      V_g = mixed pairs won by g / mixed pairs involving g, from each row's order
NDKL     per ranking Σ_i w_i·KL(P_i ‖ D) / Σ_i w_i, w_i = 1/log2(i+1), P_i the top-i mix;
         the mean over the partition's rankings
IAA      Σ_items |Σ_rankings 1/log2(k+1) − Σ_rankings relevance|
=======  ==============================================================================
The definitions, and every place where frameaudit deliberately
differs from FairRankTune 0.0.7, are in the documentation's "Differences" page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import narwhals.stable.v2 as nw

from frameaudit import _validate as validate
from frameaudit._combos import COMBO, COMBO_BEST, COMBOS, Combo, Combos
from frameaudit._docs import shared_docs, uncertainty_parameters
from frameaudit._engine import (
    Estimation,
    Estimator,
    cached,
    exact_sums,
    native_step,
    order_within,
    per_order,
    running_along,
)
from frameaudit._expr import (
    WHOLE,
    aggregate,
    discount,
    distinct,
    divided_in,
    log1p,
    null_float,
    over,
    partitioned,
)
from frameaudit._params import (
    COMBO_OPTION,
    UNCERTAINTY,
    Choice,
    Integer,
    Optional,
    Real,
    Several,
    constraints,
)
from frameaudit._registry import registered
from frameaudit._roles import Names, Role, bind, column_names, owners
from frameaudit.exceptions import InvalidParameterError
from frameaudit.fair._alignment import (
    SHARE,
    UNALIGNED,
    Unaligned,
    aligned,
    alignment_frames,
    one_grouping,
)
from frameaudit.fair._groups import (
    GroupMapping,
    Target,
    Universe,
    join_mapping,
    listed_universe,
    target_shares,
)
from frameaudit.fair._judgments import judged

__all__ = [
    "COMBOS",
    "COMBO_BEST",
    "Combo",
    "Combos",
    "arp",
    "awrf",
    "awrf_js",
    "combine",
    "erbe",
    "erbp",
    "erbr",
    "exp",
    "expru",
    "expu",
    "iaa",
    "ndcg",
    "ndkl",
]

Size = Literal["items", "rows"]
SIZES: tuple[Size, ...] = get_args(Size)

_NUM = "__fa_num"
_DEN = "__fa_den"
_SIZE = "__fa_size"
_ORDER = "__fa_order"
_RANKINGS = "__fa_n_ranking"
_ROWS = "__fa_rows"
UNITS = "rankings"
"""The output column with the number of rankings behind a value (with ``ci=``)."""
_POINT = Estimator(UNITS)
"""The estimation of a call without ``ci=``: the point estimate."""
_RANKING_UNCERTAINTY = uncertainty_parameters(
    "ranking",
    weights="Column of unit weights: non-negative, finite, constant within each ranking (e.g. a "
    "query's traffic). Every sum over rankings becomes a weighted sum",
    interval="over the rankings (``ranking=`` required)",
)


@dataclass
class _Prepared:
    """A validated ranking frame, the names of its roles and how the call estimates."""

    estimation: Estimation
    frame: nw.LazyFrame[Any]
    groups: list[str]
    rank: str
    item: str | None
    mapping: nw.LazyFrame[Any] | None
    universe: nw.LazyFrame[Any] | None
    """The groups a combo compares when listed (a mapping's or ``universe=``); None: the
    groups the data holds (in any partition, in rankings of positive weight)."""
    checks: list[validate.Check] = field(default_factory=list)
    size: Size = "rows"
    aligned: bool = False
    """Soft groups (``alignment=``): each row holds its item's weight in its cell, :data:`SHARE`."""

    @property
    def rankings(self) -> list[str]:
        """The columns that key a ranking: the partition's and ``ranking=``."""
        return self.estimation.units


def _prepare(
    frame: Any,
    metric: str,
    *,
    rank: str,
    group: Names | None,
    ranking: Names | None,
    item: str | None,
    groups: GroupMapping | None,
    by: Names | None,
    values: Mapping[str, str] | None = None,
    grades: int | None = 1,
    grouped: bool = True,
    weight: str | None = None,
    estimator: Estimator,
    per_group: bool = False,
    universe: Universe | None = None,
    size: Size | None = None,
    sized: bool = False,
    listed_combos: bool = False,
) -> _Prepared:
    """Validate the schema, bring the frame into the engine, join the group mapping.

    ``sized``: the metric's value divides by the group size, which must then be a choice
    (``size=``, or ``item=``) where a partition holds several rankings. ``grades``: the
    largest value the ``values`` columns take (None: any non-negative number). ``listed_combos``:
    the output names its combos in a ``combo`` column.
    """
    values = dict(values or {})
    mapped_group = _check_options(
        metric,
        group=group,
        ranking=ranking,
        item=item,
        groups=groups,
        estimator=estimator,
        universe=universe,
        size=size,
    )
    bound = bind(
        frame,
        [
            Role("rank", rank, dtype="integer"),
            # IAA has no groups (group=None); with groups= the mapping holds them
            *([Role("group", group, many=True)] if grouped and groups is None else []),
            Role("ranking", ranking, many=True, optional=True),
            Role("item", item, optional=True),
            Role("by", by, many=True, optional=True),
            *(Role(parameter, column, dtype="numeric") for parameter, column in values.items()),
            Role("weight", weight, optional=True, dtype="numeric"),
        ],
        sharing=[frozenset(("by", "ranking"))],
        outputs=[
            metric,
            *(["n"] if per_group else []),
            *([COMBO] if listed_combos else []),
            *estimator.outputs(metric),
        ],
    )
    source = bound.source
    lf = source.frame
    group_names = bound.columns.get("group", []) if mapped_group is None else [mapped_group]
    ranking_names, by_names = bound.columns["ranking"], bound.columns["by"]
    if groups is not None and group_names[0] in lf.collect_schema().names():
        msg = (
            f"group={group_names[0]!r}: with groups= it names the mapping's group column, "
            "but the frame's column of that name already plays another role; pick another name"
        )
        raise InvalidParameterError(msg)
    columns = {c: p for p, names in bound.columns.items() for c in names}
    partition = by_names or [WHOLE]
    rankings = list(dict.fromkeys([*partition, *ranking_names]))
    # positions usually come sorted within a ranking, items seldom; marked before any check
    # reads the frame, so that every reader shares the mark (and the partition's column)
    lf, screen = validate.screened(lf, rankings, [rank])
    checks = [
        validate.non_empty(lf, metric),
        validate.no_nulls(lf, columns),
        validate.in_range(lf, rank, "rank", 1, None),
    ]
    for parameter, column in values.items():
        checks.append(validate.in_range(lf, column, parameter, 0, grades))
    known = None
    if grouped and groups is None and universe is not None:
        known, universe_checks = listed_universe(lf, group_names, universe, source)
        checks += universe_checks
    once = {rank: "rank", **({item: "item"} if item is not None else {})}
    checks.append(validate.distinct_within(lf, rankings, once, "ranking", screen=screen))
    if weight is not None:
        checks += validate.unit_weights(lf, weight, rankings, "ranking")
    # weight 0 leaves the ranking out, from the sums and from the group sizes alike
    lf, estimated = estimator.over(lf, source, by=by_names, units=rankings, weight=weight)
    mapping = None
    if groups is not None:
        assert item is not None
        lf, mapping, mapping_checks = join_mapping(lf, groups, source, item, group_names[0])
        checks += mapping_checks
        known = distinct(mapping.select(group_names))
    several = rankings != partition
    if size is None:
        if sized and several and item is None:
            msg = (
                f"size=None: with ranking={ranking!r} a partition holds several rankings, and "
                "without item= the group sizes n_g would count rows, not items: where items "
                "recur across rankings, that changes n_g and the value. Give item= (n_g counts "
                "distinct items) or size='rows' (n_g counts appearances)"
            )
            raise InvalidParameterError(msg)
        size = "items" if item is not None else "rows"
    return _Prepared(
        estimated,
        lf,
        group_names,
        rank,
        item,
        mapping,
        known,
        checks,
        size if several else "rows",
    )


def _check_options(
    metric: str,
    *,
    group: Names | None,
    ranking: Names | None,
    item: str | None,
    groups: GroupMapping | None,
    estimator: Estimator,
    universe: Universe | None = None,
    size: Size | None = None,
) -> str | None:
    """The options checked against each other, reading no data.

    Returns, with ``groups=``, the name of the mapping's group column (and the output's),
    which is not a column of the frame; None without a mapping.
    """
    if size == "items" and item is None:
        msg = "size='items': group sizes count distinct items; give item= the item id column"
        raise InvalidParameterError(msg)
    if universe is not None and groups is not None:
        msg = (
            "universe=: with groups= the mapping's groups are the universe; give the groups "
            "through the mapping or through universe=, not both"
        )
        raise InvalidParameterError(msg)
    if estimator.bootstrap is not None and ranking is None:
        msg = (
            f"ci={estimator.bootstrap.level!r}: intervals resample rankings; give ranking= the "
            "column(s) identifying them (a single ranking gives no interval)"
        )
        raise InvalidParameterError(msg)
    if groups is None:
        return None
    if isinstance(group, (list, tuple)):
        msg = (
            f"group={group!r}: with groups= (a mapping) give one name for the group "
            "column of the mapping and of the output"
        )
        raise InvalidParameterError(msg)
    (name,) = column_names(Role("group", group))
    if item is None:
        msg = "item=None: groups= (a mapping from item to group) needs item= to join on"
        raise InvalidParameterError(msg)
    if name == metric:
        msg = f"group={group!r}: {metric!r} is an output column of this metric; rename it"
        raise InvalidParameterError(msg)
    return name


_Alignments = tuple[list[Any], list[str]]
"""The alignment frames and the group column of each."""


def _alignment_options(
    alignment: Any, group: Names | None, item: str | None, groups: GroupMapping | None
) -> _Alignments:
    """``alignment=``'s frames and group columns, its options checked (reads no data)."""
    if item is None:
        raise InvalidParameterError("alignment=: give item= the item column to join on")
    one_grouping(groups, alignment)
    return alignment_frames(alignment, group)


def _join_alignment(
    prep: _Prepared,
    alignments: _Alignments,
    unaligned: Unaligned,
    *,
    outputs: Sequence[str],
    listed: bool,
) -> nw.LazyFrame[Any]:
    """``prep``'s rows in their items' cells (soft groups), and the cells.

    Each row becomes one row per cell of its item, with the item's weight in the cell
    (:data:`SHARE`); ``prep``'s groups become the alignments' group columns. ``listed``: the
    cells of every item the alignments list as well (a group's fixed size counts them all).
    """
    assert prep.item is not None
    frames, names = alignments
    taken = {*prep.frame.collect_schema().names(), *outputs}
    for name in names:
        if name in taken:
            msg = (
                f"group={name!r}: with alignment= it names an alignment's group column, but "
                "the frame's column or an output column of that name plays another role; "
                "rename the alignment's column and give group= that name"
            )
            raise InvalidParameterError(msg)
    cells, checks = aligned(
        distinct(prep.frame.select(prep.item)),
        frames,
        names,
        item=prep.item,
        source=prep.estimation.source,
        unaligned=unaligned,
        listed=listed,
    )
    prep.frame = prep.frame.join(cells, on=prep.item, how="inner")
    prep.groups = names
    prep.checks.extend(checks)
    prep.aligned = True
    return cells


def _over_units(
    prep: _Prepared,
    frame: nw.LazyFrame[Any],
    keys: Sequence[str],
    sums: Sequence[str],
    *,
    counts: Sequence[str] = (),
) -> nw.LazyFrame[Any]:
    """The columns ``sums`` summed per (estimate, ``keys``): over the rankings' rows.

    With a bootstrap normalised to the partition's number of rankings: totals (ERBE, IAA, V_g
    over a mapping's fixed size, the distinct-item sizes) are among the ranking metrics. Every
    sum is Float64 (a term times the Float64 unit weight) but those of ``counts``, Int64 row
    counts (:func:`_row_count`).
    """
    floats = [c for c in sums if c not in counts]
    return prep.estimation.summed(frame, keys, sums, normalised=True, floats=floats)


def _row_count(prep: _Prepared, ns: Any) -> Any:
    """A row's count in its group's size, an expression of ``ns``.

    Its unit weight (times its share of the item's cell, aligned), else 1 as an Int64
    (:func:`_counts_rows`): summed as it is, where a Float64 is put in fixed point (for a
    small call, a sixth of its plan's run).
    """
    if prep.aligned:
        return prep.estimation.unit_weight(ns=ns) * ns.col(SHARE)
    return prep.estimation.unit_weight(integer=True, ns=ns)


def _counts_rows(prep: _Prepared) -> bool:
    """Whether :func:`_row_count` is an Int64: neither unit weights nor alignments."""
    return not prep.aligned and prep.estimation.weight is None


def _weighted_terms(
    prep: _Prepared, rows: nw.LazyFrame[Any], value: validate.Written, name: str
) -> nw.LazyFrame[Any]:
    """``rows`` (one per ranking) with ``value`` as ``name`` and its weighted mean's terms.

    ``_NUM`` = the value × the ranking's unit weight, ``_DEN`` = the weight. ``value`` is
    written for either namespace, and both steps are built in Polars' own expressions on
    Polars (through narwhals they were a twentieth of NDKL's small call).
    """

    def terms(ns: Any) -> list[Any]:
        weighted = prep.estimation.unit_weight(ns=ns)
        return [(ns.col(name) * weighted).alias(_NUM), weighted.alias(_DEN)]

    valued = native_step(rows, "with_columns", lambda ns: [value(ns).alias(name)])
    return native_step(valued, "with_columns", terms)


def _mean_over_rankings(
    prep: _Prepared, rows: nw.LazyFrame[Any], value: validate.Written, name: str
) -> nw.LazyFrame[Any]:
    """``name``: the mean of ``value`` (one per ranking of ``rows``) per estimate.

    Each ranking weighs its unit weight (and in a replicate, times it is drawn); the ratio of
    the two sums in Polars' own expressions on Polars (:func:`~frameaudit._engine.native_step`).
    """
    terms = _weighted_terms(prep, rows, value, name)
    sums = _over_units(prep, terms, [], [_NUM, _DEN])
    return native_step(sums, "with_columns", lambda ns: [divided_in(ns, _NUM, _DEN).alias(name)])


def _with_sizes(prep: _Prepared, sums: nw.LazyFrame[Any]) -> nw.LazyFrame[Any]:
    """``sums`` (per estimate and group, with the weighted row count ``_ROWS``) with n_g.

    n_g is the mapping's (joined by :func:`_per_group`), else the distinct items
    (``size="items"``), else the (weighted) rows: the data's, in every replicate too, for
    the values that do not divide by them (:func:`_pooled_metric` sums a replicate's own).
    """
    if prep.mapping is not None:
        return sums
    if prep.size == "items":
        assert prep.item is not None
        return prep.estimation.sized(sums, prep.frame, prep.groups, item=prep.item, name=_SIZE)
    return native_step(sums, "with_columns", lambda ns: [ns.col(_ROWS).alias(_SIZE)])


def _per_group(
    prep: _Prepared,
    sums: nw.LazyFrame[Any],
    summed: Sequence[str],
    metric: str,
    denominator: Literal["size", "sum", "one"],
) -> tuple[nw.LazyFrame[Any], bool]:
    """V_g = num / den and n_g per (estimate, group) over the group universe.

    ``sums`` holds, per (estimate, group) that occurs, the columns ``summed``: the summed
    numerator ``_NUM``, the weighted row count ``_ROWS``, for ``denominator="sum"`` the summed
    ``_DEN``, and without a mapping perhaps the group size ``_SIZE``. Every group of the
    universe (the mapping's, with its sizes) has a row in every estimate: one that no row (or
    no drawn ranking) holds has zero sums and, without a mapping, size 0, so that its V_g is
    0, or null where it is 0/0. Also whether the values come with n_g (``_SIZE``): the
    mapping's, or ``sums``'.
    """
    estimation = prep.estimation
    keys = [*estimation.estimates, *prep.groups]
    universe = prep.universe
    if prep.mapping is not None:
        # a group's fixed size: its items (soft groups: their weights in it)
        counted = nw.col(SHARE).sum() if prep.aligned else nw.len()
        universe = prep.mapping.group_by(prep.groups).agg(counted.alias(_SIZE))
        sums = sums.drop(_SIZE, strict=False)
    sums = estimation.completed(sums, prep.frame, prep.groups, cells=universe)
    filled = [c for c in summed if c != _SIZE or prep.mapping is None]
    sums = native_step(sums, "with_columns", lambda ns: [ns.col(c).fill_null(0.0) for c in filled])
    sized = prep.mapping is not None or _SIZE in summed
    fractional = estimation.weight or prep.aligned

    def columns(ns: Any) -> list[Any]:  # in Polars' own expressions on Polars (native_step)
        den = {"size": _SIZE, "sum": _DEN, "one": 1.0}[denominator]
        shown = [*map(ns.col, keys), divided_in(ns, _NUM, den).alias(metric)]
        size = ns.col(_SIZE).cast(ns.Float64 if fractional else ns.Int64).alias(_SIZE)
        return [*shown, size] if sized else shown

    return native_step(sums, "select", columns), sized


def _finish(
    prep: _Prepared,
    per_group: nw.LazyFrame[Any],
    metric: str,
    combo: Combos | None,
    *,
    sized: bool,
) -> Any:
    """The combo(s) of the per-group values, or the values with the sizes ``n`` (``sized``).

    :meth:`~frameaudit._engine.Estimation.grouped`, in the caller's kind.
    """
    # the size shows as n with the per-group values (with a combo, n may be a by column's name)
    sized = combo is None and sized
    values = per_group.rename({_SIZE: "n"}) if sized else per_group
    return prep.estimation.grouped(
        values, prep.groups, [metric], combo, also=["n"] if sized else [], checks=prep.checks
    )


def _conclude(prep: _Prepared, values: nw.LazyFrame[Any], metric: str) -> Any:
    """Per partition: ``metric`` (with a bootstrap, its interval), in the caller's kind."""
    result = prep.estimation.interval(values, [], metric)
    return prep.estimation.finish(result, checks=prep.checks)


@constraints(combo=Several(Choice(COMBOS)))
def combine(
    per_group: Any,
    *,
    metric: str,
    by: Names | None = None,
    combo: Combos = "MinMaxRatio",
) -> Any:
    r"""Combine per-group values into one number per partition, with one or more of the combos.

    A group metric called with ``combo=None`` returns its per-group values :math:`V_g`; this
    applies a combo to them afterwards, so that several combos cost one metric call:

    ========================  =============================================  ===========
    combo                     formula over the G per-group values            most fair
    ========================  =============================================  ===========
    ``MinMaxRatio``           :math:`\min V / \max V`                        1
    ``MaxMinRatio``           :math:`\max V / \min V`                        1
    ``MaxMinDiff``            :math:`\max V - \min V`                        0
    ``MaxAbsDiff``            :math:`\max_g |V_g - \bar V|`                   0
    ``MeanAbsDev``            :math:`\frac1G \sum_g |V_g - \bar V|`           0
    ``LTwo``                  :math:`\lVert V \rVert_2^2`                     —
    ``Variance``              :math:`\frac1{G-1} \sum_g (V_g - \bar V)^2`     0
    ========================  =============================================  ===========

    Parameters
    ----------
    per_group
        The per-group frame of a group metric (``combo=None``), of any supported kind: one
        row per (partition, group) with the value column ``metric``.
    metric
        The column holding :math:`V_g` (the metric's name, e.g. ``"exp"``).
    by
        The partition column(s) the metric was called with; None: one partition.
    combo
        One of the seven names above, or a list of them: all computed from one aggregation
        of ``per_group``.

    Returns
    -------
    A frame of the input's kind: the ``by`` columns and ``metric`` (Float64), one row per
    partition, sorted by ``by``; for a list of combos, one row per partition and combo, named
    in a ``combo`` column after ``by`` (sorted by ``by`` and ``combo``). Null where a
    partition holds a null or NaN :math:`V_g`, and where the combo is 0/0 (``MinMaxRatio``
    when every value is 0; ``Variance`` of one group).

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> log = pl.DataFrame({"rank": [1, 2, 3, 4], "group": ["a", "b", "a", "b"]})
    >>> per_group = fa.fair.exp(log, combo=None)
    >>> fa.fair.combine(per_group, metric="exp").item()  # (1/log2 3 + 1/log2 5) / (1 + 1/2)
    0.707738
    >>> fa.fair.combine(per_group, metric="exp", combo="MaxMinDiff").item()
    0.219197
    >>> fa.fair.combine(per_group, metric="exp", combo=["MaxMinDiff", "MinMaxRatio"]).rows()
    [('MaxMinDiff', 0.219197), ('MinMaxRatio', 0.707738)]

    """
    bound = bind(
        per_group,
        [
            Role("metric", metric, dtype="numeric"),
            Role("by", by, many=True, optional=True),
        ],
        frame_name="per_group",
    )
    by_names = bound.columns["by"]
    values = partitioned(bound.source.frame, by_names)
    checks = [
        validate.non_empty(bound.source.frame, "combine"),
        validate.no_nulls(bound.source.frame, dict.fromkeys(by_names, "by")),
    ]
    # the combos of each partition's rows, whatever their groups: a partition is one estimate
    values, estimated = _POINT.over(values, bound.source, by=by_names, units=[])
    return estimated.grouped(values, [], [metric], combo, checks=checks)


def _pooled_metric(
    frame: Any,
    metric: str,
    *,
    numerator: validate.Written,
    denominator: Literal["size", "sum", "one"],
    rank: str,
    group: Names,
    ranking: Names | None,
    item: str | None,
    groups: GroupMapping | None,
    by: Names | None,
    combo: Combos | None,
    weight: str | None,
    estimator: Estimator,
    universe: Universe | None,
    size: Size | None = None,
    values: Mapping[str, str] | None = None,
    binary_relevance: bool = False,
    alignment: Any | None = None,
    unaligned: Unaligned = "unknown",
) -> Any:
    """The sum metrics: V_g = Σ_rows numerator / (n_g, Σ relevance or 1).

    With ``alignment=``, a row counts in each cell of its item with the item's weight there,
    and n_g is the group's fixed size over the items aligned with it, as with a mapping.
    """
    values = dict(values or {})
    alignments = None
    if alignment is not None:
        alignments = _alignment_options(alignment, group, item, groups)
        if universe is not None:
            msg = (
                "universe=: with alignment= the alignments' groups are the universe; give the "
                "groups through the alignments or through universe=, not both"
            )
            raise InvalidParameterError(msg)
    prep = _prepare(
        frame,
        metric,
        rank=rank,
        group=group if alignment is None else None,
        grouped=alignment is None,
        ranking=ranking,
        item=item,
        groups=groups,
        by=by,
        values=values,
        weight=weight,
        estimator=estimator,
        per_group=combo is None,
        universe=universe,
        size=size,
        sized=denominator == "size",
        listed_combos=isinstance(combo, list | tuple),
    )
    if alignments is not None:
        outputs = [metric, "n", COMBO, *estimator.outputs(metric)]
        prep.mapping = _join_alignment(prep, alignments, unaligned, outputs=outputs, listed=True)
    if binary_relevance:
        prep.checks.append(
            validate.binary(prep.frame, values["relevance"], "relevance", metric.upper())
        )
    columns = [_NUM, _ROWS, *([_DEN] if denominator == "sum" else [])]
    # the sums that count rows: exact integers without unit weights (a binary relevance's too)
    counts = [_ROWS, *([_DEN] if binary_relevance else [])] if _counts_rows(prep) else []

    def terms(ns: Any) -> list[Any]:  # per row, in Polars' own expressions on Polars
        weighted = _row_count(prep, ns)
        written = [numerator(ns).cast(ns.Float64) * weighted, weighted]
        if denominator == "sum":
            relevance = ns.col(values["relevance"])
            if _DEN in counts:  # 0 or 1, as the check requires
                written.append((relevance == 1).cast(ns.Int64))
            else:
                written.append(relevance.cast(ns.Float64) * weighted)
        return [term.alias(name) for term, name in zip(written, columns, strict=True)]

    sized = denominator == "size" or combo is None
    rows = native_step(prep.frame, "with_columns", terms)
    if denominator == "size" and prep.size == "items" and prep.mapping is None:
        # V_g divides by the distinct items: a replicate's own (summed in the same pass)
        assert prep.item is not None
        sums = prep.estimation.summed_sized(
            rows,
            prep.groups,
            list(columns),
            item=prep.item,
            numerator=_NUM,
            name=_SIZE,
            normalised=True,
        )
    else:
        sums = _over_units(prep, rows, prep.groups, list(columns), counts=counts)
        if sized:
            sums = _with_sizes(prep, sums)
    summed = [*columns, _SIZE] if sized and prep.mapping is None else list(columns)
    per_group, sized = _per_group(prep, sums, summed, metric, denominator)
    return _finish(prep, per_group, metric, combo, sized=sized)


@registered("ranking", "group", unit=UNITS, options=("size",))
@constraints(
    combo=COMBO_OPTION, size=Optional(Choice(SIZES)), **UNCERTAINTY, unaligned=Choice(UNALIGNED)
)
@shared_docs(uncertainty=_RANKING_UNCERTAINTY)
def exp(
    frame: Any,
    *,
    rank: str = "rank",
    group: Names = "group",
    ranking: Names | None = None,
    item: str | None = None,
    groups: GroupMapping | None = None,
    alignment: Any | None = None,
    unaligned: Unaligned = "unknown",
    universe: Universe | None = None,
    by: Names | None = None,
    size: Size | None = None,
    combo: Combos | None = "MinMaxRatio",
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Group exposure (EXP; Singh & Joachims 2018, Diaz et al. 2020).

    The per-group value is the group's average exposure,
    :math:`V_g = \sum_{x \in g} 1/\log_2(k_x + 1) \,/\, n_g`, summed over every row of the group
    in the partition (all its rankings). Statistical parity: "most fair" is 1 for
    ``MinMaxRatio``/``MaxMinRatio`` and 0 for the difference combos.

    Parameters
    ----------
    frame
        Polars DataFrame/LazyFrame, pandas DataFrame, pyarrow Table, DuckDB relation, PySpark
        DataFrame: one row per ranked item.
    rank
        Integer column with the item's 1-based position.
    group
        Group column, or a list of columns for intersectional groups. With ``groups=``, the
        name of the group column of the mapping (and of the per-group output).
    ranking
        Column(s) identifying distinct rankings. None: the whole partition is one ranking.
    item
        Item id column. Group sizes count distinct items when it is given.
    groups
        Optional mapping item → group (a dict, or a frame with columns ``item`` and ``group``
        as named by those parameters). The group universe and group sizes then come from it,
        including items that are never ranked.
    alignment
        Soft groups instead of ``group=`` columns or a mapping: a frame with the item column,
        a group column (named by ``group=``) and ``weight``, an item's weights summing to 1
        (TREC 2022's alignment vectors), or a list of such frames, one per dimension, whose
        cells weigh the product of the item's weights. A row counts in each of its item's
        groups with the item's weight there, and n_g is the group's weight summed over the
        items aligned with it (ranked or not), as with a mapping. Needs ``item=``; a hard
        alignment (weights 1) gives what the same mapping as ``groups=`` gives.
    unaligned
        A ranked item an alignment does not list: ``"unknown"`` (a level ``unknown`` of the
        dimension), ``"uniform"`` (spread evenly over its levels) or ``"drop"`` (left out).
    universe
        The groups the combos compare: a list of group values (tuples, one value per group
        column, for intersectional groups) or a frame of the group columns. None: every group
        of the frame (in any ``by`` partition). Never one partition's groups: a group of the
        universe that a partition lacks is in its per-group output with ``n`` = 0 and V_g = 0
        where V_g is a total (ERBE), else null (0/0), and a combo over a null V_g is null.
        Every group of the frame must be listed.
    size
        What n_g counts: ``"items"`` (distinct items, needs ``item``) or ``"rows"`` (each
        appearance its own item). None: items with ``item``; rows for one ranking per
        partition; with several rankings per partition and no ``item``, an error asks for
        the choice (if items recur across rankings, it changes the value).
    by
        Column(s): one independent result per partition.
    combo
        How per-group values are combined: one of ``COMBOS``, or a list of them (one row per
        combo, named in a ``combo`` column, all from the same per-group values). None returns
        the per-group values.
    weight, ci, n_boot, seed
        <<uncertainty>>

    Returns
    -------
    A frame of the input's kind: the ``by`` columns and ``exp`` (Float64), one row per
    partition, sorted by ``by``; with ``combo=None``, one row per (partition, group), with
    the group size ``n`` (Int64; Float64, the weighted size, with ``weight=``, and the summed
    weights with ``alignment=``). With ``ci``,
    ``exp_lo`` and ``exp_hi`` follow the value, and ``rankings`` (the rankings behind it; the
    interval is null below 2) and ``undefined_replicates`` (replicates whose value is
    undefined, e.g. where a group is not drawn, left out of the interval) close the row.

    Notes
    -----
    One aggregation over the rows and two small ones; O(n). On a LazyFrame the value checks
    and the distinct-item counts read the source in passes of their own, each streamed (the
    rows are never held): a lazy call reads its source 7 times at collect (15 with ``ci``).
    A group of the mapping with no items has
    V_g = 0 (size > 0). A null V_g (0/0) makes the combined value null, and so does a
    universe of fewer than two groups (nothing is compared).

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame({"rank": [1, 2, 3, 4], "group": ["a", "b", "a", "b"]})
    >>> fa.fair.exp(df, combo=None)  # a: (1 + 1/log2 4) / 2 rows
    shape: (2, 3)
    ┌───────┬──────────┬─────┐
    │ group ┆ exp      ┆ n   │
    │ ---   ┆ ---      ┆ --- │
    │ str   ┆ f64      ┆ i64 │
    ╞═══════╪══════════╪═════╡
    │ a     ┆ 0.75     ┆ 2   │
    │ b     ┆ 0.530803 ┆ 2   │
    └───────┴──────────┴─────┘
    >>> round(fa.fair.exp(df).item(), 6)
    0.707738
    """
    return _pooled_metric(
        frame,
        "exp",
        numerator=lambda ns: discount(ns.col(rank), ns),
        denominator="size",
        rank=rank,
        group=group,
        ranking=ranking,
        item=item,
        groups=groups,
        alignment=alignment,
        unaligned=unaligned,
        by=by,
        combo=combo,
        weight=weight,
        estimator=Estimator.requested(UNITS, ci, n_boot, seed),
        universe=universe,
        size=size,
    )


@registered("ranking", "group", unit=UNITS, roles={"relevance": "relevance"})
@constraints(combo=COMBO_OPTION, **UNCERTAINTY, unaligned=Choice(UNALIGNED))
def expu(
    frame: Any,
    *,
    rank: str = "rank",
    group: Names = "group",
    relevance: str = "relevance",
    ranking: Names | None = None,
    item: str | None = None,
    groups: GroupMapping | None = None,
    alignment: Any | None = None,
    unaligned: Unaligned = "unknown",
    universe: Universe | None = None,
    by: Names | None = None,
    combo: Combos | None = "MinMaxRatio",
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Exposure utility (EXPU; Singh & Joachims 2018, Raj & Ekstrand 2022).

    :math:`V_g = \sum_{x \in g} 1/\log_2(k_x+1) \,/\, \sum_{x \in g} \mathrm{rel}_x`: exposure
    proportional to relevance (the group size cancels). ``relevance`` must lie in [0, 1]. A
    group with exposure but no relevance has V_g = +inf; with neither, null.
    Parameters as for :func:`exp`.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame({"rank": [1, 2, 3, 4], "group": ["a", "b", "a", "b"],
    ...                    "relevance": [1.0, 0.5, 0.5, 1.0]})
    >>> fa.fair.expu(df, combo=None)["expu"].round(6).to_list()
    [1.0, 0.707738]
    """
    return _pooled_metric(
        frame,
        "expu",
        numerator=lambda ns: discount(ns.col(rank), ns),
        denominator="sum",
        rank=rank,
        group=group,
        ranking=ranking,
        item=item,
        groups=groups,
        alignment=alignment,
        unaligned=unaligned,
        by=by,
        combo=combo,
        weight=weight,
        estimator=Estimator.requested(UNITS, ci, n_boot, seed),
        universe=universe,
        values={"relevance": relevance},
    )


@registered("ranking", "group", unit=UNITS, roles={"relevance": "relevance", "ctr": "ctr"})
@constraints(combo=COMBO_OPTION, **UNCERTAINTY, unaligned=Choice(UNALIGNED))
def expru(
    frame: Any,
    *,
    rank: str = "rank",
    group: Names = "group",
    relevance: str = "relevance",
    ctr: str = "ctr",
    ranking: Names | None = None,
    item: str | None = None,
    groups: GroupMapping | None = None,
    alignment: Any | None = None,
    unaligned: Unaligned = "unknown",
    universe: Universe | None = None,
    by: Names | None = None,
    combo: Combos | None = "MinMaxRatio",
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Exposure realized utility (EXPRU; Singh & Joachims 2018).

    :math:`V_g = \sum_{x \in g} \mathrm{ctr}_x \,/\, \sum_{x \in g} \mathrm{rel}_x`: clicks
    proportional to relevance. No position weight, as in FairRankTune. ``relevance`` and
    ``ctr`` must lie in [0, 1]. Parameters as for :func:`exp`.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame({"rank": [1, 2, 3, 4], "group": ["a", "b", "a", "b"],
    ...                    "relevance": [1.0, 0.5, 0.5, 1.0], "ctr": [0.6, 0.3, 0.3, 0.1]})
    >>> fa.fair.expru(df, combo=None)["expru"].round(6).to_list()
    [0.6, 0.266667]
    """
    return _pooled_metric(
        frame,
        "expru",
        numerator=lambda ns: ns.col(ctr),
        denominator="sum",
        rank=rank,
        group=group,
        ranking=ranking,
        item=item,
        groups=groups,
        alignment=alignment,
        unaligned=unaligned,
        by=by,
        combo=combo,
        weight=weight,
        estimator=Estimator.requested(UNITS, ci, n_boot, seed),
        universe=universe,
        values={"relevance": relevance, "ctr": ctr},
    )


@registered("ranking", "group", unit=UNITS, options=("p", "size"))
@constraints(
    p=Real(0.0, 1.0, low_open=True),
    combo=COMBO_OPTION,
    size=Optional(Choice(SIZES)),
    **UNCERTAINTY,
    unaligned=Choice(UNALIGNED),
)
def awrf(
    frame: Any,
    *,
    rank: str = "rank",
    group: Names = "group",
    p: float = 0.5,
    ranking: Names | None = None,
    item: str | None = None,
    groups: GroupMapping | None = None,
    alignment: Any | None = None,
    unaligned: Unaligned = "unknown",
    universe: Universe | None = None,
    by: Names | None = None,
    size: Size | None = None,
    combo: Combos | None = "MinMaxRatio",
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Attention-weighted rank fairness (AWRF; Sapiezynski et al. 2019).

    :math:`V_g = \sum_{x \in g} 100\,p\,(1-p)^{k_x-1} \,/\, n_g`, the geometric attention model
    with ``p`` in (0, 1] the probability that a viewer stops at a position. Parameters as for
    :func:`exp`.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame({"rank": [1, 2, 3, 4], "group": ["a", "b", "a", "b"]})
    >>> fa.fair.awrf(df, p=0.5, combo=None)["awrf"].to_list()
    [31.25, 15.625]
    """
    p = float(p)

    def attention(ns: Any) -> Any:
        return 100.0 * p * (ns.lit(1.0 - p) ** (ns.col(rank).cast(ns.Float64) - 1.0))

    return _pooled_metric(
        frame,
        "awrf",
        numerator=attention,
        denominator="size",
        rank=rank,
        group=group,
        ranking=ranking,
        item=item,
        groups=groups,
        alignment=alignment,
        unaligned=unaligned,
        by=by,
        combo=combo,
        weight=weight,
        estimator=Estimator.requested(UNITS, ci, n_boot, seed),
        universe=universe,
        size=size,
    )


def _rbp_weight(rank: str, decay: float) -> validate.Written:
    """(1 − γ)·γ^(k−1), the rank-biased-precision exposure of position k."""
    return lambda ns: (1.0 - decay) * (ns.lit(decay) ** (ns.col(rank).cast(ns.Float64) - 1.0))


@registered("ranking", "group", unit=UNITS, options=("decay",))
@constraints(
    decay=Real(0.0, 1.0, high_open=True),
    combo=COMBO_OPTION,
    **UNCERTAINTY,
    unaligned=Choice(UNALIGNED),
)
def erbe(
    frame: Any,
    *,
    rank: str = "rank",
    group: Names = "group",
    decay: float = 0.5,
    ranking: Names | None = None,
    item: str | None = None,
    groups: GroupMapping | None = None,
    alignment: Any | None = None,
    unaligned: Unaligned = "unknown",
    universe: Universe | None = None,
    by: Names | None = None,
    combo: Combos | None = "MinMaxRatio",
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Exposure rank-biased-precision equality (ERBE; Kirnap et al. 2021).

    :math:`V_g = (1-\gamma) \sum_{x \in g} \gamma^{k_x-1}` with γ = ``decay`` in [0, 1):
    total RBP exposure, which should be equal across groups. Parameters as for :func:`exp`.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame({"rank": [1, 2, 3, 4], "group": ["a", "b", "a", "b"]})
    >>> fa.fair.erbe(df, decay=0.5, combo=None)["erbe"].to_list()
    [0.625, 0.3125]
    """
    decay = float(decay)
    return _pooled_metric(
        frame,
        "erbe",
        numerator=_rbp_weight(rank, decay),
        denominator="one",
        rank=rank,
        group=group,
        ranking=ranking,
        item=item,
        groups=groups,
        alignment=alignment,
        unaligned=unaligned,
        by=by,
        combo=combo,
        weight=weight,
        estimator=Estimator.requested(UNITS, ci, n_boot, seed),
        universe=universe,
    )


@registered("ranking", "group", unit=UNITS, options=("decay", "size"))
@constraints(
    decay=Real(0.0, 1.0, high_open=True),
    combo=COMBO_OPTION,
    size=Optional(Choice(SIZES)),
    **UNCERTAINTY,
    unaligned=Choice(UNALIGNED),
)
def erbp(
    frame: Any,
    *,
    rank: str = "rank",
    group: Names = "group",
    decay: float = 0.5,
    ranking: Names | None = None,
    item: str | None = None,
    groups: GroupMapping | None = None,
    alignment: Any | None = None,
    unaligned: Unaligned = "unknown",
    universe: Universe | None = None,
    by: Names | None = None,
    size: Size | None = None,
    combo: Combos | None = "MinMaxRatio",
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Exposure rank-biased-precision proportionality (ERBP; Kirnap et al. 2021).

    :math:`V_g = (1-\gamma) \sum_{x \in g} \gamma^{k_x-1} / n_g`: RBP exposure proportional
    to group size. Parameters as for :func:`erbe`.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "group": ["a", "b", "b"]})
    >>> fa.fair.erbp(df, decay=0.5, combo=None)["erbp"].to_list()
    [0.5, 0.1875]
    """
    decay = float(decay)
    return _pooled_metric(
        frame,
        "erbp",
        numerator=_rbp_weight(rank, decay),
        denominator="size",
        rank=rank,
        group=group,
        ranking=ranking,
        item=item,
        groups=groups,
        alignment=alignment,
        unaligned=unaligned,
        by=by,
        combo=combo,
        weight=weight,
        estimator=Estimator.requested(UNITS, ci, n_boot, seed),
        universe=universe,
        size=size,
    )


@registered(
    "ranking",
    "group",
    unit=UNITS,
    roles={"relevance": "relevant"},
    options=("decay",),
    note="(binary relevance)",
)
@constraints(
    decay=Real(0.0, 1.0, high_open=True),
    combo=COMBO_OPTION,
    **UNCERTAINTY,
    unaligned=Choice(UNALIGNED),
)
def erbr(
    frame: Any,
    *,
    rank: str = "rank",
    group: Names = "group",
    relevance: str = "relevance",
    decay: float = 0.5,
    ranking: Names | None = None,
    item: str | None = None,
    groups: GroupMapping | None = None,
    alignment: Any | None = None,
    unaligned: Unaligned = "unknown",
    universe: Universe | None = None,
    by: Names | None = None,
    combo: Combos | None = "MinMaxRatio",
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Exposure rank-biased-precision proportional to relevance (ERBR; Kirnap et al. 2021).

    :math:`V_g = (1-\gamma) \sum_{x \in g} \gamma^{k_x-1} / |\{x \in g : \mathrm{rel}_x = 1\}|`.
    ``relevance`` must be exactly 0 or 1. Parameters as for :func:`erbe`.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "group": ["a", "b", "b"],
    ...                    "relevance": [1, 1, 1]})
    >>> fa.fair.erbr(df, decay=0.5, combo=None)["erbr"].to_list()
    [0.5, 0.1875]
    """
    decay = float(decay)
    return _pooled_metric(
        frame,
        "erbr",
        numerator=_rbp_weight(rank, decay),
        denominator="sum",
        rank=rank,
        group=group,
        ranking=ranking,
        item=item,
        groups=groups,
        alignment=alignment,
        unaligned=unaligned,
        by=by,
        combo=combo,
        weight=weight,
        estimator=Estimator.requested(UNITS, ci, n_boot, seed),
        universe=universe,
        values={"relevance": relevance},
        binary_relevance=True,
    )


@registered("ranking", "group", unit=UNITS)
@constraints(combo=COMBO_OPTION, **UNCERTAINTY)
def arp(
    frame: Any,
    *,
    rank: str = "rank",
    group: Names = "group",
    ranking: Names | None = None,
    item: str | None = None,
    groups: GroupMapping | None = None,
    universe: Universe | None = None,
    by: Names | None = None,
    combo: Combos | None = "MinMaxRatio",
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Attribute rank parity (ARP; Cachel et al. 2022).

    The per-group value is the group's favoured-pair rate: of all mixed pairs (one item of g,
    one of another group, in the same ranking), the fraction where g's item is ranked higher,
    both counts summed over the rankings of the partition. Per ranking r with n_r items,
    n_{g,r} of them in g, and order k_x: won = Σ_{x∈g}(n_r − k_x) − n_{g,r}(n_{g,r}−1)/2 and
    mixed = n_{g,r}(n_r − n_{g,r}). Works on partial (top-k) rankings. A group with no mixed
    pair has a null V_g. Parameters as for :func:`exp`.

    Notes
    -----
    O(n) through counts: no pair is enumerated. FairRankTune sums per-ranking fractions over
    rankings instead (values up to the number of rankings); see the Differences page.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame({"rank": [1, 2, 3, 4], "group": ["a", "b", "a", "b"]})
    >>> fa.fair.arp(df, combo=None)["arp"].to_list()
    [0.75, 0.25]
    """
    prep = _prepare(
        frame,
        "arp",
        rank=rank,
        group=group,
        ranking=ranking,
        item=item,
        groups=groups,
        by=by,
        weight=weight,
        estimator=Estimator.requested(UNITS, ci, n_boot, seed),
        per_group=combo is None,
        universe=universe,
        listed_combos=isinstance(combo, list | tuple),
    )

    prep.estimation.source.require_ordered_windows("arp")
    per_ranking = per_order(
        prep.frame,
        prep.rankings,
        rank,
        lambda rows, order: _arp_per_ranking(prep, rows, order),
        in_memory=prep.estimation.source.in_memory,
    )
    summed = [_NUM, _DEN, _ROWS]
    sums = _over_units(prep, per_ranking, prep.groups, summed)
    if combo is None:
        # the replicates' sizes are not shown (ARP's V_g does not divide by them)
        sums = _with_sizes(prep, sums)
        summed += [_SIZE] if prep.mapping is None else []
    per_group, sized = _per_group(prep, sums, summed, "arp", "sum")
    return _finish(prep, per_group, "arp", combo, sized=sized)


def _arp_per_ranking(
    prep: _Prepared, frame: nw.LazyFrame[Any], order: nw.Expr
) -> nw.LazyFrame[Any]:
    """ARP's won and mixed pairs per (ranking, group), from each row's ``order``.

    Also the ranking's length (``_RANKINGS``).
    """
    counted = aggregate(
        frame,
        [*prep.rankings, *prep.groups],
        order.cast(nw.Float64).sum().alias("__fa_sum_order"),
        nw.len().alias("__fa_ngr"),
        *([nw.col(prep.estimation.weight).max()] if prep.estimation.weight else []),
    )

    def sized(ns: Any) -> list[Any]:  # in Polars' own expressions on Polars (native_step)
        ngr = ns.col("__fa_ngr").cast(ns.Float64)
        return [ngr.alias("__fa_ngr"), over(ngr.sum(), prep.rankings).alias(_RANKINGS)]

    def pairs(ns: Any) -> list[Any]:
        ngr, length = ns.col("__fa_ngr"), ns.col(_RANKINGS)
        weighted = prep.estimation.unit_weight(ns=ns)
        # Σ_{x∈g}(n_r − k_x) − n_g(n_g − 1)/2: pairs won against other groups
        won = ngr * length - ns.col("__fa_sum_order") - ngr * (ngr - 1.0) / 2.0
        mixed = ngr * (length - ngr)
        return [
            (won * weighted).alias(_NUM),
            (mixed * weighted).alias(_DEN),
            (ngr * weighted).alias(_ROWS),
        ]

    return native_step(native_step(counted, "with_columns", sized), "with_columns", pairs)


@registered(
    "ranking",
    "single",
    unit=UNITS,
    best="lower is better (0 = top prefixes mirror the groups)",
    range="[0, inf)",
)
@constraints(**UNCERTAINTY)
def ndkl(
    frame: Any,
    *,
    rank: str = "rank",
    group: Names = "group",
    ranking: Names | None = None,
    item: str | None = None,
    groups: GroupMapping | None = None,
    universe: Universe | None = None,
    target: Target | None = None,
    by: Names | None = None,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Normalized discounted KL-divergence (NDKL; Geyik et al. 2019).

    For each ranking, with P_i the group proportions of its top-i items and D the reference
    (desired) proportions,
    :math:`\mathrm{NDKL} = \sum_i w_i\,\mathrm{KL}(P_i \| D) / \sum_i w_i`,
    :math:`w_i = 1/\log_2(i+1)`, natural log, 0·ln 0 = 0 (exact, no smoothing). 0 is most fair.
    The value of a partition is the mean over its rankings; pass ``by=`` the ranking column
    for one value per ranking. Parameters as for :func:`exp`: a ranking's ``weight`` weighs
    it in the mean, and ``ci`` gives a bootstrap interval over the rankings.

    D is ``target=``: a mapping group → share (shares in [0, 1] summing to 1), or a frame of
    the group column(s) and ``share`` (optionally per ``by`` or ``ranking`` column: one
    distribution each), or ``"ranking"``: each ranking's own group mix (FairRankTune's
    reference; a ranking holding one group then scores 0). Without ``target``, D is the
    universe's shares in the whole frame: the mapping's proportions with ``groups=``, else
    each group's distinct items (``item``) or rows over every partition, never one
    partition's or one ranking's. NDKL is then null where the universe has fewer than two
    groups, or holds a group (``universe=``) with no row in the frame: an absent group has
    no share to compare with, and must not read as parity. A ranking whose top prefixes hold
    a group with a share of 0 scores +inf.

    Notes
    -----
    Windows ordered by position: the order i of a row in its ranking and the running count c
    of its group (both the rank of the position within their partition). With
    F(i) = i·KL(P_i‖D) = Σ_g c_g ln c_g − i ln i − Σ_g c_g ln D_g, its step at row j,
    δ_j = Δ(c ln c) − Δ(i ln i) − ln D_{g_j}, and H(i) = Σ_{i'≤i} w_i'/i',
    Σ_i w_i KL(P_i‖D) = Σ_j δ_j (H(n) − H(j−1)): each ranking needs Σ δ_j and Σ δ_j H(j−1);
    H(n) and Σ w_i depend on its length n alone (its orders are 1..n), and a table over the
    distinct orders gives them and H(j−1) (on Spark, a running sum along the ranking); no
    O(n·G) state at all. δ_j is computed in one expression, ln(1 + (c − iD)/(iD)) plus a
    difference of ψ(x) − 1 = (x − 1)·ln(x/(x − 1)) − 1 (a series for large x), that stays
    small where the prefix holds about its share: summing its large parts apart would cancel
    terms of size n·ln n (a relative error of 5e-5 at 10^7 rows; about 1e-13 this way).
    FairRankTune adds ε = 1e-7 to both distributions and accepts one ranking only.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame({"rank": [1, 2, 3, 4], "group": ["a", "a", "b", "b"]})
    >>> round(fa.fair.ndkl(df).item(), 6)
    0.452369
    """
    prep = _prepare(
        frame,
        "ndkl",
        rank=rank,
        group=group,
        ranking=ranking,
        item=item,
        groups=groups,
        by=by,
        weight=weight,
        estimator=Estimator.requested(UNITS, ci, n_boot, seed),
        universe=universe,
    )
    reference = _reference(prep, target, listed=universe is not None)
    prep.estimation.source.require_ordered_windows("ndkl")
    i = nw.col(_ORDER).cast(nw.Float64)
    w = discount(nw.col(_ORDER))
    # along a ranking, by its rows' orders i: the running count of the row's group, and the
    # terms w_i / i of H (with H(j − 1), the sum before the row) and w_i
    per_ranking = running_along(
        prep.frame,
        prep.rankings,
        rank,
        order=_ORDER,
        counts={"__fa_c": prep.groups},
        terms={"__fa_term": w / i, "__fa_w": w},
        running="__fa_term",
        keep=[prep.estimation.weight] if prep.estimation.weight else [],
        then=lambda rows, totals, carried: _ndkl_sums(prep, reference, rows, totals, carried),
        in_memory=prep.estimation.source.in_memory,
    )

    def value(ns: Any) -> Any:
        # Σ_i w_i KL(P_i ‖ D) = Σ_j δ_j (H(n) − H(j − 1)), over Σ_i w_i
        c = ns.col
        divergence = (c("__fa_h") * c("__fa_delta") - c("__fa_delta_h")) / c("__fa_z")
        # a group with no reference share in a ranking's top prefixes: KL(P_i ‖ D) is +inf
        off = ns.when(c(_OFF_TARGET) > 0).then(ns.lit(float("inf"))).otherwise(divergence)
        return off.clip(lower_bound=0.0)

    # the mean over rankings, each weighted by its unit weight (and count in a replicate)
    result = _mean_over_rankings(prep, per_ranking, value, "ndkl")
    if reference.unknown is not None:
        # a universe group absent from the whole frame has no share to compare with
        unknown = nw.col(_UNKNOWN) > 0
        result = result.join(reference.unknown, how="cross").with_columns(
            nw.when(unknown).then(null_float()).otherwise(nw.col("ndkl")).alias("ndkl")
        )
    return _conclude(prep, result, "ndkl")


_SHARE = "__fa_share"
_OFF_TARGET = "__fa_off_target"
_UNKNOWN = "__fa_unknown"


@dataclass(frozen=True)
class _Reference:
    """NDKL's reference distribution D.

    ``shares``: the share of each group (column ``_SHARE``), per the columns ``on`` (the
    groups, and the partition or ranking columns of a target frame); None: each ranking's own
    mix. ``unknown``: one row, positive where NDKL is undefined (null): a group of the
    universe has no share (absent from the whole frame, no target given), or the universe has
    fewer than two groups (nothing to compare); None where a target is given.
    """

    shares: nw.LazyFrame[Any] | None
    on: list[str]
    unknown: nw.LazyFrame[Any] | None = None


def _reference(prep: _Prepared, target: Target | None, *, listed: bool) -> _Reference:
    """D (SPEC §1): ``target=``, else the mapping's shares, else the universe's in the frame.

    The universe's shares are the groups' sizes over the whole frame (every partition), as
    the group metrics count them: distinct items with ``item=``, else (weighted) rows.
    """
    groups = prep.groups
    if isinstance(target, str) and target == "ranking":
        return _Reference(None, groups)
    if target is not None:
        return _target(prep, target, listed=listed)
    if prep.mapping is not None:
        sizes = prep.mapping.group_by(groups).agg(nw.len().alias("__fa_ng"))
    else:
        sizes = prep.estimation.group_sizes(prep.frame, groups, item=prep.item, name="__fa_ng")
    if prep.universe is not None and prep.mapping is None:
        sizes = prep.universe.join(sizes, on=groups, how="left")

    def shared(ns: Any) -> list[Any]:  # in Polars' own expressions on Polars
        ng = ns.col("__fa_ng").cast(ns.Float64).fill_null(0.0)
        return [*map(ns.col, groups), (ng / ng.sum()).alias(_SHARE)]

    def unshared(ns: Any) -> list[Any]:  # no share, or fewer than two groups
        none = (ns.col(_SHARE) == 0).cast(ns.Int64).sum()
        return [(none + (ns.len() < 2).cast(ns.Int64)).alias(_UNKNOWN)]

    shares = cached(native_step(sizes, "select", shared))
    return _Reference(shares, groups, native_step(shares, "select", unshared))


def _target(prep: _Prepared, target: Any, *, listed: bool) -> _Reference:
    """A desired distribution given as a mapping group → share, or a frame of shares.

    Its checks (:func:`target_shares`) join the call's, with the universe when listed.
    """
    schema = prep.frame.collect_schema()
    shares, keys, checks = target_shares(
        target,
        groups=prep.groups,
        schema=schema,
        keys=prep.rankings,
        source=prep.estimation.source,
        present=prep.frame,
        universe=prep.universe if listed else None,
    )
    prep.checks.extend(checks)
    return _Reference(shares.rename({"share": _SHARE}), [*keys, *prep.groups])


def _ndkl_sums(
    prep: _Prepared,
    reference: _Reference,
    rows: nw.LazyFrame[Any],
    totals: nw.LazyFrame[Any] | None,
    carried: Sequence[validate.Written],
) -> nw.LazyFrame[Any]:
    """Per ranking, NDKL's sums (notes of :func:`ndkl`), with ``carried`` (:func:`running_along`).

    ``rows`` carry each row's order ``_ORDER``, the running count of its group ``__fa_c``
    and the sum of the terms w_i / i before the row, ``__fa_term_before`` (H(j − 1)). Each
    row's step δ_j of F(i) = i·KL(P_i ‖ D) is computed in one expression that stays small
    where the prefix mirrors D (:func:`_ndkl_step`); a ranking's sums are Σ δ_j and
    Σ δ_j H(j − 1). Its totals H(n) and Σ w_i come from the ``totals`` table of
    :func:`~frameaudit._engine.running_along` at its length n, or, without it, from the
    rows' own term columns.
    """
    names = {"__fa_term": "__fa_h", "__fa_w": "__fa_z"}
    summed = [] if totals is not None else list(names)
    if reference.shares is None:  # each ranking's own mix
        own = over(nw.len(), [*prep.rankings, *prep.groups]).cast(nw.Float64) / over(
            nw.len(), prep.rankings
        ).cast(nw.Float64)
        rows = rows.with_columns(own.alias(_SHARE), nw.lit(0, dtype=nw.Int64).alias(_OFF_TARGET))
    else:
        share = nw.col(_SHARE)
        rows = rows.join(reference.shares, on=reference.on, how="left").with_columns(
            (share.is_null() | (share == 0)).cast(nw.Int64).alias(_OFF_TARGET)
        )
    rows = _ndkl_step(rows, "__fa_c", _ORDER, _SHARE).with_columns(
        (nw.col("__fa_delta") * nw.col("__fa_term_before")).alias("__fa_delta_h")
    )
    weight = [prep.estimation.weight] if prep.estimation.weight else []
    sums = ["__fa_delta", "__fa_delta_h", *summed]

    def kept(ns: Any) -> list[Any]:  # the flags, the weight and what the engine carries
        return [ns.col(c).max() for c in (_OFF_TARGET, *weight)] + [c(ns) for c in carried]

    # every sum is of Float64 terms (said, so that the long plan's schema is not resolved)
    groups = exact_sums(
        rows,
        [*prep.rankings, *prep.groups],
        sums,
        also=lambda ns: [ns.len().cast(ns.Int64).alias("__fa_ngr"), *kept(ns)],
        floats=sums,
    )
    ranked = exact_sums(
        groups,
        prep.rankings,
        sums,
        also=lambda ns: [ns.col("__fa_ngr").sum().alias(_RANKINGS), *kept(ns)],
        floats=sums,
    ).rename({term: name for term, name in names.items() if term in summed})
    if totals is None:
        return ranked
    at_length = totals.select(
        nw.col(_ORDER).alias(_RANKINGS), *(nw.col(term).alias(t) for term, t in names.items())
    )
    return ranked.join(at_length, on=_RANKINGS, how="left")


# 1/(k(k+1)), k = 1..6: ψ(x) − 1 = −Σ_k x^(−k)/(k(k+1)) to double precision for x ≥ 1024
# (below, the direct form's absolute error of about 1e-16 reaches a few rows a ranking)
_PSI_SERIES = tuple(1.0 / (k * (k + 1)) for k in range(1, 7))
_PSI_SERIES_FROM = 1024.0


def _psi_operands(ns: Any, value: Any, name: str) -> list[Any]:
    """The columns :func:`_psi_less_one` reads for x = ``value``: x, 1/x and 1/(x − 1)."""
    x = value.cast(ns.Float64)
    return [x.alias(name), (1.0 / x).alias(f"{name}_t"), (1.0 / (x - 1.0)).alias(f"{name}_s")]


def _psi_less_one(ns: Any, name: str) -> Any:
    """ψ(x) − 1 with ψ(x) = (x − 1)·ln(x/(x − 1)), ψ(1) = 0: Δ(x ln x) = ln x + ψ(x).

    Close to 0 for large x (−1/(2x) − 1/(6x²) − ...): its series there, so that the
    difference of two values keeps its digits. x, 1/x and 1/(x − 1) are the columns of
    :func:`_psi_operands` named after ``name``.
    """
    x, t, s = ns.col(name), ns.col(f"{name}_t"), ns.col(f"{name}_s")
    series = ns.lit(_PSI_SERIES[-1])
    for coefficient in reversed(_PSI_SERIES[:-1]):
        series = series * t + coefficient
    direct = (x - 1.0) * log1p(s) - 1.0
    return (
        ns.when(x >= _PSI_SERIES_FROM)
        .then(-(series * t))
        .when(x > 1.0)
        .then(direct)
        .otherwise(ns.lit(-1.0))
    )


def _ndkl_step(rows: nw.LazyFrame[Any], count: str, order: str, share: str) -> nw.LazyFrame[Any]:
    """``rows`` with the step δ_j (``__fa_delta``) of F(i) = Σ c_g ln c_g − i ln i − Σ c_g ln D_g.

    δ_j = Δ(c ln c) − Δ(i ln i) − ln D = ln(c/(iD)) + (ψ(c) − 1) − (ψ(i) − 1), with c the
    running count of the row's group (column ``count``), i its order and D its group's share:
    small where the prefix holds about its share (ln(c/(iD)) as ln(1 + (c − iD)/(iD))), so
    that a long ranking's sums do not cancel terms of size i·ln i. 0 where D = 0 (the ranking
    is then +inf: ``_OFF_TARGET``). The operands are columns first: inlined, the formula
    repeats each of them up to a dozen times, for every engine to build and factor out again.
    Both steps in Polars' own expressions on Polars (:func:`~frameaudit._engine.native_step`).
    """

    def operands(ns: Any) -> list[Any]:
        expected = ns.col(order).cast(ns.Float64) * ns.col(share)
        return [
            *_psi_operands(ns, ns.col(count), "__fa_cf"),
            *_psi_operands(ns, ns.col(order), "__fa_if"),
            ((ns.col(count).cast(ns.Float64) - expected) / expected).alias("__fa_excess"),
        ]

    def delta(ns: Any) -> list[Any]:
        excess = log1p(ns.col("__fa_excess"))
        step = excess + _psi_less_one(ns, "__fa_cf") - _psi_less_one(ns, "__fa_if")
        return [ns.when(ns.col(share) > 0).then(step).otherwise(ns.lit(0.0)).alias("__fa_delta")]

    helpers = [f"{x}{end}" for x in ("__fa_cf", "__fa_if") for end in ("", "_t", "_s")]
    stepped = native_step(native_step(rows, "with_columns", operands), "with_columns", delta)
    return stepped.drop(*helpers, "__fa_excess")


Discount = Literal["log", "log2", "rbp"]
DISCOUNTS: tuple[Discount, ...] = get_args(Discount)


def position_weight(rank: str, kind: Discount, patience: float) -> nw.Expr:
    """The attention position k gets (Float64).

    TREC's 1/log2(max(k, 2)) (``"log"``), the usual 1/log2(k+1) (``"log2"``) or RBP's
    patience^(k−1) (``"rbp"``).
    """
    k = nw.col(rank).cast(nw.Float64)
    if kind == "log":
        return 1.0 / nw.when(k < 2.0).then(nw.lit(2.0)).otherwise(k).log(base=2)
    if kind == "log2":
        logarithmic: nw.Expr = discount(nw.col(rank))
        return logarithmic
    return nw.lit(float(patience)) ** (k - 1.0)


_ATTENTION = "__fa_attention"
_WANTED = "__fa_wanted"


@registered(
    "ranking",
    "single",
    unit=UNITS,
    best="higher is better (1 = attention matches the target)",
    range="[0, 1]",
    options=("discount", "patience"),
)
@constraints(
    discount=Choice(DISCOUNTS),
    patience=Real(0.0, 1.0, low_open=True, high_open=True),
    unaligned=Choice(UNALIGNED),
    **UNCERTAINTY,
)
@shared_docs(uncertainty=_RANKING_UNCERTAINTY)
def awrf_js(
    frame: Any,
    *,
    rank: str = "rank",
    group: Names = "group",
    ranking: Names | None = None,
    item: str | None = None,
    groups: GroupMapping | None = None,
    alignment: Any | None = None,
    unaligned: Unaligned = "unknown",
    universe: Universe | None = None,
    target: Target | None = None,
    discount: Discount = "log",
    patience: float = 0.5,
    by: Names | None = None,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Attention-weighted rank fairness against a target, as TREC scores it: 1 − JS².

    Per ranking, a group's attention is the summed position weight of its items (TREC's
    1/log2(max(k, 2)) by default); the attention distribution a (over the groups) is
    compared with the target distribution D by the Jensen–Shannon divergence, natural log:
    :math:`\mathrm{AWRF_{JS}} = 1 - \mathrm{JS}(a, D)^2`, where JS is the distance (the
    TREC Fair Ranking track's task-1 fairness score, 2021 and 2022). 1 is best; the lowest
    value is 1 − ln 2 ≈ 0.307. The value of a partition is the mean over its rankings
    (``by=`` the ranking column: one value per ranking).

    Parameters
    ----------
    frame
        One row per ranked item (a run).
    rank, group, ranking, item, groups, universe
        The column roles, the mapping and the group universe, as for :func:`exp`.
    alignment
        Soft groups instead of ``group=`` columns: a frame with the item column, a group
        column (named by ``group=``) and ``weight``, an item's weights summing to 1 (TREC
        2022's alignment vectors), or a list of such frames, one per dimension, whose cells
        weigh the product of the item's weights. Needs ``item=`` and ``target=``.
    unaligned
        An item an alignment does not list: ``"unknown"`` (a level ``unknown`` of the
        dimension), ``"uniform"`` (spread evenly over its levels) or ``"drop"`` (no
        attention: what the TREC code does with a page missing from its alignments).
    target
        D: a mapping group → share (summing to 1), a frame of the group column(s) and
        ``share`` (optionally per ``by`` or ``ranking`` column, e.g. one per query), or
        ``"ranking"`` (each ranking's own group mix). Default: the universe's shares in the
        whole frame, as NDKL's (then null where a universe group has no row). A group of
        the data needs a share (0 is allowed).
    discount
        ``"log"``: 1/log2(max(k, 2)), TREC's; ``"log2"``: 1/log2(k+1); ``"rbp"``:
        patience^(k−1).
    patience
        RBP's patience in (0, 1) (``discount="rbp"``).
    by
        Partition column(s).
    weight, ci, n_boot, seed
        <<uncertainty>>

    Returns
    -------
    A frame of the input's kind: the ``by`` columns and ``awrf_js`` (Float64), one row per
    partition (with ``ci``: ``awrf_js_lo``, ``awrf_js_hi``, ``rankings`` and
    ``undefined_replicates``). Null where a ranking's items get no attention at all
    (every item dropped), and as for NDKL's default target.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> run = pl.DataFrame({"rank": [1, 2, 3, 4], "group": ["a", "a", "b", "b"]})
    >>> round(fa.fair.awrf_js(run, target={"a": 0.5, "b": 0.5}).item(), 6)
    0.990145
    """
    alignments = None
    if alignment is not None:
        alignments = _alignment_options(alignment, group, item, groups)
        if target is None or (isinstance(target, str) and target == "ranking"):
            msg = (
                f"target={target!r}: with alignment= give the target distribution over the "
                "alignment's groups (a mapping or a frame of shares)"
            )
            raise InvalidParameterError(msg)
    estimator = Estimator.requested(UNITS, ci, n_boot, seed)
    prep = _prepare(
        frame,
        "awrf_js",
        rank=rank,
        group=group if alignment is None else None,
        grouped=alignment is None,
        ranking=ranking,
        item=item,
        groups=groups,
        by=by,
        weight=weight,
        estimator=estimator,
        universe=universe,
    )
    if alignments is None:
        prep.frame = prep.frame.with_columns(nw.lit(1.0).alias(SHARE))
    else:
        outputs = ["awrf_js", *estimator.outputs("awrf_js")]
        _join_alignment(prep, alignments, unaligned, outputs=outputs, listed=False)
    reference = _reference(prep, target, listed=universe is not None)
    rankings, groups_ = prep.rankings, prep.groups
    attention = position_weight(rank, discount, patience) * nw.col(SHARE)
    rows = prep.frame.with_columns(attention.alias(_ATTENTION))
    kept = prep.estimation.weight_kept
    per_group = exact_sums(rows, [*rankings, *groups_], [_ATTENTION, SHARE], also=kept)
    totals = exact_sums(per_group, rankings, [_ATTENTION, SHARE], also=kept)
    if reference.shares is None:  # each ranking's own mix
        wanted = per_group.join(
            totals.select(*rankings, nw.col(SHARE).alias("__fa_all")), on=rankings
        ).select(*rankings, *groups_, (nw.col(SHARE) / nw.col("__fa_all")).alias(_WANTED))
    else:
        keys = [c for c in reference.on if c not in groups_]
        ranked = totals.select(rankings)
        wanted = (
            ranked.join(reference.shares, on=keys, how="left")
            if keys
            else ranked.join(reference.shares, how="cross")
        ).select(*rankings, *groups_, nw.col(_SHARE).alias(_WANTED))
    cells_ = [*rankings, *groups_]
    grid = distinct(nw.concat([per_group.select(cells_), wanted.select(cells_)], how="vertical"))
    grid = (
        grid.join(per_group.select(*cells_, _ATTENTION), on=cells_, how="left")
        .join(wanted, on=cells_, how="left")
        .join(totals.select(*rankings, nw.col(_ATTENTION).alias("__fa_total")), on=rankings)
    )
    a = nw.col(_ATTENTION).fill_null(0.0) / nw.col("__fa_total")
    d = nw.col(_WANTED).fill_null(0.0)
    half = 0.5
    # ½ a ln(2a/(a+d)) + ½ d ln(2d/(a+d)), each 0 where its weight is 0
    term = nw.when(a > 0).then(half * a * (2.0 * a / (a + d)).log()).otherwise(0.0) + nw.when(
        d > 0
    ).then(half * d * (2.0 * d / (a + d)).log()).otherwise(0.0)
    weighted = [prep.estimation.weight] if prep.estimation.weight else []
    divergence = exact_sums(grid.with_columns(term.alias("__fa_js")), rankings, ["__fa_js"]).join(
        totals.select(*rankings, nw.col(_ATTENTION).alias("__fa_total"), *weighted), on=rankings
    )

    def value(ns: Any) -> Any:
        total, js = ns.col("__fa_total"), ns.col("__fa_js")
        return ns.when(total > 0).then(1.0 - js).otherwise(ns.lit(None, dtype=ns.Float64))

    result = _mean_over_rankings(prep, divergence, value, "awrf_js")
    if reference.unknown is not None:
        unknown = nw.col(_UNKNOWN) > 0
        result = result.join(reference.unknown, how="cross").with_columns(
            nw.when(unknown).then(null_float()).otherwise(nw.col("awrf_js")).alias("awrf_js")
        )
    return _conclude(prep, result, "awrf_js")


Gain = Literal["linear", "exponential"]
GAINS: tuple[Gain, ...] = get_args(Gain)
_GAIN = "__fa_gain"
_IDEAL = "__fa_ideal"


@registered(
    "ranking",
    "single",
    unit=UNITS,
    best="higher is better (1 = the ideal order)",
    range="[0, 1]",
    roles={"relevance": "relevance"},
    options=("k",),
    grouped=False,
)
@constraints(
    k=Optional(Integer(1)),
    gain=Choice(GAINS),
    discount=Choice(("log2", "log")),
    combo=COMBO_OPTION,
    **UNCERTAINTY,
)
@shared_docs(uncertainty=_RANKING_UNCERTAINTY)
def ndcg(
    frame: Any,
    *,
    rank: str = "rank",
    ranking: Names | None = None,
    sample: str | None = None,
    item: str | None = None,
    relevance: str = "relevance",
    judgments: Any | None = None,
    k: int | None = None,
    gain: Gain = "linear",
    discount: Literal["log2", "log"] = "log2",
    group: Names | None = None,
    universe: Universe | None = None,
    combo: Combos | None = "MinMaxRatio",
    by: Names | None = None,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Normalised discounted cumulative gain per ranking, its mean, and per group of rankings.

    :math:`\mathrm{DCG@k} = \sum_{j \le k} g(\mathrm{rel}_j)\,d(j)` over a ranking's
    positions j, with the gain g linear (rel) or exponential (2^rel − 1) and the discount d
    1/log2(j+1) (``"log2"``, trec_eval's and ranx's) or 1/log2(max(j, 2)) (``"log"``, the
    TREC Fair Ranking track's); nDCG@k divides by the DCG@k of the ideal order: the query's
    judged grades in decreasing order (``judgments=``), else the ranking's own relevance
    values. A ranking with no relevant item scores 0 (as trec_eval and ranx score it). The
    value of a partition is the mean over its rankings (queries the run does not rank are not
    scored).

    With ``group=``, the groups are the rankings' (a query's or a user's group: one value per
    ranking): each group's mean nDCG, the quality of service each group gets, combined by
    ``combo`` as the group metrics are (``combo=None``: the per-group values, with ``n`` the
    group's rankings).

    Parameters
    ----------
    frame
        One row per ranked item.
    rank, ranking, item
        The position (1-based), the ranking (query) column(s) and the item id, as for
        :func:`exp`. ``item`` is needed with ``judgments``.
    sample
        A stochastic ranker's sample column: each (query, sample) is a ranking, judged by the
        query's judgments.
    relevance
        Without ``judgments``: the run's relevance column (non-negative grades); with them,
        the judgments' grade column.
    judgments
        Graded judgments: a frame with the query column(s) (those of ``ranking`` it holds),
        the item column and ``relevance``; an item it does not judge has grade 0.
    k
        The cutoff (None: every position).
    gain
        ``"linear"`` (rel) or ``"exponential"`` (2^rel − 1).
    discount
        ``"log2"``: 1/log2(j+1); ``"log"``: 1/log2(max(j, 2)) (TREC Fair Ranking).
    group
        Column(s) of the rankings' groups: one value within each ranking.
    universe
        The groups the combo compares (as for :func:`exp`).
    combo
        With ``group``: one or more of :data:`COMBOS`, or None.
    by
        Partition column(s).
    weight, ci, n_boot, seed
        <<uncertainty>>

    Returns
    -------
    A frame of the input's kind: ``by`` and ``ndcg`` per partition; with ``group`` and a
    combo, the combined value (several combos: a ``combo`` column); with ``combo=None``, one
    row per group with ``n``. With ``ci``: ``ndcg_lo``, ``ndcg_hi``, ``rankings`` and
    ``undefined_replicates``.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> run = pl.DataFrame({"rank": [1, 2, 3], "relevance": [0.0, 1.0, 0.5]})
    >>> round(fa.fair.ndcg(run).item(), 6)  # (1/log2 3 + 0.5/2) / (1 + 0.5/log2 3)
    0.669672
    """
    estimator = Estimator.requested(UNITS, ci, n_boot, seed)
    if judgments is not None:
        if item is None:
            raise InvalidParameterError("judgments=: give item= the item column to join on")
        # the grade column is the judgments': no column of the run may play it too
        owners(
            {
                r.parameter: column_names(r)
                for r in (
                    Role("rank", rank),
                    Role("ranking", ranking, many=True, optional=True),
                    Role("item", item),
                    Role("group", group, many=True, optional=True),
                    Role("by", by, many=True, optional=True),
                    Role("weight", weight, optional=True),
                    Role("relevance", relevance),
                )
            },
            sharing=[frozenset(("by", "ranking"))],
        )
    per_group = group is not None and combo is None
    queries = column_names(Role("ranking", ranking, many=True, optional=True))
    if sample is not None and not queries:
        raise InvalidParameterError(f"sample={sample!r}: give ranking= the query column(s)")
    prep = _prepare(
        frame,
        "ndcg",
        rank=rank,
        group=group,
        grouped=group is not None,
        ranking=ranking if sample is None else [*queries, sample],
        item=item,
        groups=None,
        by=by,
        values={} if judgments is not None else {"relevance": relevance},
        grades=None,
        weight=weight,
        estimator=estimator,
        per_group=per_group,
        universe=universe,
        listed_combos=isinstance(combo, list | tuple),
    )
    prep.estimation.source.require_ordered_windows("ndcg")  # the ideal order
    rankings = prep.rankings
    if group is not None:
        for column in prep.groups:
            prep.checks.append(
                validate.constant_within(prep.frame, rankings, column, "group", "ranking")
            )
    if judgments is None:
        rows = prep.frame.with_columns(nw.col(relevance).cast(nw.Float64).alias(_GAIN))
        ideal = _ideal_dcg(rows, rankings, k=k, gain=gain, kind=discount)
        on = rankings
    else:
        judged, on = _judged_grades(prep, judgments, relevance, queries=queries)
        assert item is not None
        rows = prep.frame.join(judged, on=[*on, item], how="left").with_columns(
            nw.col(_GAIN).fill_null(0.0)
        )
        ideal = _ideal_dcg(judged, on, k=k, gain=gain, kind=discount)
    gained = _gained(nw.col(_GAIN), gain) * position_weight(rank, discount, 0.5)
    if k is not None:  # a position beyond the cutoff gains nothing; its ranking still counts
        gained = nw.when(nw.col(rank) <= k).then(gained).otherwise(0.0)
    keys = [*rankings, *(prep.groups if group is not None else [])]
    dcg = exact_sums(
        rows.with_columns(gained.alias("__fa_dcg")),
        keys,
        ["__fa_dcg"],
        also=prep.estimation.weight_kept,
    )
    scored = dcg.join(ideal, on=on, how="left").with_columns(nw.col(_IDEAL).fill_null(0.0))

    def value(ns: Any) -> Any:
        ideal = ns.col(_IDEAL)
        return ns.when(ideal > 0).then(ns.col("__fa_dcg") / ideal).otherwise(ns.lit(0.0))

    if group is None:
        return _conclude(prep, _mean_over_rankings(prep, scored, value, "ndcg"), "ndcg")
    terms = _weighted_terms(prep, scored, value, "ndcg")
    sums = _over_units(prep, terms, prep.groups, [_NUM, _DEN])
    # n: the group's (weighted) rankings in the data, in every replicate
    cell = [*prep.estimation.partition, *prep.groups]
    sizes = exact_sums(terms.with_columns(nw.col(_DEN).alias(_SIZE)), cell, [_SIZE])
    sums = sums.join(sizes, on=cell, how="left")
    values, sized = _per_group(prep, sums, [_NUM, _DEN, _SIZE], "ndcg", "sum")
    return _finish(prep, values, "ndcg", combo, sized=sized)


def _gained(grade: nw.Expr, gain: Gain) -> nw.Expr:
    """A grade's gain: rel, or 2^rel − 1."""
    return grade if gain == "linear" else nw.lit(2.0) ** grade - 1.0


def _judged_grades(
    prep: _Prepared, judgments: Any, relevance: str, *, queries: list[str]
) -> tuple[nw.LazyFrame[Any], list[str]]:
    """The judgments' grades (column ``_GAIN``), and the query columns they are keyed by.

    Keyed by the ``ranking=`` columns (the query; without them, the ``by=`` columns) and the
    item; their checks join the call's.
    """
    assert prep.item is not None
    # the query: ranking=, else the partition (by= the query: one ranking a partition)
    on = list(queries or prep.estimation.by)
    if not on:
        raise InvalidParameterError("judgments=: give ranking= the query column(s) to join on")
    schema = prep.frame.collect_schema()
    frame, checks, _ = judged(
        judgments, prep.estimation.source, schema, queries=on, item=prep.item, relevance=relevance
    )
    prep.checks += checks
    return frame.select(*on, prep.item, nw.col(relevance).cast(nw.Float64).alias(_GAIN)), on


def _ideal_dcg(
    rows: nw.LazyFrame[Any], keys: Sequence[str], *, k: int | None, gain: Gain, kind: Discount
) -> nw.LazyFrame[Any]:
    """Per ``keys``: the DCG of the grades ``_GAIN`` in decreasing order, to the cutoff."""
    keys = list(keys)
    placed = rows.select(*keys, _GAIN).with_columns((-nw.col(_GAIN)).alias("__fa_down"))
    placed = placed.with_columns(order_within(placed, "__fa_down", keys).alias("__fa_place"))
    if k is not None:
        placed = placed.filter(nw.col("__fa_place") <= k)
    ideal = _gained(nw.col(_GAIN), gain) * position_weight("__fa_place", kind, 0.5)
    return exact_sums(placed.with_columns(ideal.alias(_IDEAL)), keys, [_IDEAL])


@registered(
    "ranking",
    "single",
    unit=UNITS,
    best="lower is better (0 = attention equals relevance)",
    range="[0, inf)",
    roles={"relevance": "relevance"},
    grouped=False,
)
@constraints(**UNCERTAINTY)
def iaa(
    frame: Any,
    *,
    rank: str = "rank",
    relevance: str = "relevance",
    ranking: Names | None = None,
    item: str | None = None,
    by: Names | None = None,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Inequity of amortized attention (IAA; Biega et al. 2018).

    Individual fairness: attention a = 1/log2(k+1) should be proportional to relevance, amortized
    over the rankings of the partition:
    :math:`\mathrm{IAA} = \sum_{\text{items}} |\sum_r a - \sum_r \mathrm{rel}|`. For one ranking
    this is Σ_k |1/log2(k+1) − rel_k|. Without ``item``, each row is its own item.
    ``relevance`` must lie in [0, 1]. 0 is most fair. Parameters as for :func:`exp`: a
    ranking's ``weight`` multiplies its attention and relevance, and ``ci`` gives a bootstrap
    interval over the rankings (amortized over shared items, it pairs every row with every
    replicate: rows × ``n_boot`` work).

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [1.0, 0.5, 0.5]})
    >>> round(fa.fair.iaa(df).item(), 6)
    0.13093
    """
    prep = _prepare(
        frame,
        "iaa",
        rank=rank,
        group=None,
        ranking=ranking,
        item=item,
        groups=None,
        by=by,
        values={"relevance": relevance},
        grouped=False,
        weight=weight,
        estimator=Estimator.requested(UNITS, ci, n_boot, seed),
    )
    gap = discount(nw.col(rank)) - nw.col(relevance).cast(nw.Float64)
    rows = prep.frame.with_columns((gap * prep.estimation.unit_weight()).alias("__fa_gap"))
    if item is not None and prep.rankings != prep.estimation.partition:
        # amortized: an item's gaps add up over its rankings before the absolute value
        per_item = _over_units(prep, rows, [item], ["__fa_gap"])
        absolute = per_item.with_columns(nw.col("__fa_gap").abs())
        result = exact_sums(absolute, prep.estimation.estimates, ["__fa_gap"]).rename(
            {"__fa_gap": "iaa"}
        )
    else:
        # each partition is one ranking (its items are distinct: checked) or each row is its
        # own item: the sum of the rows' absolute gaps
        absolute = rows.with_columns(nw.col("__fa_gap").abs())
        result = _over_units(prep, absolute, [], ["__fa_gap"]).rename({"__fa_gap": "iaa"})
    return _conclude(prep, result, "iaa")
