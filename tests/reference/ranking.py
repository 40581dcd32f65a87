"""An independent, deliberately plain implementation of the fair-ranking metrics, for tests.

Written from the definitions in docs/ranking.md alone: Python loops over rows, explicit pair
enumeration for ARP and a prefix-by-prefix KL for NDKL, so that it shares no code path (and no
trick) with ``frameaudit.fair.ranking``. It also holds the seeded random inputs the ranking
tests share and the conversion of a tidy frame to FairRankTune's wide input format.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import polars as pl
from scipy.spatial.distance import jensenshannon

import frameaudit as fa

# the names come from the registry; the definitions below are this module's own
GROUP_METRICS = tuple(m.name for m in fa.metrics("ranking", "group"))
SIZED = tuple(m.name for m in fa.metrics("ranking", "group") if "size" in m.options)
"""The group metrics whose V_g divides by the group size n_g."""
METRICS = tuple(m.name for m in fa.metrics("ranking", "group", "single"))
COMBOS = (
    "MinMaxRatio",
    "MaxMinRatio",
    "MaxMinDiff",
    "MaxAbsDiff",
    "MeanAbsDev",
    "LTwo",
    "Variance",
)

Row = Mapping[str, Any]
Value = float | None


def div(numerator: float, denominator: float) -> Value:
    """IEEE division with 0/0 undefined (None), frameaudit's general rule (docs/concepts.md)."""
    if denominator == 0:
        if numerator == 0:
            return None
        return math.copysign(math.inf, numerator)
    return numerator / denominator


def _bad(value: Value) -> bool:
    return value is None or math.isnan(value)


def combine(values: Sequence[Value], combo: str) -> Value:
    """A combo over per-group values; None if a value or the result is undefined (0/0, NaN).

    Fewer than two groups compare nothing: None too.
    """
    if any(_bad(v) for v in values) or len(values) < 2:
        return None
    vals = [float(v) for v in values if v is not None]
    count = len(vals)
    mean = sum(vals) / count
    devs = [abs(v - mean) for v in vals]
    result: Value
    if combo == "MinMaxRatio":
        result = div(min(vals), max(vals))
    elif combo == "MaxMinRatio":
        result = div(max(vals), min(vals))
    elif combo == "MaxMinDiff":
        result = max(vals) - min(vals)
    elif combo == "MaxAbsDiff":
        result = math.nan if any(math.isnan(d) for d in devs) else max(devs)
    elif combo == "MeanAbsDev":
        result = sum(devs) / count
    elif combo == "LTwo":
        result = sum(v * v for v in vals)
    elif combo == "Variance":
        result = div(sum(d * d for d in devs), count - 1)
    else:
        raise ValueError(combo)
    return None if _bad(result) else result


