"""The documentation site builds without warnings (mkdocs --strict), benchmark tables included."""

from __future__ import annotations

import inspect
from pathlib import Path

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
