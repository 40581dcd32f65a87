"""Plan steps written once for either namespace: Polars' own expressions on Polars.

narwhals builds a step's expressions into the engine's at every ``select`` and
``with_columns``, node by node: on a small frame that is most of a call's cost (a ``select``
of a few expressions took about 110 µs through narwhals against 8 µs in Polars). A step that
every call builds is written as a function of the namespace (:data:`Written`): given Polars'
own module on Polars it builds Polars' expressions, given narwhals' everywhere else the
narwhals ones, and :func:`native_step` or :func:`aggregated` applies it. The same code serves
every engine; DuckDB, Spark and Dask take the narwhals branch unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

import narwhals.stable.v2 as nw
import polars as pl

from frameaudit._expr import WHOLE, aggregate, hashed_keys

__all__ = ["Written", "aggregated", "from_polars", "namespace_of", "native_step", "stepped"]

Written = Callable[[Any], Any]
"""Expressions written for either namespace: given narwhals' (``nw``) or Polars' own (``pl``,
:func:`native_step`), a function that returns that namespace's expression (a rule's flag:
``lambda ns: ns.col("a").is_null()``) or list of them (aggregations:
``lambda ns: [ns.len()]``)."""


def stepped(frame: nw.LazyFrame[Any], native: pl.LazyFrame) -> nw.LazyFrame[Any]:
    """``native``, a step on ``frame``'s own Polars plan, as a narwhals frame like ``frame``.

    narwhals' wrapper copied with its compliant frame's ``_with_native``, as narwhals' own
    steps rewrap theirs but without its constructor's check of what it is given (which
    inspects the class statically): ``nw.from_native`` cost 30 µs, narwhals' rewrapping
    4.7, this 0.5, a few dozen times a call.
    """
    rewrapped: nw.LazyFrame[Any] = object.__new__(type(frame))
    rewrapped.__dict__.update(frame.__dict__)
    rewrapped._compliant_frame = frame._compliant_frame._with_native(native)
    return rewrapped


def from_polars(native: pl.LazyFrame) -> nw.LazyFrame[Any]:
    """A Polars LazyFrame as a narwhals one, as :func:`stepped` wraps it (:data:`_POLARS`)."""
    return stepped(_POLARS, native)


_POLARS: nw.LazyFrame[Any] = nw.from_native(pl.LazyFrame())
"""An empty narwhals frame on Polars, whose wrapper :func:`from_polars` copies."""


def namespace_of(frame: nw.LazyFrame[Any]) -> Any:
    """The namespace to write ``frame``'s next step in: Polars' own on Polars, else narwhals.

    Polars' expressions cost about a tenth of narwhals' to build (a call's fixed cost); the same
    code writes both, through :func:`native_step`.
    """
    return pl if frame.implementation is nw.Implementation.POLARS else nw


def native_step(
    frame: nw.LazyFrame[Any],
    method: Literal["select", "with_columns", "filter"],
    columns: Iterable[Any] | Callable[[Any], Iterable[Any]],
) -> nw.LazyFrame[Any]:
    """``frame.select``, ``.with_columns`` or ``.filter`` of expressions of :func:`namespace_of`.

    ``columns``: the expressions, or a function that writes them in the namespace it is
    given (how a family writes such a step: ``lambda ns: [ns.col("a") + 1]``).
    """
    if callable(columns):
        columns = columns(namespace_of(frame))
    if frame.implementation is nw.Implementation.POLARS:
        native: pl.LazyFrame = getattr(frame.to_native(), method)(*columns)
        return stepped(frame, native)
    result: nw.LazyFrame[Any] = getattr(frame, method)(*columns)
    return result


def aggregated(
    frame: nw.LazyFrame[Any], keys: Sequence[str], columns: Written
) -> nw.LazyFrame[Any]:
    """:func:`~frameaudit._expr.aggregate` of the aggregations ``columns`` writes.

    ``columns`` is a :data:`Written` (a function of the namespace): on Polars it gets Polars'
    own, as :func:`native_step` does, and the aggregation is built as ``aggregate`` builds it.
    """
    if frame.implementation is not nw.Implementation.POLARS:
        return aggregate(frame, keys, *columns(nw))
    native: pl.LazyFrame = frame.to_native()
    hashed, written = hashed_keys(keys), columns(pl)
    grouped = native.group_by(hashed).agg(*written) if hashed else native.select(*written)
    whole = grouped.with_columns(pl.lit(0).alias(WHOLE)) if WHOLE in keys else grouped
    return stepped(frame, whole)
