"""Soft group membership: items aligned with groups by weights (TREC 2022 alignment vectors).

An alignment is a frame with the item column, one group column and ``weight``: an item's
weights sum to 1 over its groups. Several alignments (one per dimension: gender, region, …)
combine into intersectional cells, each with the product of the item's weights in the
dimensions. An item that an alignment does not list goes to an explicit ``unknown`` level of
that dimension, is spread uniformly over the dimension's levels, or is left out (``unaligned=``;
leaving it out is what the TREC Fair Ranking code does with a page its alignments lack). A hard
group is the special case of weight 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import narwhals.stable.v2 as nw

from frameaudit import _validate as validate
from frameaudit._engine import Source, is_frame
from frameaudit._expr import distinct
from frameaudit._roles import Names, Role, column_names
from frameaudit.exceptions import InvalidDtypeError, InvalidParameterError

__all__ = [
    "SHARE",
    "UNALIGNED",
    "UNKNOWN",
    "Unaligned",
    "aligned",
    "alignment_frames",
    "one_grouping",
]

Unaligned = Literal["unknown", "uniform", "drop"]
UNALIGNED: tuple[Unaligned, ...] = ("unknown", "uniform", "drop")
UNKNOWN = "unknown"
"""The level an unaligned item takes with ``unaligned="unknown"``."""
SHARE = "__fa_member"
"""The column with an item's weight in a cell."""
_WEIGHT = "weight"


def one_grouping(groups: Any | None, alignment: Any | None) -> None:
    """Refuse a mapping and alignments given together (reads no data)."""
    if groups is not None and alignment is not None:
        msg = "groups=, alignment=: give the groups as a mapping or as alignments, not both"
        raise InvalidParameterError(msg)


def alignment_frames(alignment: Any, group: Names | None) -> tuple[list[Any], list[str]]:
    """The alignment frames and the group column of each (``group=``, one name per frame).

    Reads no data: ``alignment`` is a frame or a list of frames.
    """
    frames = list(alignment) if isinstance(alignment, list | tuple) else [alignment]
    if not frames or not all(is_frame(f) for f in frames):
        msg = (
            f"alignment={alignment!r}: expected a frame with the item column, a group column "
            "and 'weight' (or a list of them, one per dimension)"
        )
        raise InvalidParameterError(msg)
    names = column_names(Role("group", group if group is not None else "group", many=True))
    if len(names) != len(frames):
        msg = (
            f"group={group!r}: with alignment= give one group column per alignment frame "
            f"({len(frames)}), found {len(names)}"
        )
        raise InvalidParameterError(msg)
    return frames, names


def aligned(
    items: nw.LazyFrame[Any],
    frames: Sequence[Any],
    groups: Sequence[str],
    *,
    item: str,
    source: Source,
    unaligned: Unaligned,
    listed: bool = False,
) -> tuple[nw.LazyFrame[Any], list[validate.Check]]:
    """Each item of ``items`` (a frame of the ``item`` column) with its cells and weights.

    With ``listed``, the items the alignments list are among them too (a group's fixed
    size counts every item aligned with it, as a mapping's does).

    Returns the rows (``item``, the group columns, :data:`SHARE`), one per item and cell of
    positive weight, and the alignments' checks: no nulls, weights in [0, 1] summing to 1 per
    item, each (item, group) once.
    """
    item_dtype = items.collect_schema()[item]
    checks: list[validate.Check] = []
    dimensions = []
    for frame, group in zip(frames, groups, strict=True):
        roles = {item: "item", group: "group", _WEIGHT: "alignment"}
        dimension = source.align(frame, roles, frame_name="alignment")
        dimension = dimension.select(item, group, _WEIGHT)
        validate.require_dtype(dimension, _WEIGHT, "alignment", "numeric")
        dtype = dimension.collect_schema()[item]
        if dtype != item_dtype:
            if not (dtype.is_integer() and item_dtype.is_integer()):
                msg = (
                    f"alignment=: its items have dtype {dtype}, but item={item!r} has dtype "
                    f"{item_dtype}; convert one of them so that they match"
                )
                raise InvalidDtypeError(msg)
            dimension = dimension.with_columns(nw.col(item).cast(item_dtype))
        checks += validate.given(
            [
                validate.no_nulls(
                    dimension,
                    {item: "alignment item", group: "alignment group", _WEIGHT: "alignment weight"},
                ),
                validate.in_range(dimension, _WEIGHT, "alignment weight", 0, 1),
                validate.unique_within(
                    dimension, [item, group], "alignment=", "one weight per (item, group)"
                ),
                validate.sums_to_one(
                    dimension,
                    _WEIGHT,
                    [item],
                    "alignment=: the weights of ",
                    " item(s) do not sum to 1",
                ),
            ]
        )
        dimensions.append(dimension)
    if listed:
        items = distinct(nw.concat([items, *(d.select(item) for d in dimensions)], how="vertical"))
    table: nw.LazyFrame[Any] | None = None
    for dimension, group in zip(dimensions, groups, strict=True):
        weight = nw.col(_WEIGHT).cast(nw.Float64)
        rows = dimension.filter(weight > 0).select(item, group, weight.alias(SHARE))
        missing = items.join(distinct(dimension.select(item)), on=item, how="anti")
        filled: nw.LazyFrame[Any] | None
        if unaligned == "drop":
            filled = None
        elif unaligned == "unknown":
            group_dtype = dimension.collect_schema()[group]
            if group_dtype != nw.String:
                msg = (
                    f"unaligned='unknown': the alignment's group column {group!r} has dtype "
                    f"{group_dtype}, which cannot hold the level 'unknown'; cast it to text or "
                    "pass unaligned='uniform'"
                )
                raise InvalidDtypeError(msg)
            filled = missing.with_columns(nw.lit(UNKNOWN).alias(group), nw.lit(1.0).alias(SHARE))
        else:
            levels = distinct(dimension.select(group))
            count = levels.select(nw.len().cast(nw.Float64).alias("__fa_levels"))
            filled = (
                missing.join(levels, how="cross")
                .join(count, how="cross")
                .with_columns((1.0 / nw.col("__fa_levels")).alias(SHARE))
            )
        cells = (
            rows
            if filled is None
            else nw.concat([rows, filled.select(item, group, SHARE)], how="vertical")
        )
        if table is None:
            table = cells
        else:
            table = (
                table.join(cells, on=item, how="inner", suffix="__fa_next")
                .with_columns((nw.col(SHARE) * nw.col(f"{SHARE}__fa_next")).alias(SHARE))
                .drop(f"{SHARE}__fa_next")
            )
    assert table is not None
    return table.select(item, *groups, SHARE), checks
