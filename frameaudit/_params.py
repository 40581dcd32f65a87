"""Declared constraints on the option parameters of the public functions.

Each public function declares its options once, next to its signature::

    @constraints(decay=Real(0.0, 1.0, high_open=True), combo=Optional(Choice(COMBOS)))
    def erbe(frame, *, ..., decay=0.5, combo="MinMaxRatio"): ...

The decorator checks every declared parameter on each call, with the same wording in every
family, before the function runs (and, first, that the call is one the signature takes:
:func:`strict`), and records the declaration on the function
(``__parameter_constraints__``) so that one generic test can try invalid values on every public
function (the model is scikit-learn's ``_parameter_constraints``). Column-role parameters are
checked by :func:`frameaudit._roles.bind` instead: what they accept depends on the frame.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast

from frameaudit._combos import COMBOS
from frameaudit._engine import MAX_SEED
from frameaudit.exceptions import InvalidCallError, InvalidParameterError

__all__ = [
    "COMBO_OPTION",
    "MAX_BOOT",
    "UNCERTAINTY",
    "Bounds",
    "Choice",
    "Constraint",
    "Flag",
    "Integer",
    "Levels",
    "Optional",
    "Real",
    "Several",
    "constraints",
    "strict",
]

F = TypeVar("F", bound=Callable[..., Any])


class Constraint(Protocol):
    """What a parameter accepts."""

    def check(self, parameter: str, value: Any) -> None:
        """Raise :class:`InvalidParameterError` naming ``parameter`` unless ``value`` fits."""

    def invalid(self) -> list[Any]:
        """Values that do not fit (for the generic test)."""


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _is_integer(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


@dataclass(frozen=True)
class Real:
    """A real number (not a bool) in an interval; NaN never fits."""

    low: float
    high: float
    low_open: bool = False
    high_open: bool = False

    def interval(self) -> str:
        """The interval in mathematical notation, e.g. ``(0.0, 1.0]``."""
        left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
        return f"{left}{float(self.low)}, {float(self.high)}{right}"

    def check(self, parameter: str, value: Any) -> None:
        """Raise unless ``value`` is a number in the interval."""
        if not _is_real(value):
            msg = (
                f"{parameter}={value!r}: expected a number in {self.interval()}, "
                f"got {type(value).__name__}"
            )
            raise InvalidParameterError(msg)
        number = float(value)
        below = number < self.low or (self.low_open and number == self.low)
        above = number > self.high or (self.high_open and number == self.high)
        if math.isnan(number) or below or above:
            msg = f"{parameter}={value!r}: expected a number in {self.interval()}"
            raise InvalidParameterError(msg)

    def invalid(self) -> list[Any]:
        """Just outside each end, NaN, a string and a bool."""
        outside = [self.low if self.low_open else self.low - 0.5]
        outside.append(self.high if self.high_open else self.high + 0.5)
        return [*outside, math.nan, "0.5", True]


@dataclass(frozen=True)
class Integer:
    """An integer (not a bool) at least ``low`` and at most ``high`` (None: unbounded)."""

    low: int
    high: int | None = None

    def check(self, parameter: str, value: Any) -> None:
        """Raise unless ``value`` is an integer in range."""
        if (
            not _is_integer(value)
            or value < self.low
            or (self.high is not None and value > self.high)
        ):
            expected = (
                "a positive integer"
                if self.low == 1 and self.high is None
                else f"an integer in [{self.low}, {'inf' if self.high is None else self.high}]"
            )
            msg = f"{parameter}={value!r}: expected {expected}"
            raise InvalidParameterError(msg)

    def invalid(self) -> list[Any]:
        """Below and above the range, a fraction, a string and a bool."""
        values: list[Any] = [self.low - 1, self.low + 0.5, str(self.low), True]
        return values if self.high is None else [*values, self.high + 1]


@dataclass(frozen=True)
class Choice:
    """One of the listed values, compared with its type (``True`` is not ``1``)."""

    values: Sequence[Any]

    def holds(self, value: Any) -> bool:
        """Whether ``value`` is one of the values."""
        return any(type(value) is type(v) and value == v for v in self.values)

    def check(self, parameter: str, value: Any) -> None:
        """Raise unless ``value`` is one of the values (with a did-you-mean hint)."""
        if not self.holds(value):
            raise InvalidParameterError.choice(parameter, value, self.values)

    def invalid(self) -> list[Any]:
        """A near-miss string and a value of no listed type."""
        return ["not-an-option", 3.5]


@dataclass(frozen=True)
class Several:
    """One of the choices, or a non-empty list of distinct ones (``combo=["LTwo", "Variance"]``)."""

    choice: Choice

    def check(self, parameter: str, value: Any) -> None:
        """Raise unless ``value`` is a choice or a non-empty list of distinct choices."""
        if not isinstance(value, list | tuple):
            self.choice.check(parameter, value)
            return
        if not value:
            msg = f"{parameter}=[]: expected one of the choices or a non-empty list of them"
            raise InvalidParameterError(msg)
        for item in value:
            if not self.choice.holds(item):
                raise InvalidParameterError.choice(parameter, item, self.choice.values)
        if len(set(value)) < len(value):
            msg = f"{parameter}={value!r}: a choice is listed more than once"
            raise InvalidParameterError(msg)

    def invalid(self) -> list[Any]:
        """The choice's invalid values, an empty list and a list with a repeat."""
        first = self.choice.values[0]
        return [*self.choice.invalid(), [], [first, first]]


