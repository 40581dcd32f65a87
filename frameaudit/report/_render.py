"""A report shown: its sections once, and as text, Markdown and HTML.

:func:`sections` decides what a report shows and in which order: the gate, the undefined
values, the worst rows, the charts, the combos, the single-number metrics, the intervals, the
per-group table, the family's own tables, how to read it and the audit record. Each format
renders the same sections; a terminal leaves out the charts and the audit record (both are in
the files) and shows the intervals of the headline only.
"""

from __future__ import annotations

import html
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import polars as pl

from frameaudit.report import _charts, _tables
from frameaudit.report._layout import Shown

__all__ = [
    "Page",
    "Section",
    "format_value",
    "html_body",
    "html_page",
    "lead",
    "markdown",
    "record_lines",
    "sections",
    "text",
]

_WIDTH = 96


@dataclass(frozen=True)
class Section:
    """One part of a shown report.

    Attributes
    ----------
    heading
        Its heading.
    table
        Its table, as the files (HTML, Markdown) show it.
    brief
        The table a terminal shows instead (``table`` when None), and ``brief_note``, the
        sentence that says what it leaves out.
    note
        A sentence before the table.
    keep
        The leading columns a terminal repeats when it splits a wide table.
    items
        A list after the table (a legend).
    paragraphs
        Paragraphs of text (the notes on how to read the report).
    record
        (name, value) lines: the audit record, in the files only.
    charts
        The report's charts: in HTML only.
    """

    heading: str
    table: pl.DataFrame | None = None
    brief: pl.DataFrame | None = None
    brief_note: str = ""
    note: str = ""
    keep: int = 1
    items: tuple[str, ...] = ()
    paragraphs: tuple[str, ...] = ()
    record: tuple[tuple[str, str], ...] = ()
    charts: bool = False


class Page(Protocol):
    """What the renderers read of what they show, beside its sections (a report, a comparison)."""

    @property
    def title(self) -> str: ...
    @property
    def headline(self) -> str: ...
    @property
    def outcome(self) -> str | None: ...
    def charts(self) -> dict[str, Any]: ...


def sections(report: Shown) -> list[Section]:
    """What ``report`` shows, in order (the title and the headline come before them)."""
    layout = report.layout
    shown = []
    if report.verdicts is not None:
        shown.append(Section("Audit gate", report.verdicts))
    missing = _undefined(report)
    if not missing.is_empty():
        shown.append(Section("Undefined values, and why", missing))
    shown += [
        Section("Worst first", report.worst, note=f"{layout.worst}."),
        Section("Charts", charts=True),
    ]
    combos = _combos(report)
    if not combos.is_empty():
        heading = "Combined over the groups, one column per combo"
        shown.append(Section(heading, combos, keep=len(report.by) + 1, items=_legend(report)))
    single = _single(report)
    if not single.is_empty():
        shown.append(Section("Single-number metrics", single))
    intervals = _intervals(report)
    if not intervals.is_empty():
        level = report.parameters.get("ci")
        brief = _lead_intervals(report, intervals)
        left_out = "" if brief.height == intervals.height else "the headline's; all in .summary"
        shown.append(
            Section(
                f"{level:.0%} bootstrap intervals over the {layout.unit}",
                intervals,
                brief=brief,
                brief_note=left_out,
                note=f"The {layout.rows}' intervals are in the per-group table.",
            )
        )
    keys = [*report.by, *report.keys]
    shown.append(Section(layout.per_group, _per_group(report), keep=len(keys) + 1))
    shown += [
        Section(heading, report.tables[name])
        for name, heading in layout.shown.items()
        if name in report.tables  # a table the report holds only with some options
    ]
    shown += [
        Section("How to read it", paragraphs=report.notes),
        Section("Audit record", record=tuple(record_lines(report.parameters, report.record))),
    ]
    return shown


# --- text -------------------------------------------------------------------------------------


