"""Numpy kernels run on the rows of a plan: the batch in, numpy arrays, a frame out.

Two computations are out of a query engine's reach (all-pairs silhouette distances, batched
k-nearest-neighbour retrieval) and a third is much faster in BLAS (nearest-centroid distances);
:mod:`frameaudit._kernels` does them on numpy arrays. A family asks for one by what it means
(:func:`nearest_centroid_sums`, :func:`group_silhouettes`, :func:`nearest_rows`: per partition,
or per query row, the numbers it needs); this module turns the rows of the plan into the
kernel's arrays, splits them by partition, and turns the kernel's numbers back into a frame
that the plan continues from (:func:`run_kernel` says where and when that runs).

Kernels run on in-memory engines only: the other engines would have to ship every row to
this process, which frameaudit never does silently (:func:`require_kernel_engine`). Where a
query can do the work too, the step chooses: :func:`nearest_centroid_sums` is a query on the
other engines, and wherever its sums are weighted or per bootstrap replicate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import numpy.typing as npt
import polars as pl

from frameaudit._engine.convert import Kind, Source
from frameaudit._engine.estimate import Estimation
from frameaudit._engine.plans import nearest_distances
from frameaudit._expr import aggregate, partitioned
from frameaudit._kernels import centroid, knn, silhouette
from frameaudit.exceptions import InvalidValueError, UnsupportedBackendError

__all__ = [
    "NEIGHBOURS",
    "group_silhouettes",
    "nearest_centroid_sums",
    "nearest_rows",
    "require_kernel_engine",
    "run_kernel",
]

Float = npt.NDArray[np.float64]
Index = npt.NDArray[np.intp]

NEIGHBOURS = ("query", "rank", "case", "distance")
"""The columns :func:`nearest_rows` starts its result with."""


def require_kernel_engine(source: Source, metric: str, workaround: str) -> None:
    """Refuse an engine that would have to ship every row to this process for a kernel."""
    if not source.kind.on_polars:
        msg = (
            f"{metric} runs a numpy kernel on all rows at once and is limited to in-memory "
            f"engines (Polars, pandas, pyarrow); got a {source.implementation} frame. "
            f"Workaround: {workaround}"
        )
        raise UnsupportedBackendError(msg)


def run_kernel(
    frame: nw.LazyFrame[Any],
    source: Source,
    kernel: Callable[[pl.DataFrame], pl.DataFrame],
    *,
    keys: Sequence[str],
    outputs: Mapping[str, pl.DataType],
    metric: str,
    workaround: str,
) -> nw.LazyFrame[Any]:
    """Run a numpy kernel on all of ``frame``'s rows (in-memory engines).

    ``kernel`` gets all rows as one Polars DataFrame and returns the ``keys`` columns (with
    their input dtypes) followed by ``outputs``.

    On an in-memory input (Polars DataFrame, pandas, pyarrow) the kernel runs now, in the
    calling thread: its input is collected, the kernel runs, and the plan continues from the
    kernel's result. Inside the plan it would run Python on Polars' thread pool, and that
    deadlocks as soon as another thread holds the GIL while it waits for the same pool (as
    ``DataFrame.to_pandas`` and ``polars.from_pandas`` do). On a Polars LazyFrame it is a batch
    map inside the plan, so that a lazy call reads no data; collecting such a plan while
    another thread makes one of those calls can hit that deadlock (docs: Concepts, "Threads").

    The other engines get an error naming ``workaround``.
    """
    require_kernel_engine(source, metric, workaround)
    native: pl.LazyFrame = frame.to_native()
    rows = None if source.kind is Kind.POLARS_LAZY else native.collect(engine=source.engine())
    given = native.collect_schema() if rows is None else rows.schema
    schema = pl.Schema({**{k: given[k] for k in keys}, **outputs})
    if rows is None:
        return nw.from_native(native.map_batches(kernel, schema=schema))
    computed = kernel(rows)
    assert computed.schema == schema, f"{metric}: the kernel returned {computed.schema}"
    return nw.from_native(computed.lazy())


def _partitions(df: pl.DataFrame, by: list[str]) -> tuple[pl.DataFrame, list[Index]]:
    """The distinct ``by`` values of a kernel's input and the row numbers of each."""
    if not df.height:
        return df.select(by).head(0), []
    if not by:
        return df.select(by).head(1), [np.arange(df.height)]
    code = df.select(pl.struct(by).rank("dense")).to_series().to_numpy()
    order = np.argsort(code, kind="stable")
    bounds = np.flatnonzero(np.diff(code[order])) + 1
    return df[order[np.concatenate(([0], bounds))]].select(by), np.split(order, bounds)


