"""Plan pieces whose best form depends on the engine that runs them.

The families write one plan for every engine; the few steps where engines differ in what
they compute well (or correctly) are asked for here, by what they mean: a subplan several
branches read (:func:`cached`), distinct counts per group (:func:`count_distinct`), the
partitions where a value repeats (:func:`repeats_within`), a row's order in its partition
(:func:`order_within`), running counts and sums along it (:func:`running_along`), a large frame
joined with a small one (:func:`join_small`), a result sorted by its keys (:func:`sorted_by`),
and a DuckDB bootstrap's shared subqueries computed once (:func:`materialized_shared`).

On Polars some steps have a fast path that a proof in the same plan chooses
(:func:`proven_or_exact`): positions sorted within a ranking prove themselves distinct, a
query's rows side by side prove that they agree, ranks 1 … n are the orders themselves
(:func:`per_order`), and sorted rows give running counts in one pass (:func:`running_along`).
Such a screen compares neighbouring rows in one streaming pass, which
narwhals allows only with an explicit order; the row order of a Polars frame (in memory, or as
a scan reads it) is well defined, so the screens are native Polars. A screen proves, or fails
to prove: a failed one sends its check or its step to the exact plan, so the answer never
depends on the row order, only the cost does.

The comparison with the predecessor of :func:`sorted_screen` is a column that
:func:`order_marks` adds to the frame every branch of the plan reads. Computed in a branch of
its own, it would be an ordered reader of the subplan that Polars shares between the branches
(common-subplan elimination caches it), and the streaming engine holds the whole shared input
for it: 2.4 GiB at 10^8 rows, against 0.8 GiB with the mark computed once below the fork.
"""

from __future__ import annotations

import collections
import functools
import operator
import re
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import narwhals.stable.v2 as nw
import numpy as np
import polars as pl

from frameaudit._engine.native import Written, aggregated, namespace_of, native_step, stepped
from frameaudit._engine.text import duckdb_name, spark_name
from frameaudit._expr import WHOLE, aggregate, distinct, hashed_keys, joined_on, partitioned

__all__ = [
    "PROVED",
    "FastPlan",
    "agreement_screen",
    "cached",
    "count_distinct",
    "exact_means",
    "exact_sums",
    "join_small",
    "materialized_shared",
    "nearest_distances",
    "order_marks",
    "order_within",
    "per_order",
    "proven_or_exact",
    "repeats_within",
    "running_along",
    "scaled_sums",
    "scaled_terms",
    "sorted_by",
    "sorted_screen",
    "sum_before",
]


def cached(frame: nw.LazyFrame[Any]) -> nw.LazyFrame[Any]:
    """Mark a subplan that several branches of a plan read, so that Polars computes it once.

    Polars' common-subplan elimination misses branches that read different columns of the same
    subplan (projection pushdown makes them different plans); an explicit cache does not. Spark
    plans shared subqueries itself; DuckDB inlines them, and a plan with bootstrap replicates
    has them computed once at the end (:func:`materialized_shared`).
    """
    if frame.implementation is nw.Implementation.POLARS:
        native: pl.LazyFrame = frame.to_native()
        return stepped(frame, native.cache())
    return frame


_SHARED_CTE = re.compile(r'"(__duckdb_s\d+)" AS NOT MATERIALIZED \(')


def materialized_shared(relation: Any, anchor: Any) -> Any:
    """A DuckDB ``relation`` whose subqueries read more than once are computed once.

    DuckDB writes a relation as SQL with a ``NOT MATERIALIZED`` common table expression per
    step, and inlines one at each reference: a bootstrap's plan, whose steps read their inputs
    two or three times, grows with every step, and planning it dominates. EXP with ``ci=`` on
    600 rows took 3.2 s to plan and run, against 0.13 s with the shared expressions
    materialized (and a ranking report with intervals 25 s, when this was written). Rewritten
    as SQL on the relation's connection, still lazy (nothing runs until the result is read).
    Used for plans with replicates only: a materialized expression holds its rows, which a
    plan without a bootstrap (the large-input path) streams instead.

    The SQL runs through ``anchor.query``: ``anchor`` is a relation of the same connection
    with few steps (the caller's frame). DuckDB's ``query`` puts a name in the catalog for the
    length of the call, after which DuckDB binds every step of the relation it was called on
    again, about a millisecond each: from the plan's own relation (about 250 steps for a
    bootstrap) that was a quarter of EXP's call with ``ci=``. The rewritten SQL reads the
    plan's steps by their text, so the plan's relation is kept alive as long as the result
    (:data:`_KEPT`): it holds the small frames the plan put on the connection.
    """
    sql = relation.sql_query()
    references = collections.Counter(re.findall(r'"(__duckdb_s\d+)"', sql))
    shared = [name for name in _SHARED_CTE.findall(sql) if references[name] > 2]
    if not shared:
        return relation
    for name in shared:
        sql = sql.replace(f'"{name}" AS NOT MATERIALIZED (', f'"{name}" AS MATERIALIZED (')
    # renamed: the query's own relation is written with DuckDB's names too
    sql = re.sub(r'"__duckdb_s(\d+)"', r'"__fa_step\1"', sql)
    result = anchor.query("__frameaudit_result", sql)
    _KEPT[result] = relation
    return result


