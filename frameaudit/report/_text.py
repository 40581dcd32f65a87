"""A report as text for an 80–100 column terminal."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import polars as pl

from frameaudit.report import _views

if TYPE_CHECKING:
    from frameaudit.report._report import Report

__all__ = ["format_value", "render"]

_WIDTH = 96


def render(report: Report) -> str:
    """The report for a terminal: the headline and gate first, then the worst, then the rest.

    The audit record (parameters, input, versions, time) is in ``report.record`` and in the
    audit files (HTML, JSON, Markdown), not on the terminal.
    """
    layout = _views.family(report).layout
    keys = [*report.by, *report.keys]
    values = [c for c in report.per_group.columns if c not in {*keys, "n", layout.unit}]
    shown = [c for c in values if not c.endswith(("_lo", "_hi"))]
    sections = [report.title, "=" * len(report.title), textwrap.fill(report.headline, _WIDTH)]
    if report.verdicts is not None:
        sections += ["", "Audit gate:", _show(report.verdicts)]
    undefined = _views.undefined(report)
    if not undefined.is_empty():
        sections += ["", "Undefined values, and why:", _show(undefined)]
    sections += ["", f"{layout.worst}, worst first:", _show(report.worst)]
    combos = _views.combos(report)
    if not combos.is_empty():
        sections += [
            "",
            "Combined over the groups, one column per combo:",
            _show(combos, keep=len(report.by) + 1),
            *("  " + line for line in _views.legend(report)),
        ]
    single = _views.single(report)
    if not single.is_empty():
        sections += ["", "Single-number metrics:", _show(single)]
    intervals = _views.lead_intervals(report)
    if not intervals.is_empty():
        level = report.parameters.get("ci")
        heading = (
            f"{level:.0%} bootstrap intervals over the {layout.unit} (all of them in .summary; "
            f"the {layout.rows}' in .per_group):"
        )
        sections += ["", textwrap.fill(heading, _WIDTH), _show(intervals)]
    sections += [
        "",
        f"{layout.per_group}:",
        _show(report.per_group.select(*keys, "n", *shown), keep=len(keys) + 1),
    ]
    for name, heading in layout.shown.items():
        sections += ["", f"{heading}:", _show(report.tables[name])]
    sections += ["", *(textwrap.fill(note, _WIDTH) for note in report.notes)]
    return "\n".join(sections)


def _show(frame: pl.DataFrame, keep: int = 1) -> str:
    """A table without shape or dtype rows; the caller's Polars display options are restored.

    Numbers are shown with four significant digits (right-aligned, two spaces apart). A table
    wider than the terminal is split into several, each repeating the first ``keep`` columns,
    instead of wrapping its column names.
    """
    shown = frame.select(
        pl.col(c).map_elements(format_value, return_dtype=pl.String).fill_null("—")
        for c in frame.columns
    )
    keys, values = shown.columns[:keep], shown.columns[keep:]
    parts: list[list[str]] = [[]]
    for column in values:
        wider = _render(shown.select(*keys, *parts[-1], column))
        if parts[-1] and max(map(len, wider.splitlines())) > _WIDTH:
            parts.append([])
        parts[-1].append(column)
    return "\n\n".join(_render(shown.select(*keys, *part)) for part in parts)


def _render(frame: pl.DataFrame) -> str:
    with pl.Config(
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
        tbl_formatting="NOTHING",
        tbl_cell_alignment="RIGHT",
        tbl_width_chars=10_000,
        tbl_rows=-1,
        tbl_cols=-1,
        fmt_str_lengths=60,
    ):
        return "\n".join(line.rstrip() for line in str(frame).splitlines())


def format_value(value: object) -> str:
    """A cell as shown: four significant digits for floats, an em dash for a missing value."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
