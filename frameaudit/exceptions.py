"""Exceptions raised by frameaudit.

Every error frameaudit raises on bad input derives from :class:`FrameAuditError`, which is a
:class:`ValueError`, so ``except ValueError`` keeps working for callers that do not know about
frameaudit. Messages name the parameter or column, what was expected and what was found.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

__all__ = [
    "ColumnNotFoundError",
    "FrameAuditError",
    "InvalidDtypeError",
    "InvalidParameterError",
    "InvalidValueError",
    "UnsupportedBackendError",
]


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


class UnsupportedBackendError(FrameAuditError, TypeError):
    """The frame's kind, or this metric on that kind, is not supported."""


def _listing(names: Sequence[str], limit: int = 20) -> str:
    shown = ", ".join(names[:limit])
    if len(names) > limit:
        shown += f", ... ({len(names) - limit} more)"
    return shown
