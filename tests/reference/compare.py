"""An independent numpy comparison of two ranking systems, for tests (SPEC §7).

EXP's MinMaxRatio with group sizes in rows, written from its definition: per group g,
V_g = Σ 1/log2(1 + rank) over g's rows / the number of g's rows. The paired bootstrap counts
query u k_bu times in replicate b in both systems; the randomisation test swaps the two
systems' rows of query u where its coin f_bu is 1. The counts and coins are frameaudit's
counter-based draws (``with_poisson_counts``, ``with_coin_flips``), given by the caller as
arrays: everything else is this module's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import polars as pl


def per_query(frame: pl.DataFrame, system: object, group: str, queries: list[object]) -> tuple:
    """Per query (in the order of ``queries``): g's exposure in the system, and g's rows."""
    index = {q: i for i, q in enumerate(queries)}
    e, n = np.zeros(len(queries)), np.zeros(len(queries))
    for row in frame.filter((pl.col("system") == system) & (pl.col("group") == group)).iter_rows(
        named=True
    ):
        e[index[row["query"]]] += 1.0 / np.log2(1.0 + row["rank"])
        n[index[row["query"]]] += 1.0
    return e, n


def exp_min_max_difference(
    frame: pl.DataFrame,
    baseline: object,
    other: object,
    *,
    counts: np.ndarray,
    coins: np.ndarray,
    level: float,
) -> dict[str, float]:
    """The difference other − baseline of EXP's MinMaxRatio, its interval and p-value.

    ``counts[u, b]``: query u's Poisson count in bootstrap replicate b; ``coins[u, b]``:
    whether permutation b swaps query u's systems. Queries in key order.
    """
    queries = sorted(set(frame["query"].to_list()))
    groups = sorted(set(frame["group"].to_list()))
    sums = {s: [per_query(frame, s, g, queries) for g in groups] for s in (baseline, other)}

    def ratio(system: object, weights: np.ndarray, swap: np.ndarray | None) -> np.ndarray:
        own, rest = sums[system], sums[other if system == baseline else baseline]
        values = []
        for g in range(len(groups)):
            if swap is None:
                e, n = own[g][0] @ weights, own[g][1] @ weights
            else:
                e = own[g][0] @ (1 - swap) + rest[g][0] @ swap
                n = own[g][1] @ (1 - swap) + rest[g][1] @ swap
            values.append(e / n)
        stacked = np.array(values)
        return stacked.min(axis=0) / stacked.max(axis=0)

    ones = np.ones((len(queries), 1))
    observed = float((ratio(other, ones, None) - ratio(baseline, ones, None))[0])
    d = ratio(other, counts, None) - ratio(baseline, counts, None)
    lo, hi = np.percentile(d, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    t = np.abs(ratio(other, ones, coins) - ratio(baseline, ones, coins))
    extreme = int((t >= abs(observed) * (1 - 1e-12)).sum())
    return {
        "value": float(ratio(other, ones, None)[0]),
        "baseline_value": float(ratio(baseline, ones, None)[0]),
        "difference": observed,
        "difference_lo": float(lo),
        "difference_hi": float(hi),
        "p_value": (1 + extreme) / (1 + coins.shape[1]),
    }


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