@dataclass(frozen=True)
class Flag:
    """True or False (no other truthy value: ``weighted="no"`` would silently be True)."""

    def check(self, parameter: str, value: Any) -> None:
        """Raise unless ``value`` is a bool."""
        if not isinstance(value, bool):
            msg = f"{parameter}={value!r}: expected True or False"
            raise InvalidParameterError(msg)

    def invalid(self) -> list[Any]:
        """Truthy and falsy values that are not bools."""
        return [1, "yes", None]


@dataclass(frozen=True)
class Levels:
    """A non-empty list of distinct numbers in [0, 1] (quantile levels)."""

    def check(self, parameter: str, value: Any) -> None:
        """Raise unless ``value`` is such a list (or tuple)."""
        listed = list(value) if isinstance(value, list | tuple) else []
        if (
            not listed
            or not all(_is_real(v) and 0.0 <= float(v) <= 1.0 for v in listed)
            or len(set(listed)) < len(listed)
        ):
            msg = f"{parameter}={value!r}: expected a list of distinct levels in [0, 1]"
            raise InvalidParameterError(msg)

    def invalid(self) -> list[Any]:
        """A level above 1, an empty list, a repeat, a bare number and a bool."""
        return [[1.5], [], [0.5, 0.5], 0.5, [True]]


@dataclass(frozen=True)
class Bounds:
    """A pair (low, high) of finite numbers with low ≤ high."""

    def check(self, parameter: str, value: Any) -> None:
        """Raise unless ``value`` is such a pair."""
        pair = list(value) if isinstance(value, list | tuple) else []
        if (
            len(pair) != 2
            or not all(_is_real(v) and math.isfinite(float(v)) for v in pair)
            or float(pair[0]) > float(pair[1])
        ):
            msg = f"{parameter}={value!r}: expected (low, high), two finite numbers, low ≤ high"
            raise InvalidParameterError(msg)

    def invalid(self) -> list[Any]:
        """Reversed, too short, unbounded, text and a bool."""
        return [(1.0, 0.0), (0.0,), (0.0, math.inf), "01", (True, 1.0)]


@dataclass(frozen=True)
class Optional:
    """``inner``, or None."""

    inner: Real | Integer | Choice | Several | Flag | Levels | Bounds

    def check(self, parameter: str, value: Any) -> None:
        """Raise unless ``value`` is None or fits ``inner``."""
        if value is None:
            return
        if isinstance(self.inner, Flag) and not isinstance(value, bool):
            msg = f"{parameter}={value!r}: expected True, False or None"
            raise InvalidParameterError(msg)
        if isinstance(self.inner, Choice) and not self.inner.holds(value):
            raise InvalidParameterError.choice(parameter, value, [*self.inner.values, None])
        several = isinstance(self.inner, Several) and not isinstance(value, list | tuple)
        if several and not self.inner.choice.holds(value):  # type: ignore[union-attr]
            values = [*self.inner.choice.values, None]  # type: ignore[union-attr]
            raise InvalidParameterError.choice(parameter, value, values)
        self.inner.check(parameter, value)

    def invalid(self) -> list[Any]:
        """The inner constraint's invalid values other than None."""
        return [v for v in self.inner.invalid() if v is not None]


