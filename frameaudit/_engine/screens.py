"""Screens that compare each row with its predecessor, on in-memory Polars data.

Some checks are far cheaper when the rows come in their usual order: positions sorted within
a ranking prove themselves distinct, a query's rows side by side prove that they agree. Such a
screen compares neighbouring rows in one streaming pass, which narwhals allows only with an
explicit order; the row order of a Polars frame (in memory, or as a scan reads it) is well
defined, so the screens are native Polars. A screen proves, or fails to prove: a failed one
sends its check to an exact count, so the answer never depends on the row order, only the cost
does.

The comparison with the predecessor of :func:`sorted_screen` is a column that
:func:`order_marks` adds to the frame every branch of the plan reads. Computed in a branch of
its own, it would be an ordered reader of the subplan that Polars shares between the branches
(common-subplan elimination caches it), and the streaming engine holds the whole shared input
for it: 2.4 GiB at 10^8 rows, against 0.8 GiB with the mark computed once below the fork.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import narwhals.stable.v2 as nw
import polars as pl

from frameaudit._expr import hashed_keys

__all__ = [
    "PROVED",
    "RUN",
    "FastPlan",
    "agreement_screen",
    "order_marks",
    "proven_or_exact",
    "runs_along",
    "sorted_screen",
]

PROVED = "__fa_proved"
"""The column of the one-row proof of :func:`proven_or_exact`."""
RUN = "__fa_run"
"""The rows of a partition that arrived together in order, from :func:`runs_along`."""
_KEY = "__fa_proof_key"
_PRESENT = "__fa_proof_present"


def _follows(keys: Sequence[str], *, strict: bool) -> pl.Expr:
    """Per row: its ``keys`` follow its predecessor's (null on the first row).

    "Follow" is lexicographic order; ``strict`` asks for a larger key, else an equal one
    follows too. Null where a comparison meets a null.
    """
    *outer, last = keys
    later = pl.col(last) > pl.col(last).shift() if strict else pl.col(last) >= pl.col(last).shift()
    for key in reversed(outer):
        previous = pl.col(key).shift()
        later = (pl.col(key) > previous) | ((pl.col(key) == previous) & later)
    return later


def _rows_in_order(keys: Sequence[str], *, strict: bool) -> pl.Expr:
    """An aggregate: every row's ``keys`` follow its predecessor's (:func:`_follows`).

    False where a comparison meets a null (a screen then falls back to its exact count). The
    first row, which has no predecessor, is sliced off (no row index is built).
    """
    return _follows(keys, strict=strict).slice(1).fill_null(value=False).all()


def _mark(partition: Sequence[str], column: str) -> str:
    """The name of the mark of ``column`` within ``partition`` (see :func:`order_marks`)."""
    return "__fa_follows_" + "_".join([*hashed_keys(partition), column])


def order_marks(
    frame: nw.LazyFrame[Any], partition: Sequence[str], columns: Sequence[str]
) -> tuple[nw.LazyFrame[Any], list[str]]:
    """``frame`` with, on Polars, a mark per column for :func:`sorted_screen`; the marked columns.

    The mark of a row is true when its (partition, column) strictly follows its predecessor's
    in lexicographic order; false on the first row and where a comparison meets a null. Other
    engines have no row order: the frame comes back unmarked, with no column marked.
    """
    if frame.implementation is not nw.Implementation.POLARS:
        return frame, []
    native: pl.LazyFrame = frame.to_native()
    outer = hashed_keys(partition)
    marks = (
        _follows([*outer, c], strict=True).fill_null(value=False).alias(_mark(partition, c))
        for c in columns
    )
    return nw.from_native(native.with_columns(*marks)), list(columns)


def sorted_screen(
    frame: nw.LazyFrame[Any], partition: Sequence[str], columns: Mapping[str, int]
) -> nw.LazyFrame[Any]:
    """Per column (mapped to its index i), ``sorted{i}``: each row follows its predecessor.

    "Follows" is strict lexicographic order of (partition, column): rows in that order repeat
    no value of the column within a partition. The frame carries the columns' marks
    (:func:`order_marks`); only its first row may lack one (it has no predecessor), so the
    screen is an unordered count, which the streaming engine runs beside the other readers
    of the frame.
    """
    native: pl.LazyFrame = frame.to_native()
    unmarked = [(~pl.col(_mark(partition, c))).sum() for c in columns]
    screen = native.select(
        *((n <= 1).alias(f"sorted{i}") for n, i in zip(unmarked, columns.values(), strict=True))
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


def runs_along(
    frame: nw.LazyFrame[Any],
    partition: Sequence[str],
    rank: str,
    *,
    counts: Mapping[str, Sequence[str]],
    sums: Mapping[str, str],
) -> nw.LazyFrame[Any]:
    """``frame`` with running counts and sums along each partition, for rows already in order.

    Per ``alias: keys`` of ``counts``, a row's 1-based order (Int64) among the rows of its
    partition with its ``keys``; per ``column: alias`` of ``sums``, the sum of ``column`` over
    the rows before it in its partition. Both take the rows as they come to be in ``rank``
    order, each partition's rows together: :data:`RUN` is the number of rows of the row's
    run (its partition's rows that came together) when their ranks strictly increase, else
    0. The values of a partition are right when its ``RUN`` is its number of rows, a proof
    for :func:`proven_or_exact`.

    Only for a lazy Polars frame (where :func:`proven_or_exact` chooses). One aggregation per
    run, flagged as arriving sorted, so that the streaming engine holds one partition at a time,
    its lists exploded back to rows: NDKL on 10^8 rows peaked at 7.6 GiB with the ordered
    windows of ``order_within``, which hold the whole frame. Give it only the columns needed
    after: each becomes a list per partition, and a column that compares a row with its
    predecessor in the frame (the marks of :func:`order_marks`) made the engine hold the frame
    (2.7 GiB against 0.6 without; the comparison within a run holds nothing). A frame without
    partition keys is one partition, computed as a whole.
    """
    native: pl.LazyFrame = frame.to_native()
    names = native.collect_schema().names()
    keys = hashed_keys(partition)
    orders = (
        (pl.col(rank).cum_count().over(*sub) if sub else pl.col(rank).cum_count())
        .cast(pl.Int64)
        .alias(alias)
        for alias, sub in counts.items()
    )
    running = ((pl.col(c).cum_sum() - pl.col(c)).alias(alias) for c, alias in sums.items())
    increasing = pl.col(rank).diff().min().fill_null(1) > 0  # a single row increases
    run = pl.when(increasing).then(pl.len()).otherwise(0).cast(pl.Int64).alias(RUN)
    added = [*counts, *sums.values()]
    if not keys:
        return nw.from_native(native.select(*names, *orders, *running, run))
    carried = [c for c in names if c not in keys]
    lists = (
        native.set_sorted(keys)
        .group_by(keys)
        .agg(*carried, *orders, *running, run)
        .explode([*carried, *added])
    )
    return nw.from_native(lists.select(*names, *added, RUN))


def _provable(frame: nw.LazyFrame[Any], *, in_memory: bool) -> bool:
    """Whether :func:`proven_or_exact` chooses by its proof (else it takes the exact plan)."""
    return not in_memory and frame.implementation is nw.Implementation.POLARS


@dataclass(frozen=True)
class FastPlan:
    """A plan that is right where its one-row ``proof`` (column :data:`PROVED`) holds.

    ``likely``, optional, is a cheap one-row frame (column :data:`PROVED`) saying whether the
    plan is worth trying (:func:`proven_or_exact`).
    """

    plan: nw.LazyFrame[Any]
    proof: nw.LazyFrame[Any]
    likely: nw.LazyFrame[Any] | None = None


def proven_or_exact(
    exact: nw.LazyFrame[Any], fast: Callable[[], FastPlan], *, in_memory: bool
) -> nw.LazyFrame[Any]:
    """The plan ``fast()`` builds where its proof holds, else ``exact``.

    The two plans are for the same frame; the fast one is right when its proof holds (e.g.
    positions 1..n in every ranking make the positions the orders, no window needed). On
    Polars one plan computes the fast plan with its proof, and only a failed proof computes
    ``exact``, by a second query, as a failed check computes its diagnostics. The other
    engines plan the windows of ``exact`` themselves (and spill them to disk). ``fast`` is
    called only where the choice is made: building a plan is part of a call's fixed cost.

    ``likely``, for a fast plan that costs far more when its proof fails (the pass of
    :func:`runs_along` costs per run of rows: NDKL on 10^7 shuffled rows took 80 s so, 29 s
    by the windows alone), comes from a cheap pass, such as :func:`sorted_screen`, that says
    whether the fast plan is worth trying: the plan then computes ``likely``, and the fast plan
    by a second query (streaming: it holds little) only where it holds.

    The choice is a Python function inside the plan, so it is made only for a lazy Polars
    input, whose caller collects it: for in-memory data (``in_memory``) no Python may run on
    Polars' thread pool (a thread converting a frame meanwhile would deadlock,
    docs/concepts.md#threads), and ``exact`` is computed, in memory anyway.
    """
    if not _provable(exact, in_memory=in_memory):
        return exact
    built = fast()
    native: pl.LazyFrame = built.plan.to_native()
    schema = native.collect_schema()
    exact_native: pl.LazyFrame = exact.to_native()
    # the one-row proof on the left, so that an empty fast plan still carries it
    key = pl.lit(0).alias(_KEY)
    joined = (
        built.proof.to_native()
        .select(pl.col(PROVED).fill_null(value=False), key)
        .join(native.with_columns(key, pl.lit(True).alias(_PRESENT)), on=_KEY, how="left")
    )

    def choose(frame: pl.DataFrame) -> pl.DataFrame:
        if frame[PROVED][0]:
            return frame.filter(pl.col(_PRESENT).is_not_null()).select(schema.names())
        return exact_native.collect().select(schema.names())

    def try_fast(frame: pl.DataFrame) -> pl.DataFrame:
        # where unlikely, ``frame`` (its PROVED false) has ``choose`` compute ``exact``
        return choose(joined.collect(engine="streaming") if frame[PROVED][0] else frame)

    if built.likely is None:
        chosen = joined.map_batches(choose, schema=schema)
    else:
        worth = built.likely.to_native().select(pl.col(PROVED).fill_null(value=False))
        chosen = worth.map_batches(try_fast, schema=schema)
    result: nw.LazyFrame[Any] = nw.from_native(chosen)
    return result
