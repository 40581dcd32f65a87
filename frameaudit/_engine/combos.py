"""Combos: the per-group values of a metric combined into one number per partition.

SPEC §1's seven combos (named in :mod:`frameaudit._combos`), shared by every family whose
metrics have per-group values (the fair ranking family's group metrics, the reproducibility
family's multiplicity per group). :meth:`~frameaudit._engine.estimate.Estimation.grouped`
finishes a call with them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import narwhals.stable.v2 as nw

from frameaudit._combos import Combo
from frameaudit._engine.native import namespace_of, native_step
from frameaudit._engine.plans import exact_means, exact_sums
from frameaudit._expr import divided_in

__all__ = ["combined"]


def combined(
    per_group: nw.LazyFrame[Any],
    partition: Sequence[str],
    value: str,
    combos: Sequence[Combo],
    *,
    names: Mapping[str, str] | None = None,
) -> nw.LazyFrame[Any]:
    """Combine per-group values V (column ``value``) into each of ``combos``, per partition.

    One aggregation over ``per_group`` gives every combo a column named after it, or as
    ``names`` maps it (engines that recompute a subplan at each reference read the per-group
    values once). NaN and null propagate: if any V_g of a partition is null or NaN, its result
    is null; so is a combo over fewer than two groups (nothing is compared). The per-row and
    per-partition steps are written in Polars' own expressions on Polars
    (:func:`~frameaudit._engine.native.namespace_of`): in narwhals' they were a fifth of a
    call's fixed cost.
    """
    partition = list(partition)
    ns = namespace_of(per_group)
    val, c = ns.col(value), ns.col
    stats = [c("__fa_bad").sum().alias("__fa_bad"), ns.len().alias("__fa_g")]
    columns = [(val.is_null() | val.is_nan()).cast(ns.Int64).alias("__fa_bad")]
    summed = []  # summed exactly (the groups' order changes from run to run)
    if {"MinMaxRatio", "MaxMinRatio", "MaxMinDiff"} & set(combos):
        stats += [c(value).min().alias("__fa_mn"), c(value).max().alias("__fa_mx")]
    if "LTwo" in combos:
        columns.append((val * val).alias("__fa_sumsq"))
        summed.append("__fa_sumsq")
    deviations = bool({"MaxAbsDiff", "MeanAbsDev", "Variance"} & set(combos))
    if deviations:
        # deviations from the partition mean; inf − inf is NaN, which must not be skipped
        mean = exact_means(
            per_group.with_columns(nw.col(value).alias("__fa_mean")), partition, ["__fa_mean"]
        )
        per_group = per_group.join(mean.select(*partition, "__fa_mean"), on=partition)
        columns.append((val - c("__fa_mean")).abs().alias("__fa_devsum"))
        stats += [
            c("__fa_devnan").sum().alias("__fa_devnan"),
            c("__fa_devsum").max().alias("__fa_devmax"),
        ]
        summed += ["__fa_devsum", "__fa_dev2sum"]
    prepared = native_step(per_group, "with_columns", columns)
    if deviations:
        prepared = native_step(
            prepared,
            "with_columns",
            [
                (c("__fa_devsum") * c("__fa_devsum")).alias("__fa_dev2sum"),
                c("__fa_devsum").is_nan().cast(ns.Int64).alias("__fa_devnan"),
            ],
        )
    null = ns.lit(None, dtype=ns.Float64)
    formulas = {
        "MinMaxRatio": lambda: divided_in(ns, c("__fa_mn"), c("__fa_mx")),
        "MaxMinRatio": lambda: divided_in(ns, c("__fa_mx"), c("__fa_mn")),
        "MaxMinDiff": lambda: c("__fa_mx") - c("__fa_mn"),
        "MaxAbsDiff": lambda: ns.when(c("__fa_devnan") > 0).then(null).otherwise(c("__fa_devmax")),
        "MeanAbsDev": lambda: c("__fa_devsum") / c("__fa_g"),
        "LTwo": lambda: c("__fa_sumsq"),
        "Variance": lambda: divided_in(ns, c("__fa_dev2sum"), c("__fa_g") - 1.0),
    }
    # one small expression per step: narwhals re-evaluates every node of a nested expression
    undefined = (c("__fa_bad") > 0) | (c("__fa_g") < 2)
    # ``stats`` are in ``ns``, the namespace exact_sums gives ``also`` on this frame
    totals = exact_sums(prepared, partition, summed, also=lambda _: stats)
    with_formulas = native_step(
        totals, "with_columns", [formulas[combo]().alias(combo) for combo in combos]
    )
    return native_step(
        with_formulas,
        "select",
        [
            *partition,
            *(
                ns.when(undefined | c(combo).is_nan())
                .then(null)
                .otherwise(c(combo))
                .alias((names or {}).get(combo, combo))
                for combo in combos
            ),
        ],
    )