def _per_partition(
    keys: pl.DataFrame, outputs: Mapping[str, tuple[pl.DataType, list[Any]]]
) -> pl.DataFrame:
    """The ``by`` columns of each part followed by the kernel's outputs (name → dtype, values)."""
    values = [pl.Series(name, column, dtype=dtype) for name, (dtype, column) in outputs.items()]
    return pl.DataFrame([*keys.get_columns(), *values])


# --- nearest-centroid distances ----------------------------------------------------------------


def _sum_columns(sums: Mapping[int, tuple[str, str]]) -> dict[str, pl.DataType]:
    """The columns of :func:`nearest_centroid_sums`: each sum (Float64) and count (Int64)."""
    return {
        name: dtype
        for pair in sums.values()
        for name, dtype in zip(pair, (pl.Float64(), pl.Int64()), strict=True)
    }


def nearest_centroid_sums(
    points: nw.LazyFrame[Any],
    centroids: nw.LazyFrame[Any],
    estimation: Estimation,
    *,
    code: str,
    features: list[str],
    sums: Mapping[int, tuple[str, str]],
    metric: str,
    workaround: str,
) -> nw.LazyFrame[Any]:
    """Per estimate: how far the points of each code lie from their nearest centroid.

    ``points`` hold the ``estimation``'s units (its partition among them), the integer
    ``code`` of each point (0 up to the largest code in ``sums``) and the Float64
    ``features``; ``centroids`` hold the ``by`` columns and ``features``. ``sums`` maps a
    code to the names of two result columns: the sum of the Euclidean distances from its
    points to the nearest centroid of their partition (Float64; null when the partition has
    no centroid) and the number of those points, each counted with its unit weight (an
    integer without weights). A row per estimate, the partition columns first.

    On Polars, pandas and pyarrow without weights or a bootstrap: a BLAS kernel on the rows,
    O(N·k·d) (:func:`run_kernel` says where it runs), whose sums are per partition (a
    partition without points has no row). Otherwise a query (:func:`~frameaudit._engine.plans.
    nearest_distances`), its sums per estimate from the estimation (in every replicate of a
    bootstrap), every estimate with a row.
    """
    source = estimation.source
    if not (source.kind.on_polars and estimation.weight is None and estimation.bootstrap is None):
        keys = estimation.partition
        units = keys if estimation.bootstrap is None else estimation.units
        weighted = (nw.col("__fa_d") * nw.col("__fa_w")).alias("__fa_d")
        per_point = nearest_distances(
            points.filter(nw.col(code) > 0),
            partitioned(centroids, estimation.by),
            keep=[*units, code],
            on=keys,
            features=features,
            weight=None if estimation.weight is None else estimation.unit_weight(),
            total="__fa_w",
            distance="__fa_d",
        ).select(*units, code, weighted, "__fa_w")
        # one distance column summed exactly per code, then the codes' sums side by side: a
        # column a code took 0.03 s more of social_fairness_ratio's 0.14 s query on DuckDB at
        # 1,000,000 points (checks left out), for three Int128 sums a column (``exact_sums``)
        per_code = estimation.summed(per_point, [code], ["__fa_d", "__fa_w"])
        side_by_side = aggregate(
            per_code,
            estimation.estimates,
            *(
                nw.when(nw.col(code) == value).then(nw.col(column)).max().alias(name)
                for value, pair in sums.items()
                for column, name in zip(("__fa_d", "__fa_w"), pair, strict=True)
            ),
        )
        # every estimate has a row, also where no point of a code is drawn (null)
        return estimation.grid(points).join(side_by_side, on=estimation.estimates, how="left")
    by = estimation.by
    dtypes = _sum_columns(sums)
    n_labels = max(sums) + 2  # label = code + 1; 0 for a centroid

    def batch(df: pl.DataFrame) -> pl.DataFrame:
        keys, parts = _partitions(df, by)
        codes = df[code].to_numpy()
        # One row per feature: each point's coordinates are a column (contiguous per feature).
        xt = np.ascontiguousarray(df.select(features).to_numpy().T)
        values: dict[str, list[Any]] = {name: [] for name in dtypes}
        kept = []
        for index, rows in enumerate(parts):
            own = codes[rows] if by else codes
            if not (own >= 0).any():
                continue  # the centroids of a partition that has no point
            kept.append(index)
            centres = xt[:, rows[own < 0]].T
            # Every row is measured (rows of other codes and the centroids too): cheaper than
            # gathering the points of the summed codes into a new array.
            labels = (own + 1).astype(np.intp)
            total = (
                centroid.nearest_centroid_sums(xt[:, rows] if by else xt, centres, labels, n_labels)
                if centres.shape[0]
                else None
            )
            counts = np.bincount(labels, minlength=n_labels)
            for value, (sum_name, count_name) in sums.items():
                values[sum_name].append(None if total is None else float(total[value + 1]))
                values[count_name].append(int(counts[value + 1]))
        return _per_partition(
            keys[kept] if by else keys, {name: (dtypes[name], values[name]) for name in values}
        )

    point_rows = points.select(*by, code, *features)
    # the centroids join the points' batch as rows of code −1
    code_dtype = point_rows.collect_schema()[code]
    centre_rows = centroids.with_columns(nw.lit(-1).cast(code_dtype).alias(code)).select(
        *by, code, *features
    )
    summed = run_kernel(
        nw.concat([point_rows, centre_rows], how="vertical"),
        source,
        batch,
        keys=by,
        outputs=dtypes,
        metric=metric,
        workaround=workaround,
    )
    return partitioned(summed, by)


