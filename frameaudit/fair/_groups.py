"""The groups a ranking metric compares: the universe, the item → group mapping, a target mix.

SPEC §1: the groups are the ones the caller lists (``universe=``), else those of the data; an
item's group comes from its row, or from a mapping (``groups=``, a dict or a frame); NDKL's
desired distribution (``target=``) is a share per group. Each is turned into a small lazy frame
in the data's engine, with the checks that the data and it agree (every group listed, every
item mapped, the shares summing to 1), run with the metric's own.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import narwhals.stable.v2 as nw

from frameaudit import _validate as validate
from frameaudit._engine import Source, cached, is_frame, schema_names
from frameaudit._expr import distinct
from frameaudit.exceptions import InvalidDtypeError, InvalidParameterError

__all__ = [
    "GroupMapping",
    "Target",
    "Universe",
    "group_columns",
    "item_groups",
    "join_mapping",
    "listed_universe",
    "target_shares",
]

GroupMapping = Mapping[Any, Any] | Any
Universe = Sequence[Any] | Any
"""The groups a combo compares: a list of group values (of tuples, one value per group column,
for intersectional groups), or a frame with the group column(s)."""
Target = Mapping[Any, float] | Literal["ranking"] | Any
"""NDKL's desired distribution: a mapping group → share, a frame of shares, or "ranking"."""


def listed_universe(
    lf: nw.LazyFrame[Any], groups: list[str], universe: Universe, source: Source
) -> tuple[nw.LazyFrame[Any], list[validate.Check]]:
    """The group universe the caller lists (SPEC §1), and its checks.

    Every group of the frame must be among the listed ones.
    """
    schema = lf.collect_schema()
    if is_frame(universe):
        listed = source.align(universe, dict.fromkeys(groups, "universe"), frame_name="universe")
        listed = listed.select(groups)
    elif isinstance(universe, Sequence | set | frozenset) and not isinstance(universe, str):
        if not universe:
            raise InvalidParameterError("universe=[]: expected at least one group")
        columns = group_columns("universe", list(universe), groups, schema)
        listed = source.frame_from_columns(columns, parameter="universe")
    else:
        msg = (
            f"universe={universe!r}: expected a list of group values (tuples of one value per "
            f"group column {groups} for intersectional groups), or a frame with the group "
            "column(s)"
        )
        raise InvalidParameterError(msg)
    listed = distinct(listed.with_columns(nw.col(g).cast(schema[g]) for g in groups))
    outside = distinct(lf.select(groups)).join(listed, on=groups, how="anti")
    return listed, [
        *validate.given([validate.no_nulls(listed, dict.fromkeys(groups, "universe"))]),
        validate.offending(
            outside,
            groups,
            "universe=: ",
            " group(s) of the frame are not in the listed universe",
            "; list every group of the frame, or leave universe=None",
        ),
    ]


def group_columns(
    parameter: str, values: list[Any], groups: list[str], schema: Any
) -> dict[str, list[Any]]:
    """Groups given as Python values (tuples for several group columns), as columns.

    Schema only: each value must be able to be a value of its group column.
    """
    rows = [v if isinstance(v, tuple) else (v,) for v in values]
    for row in rows:
        if len(row) != len(groups):
            msg = (
                f"{parameter}=: {row if len(row) > 1 else row[0]!r} has {len(row)} value(s), "
                f"but the groups are given by {len(groups)} column(s) {groups}; give one value "
                "per group column"
            )
            raise InvalidParameterError(msg)
        for g, value in zip(groups, row, strict=True):
            if value is None:
                raise InvalidParameterError(f"{parameter}=: a group value is None")
            validate.group_value(parameter, value, "group", g, schema[g])
    return {g: [row[i] for row in rows] for i, g in enumerate(groups)}


def join_mapping(
    lf: nw.LazyFrame[Any], groups: GroupMapping, source: Source, item: str, group: str
) -> tuple[nw.LazyFrame[Any], nw.LazyFrame[Any], list[validate.Check]]:
    """``lf`` with each item's group from ``groups``, the mapping, and their checks.

    The checks: the mapping's own, and every item of ``lf`` mapped.
    """
    mapping, checks = item_groups(groups, source, item=item, group=group)
    joined = lf.join(mapping, on=item, how="left")
    unmapped = joined.filter(nw.col(group).is_null()).select(nw.col(item))
    unmapped_check = validate.offending(
        unmapped,
        [item],
        "groups=: ",
        " ranked row(s) have an item missing from the mapping",
        "; every ranked item needs a group",
    )
    return joined, mapping, [*checks, unmapped_check]


