"""Screens that compare each row with its predecessor, on in-memory Polars data.

Some checks are far cheaper when the rows come in their usual order: positions sorted within
a ranking prove themselves distinct, a query's rows side by side prove that they agree. Such a
screen compares neighbouring rows in one streaming pass, which narwhals allows only with an
explicit order; the row order of an in-memory frame is well defined, so the screens are native
Polars and the families ask for them only on in-memory input (``Source.in_memory``). A screen
proves, or fails to prove: a failed one sends its check to an exact count, so the answer never
depends on the row order, only the cost does.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping, Sequence
from typing import Any

import narwhals.stable.v2 as nw
import polars as pl

from frameaudit._expr import hashed_keys

__all__ = ["agreement_screen", "sorted_screen"]


def _rows_in_order(keys: Sequence[str], *, strict: bool) -> pl.Expr:
    """An aggregate: every row's ``keys`` follow its predecessor's.

    "Follow" is lexicographic order; ``strict`` asks for a larger key, else an equal one
    follows too. False where a comparison meets a null (a screen then falls back to its exact
    count). The first row, which has no predecessor, is sliced off (no row index is built).
    """
    *outer, last = keys
    later = pl.col(last) > pl.col(last).shift() if strict else pl.col(last) >= pl.col(last).shift()
    for key in reversed(outer):
        previous = pl.col(key).shift()
        later = (pl.col(key) > previous) | ((pl.col(key) == previous) & later)
    return later.slice(1).fill_null(value=False).all()


def sorted_screen(
    frame: nw.LazyFrame[Any], partition: Sequence[str], columns: Mapping[str, int]
) -> nw.LazyFrame[Any]:
    """Per column (mapped to its index i), ``sorted{i}``: each row follows its predecessor.

    "Follows" is strict lexicographic order of (partition, column): rows in that order repeat
    no value of the column within a partition.
    """
    native: pl.LazyFrame = frame.to_native()
    outer = hashed_keys(partition)
    screen = native.select(
        *(_rows_in_order([*outer, c], strict=True).alias(f"sorted{i}") for c, i in columns.items())
    )
    return nw.from_native(screen)


def agreement_screen(
    frame: nw.LazyFrame[Any], keys: Sequence[str], column: str
) -> nw.LazyFrame[Any]:
    """Whether the rows of each ``keys`` value agree on ``column``, proved from neighbours.

    One row: ``ordered``, every row's keys equal or follow (lexicographically) its
    predecessor's, so each key's rows are contiguous; ``changed``, the number of rows whose
    keys equal their predecessor's but whose ``column`` differs. Ordered with nothing changed
    proves the agreement; anything else needs the exact per-key count.
    """
    same = functools.reduce(operator.and_, [pl.col(k) == pl.col(k).shift() for k in keys])
    changed = same & (pl.col(column) != pl.col(column).shift())
    native: pl.LazyFrame = frame.to_native()
    screen = native.select(
        _rows_in_order(keys, strict=False).alias("ordered"),
        changed.fill_null(value=False).sum().alias("changed"),
    )
    return nw.from_native(screen)
