"""The Report object every family's report returns: tables, audit gates, JSON, HTML, text."""

from __future__ import annotations

import ast
import dataclasses
import datetime as dt
import decimal
import json
import math
import numbers
import operator
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from frameaudit._params import strict
from frameaudit.exceptions import InvalidParameterError
from frameaudit.report import _charts, _layout, _render

if TYPE_CHECKING:
    import altair as alt

__all__ = [
    "OPERATORS",
    "SCHEMA_VERSION",
    "Report",
    "Rule",
    "decode_table",
    "encode_table",
    "exported",
    "gate_sentence",
    "json_schema",
    "json_text",
    "jsonable",
    "parse_rule",
    "undefined",
    "verdict",
    "write_atomically",
]

SCHEMA_VERSION = 4
"""The version of the JSON layout :meth:`Report.to_dict` writes (``report/schema.json``)."""

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
}
"""The comparisons a requirement may use."""

_NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}
_TABLES = ("per_group", "summary", "worst")
_VERDICTS = {
    "requirement": pl.String,
    "metric": pl.String,
    "combo": pl.String,
    "group": pl.String,
    "value": pl.Float64,
    "lo": pl.Float64,
    "hi": pl.Float64,
    "reads": pl.String,
    "rule": pl.String,
    "outcome": pl.String,
    "passed": pl.Boolean,
    "note": pl.String,
}
READINGS = ("value", "lo", "hi")
"""What a requirement may name after its metric (``"exp:MinMaxRatio.lo"``): the value, or
one end of its interval. Unnamed, a rule reads the interval where the report has one."""
OUTCOMES = ("pass", "fail", "inconclusive")
RATIO = "ratio"
"""What a rule names after a group metric to read each group's ratio to the reference group
(``"exp:ratio"``, a report built with ``reference=``)."""


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
    by
        The partition columns (``by=``) that lead ``per_group`` and ``summary``; empty without.
    record
        The audit record: ``source`` (the input's kind, rows, resampling units, groups, and
        the file and filters where known), ``versions`` (frameaudit, Python and the engines)
        and ``created`` (UTC; set ``SOURCE_DATE_EPOCH`` for byte-identical reruns).
    verdicts
        The audit gate (:meth:`gate`): one row per rule and partition, as :meth:`check`
        returns them; None before a gate is applied.
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
    by: tuple[str, ...] = ()
    record: Mapping[str, Any] = field(default_factory=dict)
    verdicts: pl.DataFrame | None = None

    # --- audit gates --------------------------------------------------------------------------

    def check(self, requirements: Mapping[str, tuple[str, float]]) -> pl.DataFrame:
        """A verdict for each requirement on the summary's values (per partition with ``by``).

        A verdict is ``pass``, ``fail`` or ``inconclusive``. Where a value has an interval
        (``ci=``), a rule reads the interval: it passes when the whole interval satisfies it,
        fails when the whole interval violates it, and is inconclusive when the interval
        straddles the threshold, so that a gate does not pass or fail on noise. Without an
        interval, or naming one number (``"exp:MinMaxRatio.value"``, ``.lo``, ``.hi``), a rule
        reads that number: pass or fail. An undefined value (null or NaN), or an end of an
        interval the value does not have, is inconclusive: there is nothing to judge, and it
        never passes.

        Parameters
        ----------
        requirements
            ``{"metric:combo": (op, threshold)}`` for group metrics (``"exp:MinMaxRatio"``)
            and ``{"metric": (op, threshold)}`` for single-number metrics (``"ndkl"``),
            either optionally followed by ``.value``, ``.lo`` or ``.hi``; ``op`` is one of
            ``>=``, ``<=``, ``>``, ``<``.

        Returns
        -------
        A Polars DataFrame, one row per requirement (and ``by`` partition) in the given order:
        the ``by`` columns, ``requirement``, ``metric``, ``combo``, ``value``, ``lo`` and
        ``hi`` (the interval, null without one), ``reads`` (``interval``, ``value``, ``lo`` or
        ``hi``), ``rule`` (e.g. ``">= 0.8"``), ``outcome``, ``passed`` (``outcome ==
        "pass"``) and ``note``, which says why a verdict is inconclusive.

        Raises
        ------
        InvalidParameterError
            For a metric the report does not hold (saying which column or option it needs
            where the family has it), a combo the metric does not have (or a group metric
            named without a combo), a reading other than ``value``, ``lo`` and ``hi``, an
            unknown operator or a threshold that is not a number.
        """
        by = list(self.by)
        noted = "note" in self.summary.columns
        ranged = {"lo", "hi"} <= set(self.summary.columns)
        rows_of: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
        for row in self.summary.iter_rows(named=True):
            rows_of.setdefault((row["metric"], row["combo"]), []).append(row)
        combos: dict[str, list[str | None]] = {}
        for metric, combo in rows_of:
            combos.setdefault(metric, []).append(combo)
        verdicts = []
        for requirement, rule in requirements.items():
            named, dot, reading = requirement.partition(".")
            if dot and reading not in READINGS:
                raise InvalidParameterError.choice(
                    f"requirement {requirement!r}: the number read", reading, READINGS
                )
            metric, _, combo_name = named.partition(":")
            combo = combo_name or None
            if metric not in combos:
                self.layout.refuse_missing(metric)
                raise InvalidParameterError.choice("requirement metric", metric, combos)
            if combo == RATIO:
                rows = self._ratios(requirement, metric)
            elif combo not in combos[metric]:
                listed = [f"{metric}:{c}" if c else metric for c in combos[metric]]
                raise InvalidParameterError.choice("requirement", named, listed)
            else:
                rows = rows_of[(metric, combo)]
            parsed = parse_rule(requirement, rule)
            for row in rows:
                lo, hi = (row["lo"], row["hi"]) if ranged or combo == RATIO else (None, None)
                numbers = {"value": row["value"], "lo": lo, "hi": hi}
                interval = not (undefined(lo) or undefined(hi))
                reads = reading or ("interval" if interval else "value")
                reason = (row["note"] if noted else None) or "no value"
                outcome, note = verdict(numbers, reads, parsed, reason)
                verdicts.append(
                    {
                        **{c: row[c] for c in by},
                        "requirement": requirement,
                        "metric": metric,
                        "combo": combo,
                        "group": row.get("group"),
                        "value": row["value"],
                        "lo": lo,
                        "hi": hi,
                        "reads": reads,
                        "rule": parsed.text,
                        "outcome": outcome,
                        "passed": outcome == "pass",
                        "note": note,
                    }
                )
        schema: dict[str, Any] = {**self.summary.select(by).schema, **_VERDICTS}
        return pl.DataFrame(verdicts, schema=schema, orient="row")

    def _ratios(self, requirement: str, metric: str) -> list[dict[str, Any]]:
        """The rows a ``metric:ratio`` rule reads: each group but the reference, its ratio."""
        ratios = self.tables.get("ratios")
        if ratios is None:
            msg = (
                f"requirement {requirement!r}: the report holds no ratios to a reference group; "
                "build it with reference= ('largest', 'best' or a group)"
            )
            raise InvalidParameterError(msg)
        ends = [pl.col(f"ratio_{end}").alias(end) for end in ("lo", "hi")]
        if "ratio_lo" not in ratios.columns:
            ends = [pl.lit(None, pl.Float64).alias(end) for end in ("lo", "hi")]
        rows = ratios.filter(
            (pl.col("metric") == metric) & (pl.col("group") != pl.col("reference"))
        )
        return rows.select(
            *self.by,
            pl.format("{} / {}", "group", "reference").alias("group"),
            pl.col("ratio").alias("value"),
            *ends,
            pl.lit("the reference group's value is 0").alias("note"),
        ).to_dicts()

    @property
    def outcome(self) -> str | None:
        """The gate's outcome: ``fail``, ``inconclusive`` or ``pass`` (:func:`audit_outcome`).

        None before a gate is applied (:meth:`gate`).
        """
        if self.verdicts is None:
            return None
        return audit_outcome(self.verdicts["outcome"])

    def passed(self, requirements: Mapping[str, tuple[str, float]]) -> bool:
        """Whether every requirement passes (see :meth:`check`): inconclusive is not a pass."""
        return bool(self.check(requirements)["passed"].all())

    def gate(self, requirements: Mapping[str, tuple[str, float]]) -> Report:
        """A copy of the report with the verdicts of ``requirements`` (:attr:`verdicts`).

        The exports (text, HTML, JSON, Markdown) then open with the audit's outcome and list
        every rule with its verdict and the value it read.
        """
        return dataclasses.replace(self, verdicts=self.check(requirements))

    @property
    def layout(self) -> _layout.Layout:
        """How the report names its parts: its family's layout (headings, unit, headline)."""
        return _layout.family(self.family).layout

    @property
    def headline(self) -> str:
        """One sentence on the outcome: the gate's verdict when applied, then the lead finding."""
        lead = _render.lead(self)
        if self.verdicts is None:
            return lead
        return f"{gate_sentence(self.verdicts, [*self.by, 'group'])} {lead}"

    # --- export -------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON types (str, int, float, bool, None, list, dict).

        Each table is ``{"columns": [...], "dtypes": [...], "rows": [[...], ...]}``; infinite
        and NaN floats are the strings ``"inf"``, ``"-inf"`` and ``"nan"`` (strict JSON has
        no such numbers). :meth:`from_dict` reads it back.
        """
        return {
            "schema_version": SCHEMA_VERSION,
            "family": self.family,
            "title": self.title,
            "headline": self.headline,
            "passed": None if self.verdicts is None else self.outcome == "pass",
            "outcome": self.outcome,
            "verdicts": None if self.verdicts is None else encode_table(self.verdicts),
            "keys": list(self.keys),
            "by": list(self.by),
            "parameters": dict(self.parameters),
            "record": dict(self.record),
            "notes": list(self.notes),
            **{name: encode_table(getattr(self, name)) for name in _TABLES},
            "tables": {name: encode_table(frame) for name, frame in self.tables.items()},
        }

    def to_json(self, path: str | Path | None = None, *, indent: int | None = 2) -> str:
        """The report as strict JSON (:meth:`to_dict`); written to ``path`` when given.

        The file is written whole or not at all (a temporary file beside it, then renamed):
        a failed write never leaves a truncated report in place of the previous one.
        """
        return exported(json_text(self.to_dict(), indent), path)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Report:
        """The report :meth:`to_dict` wrote (the tables with their dtypes)."""
        verdicts = data.get("verdicts")
        return cls(
            family=data["family"],
            title=data["title"],
            keys=tuple(data["keys"]),
            parameters=dict(data["parameters"]),
            notes=tuple(data["notes"]),
            **{name: decode_table(data[name]) for name in _TABLES},
            tables={name: decode_table(table) for name, table in data["tables"].items()},
            by=tuple(data.get("by", ())),
            record=dict(data.get("record", {})),
            verdicts=None if verdicts is None else decode_table(verdicts),
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
        return exported(_render.html_page(self, _render.sections(self)), path)

    def to_markdown(self, path: str | Path | None = None) -> str:
        """The report as Markdown (GitHub-flavoured tables), for model cards and pull requests.

        The headline, the gate's verdicts, the tables and the audit record; no charts (the
        HTML file has them). Returns the text; writes it to ``path`` when given (atomically).
        """
        return exported(_render.markdown(self, _render.sections(self)), path)

    def _repr_html_(self) -> str:
        return _render.html_body(self, _render.sections(self))

    def __str__(self) -> str:
        return _render.text(self, _render.sections(self))

    def __repr__(self) -> str:
        return f"<frameaudit Report: {self.title}>"


@strict
def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of :meth:`Report.to_json`, shipped with the package."""
    schema: dict[str, Any] = json.loads(
        (Path(__file__).parent / "schema.json").read_text(encoding="utf-8")
    )
    return schema


