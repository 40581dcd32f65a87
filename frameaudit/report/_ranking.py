"""The fair-ranking report: every group metric per group and under every combo; the singles.

The single numbers: NDKL, AWRF_JS, IAA, nDCG and expected exposure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import narwhals.stable.v2 as nw
import polars as pl

from frameaudit import fair
from frameaudit._engine import (
    POINT,
    REPLICATE,
    Bootstrap,
    GroupedViews,
    grouped_views,
    interval,
    schema_names,
)
from frameaudit._params import strict
from frameaudit._registry import Metric, metrics
from frameaudit.exceptions import InvalidParameterError
from frameaudit.fair.ranking import Size
from frameaudit.report import _charts, _layout, _tables
from frameaudit.report._layout import Layout
from frameaudit.report._report import Report

__all__ = ["LAYOUT", "charts", "group_calls", "ranking"]

LAYOUT = Layout(
    per_group="Per group (n: the group size)",
    worst="Furthest from parity (reference: the groups' mean; for NDKL, 0)",
    unit="rankings",
    lead=("exp", "MinMaxRatio"),
    needs={m.name: m.needs for m in metrics("ranking") if m.needs},
)
# positions are pooled in buckets for the position chart: 1, 2, 3, 4–5, 6–10, ..., 101+
_EDGES = (1, 2, 3, 5, 10, 20, 50, 100)
_BUCKETS = ("1", "2", "3", "4–5", "6–10", "11–20", "21–50", "51–100", "101+")
_SHOWN_RANKINGS = 5  # the worst rankings by NDKL in ``worst``
# the position counts' own columns, named apart from the caller's (roles cannot take the prefix)
_BUCKET, _ROWS = "__fa_bucket", "__fa_rows"


@strict
def ranking(
    frame: Any,
    *,
    rank: str = "rank",
    group: str | Sequence[str] = "group",
    ranking: str | Sequence[str] | None = None,
    item: str | None = None,
    groups: Mapping[Any, Any] | Any | None = None,
    universe: Any | None = None,
    size: Size | None = None,
    target: Any | None = None,
    relevance: str | None = None,
    ctr: str | None = None,
    relevant: str | None = None,
    judgments: Any | None = None,
    sample: str | None = None,
    p: float = 0.5,
    decay: float = 0.5,
    by: str | Sequence[str] | None = None,
    weight: str | None = None,
    reference: Any | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Report:
    r"""The fair-ranking report of a ranking log: every metric, per group and combined.

    Runs each group metric once, per group; every combo (all seven) comes from the same
    per-group values, and under ``ci`` from the same replicates, with their intervals. Adds
    NDKL (the mean over rankings, and per ranking when ``ranking`` is given) and IAA. A
    metric that needs a column that is not given is left out: EXPU and IAA need
    ``relevance``, EXPRU needs ``relevance`` and ``ctr``, ERBR needs ``relevant`` (binary
    relevance).

    Parameters
    ----------
    frame
        Any frame the metrics take (Polars DataFrame/LazyFrame, pandas, pyarrow, DuckDB,
        PySpark): one row per ranked item. The report holds eager Polars frames.
    rank, group, ranking, item, groups, universe, size
        The column roles and the group universe, as for :func:`frameaudit.fair.exp`.
    target
        NDKL's desired distribution, as for :func:`frameaudit.fair.ndkl`.
    relevance
        Relevance column in [0, 1] (EXPU, EXPRU, IAA). None: those metrics are left out.
    ctr
        Click-through-rate column in [0, 1] (EXPRU, with ``relevance``).
    relevant
        Binary (0/1) relevance column (ERBR).
    judgments
        Graded judgments (query, item, relevance), as for
        :func:`frameaudit.fair.expected_exposure`: adds EE-L, EE-D and EE-R (RBP, patience
        1/2; ``ranking`` is the query and ``item`` is required), per group when the
        judgments hold the group column(s), else per item. With ``ci``, their intervals are
        over the judged queries (counted in the ``rankings`` column).
    sample
        With ``judgments``: the sample column of a stochastic ranker's run (several sampled
        rankings per query).
    p
        AWRF's stopping probability in (0, 1].
    decay
        ERBE/ERBP/ERBR's γ in [0, 1).
    by
        Column(s): one report section per partition (a market, a device); the tables lead
        with these columns.
    weight
        Unit weights of the rankings (e.g. a query's traffic), as for the metrics.
    reference
        The reference group each group is set against (``tables["ratios"]``, and the rules
        ``"metric:ratio"``): ``"largest"`` (the group with the most items or rows, per
        partition), ``"best"`` (each metric's best-off group: the highest value) or a group
        (its value, a tuple or ``"f/young"`` for several group columns). None: no ratios.
    ci
        Confidence level of percentile bootstrap intervals over the rankings (``ranking``
        required), e.g. 0.95. None: no intervals.
    n_boot, seed
        Bootstrap replicates and seed, as for :func:`frameaudit.fair.exp`.

    Returns
    -------
    Report
        ``per_group``: the ``by`` and group columns, ``n`` and each group metric (with
        ``ci``: ``<metric>_lo``, ``<metric>_hi`` and ``rankings``); a group of the universe
        that a partition lacks has ``n`` = 0. ``summary``: one row per (partition,) group
        metric and combo, then ``ndkl`` and ``iaa`` (combo null), with ``lo``/``hi`` under
        ``ci`` and a ``note`` saying why a value is undefined (null). ``worst``: per group
        metric the group furthest from the groups' mean (parity: every group equal; on a tie,
        the group below the mean), and the five rankings with the highest NDKL.
        ``tables``: ``ndkl_by_ranking`` (every ranking, worst first, with ``ranking``) and
        ``positions`` (each group's share of the rows at each position bucket); with
        ``reference``, ``ratios``: per group metric and group, its value over the reference
        group's (with ``ci``, an interval from the same bootstrap replicates: the two values
        move together), for rules such as the four-fifths rule, ``{"exp:ratio": ("within",
        (0.8, 1.25))}``.

    Examples
    --------
    >>> import frameaudit as fa
    >>> log = fa.datasets.ranking_example()
    >>> r = fa.report.ranking(log, group=["gender", "age"], ranking="query", item="item")
    >>> r.check({"exp:MinMaxRatio": (">=", 0.8), "ndkl": ("<=", 0.2)})["passed"].to_list()
    [False, False]
    """
    keys = [group] if isinstance(group, str) else list(group)
    queries, rankings = _rankings(ranking, sample)
    ranking = rankings
    partitions = [] if by is None else [by] if isinstance(by, str) else list(by)
    roles = {"rank": rank, "group": group, "ranking": ranking, "item": item, "groups": groups}
    roles |= {"universe": universe, "by": by, "weight": weight}
    boot: dict[str, Any] = {} if ci is None else {"ci": ci, "n_boot": n_boot, "seed": seed}
    given = {
        "relevance": relevance,
        "ctr": ctr,
        "relevant": relevant,
        "p": p,
        "decay": decay,
        "size": size,
    }
    group_metrics = metrics("ranking", "group")
    computed = group_calls(roles, given)
    per_group: pl.DataFrame | None = None
    summary: list[pl.DataFrame] = []
    worst: list[dict[str, Any]] = []
    called: list[tuple[Metric, pl.DataFrame, pl.DataFrame | None]] = []
    with _tables.progress(len(group_metrics) + 3, "ranking report") as step:
        for declared, arguments in computed.values():
            name = declared.name
            values, combos, replicates = _group_metric(declared, frame, arguments, boot, partitions)
            shared = [c for c in ("n", "rankings", "undefined_replicates") if c in values.columns]
            joined = [*partitions, *keys]
            if per_group is None:
                per_group = values.drop("undefined_replicates", strict=False)
            else:
                per_group = per_group.join(
                    values.drop(shared), on=joined, how="left", nulls_equal=True
                )
            summary.append(_combos(name, combos, values, partitions=partitions, keys=keys, ci=ci))
            worst.append(_worst_group(values, [*partitions, *keys], name))
            called.append((declared, values, replicates))
            step()
        step(len(group_metrics) - len(computed))  # those whose columns were not given
        assert per_group is not None  # EXP is always there
        positions: dict[str, Any] = {"rank": rank, "ranking": ranking, "item": item}
        weighting: dict[str, Any] = {"by": by, "weight": weight}
        ndkl_roles = {**positions, "group": group, "groups": groups, "universe": universe}
        ndkl_roles |= {"target": target, **weighting}
        ndkl, tables = _ndkl(frame, ndkl_roles, partitions=partitions, rankings=rankings, boot=boot)
        summary.append(_single("ndkl", ndkl, ci, _ndkl_note(per_group, keys, target)))
        # the attention distribution against the same target (TREC's task-1 fairness)
        awrf_js = _tables.eager(fair.awrf_js(frame, **ndkl_roles, **boot))
        summary.append(_single("awrf_js", awrf_js, ci, _ndkl_note(per_group, keys, target)))
        worst.extend(_worst_rankings(ndkl, tables, partitions))
        step(2)
        notes: list[str] = []
        summary += _graded_rows(
            frame,
            judgments=judgments,
            relevance=relevance,
            sample=sample,
            positions=positions,
            weighting=weighting,
            fairness=ndkl_roles,
            keys=keys,
            queries=queries,
            rankings=rankings,
            boot=boot,
        )
        if relevance:
            iaa, note = _iaa(frame, {**positions, "relevance": relevance, **weighting}, boot)
            summary.append(iaa)
            notes += [note] if note else []
        tables["positions"] = _positions(
            frame, rank=rank, keys=keys, item=item, groups=groups, weight=weight
        )
        tables |= _ratio_table(
            called, boot=boot, reference=reference, partitions=partitions, keys=keys
        )
        step()
    return Report(
        family="ranking",
        title=_title(keys, partitions),
        keys=tuple(keys),
        by=tuple(partitions),
        per_group=per_group.sort([*partitions, *keys], nulls_last=True),
        summary=_tables.stack(summary, partitions, unit=LAYOUT.unit, ci=ci),
        worst=_tables.worst(worst),
        tables=tables,
        parameters={
            "rank": rank,
            "group": keys,
            "ranking": rankings,
            "item": item,
            "groups": None if groups is None else "given",
            "universe": _tables.plain_values(universe),
            "size": size,
            "target": _tables.plain_values(target),
            "relevance": relevance,
            "ctr": ctr,
            "relevant": relevant,
            "judgments": None if judgments is None else "given",
            "sample": sample,
            "p": float(p),
            "decay": float(decay),
            "by": partitions or None,
            "weight": weight,
            "reference": _tables.plain_values(reference),
            "ci": ci,
            "n_boot": n_boot,
            "seed": seed,
        },
        record=_tables.record(
            frame,
            units=[*partitions, *(rankings or [])],
            unit="rankings",
            groups=per_group.select(_tables.label(keys, per_group.schema))
            .unique(maintain_order=True)
            .to_series()
            .to_list(),
        ),
        notes=(
            "Group metrics give each group a value V_g pooled over the rankings (higher: more "
            "exposure or more pairs won); parity is every group at the same value.",
            "Read MinMaxRatio first: the least exposed group's value over the most exposed "
            "group's (1 = parity, 0.8 is a common threshold).",
            "The single numbers say in their direction column which way is fair: lower for "
            "NDKL, IAA and EE-L (0 is fair), higher for AWRF_JS and nDCG (1 is best).",
            *notes,
        ),
    )


def group_calls(
    roles: Mapping[str, Any], given: Mapping[str, Any]
) -> dict[str, tuple[Metric, dict[str, Any]]]:
    """The group metrics whose columns are ``given``, each with the arguments of its call.

    ``roles``: the arguments every group metric takes; ``given``: the columns and options
    some take (``relevance``, ``p``, ``size``, ...), None where not given.
    """
    calls = {}
    for declared in metrics("ranking", "group"):
        if any(given[source] is None for source in declared.roles.values()):
            continue  # a column the metric needs was not given
        extra = {role: given[source] for role, source in declared.roles.items()}
        extra |= {option: given[option] for option in declared.options}
        calls[declared.name] = (declared, {**roles, **extra})
    return calls


def _group_metric(
    declared: Metric,
    frame: Any,
    arguments: dict[str, Any],
    boot: dict[str, Any],
    partitions: list[str],
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame | None]:
    """A group metric's per-group values, its value under every combo, and its replicates.

    One call of the metric. Without a bootstrap, the combos come from the per-group values
    (one small plan, no second pass over the frame) and there are no replicates; with one,
    every view of the same replicates (:func:`~frameaudit._engine.grouped_views`): the
    combos' intervals from the replicates' combos, and each replicate's per-group values for
    the ratios' intervals.
    """
    metric = declared.function
    if boot:
        with grouped_views():
            views: GroupedViews = metric(frame, **arguments, combo=None, **boot)
        return views.values, views.combos, views.replicates
    values = _tables.eager(metric(frame, **arguments, combo=None))
    by = partitions or None
    combos = fair.combine(values, metric=declared.name, by=by, combo=list(fair.COMBOS))
    return values, combos, None


def _ratio_table(
    called: list[tuple[Metric, pl.DataFrame, pl.DataFrame | None]],
    *,
    boot: dict[str, Any],
    reference: Any,
    partitions: list[str],
    keys: list[str],
) -> dict[str, pl.DataFrame]:
    """``{"ratios": ...}``: every group metric's ratios to the reference group, stacked.

    Empty without a reference. Each metric's rows are :func:`_ratios`'.
    """
    if reference is None:
        return {}
    where = {"boot": boot, "reference": reference, "partitions": partitions, "keys": keys}
    ratios = [
        _ratios(declared.name, values, replicates, **where)
        for declared, values, replicates in called
    ]
    return {"ratios": pl.concat(ratios, how="diagonal_relaxed")}


def _ratios(
    name: str,
    values: pl.DataFrame,
    replicates: pl.DataFrame | None,
    *,
    boot: dict[str, Any],
    reference: Any,
    partitions: list[str],
    keys: list[str],
) -> pl.DataFrame:
    """Each group's value of the metric ``name`` over the reference group's, per partition.

    With a bootstrap, the interval of the ratio comes from the metric's ``replicates`` (each
    replicate's groups divided by that replicate's reference), so the two values' shared
    noise cancels as it does in the ratio.
    """
    label = _tables.label(keys, values.schema).alias("group")
    chosen = _reference(values.with_columns(label), name, reference, partitions)
    if replicates is None:
        replicates = values.with_columns(pl.lit(POINT).alias(REPLICATE))
    replicates = replicates.with_columns(label).select(*partitions, "group", REPLICATE, name)
    against = replicates.join(chosen, on=[*partitions, "group"], how="semi").select(
        *partitions, REPLICATE, pl.col("group").alias("reference"), pl.col(name).alias("__fa_ref")
    )
    ratio = pl.when(pl.col("__fa_ref") != 0).then(pl.col(name) / pl.col("__fa_ref")).alias("ratio")
    joined = replicates.join(against, on=[*partitions, REPLICATE], how="inner").with_columns(
        ratio, pl.col("__fa_ref").alias("reference_value")
    )
    point = joined.filter(pl.col(REPLICATE) == POINT)
    shown = [*partitions, "group", "reference", name, "reference_value", "ratio"]
    if not boot:
        return point.select(pl.lit(name).alias("metric"), *shown).rename({name: "value"})
    bootstrap = Bootstrap(boot["ci"], boot["n_boot"], boot["seed"])
    units = values.select(*partitions, label, LAYOUT.unit).unique([*partitions, "group"])
    found = interval(
        nw.from_native(joined.lazy()),
        [*partitions, "group"],
        "ratio",
        bootstrap,
        units=nw.from_native(units.lazy()),
    )
    intervals = _tables.eager(found.to_native()).drop("ratio")
    return (
        point.select(*shown)
        .join(intervals, on=[*partitions, "group"], how="left", nulls_equal=True)
        .select(pl.lit(name).alias("metric"), *shown, "ratio_lo", "ratio_hi", LAYOUT.unit)
        .rename({name: "value"})
        .sort([*partitions, "group"], nulls_last=True)
    )


def _reference(
    values: pl.DataFrame, metric: str, reference: Any, partitions: list[str]
) -> pl.DataFrame:
    """The reference group of each partition: (partitions, ``group``)."""
    by: list[Any] = partitions or [pl.lit(0).alias("__fa_all")]
    if reference in ("largest", "best"):
        column = "n" if reference == "largest" else metric
        ranked = values.filter(pl.col(column).is_not_null()).sort(
            [*partitions, column, "group"], descending=[False] * len(partitions) + [True, False]
        )
        return ranked.group_by(by, maintain_order=True).first().select(*partitions, "group")
    named = "/".join(map(str, reference)) if isinstance(reference, tuple) else str(reference)
    found = values.filter(pl.col("group") == named)
    if found.is_empty():
        listed = values["group"].unique(maintain_order=True).to_list()
        raise InvalidParameterError.choice("reference", named, ["largest", "best", *listed])
    return found.select(*partitions, "group").unique()


def _iaa(frame: Any, roles: dict[str, Any], boot: dict[str, Any]) -> tuple[pl.DataFrame, str]:
    """IAA's summary row, and a note where its interval is left out.

    Amortized over items that recur across rankings, IAA's bootstrap holds one sum per
    (item, replicate), items x n_boot of them (10.9 GiB for 240,000 items and n_boot=1000):
    the report leaves that interval out.
    """
    amortized = roles["item"] is not None and roles["ranking"] is not None
    kept = {} if amortized else boot
    iaa = _tables.eager(fair.iaa(frame, **roles, **kept))
    return _single("iaa", iaa, kept.get("ci"), None), _IAA_NOTE if amortized and boot else ""


_IAA_NOTE = (
    "IAA, amortized over items that recur across rankings, has no interval here: its "
    "bootstrap holds one sum per item and replicate (items x n_boot of them); "
    "fa.fair.iaa(..., ci=) computes it where that fits in memory."
)


TASK1 = "ndcg_x_awrf_js"
"""The TREC Fair Ranking task-1 score's summary row: per ranking nDCG × AWRF_JS, averaged."""


