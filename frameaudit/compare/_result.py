"""The Comparison every family's comparison returns: its table, gates, charts and exports."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from frameaudit.exceptions import InvalidParameterError
from frameaudit.report import _charts, _render, _tables
from frameaudit.report._render import Section
from frameaudit.report._report import (
    audit_outcome,
    decode_table,
    encode_table,
    exported,
    gate_sentence,
    json_text,
    parse_rule,
    verdict,
)

if TYPE_CHECKING:
    import altair as alt

__all__ = ["READINGS", "SCHEMA_VERSION", "Comparison"]

SCHEMA_VERSION = 1
"""The version of the JSON layout :meth:`Comparison.to_dict` writes."""

READINGS = ("difference", "lo", "hi", "value", "baseline_value", "p_value", "p_adjusted")
"""What a rule on a comparison may read after its row's name (``"exp:MinMaxRatio.p_adjusted"``):
the difference, an end of its interval, either system's value or a p-value. Unnamed, a rule
reads the difference's interval."""

_DIFFERENCE = {"difference": "value", "lo": "lo", "hi": "hi"}
_VERDICTS = {
    "requirement": pl.String,
    "metric": pl.String,
    "combo": pl.String,
    "group": pl.String,
    "system": pl.String,
    "reading": pl.String,
    "value": pl.Float64,
    "lo": pl.Float64,
    "hi": pl.Float64,
    "reads": pl.String,
    "rule": pl.String,
    "outcome": pl.String,
    "passed": pl.Boolean,
    "note": pl.String,
}
_SIGNIFICANCE = 0.05
_BRIEF = ("metric", "combo", "group", "system", "difference", "difference_lo", "difference_hi")