_KEPT: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
"""A rewritten DuckDB result → the relation it was written from, alive while the result is."""


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
        distinct(frame.select(*keys, c)).group_by(keys).agg(nw.len().alias(a))
        for c, a in columns.items()
    ]
    result = parts[0]
    for part in parts[1:]:
        result = result.join(part, on=keys, how="left")
    return result


def repeats_within(
    frame: nw.LazyFrame[Any], partition: Sequence[str], columns: Sequence[str]
) -> nw.LazyFrame[Any]:
    """Per partition: the rows ``__fa_n`` and, per column i, whether a value repeats.

    ``__fa_r{i}`` is 1 when a value of column i repeats within the partition, else 0.
    Polars, DuckDB and Dask count the distinct values per partition: one hash aggregation.
    Spark, and DuckDB for integer columns, give only the partitions where some value repeats,
    without ``__fa_n`` (:func:`_spark_repeats`, :func:`_duckdb_repeats`); a null is no repeat
    there (the null checks report it), where a count of distinct values counts it as one value.
    """
    partition, names = list(partition), list(columns)
    if frame.implementation in _SPARK:
        return _any_repeat(_spark_repeats(frame, partition, names), partition)
    schema = frame.collect_schema()
    if frame.implementation is nw.Implementation.DUCKDB and all(
        schema[name] in _BLOCKED_INTEGERS for name in names
    ):
        return _any_repeat(_duckdb_repeats(frame, partition, names), partition)
    distinct = count_distinct(
        frame,
        partition,
        {c: f"__fa_u{i}" for i, c in enumerate(names)},
        also=[nw.len().alias("__fa_n")],
    )
    repeats = [
        (nw.col(f"__fa_u{i}") < nw.col("__fa_n")).cast(nw.Int64).alias(f"__fa_r{i}")
        for i in range(len(names))
    ]
    return distinct.select(*partition, "__fa_n", *repeats)


_SPARK = (nw.Implementation.PYSPARK, nw.Implementation.PYSPARK_CONNECT)


def _any_repeat(offenders: list[nw.LazyFrame[Any]], partition: list[str]) -> nw.LazyFrame[Any]:
    """The partitions where a value repeats, ``__fa_r{i}`` each, from column i's ``offenders``.

    ``offenders[i]`` holds (at least once) the partition keys where a value of column i
    repeats. The partitions with a repeat are few, so combining the columns' flags costs
    nothing.
    """
    keys = hashed_keys(partition)
    flags = [f"__fa_r{i}" for i in range(len(offenders))]
    # the flags added as columns: a select of literals alone would give one row
    marked = [
        offending.with_columns(
            nw.lit(int(j == i), dtype=nw.Int64).alias(f) for j, f in enumerate(flags)
        ).select(*keys, *flags)
        for i, offending in enumerate(offenders)
    ]
    return aggregate(nw.concat(marked), partition, *(nw.col(f).max() for f in flags))


def _spark_repeats(
    frame: nw.LazyFrame[Any], partition: list[str], names: list[str]
) -> list[nw.LazyFrame[Any]]:
    """Per column of a Spark frame, the partitions where one of its values repeats.

    An integer column is grouped by (partition, value >> 6), the bits ``1 << (value & 63)``
    OR-ed together: the values of a group are distinct exactly when it has as many bits set
    as values. One hash aggregation, as cheap as a bare grouped sum, where the sort of 10M
    rows for a window (comparing each value with its predecessor in value order) took three
    times as long on 2 cores, and a count of distinct values longer still. Other columns
    (text items) take that window.
    """
    from pyspark.sql import Window  # noqa: PLC0415 (an optional engine)
    from pyspark.sql import functions as sf  # noqa: PLC0415

    native = frame.to_native()
    schema = frame.collect_schema()
    keys = [_spark_column(k) for k in hashed_keys(partition)]
    offenders = []
    for name in names:
        value = _spark_column(name)
        if schema[name].is_integer():
            value = value.cast("long")
            bit = sf.call_function(
                "shiftleft", sf.lit(1).cast("long"), (value.bitwiseAND(63)).cast("int")
            )
            grouped = native.groupBy(*keys, sf.shiftright(value, 6)).agg(
                sf.count(value).alias("__fa_count"), sf.bit_or(bit).alias("__fa_bits")
            )
            repeating = sf.bit_count("__fa_bits") < sf.col("__fa_count")
        else:
            window = Window.partitionBy(*keys).orderBy(value) if keys else Window.orderBy(value)
            grouped = native.select(*keys, (value == sf.lag(value).over(window)).alias("__fa_eq"))
            repeating = sf.col("__fa_eq")
        offenders.append(nw.from_native(grouped.filter(repeating)))
    return offenders


_BLOCKED_INTEGERS = (nw.Int8, nw.Int16, nw.Int32, nw.Int64, nw.UInt8, nw.UInt16, nw.UInt32)


