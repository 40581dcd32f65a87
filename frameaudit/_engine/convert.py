"""Frames in and out: the one module that knows which kinds of frame exist.

Every metric turns its input into a narwhals LazyFrame with :func:`to_engine`, builds its result
lazily, and hands it back with :func:`from_engine`, which gives the caller a frame of the kind
they passed in. In-memory data (Polars, pandas, pyarrow) runs on Polars; pandas and pyarrow are
converted through Arrow, keeping only the columns the metric reads. DuckDB, PySpark and the
other lazy backends narwhals knows run natively and come back lazy, with the value checks in
their plans (they raise when the result is computed).

A second frame (a mapping, centroids, an overall ranking) joins the data's engine through
:meth:`Source.align`, and small frames the families build from Python values through
:meth:`Source.frame_from_columns`, so that the families never name a frame library. The refusal of
metrics that Dask cannot run is here too (:meth:`Source.refuse_dask`), worded once.
"""

from __future__ import annotations

import enum
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeAlias

import narwhals.stable.v2 as nw
import numpy as np
import polars as pl
import pyarrow as pa
from narwhals.dependencies import (
    is_dask_dataframe,
    is_pandas_dataframe,
)

from frameaudit._engine.checks import (
    Check,
    attach,
    diagnostics,
    guarded,
    merge_rules,
    raise_first,
    unproved,
)
from frameaudit._engine.native import from_polars, namespace_of, native_step
from frameaudit._engine.plans import materialized_shared, sorted_by
from frameaudit.exceptions import (
    ColumnNotFoundError,
    InvalidDtypeError,
    InvalidParameterError,
    UnsupportedBackendError,
    frameaudit_errors,
)

__all__ = [
    "Kind",
    "PolarsExpr",
    "Source",
    "collected",
    "eager",
    "expressions",
    "from_engine",
    "is_bool",
    "is_frame",
    "schema_names",
    "to_engine",
]

PolarsExpr: TypeAlias = pl.Expr
"""A Polars column expression (for the functions that can build one)."""

# measured: below ~a million rows the in-memory engine's lower fixed cost wins (2x on 100k
# rows); above, the streaming engine keeps peak memory lower at the same speed
_STREAMING_FROM_ROWS = 1_000_000

# measured (2026-12-04): Polars' full optimizer costs 0.3-0.5 ms a call, a third of running a
# small metric's plan (EXP on 20 rows: 1.39 against 0.91 ms with the pushdowns only). Its
# common-subplan and -subexpression passes pay from about 10,000 rows (position parity on
# 21,000 rows: 8.0-9.6 CPU ms with them, 10.4-11.4 without; even at 8,400). Pushing
# projections and predicates down stays: without it the 20-row call was slower.
_FULLY_OPTIMIZED_FROM_ROWS = 10_000
_PUSHDOWN_ONLY = pl.QueryOptFlags.none(projection_pushdown=True, predicate_pushdown=True)

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

    def engine(self, replicates: int = 0) -> Literal["in-memory", "auto"]:
        """The Polars engine for an eager input: small inputs skip the streaming set-up cost.

        A bootstrap's plan handles every unit once per replicate (``replicates``, and the point
        estimate): it is as large as that many copies of the input.
        """
        work = self._work(replicates)
        return "in-memory" if work is not None and work < _STREAMING_FROM_ROWS else "auto"

    def optimizations(self, replicates: int = 0) -> pl.QueryOptFlags:
        """Polars' optimizer passes for the plan: on a small eager input, the pushdowns only.

        The passes change how the plan runs, never its result (the same bits: a test).
        """
        work = self._work(replicates)
        if work is not None and work < _FULLY_OPTIMIZED_FROM_ROWS:
            return _PUSHDOWN_ONLY
        return pl.QueryOptFlags()

    def _work(self, replicates: int) -> int | None:
        """The rows a plan handles: an eager input's, once per replicate and the estimate."""
        return None if self.rows is None else self.rows * (replicates + 1)

    def refuse_dask(self, metric: str, reason: str) -> None:
        """On Dask, raise the documented error: ``metric`` cannot run there, for ``reason``."""
        if self.kind is Kind.DASK:
            msg = (
                f"{metric} is not supported on Dask. Workaround: run it on Polars "
                f"(`polars.from_pandas(ddf.compute())`) or on DuckDB/PySpark. The reason: {reason}."
            )
            raise UnsupportedBackendError(msg)

    def require_ordered_windows(self, metric: str) -> None:
        """Refuse Dask for metrics that need windows ordered by position."""
        self.refuse_dask(
            metric, "it needs windows ordered by position, which Dask cannot evaluate lazily"
        )

    def align(
        self, other: Any, columns: Mapping[str, str], *, frame_name: str
    ) -> nw.LazyFrame[Any]:
        """Bring a second frame (a mapping, centroids, an overall ranking) into this engine."""
        source = to_engine(other, columns, frame_name=frame_name)
        if source.kind.on_polars and self.kind.on_polars:
            return source.frame
        same_engine = source.implementation == self.implementation
        if same_engine and source.implementation is not nw.Implementation.DUCKDB:
            return source.frame
        if source.kind.on_polars or same_engine:
            # a small frame (a mapping, centroids, an overall ranking); DuckDB joins only
            # relations of one connection, so it is rebuilt on the data's
            table = source.frame.collect().to_arrow()
            return _lazy_from_arrow(table, self)
        msg = (
            f"{frame_name}: a {source.implementation} frame cannot be combined with a "
            f"{self.implementation} frame; pass it as an in-memory frame (Polars, pandas, "
            "pyarrow) or a dict"
        )
        raise UnsupportedBackendError(msg)

    def frame_from_columns(
        self, columns: Mapping[str, Sequence[Any]], *, parameter: str
    ) -> nw.LazyFrame[Any]:
        """A small frame built from Python values (a dict the caller passed), in this engine.

        ``columns`` maps each column name to its values; ``parameter`` names the caller's
        argument for the errors: the values of a column must be of one type (None is a missing
        value), as a column's are.
        """
        try:
            table = pa.table({name: list(values) for name, values in columns.items()})
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as error:
            for name, values in columns.items():
                found = sorted({type(value).__name__ for value in values if value is not None})
                if len(found) > 1:
                    msg = (
                        f"{parameter}=: the values of {name!r} must all be of one type, found "
                        f"{', '.join(found)}"
                    )
                    raise InvalidParameterError(msg) from None
            msg = f"{parameter}=: its values cannot form typed columns ({error})"
            raise InvalidParameterError(msg) from None
        return _lazy_from_arrow(table, self)