# --- silhouettes -----------------------------------------------------------------------------

# the kernel's results per partition, and their dtypes
_SILHOUETTE_FIELDS = {
    "mean_a": pl.Float64(),
    "mean_b": pl.Float64(),
    "std_error": pl.Float64(),
    "n_sampled": pl.Int64(),
}


def _priority(df: pl.DataFrame, seed: int) -> npt.NDArray[np.uint64]:
    """A random priority per row that depends on the rows' content and the seed, not their order.

    A seeded hash of each row's content, identical rows numbered (after a sort by the hash,
    far cheaper than a window over a million groups; which of two identical rows gets which
    number changes nothing), hashed again with their number.
    """
    content = df.hash_rows(seed=seed).to_numpy()
    order = np.argsort(content)
    ordered = content[order]
    first = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    copy = np.empty(content.size, dtype=np.int64)
    copy[order] = np.arange(content.size) - np.repeat(first, np.diff(first, append=content.size))
    return pl.DataFrame({"hash": content, "copy": copy}).hash_rows(seed=seed).to_numpy()


def group_silhouettes(
    points: nw.LazyFrame[Any],
    source: Source,
    *,
    by: list[str],
    cluster: str,
    code: str,
    features: list[str],
    sample: int | None,
    seed: int,
    progress: bool | None,
    columns: Mapping[str, str],
    metric: str,
    workaround: str,
) -> nw.LazyFrame[Any]:
    """Per ``by`` partition: the mean silhouette of the points of code 1 and of code 2.

    Each point's silhouette is measured against every point of its partition (Euclidean, on
    the Float64 ``features``, clusters from ``cluster``); ``code`` says which points are
    averaged (1 and 2; 0: measured against, not averaged). With ``sample``, a stratified
    sample of about that many points per code is evaluated (see
    :func:`frameaudit._kernels.silhouette.group_silhouette`), drawn by a priority that depends
    on the rows and ``seed`` only. ``columns`` names the result columns after the kernel's
    fields ``mean_a``, ``mean_b`` (Float64, null for a code without points), ``std_error``
    (Float64) and ``n_sampled`` (Int64), in the order wanted.
    """

    def batch(df: pl.DataFrame) -> pl.DataFrame:
        keys, parts = _partitions(df, by)
        x = df.select(features).to_numpy()
        groups = df[code].to_numpy()
        # Cluster codes 0 .. k−1 per partition; a null label (reported by the checks) joins one.
        dense = pl.col(cluster).rank("dense")
        labels = (
            df.select(dense.over(by) if by else dense)
            .to_series()
            .fill_null(1)
            .to_numpy()
            .astype(np.intp)
            - 1
        )
        priority = None if sample is None else _priority(df, seed)
        results = [
            silhouette.group_silhouette(
                x if len(parts) == 1 else x[rows],
                labels[rows],
                groups[rows],
                sample=sample,
                priority=None if priority is None else priority[rows],
                progress=progress,
                label=metric,
            )
            for rows in parts
        ]
        return _per_partition(
            keys,
            {
                name: (_SILHOUETTE_FIELDS[field], [getattr(r, field) for r in results])
                for field, name in columns.items()
            },
        )

    return run_kernel(
        points.select(*by, cluster, code, *features),
        source,
        batch,
        keys=by,
        outputs={name: _SILHOUETTE_FIELDS[field] for field, name in columns.items()},
        metric=metric,
        workaround=workaround,
    )


