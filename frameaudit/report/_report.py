"""The Report object every family's report returns: tables, audit gates, JSON, HTML, text."""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from frameaudit.exceptions import InvalidParameterError
from frameaudit.report import _charts, _html, _text

if TYPE_CHECKING:
    import altair as alt

__all__ = ["OPERATORS", "Report"]

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
}
"""The comparisons a requirement may use."""

_NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}
_TABLES = ("per_group", "summary", "worst")


@dataclass(frozen=True, eq=False)
class Report:
    """A family's metrics on one frame, ready to read, chart, export and gate on.

    Attributes
    ----------
    family
        The metric family (``"ranking"``).
    title
        One line saying what was measured.
    keys
        The columns of ``per_group`` that name a group.
    per_group
        One row per group: the keys, the group size ``n`` and every group metric's value
        (with ``ci``, its ``<metric>_lo`` and ``<metric>_hi`` and the resampling units).
    summary
        One row per (metric, combo): ``metric``, ``combo`` (null for single-number metrics),
        ``value``, ``lo``, ``hi`` (null where no interval was computed), ``direction`` (what
        parity or fairness looks like) and ``range``.
    worst
        For each metric, the group (or ranking) furthest from parity: ``metric``, ``kind``,
        ``name``, ``value``, ``reference`` (the parity value it is compared with) and ``gap``.
    tables
        The family's further tables behind its charts (e.g. NDKL per ranking).
    parameters
        The options the report was computed with (plain values).
    notes
        Sentences on how to read the report.
    """

    family: str
    title: str
    keys: tuple[str, ...]
    per_group: pl.DataFrame
    summary: pl.DataFrame
    worst: pl.DataFrame
    tables: Mapping[str, pl.DataFrame] = field(default_factory=dict)
    parameters: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    # --- audit gates --------------------------------------------------------------------------

    def check(self, requirements: Mapping[str, tuple[str, float]]) -> pl.DataFrame:
        """A verdict for each requirement on the summary's values.

        Parameters
        ----------
        requirements
            ``{"metric:combo": (op, threshold)}`` for group metrics (``"exp:MinMaxRatio"``)
            and ``{"metric": (op, threshold)}`` for single-number metrics (``"ndkl"``); ``op``
            is one of ``>=``, ``<=``, ``>``, ``<``.

        Returns
        -------
        A Polars DataFrame, one row per requirement in the given order: ``requirement``,
        ``metric``, ``combo``, ``value``, ``rule`` (e.g. ``">= 0.8"``) and ``passed``
        (Boolean; False where the value is null or NaN).

        Raises
        ------
        InvalidParameterError
            For a metric the report does not hold, a combo the metric does not have (or a
            group metric named without a combo), an unknown operator or a threshold that is
            not a number.
        """
        values = {
            (row["metric"], row["combo"]): row["value"]
            for row in self.summary.select("metric", "combo", "value").iter_rows(named=True)
        }
        combos: dict[str, list[str | None]] = {}
        for metric, combo in values:
            combos.setdefault(metric, []).append(combo)
        rows = []
        for requirement, rule in requirements.items():
            metric, _, combo_name = requirement.partition(":")
            combo = combo_name or None
            if metric not in combos:
                raise InvalidParameterError.choice("requirement metric", metric, combos)
            if combo not in combos[metric]:
                named = [f"{metric}:{c}" if c else metric for c in combos[metric]]
                raise InvalidParameterError.choice("requirement", requirement, named)
            op, threshold = _rule(requirement, rule)
            value = values[(metric, combo)]
            passed = value is not None and not math.isnan(value) and OPERATORS[op](value, threshold)
            rows.append((requirement, metric, combo, value, f"{op} {threshold:g}", passed))
        schema = {
            "requirement": pl.String,
            "metric": pl.String,
            "combo": pl.String,
            "value": pl.Float64,
            "rule": pl.String,
            "passed": pl.Boolean,
        }
        return pl.DataFrame(rows, schema=schema, orient="row")

    def passed(self, requirements: Mapping[str, tuple[str, float]]) -> bool:
        """Whether every requirement holds (see :meth:`check`)."""
        return bool(self.check(requirements)["passed"].all())

    # --- export -------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON types (str, int, float, bool, None, list, dict).

        Each table is ``{"columns": [...], "dtypes": [...], "rows": [[...], ...]}``; infinite
        and NaN floats are the strings ``"inf"``, ``"-inf"`` and ``"nan"`` (strict JSON has
        no such numbers). :meth:`from_dict` reads it back.
        """
        return {
            "family": self.family,
            "title": self.title,
            "keys": list(self.keys),
            "parameters": dict(self.parameters),
            "notes": list(self.notes),
            **{name: _table(getattr(self, name)) for name in _TABLES},
            "tables": {name: _table(frame) for name, frame in self.tables.items()},
        }

    def to_json(self, path: str | Path | None = None, *, indent: int | None = 2) -> str:
        """The report as strict JSON (:meth:`to_dict`); written to ``path`` when given."""
        text = json.dumps(self.to_dict(), indent=indent, allow_nan=False)
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Report:
        """The report :meth:`to_dict` wrote (the tables with their dtypes)."""
        return cls(
            family=data["family"],
            title=data["title"],
            keys=tuple(data["keys"]),
            parameters=dict(data["parameters"]),
            notes=tuple(data["notes"]),
            **{name: _frame(data[name]) for name in _TABLES},
            tables={name: _frame(table) for name, table in data["tables"].items()},
        )

    @classmethod
    def from_json(cls, text: str) -> Report:
        """The report :meth:`to_json` wrote."""
        return cls.from_dict(json.loads(text))

    def charts(self) -> dict[str, alt.Chart | alt.LayerChart]:
        """The report's charts (Altair), by name; needs the ``report`` extra."""
        return _charts.build(self)

    def to_html(self, path: str | Path | None = None) -> str:
        """The report as one self-contained HTML file: styles inline, charts as inline SVG.

        The page loads nothing (no script, stylesheet, font or image from anywhere), so it
        opens offline. Returns the HTML; writes it to ``path`` when given.
        """
        text = _html.page(self)
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    def _repr_html_(self) -> str:
        return _html.body(self)

    def __str__(self) -> str:
        return _text.render(self)

    def __repr__(self) -> str:
        return f"<frameaudit Report: {self.title}>"