def _duckdb_repeats(
    frame: nw.LazyFrame[Any], partition: list[str], names: list[str]
) -> list[nw.LazyFrame[Any]]:
    """:func:`_spark_repeats` on DuckDB, for integer columns (exact in BIGINT).

    Grouping by (partition, value >> 6) makes 64 times fewer groups than the values: on 10M
    positions of 100,000 rankings, the distinct count grouped all 10M (partition, value) pairs
    and took 1.47 s of the cores' time, against 0.10 s for grouping the same rows by ranking.
    """
    import duckdb  # noqa: PLC0415 (an optional engine)

    native = frame.to_native()
    keys = [duckdb_name(k) for k in hashed_keys(partition)]
    offenders = []
    for name in names:
        value = f"CAST({duckdb_name(name)} AS BIGINT)"
        counted = [
            f"count({value}) AS __fa_count",
            f"bit_or(1::UBIGINT << ({value} & 63)) AS __fa_bits",
        ]
        grouped = native.aggregate(
            ", ".join([*keys, *counted]), ", ".join([*keys, f"{value} >> 6"])
        )
        repeating = grouped.filter(duckdb.SQLExpression("bit_count(__fa_bits) < __fa_count"))
        offenders.append(nw.from_native(repeating))
    return offenders


def _orders(frame: nw.LazyFrame[Any], partition: Sequence[str], order: str) -> nw.LazyFrame[Any]:
    """The distinct orders of ``frame``: 1 … the longest partition's length, a row each.

    DuckDB counts the rows of each partition and generates the orders: reading the distinct
    values of ``order`` would compute its window once more for every branch that reads the
    frame (DuckDB does not share them), each time with a window for the distinct values.
    """
    if frame.implementation is not nw.Implementation.DUCKDB:
        return distinct(frame.select(order))
    import duckdb  # noqa: PLC0415 (an optional engine)

    length = "__fa_length"
    longest = aggregate(frame, partition, nw.len().alias(length)).select(nw.col(length).max())
    orders = f"unnest(range(1, {duckdb_name(length)} + 1))"
    native = longest.to_native().select(duckdb.SQLExpression(orders).alias(order))
    generated: nw.LazyFrame[Any] = nw.from_native(native)
    return generated


def sorted_by(frame: nw.LazyFrame[Any], keys: Sequence[str]) -> nw.LazyFrame[Any]:
    """A result ``frame`` sorted by ``keys`` (nulls first) on a lazy engine.

    Spark sorts one partition: its total sort samples the input to split it into ranges, a
    job that computes the whole plan once more (NDKL by ranking on 10M rows took 1.8x the
    time of NDKL overall). A result has a row per partition of the data, far fewer than rows.
    """
    if not keys:
        return frame
    if frame.implementation not in _SPARK:
        return frame.sort(list(keys))
    from pyspark.sql import functions as sf  # noqa: PLC0415 (an optional engine)

    order = [sf.asc_nulls_first(_spark_column(k)) for k in keys]
    one: nw.LazyFrame[Any] = nw.from_native(
        frame.to_native().repartition(1).sortWithinPartitions(*order)
    )
    return one


def _spark_column(name: str) -> Any:
    from pyspark.sql import functions as sf  # noqa: PLC0415 (an optional engine)

    return sf.col(spark_name(name))


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
        return stepped(large, joined)
    return large.join(small, on=on, how="inner")


_LITERAL_TERMS = 256
"""The most (centroid, feature) terms that :func:`nearest_distances` writes into a query.

DuckDB parses and binds a term in about 0.1 ms as the call is built (10 centroids × 10
features: 10 ms; 32 × 32: 130 ms), whatever the data's size; beyond this the join's cost, paid
only as the query runs, is the better bet for data of any size.
"""


def nearest_distances(
    points: nw.LazyFrame[Any],
    centroids: nw.LazyFrame[Any],
    *,
    keep: Sequence[str],
    on: Sequence[str],
    features: Sequence[str],
    weight: nw.Expr | None,
    total: str,
    distance: str,
) -> nw.LazyFrame[Any]:
    """Each point's Euclidean ``distance`` to the nearest of the ``centroids`` of its partition.

    ``points`` hold ``keep`` (the partition ``on`` among them) and the Float64 ``features``;
    ``centroids`` hold ``on`` and ``features``. A row of the result has ``keep``, ``distance``
    and ``total``, the sum of ``weight`` (None: 1) over the points it stands for: one point, or
    all the points with the same ``keep`` and coordinates. Each squared distance is the sum
    over the features, in their order, of (x − c)·(x − c), so both forms below give the same
    bits.

    On DuckDB with one partition the centroids are a small table in memory (``Source.align``
    made it): they are read as the call is built and written into the query as literals, each
    point's squared distances in one projection and ``least`` keeping the nearest (1,000,000
    points × 10 features × 10 centroids: social_fairness_ratio's query without its checks ran
    in 0.17 s, against 0.42 s with the join). Otherwise the points are joined with the
    centroids of their partition and each keeps its minimum: identical points share their
    distance, so they are first collapsed to distinct (``keep``, coordinates), and the minimum
    needs no row id (which would need an ordered window, a single-partition sort on Spark).
    """
    written = _written_centroids(centroids, on, features)
    if written is not None:
        import duckdb  # noqa: PLC0415 (an optional engine)

        one = nw.lit(1, nw.Int64) if weight is None else weight
        rows = points.select(*keep, *features, one.alias(total)).to_native()
        nearest = duckdb.SQLExpression(f"sqrt({written})").alias(distance)
        kept = [duckdb.ColumnExpression(c) for c in [*keep, total]]
        measured: nw.LazyFrame[Any] = nw.from_native(rows.select(*kept, nearest))
        return measured
    cs = [f"__fa_c{j}" for j in range(len(features))]
    summed = nw.len() if weight is None else weight.sum()
    collapsed = points.group_by([*keep, *features]).agg(summed.alias(total))
    pairs = collapsed.join(
        centroids.select(*on, *(nw.col(x).alias(c) for x, c in zip(features, cs, strict=True))),
        on=list(on),
        how="inner",
    )
    squared = functools.reduce(
        operator.add,
        (
            (nw.col(x) - nw.col(c)) * (nw.col(x) - nw.col(c))
            for x, c in zip(features, cs, strict=True)
        ),
    )
    return (
        pairs.with_columns(squared.alias(distance))
        .group_by([*keep, *features])
        .agg(nw.col(distance).min(), nw.col(total).max())
        .select(*keep, nw.col(total), nw.col(distance).sqrt())
    )


