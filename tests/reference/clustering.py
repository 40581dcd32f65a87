"""An independent, deliberately plain implementation of clustering fairness, for tests.

Written from the definitions in docs/clustering.md alone: Python loops over partitions and
clusters, and distances from explicit coordinate differences (the full N × N matrix for the
silhouette), so that it shares no code path with ``frameaudit.fair.clustering`` or its kernels.
It also holds the seeded random clusterings the clustering tests share and the conversion to
holisticai's input format.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl

import frameaudit as fa

# the metrics over cluster label counts, as the registry lists them
LABEL_METRICS = tuple(m.name for m in fa.metrics("clustering", "clusters"))

Value = float | None


def div(numerator: float, denominator: float) -> Value:
    """IEEE division with 0/0 undefined (None), frameaudit's general rule (docs/concepts.md)."""
    if denominator == 0:
        if numerator == 0:
            return None
        return math.copysign(math.inf, numerator)
    return numerator / denominator


def random_clustering(
    seed: int,
    *,
    n: int = 60,
    k: int = 4,
    d: int = 3,
    groups: tuple[str, ...] = ("a", "b", "c"),
    n_parts: int = 1,
    spread: float = 1.0,
) -> pl.DataFrame:
    """Points around k random centres, with a part, a cluster label, a group and features.

    Columns: ``part`` (0 .. n_parts−1), ``cluster`` (the centre a point was drawn around, as
    a string so labels are not positions), ``group``, ``x0 .. x{d-1}`` and ``vec`` (the same
    coordinates as a fixed-size array).
    """
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=4.0, size=(k, d))
    label = rng.integers(0, k, size=n)
    x = centres[label] + rng.normal(scale=spread, size=(n, d))
    frame = pl.DataFrame(
        {
            "part": rng.integers(0, n_parts, size=n),
            "cluster": [f"c{c}" for c in label],
            "group": rng.choice(list(groups), size=n).tolist(),
            **{f"x{j}": x[:, j] for j in range(d)},
        }
    )
    return frame.with_columns(pl.concat_arr([f"x{j}" for j in range(d)]).alias("vec"))


def features(frame: pl.DataFrame) -> list[str]:
    return sorted(c for c in frame.columns if c.startswith("x"))


def _parts(frame: pl.DataFrame, by: str | None) -> list[tuple[Any, pl.DataFrame]]:
    if by is None:
        return [(None, frame)]
    return sorted(((key[0], part) for key, part in frame.group_by(by)), key=lambda kv: kv[0])


def cluster_detail(part: pl.DataFrame, a: Any, b: Any) -> dict[Any, dict[str, Any]]:
    """Per cluster: n_cluster, n_a, n_b, share_a, share_b, rho_a, rho_b (docs/clustering.md)."""
    groups = part["group"].to_list()
    clusters = part["cluster"].to_list()
    total = len(groups)
    total_a = sum(g == a for g in groups)
    total_b = sum(g == b for g in groups)
    detail = {}
    for c in sorted(set(clusters)):
        members = [g for g, cl in zip(groups, clusters, strict=True) if cl == c]
        n_c, n_a, n_b = len(members), members.count(a), members.count(b)
        detail[c] = {
            "n_cluster": n_c,
            "n_a": n_a,
            "n_b": n_b,
            "share_a": div(n_a, total_a),
            "share_b": div(n_b, total_b),
            "rho_a": div(n_a * total, n_c * total_a),
            "rho_b": div(n_b * total, n_c * total_b),
        }
    return detail


def cluster_term(metric: str, row: dict[str, Any]) -> Value:
    """The per-cluster term of a label metric (None when undefined)."""
    if metric == "cluster_balance":
        if row["rho_a"] is None or row["rho_b"] is None:
            return None
        return min(row["rho_a"], row["rho_b"])
    if metric == "min_cluster_ratio":
        return div(row["n_a"], row["n_b"])
    p, q = row["share_a"], row["share_b"]
    if p is None or q is None:
        return None
    if metric == "cluster_distribution_tv":
        return 0.5 * abs(p - q)
    # KL: 0·ln 0 = 0, and p·ln(p/0) = +inf for p > 0
    return 0.0 if p == 0 else (math.inf if q == 0 else p * math.log(p / q))


