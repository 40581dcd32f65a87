"""Every documented install command, on a fresh venv: what a new user types must work.

The base install (``pip install -e .``) runs the demo and writes HTML (its charts need the
``report`` extra: the page says so in one line, and the command succeeds); the docs extra
(``pip install -e ".[docs]"``) builds the site. Slow (they download and install packages), but
part of the default run, as CI must check them; deselect locally with ``-m "not installs"``.
"""

from __future__ import annotations

import html as html_module
import sys
from pathlib import Path

import pytest
from venvs import fresh, run

pytestmark = pytest.mark.installs


def test_the_base_install_runs_the_demo_and_writes_html(tmp_path: Path) -> None:
    bin_dir = fresh(tmp_path)
    demo = run(bin_dir, "frameaudit", "demo", cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    assert "Fair-ranking report" in demo.stdout
    page = tmp_path / "demo.html"
    html = run(
        bin_dir, "frameaudit", "demo", "--format", "html", "--output", str(page), cwd=tmp_path
    )
    assert html.returncode == 0, html.stderr
    text = page.read_text()
    note = "No charts: charts need the report extra: pip install 'frameaudit[report]'"
    assert html_module.escape(note) in text
    assert "<h2>Worst first</h2>" in text
    probe = run(bin_dir, "python", "-c", "import altair", cwd=tmp_path)
    assert probe.returncode != 0  # the base install really has no charts


def test_the_docs_extra_builds_the_site(site: Path) -> None:
    """The ``site`` fixture (conftest) builds the site with a fresh venv's ``mkdocs`` when this
    test runs: the one build serves the documentation's tests too."""
    builder = Path((site.parent / "built-by").read_text())
    assert builder.parent.parent.name == "venv", builder
    assert builder.parent.parent != Path(sys.prefix)
    assert (site / "index.html").is_file()
    assert (site / "notebooks" / "fair_ranking" / "index.html").is_file()
