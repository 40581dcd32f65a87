"""The tables every family's report builds: the summary and worst rows, metric results as Polars."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import platform
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from importlib import metadata
from typing import Any

import narwhals.stable.v2 as nw
import polars as pl
from tqdm.auto import tqdm

from frameaudit._engine import eager, is_frame
from frameaudit._registry import shown

__all__ = [
    "created",
    "direction",
    "eager",
    "label",
    "listed",
    "ordered",
    "plain_values",
    "progress",
    "record",
    "stack",
    "summary",
    "summary_row",
    "versions",
    "worst",
    "worst_row",
]

_PROGRESS_DELAY = 2.0  # seconds before a report's progress bar shows (quick reports show none)
SHOW_PROGRESS: ContextVar[bool] = ContextVar("SHOW_PROGRESS", default=True)
"""Whether reports draw their progress bar: the command line sets it to whether standard error
is a terminal (a log or a pipe gets no bar)."""


_ORDER_DIGITS = 12


def ordered(value: str | pl.Expr) -> pl.Expr:
    """A value as a report orders rows by it: to 12 significant digits.

    Values equal to that many digits are ties, which the report breaks by the rows' keys: below
    it, a float's last bits come from the order of its sums (Polars sums in parallel, in a
    different order on each run), so two rankings, or two groups equally far from the mean,
    whose values are equal in exact arithmetic would change places from run to run.
    """
    expr = pl.col(value) if isinstance(value, str) else value
    return expr.round_sig_figs(_ORDER_DIGITS)


def label(names: Sequence[str], schema: Mapping[str, Any] | None = None) -> pl.Expr:
    """One string naming a row's group (or ranking, cluster, pair): its keys joined by '/'.

    ``schema`` (of the frame the label is read from) lets a duration key be named: it has
    no cast to text.
    """
    dtypes = schema or {}
    return pl.concat_str(
        [
            pl.col(c).dt.to_string("polars")
            if isinstance(dtypes.get(c), pl.Duration)
            else pl.col(c).cast(pl.String)
            for c in names
        ],
        separator="/",
    )


def direction(metric: str) -> tuple[str, str]:
    """What the best value of the registered ``metric`` is and means, and its range."""
    return shown(metric)


def summary_row(
    metric: str,
    combo: str | None,
    value: Any,
    direction: tuple[str, str],
    *,
    unit: str,
    ci: float | None,
    interval: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A summary row: the value, its interval and what fair looks like.

    ``direction`` is (what parity or fairness looks like, the range). ``interval`` holds
    ``lo``, ``hi``, the ``unit`` count and ``undefined_replicates`` when this row has an
    interval (with ``ci``, the other rows hold nulls there).
    """
    row: dict[str, Any] = {"metric": metric, "combo": combo, "value": value, "lo": None, "hi": None}
    if ci is not None:
        row |= {unit: None, "undefined_replicates": None}
        row |= dict(interval or {})
    return row | {"direction": direction[0], "range": direction[1]}


def summary(rows: Sequence[dict[str, Any]], *, unit: str, ci: float | None) -> pl.DataFrame:
    """The summary table of :func:`summary_row` rows."""
    schema: dict[str, Any] = {
        "metric": pl.String,
        "combo": pl.String,
        "value": pl.Float64,
        "lo": pl.Float64,
        "hi": pl.Float64,
    }
    if ci is not None:
        schema |= {unit: pl.Int64, "undefined_replicates": pl.Int64}
    schema |= {"direction": pl.String, "range": pl.String}
    return pl.DataFrame(rows, schema=schema, orient="row")


def worst_row(metric: str, kind: str, name: Any, value: Any, reference: Any) -> dict[str, Any]:
    """A row of ``worst``: what is furthest from parity, its value and the reference."""
    gap = None if value is None or reference is None else value - reference
    return {
        "metric": metric,
        "kind": kind,
        "name": str(name),
        "value": value,
        "reference": reference,
        "gap": gap,
    }


def worst(rows: Sequence[dict[str, Any]]) -> pl.DataFrame:
    """The ``worst`` table of :func:`worst_row` rows."""
    schema = {
        "metric": pl.String,
        "kind": pl.String,
        "name": pl.String,
        "value": pl.Float64,
        "reference": pl.Float64,
        "gap": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema, orient="row")