def text(page: Page, parts: Sequence[Section]) -> str:
    """The ``parts`` of ``page`` for an 80–100 column terminal, after its title and headline.

    The audit record (parameters, input, versions, time) and the charts are in the files
    (HTML, JSON, Markdown) and in ``report.record``, not on the terminal.
    """
    lines = [page.title, "=" * len(page.title), textwrap.fill(page.headline, _WIDTH)]
    for section in parts:
        if section.charts or section.record:
            continue
        heading = section.heading
        table = section.table if section.brief is None else section.brief
        if section.brief is not None and section.brief_note:
            heading += f" ({section.brief_note})"
        lines += ["", textwrap.fill(f"{heading}:", _WIDTH)]
        if section.note:
            lines.append(textwrap.fill(section.note, _WIDTH))
        if table is not None:
            lines.append(_show(table, keep=section.keep))
        lines += [f"  {item}" for item in section.items]
        lines += [textwrap.fill(paragraph, _WIDTH) for paragraph in section.paragraphs]
    return "\n".join(lines)


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
        wider = _plain(shown.select(*keys, *parts[-1], column))
        if parts[-1] and max(map(len, wider.splitlines())) > _WIDTH:
            parts.append([])
        parts[-1].append(column)
    return "\n\n".join(_plain(shown.select(*keys, *part)) for part in parts)


def _plain(frame: pl.DataFrame) -> str:
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


# --- Markdown ---------------------------------------------------------------------------------


def markdown(page: Page, parts: Sequence[Section]) -> str:
    """GitHub-flavoured Markdown: no HTML, no charts (the HTML file has them)."""
    lines = [f"# {page.title}", "", f"**{_escape(page.headline)}**", ""]
    for section in parts:
        if section.charts:
            continue
        lines += [f"## {section.heading}", ""]
        if section.note:
            lines += [_escape(section.note), ""]
        if section.table is not None:
            lines += [markdown_table(section.table), ""]
        if section.items:
            lines += [*(f"- {_escape(item)}" for item in section.items), ""]
        for paragraph in section.paragraphs:
            lines += [_escape(paragraph), ""]
        if section.record:
            lines += [*(f"- {key}: {_escape(value)}" for key, value in section.record), ""]
    return "\n".join(lines)


def markdown_table(frame: pl.DataFrame) -> str:
    """A frame as a Markdown table (numbers right-aligned, four significant digits)."""
    numeric = {name for name, dtype in frame.schema.items() if dtype.is_numeric()}
    head = "| " + " | ".join(_escape(c) for c in frame.columns) + " |"
    rule = "|" + "|".join("---:" if c in numeric else "---" for c in frame.columns) + "|"
    rows = [
        "| " + " | ".join(_escape(format_value(value)) for value in row) + " |"
        for row in frame.iter_rows()
    ]
    return "\n".join([head, rule, *rows])


def _escape(line: str) -> str:
    """Text safe in a Markdown table cell or line: pipes, backslashes and markup escaped."""
    out = line.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
    # an underscore inside a word (a column name, a path) is no markup in GitHub's Markdown
    for mark in ("*", "`", "<", ">", "[", "]"):
        out = out.replace(mark, "\\" + mark)
    return out