@dataclass(frozen=True, eq=False)
class Comparison:
    """Systems compared on the same units: one row per (metric, combo, group, system).

    Attributes
    ----------
    family
        The metric family (``"ranking"``).
    table
        Polars: the ``by`` columns, then ``metric``, ``combo`` (null for single-number
        metrics and per-group rows), ``group`` (null for a combined value), ``system`` (every
        system but the baseline), ``value``, ``baseline_value``, ``difference`` (value −
        baseline_value) with ``difference_lo`` and ``difference_hi`` (the paired bootstrap's
        interval at ``ci``), ``p_value`` (the randomisation test's, two-sided), the units
        behind them (``rankings``, ``points``, ``samples`` or ``queries``) and ``p_adjusted``
        (with ``correction`` over every row).
    baseline
        The baseline system.
    systems
        Every system, in sort order.
    parameters
        The options the comparison was computed with (plain values).
    dropped
        Units left out because some system lacks them (``on_missing="drop"``).
    record
        The audit record, as a report's: ``source`` (the input's kind, rows and units),
        ``versions`` and ``created`` (UTC; ``SOURCE_DATE_EPOCH`` for byte-identical reruns).
    verdicts
        The gate (:meth:`gate`): one row per rule, partition and system, as :meth:`check`
        returns them; None before a gate is applied.
    """

    family: str
    table: pl.DataFrame
    baseline: Any
    systems: tuple[Any, ...]
    parameters: Mapping[str, Any] = field(default_factory=dict)
    dropped: int = 0
    record: Mapping[str, Any] = field(default_factory=dict)
    verdicts: pl.DataFrame | None = None

    @property
    def by(self) -> tuple[str, ...]:
        """The partition columns (``by=``) that lead the table; empty without."""
        return tuple(self.table.columns[: self.table.columns.index("metric")])

    @property
    def title(self) -> str:
        """One line saying what was compared."""
        others = ", ".join(str(s) for s in self.systems if s != self.baseline)
        return f"Comparison of {self.family} systems: {others} against {self.baseline}"

    # --- audit gates --------------------------------------------------------------------------

    def check(self, requirements: Mapping[str, tuple[str, float]]) -> pl.DataFrame:
        """A verdict for each requirement on each system's row (per partition with ``by``).

        A rule names a row of the table, ``"metric:combo"`` (``"exp:MinMaxRatio"``),
        ``"metric:group"`` (a per-group row, ``"exp:f"``) or ``"metric"`` (a single-number
        metric), optionally followed by what it reads (:data:`READINGS`). Unnamed, it reads
        the difference's interval: it passes when the whole interval satisfies it (``(">=",
        0)``: B is at least as fair as the baseline, on the evidence), fails when the whole
        interval violates it, and is inconclusive when the interval straddles the bound. A
        rule on one number (``.difference``, ``.lo``, ``.hi``, ``.value``,
        ``.baseline_value``, ``.p_value``, ``.p_adjusted``) passes or fails; an undefined
        number is inconclusive.

        Returns
        -------
        A Polars DataFrame, one row per requirement, partition and system: the ``by``
        columns, ``requirement``, ``metric``, ``combo``, ``group``, ``system``, ``reading``,
        ``value`` (the number read, or the difference), ``lo`` and ``hi`` (the difference's
        interval where read), ``reads`` (``interval``, ``value``, ``lo`` or ``hi``), ``rule``,
        ``outcome``, ``passed`` and ``note``.

        Raises
        ------
        InvalidParameterError
            For a metric, combo or group the table does not hold, a group metric named
            without a combo or group, a reading outside :data:`READINGS`, an unknown operator
            or a threshold that is not a number.
        """
        by = list(self.by)
        verdicts = []
        for requirement, rule in requirements.items():
            named, dot, reading = requirement.partition(".")
            if dot and reading not in READINGS:
                raise InvalidParameterError.choice(
                    f"requirement {requirement!r}: the number read", reading, READINGS
                )
            parsed = parse_rule(requirement, rule)
            for row in self._rows(named).iter_rows(named=True):
                if reading in ("", *_DIFFERENCE):
                    numbers = {
                        "value": row["difference"],
                        "lo": row["difference_lo"],
                        "hi": row["difference_hi"],
                    }
                    interval = all(numbers[end] is not None for end in ("lo", "hi"))
                    reads = _DIFFERENCE.get(reading, "interval" if interval else "value")
                else:
                    numbers = {"value": row[reading], "lo": None, "hi": None}
                    reads = "value"
                outcome, note = verdict(numbers, reads, parsed, "no value")
                verdicts.append(
                    {
                        **{c: row[c] for c in by},
                        "requirement": requirement,
                        "metric": row["metric"],
                        "combo": row["combo"],
                        "group": row["group"],
                        "system": row["system"],
                        "reading": reading or "difference",
                        **numbers,
                        "reads": reads,
                        "rule": parsed.text,
                        "outcome": outcome,
                        "passed": outcome == "pass",
                        "note": note,
                    }
                )
        schema: dict[str, Any] = {**self.table.select(by).schema, **_VERDICTS}
        return pl.DataFrame(verdicts, schema=schema, orient="row")

    def _rows(self, named: str) -> pl.DataFrame:
        """The table's rows a rule names (``metric``, ``metric:combo`` or ``metric:group``)."""
        metric, colon, part = named.partition(":")
        metrics = self.table["metric"].unique(maintain_order=True).to_list()
        if metric not in metrics:
            raise InvalidParameterError.choice("requirement metric", metric, metrics)
        rows = self.table.filter(pl.col("metric") == metric)
        names = [
            f"{metric}:{row['combo'] or row['group']}" if row["combo"] or row["group"] else metric
            for row in rows.unique(["combo", "group"], maintain_order=True).iter_rows(named=True)
        ]
        if not colon:
            chosen = rows.filter(pl.col("combo").is_null() & pl.col("group").is_null())
        else:
            chosen = rows.filter((pl.col("combo") == part) | (pl.col("group") == part))
        if chosen.is_empty():
            raise InvalidParameterError.choice("requirement", named, names)
        return chosen

    @property
    def outcome(self) -> str | None:
        """The gate's outcome: ``fail``, ``inconclusive`` or ``pass``; None before a gate."""
        return None if self.verdicts is None else audit_outcome(self.verdicts["outcome"])

    def passed(self, requirements: Mapping[str, tuple[str, float]]) -> bool:
        """Whether every requirement passes (see :meth:`check`): inconclusive is not a pass."""
        return bool(self.check(requirements)["passed"].all())

    def gate(self, requirements: Mapping[str, tuple[str, float]]) -> Comparison:
        """A copy with the verdicts of ``requirements`` (:attr:`verdicts`).

        The exports then open with the audit's outcome and list every rule with its verdict.
        """
        return dataclasses.replace(self, verdicts=self.check(requirements))

    @property
    def headline(self) -> str:
        """One sentence: the gate's verdict when applied, then the significant differences.

        How many are significant at 5% (after the correction), and the most significant.
        """
        lead = self._lead()
        if self.verdicts is None:
            return lead
        return f"{gate_sentence(self.verdicts, [*self.by, 'system'])} {lead}"

    def _p(self) -> str:
        """The p-value column to read: the adjusted one, unless no correction was asked for."""
        return "p_adjusted" if self.parameters.get("correction") else "p_value"

    def _lead(self) -> str:
        p = self._p()
        corrected = {"holm": " after Holm's correction", "bh": " after Benjamini-Hochberg's"}
        after = corrected.get(str(self.parameters.get("correction")), "")
        tested = self.table.filter(pl.col(p).is_not_null())
        significant = tested.filter(pl.col(p) < _SIGNIFICANCE)
        text = (
            f"{significant.height} of {tested.height} differences from {self.baseline} are "
            f"significant at {_SIGNIFICANCE:.0%}{after}"
        )
        if significant.is_empty():
            return text + "." + self._resolution(tested.height)
        first = significant.sort(p, pl.col("difference").abs(), descending=[False, True]).row(
            0, named=True
        )
        where = "".join(f", {c}={first[c]!r}" for c in self.by)
        part = first["combo"] or first["group"]
        name = first["metric"].upper() + (f" {part}" if part else "")
        level = self.parameters.get("ci", 0.95)
        return (
            f"{text}; the strongest: {name}{where}, {first['system']} − {self.baseline} = "
            f"{first['difference']:+.3g} ({level:.0%} interval {first['difference_lo']:.3g} to "
            f"{first['difference_hi']:.3g}, {p} {first[p]:.3g})."
        )

    def _resolution(self, tested: int) -> str:
        """Where the permutations are too few for any adjusted p-value to reach 5%: how many."""
        permutations = self.parameters.get("n_perm")
        holm = self.parameters.get("correction") == "holm"
        if not isinstance(permutations, int) or tested == 0:
            return ""
        smallest = (tested if holm else 1) / (1 + permutations)
        if smallest < _SIGNIFICANCE:
            return ""
        needed = math.ceil((tested if holm else 1) / _SIGNIFICANCE)
        adjusted = f"Holm's p_adjusted over {tested} rows" if holm else "p-value"
        return (
            f" With n_perm={permutations}, the smallest {adjusted} is {smallest:.3g}: no row "
            f"can reach {_SIGNIFICANCE:.0%}; ask for n_perm={needed:,} or more (or fewer "
            "metrics)."
        )

    # --- shown --------------------------------------------------------------------------------

    def sections(self) -> list[Section]:
        """What the comparison shows, in order (the title and headline come before them)."""
        shown = []
        if self.verdicts is not None:
            shown.append(Section("Audit gate", self.verdicts))
        level = self.parameters.get("ci", 0.95)
        # a family without combos or per-group rows shows no such column
        empty = [c for c in ("combo", "group") if self.table[c].is_null().all()]
        table = self.table.drop(empty)
        shown += [
            Section(
                f"Differences from {self.baseline} ({level:.0%} paired bootstrap intervals)",
                table,
                brief=table.select(*self.by, *(c for c in _BRIEF if c not in empty), self._p()),
                brief_note="each system's value and the raw p-value in .table",
                keep=len(self.by) + 4 - len(empty),
            ),
            Section("Charts", charts=True),
            Section("How to read it", paragraphs=self._notes()),
            Section(
                "Audit record",
                record=tuple(_render.record_lines(self.parameters, self.record)),
            ),
        ]
        return shown

    def _notes(self) -> tuple[str, ...]:
        unit = self._unit()
        notes: tuple[str, ...] = (
            f"difference = value − baseline_value, each system's metric on the same {unit}. The "
            f"interval is the paired bootstrap's: a replicate draws {unit}, and a drawn unit "
            "brings every system's rows, so it is the interval of the difference on the same "
            "units, not of two separate samples.",
            "p_value is a paired randomisation test's (two-sided): within each unit the two "
            "systems' rows are exchanged at random; a small p says a difference this large is "
            "rare when the systems are interchangeable. p_adjusted corrects it for the number "
            "of rows tested (Holm: the chance of any false finding; Benjamini-Hochberg: the "
            "share of false findings).",
            "A rule on a difference reads its interval: inconclusive when the interval "
            "straddles the bound. More units narrow the interval.",
        )
        if self.dropped:
            notes += (f"{self.dropped} unit(s) some system lacks were left out.",)
        return notes

    def _unit(self) -> str:
        return str(self.table.columns[self.table.columns.index("p_value") + 1])

    def charts(self) -> dict[str, alt.Chart | alt.LayerChart]:
        """The differences with their intervals and the zero line (Altair), by name.

        Per group metric its groups and its combos, then the single-number metrics.
        """
        keys = [*self.by, "system"] if len(self.systems) > 2 else list(self.by)
        charts: dict[str, Any] = {}
        level = self.parameters.get("ci", 0.95)
        single = pl.col("combo").is_null() & pl.col("group").is_null()
        parts = {"groups": pl.col("group").is_not_null(), "combos": pl.col("combo").is_not_null()}
        for metric in self.table.filter(~single)["metric"].unique(maintain_order=True):
            for part, rows in parts.items():
                data = self.table.filter((pl.col("metric") == metric) & rows)
                if data.is_empty():
                    continue
                label = pl.col("group") if part == "groups" else pl.col("combo")
                title = f"{metric.upper()} {part}"
                charts[f"{metric}_{part}"] = self._chart(data, label, keys, title, level=level)
        singles = self.table.filter(single)
        if not singles.is_empty():
            names = singles["metric"].unique(maintain_order=True).to_list()
            name = names[0] if len(names) == 1 else "metrics"
            title = names[0].upper() if len(names) == 1 else "Single-number metrics"
            charts[name] = self._chart(singles, pl.col("metric"), keys, title, level=level)
        return charts

    def _chart(
        self,
        data: pl.DataFrame,
        label: pl.Expr,
        keys: list[str],
        title: str,
        *,
        level: float,
    ) -> Any:
        """One chart of ``data``'s differences, a row per ``label`` (after the ``keys``)."""
        if keys:
            label = pl.concat_str(_tables.label(keys, data.schema), pl.lit(": "), label)
        shown = data.select(
            _charts.shortened(label.fill_null("—")).alias("row"),
            "difference",
            "difference_lo",
            "difference_hi",
            "p_value",
            "p_adjusted",
        )
        return _charts.estimates(
            shown,
            value="difference",
            label="row",
            reference=0.0,
            x=_charts.altair().X(
                "difference:Q", title=f"difference from {self.baseline} ({level:.0%})"
            ),
            y_title=None,
            title=f"{title}: difference from {self.baseline}",
            subtitle=f"Dashed: no difference from {self.baseline}.",
            tooltip=["difference", "difference_lo", "difference_hi", "p_value", "p_adjusted"],
        )

    # --- export -------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The comparison as plain JSON types (tables as a report's, :meth:`from_dict`)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": "comparison",
            "family": self.family,
            "title": self.title,
            "headline": self.headline,
            "passed": None if self.verdicts is None else self.outcome == "pass",
            "outcome": self.outcome,
            "verdicts": None if self.verdicts is None else encode_table(self.verdicts),
            "baseline": self.baseline,
            "systems": list(self.systems),
            "dropped": self.dropped,
            "parameters": dict(self.parameters),
            "record": dict(self.record),
            "table": encode_table(self.table),
        }

    def to_json(self, path: str | Path | None = None, *, indent: int | None = 2) -> str:
        """The comparison as strict JSON (:meth:`to_dict`); written to ``path`` atomically."""
        return exported(json_text(self.to_dict(), indent), path)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Comparison:
        """The comparison :meth:`to_dict` wrote."""
        verdicts = data.get("verdicts")
        return cls(
            family=data["family"],
            table=decode_table(data["table"]),
            baseline=data["baseline"],
            systems=tuple(data["systems"]),
            parameters=dict(data["parameters"]),
            dropped=int(data["dropped"]),
            record=dict(data["record"]),
            verdicts=None if verdicts is None else decode_table(verdicts),
        )

    @classmethod
    def from_json(cls, text: str) -> Comparison:
        """The comparison :meth:`to_json` wrote."""
        return cls.from_dict(json.loads(text))

    def to_html(self, path: str | Path | None = None) -> str:
        """One self-contained HTML file (charts as inline SVG); written to ``path`` atomically."""
        return exported(_render.html_page(self, self.sections()), path)

    def to_markdown(self, path: str | Path | None = None) -> str:
        """Markdown (GitHub-flavoured tables, no charts); written to ``path`` atomically."""
        return exported(_render.markdown(self, self.sections()), path)

    def _repr_html_(self) -> str:
        return _render.html_body(self, self.sections())

    def __str__(self) -> str:
        return _render.text(self, self.sections())

    def __repr__(self) -> str:
        return f"<Comparison {self.family}: {self.headline}>"