def _written_centroids(
    centroids: nw.LazyFrame[Any], on: Sequence[str], features: Sequence[str]
) -> str | None:
    """The nearest squared distance to ``centroids`` as DuckDB SQL with them as literals.

    None where the centroids are not written in: another engine, several partitions, more
    than :data:`_LITERAL_TERMS` terms, or a centroid that is not finite (its check fails
    when the result is read, and the join keeps the query as it was).
    """
    if centroids.implementation is not nw.Implementation.DUCKDB or hashed_keys(on):
        return None
    values = centroids.select(*features).collect(backend="polars").to_numpy()
    if not 0 < values.size <= _LITERAL_TERMS or not np.isfinite(values).all():
        return None
    # repr writes the shortest text that reads back as the same double; DuckDB reads it so
    squares = (
        " + ".join(
            f"(({x} - {v!r}) * ({x} - {v!r}))"
            for x, v in zip(map(duckdb_name, features), map(float, row), strict=True)
        )
        for row in values
    )
    return f"least({', '.join(squares)})"


def _ordered_by(expr: nw.Expr, partition: Sequence[str], rank: str) -> nw.Expr:
    """``expr`` as a window over ``partition`` (the constant key aside), ordered by ``rank``."""
    keys = hashed_keys(partition)
    return expr.over(*keys, order_by=rank) if keys else expr.over(order_by=rank)


def order_within(frame: nw.LazyFrame[Any], rank: str, partition: Sequence[str]) -> nw.Expr:
    """Each row's 1-based order by ``rank`` within ``partition`` (Int64).

    The values of ``rank`` must be distinct within a partition (a check of the caller's).
    Polars and DuckDB rank them per partition, cheaper than a running count. Spark counts the
    rows so far in a window ordered by ``rank``: the window of :func:`_sums_along`, so that the
    two share one sort (a rank sorts nulls last, an ordered window first, and Spark sorts the
    rows again for a window whose order differs only so).
    """
    if frame.implementation is not nw.Implementation.PYSPARK:
        ordinal = nw.col(rank).rank(method="ordinal")
        keys = hashed_keys(partition)
        return (ordinal.over(*keys) if keys else ordinal).cast(nw.Int64)
    ones = (~nw.col(rank).is_null()).cast(nw.Int64)  # a null position fails a check
    return _ordered_by(ones.cum_sum(), partition, rank).cast(nw.Int64)


def sum_before(expr: nw.Expr, partition: Sequence[str], rank: str) -> nw.Expr:
    """The sum of ``expr`` over the rows before each row of its partition, in ``rank`` order.

    The ranks must be distinct within a partition (a check of the caller's). A window ordered
    by ``rank`` on every engine.
    """
    return _ordered_by(expr.cum_sum(), partition, rank) - expr


def _sums_along(
    frame: nw.LazyFrame[Any],
    terms: Mapping[str, nw.Expr],
    partition: Sequence[str],
    *,
    order: str,
    rank: str,
    running: str,
) -> tuple[nw.LazyFrame[Any], nw.LazyFrame[Any] | None]:
    """``frame`` with ``{running}_before``, and the terms' totals where a table gives them.

    ``terms`` (name → expression) are functions of ``order`` alone, a row's 1-based order in
    its partition in ``rank`` order; the orders of a partition are 1 … n. ``{running}_before``
    is the sum of the term ``running`` over the rows before each row, orders 1 … i − 1.

    Polars and DuckDB compute the terms over the distinct orders only (a small table): per
    order i, each term's sum over orders 1 … i (named as the term) and the running term's
    before i, joined back on the order. The table is returned: its row of order n holds a
    partition's totals. On 10M rows, computing the terms per row and summing them cost a
    sixth of NDKL's time on Polars; a window ordered within every partition took 5.7 s against
    3.3 s. Spark sorts for its windows anyway: the terms become row columns, the running sum
    shares the sort of the order's own window (the table would read the rows again), no table
    is returned, and the caller sums the term columns per partition.
    """
    before = f"{running}_before"
    if frame.implementation is nw.Implementation.PYSPARK:
        rows = frame.with_columns(*(term.alias(name) for name, term in terms.items()))
        summed = _ordered_by(nw.col(running).cum_sum(), partition, rank)
        return rows.with_columns((summed - nw.col(running)).alias(before)), None
    frame = cached(frame)  # read by the table and by the join
    table = (
        _orders(frame, partition, order)
        .with_columns(*(term.alias(name) for name, term in terms.items()))
        .with_columns(
            *(nw.col(name).cum_sum().over(order_by=order) for name in terms),
            (nw.col(running).cum_sum().over(order_by=order) - nw.col(running)).alias(before),
        )
    )
    return frame.join(table.select(order, before), on=order, how="left"), table