def constraints(**declared: Constraint) -> Callable[[F], F]:
    """Check the declared parameters of every call, and record them on the function."""

    def decorate(function: F) -> F:
        signature = inspect.signature(function)
        keyword_only = {
            name
            for name, p in signature.parameters.items()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        }
        unknown = set(declared) - keyword_only
        if unknown:  # a declaration of anything but a keyword-only option is a bug here
            msg = f"{function.__name__} has no keyword-only parameter {sorted(unknown)[0]!r}"
            raise TypeError(msg)
        defaults = {name: p.default for name, p in signature.parameters.items() if name in declared}

        @functools.wraps(function)
        def checked(*args: Any, **kwargs: Any) -> Any:
            for name, constraint in declared.items():
                constraint.check(name, kwargs.get(name, defaults[name]))
            return function(*args, **kwargs)

        refusing = cast("F", strict(checked))
        refusing.__parameter_constraints__ = dict(declared)  # type: ignore[attr-defined]
        return refusing

    return decorate


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def strict(function: F) -> F:
    """``function``, refusing a call its signature does not take with :class:`InvalidCallError`.

    Python's own ``TypeError`` for a misspelt option names neither what the function takes nor
    the likely intended name; this error names the parameter, the function's parameters and
    the closest one. The function takes no ``*args`` or ``**kwargs``; a method's ``self``
    (a namespace's, whose frame stands for the function's) is neither counted nor listed.
    """
    title = f"{function.__name__}()"
    parameters = list(inspect.signature(function).parameters.values())
    if any(p.kind not in (*_POSITIONAL, inspect.Parameter.KEYWORD_ONLY) for p in parameters):
        msg = f"{title} takes *args or **kwargs: a strict signature cannot check its calls"
        raise TypeError(msg)
    bound = int(bool(parameters) and parameters[0].name == "self")
    parameters = parameters[bound:]
    positional = [p.name for p in parameters if p.kind in _POSITIONAL]
    named = [p.name for p in parameters if p.kind in _NAMED]
    known = set(named)
    required = [p.name for p in parameters if p.default is inspect.Parameter.empty]
    takes = (
        f"takes {len(positional)} positional argument(s) ({', '.join(positional)})"
        if positional
        else "takes no positional argument"
    )

    def problem(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
        given = len(args) - bound
        if given > len(positional):
            options = ", ".join(f"{n}=" for n in named if n not in positional)
            hint = f"; give the options by name: {options}" if options else ""
            return f"{title} {takes}, found {given}{hint}"
        for name in kwargs:
            if name not in known:
                close = difflib.get_close_matches(name, named, n=1, cutoff=0.6)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                return (
                    f"{name}=: {title} has no parameter {name!r}; expected one of: "
                    f"{', '.join(named)}{hint}"
                )
            if name in positional[:given]:
                return f"{name}=: {title} was given {name} twice, by position and by name"
        for name in required:
            if name not in kwargs and name not in positional[:given]:
                return f"{name}=: {title} needs {name}, found none given"
        return None

    @functools.wraps(function)
    def refusing(*args: Any, **kwargs: Any) -> Any:
        found = problem(args, kwargs)
        if found is not None:
            raise InvalidCallError(found)
        return function(*args, **kwargs)

    return refusing  # type: ignore[return-value]


MAX_BOOT = 100_000
"""The most bootstrap replicates a call may ask for: past it, memory and time grow for nothing
(the Monte-Carlo error of a 95% interval's ends is already about 0.1% of its width at 10,000)."""

UNCERTAINTY: dict[str, Constraint] = {
    "ci": Optional(Real(0.0, 1.0, low_open=True, high_open=True)),
    "n_boot": Integer(2, MAX_BOOT),
    "seed": Integer(0, MAX_SEED),
}
"""The interval options of every metric with a resampling unit (``ci``, ``n_boot``, ``seed``)."""

COMBO_OPTION: Constraint = Optional(Several(Choice(COMBOS)))
"""The ``combo`` option of every group metric: a combo, several, or None (the values per
group)."""
