"""Combos: the per-group values of a metric combined into one number per partition.

SPEC §1's seven combos (named in :mod:`frameaudit._combos`), shared by every family whose
metrics have per-group values (the fair ranking family's group metrics, the reproducibility
family's multiplicity per group). :meth:`~frameaudit._engine.estimate.Estimation.grouped`
finishes a call with them.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import narwhals.stable.v2 as nw
import polars as pl

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
    shown = tuple((names or {}).get(combo, combo) for combo in combos)
    written = _written(value, tuple(combos), shown, on_polars=ns is not nw)
    if written.deviations:
        # deviations from the partition mean; inf − inf is NaN, which must not be skipped
        mean = exact_means(
            per_group.with_columns(nw.col(value).alias("__fa_mean")), partition, ["__fa_mean"]
        )
        per_group = per_group.join(mean.select(*partition, "__fa_mean"), on=partition)
    prepared = native_step(per_group, "with_columns", written.rows)
    if written.deviations:
        prepared = native_step(prepared, "with_columns", written.deviations)
    # ``stats`` are in ``ns``, the namespace exact_sums gives ``also`` on this frame
    totals = exact_sums(prepared, partition, written.summed, also=lambda _: written.stats)
    with_formulas = native_step(totals, "with_columns", written.formulas)
    return native_step(with_formulas, "select", [*partition, *written.shown])


class _Written(NamedTuple):
    """:func:`combined`'s expressions for a value and its combos, in one namespace."""

    rows: tuple[Any, ...]
    """Per group: whether V is undefined, and the terms of the sums."""
    deviations: tuple[Any, ...]
    """Per group, where a combo needs them: the squared deviation and whether it is NaN."""
    summed: tuple[str, ...]
    """The columns summed exactly per partition (the groups' order changes from run to run)."""
    stats: tuple[Any, ...]
    """The other aggregations per partition."""
    formulas: tuple[Any, ...]
    """Per partition: each combo from the aggregations."""
    shown: tuple[Any, ...]
    """Per partition: each combo, null where it is undefined, under its name."""


@functools.lru_cache(maxsize=256)
def _written(
    value: str, combos: tuple[Combo, ...], shown: tuple[str, ...], *, on_polars: bool
) -> _Written:
    """The expressions of :func:`combined`, in Polars' own (``on_polars``) or narwhals'.

    Built once per call shape (expressions are immutable): a fifth of a small call's Python.
    """
    ns = pl if on_polars else nw
    val, c = ns.col(value), ns.col
    stats = [c("__fa_bad").sum().alias("__fa_bad"), ns.len().alias("__fa_g")]
    rows = [(val.is_null() | val.is_nan()).cast(ns.Int64).alias("__fa_bad")]
    summed = []
    if {"MinMaxRatio", "MaxMinRatio", "MaxMinDiff"} & set(combos):
        stats += [c(value).min().alias("__fa_mn"), c(value).max().alias("__fa_mx")]
    if "LTwo" in combos:
        rows.append((val * val).alias("__fa_sumsq"))
        summed.append("__fa_sumsq")
    deviations = []
    if {"MaxAbsDiff", "MeanAbsDev", "Variance"} & set(combos):
        rows.append((val - c("__fa_mean")).abs().alias("__fa_devsum"))
        stats += [
            c("__fa_devnan").sum().alias("__fa_devnan"),
            c("__fa_devsum").max().alias("__fa_devmax"),
        ]
        summed += ["__fa_devsum", "__fa_dev2sum"]
        deviations = [
            (c("__fa_devsum") * c("__fa_devsum")).alias("__fa_dev2sum"),
            c("__fa_devsum").is_nan().cast(ns.Int64).alias("__fa_devnan"),
        ]
    null = ns.lit(None, dtype=ns.Float64)
    formulas = {
        "MinMaxRatio": lambda: divided_in(ns, "__fa_mn", "__fa_mx"),
        "MaxMinRatio": lambda: divided_in(ns, "__fa_mx", "__fa_mn"),
        "MaxMinDiff": lambda: c("__fa_mx") - c("__fa_mn"),
        "MaxAbsDiff": lambda: ns.when(c("__fa_devnan") > 0).then(null).otherwise(c("__fa_devmax")),
        "MeanAbsDev": lambda: c("__fa_devsum") / c("__fa_g"),
        "LTwo": lambda: c("__fa_sumsq"),
        "Variance": lambda: divided_in(ns, c("__fa_dev2sum"), c("__fa_g") - 1.0),
    }
    # one small expression per step: narwhals re-evaluates every node of a nested expression
    undefined = (c("__fa_bad") > 0) | (c("__fa_g") < 2)
    return _Written(
        rows=tuple(rows),
        deviations=tuple(deviations),
        summed=tuple(summed),
        stats=tuple(stats),
        formulas=tuple(formulas[combo]().alias(combo) for combo in combos),
        shown=tuple(
            ns.when(undefined | c(combo).is_nan()).then(null).otherwise(c(combo)).alias(name)
            for combo, name in zip(combos, shown, strict=True)
        ),
    )