def schema_names(frame: Any) -> list[str]:
    """The column names of any frame narwhals knows (only the schema is read)."""
    return list(nw.from_native(frame).collect_schema().names())


def is_frame(value: Any) -> bool:
    """Whether ``value`` is a frame of a kind narwhals knows (else a plain value or mapping)."""
    if isinstance(value, (str, bytes, numbers.Number, Mapping)) or value is None:
        return False  # a scalar or a dict: narwhals would inspect it for every kind it knows
    wrapped = nw.from_native(value, pass_through=True)
    return isinstance(wrapped, (nw.DataFrame, nw.LazyFrame))


def is_bool(value: Any) -> bool:
    """Whether ``value`` is True or False, from Python or numpy (a boolean column's values)."""
    return isinstance(value, (bool, np.bool_))


def expressions(backend: Literal["narwhals", "polars"]) -> Any:
    """The module whose ``col``, ``lit`` and dtypes build column expressions for ``backend``.

    narwhals mirrors Polars' expression API, so one formula written against either module
    builds a narwhals expression (every backend) or a native Polars one.
    """
    return nw if backend == "narwhals" else pl


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
        return Source(from_polars(data.lazy()), kind, nw.Implementation.POLARS, rows=data.height)
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


def _lazy_from_arrow(table: pa.Table, like: Source) -> nw.LazyFrame[Any]:
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


def long_form(
    frame: nw.LazyFrame[Any],
    keys: Sequence[str],
    columns: Sequence[str],
    like: Source,
    *,
    name: str,
    picks: Mapping[str, Callable[[str], str]],
) -> nw.LazyFrame[Any]:
    """One row per (``keys``, c) for each of ``columns``, c in the column ``name``.

    Each output column of ``picks`` takes, in the row of c, the column ``pick(c)``. A cross
    join with the names and a choice per row, rather than a concatenation of one frame per
    column (engines that do not share subplans would compute ``frame`` once per column) or an
    unpivot (narwhals writes DuckDB's on the default connection, which cannot read a relation
    of another).
    """
    names = like.frame_from_columns({name: list(columns)}, parameter=name)
    crossed = frame.join(names, how="cross")
    ns = namespace_of(crossed)  # the choices in Polars' own expressions on Polars
    label = ns.col(name)

    def pick(output: str, column_of: Callable[[str], str]) -> Any:
        first, *rest = columns
        chosen = ns.when(label == first).then(ns.col(column_of(first)))
        for c in rest:
            chosen = chosen.when(label == c).then(ns.col(column_of(c)))
        return chosen.alias(output)

    shown = [*map(ns.col, [*keys, name]), *(pick(o, column_of) for o, column_of in picks.items())]
    return native_step(crossed, "select", shown)