def item_groups(
    groups: GroupMapping, source: Source, *, item: str, group: str
) -> tuple[nw.LazyFrame[Any], list[validate.Check]]:
    """The item → group mapping as a lazy frame in the data's engine, with its checks."""
    if isinstance(groups, Mapping):
        if not groups:
            raise InvalidParameterError("groups={}: the mapping is empty")
        mapping = source.frame_from_columns(
            {item: list(groups.keys()), group: list(groups.values())}, parameter="groups"
        )
    else:
        mapping = source.align(groups, {item: "item", group: "group"}, frame_name="groups")
    mapping = mapping.select(item, group)
    item_dtype = source.frame.collect_schema()[item]
    mapping_dtype = mapping.collect_schema()[item]
    if mapping_dtype != item_dtype:
        both_integer = mapping_dtype.is_integer() and item_dtype.is_integer()
        text_items = item_dtype == nw.String and mapping_dtype == nw.Categorical
        if not (both_integer or text_items):
            # a lossy cast (1.5 → 1, "7" → 7) would silently give items the wrong group
            msg = (
                f"groups=: the mapping's items have dtype {mapping_dtype}, but item={item!r} "
                f"has dtype {item_dtype}; convert one of them so that they match"
            )
            raise InvalidDtypeError(msg)
        mapping = mapping.with_columns(nw.col(item).cast(item_dtype))
    checks = validate.given(
        [
            validate.no_nulls(
                mapping, {item: "groups (mapping) item", group: "groups (mapping) group"}
            ),
            validate.unique_within(
                mapping, [item], "groups=", "each item may belong to one group only"
            ),
        ]
    )
    return mapping, checks


def target_shares(
    target: Any,
    *,
    groups: list[str],
    schema: Mapping[str, Any],
    keys: Sequence[str],
    source: Source,
    present: nw.LazyFrame[Any],
    universe: nw.LazyFrame[Any] | None = None,
) -> tuple[nw.LazyFrame[Any], list[str], list[validate.Check]]:
    """``target=``, a mapping group → share or a frame of shares: (shares, their keys, checks).

    A frame holds the group column(s), ``share``, and optionally some of ``keys`` (partition,
    ranking or query columns): one distribution per key. ``schema`` gives the dtypes of the
    group and key columns. The checks: shares in [0, 1] summing to 1 (per key), one share per
    group, every (key, group) of ``present`` with a share, and with a ``universe`` no group
    outside it.
    """
    on: list[str] = []
    if isinstance(target, Mapping):
        shares = _target_mapping(target, groups, schema, source)
    elif is_frame(target):
        names = schema_names(target)
        on = [c for c in names if c in keys and c not in groups]
        extra = [c for c in names if c not in (*groups, *on, "share")]
        if extra:
            msg = (
                f"target=: column {extra[0]!r} is neither a group column ({', '.join(groups)}), "
                "'share', nor a by= or ranking= column"
            )
            raise InvalidParameterError(msg)
        roles = {**dict.fromkeys([*groups, *on], "target"), "share": "target"}
        shares = source.align(target, roles, frame_name="target").select(*on, *groups, "share")
        validate.require_dtype(shares, "share", "target", "numeric")
        shares = shares.with_columns(nw.col(k).cast(schema[k]) for k in on)
    else:
        msg = (
            f"target={target!r}: expected a mapping group → share, a frame with the group "
            "column(s) and a share column, or 'ranking' (each ranking's own mix)"
        )
        raise InvalidParameterError(msg)
    shares = cached(
        shares.with_columns(
            *(nw.col(g).cast(schema[g]) for g in groups), nw.col("share").cast(nw.Float64)
        )
    )
    checks = [
        *validate.given(
            [
                validate.no_nulls(shares, dict.fromkeys([*on, *groups, "share"], "target")),
                validate.in_range(shares, "share", "target share", 0, 1),
                validate.unique_within(shares, [*on, *groups], "target=", "one share per group"),
                validate.sums_to_one(
                    shares, "share", on, "target=: the shares of ", " partition(s) do not sum to 1"
                ),
            ]
        ),
        validate.offending(
            distinct(present.select(*on, *groups)).join(shares, on=[*on, *groups], how="anti"),
            [*on, *groups],
            "target=: ",
            " group(s) of the data have no share",
            "; give every group a share (0 is allowed)",
        ),
    ]
    if universe is not None:
        outside = distinct(shares.select(groups)).join(universe, on=groups, how="anti")
        checks.append(
            validate.offending(
                outside, groups, "target=: ", " group(s) are not in the listed universe"
            )
        )
    return shares, on, checks


def _target_mapping(
    target: Mapping[Any, Any], groups: list[str], schema: Any, source: Source
) -> nw.LazyFrame[Any]:
    """A mapping group → share as a frame of the group column(s) and ``share``, checked."""
    if not target:
        raise InvalidParameterError("target={}: expected at least one group with its share")
    shares = list(target.values())
    for key, value in target.items():
        if (
            isinstance(value, bool)
            or not isinstance(value, numbers.Real)
            or not (0.0 <= float(value) <= 1.0)
        ):
            msg = f"target=: the share of {key!r} is {value!r}; expected a number in [0, 1]"
            raise InvalidParameterError(msg)
    total = math.fsum(float(v) for v in shares)
    if abs(total - 1.0) > validate.SUM_TOLERANCE:
        msg = f"target=: the shares sum to {total!r}; expected them to sum to 1"
        raise InvalidParameterError(msg)
    columns = group_columns("target", list(target), groups, schema)
    columns["share"] = [float(v) for v in shares]
    return source.frame_from_columns(columns, parameter="target")
