"""Graded judgments (qrels) beside a run: one frame of (query, item, grade) rows.

Expected exposure and nDCG read the same judgments the same way: the query and item columns
named as in the run and of its dtypes (cast where that is lossless), non-negative grades, and
one judgment per (query, item).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import narwhals.stable.v2 as nw

from frameaudit import _validate as validate
from frameaudit._engine import Source, schema_names
from frameaudit.exceptions import InvalidDtypeError, InvalidParameterError

__all__ = ["judged"]

_NUMERIC = ("relevance", "weight")
"""The parameters whose columns hold numbers (the others are keys)."""


def judged(
    judgments: Any,
    source: Source,
    run: Any,
    *,
    queries: Sequence[str],
    item: str,
    relevance: str,
    by: Sequence[str] = (),
    also: Mapping[str, str] | None = None,
) -> tuple[nw.LazyFrame[Any], list[validate.Check], list[str]]:
    """The judgments in the run's engine (role columns only), their checks, their partitions.

    ``run`` is the run's schema: the key columns take its dtypes. ``by``: the partition
    columns; those the judgments hold key them beside the query (each market its own
    judgments) and are returned. ``also`` maps further columns to their parameter
    (``group``: a key; ``weight``: numbers). The checks: no nulls, grades ≥ 0, one judgment
    per (partition, query, item).
    """
    roles = {
        **dict.fromkeys(queries, "ranking"),
        item: "item",
        relevance: "relevance",
        **(also or {}),
    }
    if judgments is None or isinstance(judgments, str | dict | list):
        msg = (
            f"judgments={judgments!r}: expected a frame of graded judgments (query, item, "
            "relevance), e.g. frameaudit.datasets.read_qrels(path)"
        )
        raise InvalidParameterError(msg)
    # converted first: a frame that cannot be (duplicated labels) gets its error here
    frame = source.align(judgments, roles, frame_name="judgments")
    held = [c for c in by if c not in roles and c in schema_names(judgments)]
    if held:
        roles = {**dict.fromkeys(held, "by"), **roles}
        frame = source.align(judgments, roles, frame_name="judgments")
    frame = frame.select(*roles)
    keys = [*held, *queries]
    for column, parameter in roles.items():
        kind = "numeric" if parameter in _NUMERIC else "key"
        validate.require_dtype(frame, column, parameter, kind)
    frame = _run_dtypes(frame, run, {c: roles[c] for c in [*keys, item]})
    checks = validate.given(
        [
            validate.no_nulls(frame, roles),
            validate.in_range(frame, relevance, "relevance", 0, None),
            validate.unique_within(
                frame, [*keys, item], "judgments=", "judge each item once per query"
            ),
        ]
    )
    return frame, checks, held


def _run_dtypes(
    judgments: nw.LazyFrame[Any], schema: Any, columns: Mapping[str, str]
) -> nw.LazyFrame[Any]:
    """``judgments`` with its key columns cast to the run's dtypes, where that is lossless.

    ``columns`` maps each key column to its parameter. Integers of two widths are cast; text
    against categories too; anything else is an error naming both dtypes (a cast of 1.5 to
    1 or of "7" to 7 would silently join the wrong rows).
    """
    theirs = judgments.collect_schema()
    casts = []
    for column, parameter in columns.items():
        mine, other = schema[column], theirs[column]
        if mine == other:
            continue
        both_integer = mine.is_integer() and other.is_integer()
        text = {mine, other} <= {nw.String, nw.Categorical}
        if not (both_integer or text):
            msg = (
                f"judgments=: column {column!r} ({parameter}=) has dtype {other}, but the run's "
                f"has dtype {mine}; convert one of them so that they match"
            )
            raise InvalidDtypeError(msg)
        casts.append(nw.col(column).cast(mine))
    return judgments.with_columns(*casts) if casts else judgments