def _graded_rows(
    frame: Any,
    *,
    judgments: Any | None,
    relevance: str | None,
    sample: str | None,
    positions: dict[str, Any],
    weighting: dict[str, Any],
    fairness: dict[str, Any],
    keys: list[str],
    queries: list[str] | None,
    rankings: list[str] | None,
    boot: dict[str, Any],
) -> list[pl.DataFrame]:
    """The summary rows that need grades.

    EE-L/D/R (judgments), nDCG (judgments, else relevance) and, with a target
    (``fairness``: NDKL's and AWRF_JS's roles), TREC's task-1 score.
    """
    rows: list[pl.DataFrame] = []
    by = weighting["by"]
    partitions = [] if by is None else [by] if isinstance(by, str) else list(by)
    if judgments is not None:
        roles = {**positions, "ranking": queries, "sample": sample, "by": by}
        rows += _expected_exposure(frame, judgments, roles, keys, boot)
    if judgments is None and not relevance:
        return rows
    graded: dict[str, Any] = {}
    if judgments is not None:
        graded = {"judgments": judgments, "ranking": queries, "sample": sample}
    graded["relevance"] = "relevance" if judgments is not None else relevance
    ndcg = _tables.eager(fair.ndcg(frame, **{**positions, **graded}, **weighting, **boot))
    rows.append(_single("ndcg", ndcg, boot.get("ci"), None))
    if fairness["target"] is not None:
        rows.append(
            _task1(
                frame,
                positions=positions,
                graded=graded,
                fairness=fairness,
                partitions=partitions,
                rankings=rankings,
            )
        )
    return rows


