"""Combos: the per-group values of a metric combined into one number per partition.

SPEC §1's seven combos, shared by every family whose metrics have per-group values (the fair
ranking family's group metrics, the reproducibility family's multiplicity per group).
:meth:`~frameaudit._engine.estimate.Estimation.grouped` finishes a call with them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, get_args

import narwhals.stable.v2 as nw

from frameaudit._engine.plans import exact_means, exact_sums
from frameaudit._expr import null_float, safe_div

__all__ = ["COMBO", "COMBOS", "Combo", "Combos", "combined"]

Combo = Literal[
    "MinMaxRatio", "MaxMinRatio", "MaxMinDiff", "MaxAbsDiff", "MeanAbsDev", "LTwo", "Variance"
]
COMBOS: tuple[Combo, ...] = get_args(Combo)
Combos = Combo | Sequence[Combo]
"""A combo, or several: the output then has one row per combo, named in its ``combo`` column."""
COMBO = "combo"
"""The output column naming the combo, when several are asked for."""


def combined(
    per_group: nw.LazyFrame[Any], partition: Sequence[str], value: str, combos: Sequence[Combo]
) -> nw.LazyFrame[Any]:
    """Combine per-group values V (column ``value``) into each of ``combos``, per partition.

    One aggregation over ``per_group`` gives every combo a column named after it (engines that
    recompute a subplan at each reference read the per-group values once). NaN and null
    propagate: if any V_g of a partition is null or NaN, its result is null; so is a combo over
    fewer than two groups (nothing is compared).
    """
    partition = list(partition)
    val = nw.col(value)
    c = nw.col
    stats = [c("__fa_bad").sum().alias("__fa_bad"), nw.len().alias("__fa_g")]
    columns = [(val.is_null() | val.is_nan()).cast(nw.Int64).alias("__fa_bad")]
    summed = []  # summed exactly (the groups' order changes from run to run)
    if {"MinMaxRatio", "MaxMinRatio", "MaxMinDiff"} & set(combos):
        stats += [val.min().alias("__fa_mn"), val.max().alias("__fa_mx")]
    if "LTwo" in combos:
        columns.append((val * val).alias("__fa_sumsq"))
        summed.append("__fa_sumsq")
    deviations = bool({"MaxAbsDiff", "MeanAbsDev", "Variance"} & set(combos))
    if deviations:
        # deviations from the partition mean; inf − inf is NaN, which must not be skipped
        mean = exact_means(per_group.with_columns(val.alias("__fa_mean")), partition, ["__fa_mean"])
        per_group = per_group.join(mean.select(*partition, "__fa_mean"), on=partition)
        columns.append((val - c("__fa_mean")).abs().alias("__fa_devsum"))
        stats += [
            c("__fa_devnan").sum().alias("__fa_devnan"),
            c("__fa_devsum").max().alias("__fa_devmax"),
        ]
        summed += ["__fa_devsum", "__fa_dev2sum"]
    prepared = per_group.with_columns(*columns)
    if deviations:
        prepared = prepared.with_columns(
            (c("__fa_devsum") * c("__fa_devsum")).alias("__fa_dev2sum"),
            c("__fa_devsum").is_nan().cast(nw.Int64).alias("__fa_devnan"),
        )
    formulas = {
        "MinMaxRatio": lambda: safe_div(c("__fa_mn"), c("__fa_mx")),
        "MaxMinRatio": lambda: safe_div(c("__fa_mx"), c("__fa_mn")),
        "MaxMinDiff": lambda: c("__fa_mx") - c("__fa_mn"),
        "MaxAbsDiff": lambda: (
            nw.when(c("__fa_devnan") > 0).then(null_float()).otherwise(c("__fa_devmax"))
        ),
        "MeanAbsDev": lambda: c("__fa_devsum") / c("__fa_g"),
        "LTwo": lambda: c("__fa_sumsq"),
        "Variance": lambda: safe_div(c("__fa_dev2sum"), c("__fa_g") - 1.0),
    }
    # one small expression per step: narwhals re-evaluates every node of a nested expression
    undefined = (c("__fa_bad") > 0) | (c("__fa_g") < 2)
    return (
        exact_sums(prepared, partition, summed, *stats)
        .with_columns(formulas[combo]().alias(combo) for combo in combos)
        .select(
            *partition,
            *(
                nw.when(undefined | c(combo).is_nan())
                .then(null_float())
                .otherwise(c(combo))
                .alias(combo)
                for combo in combos
            ),
        )
    )
