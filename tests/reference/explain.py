"""An independent, deliberately plain implementation of the explainability metrics, for tests.

Written from the definitions in docs/explain.md alone: Python loops over groups and positions,
explicit top-k sets, a full distance matrix for nearest neighbours. It shares no code path with
``frameaudit.explain`` or its kNN kernel. It also holds the seeded random inputs the
explainability tests share.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

Importances = Mapping[str, float]


def order(importances: Importances) -> list[str]:
    """Features by descending |importance|, ties by ascending name (docs/explain.md)."""
    return sorted(importances, key=lambda f: (-abs(importances[f]), f))


def position_parity(
    groups: Mapping[Any, Importances], overall: Importances, k: int | None = None
) -> dict[Any, float]:
    """Per group: (1/n) Σ_i (1/i) Σ_{j≤i} [C_j = R_j] over the first n (or k) positions."""
    reference = order(overall)
    n = k if k is not None else len(reference)
    result = {}
    for name, importances in groups.items():
        mine = order(importances)
        matched = 0
        total = 0.0
        for i in range(n):
            matched += mine[i] == reference[i]
            total += matched / (i + 1)
        result[name] = total / n
    return result


def rank_alignment(
    groups: Mapping[Any, Importances], overall: Importances, k: int | None = None
) -> dict[Any, float]:
    """Per group: (1/n) Σ_j |top-j(C) ∩ top-j(R)| / j, with explicit sets."""
    reference = order(overall)
    n = k if k is not None else len(reference)
    result = {}
    for name, importances in groups.items():
        mine = order(importances)
        result[name] = sum(len(set(mine[:j]) & set(reference[:j])) / j for j in range(1, n + 1)) / n
    return result


def alpha_top(importances: Importances, alpha: float) -> set[str] | None:
    """The shortest prefix of the order whose |importance| sums to at least alpha × the total."""
    ranked = order(importances)
    total = 0.0
    for feature in ranked:  # summed in ranking order, as the cumulative sums are
        total += abs(importances[feature])
    if total == 0:
        return None
    chosen: set[str] = set()
    covered = 0.0
    for feature in ranked:
        if chosen and covered >= alpha * total:
            break
        chosen.add(feature)
        covered += abs(importances[feature])
    return chosen


def alpha_jaccard(
    groups: Mapping[Any, Importances], overall: Importances, alpha: float
) -> dict[Any, float | None]:
    """Per group: Jaccard index of the alpha-coverage top sets (None when one is undefined)."""
    reference = alpha_top(overall, alpha)
    result: dict[Any, float | None] = {}
    for name, importances in groups.items():
        mine = alpha_top(importances, alpha)
        if mine is None or reference is None:
            result[name] = None
        else:
            result[name] = len(mine & reference) / len(mine | reference)
    return result


def random_importances(
    seed: int, *, n_groups: int, n_features: int, signed: bool = True, ties: bool = False
) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """Seeded random per-group and overall importances over the same features."""
    rng = random.Random(seed)
    features = [f"f{i:03d}" for i in range(n_features)]

    def draw() -> dict[str, float]:
        values = {}
        for f in features:
            value = rng.choice([0.25, 0.5, 1.0]) if ties else rng.random()
            values[f] = value * (rng.choice([-1, 1]) if signed else 1)
        return values

    groups = {f"g{i}": draw() for i in range(n_groups)}
    return groups, draw()


def to_frame(
    groups: Mapping[str, Importances], overall: Importances | None = None, overall_name: str = "all"
) -> pl.DataFrame:
    """The tidy (group, feature, importance) frame, with the overall rows when given."""
    rows = [(g, f, v) for g, imp in groups.items() for f, v in imp.items()]
    if overall is not None:
        rows += [(overall_name, f, v) for f, v in overall.items()]
    return pl.DataFrame(rows, schema=["group", "feature", "importance"], orient="row")


def knn(
    train: np.ndarray, queries: np.ndarray, k: int, exclude: Sequence[int] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Brute force: the full distance matrix, ordered by (distance, training row index)."""
    squared = ((queries[:, None, :] - train[None, :, :]) ** 2).sum(axis=2)
    if exclude is not None:
        for row, own in enumerate(exclude):
            if own >= 0:
                squared[row, own] = np.inf
    columns = np.broadcast_to(np.arange(train.shape[0]), squared.shape)
    chosen = np.lexsort((columns, squared), axis=1)[:, :k]
    return chosen, np.sqrt(np.take_along_axis(squared, chosen, axis=1))


def random_neighbours(
    seed: int, *, n_queries: int, max_neighbours: int, n_classes: int
) -> list[tuple[int, int, list[tuple[int, float, int]]]]:
    """Seeded (query, predicted class, [(index, distance, label), ...]) lists, some empty."""
    rng = random.Random(seed)
    out = []
    for query in range(n_queries):
        count = rng.randint(0, max_neighbours)
        neighbours = [
            (rng.randrange(1000), rng.choice([0.0, rng.random() * 3]), rng.randrange(n_classes))
            for _ in range(count)
        ]
        out.append((query, rng.randrange(n_classes), neighbours))
    return out


def neighbour_frame(
    cases: Sequence[tuple[int, int, Sequence[tuple[int, float, int]]]],
) -> pl.DataFrame:
    """The long (query, distance, label, predicted) frame; an empty list becomes a null row."""
    rows: list[tuple[int, float | None, int | None, int]] = []
    for query, predicted, neighbours in cases:
        if not neighbours:
            rows.append((query, None, None, predicted))
        rows += [(query, distance, label, predicted) for _, distance, label in neighbours]
    return pl.DataFrame(
        rows,
        schema={
            "query": pl.Int64,
            "distance": pl.Float64,
            "label": pl.Int64,
            "predicted": pl.Int64,
        },
        orient="row",
    )


def correspondence(
    neighbours: Sequence[tuple[int, float, int]],
    predicted: int,
    *,
    weighted: bool = True,
    class_weights: Mapping[int, float] | None = None,
) -> float | None:
    """Σ_{y = ĉ} w / Σ w with w = cw(y)/(d+1)³ (or cw(y)); None without neighbours or weight."""
    matched = total = 0.0
    for _, distance, label in neighbours:
        weight = (class_weights or {}).get(label, 1.0)
        if weighted:
            weight /= (distance + 1.0) ** 3
        total += weight
        if label == predicted:
            matched += weight
    return matched / total if total > 0 else None


def correspondence_summary(
    cases: Sequence[tuple[int, int, Sequence[tuple[int, float, int]]]],
    part: Callable[[int, int], Any],
    *,
    weighted: bool = True,
    class_weights: Mapping[int, float] | None = None,
    high: float = 0.85,
    medium: float = 0.70,
) -> list[tuple[Any, float | None, int, int, int, int, int]]:
    """Per partition ``part(query, predicted)``, sorted: the mean correspondence over the
    queries where it is defined, then the numbers of queries, undefined, high, medium, low."""
    values: dict[Any, list[float | None]] = {}
    for query, predicted, neighbours in cases:
        value = correspondence(
            neighbours, predicted, weighted=weighted, class_weights=class_weights
        )
        values.setdefault(part(query, predicted), []).append(value)
    rows = []
    for key in sorted(values):
        defined = [v for v in values[key] if v is not None]
        rows.append(
            (
                key,
                sum(defined) / len(defined) if defined else None,
                len(values[key]),
                len(values[key]) - len(defined),
                sum(v >= high for v in defined),
                sum(medium <= v < high for v in defined),
                sum(v < medium for v in defined),
            )
        )
    return rows