def _names(value: str | Sequence[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _key(row: Row, columns: Sequence[str]) -> tuple[Any, ...]:
    return tuple(row[c] for c in columns)


def _exposure(position: int) -> float:
    return 1.0 / math.log2(position + 1)


def _weight(metric: str, row: Row, rank: str, params: Mapping[str, Any]) -> float:
    """The per-row numerator of a sum metric."""
    k: int = row[rank]
    if metric in ("exp", "expu"):
        return _exposure(k)
    if metric == "expru":
        return float(row[params["ctr"]])
    if metric == "awrf":
        p = float(params["p"])
        return 100.0 * p * (1.0 - p) ** (k - 1)
    gamma = float(params["decay"])
    return (1.0 - gamma) * gamma ** (k - 1)


def _arp_counts(
    ranking_rows: Sequence[Row], rank: str, group_of: Any
) -> tuple[dict[Any, int], dict[Any, int]]:
    """Mixed pairs won by / involving each group in one ranking, by enumerating every pair."""
    ordered = sorted(ranking_rows, key=lambda r: r[rank])
    won: dict[Any, int] = defaultdict(int)
    mixed: dict[Any, int] = defaultdict(int)
    for i, upper in enumerate(ordered):
        for lower in ordered[i + 1 :]:
            g_up, g_low = group_of(upper), group_of(lower)
            if g_up != g_low:
                won[g_up] += 1
                mixed[g_up] += 1
                mixed[g_low] += 1
    return won, mixed


def _split(rows: Sequence[Row], columns: Sequence[str]) -> dict[tuple[Any, ...], list[Row]]:
    parts: dict[tuple[Any, ...], list[Row]] = defaultdict(list)
    for row in rows:
        parts[_key(row, columns)].append(row)
    return parts


def group_sizes(
    rows: Sequence[Row],
    *,
    group: Sequence[str],
    item: str | None,
    groups: Mapping[Any, Any] | None,
    universe: Sequence[tuple[Any, ...]],
    size: str,
    **_: Any,
) -> dict[tuple[Any, ...], float]:
    """n_g for every group of the universe: mapping items, else distinct items, else rows.

    A group of the universe with no row in ``rows`` has size 0 (without a mapping).
    """
    if groups is not None:
        return {g: float(sum(1 for v in groups.values() if (v,) == g)) for g in universe}
    members: dict[tuple[Any, ...], set[Any]] = defaultdict(set)
    for index, row in enumerate(rows):
        members[_key(row, group)].add(row[item] if size == "items" else index)
    return {g: float(len(members[g])) for g in universe}


def frame_universe(
    rows: Sequence[Row], group: Sequence[str], groups: Mapping[Any, Any] | None
) -> list[tuple[Any, ...]]:
    """The groups of the whole frame (every partition), or the mapping's (SPEC §1)."""
    if groups is not None:
        return sorted({(g,) for g in groups.values()})
    return sorted({_key(row, group) for row in rows})


def per_group(
    metric: str,
    rows: Sequence[Row],
    *,
    rank: str,
    group: Sequence[str],
    ranking: Sequence[str],
    item: str | None,
    groups: Mapping[Any, Any] | None,
    params: Mapping[str, Any],
    universe: Sequence[tuple[Any, ...]],
    size: str,
) -> dict[tuple[Any, ...], Value]:
    """V_g for every group of the universe, for the rows of one partition."""

    def group_of(row: Row) -> tuple[Any, ...]:
        if groups is not None:
            return (groups[row[item]],)  # type: ignore[index]
        return _key(row, group)

    sizes = group_sizes(rows, group=group, item=item, groups=groups, universe=universe, size=size)

    if metric == "arp":
        won: dict[Any, int] = defaultdict(int)
        mixed: dict[Any, int] = defaultdict(int)
        for ranking_rows in _split(rows, ranking).values():
            w, m = _arp_counts(ranking_rows, rank, group_of)
            for g in m:
                won[g] += w[g]
                mixed[g] += m[g]
        return {g: div(won[g], mixed[g]) for g in universe}

    num = dict.fromkeys(universe, 0.0)
    rel = dict.fromkeys(universe, 0.0)
    for row in rows:
        g = group_of(row)
        num[g] += _weight(metric, row, rank, params)
        if metric in ("expu", "expru", "erbr"):
            rel[g] += float(row[params["relevance"]])
    if metric in ("expu", "expru", "erbr"):
        return {g: div(num[g], rel[g]) for g in universe}
    if metric == "erbe":
        return {g: num[g] for g in universe}
    return {g: div(num[g], sizes[g]) for g in universe}


def kl(prefix: Mapping[Any, float], target: Mapping[Any, float], eps: float = 0.0) -> float:
    """KL(P ‖ D) in nats with 0·ln 0 = 0; ``eps`` is added to both sides (FairRankTune's ε)."""
    total = 0.0
    for g in set(prefix) | set(target):
        p = prefix.get(g, 0.0) + eps
        d = target.get(g, 0.0) + eps
        if p > 0:
            total += math.inf if d == 0 else p * math.log(p / d)
    return total


def ndkl_one(
    ranking_rows: Sequence[Row],
    *,
    rank: str,
    group_of: Any,
    target: Mapping[Any, float] | None,
    eps: float = 0.0,
) -> float:
    """NDKL of one ranking: a weighted mean of the KL divergence of every top-i prefix."""
    ordered = sorted(ranking_rows, key=lambda r: r[rank])
    labels = [group_of(r) for r in ordered]
    if target is None:
        target = {g: labels.count(g) / len(labels) for g in set(labels)}
    numerator = denominator = 0.0
    for i in range(1, len(labels) + 1):
        top = labels[:i]
        prefix = {g: top.count(g) / i for g in set(top)}
        weight = 1.0 / math.log2(i + 1)
        numerator += weight * kl(prefix, target, eps)
        denominator += weight
    return numerator / denominator


def awrf_js_one(
    ranking_rows: Sequence[Row],
    *,
    rank: str,
    group_of: Any,
    target: Mapping[Any, float] | None,
) -> float:
    """1 − JS divergence of a ranking's attention (1/log2(max(k, 2)) per item) and the target
    (None: the ranking's own group mix), by scipy's Jensen–Shannon distance."""
    attention: dict[Any, float] = defaultdict(float)
    for row in ranking_rows:
        attention[group_of(row)] += 1.0 / math.log2(max(row[rank], 2))
    if target is None:
        labels = [group_of(r) for r in ranking_rows]
        target = {g: labels.count(g) / len(labels) for g in set(labels)}
    cells = sorted(set(attention) | set(target))
    distance = jensenshannon(
        [attention.get(g, 0.0) for g in cells], [target.get(g, 0.0) for g in cells]
    )
    return 1.0 - float(distance) ** 2


def ndcg_one(
    ranking_rows: Sequence[Row], *, rank: str, relevance: str, k: int | None = None
) -> float:
    """nDCG@k of one ranking, linear gain, 1/log2(j+1), the ideal from its own relevance (0
    without a relevant item)."""
    rows = sorted(ranking_rows, key=lambda r: r[rank])
    dcg = sum(
        float(r[relevance]) / math.log2(r[rank] + 1) for r in rows if k is None or r[rank] <= k
    )
    grades = sorted((float(r[relevance]) for r in rows), reverse=True)[:k]
    ideal = sum(g / math.log2(j + 2) for j, g in enumerate(grades))
    return dcg / ideal if ideal > 0 else 0.0


def _scalar(
    metric: str,
    rows: Sequence[Row],
    *,
    rank: str,
    group: Sequence[str],
    ranking: Sequence[str],
    item: str | None,
    groups: Mapping[Any, Any] | None,
    params: Mapping[str, Any],
    shares: Mapping[Any, float] | None,
    **_: Any,
) -> Value:
    """NDKL (mean over rankings) or IAA (amortized over rankings) of one partition.

    ``shares``: NDKL's reference distribution (None: each ranking's own mix).
    """
    if metric in ("ndkl", "awrf_js"):

        def group_of(row: Row) -> Any:
            return (groups[row[item]],) if groups is not None else _key(row, group)  # type: ignore[index]

        if shares is not None and (len(shares) < 2 or 0.0 in shares.values()):
            return None  # a universe group absent from the frame, or nothing to compare
        one = ndkl_one if metric == "ndkl" else awrf_js_one
        values = [
            one(r, rank=rank, group_of=group_of, target=shares)
            for r in _split(rows, ranking).values()
        ]
        return sum(values) / len(values)
    if metric == "ndcg":
        scores = [
            ndcg_one(r, rank=rank, relevance=params["relevance"])
            for r in _split(rows, ranking).values()
        ]
        return sum(scores) / len(scores)
    gaps: dict[Any, float] = defaultdict(float)
    for index, row in enumerate(rows):
        owner = row[item] if item is not None else index
        gaps[owner] += _exposure(row[rank]) - float(row[params["relevance"]])
    return sum(abs(g) for g in gaps.values())


def expected(
    frame: pl.DataFrame,
    metric: str,
    *,
    rank: str = "rank",
    group: str | Sequence[str] = "group",
    ranking: str | Sequence[str] | None = None,
    item: str | None = None,
    groups: Mapping[Any, Any] | None = None,
    universe: Sequence[Any] | None = None,
    target: Mapping[Any, float] | str | None = None,
    size: str | None = None,
    by: str | Sequence[str] | None = None,
    combo: str | None = "MinMaxRatio",
    relevance: str = "relevance",
    ctr: str = "ctr",
    p: float = 0.5,
    decay: float = 0.5,
) -> pl.DataFrame:
    """The frame frameaudit's ``metric`` should return for these arguments (docs/ranking.md).

    The group universe is the mapping's, else ``universe`` (values, or tuples for several
    group columns), else every group of the whole frame. ``size``: "items" or "rows" (default:
    items with ``item``). NDKL's reference: ``target`` (a mapping, or "ranking": each
    ranking's own mix), else the universe's shares of the whole frame.
    """
    group_names, ranking_names, by_names = _names(group), _names(ranking), _names(by)
    params = {"relevance": relevance, "ctr": ctr, "p": p, "decay": decay}
    rows = frame.to_dicts()
    if universe is not None:
        listed = sorted(v if isinstance(v, tuple) else (v,) for v in universe)
    else:
        listed = frame_universe(rows, group_names, groups)
    size = size or ("items" if item is not None else "rows")
    kwargs = {
        "rank": rank,
        "group": group_names,
        "ranking": ranking_names,
        "item": item,
        "groups": groups,
        "params": params,
        "universe": listed,
        "size": size,
        "shares": _shares(
            rows, group_names, item=item, groups=groups, universe=listed, target=target
        ),
    }
    out: list[dict[str, Any]] = []
    for part, rows in sorted(_split(frame.to_dicts(), by_names).items()):
        head = dict(zip(by_names, part, strict=True))
        if metric in ("ndkl", "iaa", "awrf_js", "ndcg"):
            out.append({**head, metric: _scalar(metric, rows, **kwargs)})  # type: ignore[arg-type]
            continue
        values = per_group(metric, rows, **_without(kwargs, "shares"))  # type: ignore[arg-type]
        if combo is None:
            sizes = group_sizes(rows, **kwargs)  # type: ignore[arg-type]
            out += [
                {**head, **dict(zip(group_names, g, strict=True)), metric: v, "n": int(sizes[g])}
                for g, v in values.items()
            ]
        else:
            out.append({**head, metric: combine(list(values.values()), combo)})
    keys = by_names + (group_names if combo is None and metric in GROUP_METRICS else [])
    sized = combo is None and metric in GROUP_METRICS
    result = pl.DataFrame(out).select(
        *keys, pl.col(metric).cast(pl.Float64), *([pl.col("n").cast(pl.Int64)] if sized else [])
    )
    return result.sort(keys) if keys else result


def explicit_size(metric: str, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """``kwargs`` with ``size="rows"`` where ``metric`` needs the choice made explicitly.

    A sized metric with several rankings in a partition and no ``item=`` refuses to guess
    whether rows are items; tests whose rows are their own items say so.
    """
    several = kwargs.get("ranking") is not None and kwargs.get("ranking") != kwargs.get("by")
    if metric in SIZED and several and kwargs.get("item") is None and "size" not in kwargs:
        return {**kwargs, "size": "rows"}
    return dict(kwargs)


def _without(kwargs: Mapping[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in kwargs.items() if k not in names}


def _shares(
    rows: Sequence[Row],
    group: Sequence[str],
    *,
    item: str | None,
    groups: Mapping[Any, Any] | None,
    universe: Sequence[tuple[Any, ...]],
    target: Mapping[Any, float] | str | None,
) -> dict[tuple[Any, ...], float] | None:
    """NDKL's reference distribution over the universe (None: each ranking's own mix)."""
    if target == "ranking":
        return None
    if isinstance(target, Mapping):
        return {(k if isinstance(k, tuple) else (k,)): float(v) for k, v in target.items()}
    if groups is not None:
        counts = {g: float(sum(1 for v in groups.values() if (v,) == g)) for g in universe}
    else:
        counts = group_sizes(
            rows,
            group=group,
            item=item,
            groups=None,
            universe=universe,
            size="items" if item is not None else "rows",
        )
    total = sum(counts.values())
    return {g: counts[g] / total for g in universe}


# ---------------------------------------------------------------------------------------------
# Seeded inputs shared by the ranking tests, and FairRankTune's wide format.


def random_rankings(
    seed: int,
    *,
    n_items: int = 12,
    n_groups: int = 3,
    n_rankings: int = 3,
    length: int | None = None,
    gaps: bool = False,
    n_parts: int = 1,
) -> tuple[pl.DataFrame, dict[int, str]]:
    """A tidy frame of rankings of ``n_items`` items and the item → group mapping.

    Columns: ``query`` (ranking id), ``part`` (a partition of the queries, for ``by=``),
    ``rank``, ``item``, ``group`` (the mapping's group), ``region`` (a second attribute, for
    intersectional groups), ``relevance`` and ``ctr`` in [0, 1], ``binary`` (0/1 relevance).
    ``length`` (default: all items) makes partial rankings of that many items; ``gaps`` makes
    positions non-contiguous.
    """
    rng = random.Random(seed)
    labels = [f"g{i}" for i in range(n_groups)]
    mapping = {i: labels[i] if i < n_groups else rng.choice(labels) for i in range(n_items)}
    region = {i: rng.choice(["north", "south"]) for i in range(n_items)}
    rows = []
    for query in range(n_rankings):
        items = rng.sample(range(n_items), length if length is not None else n_items)
        positions = range(1, len(items) + 1)
        if gaps:
            positions = sorted(rng.sample(range(1, 3 * len(items) + 1), len(items)))  # type: ignore[assignment]
        for position, item in zip(positions, items, strict=True):
            rows.append(
                {
                    "query": query,
                    "part": f"p{query % n_parts}",
                    "rank": position,
                    "item": item,
                    "group": mapping[item],
                    "region": region[item],
                    "relevance": round(rng.random(), 3),
                    "ctr": round(rng.random(), 3),
                    "binary": rng.randint(0, 1),
                }
            )
    return pl.DataFrame(rows), mapping


def to_wide(
    frame: pl.DataFrame, values: Sequence[str] = (), *, ranking: str = "query", rank: str = "rank"
) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """FairRankTune's input: one column per ranking, rows = positions top-first (NaN-padded).

    Returns ``ranking_df`` (items) and, per name in ``values``, the frame of that column laid out
    the same way (``relevance_df``, ``ctr_df``).
    """
    columns: dict[str, dict[Any, pd.Series]] = {c: {} for c in ("item", *values)}
    for query in sorted(frame[ranking].unique()):
        rows = frame.filter(pl.col(ranking) == query).sort(rank)
        for column, series in columns.items():
            series[f"r{query}"] = pd.Series(rows[column].to_list())
    wide = {c: pd.DataFrame(series) for c, series in columns.items()}
    return wide.pop("item"), wide


def soft_cells(
    alignments: Sequence[Mapping[Any, Mapping[Any, float]]],
    items: Sequence[Any],
    unaligned: str,
) -> dict[Any, dict[tuple[Any, ...], float]]:
    """Each item's intersectional cells and their weights, from one alignment per dimension
    (item → {group: weight}): the product of the item's weights in the dimensions.

    An item a dimension does not list: level ``"unknown"`` with weight 1, each of the
    dimension's levels with 1/levels (``"uniform"``), or no cell at all (``"drop"``).
    Cells of weight 0 are left out.
    """
    cells: dict[Any, dict[tuple[Any, ...], float]] = {}
    for item in items:
        combined: dict[tuple[Any, ...], float] = {(): 1.0}
        for dimension in alignments:
            if item in dimension:
                own = {g: w for g, w in dimension[item].items() if w > 0}
            elif unaligned == "unknown":
                own = {"unknown": 1.0}
            elif unaligned == "uniform":
                levels = sorted({g for weights in dimension.values() for g in weights})
                own = dict.fromkeys(levels, 1.0 / len(levels))
            else:
                own = {}
            combined = {(*cell, g): w * v for cell, w in combined.items() for g, v in own.items()}
        if combined:
            cells[item] = combined
    return cells


def soft_per_group(
    metric: str,
    rows: Sequence[Row],
    cells: Mapping[Any, Mapping[tuple[Any, ...], float]],
    *,
    rank: str,
    item: str,
    params: Mapping[str, Any],
) -> dict[tuple[Any, ...], tuple[Value, float]]:
    """(V_g, n_g) of a sum metric over soft groups, for the rows of one partition.

    A row counts in each cell of its item with the item's weight there; n_g sums the weights
    of every item with a cell (ranked or not), as a mapping's fixed size counts its items.
    """
    universe = sorted({g for weights in cells.values() for g in weights})
    sizes = dict.fromkeys(universe, 0.0)
    for weights in cells.values():
        for g, w in weights.items():
            sizes[g] += w
    num = dict.fromkeys(universe, 0.0)
    rel = dict.fromkeys(universe, 0.0)
    for row in rows:
        for g, w in cells.get(row[item], {}).items():
            num[g] += w * _weight(metric, row, rank, params)
            if metric in ("expu", "expru", "erbr"):
                rel[g] += w * float(row[params["relevance"]])
    if metric in ("expu", "expru", "erbr"):
        values = {g: div(num[g], rel[g]) for g in universe}
    elif metric == "erbe":
        values = dict(num)
    else:
        values = {g: div(num[g], sizes[g]) for g in universe}
    return {g: (values[g], sizes[g]) for g in universe}
