"""Plan pieces whose best form depends on the engine that runs them.

The families write one plan for every engine; the few steps where engines differ in what
they compute well (or correctly) are asked for here, by what they mean: a subplan several
branches read (:func:`cached`), distinct counts per group (:func:`count_distinct`), a large
frame joined with a small one (:func:`join_small`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import narwhals.stable.v2 as nw
import polars as pl

from frameaudit._expr import aggregate

__all__ = ["cached", "count_distinct", "join_small"]


def cached(frame: nw.LazyFrame[Any]) -> nw.LazyFrame[Any]:
    """Mark a subplan that several branches of a plan read, so that Polars computes it once.

    Polars' common-subplan elimination misses branches that read different columns of the same
    subplan (projection pushdown makes them different plans); an explicit cache does not. The
    other engines plan shared subqueries themselves.
    """
    if frame.implementation is nw.Implementation.POLARS:
        native: pl.LazyFrame = frame.to_native()
        return nw.from_native(native.cache())
    return frame


def count_distinct(
    frame: nw.LazyFrame[Any],
    keys: Sequence[str],
    columns: Mapping[str, str],
    *,
    also: Sequence[nw.Expr] = (),
) -> nw.LazyFrame[Any]:
    """Per ``keys``, count the distinct values of each column, with the aggregations ``also``.

    ``columns`` maps each column to the alias of its count; ``also`` are further aggregations
    (sums, ``len``) computed in the same pass.

    One grouped aggregation, except on Dask, whose grouped ``n_unique`` adds up the counts of
    its partitions: there each column is counted through ``unique()`` and joined.
    """
    keys = list(keys)
    if frame.implementation is not nw.Implementation.DASK:
        return aggregate(
            frame, keys, *also, *(nw.col(c).n_unique().alias(a) for c, a in columns.items())
        )
    parts = [frame.group_by(keys).agg(*also)] if also else []
    parts += [
        frame.select(*keys, c).unique().group_by(keys).agg(nw.len().alias(a))
        for c, a in columns.items()
    ]
    result = parts[0]
    for part in parts[1:]:
        result = result.join(part, on=keys, how="left")
    return result


def join_small(large: nw.LazyFrame[Any], small: nw.LazyFrame[Any], on: str) -> nw.LazyFrame[Any]:
    """``large`` inner-joined with ``small`` on ``on``, the hash table built on ``small``.

    Polars' streaming join otherwise first samples both sides to choose the side to build on,
    holding the large one meanwhile: a bootstrap's 67M (unit, replicate) draws joined with
    200,000 per-unit sums held 1.6 GiB that way, 0.2 GiB built on the sums. The other engines
    choose their build side from their own statistics.
    """
    if large.implementation is nw.Implementation.POLARS and small.implementation is (
        nw.Implementation.POLARS
    ):
        native: pl.LazyFrame = large.to_native()
        joined = native.join(small.to_native(), on=on, how="inner", build_side="force_right")
        return nw.from_native(joined)
    return large.join(small, on=on, how="inner")
