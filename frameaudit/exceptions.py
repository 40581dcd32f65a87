"""Exceptions raised by frameaudit.

Every error frameaudit raises on bad input derives from :class:`FrameAuditError`, which is a
:class:`ValueError`, so ``except ValueError`` keeps working for callers that do not know about
frameaudit. Messages name the parameter or column, what was expected and what was found.

On DuckDB and PySpark the value checks run inside the query, so bad values raise the engine's
own error when the result is computed (``duckdb.InvalidInputException``, PySpark's
``SparkRuntimeException``); its text carries frameaudit's message after
:data:`ENGINE_MARKER`. :func:`from_engine_error` and the context manager
:func:`frameaudit_errors` turn such an error back into the :class:`InvalidValueError` that
Polars raises for the same data, with the same message:

>>> import duckdb
>>> import frameaudit as fa
>>> relation = duckdb.sql("SELECT * FROM (VALUES (0, 'a'), (2, 'b')) t(rank, group_)")
>>> result = fa.fair.exp(relation, rank="rank", group="group_")  # runs no query
>>> try:
...     with fa.exceptions.frameaudit_errors():
...         result.fetchall()
... except fa.InvalidValueError as error:
...     print(error)
rank='rank': expected values in [1, inf], found 1 outside it (e.g. 0)
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import re
from collections.abc import Iterable, Iterator, Sequence

__all__ = [
    "ENGINE_MARKER",
    "ColumnNotFoundError",
    "FrameAuditError",
    "InvalidCallError",
    "InvalidDtypeError",
    "InvalidParameterError",
    "InvalidValueError",
    "UnsupportedBackendError",
    "frameaudit_errors",
    "from_engine_error",
]

ENGINE_MARKER = "[frameaudit] "
"""What precedes frameaudit's message in an error raised inside DuckDB or Spark."""


class FrameAuditError(ValueError):
    """Base class of every error frameaudit raises on bad input."""


class ColumnNotFoundError(FrameAuditError):
    """A column named by a parameter does not exist in the frame."""

    @classmethod
    def build(
        cls, column: str, *, parameter: str, available: Sequence[str], frame: str = "frame"
    ) -> ColumnNotFoundError:
        """Make the error for ``column`` (given as ``parameter``) missing from ``available``."""
        msg = (
            f"{parameter}={column!r}: column {column!r} not found in {frame}; "
            f"available: {_listing(available)}"
        )
        close = difflib.get_close_matches(column, list(available), n=1, cutoff=0.6)
        if close:
            msg += f"; did you mean {close[0]!r}?"
        return cls(msg)


class InvalidDtypeError(FrameAuditError):
    """A column has a data type the metric cannot use."""


class InvalidValueError(FrameAuditError):
    """A column holds values outside what the metric accepts (checked when data is read)."""

    @classmethod
    def of_check(cls, message: str) -> InvalidValueError:
        """The error of a failed value check, from the message the engine computed.

        A value missing from a column gets a hint when one of the values found is close
        ("did you mean 'b'?"): the only part of a message that is computed in Python, so that
        it reads the same whichever engine ran the check.
        """
        missing = _MISSING.match(message)
        if missing is not None:
            value, found = missing["value"], _values(missing["found"])
            close = difflib.get_close_matches(_text(value), found, n=1, cutoff=0.6)
            if close:
                message += f"; did you mean {close[0]!r}?"
        return cls(message)


def _text(shown: str) -> str:
    """A value as the message shows it (its ``repr``), as plain text: quotes dropped.

    Not every ``repr`` is a literal (``nan``, ``inf``, ``datetime.date(...)``): those stay as
    they are shown.
    """
    try:
        return str(ast.literal_eval(shown))
    except (ValueError, SyntaxError):
        return shown


def _values(listing: str) -> list[str]:
    """The values a message lists ("'a', 'b', nan"), each as plain text."""
    try:
        return [str(v) for v in ast.literal_eval(f"[{listing}]")]
    except (ValueError, SyntaxError):
        return [_text(part.strip()) for part in listing.split(",")]


# "a='bb': value not found in group='group'; values found (3): 'a', 'b', 'c'"
_MISSING = re.compile(
    r"\w+=(?P<value>.+?): value not found in \w+=.+?; values found \(\d+\): "
    r"(?P<found>.*?)(?:, \.\.\. \(\d+ more\))?$",
    re.DOTALL,
)


class InvalidParameterError(FrameAuditError):
    """A keyword argument has a value outside its allowed set or range."""

    @classmethod
    def choice(
        cls, parameter: str, value: object, allowed: Iterable[object]
    ) -> InvalidParameterError:
        """Make the error for ``value`` not among the ``allowed`` values of ``parameter``."""
        options = [str(a) for a in allowed]
        msg = f"{parameter}={value!r} is not allowed; expected one of: {', '.join(options)}"
        close = difflib.get_close_matches(str(value), options, n=1, cutoff=0.6)
        if close:
            msg += f"; did you mean {close[0]!r}?"
        return cls(msg)


class InvalidCallError(InvalidParameterError, TypeError):
    """A call the function does not take.

    A keyword it has no parameter for, a required one left out, one given twice, or options
    given by position. A :class:`TypeError` too, as Python's own error for such a call is.
    """


class UnsupportedBackendError(FrameAuditError, TypeError):
    """The frame's kind, or this metric on that kind, is not supported."""


def from_engine_error(error: BaseException) -> InvalidValueError | None:
    """The frameaudit error carried by an error that DuckDB or Spark raised, else None.

    Bad values found by a check inside the query make the engine raise its own error when the
    result is computed; this gives back the :class:`InvalidValueError` (and the message) that
    Polars raises for the same data.
    """
    parameters = getattr(error, "getMessageParameters", None)
    carried = (parameters() or {}).get("errorMessage") if callable(parameters) else None
    text = carried if isinstance(carried, str) else str(error)
    start = text.find(ENGINE_MARKER)
    if start < 0:
        return None
    return InvalidValueError.of_check(text[start + len(ENGINE_MARKER) :])


@contextlib.contextmanager
def frameaudit_errors() -> Iterator[None]:
    """Within the block, an engine error carrying a frameaudit message raises the frameaudit error.

    For computing DuckDB and Spark results (``.fetchall()``, ``.pl()``, ``.collect()``, ...):
    bad values raise :class:`InvalidValueError`, chained to the engine's error, instead of
    ``duckdb.InvalidInputException`` or ``SparkRuntimeException``. Other errors pass unchanged.
    """
    try:
        yield
    except Exception as error:
        converted = from_engine_error(error)
        if converted is None:
            raise
        raise converted from error


def _listing(names: Sequence[str], limit: int = 20) -> str:
    shown = ", ".join(names[:limit])
    if len(names) > limit:
        shown += f", ... ({len(names) - limit} more)"
    return shown
