"""The engine boundary: the one module that knows which kinds of frame exist.

Every metric turns its input into a narwhals LazyFrame with :func:`to_engine`, builds its result
lazily, and hands it back with :func:`from_engine`, which gives the caller a frame of the kind
they passed in. In-memory data (Polars, pandas, pyarrow) runs on Polars; pandas and pyarrow are
converted through Arrow, keeping only the columns the metric reads. DuckDB, PySpark and the
other lazy backends narwhals knows run natively and come back lazy.

Value checks (nulls, ranges, duplicates, ...) are :class:`~frameaudit._validate.Check` objects:
one-row frames of violation counts. On Polars they are joined into the result's plan and raise
when the result is computed; on the other lazy engines they run as one aggregate query when the
metric is called (only the counts leave the engine).

On in-memory input no Python code runs on Polars' thread pool (see :func:`run_kernel`), so
frameaudit can be called from several threads at once.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import narwhals.stable.v2 as nw
import polars as pl
import pyarrow as pa
from narwhals.dependencies import (
    is_dask_dataframe,
    is_pandas_dataframe,
)

from frameaudit._expr import aggregate
from frameaudit._validate import Check, merge_rules
from frameaudit.exceptions import ColumnNotFoundError, InvalidDtypeError, UnsupportedBackendError

__all__ = [
    "Kind",
    "Source",
    "count_distinct",
    "from_engine",
    "is_frame",
    "lazy_from_arrow",
    "run_kernel",
    "schema_names",
    "shared",
    "to_engine",
]

# measured: below ~a million rows the in-memory engine's lower fixed cost wins (2x on 100k
# rows); above, the streaming engine keeps peak memory lower at the same speed
_STREAMING_FROM_ROWS = 1_000_000

_SUPPORTED = (
    "polars.DataFrame, polars.LazyFrame, pandas.DataFrame, pyarrow.Table, a DuckDB relation, "
    "a PySpark DataFrame, or another frame narwhals supports (Dask for metrics without "
    "ordered windows)"
)


class Kind(enum.Enum):
    """How a frame entered frameaudit, which decides how its result leaves."""

    POLARS_EAGER = "polars eager"
    POLARS_LAZY = "polars lazy"
    PANDAS = "pandas"
    PYARROW = "pyarrow"
    EAGER_OTHER = "other eager"
    LAZY_NATIVE = "native lazy"
    DASK = "dask"

    @property
    def on_polars(self) -> bool:
        """Whether the computation runs on Polars."""
        return self not in (Kind.LAZY_NATIVE, Kind.DASK)


@dataclass(frozen=True)
class Source:
    """A caller's frame as a narwhals LazyFrame, with what is needed to hand a result back."""

    frame: nw.LazyFrame[Any]
    kind: Kind
    implementation: nw.Implementation
    session: Any = None
    rows: int | None = None  # known for eager inputs

    @property
    def in_memory(self) -> bool:
        """Whether the data is an eager frame held in this process (re-reading it is free)."""
        return self.rows is not None

    @property
    def engine(self) -> Literal["in-memory", "auto"]:
        """The Polars engine for an eager input: small inputs skip the streaming set-up cost."""
        small = self.rows is not None and self.rows < _STREAMING_FROM_ROWS
        return "in-memory" if small else "auto"

    def require_ordered_windows(self, metric: str) -> None:
        """Raise the documented error for metrics that need windows ordered by position."""
        if self.kind is Kind.DASK:
            msg = (
                f"{metric} is not supported on Dask: it needs windows ordered by position, "
                "which Dask cannot evaluate lazily. Workaround: run it on Polars "
                "(`polars.from_pandas(ddf.compute())`) or on DuckDB/PySpark."
            )
            raise UnsupportedBackendError(msg)


def schema_names(frame: Any) -> list[str]:
    """The column names of any frame narwhals knows (only the schema is read)."""
    return list(nw.from_native(frame).collect_schema().names())


def is_frame(value: Any) -> bool:
    """Whether ``value`` is a frame of a kind narwhals knows (else a plain value or mapping)."""
    wrapped = nw.from_native(value, pass_through=True)
    return isinstance(wrapped, (nw.DataFrame, nw.LazyFrame))