# --- nearest neighbours ----------------------------------------------------------------------

_ROW = "__fa_row"
_SIDE = "__fa_side"
_QUERY = "__fa_query"  # the query's id (or position)
_CASE = "__fa_case"  # the training row's id (or position)
_LABEL = "__fa_label"


def _carried(i: int) -> str:
    return f"__fa_carry{i}"


def _as_array(frame: pl.DataFrame, features: list[str], name: str) -> Float:
    """The feature columns as a float64 array; raise on null, NaN or infinite values."""
    # row-major: the kernel gathers whole rows
    values = frame.select(features).to_numpy(order="c").astype(np.float64, copy=False)
    finite = np.isfinite(values)  # nulls are NaN here
    if finite.all():
        return values
    column = features[int(np.flatnonzero(~finite.all(axis=0))[0])]
    series = frame[column]
    bad = series.is_null() | ~series.is_finite().fill_null(value=True)
    msg = (
        f"features: column {column!r} of {name} holds {int(bad.sum())} null, NaN or infinite "
        f"value(s) (e.g. {series.filter(bad)[0]!r}); distances need finite numbers"
    )
    raise InvalidValueError(msg)


def _power_of_two(*arrays: Float) -> float:
    """The power of two nearest above the largest magnitude in ``arrays`` (1.0 for all zeros)."""
    largest = max((float(np.abs(a).max()) for a in arrays if a.size), default=0.0)
    # 2**1023 is the largest power of two a float holds
    return math.ldexp(1.0, min(math.frexp(largest)[1], 1023)) if largest > 0 else 1.0


def _own_positions(train_rows: pl.DataFrame, query_rows: pl.DataFrame) -> Index:
    """For each query, the position of the training row whose id is the query's, or -1."""
    position = pl.DataFrame(
        {_CASE: train_rows[_CASE], "__fa_at": np.arange(train_rows.height, dtype=np.int64)}
    )
    own = query_rows.select(pl.col(_QUERY).alias(_CASE)).join(
        position, on=_CASE, how="left", maintain_order="left"
    )
    positions: Index = own["__fa_at"].fill_null(-1).to_numpy().astype(np.int64, copy=False)
    return positions


def _stacked(
    train: nw.LazyFrame[Any],
    queries: nw.LazyFrame[Any],
    *,
    features: list[str],
    id: str | None,
    label: str,
    carry: list[str],
) -> pl.LazyFrame:
    """Training rows (side 0) above query rows (side 1): one frame for the kernel's one batch.

    Each row keeps its position, its features as Float64 and its id (or position) as the case
    or the query; training rows carry the label, query rows the ``carry`` columns.
    """
    train_lf: pl.LazyFrame = train.to_native().with_row_index(_ROW)
    query_lf: pl.LazyFrame = queries.to_native().with_row_index(_ROW)
    row = pl.col(_ROW).cast(pl.Int64)
    as_float = [pl.col(c).cast(pl.Float64) for c in features]
    return pl.concat(
        [
            train_lf.select(
                row,
                *as_float,
                pl.lit(0, dtype=pl.Int8).alias(_SIDE),
                (pl.col(id) if id is not None else row).alias(_CASE),
                pl.col(label).alias(_LABEL),
            ),
            query_lf.select(
                row,
                *as_float,
                pl.lit(1, dtype=pl.Int8).alias(_SIDE),
                (pl.col(id) if id is not None else row).alias(_QUERY),
                *(pl.col(c).alias(_carried(i)) for i, c in enumerate(carry)),
            ),
        ],
        how="diagonal",
    )