def _task1(
    frame: Any,
    *,
    positions: dict[str, Any],
    graded: dict[str, Any],
    fairness: dict[str, Any],
    partitions: list[str],
    rankings: list[str] | None,
) -> pl.DataFrame:
    """TREC's task-1 score: each ranking's nDCG times its AWRF_JS, the mean over rankings."""
    by = list(dict.fromkeys([*partitions, *(rankings or [])])) or None
    ndcg = _tables.eager(fair.ndcg(frame, **{**positions, **graded}, by=by))
    awrf = _tables.eager(fair.awrf_js(frame, **{**fairness, "by": by, "weight": None}))
    keys = by or []
    scored = (
        ndcg.join(awrf, on=keys, how="inner", nulls_equal=True) if keys else ndcg.hstack(awrf)
    ).with_columns((pl.col("ndcg") * pl.col("awrf_js")).alias("value"))
    rows = (
        scored.group_by(partitions, maintain_order=True).agg(pl.col("value").mean())
        if partitions
        else scored.select(pl.col("value").mean())
    )
    return rows.with_columns(
        pl.lit(TASK1).alias("metric"),
        pl.lit(None, dtype=pl.String).alias("combo"),
        pl.lit("higher is better (TREC task 1: nDCG x AWRF_JS per ranking, averaged)").alias(
            "direction"
        ),
        pl.lit("[0, 1]").alias("range"),
        pl.lit(None, dtype=pl.String).alias("note"),
    )