_WINDOWS = (93, 60, 27)
"""The scales 2^S of :func:`exact_sums`' fixed-point terms. A group whose largest magnitude
scales into [2^53, 2^86) under one of them is summed in it: [2^-40, 2^-7), [2^-7, 2^26) and
[2^26, 2^59) (9.1e-13 to 5.8e17)."""

_FIXED = (nw.Implementation.POLARS, nw.Implementation.DUCKDB)


def exact_sums(
    frame: nw.LazyFrame[Any],
    keys: Sequence[str],
    columns: Sequence[str],
    *,
    also: Written | None = None,
    floats: Sequence[str] | None = None,
) -> nw.LazyFrame[Any]:
    """Per ``keys``, each column of ``columns`` summed (named as the column), with ``also``.

    ``also`` writes further aggregations for either namespace (``lambda ns: [ns.len()]``):
    the whole aggregation is built in Polars' own expressions on Polars
    (:func:`~frameaudit._engine.native.aggregated`).

    A float sum depends on the order of its terms, and Polars and DuckDB keep none: they add
    partial sums in the order their threads finish, and a grouped result comes out in hash
    order, so that the next sum meets its rows in another order (a report's last digits
    changed from run to run). Here a float column is summed in fixed point too: each term
    times 2^S, cast to Int128 (its fraction dropped) and added exactly, for each scale S of
    :data:`_WINDOWS`. A group takes the scale that puts its largest magnitude in [2^53, 2^86)
    and its total rounded once to Float64: the same bits in any order, within n·2^-53 of its
    largest term (the bound of a float sum). A group outside every window (its largest
    magnitude outside 9.1e-13 … 5.8e17) keeps its float sum, and so does one holding a NaN or
    an infinity (the float sum is then NaN or infinite in any order). Integer columns are
    summed as they are, exactly. Every step is per row or per group: nothing waits for the
    whole column (one scale read from the column's largest value held the rows in Polars'
    streaming engine: EXP on 10^8 rows from Parquet peaked at 3.2 GiB, NDKL on 10^7 at 1.5
    against 1.0). Spark (whose order its partitions fix) and Dask sum floats as they do.

    ``floats``: the float columns among ``columns``, where the caller knows them (the schema
    of a long plan costs a tenth of a millisecond or more to resolve); else from the schema.
    """
    if frame.implementation not in _FIXED or not columns:
        floats = []
    elif floats is None:
        schema = frame.collect_schema()
        floats = [c for c in columns if schema[c].is_float()]
    floats = list(floats)

    def others(ns: Any) -> list[Any]:  # the columns summed as they are, and ``also``
        summed = [ns.col(c).sum() for c in columns if c not in floats]
        return summed + list(also(ns) if also else [])

    if not floats:
        return aggregated(frame, keys, others)
    written = _fixed_point(tuple(floats), namespace_of(frame) is pl)
    scaled = native_step(frame, "with_columns", written.scaled)
    summed = aggregated(scaled, keys, lambda ns: [*others(ns), *written.sums])
    return native_step(summed, "with_columns", written.totals).drop(*written.helpers)


class _FixedPoint(NamedTuple):
    """:func:`exact_sums`' expressions for some float columns, in one namespace."""

    scaled: tuple[Any, ...]
    """Per row: each column's fixed-point term at each scale of :data:`_WINDOWS` (Int128)."""
    sums: tuple[Any, ...]
    """Per group: the terms' sums, the float sums and each column's largest magnitude."""
    totals: tuple[Any, ...]
    """Per group: each column's total, from the scale its largest magnitude falls in."""
    helpers: tuple[str, ...]
    """The columns the totals are computed from."""


