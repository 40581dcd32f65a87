"""An independent numpy comparison of two systems, for tests (SPEC §7).

:func:`paired` takes a statistic written from a metric's definition, as a function of the
units' data and their weights, and each system's data per unit: the paired bootstrap counts
unit u k_bu times in replicate b in both systems; the randomisation test swaps the two systems'
data of unit u where its coin f_bu is 1. The counts and coins are frameaudit's counter-based
draws (``with_poisson_counts``, ``with_coin_flips``), given by the caller as arrays: everything
else is this module's own. The statistics: EXP's MinMaxRatio with group sizes in rows (per
query), EC_l as the mean over pairs of runs (per sample), the mean correspondence (per query)
and the clusters' total variation distance (per point).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations
from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import polars as pl

Statistic = Callable[[np.ndarray, np.ndarray], float]
"""``statistic(data, weights)``: data per unit (first axis), one weight per unit."""


def paired(
    statistic: Statistic,
    baseline: np.ndarray,
    other: np.ndarray,
    *,
    counts: np.ndarray,
    coins: np.ndarray,
    level: float,
) -> dict[str, float]:
    """The difference other − baseline of ``statistic``, its interval and its p-value.

    ``counts[u, b]``: unit u's Poisson count in bootstrap replicate b; ``coins[u, b]``:
    whether permutation b swaps unit u's systems. Units in key order.
    """
    ones = np.ones(len(baseline))
    value, base = statistic(other, ones), statistic(baseline, ones)
    observed = value - base
    d = [statistic(other, w) - statistic(baseline, w) for w in counts.T]
    lo, hi = np.percentile(d, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    extreme = 0
    for coin in coins.T.astype(bool):
        flip = coin.reshape(-1, *[1] * (baseline.ndim - 1))
        swapped = statistic(np.where(flip, baseline, other), ones) - statistic(
            np.where(flip, other, baseline), ones
        )
        extreme += int(abs(swapped) >= abs(observed) * (1 - 1e-12))
    return {
        "value": float(value),
        "baseline_value": float(base),
        "difference": float(observed),
        "difference_lo": float(lo),
        "difference_hi": float(hi),
        "p_value": (1 + extreme) / (1 + coins.shape[1]),
    }


def exposure_per_query(frame: pl.DataFrame, system: object, queries: list[object]) -> np.ndarray:
    """Per query (in the order of ``queries``) and group (sorted): the exposure Σ 1/log2(1 +
    rank) of the group's rows in ``system``, then the number of its rows: shape (q, 2, g)."""
    groups = sorted(set(frame["group"].to_list()))
    index = {q: i for i, q in enumerate(queries)}
    data = np.zeros((len(queries), 2, len(groups)))
    for row in frame.filter(pl.col("system") == system).iter_rows(named=True):
        g = groups.index(row["group"])
        data[index[row["query"]], 0, g] += 1.0 / np.log2(1.0 + row["rank"])
        data[index[row["query"]], 1, g] += 1.0
    return data


def exp_min_max(data: np.ndarray, weights: np.ndarray) -> float:
    """EXP's MinMaxRatio: per group, exposure over rows summed over the weighted queries."""
    sums = np.einsum("u,ukg->kg", weights, data)
    ratios = sums[0] / sums[1]
    return float(ratios.min() / ratios.max())


def errors_per_sample(frame: pl.DataFrame, system: object) -> np.ndarray:
    """Per sample (sorted) and run (sorted): 1 where the run's prediction is wrong."""
    rows = frame.filter(pl.col("system") == system)
    samples = sorted(set(rows["sample"].to_list()))
    runs = sorted(set(rows["run"].to_list()))
    data = np.zeros((len(samples), len(runs)))
    for row in rows.iter_rows(named=True):
        wrong = row["prediction"] != row["target"]
        data[samples.index(row["sample"]), runs.index(row["run"])] = wrong
    return data


def ec_local(data: np.ndarray, weights: np.ndarray) -> float:
    """EC_l: over the pairs of runs, the mean of |both wrong| / |either wrong| (weighted)."""
    values = []
    for i, j in combinations(range(data.shape[1]), 2):
        both = weights @ (data[:, i] * data[:, j])
        either = weights @ np.maximum(data[:, i], data[:, j])
        values.append(both / either)
    return float(np.mean(values))


def correspondence_per_query(frame: pl.DataFrame, system: object) -> np.ndarray:
    """Per query (sorted): Σ w_i [label_i = predicted] / Σ w_i, w_i = 1 / (d_i + 1)^3."""
    rows = frame.filter(pl.col("system") == system)
    queries = sorted(set(rows["query"].to_list()))
    match, total = np.zeros(len(queries)), np.zeros(len(queries))
    for row in rows.iter_rows(named=True):
        w = 1.0 / (row["distance"] + 1.0) ** 3
        q = queries.index(row["query"])
        total[q] += w
        match[q] += w * (row["label"] == row["predicted"])
    return match / total


def mean(data: np.ndarray, weights: np.ndarray) -> float:
    """The weighted mean over the units."""
    return float(weights @ data / weights.sum())


def memberships(frame: pl.DataFrame, system: object, clusters: int) -> np.ndarray:
    """Per point (sorted): one-hot cluster membership of group a's points, then of group b's."""
    rows = frame.filter(pl.col("system") == system).sort("point")
    data = np.zeros((rows.height, 2, clusters))
    for i, row in enumerate(rows.iter_rows(named=True)):
        if row["group"] in ("a", "b"):
            data[i, ("a", "b").index(row["group"]), row["cluster"]] = 1.0
    return data


def cluster_tv(data: np.ndarray, weights: np.ndarray) -> float:
    """½ Σ_c |N_ac / N_a − N_bc / N_b| over the weighted points."""
    counts = np.einsum("u,ugc->gc", weights, data)
    shares = counts / counts.sum(axis=1, keepdims=True)
    return float(0.5 * np.abs(shares[0] - shares[1]).sum())


def holm(p: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, by their definition (a loop)."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adjusted = [0.0] * m
    running = 0.0
    for step, i in enumerate(order):
        running = max(running, min(1.0, (m - step) * p[i]))
        adjusted[i] = running
    return adjusted


def draws(function: Callable[..., Any], units: int, replicates: int, seed: int) -> np.ndarray:
    """frameaudit's draws (``with_poisson_counts`` or ``with_coin_flips``) as [unit, replicate]."""
    pairs = pl.LazyFrame(
        {
            "unit": np.repeat(np.arange(units), replicates),
            "rep": np.tile(np.arange(replicates), units),
        }
    )
    drawn = function(nw.from_native(pairs), "unit", "rep", seed, "k")
    return drawn.collect().to_native()["k"].to_numpy().reshape(units, replicates)