def json_text(data: Mapping[str, Any], indent: int | None) -> str:
    """Strict JSON of plain values (:func:`jsonable` for the rest), ending with a newline."""
    return json.dumps(data, indent=indent, allow_nan=False, default=jsonable) + "\n"


def exported(text: str, path: str | Path | None) -> str:
    """``text``, written to ``path`` when given (:func:`write_atomically`)."""
    if path is not None:
        write_atomically(path, text)
    return text


@strict
def write_atomically(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all.

    The text goes to a temporary file in the same folder, flushed to disk, then renamed over
    ``path`` (atomic on POSIX and Windows): a full disk, a size limit or a kill leaves the
    previous file as it was, and the temporary file is removed.
    """
    target = Path(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def audit_outcome(outcomes: pl.Series) -> str:
    """The outcome of several verdicts: a fail decides, then an inconclusive one, else pass."""
    for outcome in ("fail", "inconclusive"):
        if (outcomes == outcome).any():
            return outcome
    return "pass"


def gate_sentence(verdicts: pl.DataFrame, where: Sequence[str]) -> str:
    """The gate's outcome in a sentence, with the first rule that decided it.

    ``where``: the columns that tell its rows apart (the partitions, a system).
    """
    rules = verdicts["requirement"].n_unique()
    outcome = audit_outcome(verdicts["outcome"])
    if outcome == "pass":
        return f"Audit passed: all {rules} rule(s) hold."
    against = verdicts.filter(pl.col("outcome") == outcome)
    first = against.row(0, named=True)
    located = "".join(f" for {c}={first[c]!r}" for c in where if first.get(c) is not None)
    counted = against["requirement"].n_unique()
    if outcome == "fail":
        opening = f"Audit FAILED: {counted} of {rules} rule(s) failed"
    else:
        opening = f"Audit INCONCLUSIVE: none of {rules} rule(s) failed, {counted} undecided"
    found = f"{first['requirement']}{located} = {read_by(first)}, required {first['rule']}"
    return f"{opening}; {found}."


def verdict(
    numbers: Mapping[str, float | None], reads: str, rule: Rule, reason: str
) -> tuple[str, str | None]:
    """A rule's outcome on the ``numbers`` (value, lo, hi) it reads, and why if inconclusive."""
    if undefined(numbers["value"]):
        return "inconclusive", f"undefined: {reason}"
    ends = [numbers["lo"], numbers["hi"]] if reads == "interval" else [numbers[reads]]
    read = [x for x in ends if x is not None and not math.isnan(x)]
    if len(read) < len(ends):
        return "inconclusive", f"undefined: no {reads} (no interval)"
    if all(rule.holds(x) for x in read):
        return "pass", None
    if rule.violated(min(read), max(read)):
        return "fail", None
    return "inconclusive", f"the interval [{read[0]:.4g}, {read[1]:.4g}] straddles {rule.bound}"


def undefined(value: float | None) -> bool:
    """Whether a number is missing: null or NaN."""
    return value is None or math.isnan(value)


def read_by(verdict: Mapping[str, Any]) -> str:
    """The number(s) a verdict read, as the headline shows them."""
    if undefined(verdict["value"]):
        return "undefined"
    if verdict["reads"] == "interval":
        lo, hi = verdict["lo"], verdict["hi"]
        ends = "no interval" if undefined(lo) or undefined(hi) else f"[{lo:.4g}, {hi:.4g}]"
        return f"{verdict['value']:.4g} {ends}"
    read = verdict[verdict["reads"]]
    return "undefined" if undefined(read) else f"{read:.4g}"


@dataclass(frozen=True)
class Rule:
    """A requirement's rule: ``op`` and its threshold, or ``"within"`` and a band."""

    op: str
    threshold: float
    upper: float | None = None
    """The band's upper end (``"within"`` only)."""

    @property
    def text(self) -> str:
        """As the verdicts show it: ``>= 0.8``, ``within [0.8, 1.25]``."""
        if self.upper is None:
            return f"{self.op} {self.threshold:g}"
        return f"within [{self.threshold:g}, {self.upper:g}]"

    @property
    def bound(self) -> str:
        """The threshold, or the band, an interval can straddle."""
        return self.text.partition(" ")[2]

    def holds(self, x: float) -> bool:
        """Whether the number ``x`` satisfies the rule."""
        if self.upper is None:
            return OPERATORS[self.op](x, self.threshold)
        return self.threshold <= x <= self.upper

    def violated(self, low: float, high: float) -> bool:
        """Whether every number from ``low`` to ``high`` violates the rule."""
        if self.upper is None:
            return not (self.holds(low) or self.holds(high))
        return high < self.threshold or low > self.upper


def parse_rule(requirement: str, rule: Any) -> Rule:
    """The rule of a requirement, checked: ``(op, threshold)`` or ``("within", (low, high))``."""
    if not (isinstance(rule, tuple | list) and len(rule) == 2):
        msg = f"requirement {requirement!r}: expected a rule (op, threshold), got {rule!r}"
        raise InvalidParameterError(msg)
    op, threshold = rule
    if op not in (*OPERATORS, "within"):
        raise InvalidParameterError.choice(
            f"requirement {requirement!r}: operator", op, (*OPERATORS, "within")
        )
    if op == "within":
        band = list(threshold) if isinstance(threshold, tuple | list) else []
        if len(band) != 2 or not all(map(_number, band)) or float(band[0]) > float(band[1]):
            msg = (
                f"requirement {requirement!r}: expected a band (low, high) with low <= high "
                f"after 'within', got {threshold!r}"
            )
            raise InvalidParameterError(msg)
        return Rule(op, float(band[0]), float(band[1]))
    if not _number(threshold):
        msg = f"requirement {requirement!r}: expected a number as threshold, got {threshold!r}"
        raise InvalidParameterError(msg)
    return Rule(op, float(threshold))


def _number(value: Any) -> bool:
    """Whether ``value`` is a real number (not a bool, not NaN)."""
    return (
        not isinstance(value, bool)
        and isinstance(value, numbers.Real)
        and not math.isnan(float(value))
    )


def _plain(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def jsonable(value: Any) -> Any:
    """A value json.dumps cannot write (a numpy scalar, a date, a Decimal), as JSON."""
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return _plain(value.item())
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal | Path):
        return str(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    msg = f"a report parameter of type {type(value).__name__} cannot be written as JSON"
    raise TypeError(msg)


_TEMPORAL_TEXT = (pl.Date, pl.Datetime, pl.Time)


def _encode(series: pl.Series) -> list[Any]:
    """A column as JSON values.

    Temporal values as ISO text, a duration in its unit, a decimal as text, floats with their
    infinities and NaN as strings.
    """
    dtype = series.dtype
    if isinstance(dtype, _TEMPORAL_TEXT) or dtype == pl.Date:
        return [None if v is None else v.isoformat() for v in series.to_list()]
    if isinstance(dtype, pl.Duration):
        return series.to_physical().to_list()
    if isinstance(dtype, pl.Decimal):
        return [None if v is None else str(v) for v in series.to_list()]
    if dtype.is_float():
        return [_plain(v) for v in series.to_list()]
    return series.to_list()


def _decode(name: str, values: list[Any], dtype: Any) -> pl.Series:
    """The column :func:`_encode` wrote, with its dtype."""
    if dtype == pl.Date:
        return pl.Series(name, values, dtype=pl.String).str.to_date()
    if isinstance(dtype, pl.Datetime):
        text = pl.Series(name, values, dtype=pl.String)
        return text.str.to_datetime(time_unit=dtype.time_unit, time_zone=dtype.time_zone)
    if dtype == pl.Time:
        return pl.Series(name, values, dtype=pl.String).str.to_time()
    if isinstance(dtype, pl.Duration):
        return pl.Series(name, values, dtype=pl.Int64).cast(dtype)
    if isinstance(dtype, pl.Decimal | pl.Enum | pl.Categorical):
        return pl.Series(name, values, dtype=pl.String).cast(dtype)
    if dtype.is_float():
        values = [_NON_FINITE.get(v, v) if isinstance(v, str) else v for v in values]
    return pl.Series(name, values, dtype=dtype)


def encode_table(frame: pl.DataFrame) -> dict[str, Any]:
    """A table as plain JSON values: its columns, their dtypes and its rows."""
    columns = [_encode(frame[c]) for c in frame.columns]
    return {
        "columns": frame.columns,
        "dtypes": [str(dtype) for dtype in frame.dtypes],
        "rows": [list(row) for row in zip(*columns, strict=True)],
    }


def decode_table(table: Mapping[str, Any]) -> pl.DataFrame:
    """The table :func:`encode_table` wrote, with its dtypes."""
    names, rows = table["columns"], table["rows"]
    return pl.DataFrame(
        [
            _decode(name, [row[i] for row in rows], _dtype(text))
            for i, (name, text) in enumerate(zip(names, table["dtypes"], strict=True))
        ]
    )


_PARAMETRIC = {"Datetime", "Duration", "Decimal", "Enum", "List", "Array", "Categorical"}


def _dtype(text: str) -> Any:
    """A Polars dtype from its text (``str(dtype)``), read without evaluating any code.

    A name (``Int64``) or a call of a parametric dtype whose arguments are literals
    (``Datetime(time_unit='us', time_zone='UTC')``, ``Enum(categories=['b', 'a'])``) or
    dtypes themselves (``List(Int64)``).
    """

    def build(node: ast.expr) -> Any:
        if isinstance(node, ast.Name) and isinstance(getattr(pl, node.id, None), type):
            return getattr(pl, node.id)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _PARAMETRIC
        ):
            arguments = [build_argument(a) for a in node.args]
            keywords = {k.arg: build_argument(k.value) for k in node.keywords if k.arg}
            return getattr(pl, node.func.id)(*arguments, **keywords)
        msg = f"a report table has the unknown dtype {text!r}"
        raise InvalidParameterError(msg)

    def build_argument(node: ast.expr) -> Any:
        if isinstance(node, ast.Name | ast.Call):
            return build(node)
        return ast.literal_eval(node)

    return build(ast.parse(text, mode="eval").body)