# --- HTML -------------------------------------------------------------------------------------

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
.fa-report p.fa-headline.fa-fail { border-color: #D55E00; background: #fbeee6; }
.fa-report p.fa-headline.fa-pass { border-color: #009E73; background: #e8f5f0; }
.fa-report p.fa-headline.fa-inconclusive { border-color: #E69F00; background: #fdf5e3; }
.fa-report td.fa-false { color: #a63d00; font-weight: 600; }
.fa-report dl.fa-record { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem;
  font-size: .9rem; }
.fa-report dl.fa-record dt { font-weight: 600; }
.fa-report dl.fa-record dd { margin: 0; }
"""


def html_page(page: Page, parts: Sequence[Section]) -> str:
    """A complete HTML document: nothing is loaded from anywhere."""
    return (
        "<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
        f"<title>{html.escape(page.title)}</title>\n<style>{_STYLE}</style>\n</head>\n"
        f"<body>\n{html_body(page, parts)}\n</body>\n</html>\n"
    )


def html_body(page: Page, parts: Sequence[Section]) -> str:
    """The content of ``page``, styled, without a page around it: the headline first."""
    outcome = "" if page.outcome is None else f" fa-{page.outcome}"
    shown = [
        f"<style>{_STYLE}</style><div class='fa-report'>",
        f"<h1>{html.escape(page.title)}</h1>",
        f"<p class='fa-headline{outcome}'>{html.escape(page.headline)}</p>",
    ]
    for section in parts:
        shown.append(f"<h2>{html.escape(section.heading)}</h2>")
        if section.note:
            shown.append(f"<p class='fa-note'>{html.escape(section.note)}</p>")
        if section.table is not None:
            shown.append(_html_table(section.table))
        if section.items:
            items = "".join(f"<li>{html.escape(item)}</li>" for item in section.items)
            shown.append(f"<ul class='fa-legend'>{items}</ul>")
        shown += [f"<p class='fa-note'>{html.escape(p)}</p>" for p in section.paragraphs]
        if section.record:
            rows = "".join(
                f"<dt>{html.escape(key)}</dt><dd>{html.escape(value)}</dd>"
                for key, value in section.record
            )
            shown.append(f"<dl class='fa-record'>{rows}</dl>")
        if section.charts:
            shown.append(_html_charts(page))
    shown.append("</div>")
    return "\n".join(shown)


def _html_charts(page: Page) -> str:
    """The charts as inline SVG, or a one-line note where the report extra is missing."""
    try:
        figures = [
            f"<figure data-chart='{html.escape(name)}'>{_charts.svg(chart)}</figure>"
            for name, chart in page.charts().items()
        ]
    except ImportError as error:
        return f"<p class='fa-note'>No charts: {html.escape(str(error))}.</p>"
    return "<div class='fa-charts'>" + "".join(figures) + "</div>"


def _html_table(frame: pl.DataFrame) -> str:
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


# --- what the sections hold -------------------------------------------------------------------


def lead(report: Shown) -> str:
    """The report's lead finding: its headline metric's value, interval and what fair is."""
    chosen = report.layout.lead
    if chosen is None or report.summary.is_empty():
        return ""
    metric, combo = chosen
    rows = report.summary.filter(
        (pl.col("metric") == metric)
        & (pl.col("combo").is_null() if combo is None else pl.col("combo") == combo)
    )
    if rows.is_empty():
        return ""
    name = metric.upper() + (f" {combo}" if combo else "")
    direction = rows["direction"][0]
    if report.by:
        defined = rows.filter(pl.col("value").is_not_null())

        def where(row: dict[str, Any]) -> str:
            return ", ".join(f"{c}={row[c]!r}" for c in report.by)

        text = f"{name} over {rows.height} partitions ({direction})"
        if not defined.is_empty():
            low = defined.sort("value").row(0, named=True)
            high = defined.sort("value").row(-1, named=True)
            text += (
                f": from {low['value']:.3g} ({where(low)}) to {high['value']:.3g} ({where(high)})"
            )
        missing = rows.height - defined.height
        return text + (f"; undefined in {missing}." if missing else ".")
    row = rows.row(0, named=True)
    if row["value"] is None:
        reason = row.get("note") or "no value"
        return f"{name} is undefined: {reason}."
    interval = ""
    if row.get("lo") is not None and row.get("hi") is not None:
        level = report.parameters.get("ci")
        interval = f", {level:.0%} interval {row['lo']:.3g} to {row['hi']:.3g}"
    text = f"{name} = {row['value']:.3g} ({direction}{interval})"
    if metric in report.per_group.columns and report.keys:
        groups = report.per_group.filter(pl.col(metric).is_not_null()).sort(metric)
        if groups.height >= 2:
            label = _tables.label(report.keys, report.per_group.schema)
            named = groups.select(label.alias("group"), metric)
            (low, low_value), (high, high_value) = named.row(0), named.row(-1)
            text += (
                f": lowest group {low} ({metric.upper()} {low_value:.3g}), highest {high} "
                f"({high_value:.3g})"
            )
    return text + "."


def _lead_intervals(report: Shown, shown: pl.DataFrame) -> pl.DataFrame:
    """Of the intervals ``shown``, the headline combo's and the single-number metrics'.

    A terminal shows the ones read first; the files and ``summary`` hold every combo's.
    """
    chosen = report.layout.lead
    if "combo" not in shown.columns or chosen is None or chosen[1] is None:
        return shown
    return shown.filter(pl.col("combo").is_null() | (pl.col("combo") == chosen[1]))


def record_lines(parameters: Mapping[str, Any], record: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The audit record as (name, text) lines: the parameters, then each part of the record."""
    return [(key, _inline(value)) for key, value in {"parameters": parameters, **record}.items()]


def _inline(value: Any) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_inline(v)}" for k, v in value.items() if v is not None)
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    return str(value)


def _undefined(report: Shown) -> pl.DataFrame:
    """The undefined values and why: one row per (partition,) metric and reason."""
    if "note" not in report.summary.columns:
        return pl.DataFrame(schema={"metric": pl.String, "combos": pl.String, "why": pl.String})
    missing = report.summary.filter(pl.col("value").is_null())
    every = report.summary.group_by("metric").agg(pl.col("combo").n_unique().alias("__all"))
    return (
        missing.group_by([*report.by, "metric", "note"], maintain_order=True)
        .agg(pl.col("combo").drop_nulls(), pl.len().alias("__count"))
        .join(every, on="metric", how="left")
        .select(
            *report.by,
            "metric",
            pl.when(pl.col("combo").list.len() == 0)
            .then(pl.lit("—"))
            .when(pl.col("__count") == pl.col("__all"))
            .then(pl.lit("every combo"))
            .otherwise(pl.col("combo").list.join(", "))
            .alias("combos"),
            pl.col("note").fill_null("undefined").alias("why"),
        )
    )


def _combos(report: Shown) -> pl.DataFrame:
    """One row per (partition and) group metric, one column per combo."""
    grouped = report.summary.filter(pl.col("combo").is_not_null())
    order = grouped["combo"].unique(maintain_order=True).to_list()
    index = [*report.by, "metric"]
    return grouped.pivot(on="combo", index=index, values="value").select(*index, *order)


def _legend(report: Shown) -> tuple[str, ...]:
    """What parity looks like under each combo, one line per direction."""
    grouped = report.summary.filter(pl.col("combo").is_not_null())
    by_direction = grouped.unique(["combo"], maintain_order=True).group_by(
        "direction", maintain_order=True
    )
    return tuple(
        f"{', '.join(rows['combo'].to_list())}: {direction}" for (direction,), rows in by_direction
    )


def _single(report: Shown) -> pl.DataFrame:
    """The single-number metrics with their direction and range."""
    return report.summary.filter(pl.col("combo").is_null()).select(
        *report.by, "metric", "value", "direction", "range"
    )


def _intervals(report: Shown) -> pl.DataFrame:
    """The rows that carry a bootstrap interval (empty without ``ci``).

    A family without combos shows no combo column.
    """
    unit = report.layout.unit
    combo = ["combo"] if report.summary["combo"].is_not_null().any() else []
    shown = [*report.by, "metric", *combo, "value", "lo", "hi"]
    if unit not in report.summary.columns:
        return report.summary.clear().select(shown)
    return report.summary.filter(pl.col(unit).is_not_null()).select(
        *shown, unit, "undefined_replicates"
    )


def _per_group(report: Shown) -> pl.DataFrame:
    """The per-group values; with intervals, each metric as one "value [lo, hi]" column."""
    frame = report.per_group
    keys = [*report.by, *report.keys]
    metrics = [c for c in frame.columns if f"{c}_lo" in frame.columns]
    if not metrics:
        first = [*keys, *(["n"] if "n" in frame.columns else [])]
        return frame.select(*first, pl.exclude(first))
    shown = [
        pl.format(
            "{} [{}, {}]",
            *(_sig(pl.col(name)) for name in (metric, f"{metric}_lo", f"{metric}_hi")),
        ).alias(metric)
        for metric in metrics
    ]
    # columns without an interval (e.g. counts) are kept, after the values with one; the
    # count of resampled units is the intervals table's
    rest = [
        c
        for c in frame.columns
        if c not in {*keys, "n", *metrics, report.layout.unit} and not c.endswith(("_lo", "_hi"))
    ]
    return frame.select(*keys, "n", *shown, *rest)


def _sig(column: pl.Expr) -> pl.Expr:
    """Four significant digits, as the text tables show a number."""
    return column.map_elements(lambda v: f"{v:.4g}", return_dtype=pl.String).fill_null("—")