def _rule(requirement: str, rule: Any) -> tuple[str, float]:
    """The operator and threshold of a requirement's rule, checked."""
    if not (isinstance(rule, tuple | list) and len(rule) == 2):
        msg = f"requirement {requirement!r}: expected a rule (op, threshold), got {rule!r}"
        raise InvalidParameterError(msg)
    op, threshold = rule
    if op not in OPERATORS:
        raise InvalidParameterError.choice(f"requirement {requirement!r}: operator", op, OPERATORS)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        msg = f"requirement {requirement!r}: expected a number as threshold, got {threshold!r}"
        raise InvalidParameterError(msg)
    return op, float(threshold)


def _plain(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _table(frame: pl.DataFrame) -> dict[str, Any]:
    return {
        "columns": frame.columns,
        "dtypes": [str(dtype) for dtype in frame.dtypes],
        "rows": [[_plain(value) for value in row] for row in frame.iter_rows()],
    }


def _frame(table: Mapping[str, Any]) -> pl.DataFrame:
    schema = {
        name: getattr(pl, dtype)
        for name, dtype in zip(table["columns"], table["dtypes"], strict=True)
    }
    rows = [
        [
            _NON_FINITE.get(value, value)
            if isinstance(value, str) and schema[name] == pl.Float64
            else value
            for name, value in zip(table["columns"], row, strict=True)
        ]
        for row in table["rows"]
    ]
    return pl.DataFrame(rows, schema=schema, orient="row")