def _rankings(
    ranking: str | Sequence[str] | None, sample: str | None
) -> tuple[list[str] | None, list[str] | None]:
    """The query columns, and the rankings'.

    A stochastic run's rankings are its (query, sample) pairs; the judgments key the queries.
    """
    queries = None if ranking is None else [ranking] if isinstance(ranking, str) else list(ranking)
    if sample is not None and queries is None:
        raise InvalidParameterError(f"sample={sample!r}: give ranking= the query column(s)")
    return queries, None if queries is None else [*queries, *([sample] if sample else [])]


def _title(keys: list[str], partitions: list[str]) -> str:
    title = f"Fair-ranking report by {' × '.join(keys)}"
    return f"{title}, per {' × '.join(partitions)}" if partitions else title


def _expected_exposure(
    frame: Any,
    judgments: Any,
    roles: dict[str, Any],
    keys: list[str],
    boot: dict[str, Any],
) -> list[pl.DataFrame]:
    """EE-L, EE-D and EE-R's summary rows: per group where the judgments hold the groups."""
    if roles["ranking"] is None or roles["item"] is None:
        msg = (
            "judgments=: expected exposure needs ranking= (the query column) and item= (the "
            "item column of the log and of the judgments)"
        )
        raise InvalidParameterError(msg)
    grouped = set(keys) <= set(schema_names(judgments))
    result = _tables.eager(
        fair.expected_exposure(
            frame, judgments=judgments, **roles, group=keys if grouped else None, **boot
        )
    )
    partitions = result.columns[: result.columns.index("ee_l")]
    rows = []
    for column in fair.exposure.COLUMNS:
        shown: list[str | pl.Expr] = [*partitions, column]
        if boot:
            shown += [
                f"{column}_lo",
                f"{column}_hi",
                pl.col("queries").alias(LAYOUT.unit),
                pl.col(f"{column}_undefined_replicates").alias("undefined_replicates"),
            ]
        rows.append(_single(column, result.select(shown), boot.get("ci"), None))
    return rows


