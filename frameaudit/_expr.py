"""Small expression helpers shared by the metric families (narwhals, every backend)."""

from __future__ import annotations

import narwhals.stable.v2 as nw

__all__ = ["discount", "nan_to_null", "null_float", "safe_div"]


def null_float() -> nw.Expr:
    """A Float64 null literal."""
    return nw.lit(None, dtype=nw.Float64)


def safe_div(numerator: nw.Expr, denominator: nw.Expr) -> nw.Expr:
    """IEEE division without NaN: x/0 is ±inf for x ≠ 0, 0/0 is null (undefined), null stays null.

    The division sits in a branch that only rows with a non-zero denominator take, so engines
    that raise or return null on a division by zero (Spark in ANSI mode, DuckDB) give the same
    answer as Polars. Kept small: narwhals re-evaluates every node of a nested expression.
    """
    return (
        nw.when(numerator.is_null() | denominator.is_null())
        .then(null_float())
        .when(denominator != 0)
        .then(numerator.cast(nw.Float64) / denominator.cast(nw.Float64))
        .when(numerator > 0)
        .then(nw.lit(float("inf")))
        .when(numerator < 0)
        .then(nw.lit(float("-inf")))
        .otherwise(null_float())
    )


def nan_to_null(expr: nw.Expr) -> nw.Expr:
    """Turn NaN (an undefined result such as inf − inf) into null."""
    return nw.when(expr.is_nan()).then(null_float()).otherwise(expr)


def discount(position: nw.Expr) -> nw.Expr:
    """The logarithmic position discount 1/log2(k+1)."""
    return 1.0 / (position.cast(nw.Float64) + 1.0).log(base=2)