def stack(
    frames: Sequence[pl.DataFrame], partitions: Sequence[str], *, unit: str, ci: float | None
) -> pl.DataFrame:
    """Summary rows built as frames (one per metric), in the summary's column order."""
    columns: dict[str, Any] = dict.fromkeys(partitions)
    columns |= {
        "metric": pl.String,
        "combo": pl.String,
        "value": pl.Float64,
        "lo": pl.Float64,
        "hi": pl.Float64,
    }
    if ci is not None:
        columns |= {unit: pl.Int64, "undefined_replicates": pl.Int64}
    columns |= {"direction": pl.String, "range": pl.String, "note": pl.String}
    shaped = [
        frame.with_columns(
            pl.lit(None, dtype=dtype).alias(name)
            for name, dtype in columns.items()
            if name not in frame.columns and dtype is not None
        ).select(
            *(
                pl.col(name) if dtype is None else pl.col(name).cast(dtype)
                for name, dtype in columns.items()
            )
        )
        for frame in frames
    ]
    return pl.concat(shaped, how="vertical_relaxed")


def listed(column: str, template: str, shown: int = 3) -> pl.Expr:
    """``template`` around the first ``shown`` names of a list column, quoted, where any."""
    names = pl.col(column)
    quoted = names.list.head(shown).list.eval(pl.format("'{}'", pl.element())).list.join(", ")
    more = (
        pl.when(names.list.len() > shown)
        .then(pl.format(" and {} more", names.list.len() - shown))
        .otherwise(pl.lit(""))
    )
    head, _, tail = template.partition("{}")
    return pl.when(names.list.len() > 0).then(
        pl.concat_str(pl.lit(head), quoted, more, pl.lit(tail))
    )


@contextlib.contextmanager
def progress(steps: int, description: str) -> Iterator[Callable[..., None]]:
    """A progress bar over a report's ``steps``, shown once it has taken a few seconds.

    Yields ``step(n=1)``, which advances the bar by n steps.
    """
    hidden = not SHOW_PROGRESS.get()
    with tqdm(
        total=steps, desc=description, delay=_PROGRESS_DELAY, leave=False, disable=hidden
    ) as bar:

        def step(n: int = 1) -> None:
            bar.update(n)

        yield step


def plain_values(value: Any) -> Any:
    """A parameter as plain JSON values: a frame is described, tuples become lists."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if is_frame(value):
        return f"a frame of {len(nw.from_native(value).lazy().collect_schema())} column(s)"
    if isinstance(value, Mapping):
        return [[plain_values(k), plain_values(v)] for k, v in value.items()]
    if isinstance(value, list | tuple | set | frozenset):
        return [plain_values(v) for v in value]
    return str(value)


def created() -> str:
    """When the report was made, in UTC; ``SOURCE_DATE_EPOCH`` fixes it (reproducible files)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = (
        dt.datetime.fromtimestamp(int(epoch), tz=dt.UTC)
        if epoch is not None and epoch.strip().isdigit()
        else dt.datetime.now(tz=dt.UTC)
    )
    return moment.isoformat(timespec="seconds")


def versions(frame: Any) -> dict[str, str]:
    """The versions that computed a report: frameaudit, Python and the engines involved."""
    names = ["frameaudit", "polars", "narwhals", "numpy"]
    library = type(frame).__module__.split(".")[0]
    if library not in names and library != "builtins":
        names.append(library)
    found = {"python": platform.python_version()}
    for name in names:
        with contextlib.suppress(metadata.PackageNotFoundError):
            found[name] = metadata.version(name)
    return found


def record(
    frame: Any, *, units: Sequence[str], unit: str, groups: Sequence[str] = ()
) -> dict[str, Any]:
    """The report's provenance: the input's kind, rows and units, its groups, the versions.

    Counted in the input's engine (two small queries).
    """
    native = nw.from_native(frame)
    lazy = native.lazy(backend="polars") if isinstance(native, nw.DataFrame) else native
    rows = eager(lazy.select(nw.len().alias("rows"))).item()
    counted = eager(lazy.select(list(units)).unique().select(nw.len())).item() if units else None
    source: dict[str, Any] = {
        "kind": f"{type(frame).__module__.split('.')[0]}.{type(frame).__name__}",
        "rows": int(rows),
        unit: None if counted is None else int(counted),
    }
    if groups:
        source["groups"] = list(groups)
    return {"source": source, "versions": versions(frame), "created": created()}
