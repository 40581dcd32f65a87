"""Independent, plain implementations of the TREC-style exposure metrics, for tests.

Written from the definitions (Diaz, Mitra, Ekstrand, Biega & Carterette, CIKM 2020; the TREC
Fair Ranking track's task definitions) and from the conventions that SPEC §6 and the docs'
"TREC-style evaluation" page state for expeval's bounds and defaults: Python loops over
queries, documents and positions, sums of per-position terms where the package uses closed
forms, so that it shares no code path with ``frameaudit.fair``.

Rows are plain tuples: a run row is ``(query, sample, item, rank)``, a judgment
``(query, item, grade)``; a membership maps ``item → {group: weight}``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

RunRow = tuple[Any, Any, Any, int]
Judgment = tuple[Any, Any, float]


def _geometric(x: float, n: float) -> float:
    """Σ_{i=0}^{n−1} x^i, term by term (n = inf: the limit)."""
    if math.isinf(n):
        return 1.0 / (1.0 - x)
    return sum(x**i for i in range(int(n)))


def _normalised(value: float, low: float, high: float, default: float) -> float:
    return default if low == high else (value - low) / (high - low)


def targets(grades: Mapping[Any, float], model: str, p: float, u: float) -> dict[Any, float]:
    """Each judged document's target exposure: the mean weight of the positions its grade
    holds in an ideal ranking (grades in decreasing order)."""
    ordered = sorted(grades.values(), reverse=True)
    weights = []
    relevant_above = 0
    for i, grade in enumerate(ordered):
        if model == "log":
            weights.append(1.0 / math.log2(max(i + 1, 2)))
        elif model == "rbp":
            weights.append(p**i)
        else:
            weights.append(p**i * (1.0 - u) ** relevant_above)
        relevant_above += grade > 0
    per_grade: dict[float, list[float]] = defaultdict(list)
    for grade, weight in zip(ordered, weights, strict=True):
        per_grade[grade].append(weight)
    mean = {grade: sum(w) / len(w) for grade, w in per_grade.items()}
    return {doc: mean[grade] for doc, grade in grades.items()}


def run_exposures(
    rankings: Mapping[Any, Sequence[tuple[int, Any]]],
    relevant: set[Any],
    model: str,
    p: float,
    u: float,
) -> dict[Any, float]:
    """Each document's exposure averaged over the query's sampled rankings.

    ``rankings``: sample → [(rank, item)]; position i = rank − 1.
    """
    exposure: dict[Any, float] = defaultdict(float)
    for rows in rankings.values():
        above = 0
        for rank, doc in sorted(rows):
            weight = 1.0 / math.log2(max(rank, 2)) if model == "log" else p ** (rank - 1)
            if model == "gerr":
                weight *= (1.0 - u) ** above
            exposure[doc] += weight / len(rankings)
            above += doc in relevant
    return dict(exposure)


def expected_exposure(  # noqa: PLR0912 (the definition, written out)
    run: Iterable[RunRow],
    judgments: Iterable[Judgment],
    *,
    model: str = "rbp",
    patience: float = 0.5,
    utility: float = 0.5,
    complete: bool = False,
    normalize: bool = False,
    membership: Mapping[Any, Mapping[Any, float]] | None = None,
    exposed: str = "judged",
    shares: Mapping[Any, Mapping[Any, float]] | None = None,
    length: int = 0,
) -> dict[Any, tuple[float, float, float]]:
    """Per judged query, (EE-L, EE-D, EE-R); group mode with ``membership``.

    ``exposed``: whose exposure a group sums, the counted judged documents' or every
    retrieved one's (a document ``membership`` lacks counts for no group). ``shares``: per
    query, the groups' target shares (TREC task 2), each times the weights of positions
    1 … ``length`` summed, in place of the grades' targets.
    """
    p, u = patience, utility
    judged: dict[Any, dict[Any, float]] = defaultdict(dict)
    for query, doc, grade in judgments:
        if complete or grade > 0:
            judged[query][doc] = grade
    rankings: dict[Any, dict[Any, list[tuple[int, Any]]]] = defaultdict(lambda: defaultdict(list))
    for query, sample, doc, rank in run:
        rankings[query][sample].append((rank, doc))
    damped = p if model == "rbp" else p * u
    out = {}
    for query, grades in judged.items():
        target = targets(grades, model, p, u)
        relevant = {d for d, g in grades.items() if g > 0}
        n = len(grades) if complete else math.inf
        missing = query not in rankings
        system = {} if missing else run_exposures(rankings[query], relevant, model, p, u)
        if membership is None:
            docs = set(system) | set(target)
            loss = sum((system.get(d, 0.0) - target.get(d, 0.0)) ** 2 for d in docs)
            disparity = sum(e * e for e in system.values())
            relevance = sum(system[d] * target[d] for d in target if d in system)
            ascending = sorted(target.values())
            levels = len(set(grades.values()))
            d_high = _geometric(p * p, n)
            d_low = _geometric(damped, n) ** 2 / n if complete else 0.0
            r_high = sum(t * t for t in target.values())
            r_low = sum(damped**i * t for i, t in enumerate(ascending)) if complete else 0.0
            if levels <= 1:
                r_high = r_low = 0.0
            if complete:
                l_high = sum((damped**i - t) ** 2 for i, t in enumerate(ascending))
            else:
                l_high = sum(t * t for t in target.values()) + 1.0 / (1.0 - damped)
            if missing:
                disparity, relevance, loss = d_high, r_low, sum(t * t for t in target.values())
                if model == "log":  # no model default: no exposure
                    disparity, relevance = 0.0, 0.0
        else:
            groups: dict[Any, float] = defaultdict(float)
            exposure: dict[Any, float] = defaultdict(float)
            for doc in grades:
                for group, weight in membership[doc].items():
                    groups[group] += weight * target[doc]
            if shares is not None:
                weights = [
                    1.0 / math.log2(max(j, 2)) if model == "log" else p ** (j - 1)
                    for j in range(1, length + 1)
                ]
                groups = defaultdict(float, {g: s * sum(weights) for g, s in shares[query].items()})
            for doc in grades if exposed == "judged" else system:
                for group, weight in membership.get(doc, {}).items():
                    exposure[group] += weight * system.get(doc, 0.0)
            k, r = len(groups), len(relevant)
            cells = set(groups) | set(exposure)
            loss = sum((exposure[g] - groups[g]) ** 2 for g in cells)
            disparity = sum(e * e for e in exposure.values())
            relevance = sum(exposure[g] * groups[g] for g in cells)
            mass = _geometric(p, r)
            d_high, d_low = k * mass**2, k * _geometric(damped, r) ** 2
            if k == 1:
                d_low = d_high = 0.0
            if damped == p:  # the bounds are equal (expeval computes them in two orders)
                d_low = d_high
            r_low = r_high = 0.0
            l_high = max(
                sum(t * t for t in groups.values()), sum((mass - t) ** 2 for t in groups.values())
            )
            if missing:
                disparity, relevance = (0.0 if model == "log" or shares else d_high), 0.0
        if normalize:
            loss = _normalised(loss, 0.0, l_high, 0.0)
            disparity = _normalised(disparity, d_low, d_high, 0.0)
            relevance = _normalised(relevance, r_low, r_high, 1.0)
        out[query] = (loss, disparity, relevance)
    return out


def mean_over_queries(
    values: Mapping[Any, tuple[float, ...]], weights: Mapping[Any, float] | None = None
) -> tuple[float, ...]:
    """The (weighted) mean of each value over the queries."""
    queries = sorted(values, key=str)
    w = np.array([1.0 if weights is None else weights[q] for q in queries])
    table = np.array([values[q] for q in queries], dtype=float)
    return tuple(float(x) for x in (w @ table) / w.sum())


def trec_discount(position: int, dtype: Any = np.float64) -> float:
    """TREC's discount 1/log2(max(k, 2)) (float32 in the track's code)."""
    k = dtype(max(position, 2))
    return float(np.reciprocal(np.log2(k)))


def js_divergence(a: Sequence[float], b: Sequence[float]) -> float:
    """The Jensen–Shannon divergence of two distributions (normalised first), natural log."""
    pa = np.asarray(a, dtype=float) / np.sum(a)
    pb = np.asarray(b, dtype=float) / np.sum(b)
    m = (pa + pb) / 2
    total = 0.0
    for x, y, z in zip(pa, pb, m, strict=True):
        if x > 0:
            total += 0.5 * x * math.log(x / z)
        if y > 0:
            total += 0.5 * y * math.log(y / z)
    return total


def trec_ndcg(ranked: Sequence[Any], relevant: set[Any], target_len: int = 500) -> float:
    """TREC Fair Ranking task 1's nDCG of one ranking: binary gains (an item is relevant when
    the qrels list it), float32 discounts 1/log2(max(k, 2)), the ideal over
    min(target_len, relevant) positions."""
    disc = [trec_discount(k, np.float32) for k in range(1, target_len + 1)]
    dcg = sum(d for d, item in zip(disc, ranked, strict=False) if item in relevant)
    ideal = sum(disc[: min(target_len, len(relevant))])
    return dcg / ideal


def trec_awrf(
    ranked: Sequence[Any],
    alignment: Mapping[Any, Mapping[Any, float]],
    target: Mapping[Any, float],
) -> float:
    """TREC Fair Ranking task 1's AWRF of one ranking: 1 − JS² between the float32-discounted
    alignment of the ranked items the alignment knows (others are left out) and the target."""
    attention: dict[Any, float] = defaultdict(float)
    for k, item in enumerate(ranked, start=1):
        for group, weight in alignment.get(item, {}).items():
            attention[group] += trec_discount(k, np.float32) * weight
    cells = sorted(set(attention) | set(target), key=str)
    a = [attention.get(g, 0.0) for g in cells]
    d = [target.get(g, 0.0) for g in cells]
    return 1.0 - js_divergence(a, d)