@functools.lru_cache(maxsize=256)
def _fixed_point(floats: tuple[str, ...], on_polars: bool) -> _FixedPoint:
    """The expressions of :func:`exact_sums` for ``floats``, in Polars' own or narwhals'.

    Built once per call shape (expressions are immutable): the dozens of literals they hold
    cost a fifth of a small call's plan to build anew each time.
    """
    ns = pl if on_polars else nw
    int128 = pl.Int128 if on_polars else nw.Int128()

    def term(i: int, j: int) -> str:
        return f"__fa_i{i}_{j}"

    def finite(column: str) -> Any:  # DuckDB's clip already takes NaN to the bound
        value = ns.col(column)
        return value.fill_nan(0.0) if on_polars else value

    scaled = tuple(
        (finite(c) * 2.0**scale)
        .clip(-(2.0**86), 2.0**86)  # beyond it the group is outside the window
        .cast(int128)
        .alias(term(i, j))
        for i, c in enumerate(floats)
        for j, scale in enumerate(_WINDOWS)
    )
    terms = tuple(term(i, j) for i in range(len(floats)) for j in range(len(_WINDOWS)))
    maxes = tuple(f"__fa_m{i}" for i in range(len(floats)))
    sums = (
        *(ns.col(t).sum() for t in terms),
        *(ns.col(c).sum() for c in floats),
        *(ns.col(c).abs().max().alias(m) for c, m in zip(floats, maxes, strict=True)),
    )
    totals = tuple(
        _total(
            ns,
            c,
            chosen=[_in_window(ns.col(maxes[i]), scale) for scale in _WINDOWS],
            summed=[ns.col(term(i, j)) for j in range(len(_WINDOWS))],
        )
        for i, c in enumerate(floats)
    )
    return _FixedPoint(scaled, sums, totals, maxes + terms)


def _total(ns: Any, column: str, *, chosen: Sequence[Any], summed: Sequence[Any]) -> Any:
    """The total of the float column ``column`` from its sums in fixed point, in ``ns``.

    Per window j of :data:`_WINDOWS`: ``chosen[j]``, whether the group's terms are at its
    scale, and ``summed[j]``, their Int128 sum there. The total is that sum times 2^-scale,
    rounded once to Float64 (the windows do not overlap); outside every window, or where the
    float sum (the column itself) is NaN or infinite, it is the float sum.
    """
    total = ns.col(column)
    for inside, exact, scale in zip(chosen, summed, _WINDOWS, strict=True):
        rounded = exact.cast(ns.Float64) * 2.0**-scale
        total = ns.when(ns.col(column).is_finite() & inside).then(rounded).otherwise(total)
    return total.alias(column)


def scaled_terms(
    frame: nw.LazyFrame[Any], keys: Sequence[str], floats: Sequence[str]
) -> tuple[nw.LazyFrame[Any], list[str], list[str]]:
    """``frame`` with each column of ``floats`` also in fixed point, at one scale per ``keys``.

    For sums of integer multiples of the rows (a bootstrap's replicate sums: a unit's sum
    times the number of times a replicate draws it), added by :func:`scaled_sums`: a term is
    the value times 2^S cast to Int128 (its fraction dropped), computed once per row here, and
    its multiples and their sums stay exact integers. The scale is the window of
    :data:`_WINDOWS` that puts the largest magnitude among the rows of the same ``keys`` in
    [2^53, 2^86); its index (−1 outside every window) is kept beside the term. Against
    :func:`exact_sums` of the multiplied rows, this is one Int128 sum per column instead of
    three, and no float → Int128 cast per multiplied row.

    Returns the frame, the columns to multiply (the terms) and the columns to keep as they are
    (the windows); on an engine that keeps float sums (:data:`_FIXED`) the frame as it is.
    """
    if frame.implementation not in _FIXED or not floats:
        return frame, [], []
    on_polars = frame.implementation is nw.Implementation.POLARS
    hashed = hashed_keys(keys)

    def written(ns: Any) -> list[Any]:
        int128 = pl.Int128 if on_polars else nw.Int128()
        columns = []
        for c in floats:
            value = ns.col(c).fill_nan(0.0) if on_polars else ns.col(c)
            largest = ns.col(c).abs().max()
            if hashed:
                largest = largest.over(hashed) if on_polars else largest.over(*hashed)
            window, term = ns.lit(-1, dtype=ns.Int8), ns.lit(0).cast(int128)
            for j, scale in reversed(list(enumerate(_WINDOWS))):
                inside = _in_window(largest, scale)
                window = ns.when(inside).then(ns.lit(j, dtype=ns.Int8)).otherwise(window)
                term = ns.when(inside).then((value * 2.0**scale).cast(int128)).otherwise(term)
            columns += [term.alias(_term(c)), window.alias(_window(c))]
        return columns

    scaled = native_step(frame, "with_columns", written)
    return scaled, [_term(c) for c in floats], [_window(c) for c in floats]


def scaled_sums(
    frame: nw.LazyFrame[Any], keys: Sequence[str], columns: Sequence[str], floats: Sequence[str]
) -> nw.LazyFrame[Any]:
    """Per ``keys``, each of ``columns`` summed: the ``floats`` from their :func:`scaled_terms`.

    ``keys`` refine the keys the terms were scaled per (each group holds one scale). A float
    total is its terms' exact sum rounded once to Float64: the same bits in any order; a
    group outside every window, or whose float sum is NaN or infinite, keeps its float sum.
    """
    if frame.implementation not in _FIXED or not floats:
        return exact_sums(frame, keys, columns, floats=[])

    def sums(ns: Any) -> list[Any]:
        summed = [ns.col(c).sum() for c in columns]
        terms = [ns.col(_term(c)).sum() for c in floats]
        return [*summed, *terms, *(ns.col(_window(c)).max() for c in floats)]

    def totals(ns: Any) -> list[Any]:
        windows = range(len(_WINDOWS))
        return [
            _total(
                ns,
                c,
                chosen=[ns.col(_window(c)) == j for j in windows],
                summed=[ns.col(_term(c))] * len(_WINDOWS),
            )
            for c in floats
        ]

    summed = native_step(aggregated(frame, keys, sums), "with_columns", totals)
    return summed.drop(*(_term(c) for c in floats), *(_window(c) for c in floats))


