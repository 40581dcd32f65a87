"""The metric registry: what each public function of a family is, declared beside its ``def``.

A family decorates each public function with :func:`registered`, which records a
:class:`Metric` and returns the function unchanged. Everything that lists metrics reads the
registry instead of keeping its own list: the DataFrame namespaces, the reports (which metrics a
section shows, what their best value means, what a left-out metric needs), the command line,
the docs' API page and the tests. :func:`metrics` lists the entries of a family in the order
the family defines them (importing ``frameaudit`` imports every family, and so fills it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

__all__ = ["FAMILIES", "KINDS", "Kind", "Metric", "entry", "metrics", "registered", "shown"]

Kind = Literal["group", "single", "clusters", "pairs", "table"]
KINDS: tuple[Kind, ...] = ("group", "single", "clusters", "pairs", "table")
"""What a call returns, per partition: ``group``, a value per group combined by a combo (or
the values with ``combo=None``); ``single``, one value; ``clusters``, a value from per-cluster
terms (the terms with ``per_cluster=True``); ``pairs``, a value per pair of runs summarised over
the pairs (``pairwise=True``: the pairs); ``table``, a table that is not one metric (a summary
of several, the nearest cases)."""

FAMILIES = {
    "ranking": "fair",
    "clustering": "fair",
    "repro": "repro",
    "explain": "xai",
}
"""Each family and the DataFrame namespace its functions are reached by."""

_RANGE = re.compile(r"^([\[(])(-?[\d.]+|-inf), (-?[\d.]+|inf)([\])])$")

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Metric:
    """One public function of a family, as the rest of the package needs to know it."""

    name: str
    """The function's name, which is also its output column."""
    family: str
    function: Callable[..., Any]
    kind: Kind
    unit: str | None
    """The output column counting the resampling units behind an interval (``rankings``,
    ``points``, ``samples``, ``queries``); None where the function gives no interval."""
    best: str | None
    """What the best value is and means, as a report states it (a group metric's is its
    combo's); None where there is none to state."""
    range: str | None
    """The values it takes, as an interval (``[0, 1]``, ``[0, inf)``)."""
    roles: Mapping[str, str] = field(default_factory=dict)
    """Roles a report passes only when given: the function's parameter → the report's."""
    options: tuple[str, ...] = ()
    """Parameters a report passes through under the same name (``p``, ``decay``)."""
    note: str = ""
    """Said after what the function needs, where a report leaves it out (``(binary
    relevance)``)."""
    worst: Literal["low", "high"] | None = None
    """For ``clusters``, whether the lowest or the highest cluster term is the worst; for
    ``pairs``, the same of the pairs (None where no pair is worse than another: EC_g); for a
    multiplicity table, the same of the groups' values of its first output column."""
    grouped: bool = True
    """Whether it takes the items' groups (``group=``, ``groups=``, ``universe=``) as the
    group metrics do; False for a metric without groups (IAA) or whose groups are the
    rankings' (nDCG's quality of service per group)."""
    outputs: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """For a ``table`` whose columns a report shows as metrics: each column's best value and
    what it means, and its range (``{"ee_l": ("lower is better …", "[0, inf)")}``)."""

    @property
    def namespace(self) -> str:
        """The DataFrame namespace the function is reached by (``df.fair.exp``)."""
        return FAMILIES[self.family]

    @property
    def needs(self) -> str:
        """What a report needs to compute it, e.g. ``relevance= and ctr=`` ('' if nothing)."""
        needed = " and ".join(f"{parameter}=" for parameter in self.roles.values())
        return f"{needed} {self.note}".strip()

    @property
    def bounds(self) -> tuple[float, float, bool, bool]:
        """The range as numbers: (low, high, low included, high included)."""
        assert self.range is not None
        found = _RANGE.match(self.range)
        assert found is not None, self.range
        opening, low, high, closing = found.groups()
        return float(low), float(high), opening == "[", closing == "]"


_ENTRIES: dict[str, Metric] = {}


def registered(
    family: str,
    kind: Kind,
    *,
    unit: str | None = None,
    best: str | None = None,
    range: str | None = None,
    roles: Mapping[str, str] | None = None,
    options: tuple[str, ...] = (),
    note: str = "",
    worst: Literal["low", "high"] | None = None,
    outputs: Mapping[str, tuple[str, str]] | None = None,
    grouped: bool = True,
) -> Callable[[F], F]:
    """Record the decorated function in the registry as a ``kind`` of ``family``.

    The function is returned as it is: the entry describes it, nothing wraps it. A name
    registered twice (a module reloaded) keeps its place and takes the new entry.
    """
    if family not in FAMILIES:
        msg = f"unknown family {family!r}; one of {sorted(FAMILIES)}"
        raise ValueError(msg)
    for shown in [range, *(r for _, r in (outputs or {}).values())]:
        if shown is not None and not _RANGE.match(shown):
            msg = f"range {shown!r} is not an interval like '[0, inf)'"
            raise ValueError(msg)

    def record(function: F) -> F:
        name = function.__name__
        _ENTRIES[name] = Metric(
            name,
            family,
            function,
            kind,
            unit,
            best,
            range,
            dict(roles or {}),
            options,
            note,
            worst,
            grouped,
            dict(outputs or {}),
        )
        return function

    return record


def metrics(family: str | None = None, *kinds: Kind) -> tuple[Metric, ...]:
    """The registered functions of ``family`` (all if None) of the ``kinds`` (all if none).

    In the order the families define them.
    """
    return tuple(
        metric
        for metric in _ENTRIES.values()
        if (family is None or metric.family == family) and (not kinds or metric.kind in kinds)
    )


def entry(name: str) -> Metric:
    """The registry entry of the function ``name``."""
    return _ENTRIES[name]


def shown(name: str) -> tuple[str, str]:
    """What the best value of ``name`` is and means, and its range.

    ``name`` is a single metric, or an output column of a table (:attr:`Metric.outputs`).
    """
    found = _ENTRIES.get(name)
    if found is not None and found.best is not None and found.range is not None:
        return found.best, found.range
    for metric in _ENTRIES.values():
        if name in metric.outputs:
            return metric.outputs[name]
    msg = f"{name!r} is neither a single metric nor a table's output column"
    raise KeyError(msg)
