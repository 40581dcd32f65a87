"""The fair-ranking report: every group metric per group and under every combo, NDKL and IAA."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import narwhals.stable.v2 as nw
import polars as pl

from frameaudit import fair
from frameaudit.report import _charts, _tables
from frameaudit.report._report import Report
from frameaudit.report._views import Layout

__all__ = ["DIRECTIONS", "GROUP_METRICS", "LAYOUT", "charts", "ranking"]

LAYOUT = Layout(
    per_group="Per group (n: the group size)",
    worst="Furthest from parity (reference: the groups' mean; for NDKL, 0)",
    unit="rankings",
)

# what fair looks like under each combo, and the combo's range (V_g ≥ 0)
DIRECTIONS: dict[str, tuple[str, str]] = {
    "MinMaxRatio": ("1 = parity", "[0, 1]"),
    "MaxMinRatio": ("1 = parity", "[1, inf]"),
    "MaxMinDiff": ("0 = parity", "[0, inf)"),
    "MaxAbsDiff": ("0 = parity", "[0, inf)"),
    "MeanAbsDev": ("0 = parity", "[0, inf)"),
    "LTwo": ("no parity value (squared length of V)", "[0, inf)"),
    "Variance": ("0 = parity", "[0, inf)"),
    "ndkl": ("lower is better (0 = top prefixes mirror the groups)", "[0, inf)"),
    "iaa": ("lower is better (0 = attention equals relevance)", "[0, inf)"),
}
GROUP_METRICS: dict[str, dict[str, str]] = {
    "exp": {},
    "expu": {"relevance": "relevance"},
    "expru": {"relevance": "relevance", "ctr": "ctr"},
    "awrf": {"p": "p"},
    "erbe": {"decay": "decay"},
    "erbp": {"decay": "decay"},
    "erbr": {"relevance": "relevant", "decay": "decay"},
    "arp": {},
}
"""The group metrics in report order: each metric's options and the report parameter giving it."""
# positions are pooled in buckets for the position chart: 1, 2, 3, 4–5, 6–10, ..., 101+
_EDGES = (1, 2, 3, 5, 10, 20, 50, 100)
_BUCKETS = ("1", "2", "3", "4–5", "6–10", "11–20", "21–50", "51–100", "101+")
_SHOWN_RANKINGS = 5  # the worst rankings by NDKL in ``worst``