def _in_window(magnitude: Any, scale: int) -> Any:
    """Whether a largest ``magnitude`` times 2^``scale`` lies in [2^53, 2^86) (either namespace)."""
    return (magnitude * 2.0**scale).is_between(2.0**53, 2.0**86, "left")


def _term(column: str) -> str:
    return f"{column}__fa_term"


def _window(column: str) -> str:
    return f"{column}__fa_window"


def exact_means(
    frame: nw.LazyFrame[Any],
    keys: Sequence[str],
    columns: Sequence[str],
    *,
    also: Written | None = None,
    spread: bool = False,
) -> nw.LazyFrame[Any]:
    """Per ``keys``, the mean of each column (nulls skipped, null when all are), with ``also``.

    From :func:`exact_sums`, so that a mean has the same bits whatever the row order. With
    ``spread``, also each column's standard deviation (ddof 1, null below two values) in
    ``{column}__std``: the sum of squared deviations from the exact mean, summed exactly.
    """
    columns, keys = list(columns), list(keys)

    def counted(ns: Any) -> list[Any]:
        counts = [ns.col(c).count().alias(f"__fa_n{i}") for i, c in enumerate(columns)]
        return counts + list(also(ns) if also else [])

    floats = native_step(
        frame, "with_columns", lambda ns: [ns.col(c).cast(ns.Float64) for c in columns]
    )
    if spread:
        # read twice (the sums, then the squared deviations): Polars' streaming engine
        # computed the plan below twice (the repro summary at 200 runs: 7.1 s, 4.5 s cached)
        floats = cached(floats)
    summed = exact_sums(floats, keys, columns, also=counted, floats=columns)

    def divided(ns: Any) -> list[Any]:
        count = [ns.col(f"__fa_n{i}") for i in range(len(columns))]
        return [
            ns.when(n > 0).then(ns.col(c) / n).alias(c) for c, n in zip(columns, count, strict=True)
        ]

    means = native_step(summed, "with_columns", divided)
    if not spread:
        return means.drop(*(f"__fa_n{i}" for i in range(len(columns))))
    hashed = hashed_keys(keys)
    centre = means.select(*hashed, *(nw.col(c).alias(f"__fa_m{i}") for i, c in enumerate(columns)))
    squares = joined_on(floats, centre, hashed).select(
        *keys,
        *(
            ((nw.col(c) - nw.col(f"__fa_m{i}")) ** 2).alias(f"{c}__std")
            for i, c in enumerate(columns)
        ),
    )
    spreads = exact_sums(squares, keys, [f"{c}__std" for c in columns])
    spreads = spreads.select(*hashed, *(f"{c}__std" for c in columns))
    return (
        joined_on(means, spreads, hashed)
        .with_columns(
            nw.when(nw.col(f"__fa_n{i}") > 1)
            .then((nw.col(f"{c}__std") / (nw.col(f"__fa_n{i}") - 1)).sqrt())
            .alias(f"{c}__std")
            for i, c in enumerate(columns)
        )
        .drop(*(f"__fa_n{i}" for i in range(len(columns))))
    )


# --- screens and fast paths on Polars ----------------------------------------------------------