def _ndkl(
    frame: Any,
    roles: dict[str, Any],
    *,
    partitions: list[str],
    rankings: list[str] | None,
    boot: dict[str, Any],
) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:
    """NDKL per partition (with its interval), and per ranking (``ndkl_by_ranking``)."""
    ndkl = _tables.eager(fair.ndkl(frame, **roles, **boot))
    tables: dict[str, pl.DataFrame] = {}
    if rankings is not None:
        by = list(dict.fromkeys([*partitions, *rankings]))
        per_ranking = {**roles, "by": by, "weight": None}
        by_ranking = _tables.eager(fair.ndkl(frame, **per_ranking))
        keys = by_ranking.columns[:-1]
        tables["ndkl_by_ranking"] = by_ranking.sort(
            _tables.ordered("ndkl"), *keys, descending=[True] + [False] * len(keys), nulls_last=True
        )
    return ndkl, tables


def _worst_rankings(
    ndkl: pl.DataFrame, tables: dict[str, pl.DataFrame], partitions: list[str]
) -> list[dict[str, Any]]:
    """The rankings with the highest NDKL (the partitions' NDKL without ``ranking``)."""
    by_ranking = tables.get("ndkl_by_ranking")
    if by_ranking is not None:
        label = _tables.label(by_ranking.columns[:-1])
        shown = by_ranking.head(_SHOWN_RANKINGS).select(label, "ndkl").iter_rows()
        return [_tables.worst_row("ndkl", "ranking", name, value, 0.0) for name, value in shown]
    return [
        _tables.worst_row(
            "ndkl",
            "ranking",
            "/".join(str(row[c]) for c in partitions) or "(all rows)",
            row["ndkl"],
            0.0,
        )
        for row in ndkl.iter_rows(named=True)
    ]