def ranking(
    frame: Any,
    *,
    rank: str = "rank",
    group: str | Sequence[str] = "group",
    ranking: str | Sequence[str] | None = None,
    item: str | None = None,
    groups: Mapping[Any, Any] | Any | None = None,
    relevance: str | None = None,
    ctr: str | None = None,
    relevant: str | None = None,
    p: float = 0.5,
    decay: float = 0.5,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Report:
    r"""The fair-ranking report of a ranking log: every metric, per group and combined.

    Runs each group metric once per group (``combo=None``) and combines its per-group values
    with :func:`frameaudit.fair.combine` under each of the seven combos; adds NDKL (the mean
    over rankings, and per ranking when ``ranking`` is given) and IAA. A metric that needs a
    column that is not given is left out: EXPU and IAA need ``relevance``, EXPRU needs
    ``relevance`` and ``ctr``, ERBR needs ``relevant`` (binary relevance).

    Parameters
    ----------
    frame
        Any frame the metrics take (Polars DataFrame/LazyFrame, pandas, pyarrow, DuckDB,
        PySpark): one row per ranked item. The report holds eager Polars frames.
    rank, group, ranking, item, groups
        The column roles, as for :func:`frameaudit.fair.exp`.
    relevance
        Relevance column in [0, 1] (EXPU, EXPRU, IAA). None: those metrics are left out.
    ctr
        Click-through-rate column in [0, 1] (EXPRU, with ``relevance``).
    relevant
        Binary (0/1) relevance column (ERBR).
    p
        AWRF's stopping probability in (0, 1].
    decay
        ERBE/ERBP/ERBR's γ in [0, 1).
    ci
        Confidence level of percentile bootstrap intervals over the rankings (``ranking``
        required), e.g. 0.95. None: no intervals.
    n_boot, seed
        Bootstrap replicates and seed, as for :func:`frameaudit.fair.exp`.

    Returns
    -------
    Report
        ``per_group``: the group columns, ``n`` and each group metric (with ``ci``:
        ``<metric>_lo``, ``<metric>_hi`` and ``rankings``). ``summary``: one row per group metric
        and combo, then ``ndkl`` and ``iaa`` (combo null). With ``ci``, ``lo``/``hi`` hold
        intervals for the ``MinMaxRatio`` rows (each group metric called once with ``ci=`` and
        its default combo), for ``ndkl`` and for ``iaa``; the other six combos have no interval
        (null), since an interval of a combo needs its own bootstrap. ``worst``: per group
        metric the group furthest from the groups' mean (parity: every group equal; on a tie,
        the group below the mean), and the
        five rankings with the highest NDKL (the partition's NDKL without ``ranking``).
        ``tables``: ``ndkl_by_ranking`` (every ranking, worst first, with ``ranking``) and
        ``positions`` (each group's share of the rows at each position bucket).

    Examples
    --------
    >>> import frameaudit as fa
    >>> log = fa.datasets.ranking_example()
    >>> r = fa.report.ranking(log, group=["gender", "age"], ranking="query", item="item")
    >>> r.check({"exp:MinMaxRatio": (">=", 0.8), "ndkl": ("<=", 0.2)})["passed"].to_list()
    [False, False]
    """
    keys = [group] if isinstance(group, str) else list(group)
    rankings = None if ranking is None else [ranking] if isinstance(ranking, str) else list(ranking)
    roles = {"rank": rank, "group": group, "ranking": ranking, "item": item, "groups": groups}
    boot: dict[str, Any] = {} if ci is None else {"ci": ci, "n_boot": n_boot, "seed": seed}
    given = {"relevance": relevance, "ctr": ctr, "relevant": relevant, "p": p, "decay": decay}
    per_group: pl.DataFrame | None = None
    summary: list[dict[str, Any]] = []
    worst: list[dict[str, Any]] = []
    for name, needs in GROUP_METRICS.items():
        if any(given[source] is None for source in needs.values()):
            continue  # a column the metric needs was not given
        extra = {option: given[source] for option, source in needs.items()}
        metric = getattr(fair, name)
        values = _tables.eager(metric(frame, **roles, **extra, combo=None, **boot))
        shared = [c for c in ("n", "rankings", "undefined_replicates") if c in values.columns]
        if per_group is None:
            per_group = values.drop("undefined_replicates", strict=False)
        else:
            per_group = per_group.join(values.drop(shared), on=keys, how="left", nulls_equal=True)
        overall = _tables.eager(metric(frame, **roles, **extra, **boot)) if ci is not None else None
        for combo in fair.COMBOS:
            value = _tables.eager(fair.combine(values, metric=name, combo=combo)).item()
            shown = overall if combo == "MinMaxRatio" else None
            summary.append(_row(name, combo, value, shown, ci))
        worst.append(_worst_group(values, keys, name))
    assert per_group is not None  # EXP is always there
    positions: dict[str, Any] = {"rank": rank, "ranking": ranking, "item": item}
    ndkl = _tables.eager(fair.ndkl(frame, **positions, group=group, groups=groups, **boot))
    summary.append(_row("ndkl", None, ndkl["ndkl"].item(), ndkl if ci else None, ci))
    tables: dict[str, pl.DataFrame] = {}
    if rankings is not None:
        by_ranking = _tables.eager(
            fair.ndkl(frame, **positions, group=group, groups=groups, by=ranking)
        )
        by_ranking = by_ranking.sort("ndkl", *rankings, descending=[True] + [False] * len(rankings))
        tables["ndkl_by_ranking"] = by_ranking
        label = _tables.label(rankings)
        worst.extend(
            _tables.worst_row("ndkl", "ranking", name, value, 0.0)
            for name, value in by_ranking.head(_SHOWN_RANKINGS).select(label, "ndkl").iter_rows()
        )
    else:
        worst.append(_tables.worst_row("ndkl", "ranking", "(all rows)", ndkl["ndkl"].item(), 0.0))
    if relevance:
        iaa = _tables.eager(fair.iaa(frame, **positions, relevance=relevance, **boot))
        summary.append(_row("iaa", None, iaa["iaa"].item(), iaa if ci else None, ci))
    tables["positions"] = _positions(frame, rank, keys, item, groups)
    group_names = " × ".join(keys)
    return Report(
        family="ranking",
        title=f"Fair-ranking report by {group_names}",
        keys=tuple(keys),
        per_group=per_group.sort(keys),
        summary=_tables.summary(summary, unit=LAYOUT.unit, ci=ci),
        worst=_tables.worst(worst),
        tables=tables,
        parameters={
            "rank": rank,
            "group": keys,
            "ranking": rankings,
            "item": item,
            "relevance": relevance,
            "ctr": ctr,
            "relevant": relevant,
            "p": float(p),
            "decay": float(decay),
            "ci": ci,
            "n_boot": n_boot,
            "seed": seed,
        },
        notes=(
            "Group metrics give each group a value V_g pooled over the rankings (higher: more "
            "exposure or more pairs won); parity is every group at the same value.",
            "Read MinMaxRatio first: the least exposed group's value over the most exposed "
            "group's (1 = parity, 0.8 is a common threshold).",
            "NDKL and IAA are single numbers: lower is better, 0 is fair.",
        ),
    )


def _row(
    metric: str, combo: str | None, value: Any, result: pl.DataFrame | None, ci: float | None
) -> dict[str, Any]:
    """A summary row; ``result``: the metric's own result with ``ci=`` (or None)."""
    interval = None
    if result is not None:
        interval = {
            "lo": result[f"{metric}_lo"].item(),
            "hi": result[f"{metric}_hi"].item(),
            "rankings": result["rankings"].item(),
            "undefined_replicates": result["undefined_replicates"].item(),
        }
    direction = DIRECTIONS[combo or metric]
    return _tables.summary_row(
        metric, combo, value, direction, unit=LAYOUT.unit, ci=ci, interval=interval
    )


def _worst_group(values: pl.DataFrame, keys: list[str], metric: str) -> dict[str, Any]:
    """The group whose value is furthest from the groups' mean (parity: all equal).

    On a tie (two groups are always equally far), the group below the mean: the one the
    ranking disadvantages.
    """
    defined = values.filter(pl.col(metric).is_not_null() & pl.col(metric).is_finite())
    if defined.is_empty():
        return _tables.worst_row(metric, "group", "(no defined value)", None, None)
    mean = defined[metric].mean()
    assert isinstance(mean, float)
    far = defined.with_columns(
        (pl.col(metric) - mean).abs().alias("__gap"), _tables.label(keys).alias("__name")
    ).sort("__gap", metric, "__name", descending=[True, False, False])
    row = far.row(0, named=True)
    return _tables.worst_row(metric, "group", row["__name"], row[metric], mean)


def _positions(
    frame: Any, rank: str, keys: list[str], item: str | None, groups: Any
) -> pl.DataFrame:
    """Each group's share of the rows at each position bucket, and of all rows.

    Counted in the input's engine (only the counts are collected); with ``groups=`` the
    counts are per item and the mapping names the groups.
    """
    native = nw.from_native(frame)
    lazy = native.lazy(backend="polars") if isinstance(native, nw.DataFrame) else native
    bucket = sum(((nw.col(rank) > edge).cast(nw.Int64) for edge in _EDGES), nw.lit(0))
    by = keys if groups is None else [item]
    counts = _tables.eager(
        lazy.with_columns(bucket.alias("bucket"))
        .group_by("bucket", *by)
        .agg(nw.len().alias("rows"))
    ).with_columns(pl.col("rows").cast(pl.Int64))
    if groups is not None:
        assert item is not None  # the metrics require it with groups=
        mapping = (
            pl.DataFrame({item: list(groups), keys[0]: list(groups.values())})
            if isinstance(groups, Mapping)
            else _tables.eager(groups).select(item, *keys)
        )
        counts = (
            counts.join(mapping, on=item, how="left")
            .group_by("bucket", *keys)
            .agg(pl.col("rows").sum())
        )
    counts = counts.select("bucket", _tables.label(keys).alias("group"), "rows")
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
                subtitle="Fair: each line flat on its dashed line (the group's share of all rows).",
            ),
        )
    )
    by_ranking = report.tables.get("ndkl_by_ranking")
    if by_ranking is not None:
        rankings = report.parameters["ranking"]
        label = pl.concat_str([pl.col(c).cast(pl.String) for c in rankings], separator="/")
        worst = by_ranking.head(10).select(label.alias("ranking"), "ndkl")
        mean = report.summary.filter(pl.col("metric") == "ndkl")["value"].item()
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
