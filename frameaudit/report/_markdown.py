"""A report as Markdown: the headline, the gate, the tables and the audit record."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from frameaudit.report import _views
from frameaudit.report._text import format_value

if TYPE_CHECKING:
    from frameaudit.report._report import Report

__all__ = ["render", "table"]


def render(report: Report) -> str:
    """GitHub-flavoured Markdown: no HTML, no charts (the HTML file has them)."""
    layout = _views.family(report).layout
    parts = [f"# {report.title}", "", f"**{_escape(report.headline)}**", ""]
    if report.verdicts is not None:
        parts += ["## Audit gate", "", table(report.verdicts), ""]
    undefined = _views.undefined(report)
    if not undefined.is_empty():
        parts += ["## Undefined values", "", table(undefined), ""]
    parts += ["## Furthest from parity", "", f"{layout.worst}.", "", table(report.worst), ""]
    combos = _views.combos(report)
    if not combos.is_empty():
        parts += ["## Combined over the groups", "", table(combos), ""]
        parts += [f"- {_escape(line)}" for line in _views.legend(report)] + [""]
    single = _views.single(report)
    if not single.is_empty():
        parts += ["## Single-number metrics", "", table(single), ""]
    intervals = _views.lead_intervals(report)
    if not intervals.is_empty():
        level = report.parameters.get("ci")
        parts += [f"## {level:.0%} bootstrap intervals over the {layout.unit}", ""]
        parts += [table(intervals), ""]
    parts += [f"## {layout.per_group}", "", table(_views.per_group(report)), ""]
    for name, heading in layout.shown.items():
        parts += [f"## {heading}", "", table(report.tables[name]), ""]
    parts += ["## How to read it", "", *(f"- {_escape(note)}" for note in report.notes), ""]
    parts += ["## Audit record", "", *_record(report), ""]
    return "\n".join(parts)


def table(frame: pl.DataFrame) -> str:
    """A frame as a Markdown table (numbers right-aligned, four significant digits)."""
    numeric = {name for name, dtype in frame.schema.items() if dtype.is_numeric()}
    head = "| " + " | ".join(_escape(c) for c in frame.columns) + " |"
    rule = "|" + "|".join("---:" if c in numeric else "---" for c in frame.columns) + "|"
    rows = [
        "| " + " | ".join(_escape(format_value(value)) for value in row) + " |"
        for row in frame.iter_rows()
    ]
    return "\n".join([head, rule, *rows])


def _record(report: Report) -> list[str]:
    return [f"- {key}: {_escape(value)}" for key, value in _views.record_lines(report)]


def _escape(text: str) -> str:
    """Text safe in a Markdown table cell or line: pipes, backslashes and markup escaped."""
    out = text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
    # an underscore inside a word (a column name, a path) is no markup in GitHub's Markdown
    for mark in ("*", "`", "<", ">", "[", "]"):
        out = out.replace(mark, "\\" + mark)
    return out