def _combos(
    metric: str,
    combos: pl.DataFrame,
    values: pl.DataFrame,
    *,
    partitions: list[str],
    keys: list[str],
    ci: float | None,
) -> pl.DataFrame:
    """The summary rows of a group metric: one per (partition, combo), with its note."""
    notes = _absent(values, partitions, keys, metric)
    rows = combos.rename({metric: "value"}).with_columns(pl.lit(metric).alias("metric"))
    if ci is not None:
        rows = rows.rename({f"{metric}_lo": "lo", f"{metric}_hi": "hi"})
    order = {name: i for i, name in enumerate(fair.COMBOS)}
    rows = (
        rows.with_columns(
            pl.col("combo").replace_strict(order, return_dtype=pl.Int64).alias("__order")
        )
        .sort([*partitions, "__order"])
        .drop("__order")
    )
    rows = (
        rows.join(notes, on=partitions, how="left")
        if partitions
        else rows.with_columns(
            pl.lit(notes.item() if notes.height else None, dtype=pl.String).alias("note")
        )
    )
    direction = pl.col("combo").replace_strict(
        {c: best for c, (best, _) in fair.COMBO_BEST.items()}, return_dtype=pl.String
    )
    scale = pl.col("combo").replace_strict(
        {c: scale for c, (_, scale) in fair.COMBO_BEST.items()}, return_dtype=pl.String
    )
    note = pl.when(pl.col("value").is_null()).then(pl.col("note"))
    return rows.with_columns(direction.alias("direction"), scale.alias("range"), note.alias("note"))