def _check_columns(available: Sequence[str], columns: Mapping[str, str], frame_name: str) -> None:
    """``columns`` maps each column name to the parameter that named it."""
    present = set(available)
    for column, parameter in columns.items():
        if not isinstance(column, str):
            msg = (
                f"{parameter}={column!r}: expected a column name (str), got {type(column).__name__}"
            )
            raise ColumnNotFoundError(msg)
        if column not in present:
            raise ColumnNotFoundError.build(
                column, parameter=parameter, available=list(available), frame=frame_name
            )


def _in_memory_kind(frame: Any) -> Kind | None:
    """The kind of an in-memory frame that runs on Polars, or None for any other frame."""
    if isinstance(frame, (nw.DataFrame, nw.LazyFrame)):
        return None
    if isinstance(frame, pl.DataFrame):
        return Kind.POLARS_EAGER
    if is_pandas_dataframe(frame):
        return Kind.PANDAS
    if isinstance(frame, pa.Table):
        return Kind.PYARROW
    return None


def _as_polars(frame: Any, kind: Kind, columns: Mapping[str, str]) -> pl.DataFrame:
    """The wanted ``columns`` of an in-memory frame as a Polars DataFrame (through Arrow).

    ``columns`` maps each column to the parameter that named it, for the errors.
    """
    wanted = list(columns)
    if kind is Kind.PYARROW:
        return _table_to_polars(frame.select(wanted))
    if kind is Kind.POLARS_EAGER:
        selected: pl.DataFrame = frame[wanted]
        return selected
    return _from_pandas(frame, columns)


