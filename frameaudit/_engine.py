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

Building a plan through narwhals costs milliseconds of Python per call, often more than running
it on a small frame. Metric functions decorated with :func:`reuses_plans` therefore keep, per
thread, the finished Polars plan of an in-memory call (keyed by the function, the parameters and
the input's schema) and run it again on the next frame of the same shape: the plan reads its
input through a placeholder scan that is bound to the caller's data only for the call.
"""

from __future__ import annotations

import contextvars
import dataclasses
import enum
import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, cast

import narwhals.stable.v2 as nw
import polars as pl
import pyarrow as pa
from narwhals.dependencies import (
    is_dask_dataframe,
    is_pandas_dataframe,
)
from polars.io.plugins import register_io_source

from frameaudit._expr import aggregate
from frameaudit._validate import Check, merge_rules
from frameaudit.exceptions import ColumnNotFoundError, UnsupportedBackendError

__all__ = [
    "Kind",
    "Source",
    "count_distinct",
    "from_engine",
    "lazy_from_arrow",
    "reuses_plans",
    "run_kernel",
    "shared",
    "to_engine",
]

# measured: below ~a million rows the in-memory engine's lower fixed cost wins (2x on 100k
# rows); above, the streaming engine keeps peak memory lower at the same speed
_STREAMING_FROM_ROWS = 1_000_000
# rows per batch in which a reused plan reads its input (the streaming engine's morsel size)
_BATCH_ROWS = 100_000

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


def _native_schema_names(frame: Any) -> list[str]:
    return list(nw.from_native(frame).collect_schema().names())


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


def _as_polars(frame: Any, kind: Kind, wanted: list[str]) -> pl.DataFrame:
    """The ``wanted`` columns of an in-memory frame as a Polars DataFrame (through Arrow)."""
    if kind is Kind.PYARROW:
        return _table_to_polars(frame.select(wanted))
    selected: pl.DataFrame = (
        frame[wanted]
        if kind is Kind.POLARS_EAGER
        else pl.from_pandas(frame[wanted], include_index=False)
    )
    return selected


def to_engine(frame: Any, columns: Mapping[str, str], *, frame_name: str = "frame") -> Source:
    """Turn ``frame`` into a narwhals LazyFrame holding only ``columns``.

    ``columns`` maps each needed column to the parameter that named it (for error messages).
    Only the schema is read: a lazy frame's data is not touched.
    """
    if isinstance(frame, (nw.DataFrame, nw.LazyFrame)):
        frame = nw.to_native(frame)
    recording = _RECORDING.get()
    wanted = list(dict.fromkeys(columns))
    if isinstance(frame, pl.LazyFrame):
        _check_columns(frame.collect_schema().names(), columns, frame_name)
        if recording is not None:
            recording.valid = False
        return Source(
            nw.from_native(frame.select(wanted)), Kind.POLARS_LAZY, nw.Implementation.POLARS
        )
    kind = _in_memory_kind(frame)
    if kind is not None:
        names = frame.column_names if kind is Kind.PYARROW else [str(c) for c in frame.columns]
        _check_columns(names, columns, frame_name)
        data = _as_polars(frame, kind, wanted)
        lazy = recording.bind(data, kind, wanted) if recording is not None else data.lazy()
        return Source(nw.from_native(lazy), kind, nw.Implementation.POLARS, rows=data.height)
    if recording is not None:
        recording.valid = False
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
    eager = nw.from_arrow(table, backend="pyarrow")
    backend: Any = like.implementation
    if like.session is not None:
        return eager.lazy(backend=backend, session=like.session)
    return eager.lazy(backend=backend)


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
    if (
        source.kind.on_polars == like.kind.on_polars
        and source.implementation == like.implementation
    ):
        return source.frame
    if source.kind.on_polars:
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
    """Run a numpy kernel on ``frame``'s rows when the result is computed (in-memory engines).

    ``kernel`` gets all rows as one Polars DataFrame and returns the ``keys`` columns (with
    their input dtypes) followed by ``outputs``. On Polars it becomes a batch map inside the
    plan, so a lazy call stays lazy. The other engines would have to ship every row to this
    process, which frameaudit never does silently: they get an error naming ``workaround``.
    """
    if not source.kind.on_polars:
        msg = (
            f"{metric} runs a numpy kernel on all rows at once and is limited to in-memory "
            f"engines (Polars, pandas, pyarrow); got a {source.implementation} frame. "
            f"Workaround: {workaround}"
        )
        raise UnsupportedBackendError(msg)
    native: pl.LazyFrame = frame.to_native()
    schema = native.collect_schema()
    result = pl.Schema({**{k: schema[k] for k in keys}, **outputs})
    return nw.from_native(native.map_batches(kernel, schema=result))


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
    plan = _EagerPlan(native, checks)
    recording = _RECORDING.get()
    if recording is not None:
        return recording.finish(plan, source)
    return plan.run(source)


@dataclass(frozen=True)
class _EagerPlan:
    """The finished plan of a call on an in-memory frame: the result and its checks."""

    result: pl.LazyFrame
    checks: list[Check]
    diagnostics: pl.LazyFrame | None = field(init=False)

    def __post_init__(self) -> None:
        diagnostics = _combined_checks(self.checks).to_native() if self.checks else None
        object.__setattr__(self, "diagnostics", diagnostics)

    def run(self, source: Source) -> Any:
        """Compute the checks and the result together (shared scans), check, convert."""
        if self.diagnostics is None:
            return _as_kind(self.result.collect(engine=source.engine), source)
        diagnostics, eager = pl.collect_all([self.diagnostics, self.result], engine=source.engine)
        _raise_first(self.checks, diagnostics.row(0, named=True))
        return _as_kind(eager, source)


@dataclass
class _Slot:
    """Where a reusable plan finds its input: the caller's data, only during the call."""

    data: pl.DataFrame | None = None
    reads: int = 0

    def scan(self, schema: pl.Schema) -> pl.LazyFrame:
        """A lazy frame that reads whatever data the slot holds when it is computed."""

        def source(
            with_columns: list[str] | None,
            predicate: pl.Expr | None,
            n_rows: int | None,
            batch_size: int | None,  # noqa: ARG001
        ) -> Iterator[pl.DataFrame]:
            self.reads += 1
            data = self.data
            if data is None:
                msg = "frameaudit: a reusable plan was computed outside the call it belongs to"
                raise RuntimeError(msg)
            if with_columns is not None:
                data = data.select(with_columns)
            if predicate is not None:
                data = data.filter(predicate)
            if n_rows is not None:
                data = data.head(n_rows)
            # in batches: the streaming engine spreads a source's batches over its threads
            yield from data.iter_slices(_BATCH_ROWS)

        return register_io_source(source, schema=schema, is_pure=True, explain_name="input").cache()


@dataclass
class _Template:
    """A finished plan, reusable for any frame of the same kind and schema."""

    kind: Kind
    wanted: list[str]
    schema: pl.Schema
    slot: _Slot
    source: Source
    plan: _EagerPlan

    def run(self, frame: Any) -> tuple[bool, Any]:
        """Run the plan on ``frame``: (True, result), or (False, None) if it does not fit."""
        data = _as_polars(frame, self.kind, self.wanted)
        # a pandas object column converts by its content, so the same dtypes can differ here
        if data.schema != self.schema or self.slot.data is not None:
            return False, None
        self.slot.data = data
        try:
            return True, self.plan.run(dataclasses.replace(self.source, rows=data.height))
        finally:
            self.slot.data = None


@dataclass
class _Recording:
    """Watches one metric call build its plan, to keep the plan if it can be reused.

    It can when the call read exactly one in-memory frame (through the slot), built the plan
    without reading any data (a plan shaped by data would be wrong for the next frame), and
    returned what :func:`from_engine` computed.
    """

    slot: _Slot = field(default_factory=_Slot)
    valid: bool = True
    first: tuple[Kind, list[str], pl.Schema] | None = None
    template: _Template | None = None
    output: Any = None

    def bind(self, data: pl.DataFrame, kind: Kind, wanted: list[str]) -> pl.LazyFrame:
        if self.slot.data is not None or not self.valid:
            self.valid = False
            return data.lazy()
        self.slot.data = data
        self.first = (kind, wanted, data.schema)
        return self.slot.scan(data.schema)

    def finish(self, plan: _EagerPlan, source: Source) -> Any:
        reusable = (
            self.valid and self.first is not None and self.slot.reads == 0 and self.template is None
        )
        if not reusable:
            self.valid = False
            return plan.run(source)
        assert self.first is not None
        kind, wanted, schema = self.first
        self.template = _Template(kind, wanted, schema, self.slot, source, plan)
        self.output = plan.run(source)
        return self.output


_RECORDING: contextvars.ContextVar[_Recording | None] = contextvars.ContextVar(
    "frameaudit_recording", default=None
)
_TEMPLATES_PER_THREAD = 256
_templates = threading.local()


class _UncacheableError(Exception):
    """A parameter value that cannot be part of a plan's key."""


def _frozen(value: Any) -> Any:
    """A hashable stand-in for a parameter value; the type is kept (True is not 1)."""
    if value is None or isinstance(value, (str, int, float)):
        return (type(value), value)
    if isinstance(value, (list, tuple)):
        return (type(value), tuple(_frozen(v) for v in value))
    if isinstance(value, Mapping) and len(value) <= 64:
        return (dict, tuple((_frozen(k), _frozen(v)) for k, v in value.items()))
    raise _UncacheableError


def _plan_key(function: Callable[..., Any], frame: Any, kwargs: Mapping[str, Any]) -> Any:
    """What decides the plan of ``function(frame, **kwargs)``, or None if it is not reusable."""
    kind = _in_memory_kind(frame)
    if kind is None:
        return None
    if kind is Kind.POLARS_EAGER:
        schema: Any = tuple(frame.schema.items())
    elif kind is Kind.PANDAS:
        schema = tuple(zip(frame.columns, map(str, frame.dtypes), strict=True))
    else:
        schema = tuple((f.name, str(f.type)) for f in frame.schema)
    try:
        parameters = tuple(sorted((k, _frozen(v)) for k, v in kwargs.items()))
    except _UncacheableError:
        return None
    return (function, kind, schema, parameters)


def _thread_templates() -> OrderedDict[Any, _Template]:
    templates: OrderedDict[Any, _Template] | None = getattr(_templates, "plans", None)
    if templates is None:
        templates = _templates.plans = OrderedDict()
    return templates


F = TypeVar("F", bound=Callable[..., Any])


def reuses_plans(function: F) -> F:
    """Let a metric function reuse its finished plan for frames of the same shape.

    A call on an in-memory frame (Polars, pandas, pyarrow) with hashable parameters is keyed by
    the function, the parameters and the frame's schema. The first call builds the plan and,
    if the plan turns out to be reusable (see ``_Recording``), keeps it; later calls with the
    same key bind their data to it and skip the plan building. Anything else (lazy and
    database frames, frames passed as parameters) builds the plan every call, as before.
    """

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        key = _plan_key(function, args[0], kwargs) if len(args) == 1 else None
        if key is None or _RECORDING.get() is not None:
            return function(*args, **kwargs)
        frame = args[0]
        templates = _thread_templates()
        template = templates.get(key)
        if template is not None:
            fits, result = template.run(frame)
            if fits:
                templates.move_to_end(key)
                return result
        recording = _Recording()
        token = _RECORDING.set(recording)
        try:
            result = function(frame, **kwargs)
        finally:
            _RECORDING.reset(token)
            recording.slot.data = None
        if recording.valid and recording.template is not None and result is recording.output:
            templates[key] = recording.template
            if len(templates) > _TEMPLATES_PER_THREAD:
                templates.popitem(last=False)
        return result

    return cast("F", wrapper)


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
