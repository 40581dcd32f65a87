"""What a family's report is made of, below the Report and its renderers.

A builder module (``_ranking``, ``_clustering``, ``_repro``, ``_explain``) declares its
family's :class:`Layout` and charts once (:func:`declare`); a :class:`~frameaudit.report.Report`
reads its own through :attr:`~frameaudit.report.Report.layout`. The renderers and the charts
read a report through :class:`Shown`, the attributes they use, so that nothing below the
Report imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import polars as pl

from frameaudit.exceptions import InvalidParameterError

__all__ = ["Family", "Layout", "Shown", "declare", "family"]


@dataclass(frozen=True)
class Layout:
    """How a family's report names its parts in text, Markdown and HTML.

    Attributes
    ----------
    per_group
        The heading of the per-group table ("Per group (n: the group size)").
    worst
        What the ``worst`` table lists and the parity it is measured from.
    unit
        The resampling unit of the intervals, plural ("rankings"); the summary's column that
        counts them with ``ci``.
    shown
        The family's further tables that text and HTML show after ``worst``, by name, with
        their headings (the others are in ``tables`` and behind the charts).
    rows
        What a row of ``per_group`` is, plural ("groups", "pairs of runs").
    lead
        The summary row the headline leads with: (metric, combo or None).
    needs
        The metrics a report may leave out, and what each needs ("relevance="): a rule on
        one that the report does not hold says so.
    """

    per_group: str
    worst: str
    unit: str
    shown: Mapping[str, str] = field(default_factory=dict)
    rows: str = "groups"
    lead: tuple[str, str | None] | None = None
    needs: Mapping[str, str] = field(default_factory=dict)

    def refuse_missing(self, metric: str) -> None:
        """Raise, for a rule on a metric the report left out, what the metric needs."""
        if metric in self.needs:
            msg = (
                f"requirement metric={metric!r}: {metric.upper()} needs {self.needs[metric]}, "
                "and this report was built without it; build the report with it to gate on "
                "the metric"
            )
            raise InvalidParameterError(msg)


class Shown(Protocol):
    """What the renderers and the charts read of a report (a Report is one)."""

    @property
    def family(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def keys(self) -> tuple[str, ...]: ...
    @property
    def by(self) -> tuple[str, ...]: ...
    @property
    def per_group(self) -> pl.DataFrame: ...
    @property
    def summary(self) -> pl.DataFrame: ...
    @property
    def worst(self) -> pl.DataFrame: ...
    @property
    def tables(self) -> Mapping[str, pl.DataFrame]: ...
    @property
    def parameters(self) -> Mapping[str, Any]: ...
    @property
    def notes(self) -> tuple[str, ...]: ...
    @property
    def record(self) -> Mapping[str, Any]: ...
    @property
    def verdicts(self) -> pl.DataFrame | None: ...
    @property
    def outcome(self) -> str | None: ...
    @property
    def layout(self) -> Layout: ...
    @property
    def headline(self) -> str: ...
    def charts(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Family:
    """A family's report as its builder declared it: its layout and its charts."""

    layout: Layout
    charts: Callable[[Shown], dict[str, Any]]


_FAMILIES: dict[str, Family] = {}


def declare(name: str, layout: Layout, charts: Callable[[Any], dict[str, Any]]) -> None:
    """Declare the family ``name``'s report (each builder module does, once, at its end)."""
    _FAMILIES[name] = Family(layout, charts)


def family(name: str) -> Family:
    """The family ``name`` as its builder module declared it (:func:`declare`)."""
    return _FAMILIES[name]
