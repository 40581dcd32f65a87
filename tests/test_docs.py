"""The documentation site builds without warnings (mkdocs --strict), benchmark tables included."""

from __future__ import annotations

import inspect
from pathlib import Path

import polars as pl

from frameaudit import datasets, explain, fair, repro

ROOT = Path(__file__).resolve().parents[1]


def test_site_builds_strictly(site: Path) -> None:
    performance = (site / "performance" / "index.html").read_text()
    assert "FairRankTune" in performance
    assert "speed-up" in performance
    # the API reference documents every public function of every family
    api = (site / "api" / "index.html").read_text()
    for module in (fair, explain, repro, datasets):
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isfunction(value):
                assert f"{value.__module__}.{name}" in api, f"{module.__name__}.{name}"


def test_readme_commands_match_ci() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    command = ci.strip().splitlines()[-1]
    assert command in readme
    assert "frameaudit demo" in readme


def test_uncertainty_page_shows_what_its_example_prints() -> None:
    """The page's example output is what the code prints today (every number in it)."""
    import contextlib
    import io
    import re

    page = (ROOT / "docs" / "uncertainty.md").read_text()
    code, shown = re.search(r"```python\n(.*?)```\n\n```text\n(.*?)```", page, re.S).groups()  # type: ignore[union-attr]
    printed = io.StringIO()
    # the example sets Polars' display options: restored afterwards for the other tests
    with pl.Config(), contextlib.redirect_stdout(printed):
        exec(compile(code, "uncertainty.md", "exec"), {})
    assert printed.getvalue() == shown