def nearest_rows(
    train: nw.LazyFrame[Any],
    queries: nw.LazyFrame[Any],
    source: Source,
    *,
    features: list[str],
    label: str,
    id: str | None,
    carry: list[str],
    k: int,
    standardize: bool,
    exclude_self: bool,
    progress: bool | None,
    metric: str,
    workaround: str,
) -> nw.LazyFrame[Any]:
    """The ``k`` nearest ``train`` rows of every ``queries`` row (exact Euclidean distance).

    One row per (query, neighbour): :data:`NEIGHBOURS` (``query``, the query's ``id`` or
    0-based position; ``rank``, Int64 from 1; ``case``, the training row's id or position;
    ``distance``, Float64), then ``train``'s ``label`` and ``queries``' ``carry`` columns.
    ``standardize``: in the space standardised on ``train``; ``exclude_self``: leave out the
    training row whose ``id`` is the query's. Ties in distance go to the lower training row.
    Both frames come from :func:`~frameaudit._engine.convert.to_engine` on an in-memory
    engine; null, NaN or infinite features raise when the result is computed.
    """
    query, rank, case, distance = NEIGHBOURS

    def batch(frame: pl.DataFrame) -> pl.DataFrame:
        # the output rows are built here, by position, rather than by joins in the plan;
        # training rows sorted by position, so that ties in distance go to the lower one
        train_rows = frame.filter(pl.col(_SIDE) == 0).sort(_ROW)
        query_rows = frame.filter(pl.col(_SIDE) == 1)
        train_x = _as_array(train_rows, features, "train")
        query_x = _as_array(query_rows, features, "queries")
        # Scaled by a power of two to magnitudes near 1 (exact): squares of coordinates near
        # 1e200 would overflow and those near 1e-300 underflow. Distances scale back exactly;
        # standardised coordinates do not change.
        unit = _power_of_two(train_x, query_x)
        train_x, query_x = train_x / unit, query_x / unit
        if standardize:
            train_x, query_x = knn.standardize(train_x, query_x)
            unit = 1.0
        exclude = _own_positions(train_rows, query_rows) if exclude_self else None
        indices, distances = knn.nearest(
            train_x, query_x, k, exclude=exclude, progress=progress, label=metric
        )
        with np.errstate(over="ignore"):  # a distance beyond the float range is +inf
            distances = distances * unit
        of_query = np.repeat(np.arange(query_rows.height), k)
        found = indices.ravel()
        return pl.DataFrame(
            [
                query_rows[_QUERY].gather(of_query).alias(query),
                pl.Series(rank, np.tile(np.arange(1, k + 1, dtype=np.int64), query_rows.height)),
                train_rows[_CASE].gather(found).alias(case),
                pl.Series(distance, distances.ravel()),
                train_rows[_LABEL].gather(found).alias(label),
                *(query_rows[_carried(i)].gather(of_query).alias(c) for i, c in enumerate(carry)),
            ]
        )

    require_kernel_engine(source, metric, workaround)
    both = _stacked(train, queries, features=features, id=id, label=label, carry=carry)
    schema = both.collect_schema()
    return run_kernel(
        nw.from_native(both),
        source,
        batch,
        keys=[],
        outputs={
            query: schema[_QUERY],
            rank: pl.Int64(),
            case: schema[_CASE],
            distance: pl.Float64(),
            label: schema[_LABEL],
            **{c: schema[_carried(i)] for i, c in enumerate(carry)},
        },
        metric=metric,
        workaround=workaround,
    )