def _absent(
    values: pl.DataFrame, partitions: list[str], keys: list[str], metric: str
) -> pl.DataFrame:
    """Per partition, why a combo of ``metric`` is undefined: absent groups, null V_g."""
    label = _tables.label(keys, values.schema)
    reasons = values.group_by(partitions or pl.lit(0).alias("__all")).agg(
        label.filter(pl.col("n") == 0).alias("absent"),
        label.filter(pl.col(metric).is_null() & (pl.col("n") > 0)).alias("undefined"),
        pl.len().alias("groups"),
    )
    reason = pl.coalesce(
        _tables.listed("absent", "group {} absent (n = 0)"),
        _tables.listed("undefined", f"group {{}}: {metric.upper()} undefined (0/0)"),
        pl.when(pl.col("groups") < 2).then(pl.lit("fewer than two groups to compare")),
    )
    return reasons.select(*partitions, reason.alias("note"))


def _single(metric: str, result: pl.DataFrame, ci: float | None, note: str | None) -> pl.DataFrame:
    """The summary rows of a single-number metric (combo null), one per partition."""
    best, scale = _tables.direction(metric)
    rows = result.rename({metric: "value"}).with_columns(
        pl.lit(metric).alias("metric"),
        pl.lit(None, dtype=pl.String).alias("combo"),
        pl.lit(best).alias("direction"),
        pl.lit(scale).alias("range"),
        pl.when(pl.col("value").is_null()).then(pl.lit(note, dtype=pl.String)).alias("note"),
    )
    if ci is not None:
        rows = rows.rename({f"{metric}_lo": "lo", f"{metric}_hi": "hi"})
    return rows


def _ndkl_note(per_group: pl.DataFrame, keys: list[str], target: Any) -> str | None:
    """Why NDKL is null (the notes of :func:`frameaudit.fair.ndkl`)."""
    if target is not None:
        return None
    totals = per_group.group_by(keys).agg(pl.col("n").sum())
    absent = totals.filter(pl.col("n") == 0).select(_tables.label(keys, totals.schema))
    if absent.height:
        names = ", ".join(f"'{name}'" for name in absent.to_series().sort().head(3))
        return f"group {names} has no row in the frame: no reference share (give target=)"
    if totals.height < 2:
        return "fewer than two groups to compare"
    return None


def _worst_group(values: pl.DataFrame, keys: list[str], metric: str) -> dict[str, Any]:
    """The group whose value is furthest from the groups' mean (parity: all equal).

    On a tie (two groups are always equally far), the group below the mean: the one the
    ranking disadvantages. A group of the universe absent from the data (n = 0) with no value
    is the worst of all: nothing says it gets its share.
    """
    absent = values.filter((pl.col("n") == 0) & pl.col(metric).is_null())
    if not absent.is_empty():
        name = absent.select(_tables.label(keys, values.schema)).to_series()[0]
        return _tables.worst_row(metric, "group", f"{name} (absent)", None, None)
    defined = values.filter(pl.col(metric).is_not_null() & pl.col(metric).is_finite())
    if defined.is_empty():
        return _tables.worst_row(metric, "group", "(no defined value)", None, None)
    mean = defined[metric].mean()
    assert isinstance(mean, float)
    far = defined.with_columns(
        (pl.col(metric) - mean).abs().alias("__gap"),
        _tables.label(keys, defined.schema).alias("__name"),
    ).sort(
        _tables.ordered("__gap"),
        _tables.ordered(metric),
        "__name",
        descending=[True, False, False],
    )
    row = far.row(0, named=True)
    return _tables.worst_row(metric, "group", row["__name"], row[metric], mean)


def _positions(
    frame: Any, *, rank: str, keys: list[str], item: str | None, groups: Any, weight: str | None
) -> pl.DataFrame:
    """Each group's share of the rows at each position bucket, and of all rows.

    Counted in the input's engine (only the counts are collected); with ``groups=`` the
    counts are per item and the mapping names the groups; with ``weight`` a row counts its
    ranking's weight.
    """
    native = nw.from_native(frame)
    lazy = native.lazy(backend="polars") if isinstance(native, nw.DataFrame) else native
    bucket = sum(((nw.col(rank) > edge).cast(nw.Int64) for edge in _EDGES), nw.lit(0))
    by = keys if groups is None else [item]
    counts = _tables.eager(
        lazy.with_columns(bucket.alias(_BUCKET))
        .group_by(_BUCKET, *by)
        .agg((nw.col(weight).cast(nw.Float64).sum() if weight else nw.len()).alias(_ROWS))
    ).with_columns(pl.col(_ROWS).cast(pl.Float64 if weight else pl.Int64))
    if groups is not None:
        assert item is not None  # the metrics require it with groups=
        mapping = (
            pl.DataFrame({item: list(groups), keys[0]: list(groups.values())})
            if isinstance(groups, Mapping)
            else _tables.eager(groups).select(item, *keys)
        )
        counts = (
            counts.join(mapping, on=item, how="left")
            .group_by(_BUCKET, *keys)
            .agg(pl.col(_ROWS).sum())
        )
    counts = counts.select(
        pl.col(_BUCKET).alias("bucket"),
        _tables.label(keys, counts.schema).alias("group"),
        pl.col(_ROWS).alias("rows"),
    )
    grid = counts.select("bucket").unique().join(counts.select("group").unique(), how="cross")
    return (
        grid.join(counts, on=["bucket", "group"], how="left")
        .with_columns(pl.col("rows").fill_null(0))
        .with_columns(
            (pl.col("rows") / pl.col("rows").sum().over("bucket")).alias("share"),
            (pl.col("rows").sum().over("group") / pl.col("rows").sum()).alias("overall"),
            pl.col("bucket").replace_strict(range(len(_BUCKETS)), _BUCKETS).alias("positions"),
        )
        .sort("bucket", "group")
        .select("bucket", "positions", "group", "rows", "share", "overall")
    )