def _on_connection_of(relation: Any, table: pa.Table) -> Any:
    """``table`` as a DuckDB relation on ``relation``'s connection.

    DuckDB combines only relations of one connection, and a relation does not say which one it
    belongs to. A small table of integers, text and booleans (the combos' names, the bootstrap's
    replicate numbers, most mappings given as dicts) becomes lists of constants unnested in a
    step read from ``relation``'s empty top: nothing is put on the connection. Any other table
    is read by a query run from the relation, which finds it by its Python name (a replacement
    scan) and holds it; but the query puts a name in the catalog for the length of the call,
    after which DuckDB binds again every step built before it (about a millisecond each; a
    ranking report with intervals built 54 such tables). Floats take that path too: DuckDB
    1.x reads a NaN among the constants as a null (seen on 1.1.3 and 1.3.2).
    """
    types = [_CONSTANT_TYPES.get(field.type) for field in table.schema]
    if table.nbytes <= _CONSTANT_BYTES and all(types):
        import duckdb  # noqa: PLC0415 (an optional engine)

        lists = [
            duckdb.FunctionExpression(
                "unnest",
                duckdb.ConstantExpression(table.column(i).to_pylist()).cast(
                    duckdb.sqltype(f"{sql_type}[]")
                ),
            ).alias(name)
            for i, (name, sql_type) in enumerate(zip(table.column_names, types, strict=True))
        ]
        return relation.limit(0).aggregate("count(*)").select(*lists)
    __frameaudit_table = table  # read by the query below, by its name
    return relation.query("__frameaudit_data", "SELECT * FROM __frameaudit_table")


_CONSTANT_TYPES = {
    pa.int64(): "BIGINT",
    pa.string(): "VARCHAR",
    pa.large_string(): "VARCHAR",
    pa.bool_(): "BOOLEAN",
}
"""The Arrow types a small table may have to be written as constants (:func:`_on_connection_of`)."""
_CONSTANT_BYTES = 64 * 1024
"""The largest table written as constants: each bind of its step renders them as SQL text."""


def from_engine(
    result: nw.LazyFrame[Any],
    source: Source,
    *,
    sort_by: Sequence[str] = (),
    checks: Sequence[Check] = (),
    replicates: int = 0,
) -> Any:
    """Hand ``result`` back as a frame of the kind the caller passed in.

    ``replicates``: the bootstrap replicates the plan computes (they choose the Polars engine,
    and on DuckDB a plan that computes its shared steps once).
    """
    sort_by = list(sort_by)
    checks = merge_rules(checks)
    if not source.kind.on_polars:
        checks = unproved(result, checks)
        if checks:
            result = guarded(result, checks)
        lazy = sorted_by(result, sort_by).to_native()
        if replicates and result.implementation is nw.Implementation.DUCKDB:
            return materialized_shared(lazy, source.frame.to_native())
        return lazy

    native: pl.LazyFrame = result.to_native()
    if source.kind is Kind.POLARS_LAZY and checks:
        return attach(native, checks, sort_by)
    if sort_by:
        native = native.sort(sort_by, nulls_last=True)
    if source.kind is Kind.POLARS_LAZY:
        return native
    engine, optimizations = source.engine(replicates), source.optimizations(replicates)
    if not checks:
        return _as_kind(native.collect(engine=engine, optimizations=optimizations), source)
    # computed together, so that the checks and the result share their scans
    counts, eager = pl.collect_all(
        [diagnostics(checks).to_native(), native], engine=engine, optimizations=optimizations
    )
    raise_first(checks, counts.row(0, named=True))
    return _as_kind(eager, source)


def collected(
    result: nw.LazyFrame[Any],
    source: Source,
    *,
    checks: Sequence[Check] = (),
    replicates: int = 0,
) -> pl.DataFrame:
    """``result`` computed now, as an eager Polars frame; ``checks`` raise their errors.

    For a step that reads a small result again (:meth:`Estimation.views`): as
    :func:`from_engine` computes it, whatever the caller's kind, and a check that fails
    inside DuckDB or Spark raises the frameaudit error it does there.
    """
    if source.kind.on_polars:
        computed: pl.DataFrame = from_engine(
            result, replace(source, kind=Kind.POLARS_EAGER), checks=checks, replicates=replicates
        )
        return computed
    return eager(from_engine(result, source, checks=checks, replicates=replicates))


def eager(result: Any) -> pl.DataFrame:
    """A metric's result (of the input's kind) as an eager Polars frame.

    Bad values found inside a DuckDB or Spark query raise the frameaudit error.
    """
    native = nw.from_native(result)
    with frameaudit_errors():
        frame = native.collect(backend="polars") if isinstance(native, nw.LazyFrame) else native
    polars: pl.DataFrame = frame.to_polars()
    return polars


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