PROVED = "__fa_proved"
"""The column of the one-row proof of :func:`proven_or_exact`."""
_RUN = "__fa_run"
"""Per row of :func:`_runs_along`: its run of rows is its partition's ranks 1 … n in order."""
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
    engines have no row order: the frame comes back unmarked, with no column marked. Where
    ``partition`` holds the constant :data:`~frameaudit._expr.WHOLE`, the frame gets that
    column too (:func:`~frameaudit._expr.partitioned`), on Polars in the same step (a step
    of its own through narwhals was a twentieth of a small call).
    """
    whole = WHOLE in partition
    if frame.implementation is not nw.Implementation.POLARS:
        return partitioned(frame, []) if whole else frame, []
    native: pl.LazyFrame = frame.to_native()
    outer = hashed_keys(partition)
    marks = [
        _follows([*outer, c], strict=True).fill_null(value=False).alias(_mark(partition, c))
        for c in columns
    ]
    constant = [pl.lit(0).alias(WHOLE)] if whole else []
    return stepped(frame, native.with_columns(*constant, *marks)), list(columns)


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
    return stepped(frame, screen)


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
    return stepped(frame, screen)


def _runs_along(
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
    order, each partition's rows together. ``_RUN`` says whether the row's run (its
    partition's rows that came together) has the ranks 1 … n, n its rows, in increasing
    order. Ranks distinct within a partition (a check of the caller's) make every row's
    ``_RUN`` true a proof that each partition came as one run in order: two runs of one
    partition cannot both hold the rank 1.

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
    counted = (pl.col(rank).min() == 1) & (pl.col(rank).max() == pl.len())
    run = (increasing & counted).fill_null(value=False).alias(_RUN)
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
    return nw.from_native(lists.select(*names, *added, _RUN))


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
    :func:`_runs_along` costs per run of rows: NDKL on 10^7 shuffled rows took 80 s so, 29 s
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


_ORDER = "__fa_order"


def per_order(
    frame: nw.LazyFrame[Any],
    partition: Sequence[str],
    rank: str,
    then: Callable[[nw.LazyFrame[Any], nw.Expr], nw.LazyFrame[Any]],
    *,
    in_memory: bool,
) -> nw.LazyFrame[Any]:
    """``then(rows, order)``: a plan over each row's 1-based order by ``rank`` in ``partition``.

    ``then`` must aggregate (its result is small): it receives the rows and the expression of
    their order. The ranks must be distinct within a partition (a check of the caller's).
    Where a partition's ranks are 1 … n, as a log's positions usually are, they are the orders
    and no window is needed. On a lazy Polars input the plan proves that, by one aggregation
    per partition (its smallest and largest rank and its rows), and computes ``then`` on the
    ranks, the ordered window of :func:`order_within` only where the proof fails
    (:func:`proven_or_exact`). Elsewhere the order is the window's.
    """
    ordered = frame.with_columns(order_within(frame, rank, partition).alias(_ORDER))
    exact = then(ordered, nw.col(_ORDER))

    def without_window() -> FastPlan:
        position = nw.col(rank)
        counted = (position.min() == 1) & (position.max().cast(nw.Int64) == nw.len().cast(nw.Int64))
        proof = aggregate(frame, partition, counted.alias(PROVED))
        return FastPlan(then(frame, position), proof.select(nw.col(PROVED).min()))

    return proven_or_exact(exact, without_window, in_memory=in_memory)


def running_along(
    frame: nw.LazyFrame[Any],
    partition: Sequence[str],
    rank: str,
    *,
    order: str,
    counts: Mapping[str, Sequence[str]],
    terms: Mapping[str, nw.Expr],
    running: str,
    keep: Sequence[str],
    then: Callable[
        [nw.LazyFrame[Any], nw.LazyFrame[Any] | None, Sequence[Written]], nw.LazyFrame[Any]
    ],
    in_memory: bool,
) -> nw.LazyFrame[Any]:
    """``then(rows, totals, carried)``: a plan over running counts and sums along partitions.

    ``rows`` are the rows of ``frame`` (its columns ``keep`` and the partition's and the
    counts' keys) with: ``order``, each row's 1-based order by ``rank`` within its partition;
    per ``alias: keys`` of ``counts``, its order among the rows of its partition with its
    ``keys``; the ``terms`` (name → an expression of ``order``); and ``{running}_before``,
    the sum of the term ``running`` over the rows before it. ``totals``, where the engine
    gives it, is the table of :func:`_sums_along`, whose row of order n holds a partition's
    term totals; without it ``then`` sums the rows' terms. ``then`` must aggregate (its result
    is small), and include ``carried`` in each of its aggregations: each (a
    :data:`~frameaudit._engine.native.Written`) is the smallest value of a column of its own
    name, the same whether it aggregates rows or aggregates. The ranks must be distinct within
    a partition (a check of the caller's).

    Where every partition's rows come sorted and its ranks are 1 … n, as a log's usually do,
    one pass along each partition (:func:`_runs_along`) gives the orders, counts and running
    sums, holding one partition at a time; on a lazy Polars input (whose ``frame`` carries the
    marks of :func:`order_marks` for ``rank``) the plan chooses that pass where
    :func:`sorted_screen` finds the rows sorted, and keeps it where the pass proves itself
    (:func:`proven_or_exact`). Elsewhere the orders and counts are ordered windows
    (:func:`order_within`) and the running sums :func:`_sums_along`.
    """
    ordered = frame.with_columns(order_within(frame, rank, partition).alias(order))
    along, totals = _sums_along(ordered, terms, partition, order=order, rank=rank, running=running)
    # the counts last: on Spark their windows share the order's sort
    counted = along.with_columns(
        *(order_within(frame, rank, [*partition, *keys]).alias(a) for a, keys in counts.items())
    )
    exact = then(counted, totals, [])

    def one_pass() -> FastPlan:
        # only the columns the pass carries: each becomes a list per partition
        columns = [*partition, *(k for keys in counts.values() for k in keys), *keep]
        rows = frame.select(*dict.fromkeys(columns), nw.col(rank).cast(nw.Int64).alias(order))
        runs = _runs_along(
            rows.with_columns(terms[running].alias(running)),
            partition,
            order,
            counts=counts,
            sums={running: f"{running}_before"},
        ).with_columns(*(term.alias(name) for name, term in terms.items() if name != running))
        # the proof is carried through the aggregations of ``then``: read from ``runs`` by a
        # branch of its own, it made the streaming engine hold the rows (6.4 GiB at 10^7)
        fast = then(runs, None, [lambda ns: ns.col(_RUN).min()])
        proof = fast.select(nw.col(_RUN).min().alias(PROVED))
        # the pass costs per run of rows: tried only where the rows come sorted
        likely = sorted_screen(frame, partition, {rank: 0}).select(nw.col("sorted0").alias(PROVED))
        return FastPlan(fast.drop(_RUN), proof, likely)

    return proven_or_exact(exact, one_pass, in_memory=in_memory)