def _from_pandas(frame: Any, columns: Mapping[str, str]) -> pl.DataFrame:
    """The wanted ``columns`` of a pandas frame, whose labels may be repeated or not strings."""
    labels = [str(c) for c in frame.columns]
    positions = []
    for column, parameter in columns.items():
        found = [i for i, label in enumerate(labels) if label == column]
        if len(found) > 1:
            msg = (
                f"{parameter}={column!r}: the pandas frame has {len(found)} columns labelled "
                f"{column!r}; give them distinct names first"
            )
            raise ColumnNotFoundError(msg)
        positions.append(found[0])
    selected = frame.iloc[:, positions]
    selected.columns = list(columns)
    try:
        converted: pl.DataFrame = pl.from_pandas(selected, include_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
        for column, parameter in columns.items():
            try:
                pl.from_pandas(selected[[column]], include_index=False)
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as error:
                msg = (
                    f"{parameter}={column!r}: the pandas column {column!r} (dtype "
                    f"{selected[column].dtype}) cannot be converted to a typed column "
                    f"({type(error).__name__}: {error}); values of mixed types? convert it "
                    f"first, e.g. df[{column!r}].astype(str)"
                )
                raise InvalidDtypeError(msg) from None
        raise
    return converted


def to_engine(frame: Any, columns: Mapping[str, str], *, frame_name: str = "frame") -> Source:
    """Turn ``frame`` into a narwhals LazyFrame holding only ``columns``.

    ``columns`` maps each needed column to the parameter that named it (for error messages).
    Only the schema is read: a lazy frame's data is not touched.
    """
    if isinstance(frame, (nw.DataFrame, nw.LazyFrame)):
        frame = nw.to_native(frame)
    wanted = list(dict.fromkeys(columns))
    if isinstance(frame, pl.LazyFrame):
        _check_columns(frame.collect_schema().names(), columns, frame_name)
        return Source(
            nw.from_native(frame.select(wanted)), Kind.POLARS_LAZY, nw.Implementation.POLARS
        )
    kind = _in_memory_kind(frame)
    if kind is not None:
        names = frame.column_names if kind is Kind.PYARROW else [str(c) for c in frame.columns]
        _check_columns(names, columns, frame_name)
        data = _as_polars(frame, kind, columns)
        return Source(nw.from_native(data.lazy()), kind, nw.Implementation.POLARS, rows=data.height)
    try:
        wrapped = nw.from_native(frame)
    except TypeError:
        type_name = f"{type(frame).__module__}.{type(frame).__name__}"
        msg = f"{frame_name}: unsupported frame type {type_name}; expected {_SUPPORTED}"
        raise UnsupportedBackendError(msg) from None
    _check_columns(wrapped.collect_schema().names(), columns, frame_name)
    implementation = wrapped.implementation
    if isinstance(wrapped, nw.DataFrame):
        table = wrapped.select(wanted).to_arrow()
        return Source(
            _polars_from_arrow(table), Kind.EAGER_OTHER, implementation, rows=table.num_rows
        )
    kind = Kind.DASK if is_dask_dataframe(frame) else Kind.LAZY_NATIVE
    session = getattr(frame, "sparkSession", None)
    return Source(wrapped.select(wanted), kind, implementation, session)


def _table_to_polars(table: pa.Table) -> pl.DataFrame:
    converted = pl.from_arrow(table)
    assert isinstance(converted, pl.DataFrame)  # a Table always converts to a DataFrame
    return converted


def _polars_from_arrow(table: pa.Table) -> nw.LazyFrame[Any]:
    return nw.from_native(_table_to_polars(table).lazy())


def lazy_from_arrow(table: pa.Table, like: Source) -> nw.LazyFrame[Any]:
    """Build a small frame (a mapping, centroids) in the engine of ``like``."""
    if like.kind.on_polars:
        return _polars_from_arrow(table)
    if like.implementation is nw.Implementation.DUCKDB:
        relation: nw.LazyFrame[Any] = nw.from_native(
            _on_connection_of(like.frame.to_native(), table)
        )
        return relation
    eager = nw.from_arrow(table, backend="pyarrow")
    backend: Any = like.implementation
    if like.session is not None:
        return eager.lazy(backend=backend, session=like.session)
    return eager.lazy(backend=backend)


def _on_connection_of(relation: Any, table: pa.Table) -> Any:
    """``table`` as a DuckDB relation on ``relation``'s connection.

    DuckDB combines only relations of one connection, and a relation does not say which one it
    belongs to; a query run from the relation runs on its connection, and DuckDB finds
    ``table`` there by its Python name (a replacement scan), holding it in the relation.
    """
    __frameaudit_table = table  # read by the query below, by its name
    return relation.query("__frameaudit_data", "SELECT * FROM __frameaudit_table")


def shared(frame: nw.LazyFrame[Any]) -> nw.LazyFrame[Any]:
    """Mark a subplan that several branches of a plan read, so that Polars computes it once.

    Polars' common-subplan elimination misses branches that read different columns of the same
    subplan (projection pushdown makes them different plans); an explicit cache does not. The
    other engines plan shared subqueries themselves.
    """
    if frame.implementation is nw.Implementation.POLARS:
        native: pl.LazyFrame = frame.to_native()
        return nw.from_native(native.cache())
    return frame


def align(
    other: Any, like: Source, columns: Mapping[str, str], *, frame_name: str
) -> nw.LazyFrame[Any]:
    """Bring a second frame (a mapping, centroids, an overall ranking) into ``like``'s engine."""
    source = to_engine(other, columns, frame_name=frame_name)
    if source.kind.on_polars and like.kind.on_polars:
        return source.frame
    same_engine = source.implementation == like.implementation
    if same_engine and source.implementation is not nw.Implementation.DUCKDB:
        return source.frame
    if source.kind.on_polars or same_engine:
        # a small frame (a mapping, centroids, an overall ranking); DuckDB joins only
        # relations of one connection, so it is rebuilt on the data's
        table = source.frame.collect().to_arrow()
        return lazy_from_arrow(table, like)
    msg = (
        f"{frame_name}: a {source.implementation} frame cannot be combined with a "
        f"{like.implementation} frame; pass it as an in-memory frame (Polars, pandas, pyarrow) "
        "or a dict"
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

    The other engines would have to ship every row to this process, which frameaudit never
    does silently: they get an error naming ``workaround``.
    """
    if not source.kind.on_polars:
        msg = (
            f"{metric} runs a numpy kernel on all rows at once and is limited to in-memory "
            f"engines (Polars, pandas, pyarrow); got a {source.implementation} frame. "
            f"Workaround: {workaround}"
        )
        raise UnsupportedBackendError(msg)
    native: pl.LazyFrame = frame.to_native()
    rows = None if source.kind is Kind.POLARS_LAZY else native.collect(engine=source.engine)
    given = native.collect_schema() if rows is None else rows.schema
    schema = pl.Schema({**{k: given[k] for k in keys}, **outputs})
    if rows is None:
        return nw.from_native(native.map_batches(kernel, schema=schema))
    computed = kernel(rows)
    assert computed.schema == schema, f"{metric}: the kernel returned {computed.schema}"
    return nw.from_native(computed.lazy())


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


_DIAG_KEY = "__fa_diag_key"
_PRESENT = "__fa_present"


def _prefix(index: int) -> str:
    return f"__fa_c{index}_"


def _combined_checks(checks: Sequence[Check]) -> nw.LazyFrame[Any]:
    """Put the one-row check frames side by side, prefixing the columns of check i.

    On Polars this is built natively: the checks are part of every call, and a native plan
    costs a fraction of the narwhals one.
    """
    frames: list[nw.LazyFrame[Any]] = []
    for check in checks:
        assert check.frame is not None  # rule checks were merged into frame checks
        frames.append(check.frame)
    if all(f.implementation is nw.Implementation.POLARS for f in frames):
        natives = [
            f.to_native().select(pl.all().name.prefix(_prefix(i))) for i, f in enumerate(frames)
        ]
        side_by_side: nw.LazyFrame[Any] = nw.from_native(pl.concat(natives, how="horizontal"))
        return side_by_side
    combined: nw.LazyFrame[Any] | None = None
    for i, frame in enumerate(frames):
        renamed = frame.select(nw.all().name.prefix(_prefix(i)))
        combined = renamed if combined is None else combined.join(renamed, how="cross")
    assert combined is not None
    return combined


def _raise_first(checks: Sequence[Check], row: Mapping[str, Any]) -> None:
    for index, check in enumerate(checks):
        assert check.error is not None
        prefix = _prefix(index)
        own = {k.removeprefix(prefix): v for k, v in row.items() if k.startswith(prefix)}
        error = check.error(own)
        if error is not None:
            raise error


def from_engine(
    result: nw.LazyFrame[Any],
    source: Source,
    *,
    sort_by: Sequence[str] = (),
    checks: Sequence[Check] = (),
) -> Any:
    """Hand ``result`` back as a frame of the kind the caller passed in."""
    sort_by = list(sort_by)
    checks = merge_rules(checks)
    if not source.kind.on_polars:
        if checks:
            rows = _combined_checks(checks).collect().rows(named=True)
            _raise_first(checks, rows[0])
        sorted_result = result.sort(sort_by) if sort_by else result
        return sorted_result.to_native()

    native: pl.LazyFrame = result.to_native()
    if source.kind is Kind.POLARS_LAZY and checks:
        return _attach_checks(native, checks, sort_by)
    if sort_by:
        native = native.sort(sort_by, nulls_last=True)
    if source.kind is Kind.POLARS_LAZY:
        return native
    if not checks:
        return _as_kind(native.collect(engine=source.engine), source)
    # computed together, so that the checks and the result share their scans
    diagnostics, eager = pl.collect_all(
        [_combined_checks(checks).to_native(), native], engine=source.engine
    )
    _raise_first(checks, diagnostics.row(0, named=True))
    return _as_kind(eager, source)


def _as_kind(eager: pl.DataFrame, source: Source) -> Any:
    """An eager Polars result as the caller's in-memory frame kind."""
    if source.kind is Kind.POLARS_EAGER:
        return eager
    if source.kind is Kind.PANDAS:
        return eager.to_pandas(use_pyarrow_extension_array=True)
    if source.kind is Kind.PYARROW:
        return eager.to_arrow()
    backend: Any = source.implementation
    return nw.from_arrow(eager.to_arrow(), backend=backend).to_native()


def _attach_checks(
    native: pl.LazyFrame, checks: Sequence[Check], sort_by: list[str]
) -> pl.LazyFrame:
    """Make the checks part of the plan: they raise when the result is computed.

    The one-row diagnostics frame is on the left of a left join so that an empty result still
    carries the diagnostics to the check.
    """
    schema = native.collect_schema()
    combined: pl.LazyFrame = _combined_checks(checks).to_native()
    flat = combined.collect_schema().names()
    diag = combined.with_columns(pl.lit(0).alias(_DIAG_KEY))
    joined = diag.join(
        native.with_columns(pl.lit(0).alias(_DIAG_KEY), pl.lit(True).alias(_PRESENT)),
        on=_DIAG_KEY,
        how="left",
    )

    def check_and_strip(frame: pl.DataFrame) -> pl.DataFrame:
        if frame.height:
            _raise_first(checks, frame.row(0, named=True))
        out = frame.filter(pl.col(_PRESENT).is_not_null()).drop([*flat, _DIAG_KEY, _PRESENT])
        return out.sort(sort_by, nulls_last=True) if sort_by else out

    return joined.map_batches(check_and_strip, schema=schema)