def label_metric(
    metric: str, frame: pl.DataFrame, a: Any, b: Any, by: str | None = None
) -> list[Value]:
    """One value per partition (sorted): min or sum of the cluster terms, None if any is None."""
    values = []
    for _, part in _parts(frame, by):
        terms = [cluster_term(metric, row) for row in cluster_detail(part, a, b).values()]
        if any(t is None for t in terms):
            values.append(None)
        elif metric in ("cluster_balance", "min_cluster_ratio"):
            values.append(min(terms))  # type: ignore[type-var]
        else:
            values.append(sum(terms))  # type: ignore[arg-type]
    return values


def _mean(values: list[float]) -> Value:
    return sum(values) / len(values) if values else None


def social_fairness_ratio(
    frame: pl.DataFrame,
    a: Any,
    b: Any,
    *,
    centroids: pl.DataFrame | None = None,
    by: str | None = None,
) -> list[Value]:
    """mean D over a / mean D over b per partition; D = distance to the nearest centroid."""
    names = features(frame)
    values = []
    for key, part in _parts(frame, by):
        x = part.select(names).to_numpy()
        if centroids is None:
            labels = part["cluster"].to_list()
            centres = np.array(
                [x[[lab == c for lab in labels]].mean(axis=0) for c in sorted(set(labels))]
            )
        else:
            own = centroids if by is None else centroids.filter(pl.col(by) == key)
            centres = own.select(names).to_numpy()
        distance = [min(math.dist(point, centre) for centre in centres) for point in x]
        groups = part["group"].to_list()
        mean_a = _mean([dd for dd, g in zip(distance, groups, strict=True) if g == a])
        mean_b = _mean([dd for dd, g in zip(distance, groups, strict=True) if g == b])
        values.append(None if mean_a is None or mean_b is None else div(mean_a, mean_b))
    return values


def silhouette_samples(x: np.ndarray, labels: list[Any]) -> np.ndarray:
    """s_i from the full matrix of coordinate differences (no expanded form, no blocks)."""
    distance = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=-1))
    clusters = sorted(set(labels))
    member = np.array([[lab == c for lab in labels] for c in clusters])  # (k, n)
    s = np.zeros(len(labels))
    for i, lab in enumerate(labels):
        own = clusters.index(lab)
        size = member[own].sum()
        if size == 1:
            continue
        a_i = distance[i, member[own]].sum() / (size - 1)
        b_i = min(distance[i, member[c]].mean() for c in range(len(clusters)) if c != own)
        s[i] = 0.0 if max(a_i, b_i) == 0 else (b_i - a_i) / max(a_i, b_i)
    return s


def silhouette_difference(
    frame: pl.DataFrame, a: Any, b: Any, by: str | None = None
) -> list[tuple[Value, Value, Value]]:
    """(mean_b − mean_a, mean_a, mean_b) per partition."""
    rows = []
    for _, part in _parts(frame, by):
        s = silhouette_samples(part.select(features(part)).to_numpy(), part["cluster"].to_list())
        groups = part["group"].to_list()
        mean_a = _mean([v for v, g in zip(s, groups, strict=True) if g == a])
        mean_b = _mean([v for v, g in zip(s, groups, strict=True) if g == b])
        diff = None if mean_a is None or mean_b is None else mean_b - mean_a
        rows.append((diff, mean_a, mean_b))
    return rows


def holisticai_inputs(frame: pl.DataFrame, a: Any, b: Any) -> dict[str, np.ndarray]:
    """holisticai's arguments: 0/1 membership vectors, integer cluster codes, the data matrix."""
    groups = frame["group"].to_numpy()
    return {
        "group_a": (groups == a).astype(int),
        "group_b": (groups == b).astype(int),
        "y_pred": frame["cluster"].rank("dense").to_numpy().astype(int),
        "data": frame.select(features(frame)).to_numpy(),
    }


def exact_distances(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """All Euclidean distances between the rows of x and of y, from explicit coordinate
    differences in float64 (no expanded form): exact to a few units in the last place."""
    return np.sqrt(((x[:, None, :] - y[None, :, :]) ** 2).sum(axis=-1))


def nearest_distances(x: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Each row of x's distance to the nearest centre: per centre the squares
    (x_j − c_j)·(x_j − c_j) added in feature order, one IEEE operation at a time."""
    nearest = np.full(len(x), np.inf)
    for centre in centres:
        squared = np.zeros(len(x))
        for j, c in enumerate(centre):
            squared = squared + (x[:, j] - c) * (x[:, j] - c)
        nearest = np.minimum(nearest, squared)
    return np.sqrt(nearest)
