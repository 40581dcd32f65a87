"""Exposure as the IR community measures it: expected exposure (Diaz et al., CIKM 2020).

A run holds one row per retrieved item of a sampled ranking (``ranking`` the query, ``sample``
the sample's id within it, ``rank`` the 1-based position); ``judgments`` hold the graded
relevance of (query, item) pairs. With a browsing model's weight at 0-based position i —
``rbp``: p^i; ``gerr``: p^i·(1−u)^(relevant items above) — an item's **system exposure** ε is
its weight averaged over the query's samples, and its **target exposure** ε* the mean weight of
the positions its grade holds in an ideal ranking (grades in decreasing order). Per query:

=======  =========================  ===========================================
column   definition                 reads
=======  =========================  ===========================================
ee_l     ‖ε − ε*‖²                  the loss: 0 when the run meets the target
ee_d     ‖ε‖²                       disparity: exposure concentrated on few items
ee_r     ε·ε*                       relevance: exposure on the relevant items
=======  =========================  ===========================================

over the items (individual mode), or over the groups with exposures summed over each group's
judged items (``group=`` or ``groups=``). A partition's value is the mean over the judged
queries. The numbers are those of ``expeval`` (the paper's code), with its bounds for
``normalize=True``; the documentation's "TREC-style evaluation" page lists where they differ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import narwhals.stable.v2 as nw

from frameaudit import _validate as validate
from frameaudit._docs import shared_docs, uncertainty_parameters
from frameaudit._engine import (
    Estimator,
    Source,
    exact_sums,
    order_within,
    sum_before,
)
from frameaudit._expr import distinct, partitioned, safe_div
from frameaudit._params import UNCERTAINTY, Choice, Flag, Integer, Optional, Real, constraints
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
from frameaudit.fair._groups import GroupMapping, item_groups, target_shares
from frameaudit.fair._judgments import judged as judged_frame
from frameaudit.fair.ranking import position_weight

__all__ = ["expected_exposure"]

Model = Literal["rbp", "gerr", "log"]
MODELS: tuple[Model, ...] = ("rbp", "gerr", "log")
Exposed = Literal["judged", "retrieved"]
EXPOSED: tuple[Exposed, ...] = ("judged", "retrieved")
SHOWN = {
    "ee_l": ("lower is better (0 = exposure meets its relevance target)", "[0, inf)"),
    "ee_d": ("lower spreads exposure over more items", "[0, inf)"),
    "ee_r": ("higher puts exposure on relevant items", "[0, inf)"),
}
"""The output columns (loss, disparity, relevance), what their best is, and their ranges."""
COLUMNS = tuple(SHOWN)
DEFAULTS = {"ee_l": 0.0, "ee_d": 0.0, "ee_r": 1.0}
"""A normalised value where its bounds coincide (expeval's defaults)."""
UNITS = "queries"
"""The output column with the number of judged queries behind a value (with ``ci=``)."""

_GRADE = "__fa_grade"
_COUNT = "__fa_m"
_ABOVE = "__fa_above"
_BELOW = "__fa_below"
_TARGET = "__fa_target"
_EXPOSURE = "__fa_exposure"
_SAMPLES = "__fa_samples"
_SEEN = "__fa_seen"


@dataclass(frozen=True)
class _Call:
    """What one call evaluates: its columns and its browsing model."""

    keys: list[str]
    """The partition's columns and the query's: one evaluated (partition, query)."""
    queries: list[str]
    samples: list[str]
    item: str
    rank: str
    relevance: str
    model: Model
    p: float
    u: float
    complete: bool
    exposed: Exposed = "judged"

    @property
    def damped(self) -> float:
        """Expeval's decay of its bounds: p (rbp) or p·u (gerr)."""
        return self.p if self.model == "rbp" else self.p * self.u


def _power(base: float, exponent: nw.Expr) -> nw.Expr:
    """``base`` to the power of a column (Float64)."""
    return nw.lit(float(base)) ** exponent.cast(nw.Float64)


def _geometric(x: float, n: nw.Expr | None) -> nw.Expr:
    """Σ_{i=0}^{n−1} x^i = (1 − x^n)/(1 − x); n None: the infinite series 1/(1 − x)."""
    if n is None:
        return nw.lit(1.0 / (1.0 - x))
    return (1.0 - _power(x, n)) / (1.0 - x)


def _span(x: float, start: nw.Expr, length: nw.Expr) -> nw.Expr:
    """Σ_{i=start}^{start+length−1} x^i = x^start·(1 − x^length)/(1 − x)."""
    return _power(x, start) * (1.0 - _power(x, length)) / (1.0 - x)


def _bounded(
    column: str, value: nw.Expr, low: nw.Expr, high: nw.Expr, equal: nw.Expr
) -> list[nw.Expr]:
    """A column's value and expeval's bounds, and where the bounds are one number.

    ``equal`` says so from the definitions (one judged item, one grade, one group):
    compared as floats, bounds computed in two orders of operations can differ by a
    rounding and turn a normalised value into a ratio of rounding errors (expeval printed
    −6.9e15 for such a query).
    """
    return [
        value.alias(f"{column}_value"),
        low.alias(f"{column}_low"),
        high.alias(f"{column}_high"),
        equal.alias(f"{column}_equal"),
    ]


def _normalised(column: str) -> nw.Expr:
    """(value − low)/(high − low); expeval's default where the bounds coincide."""
    value, low, high = (nw.col(f"{column}_{part}") for part in ("value", "low", "high"))
    scaled = (value - low) / (high - low)
    return nw.when(nw.col(f"{column}_equal")).then(nw.lit(DEFAULTS[column])).otherwise(scaled)


def _grades(call: _Call, kept: nw.LazyFrame[Any]) -> nw.LazyFrame[Any]:
    """Per (query, grade): its items m, the items graded above (b) and below (a), its target.

    The target exposure of an item of the grade is the mean weight of positions b … b+m−1
    (expeval's ``target``): with gerr, a relevant grade's positions have p(1−u) per step, the
    non-relevant ones (complete judgments) are all below b relevant items.
    """
    queries, p, u = call.queries, call.p, call.u
    grade = nw.col(_GRADE)
    m = nw.col(_COUNT).cast(nw.Float64)
    counts = kept.group_by([*queries, call.relevance]).agg(nw.len().cast(nw.Int64).alias(_COUNT))
    counts = counts.rename({call.relevance: _GRADE})
    upto = nw.col(_COUNT).cum_sum().over(*queries, order_by=_GRADE).cast(nw.Int64)
    total = nw.col(_COUNT).sum().over(*queries).cast(nw.Int64)
    counts = counts.with_columns(
        (total - upto).alias(_ABOVE), (upto - nw.col(_COUNT)).alias(_BELOW)
    )
    b = nw.col(_ABOVE)
    if call.model == "log":
        return counts.join(_log_targets(call, kept), on=[*queries, _GRADE], how="left")
    if call.model == "rbp":
        target = _span(p, b, m) / m
    else:
        relevant = _span(p * (1.0 - u), b, m) / m
        other = _power(1.0 - u, b) * _span(p, b, m) / m
        target = nw.when(grade > 0).then(relevant).otherwise(other)
    return counts.with_columns(target.alias(_TARGET))


def _log_targets(call: _Call, kept: nw.LazyFrame[Any]) -> nw.LazyFrame[Any]:
    """Per (query, grade): the target exposure of its items under TREC's discount.

    The mean of 1/log2(max(j, 2)) over the 1-based positions j the grade's items hold in the
    ideal order (the track's per-item target exposure).
    """
    queries = call.queries
    placed = kept.select(*queries, nw.col(call.relevance).alias(_GRADE)).with_columns(
        (-nw.col(_GRADE)).alias("__fa_down")
    )
    placed = placed.with_columns(order_within(placed, "__fa_down", queries).alias("__fa_place"))
    weighted = placed.with_columns(position_weight("__fa_place", "log", 0.5).alias(_TARGET))
    counted = exact_sums(
        weighted, [*queries, _GRADE], [_TARGET], also=lambda ns: [ns.len().alias("__fa_n")]
    )
    return counted.select(
        *queries, _GRADE, (nw.col(_TARGET) / nw.col("__fa_n").cast(nw.Float64)).alias(_TARGET)
    )


@registered("ranking", "table", unit=UNITS, roles={"judgments": "judgments"}, outputs=SHOWN)
@constraints(
    model=Choice(MODELS),
    unaligned=Choice(UNALIGNED),
    patience=Real(0.0, 1.0, low_open=True, high_open=True),
    utility=Real(0.0, 1.0),
    complete=Flag(),
    normalize=Flag(),
    length=Optional(Integer(1)),
    exposed=Choice(EXPOSED),
    **UNCERTAINTY,
)
@shared_docs(
    uncertainty=uncertainty_parameters(
        "query",
        weights="Column of ``judgments`` with each query's weight: non-negative, finite, "
        "constant within a query (e.g. its traffic). The mean over queries becomes a weighted "
        "mean",
        interval="over the judged queries",
    )
)
def expected_exposure(  # noqa: PLR0915 (the options are the reference's)
    frame: Any,
    *,
    judgments: Any,
    rank: str = "rank",
    item: str = "item",
    ranking: Names = "query",
    sample: str | None = None,
    relevance: str = "relevance",
    group: Names | None = None,
    groups: GroupMapping | None = None,
    alignment: Any | None = None,
    unaligned: Unaligned = "unknown",
    model: Model = "rbp",
    patience: float = 0.5,
    utility: float = 0.5,
    complete: bool = False,
    normalize: bool = False,
    target: Any | None = None,
    length: int | None = None,
    exposed: Exposed = "judged",
    by: Names | None = None,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Expected exposure of stochastic rankings: EE-L, EE-D and EE-R (Diaz et al. 2020).

    An item's system exposure :math:`\epsilon` is its browsing-model weight averaged over the
    query's sampled rankings (0 in a sample that does not retrieve it); its target exposure
    :math:`\epsilon^*` is the mean weight of the positions its grade holds in an ideal
    ranking. Per judged query, :math:`\mathrm{EE\text{-}L} = \lVert\epsilon -
    \epsilon^*\rVert^2` (0 is best), :math:`\mathrm{EE\text{-}D} = \lVert\epsilon\rVert^2`
    and :math:`\mathrm{EE\text{-}R} = \epsilon\cdot\epsilon^*`; the value of a partition is
    the mean over the judged queries. With ``group=`` (or ``groups=``), the exposures are
    summed over each group's judged items and the norms run over the groups.

    Parameters
    ----------
    frame
        The run: one row per retrieved item of each sampled ranking of each query.
    judgments
        The graded judgments: one row per (query, item), with the query column(s) and the
        item column named as in the run, ``relevance`` (grades ≥ 0) and, with ``group=``,
        the group column(s). Its queries are the ones evaluated: a judged query the run never
        retrieves counts with the exposure of an empty ranking (expeval's "missing query");
        a query only the run holds is not evaluated.
    rank
        1-based position of the row's item in its sampled ranking (integer). The weight of
        position k is the model's at k − 1, as given (positions need not be contiguous).
    item
        Item (document) id, unique within a sampled ranking and within a query's judgments.
    ranking
        The query column(s), in the run and in the judgments.
    sample
        The sample's id within its query (a stochastic ranker's draws); None: one ranking per
        query. An item's exposure is averaged over the query's samples.
    relevance
        The grade column of ``judgments``: non-negative numbers; > 0 is relevant.
    group
        Group column(s) of ``judgments`` (one group per judged item of a query): group mode.
        None (and no ``groups=``): individual mode, every item its own group.
    groups
        A mapping item → group (a dict, or a frame with the item column and the column
        ``group`` names), for every judged item; ``group=`` then names its group column.
    alignment
        Soft groups (TREC 2022's alignment vectors): a frame with the item column, a group
        column (named by ``group=``) and ``weight``, an item's weights summing to 1; or a
        list of such frames, one per dimension (``group=`` one name each), whose cells weigh
        the product of the item's weights. A group's exposure sums its items' exposures
        times their weights.
    unaligned
        An item that an alignment does not list: ``"unknown"`` puts it in a level
        ``unknown`` of that dimension, ``"uniform"`` spreads it evenly over the
        dimension's levels.
    model
        The browsing model: ``"rbp"`` (weight p^i at 0-based position i), ``"gerr"``
        (p^i·(1−u)^r, r the relevant items above) or ``"log"`` (TREC Fair Ranking's
        1/log2(max(k, 2)) at 1-based position k; a grade's target exposure is the mean over
        the ideal positions its items hold, as the track's code computes it per item; a
        judged query the run lacks gets no exposure, and ``normalize`` is refused: expeval's
        bounds are its models').
    patience
        p, in (0, 1).
    utility
        u, in [0, 1] (``gerr`` only).
    complete
        False (the default, retrieval): only relevant judgments (grade > 0) count, as in
        expeval; True (re-ranking): every judged item counts, grade 0 too.
    normalize
        Scale each query's values by expeval's bounds: (v − lower)/(upper − lower), and
        expeval's defaults where the bounds coincide (0 for EE-L and EE-D, 1 for EE-R).
    target
        Group mode: the groups' target shares as the TREC Fair Ranking track's task 2 sets
        them, instead of the targets the grades imply: a mapping group → share (summing to
        1), or a frame of the group column(s) and ``share``, optionally per query (or
        ``by``) column. A group's target exposure is its share of the exposure of a ranking
        of ``length`` positions (the model's weights at 1 … ``length`` summed). Every group
        the run exposes needs a share (0 is allowed; with ``unaligned="unknown"`` the level
        ``unknown`` too). Not with ``normalize`` (the track's own normalisation is
        unfinished) nor ``model="gerr"`` (its weights depend on the relevant items above).
    length
        With ``target=``: the ranking length its exposure is scaled to (the track used 20
        in 2022 and 50 in 2021).
    exposed
        Group mode: whose exposure a group sums. ``"judged"``: the judged items that count
        (the relevant ones; every judged one with ``complete=True``), as expeval and the
        TREC 2022 code do; ``"retrieved"``: every retrieved item (TREC 2021's task 2),
        with the groups from ``groups=`` or ``alignment=``, which know the unjudged items.
        Not with ``normalize`` (expeval's bounds are for judged exposure).
    by
        Partition column(s) of the run: a system column (every partition is evaluated on
        every judged query), the query column (one row per query), or a column the judgments
        hold too (a market: each partition on its own judgments).
    weight, ci, n_boot, seed
        <<uncertainty>>

    Returns
    -------
    A frame of the run's kind: the ``by`` columns, then ``ee_l``, ``ee_d`` and ``ee_r``
    (Float64), one row per partition; with ``ci``, each followed by ``_lo`` and ``_hi``,
    then ``queries`` and each column's undefined replicates.

    Raises
    ------
    FrameAuditError
        For judgments that miss a column, hold negative, NaN or null grades or judge an item
        twice; a run whose sampled ranking holds a position or an item twice; a query with
        no relevant judgment at all; dtypes of the query or item columns that differ between
        the run and the judgments.

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> run = pl.DataFrame(
    ...     {
    ...         "query": ["q1"] * 6,
    ...         "sample": [0, 0, 0, 1, 1, 1],
    ...         "item": ["d1", "d2", "d3", "d2", "d1", "d4"],
    ...         "rank": [1, 2, 3, 1, 2, 3],
    ...     }
    ... )
    >>> qrels = pl.DataFrame(
    ...     {"query": ["q1"] * 4, "item": ["d1", "d2", "d3", "d4"], "relevance": [2, 1, 0, 1]}
    ... )
    >>> fa.fair.expected_exposure(run, judgments=qrels, sample="sample").rows()
    [(0.28125, 1.15625, 1.078125)]
    """
    _check_options(
        target,
        length,
        exposed,
        model=model,
        normalize=normalize,
        grouped=group is not None or groups is not None or alignment is not None,
        mapped=groups is not None or alignment is not None,
    )
    estimator = Estimator.requested(UNITS, ci, n_boot, seed)
    outputs = [*COLUMNS, *estimator.outputs(*COLUMNS)]
    one_grouping(groups, alignment)
    given = [n for n, v in (("groups", groups), ("alignment", alignment)) if v is not None]
    run_roles = [
        Role("rank", rank, dtype="integer"),
        Role("item", item),
        Role("ranking", ranking, many=True),
        Role("sample", sample, optional=True),
        Role("by", by, many=True, optional=True),
    ]
    judged_roles = [
        Role("relevance", relevance),
        # with groups= or alignment=, group= names their group columns, not the judgments'
        Role("group", None if given else group, many=True, optional=True),
        Role("weight", weight, optional=True),
    ]
    # one column, one role, across the run and the judgments (the query and item columns
    # are the same role in both)
    sharing = [frozenset(("by", "ranking"))]
    owner = owners(
        {r.parameter: column_names(r) for r in (*run_roles, *judged_roles)},
        sharing=sharing,
        outputs=outputs,
    )
    in_run = {r.parameter for r in run_roles}
    bound = bind(frame, run_roles, sharing=sharing, outputs=outputs)
    source = bound.source
    run = source.frame
    queries, by_names = bound.columns["ranking"], bound.columns["by"]
    samples = bound.columns["sample"]
    group_names = column_names(judged_roles[1])
    units = queries  # the resampled unit: a judged query (within its partition)
    graded: dict[str, Any] = {
        "item": item,
        "relevance": relevance,
        "also": {**dict.fromkeys(group_names, "group"), **({weight: "weight"} if weight else {})},
    }
    # a partition column the judgments hold keys them too (each market its own judgments);
    # the others are crossed with every judged query (each system against the same ones)
    judged, judged_checks, held = judged_frame(
        judgments, source, run.collect_schema(), queries=queries, by=by_names, **graded
    )
    queries = [*held, *queries]
    keys = list(dict.fromkeys([*by_names, *queries]))
    rankings = [*keys, *samples]
    checks = [
        validate.non_empty(run, "expected_exposure"),
        validate.no_nulls(run, {c: p for c, p in owner.items() if p in in_run}),
        validate.in_range(run, rank, "rank", 1, None),
        validate.distinct_within(run, rankings, {rank: "rank", item: "item"}, "sampled ranking"),
        validate.non_empty(judged, "judgments="),
        *judged_checks,
    ]
    if weight is not None:
        checks += validate.unit_weights(judged, weight, queries, "query")
    grade = nw.col(relevance)
    kept = judged if complete else judged.filter(grade > 0)
    checks.append(_some_relevant(kept, complete))
    call = _Call(
        keys,
        queries,
        samples,
        item,
        rank,
        relevance,
        model,
        float(patience),
        float(utility),
        complete,
        exposed,
    )
    table = _grades(call, kept)
    targets = kept.join(
        table.select(*queries, nw.col(_GRADE).alias(relevance), _TARGET),
        on=[*queries, relevance],
        how="left",
    )
    exposures = _exposures(call, run, kept)
    # every partition's judged queries: a judged query the run lacks counts too
    rest = [c for c in by_names if c not in queries]
    judged_queries = distinct(kept.select(queries))
    grid = distinct(run.select(rest)).join(judged_queries, how="cross") if rest else judged_queries
    seen = distinct(exposures.select(keys)).with_columns(nw.lit(1).alias(_SEEN))
    grid = grid.join(seen, on=keys, how="left")
    members, member_checks = _members(
        call,
        kept,
        run,
        source,
        group=group,
        columns=group_names,
        groups=groups,
        alignment=alignment,
        unaligned=unaligned,
    )
    checks += member_checks
    if members is None:
        values = _item_values(call, grid, table, targets, exposures)
    else:
        counted = _group_exposures(call, exposures, kept, members)
        if target is None:
            values = _group_values(call, grid, table, targets, counted, members=members)
        else:
            assert length is not None
            values, target_checks = _target_values(
                call, grid, counted, members, source, target=target, length=length
            )
            checks += target_checks
    if not normalize:
        values = values.select(*keys, *(nw.col(f"{c}_value").alias(c) for c in COLUMNS))
    else:
        values = values.select(
            *keys,
            *(_normalised(c).alias(c) for c in COLUMNS),
        )
    if weight is not None:
        per_query = kept.group_by(queries).agg(nw.col(weight).min())
        values = values.join(per_query, on=queries, how="left")
    values = partitioned(values, by_names)
    values, estimated = estimator.over(values, source, by=by_names, units=units, weight=weight)
    w = estimated.unit_weight()
    terms = values.with_columns(
        *((nw.col(c) * w).alias(f"__fa_{c}") for c in COLUMNS), w.alias("__fa_w")
    )
    sums = estimated.summed(terms, [], [*(f"__fa_{c}" for c in COLUMNS), "__fa_w"])
    means = sums.select(
        *estimated.estimates,
        *(safe_div(nw.col(f"__fa_{c}"), nw.col("__fa_w")).alias(c) for c in COLUMNS),
    )
    if estimated.bootstrap is None:
        result = means.select(*estimated.partition, *COLUMNS)
    else:
        result = estimated.intervals(means, [], COLUMNS)
    return estimated.finish(result, checks=checks)


def _check_options(
    target: Any | None,
    length: int | None,
    exposed: Exposed,
    *,
    model: Model,
    normalize: bool,
    grouped: bool,
    mapped: bool,
) -> None:
    """Refuse the combinations of options that mean nothing (``normalize``, ``target=``…)."""
    problem = None
    if model == "log" and normalize:
        problem = (
            "normalize=True: expeval's bounds are those of its models, rbp and gerr; with "
            "model='log' give normalize=False"
        )
    elif target is not None:
        if not grouped:
            problem = (
                "target=: a target is a distribution over groups; give group=, groups= or "
                "alignment= (group mode)"
            )
        elif model == "gerr":
            problem = (
                "target= with model='gerr': a ranking's gerr exposure depends on its relevant "
                "items, so no fixed length scales a target; give model='rbp' or 'log'"
            )
        elif normalize:
            problem = (
                "normalize=True with target=: expeval's bounds are for the targets the grades "
                "imply; give normalize=False"
            )
        elif length is None:
            problem = (
                "length=None: with target= give the ranking length its exposure is scaled to "
                "(the TREC Fair Ranking track used 20 in 2022, 50 in 2021)"
            )
    elif length is not None:
        problem = f"length={length!r}: it scales a target=; give target= too, or length=None"
    if problem is None and exposed == "retrieved":
        if not mapped:
            problem = (
                "exposed='retrieved': the groups of retrieved items the judgments do not hold "
                "come from groups= or alignment=; give one of them"
            )
        elif normalize:
            problem = (
                "normalize=True with exposed='retrieved': expeval's bounds are for judged "
                "exposure; give normalize=False"
            )
    if problem is not None:
        raise InvalidParameterError(problem)


def _members(
    call: _Call,
    kept: nw.LazyFrame[Any],
    run: nw.LazyFrame[Any],
    source: Source,
    *,
    group: Names | None,
    columns: list[str],
    groups: GroupMapping | None,
    alignment: Any | None,
    unaligned: Unaligned,
) -> tuple[nw.LazyFrame[Any] | None, list[validate.Check]]:
    """The items' groups and their checks; None in individual mode.

    From the judgments' group ``columns`` (share 1): (query, item, group columns, share) of
    the judged items. From a mapping ``groups=`` (share 1) or ``alignment=`` (soft, or several
    dimensions' cells): (item, group columns, share) of the judged items, and of the retrieved
    ones with ``exposed="retrieved"``.
    """
    queries, item = call.queries, call.item
    items = kept.select(item)
    if call.exposed == "retrieved":
        items = nw.concat([items, run.select(item)], how="vertical")
    items = distinct(items)
    if alignment is not None:
        frames, names = alignment_frames(alignment, group)
        return aligned(items, frames, names, item=item, source=source, unaligned=unaligned)
    if groups is not None:
        (name,) = column_names(Role("group", group if group is not None else "group"))
        mapping, checks = item_groups(groups, source, item=item, group=name)
        unmapped = items.join(mapping, on=item, how="anti")
        counted = "judged" if call.exposed == "judged" else "judged or retrieved"
        checks.append(
            validate.offending(
                unmapped,
                [item],
                "groups=: ",
                f" {counted} item(s) have no group in the mapping",
                f"; every {counted} item needs a group",
            )
        )
        members = items.join(mapping, on=item, how="inner")
        return members.with_columns(nw.lit(1.0).alias(SHARE)), checks
    if not columns:
        return None, []
    members = kept.select(*queries, item, *columns).with_columns(nw.lit(1.0).alias(SHARE))
    return members, []


def _member_keys(call: _Call, members: nw.LazyFrame[Any]) -> list[str]:
    """The columns ``members`` are keyed by: (query, item), or the item alone."""
    names = members.collect_schema().names()
    return [*(q for q in call.queries if q in names), call.item]


def _member_groups(call: _Call, members: nw.LazyFrame[Any]) -> list[str]:
    """The group (cell) columns of ``members``."""
    keyed = _member_keys(call, members)
    return [c for c in members.collect_schema().names() if c not in (*keyed, SHARE)]


def _group_exposures(
    call: _Call,
    exposures: nw.LazyFrame[Any],
    kept: nw.LazyFrame[Any],
    members: nw.LazyFrame[Any],
) -> nw.LazyFrame[Any]:
    """Per (partition, query, group): the exposure summed over the group's counted items.

    An item counts with its membership share; the items are the judged ones that count
    (``exposed="judged"``) or every retrieved one.
    """
    keys, queries, item = call.keys, call.queries, call.item
    on = _member_keys(call, members)
    if call.exposed == "judged" and on == [item]:
        exposures = exposures.join(kept.select(*queries, item), on=[*queries, item], how="semi")
    exposed = exposures.join(members, on=on, how="inner").with_columns(
        (nw.col(_EXPOSURE) * nw.col(SHARE)).alias(_EXPOSURE)
    )
    return exact_sums(exposed, [*keys, *_member_groups(call, members)], [_EXPOSURE])


def _some_relevant(kept: nw.LazyFrame[Any], complete: bool) -> validate.Check:
    """At least one judgment counts (one relevant, unless ``complete``)."""
    found = "no judgment" if complete else "no judgment with a grade above 0 (a relevant item)"
    hint = "" if complete else "; complete=True counts the items graded 0 too"

    error = f"judgments=: expected a query with a judgment to evaluate, found {found}{hint}"
    return validate.has_rows(kept, error)


def _exposures(call: _Call, run: nw.LazyFrame[Any], kept: nw.LazyFrame[Any]) -> nw.LazyFrame[Any]:
    """Per (partition, query, item) of the run: the exposure averaged over the samples."""
    keys, samples, item, rank = call.keys, call.samples, call.item, call.rank
    if call.model == "log":
        weight = position_weight(rank, "log", call.p)
    else:
        weight = _power(call.p, nw.col(rank).cast(nw.Int64) - 1)
    rows = run.select(*dict.fromkeys([*keys, *samples, item, rank]))
    if call.model == "gerr" and call.u > 0.0:
        relevant = kept.filter(nw.col(call.relevance) > 0).select(
            *call.queries, item, nw.lit(1, dtype=nw.Int64).alias("__fa_rel")
        )
        rows = rows.join(relevant, on=[*call.queries, item], how="left").with_columns(
            nw.col("__fa_rel").fill_null(0)
        )
        above = sum_before(nw.col("__fa_rel"), [*keys, *samples], rank)
        weight = weight * _power(1.0 - call.u, above)
    summed = exact_sums(rows.with_columns(weight.alias(_EXPOSURE)), [*keys, item], [_EXPOSURE])
    if not samples:
        return summed
    sampled = rows.group_by(keys).agg(nw.col(samples[0]).n_unique().cast(nw.Int64).alias(_SAMPLES))
    averaged = summed.join(sampled, on=keys, how="left")
    return averaged.select(
        *keys, item, (nw.col(_EXPOSURE) / nw.col(_SAMPLES).cast(nw.Float64)).alias(_EXPOSURE)
    )


def _query_sums(call: _Call, table: nw.LazyFrame[Any]) -> nw.LazyFrame[Any]:
    """Per query, from its grades: items n, relevant items r, levels and Σ ε*².

    With complete judgments also the sums of expeval's re-ranking bounds over the target in
    ascending order.
    """
    damped = call.damped
    m = nw.col(_COUNT).cast(nw.Float64)
    t = nw.col(_TARGET)
    a = nw.col(_BELOW)
    columns = {
        "__fa_n": m,
        "__fa_r": nw.when(nw.col(_GRADE) > 0).then(m).otherwise(0.0),
        "__fa_levels": nw.lit(1.0),
        "__fa_t2": m * t * t,
    }
    if call.complete:
        # the items in ascending target order take positions a … a+m−1 of the static ranking
        spread = _span(damped, a, m)
        columns["__fa_rlow"] = t * spread
        columns["__fa_lhigh"] = _span(damped * damped, a, m) - 2.0 * t * spread + m * t * t
    rows = table.with_columns(*(e.alias(name) for name, e in columns.items()))
    return exact_sums(rows, call.queries, list(columns))


def _products(e: nw.Expr, t: nw.Expr) -> dict[str, nw.Expr]:
    """A cell's terms of EE-D (ε²), EE-R (ε·ε*) and EE-L ((ε − ε*)²), by their sums' names."""
    return {"__fa_d": e * e, "__fa_dot": e * t, "__fa_l": (e - t) * (e - t)}


def _missing(call: _Call, default: nw.Expr) -> nw.Expr:
    """A value of a judged query the run lacks: expeval's ``default``, or 0 for TREC's model.

    expeval's defaults are its models' (the static ranking's disparity, the relevance lower
    bound); TREC's model has none, and the query gets no exposure.
    """
    return default if call.model != "log" else nw.lit(0.0)


def _item_values(
    call: _Call,
    grid: nw.LazyFrame[Any],
    table: nw.LazyFrame[Any],
    targets: nw.LazyFrame[Any],
    exposures: nw.LazyFrame[Any],
) -> nw.LazyFrame[Any]:
    """Individual mode: per (partition, query) each column's value and expeval's bounds."""
    keys, queries, item, p, damped = call.keys, call.queries, call.item, call.p, call.damped
    e, t = nw.col(_EXPOSURE), nw.col(_TARGET).fill_null(0.0)
    matched = exposures.join(
        targets.select(*queries, item, _TARGET), on=[*queries, item], how="left"
    )
    terms = {**_products(e, t), "__fa_tin": t * t}
    sums = exact_sums(
        matched.with_columns(*(x.alias(k) for k, x in terms.items())), keys, list(terms)
    )
    per_query = _query_sums(call, table)
    rows = grid.join(per_query, on=queries, how="left").join(sums, on=keys, how="left")
    n = nw.col("__fa_n") if call.complete else None
    seen = ~nw.col(_SEEN).is_null()
    t2 = nw.col("__fa_t2")
    one_level = nw.col("__fa_levels") <= 1
    # one judged item: the static ranking and the uniform one coincide, and so do the
    # ranking and its target
    single = (nw.col("__fa_n") <= 1) if call.complete else nw.lit(value=False)
    d_high = _geometric(p * p, n)
    if call.complete:
        d_low = _geometric(damped, n) ** 2 / nw.col("__fa_n")
        r_low = nw.col("__fa_rlow")
        l_high = nw.col("__fa_lhigh")
    else:
        d_low = nw.lit(0.0)
        r_low = nw.lit(0.0)
        l_high = t2 + 1.0 / (1.0 - damped)
    r_high = nw.when(one_level).then(0.0).otherwise(t2)
    r_low = nw.when(one_level).then(0.0).otherwise(r_low)
    # a judged query the run lacks: no exposure (EE-L is ‖ε*‖²), and expeval's defaults
    # for EE-D (the static ranking's) and EE-R (its lower bound)
    loss = nw.when(seen).then(nw.col("__fa_l") + (t2 - nw.col("__fa_tin"))).otherwise(t2)
    return rows.select(
        *keys,
        *_bounded("ee_l", loss, nw.lit(0.0), l_high, single),
        *_bounded(
            "ee_d",
            nw.when(seen).then(nw.col("__fa_d")).otherwise(_missing(call, d_high)),
            d_low,
            d_high,
            single,
        ),
        *_bounded(
            "ee_r",
            nw.when(seen).then(nw.col("__fa_dot")).otherwise(_missing(call, r_low)),
            r_low,
            r_high,
            one_level,
        ),
    )


def _target_values(
    call: _Call,
    grid: nw.LazyFrame[Any],
    exposed: nw.LazyFrame[Any],
    members: nw.LazyFrame[Any],
    source: Source,
    *,
    target: Any,
    length: int,
) -> tuple[nw.LazyFrame[Any], list[validate.Check]]:
    """Group mode with the track's targets: per (partition, query) each column's value.

    A group's target exposure is its share of the weights of positions 1 … ``length``
    (TREC task 2's "available exposure"); the cells are the target's groups.
    """
    keys = call.keys
    groups = _member_groups(call, members)
    shares, on, checks = target_shares(
        target,
        groups=groups,
        schema={**members.collect_schema(), **grid.collect_schema()},
        keys=keys,
        source=source,
        present=exposed,
    )
    if on:
        missing = distinct(grid.select(on)).join(distinct(shares.select(on)), on=on, how="anti")
        checks.append(
            validate.offending(
                missing,
                on,
                "target=: ",
                " evaluated queries (or partitions) have no shares",
                "; give each one its distribution",
            )
        )
    if call.model == "log":
        mass = math.fsum(1.0 / math.log2(max(k, 2)) for k in range(1, length + 1))
    else:
        mass = (1.0 - call.p**length) / (1.0 - call.p)
    wanted = shares.select(*on, *groups, (nw.col("share") * mass).alias(_TARGET))
    cells = grid.join(wanted, on=on, how="inner") if on else grid.join(wanted, how="cross")
    cells = cells.join(exposed, on=[*keys, *groups], how="left")
    e, t = nw.col(_EXPOSURE).fill_null(0.0), nw.col(_TARGET)
    terms = _products(e, t)
    sums = exact_sums(
        cells.with_columns(*(x.alias(k) for k, x in terms.items())), keys, list(terms)
    )
    return sums.select(
        *keys,
        nw.col("__fa_l").alias("ee_l_value"),
        nw.col("__fa_d").alias("ee_d_value"),
        nw.col("__fa_dot").alias("ee_r_value"),
    ), checks


def _group_values(
    call: _Call,
    grid: nw.LazyFrame[Any],
    table: nw.LazyFrame[Any],
    targets: nw.LazyFrame[Any],
    exposed: nw.LazyFrame[Any],
    *,
    members: nw.LazyFrame[Any],
) -> nw.LazyFrame[Any]:
    """Group mode: per (partition, query) each column's value and expeval's bounds.

    A group's target is its judged items' targets summed, each weighted by its membership
    share (``members``); ``exposed`` holds its exposure (:func:`_group_exposures`).
    """
    keys, queries, p, damped = call.keys, call.queries, call.p, call.damped
    groups = _member_groups(call, members)
    wanted = targets.join(members, on=_member_keys(call, members), how="inner").with_columns(
        (nw.col(_TARGET) * nw.col(SHARE)).alias(_TARGET)
    )
    wanted = exact_sums(wanted, [*queries, *groups], [_TARGET])
    relevant = _query_sums(call, table).select(*queries, "__fa_r")
    cells = grid.join(wanted, on=queries, how="inner")
    if call.exposed == "retrieved":  # a retrieved item's group may have no judged item
        both = [cells.select(*keys, *groups), exposed.select(*keys, *groups)]
        cells = (
            distinct(nw.concat(both, how="vertical"))
            .join(grid, on=keys, how="inner")
            .join(wanted, on=[*queries, *groups], how="left")
        )
    cells = cells.join(exposed, on=[*keys, *groups], how="left")
    cells = cells.join(relevant, on=queries, how="left")
    mass = _geometric(p, nw.col("__fa_r"))
    e, t = nw.col(_EXPOSURE).fill_null(0.0), nw.col(_TARGET).fill_null(0.0)
    terms = {
        **_products(e, t),
        "__fa_t2": t * t,
        "__fa_gap": (mass - t) * (mass - t),
        "__fa_k": nw.lit(1.0),
    }
    sums = exact_sums(
        cells.with_columns(*(x.alias(k) for k, x in terms.items())),
        [*keys, _SEEN, "__fa_r"],
        list(terms),
    )
    k = nw.col("__fa_k")
    seen = ~nw.col(_SEEN).is_null()
    one = k <= 1
    d_high = nw.when(one).then(0.0).otherwise(k * mass * mass)
    low = _geometric(damped, nw.col("__fa_r"))
    d_low = nw.when(one).then(0.0).otherwise(k * low * low)
    t2, gap = nw.col("__fa_t2"), nw.col("__fa_gap")
    l_high = nw.when(t2 > gap).then(t2).otherwise(gap)
    return sums.select(
        *keys,
        *_bounded("ee_l", nw.col("__fa_l"), nw.lit(0.0), l_high, l_high == 0),
        *_bounded(
            "ee_d",
            nw.when(seen).then(nw.col("__fa_d")).otherwise(_missing(call, d_high)),
            d_low,
            d_high,
            one | (nw.col("__fa_r") <= 1) | nw.lit(damped == p),
        ),
        # expeval's upper bound of the groups' EE-R is 0: it always prints its default, 1
        *_bounded(
            "ee_r",
            nw.when(seen).then(nw.col("__fa_dot")).otherwise(0.0),
            nw.lit(0.0),
            nw.lit(0.0),
            nw.lit(value=True),
        ),
    )
