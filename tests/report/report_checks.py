"""Checks every family's report tests share: JSON round trip, HTML, browser, docs example."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from docs_examples import printed_and_shown
from polars.testing import assert_frame_equal

from frameaudit.report import Report

# the only URLs a report may hold: XML namespaces, never a resource to fetch
NAMESPACES = ("http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink")


def self_contained(report: Report, tmp_path: Path) -> str:
    """The report's HTML, written to a file, checked to load nothing from anywhere."""
    path = tmp_path / "report.html"
    text = report.to_html(path)
    assert path.read_text() == text
    assert "<script" not in text
    for url in re.findall(r"(?:https?:)?//[^\s\"'<>)]+", text):
        assert url in NAMESPACES, url
    assert not re.search(r"<(?:link|img|iframe)\b|@import|url\(", text)
    assert report._repr_html_() in text
    return text


def browse(report: Report, tmp_path: Path) -> tuple[Any, list[str], int]:
    """The report opened in headless Chromium: the page, its charts' names and drawn marks.

    The docs' render test drives the browser; the same driver opens the report. The page loads
    nothing and logs nothing to the console.
    """
    from test_docs_render import CHROMIUM, _browse

    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (.ci/run installs Debian's 'chromium' as root)")
    path = tmp_path / "report.html"
    report.to_html(path)
    page, console = _browse(path, tmp_path / "profile")
    assert console == []
    assert page.resources == []  # no script or stylesheet to load
    charts = re.findall(r"<figure data-chart=\"([a-z_]+)\">\s*<svg", page.dom)
    symbols = len(re.findall(r'role="graphics-symbol"', page.dom))
    return page, charts, symbols


def round_trips(report: Report) -> Report:
    """The report read back from its JSON, checked equal to it (every table and field)."""
    text = report.to_json()
    assert json.loads(text) == report.to_dict()
    back = Report.from_json(text)
    for name in ("per_group", "summary", "worst"):
        assert_frame_equal(getattr(back, name), getattr(report, name))
    assert back.tables.keys() == report.tables.keys()
    for name, table in report.tables.items():
        assert_frame_equal(back.tables[name], table)
    assert back.parameters == report.parameters
    assert (back.family, back.title, back.keys, back.notes) == (
        report.family,
        report.title,
        report.keys,
        report.notes,
    )
    return back


def docs_example(heading: str) -> tuple[str, str]:
    """What the first example of a section of docs/report.md prints, and what the page shows."""
    return printed_and_shown("report.md", heading)
