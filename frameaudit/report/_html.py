"""A report as HTML: one self-contained page (inline styles, charts as inline SVG)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import polars as pl

from frameaudit.report import _charts, _views
from frameaudit.report._text import format_value

if TYPE_CHECKING:
    from frameaudit.report._report import Report

__all__ = ["body", "page"]

_STYLE = """
.fa-report { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: #1a1a1a; max-width: 1200px; margin: 0 auto; padding: 1rem 1.5rem; line-height: 1.45; }
.fa-report h1 { font-size: 1.6rem; margin: 0 0 .5rem; }
.fa-report h2 { font-size: 1.2rem; margin: 1.8rem 0 .5rem; border-bottom: 1px solid #ddd; }
.fa-report p.fa-note { margin: .25rem 0; max-width: 60rem; }
.fa-report table { border-collapse: collapse; font-size: .9rem; margin: .5rem 0; }
.fa-report th, .fa-report td { padding: .25rem .6rem; border-bottom: 1px solid #e4e4e4; }
.fa-report th { text-align: left; background: #f3f5f8; }
.fa-report td.fa-num { text-align: right; font-variant-numeric: tabular-nums; }
.fa-report .fa-legend { color: #444; font-size: .9rem; margin: 0; padding-left: 1.2rem; }
.fa-report .fa-charts { display: flex; flex-wrap: wrap; gap: 1.5rem; }
.fa-report figure { margin: 0; }
.fa-report p.fa-headline { font-size: 1.05rem; padding: .6rem .9rem; border-left: 5px solid #0072B2;
  background: #eef4fa; margin: .6rem 0 1rem; max-width: 60rem; }
.fa-report p.fa-headline.fa-failed { border-color: #D55E00; background: #fbeee6; }
.fa-report p.fa-headline.fa-passed { border-color: #009E73; background: #e8f5f0; }
.fa-report td.fa-false { color: #a63d00; font-weight: 600; }
.fa-report dl.fa-record { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem;
  font-size: .9rem; }
.fa-report dl.fa-record dt { font-weight: 600; }
.fa-report dl.fa-record dd { margin: 0; }
"""


def page(report: Report) -> str:
    """A complete HTML document: nothing is loaded from anywhere."""
    return (
        "<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
        f"<title>{html.escape(report.title)}</title>\n<style>{_STYLE}</style>\n</head>\n"
        f"<body>\n{body(report)}\n</body>\n</html>\n"
    )


def body(report: Report) -> str:
    """The report's content, styled, without a page around it: the headline and gate first."""
    layout = _views.family(report).layout
    outcome = ""
    if report.verdicts is not None:
        outcome = " fa-passed" if report.verdicts["passed"].all() else " fa-failed"
    parts = [
        f"<style>{_STYLE}</style><div class='fa-report'>",
        f"<h1>{html.escape(report.title)}</h1>",
        f"<p class='fa-headline{outcome}'>{html.escape(report.headline)}</p>",
    ]
    if report.verdicts is not None:
        parts += ["<h2>Audit gate</h2>", _table(report.verdicts)]
    undefined = _views.undefined(report)
    if not undefined.is_empty():
        parts += ["<h2>Undefined values, and why</h2>", _table(undefined)]
    parts += [
        "<h2>Worst first</h2>",
        f"<p class='fa-note'>{html.escape(layout.worst)}.</p>",
        _table(report.worst),
        "<h2>Charts</h2>",
        _charts_section(report),
    ]
    combos = _views.combos(report)
    if not combos.is_empty():
        parts += [
            "<h2>Combined over the groups</h2>",
            _table(combos),
            "<ul class='fa-legend'>",
            *(f"<li>{html.escape(line)}</li>" for line in _views.legend(report)),
            "</ul>",
        ]
    single = _views.single(report)
    if not single.is_empty():
        parts += ["<h2>Single-number metrics</h2>", _table(single)]
    for name, heading in layout.shown.items():
        parts += [f"<h2>{html.escape(heading)}</h2>", _table(report.tables[name])]
    intervals = _views.intervals(report)
    if not intervals.is_empty():
        level = report.parameters.get("ci")
        heading = f"{level:.0%} bootstrap intervals over the {layout.unit}"
        parts += [f"<h2>{html.escape(heading)}</h2>", _table(intervals)]
    parts += [
        f"<h2>{html.escape(layout.per_group)}</h2>",
        _table(_views.per_group(report)),
        "<h2>How to read it</h2>",
        *(f"<p class='fa-note'>{html.escape(note)}</p>" for note in report.notes),
        "<h2>Audit record</h2>",
        _record(report),
        "</div>",
    ]
    return "\n".join(parts)


def _charts_section(report: Report) -> str:
    """The charts as inline SVG, or a one-line note where the report extra is missing."""
    try:
        figures = [
            f"<figure data-chart='{html.escape(name)}'>{_charts.svg(chart)}</figure>"
            for name, chart in report.charts().items()
        ]
    except ImportError as error:
        return f"<p class='fa-note'>No charts: {html.escape(str(error))}.</p>"
    return "<div class='fa-charts'>" + "".join(figures) + "</div>"


def _record(report: Report) -> str:
    """The parameters and the provenance as a definition list."""
    rows = [
        f"<dt>{html.escape(key)}</dt><dd>{html.escape(shown)}</dd>"
        for key, shown in _views.record_lines(report)
    ]
    return "<dl class='fa-record'>" + "".join(rows) + "</dl>"


def _table(frame: pl.DataFrame) -> str:
    numeric = {name for name, dtype in frame.schema.items() if dtype.is_numeric()}
    head = "".join(f"<th>{html.escape(name)}</th>" for name in frame.columns)
    rows = []
    for row in frame.iter_rows(named=True):
        cells = "".join(
            f"<td class='fa-num'>{html.escape(format_value(value))}</td>"
            if name in numeric
            else f"<td class='fa-false'>{html.escape(format_value(value))}</td>"
            if value is False
            else f"<td>{html.escape(format_value(value))}</td>"
            for name, value in row.items()
        )
        rows.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