def charts(report: Report) -> dict[str, Any]:
    """The share of each group by position, and the worst rankings by NDKL."""
    alt = _charts.altair()
    charts: dict[str, Any] = {}
    positions = report.tables["positions"]
    order = positions.sort("bucket")["positions"].unique(maintain_order=True).to_list()
    groups = positions["group"].unique().sort().to_list()
    subtitle = "Fair: each line flat on its dashed line (the group's share of all rows)."
    if len(groups) > len(_charts.PALETTE):
        # one colour a group: the largest groups
        largest = positions.unique("group").sort(
            _tables.ordered("overall"), "group", descending=[True, False]
        )
        groups = sorted(largest["group"].head(len(_charts.PALETTE)).to_list())
        positions = positions.filter(pl.col("group").is_in(groups))
        subtitle += f" The {len(groups)} largest of {largest.height} groups."
    positions = positions.with_columns(_charts.shortened(pl.col("group")).alias("group"))
    groups = positions["group"].unique().sort().to_list()
    colour = alt.Color(
        "group:N",
        title=" × ".join(report.keys),
        scale=alt.Scale(domain=groups, range=list(_charts.PALETTE[: len(groups)])),
    )
    x = alt.X("positions:O", title="positions (bucket)", sort=order, axis=alt.Axis(labelAngle=0))
    lines = (
        alt.Chart(positions)
        .mark_line(point=True, strokeWidth=2)
        .encode(
            x=x,
            y=alt.Y(
                "share:Q", title="share of the rows at these positions", axis=alt.Axis(format="%")
            ),
            color=colour,
            tooltip=["positions", "group", "rows", alt.Tooltip("share:Q", format=".1%")],
        )
    )
    overall = (
        alt.Chart(positions.unique(["group"], maintain_order=True).select("group", "overall"))
        .mark_rule(strokeDash=[5, 3], strokeWidth=1.5)
        .encode(y="overall:Q", color=colour)
    )
    charts["positions"] = _charts.config(
        alt.layer(overall, lines).properties(
            width=_charts.WIDTH + 160,
            height=260,
            title=alt.Title(
                "Share of each group at each position",
                subtitle=subtitle,
            ),
        )
    )
    by_ranking = report.tables.get("ndkl_by_ranking")
    if by_ranking is not None and by_ranking["ndkl"].is_not_null().any():
        rankings = by_ranking.columns[:-1]
        label = _charts.shortened(_tables.label(rankings, by_ranking.schema))
        worst = by_ranking.head(10).select(label.alias("ranking"), "ndkl").drop_nulls()
        mean = report.summary.filter(pl.col("metric") == "ndkl")["value"].mean()
        bars = (
            alt.Chart(worst)
            .mark_bar(color=_charts.PALETTE[3])
            .encode(
                x=alt.X("ndkl:Q", title="NDKL (0 = the top prefixes mirror the groups)"),
                y=alt.Y("ranking:N", title=" / ".join(rankings), sort=None),
                tooltip=["ranking", "ndkl"],
            )
        )
        average = (
            alt.Chart(pl.DataFrame({"mean": [mean]}))
            .mark_rule(color="#000000", strokeDash=[5, 3])
            .encode(x="mean:Q")
        )
        charts["ndkl"] = _charts.config(
            alt.layer(bars, average).properties(
                width=_charts.WIDTH,
                height=max(60, 24 * worst.height),
                title=alt.Title(
                    f"The {worst.height} rankings with the highest NDKL",
                    subtitle="Fair: bars near 0. Dashed: the mean over all rankings.",
                ),
            )
        )
    return charts


_layout.declare("ranking", LAYOUT, charts)
