"""The documentation site builds without warnings (mkdocs --strict), benchmark tables included."""

from __future__ import annotations

import inspect
import math
import re
from pathlib import Path
from typing import Any

import pytest
from docs_examples import printed_and_shown

from frameaudit import datasets, explain, fair, repro

ROOT = Path(__file__).resolve().parents[1]


def test_every_notebook_runs_into_a_page(site: Path) -> None:
    """The site build executes each notebook (a failing cell fails the build): every one of
    ``notebooks/`` is a page, with its cells' outputs."""
    names = sorted(path.stem for path in (ROOT / "notebooks").glob("*.ipynb"))
    assert names  # the loop below cannot pass on no notebook
    for name in names:
        page = (site / "notebooks" / name / "index.html").read_text()
        assert f"executed from notebooks/{name}.ipynb" in page
        assert "Traceback" not in page


def test_site_builds_strictly(site: Path) -> None:
    performance = (site / "performance" / "index.html").read_text()
    assert "FairRankTune" in performance
    assert "speed-up" in performance
    # the overview chart, drawn from the benchmark tables at build time: a point per speed-up
    assert 'src="../assets/performance-targets.svg"' in performance
    chart = (site / "assets" / "performance-targets.svg").read_text()
    lines = (ROOT / "benchmarks" / "results" / "ranking.md").read_text().splitlines()
    header = next(line for line in lines if line.startswith("| size"))
    columns = [cell.strip() for cell in header.strip("|").split("|")]
    speed_up = next(i for i, c in enumerate(columns) if c.startswith("speed-up"))
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in lines
        if re.match(r"^\| [\d,]+ x [\d,]+ \|", line)
    ]
    assert len(rows) == 20  # ten metrics at two sizes
    for row in rows:
        # the row's speed-up over FairRankTune divided by the 100x target
        ratio = float(row[speed_up].rstrip("x").replace(",", "")) / 100
        assert f"case: {row[1]} {row[0]}; family: ranking; of_target: {ratio:.2f}" in chart
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
    printed, shown = printed_and_shown("uncertainty.md")
    assert printed == shown


def test_report_page_shows_what_its_example_prints() -> None:
    """The reports page prints a whole report and a gate's verdicts, as they are today."""
    printed, shown = printed_and_shown("report.md")
    assert printed == shown
    assert "shape:" not in printed


@pytest.mark.spark
def test_scale_page_spark_recipe_shows_what_it_prints(spark_session: Any) -> None:
    # the recipe's getOrCreate() returns the suite's local session
    printed, shown = printed_and_shown("scale.md", "Spark cluster")
    assert printed == shown


def test_trec_page_shows_what_its_example_prints() -> None:
    """The TREC page's example prints expeval's numbers (shown beside it on the page)."""
    printed, shown = printed_and_shown("trec.md")
    assert printed == shown
    page = (ROOT / "docs" / "trec.md").read_text()
    for value in ("1.156250", "1.078125", "0.281250", "0.867188", "0.841463", "0.085714"):
        assert value in page  # expeval's printed output, which the example must reproduce
    assert "0.28125 ┆ 1.15625 ┆ 1.078125" in printed
    assert "0.085714 ┆ 0.8671875 ┆ 0.841463" in printed


def test_trec_page_task2_example_is_worked_by_hand() -> None:
    """The task-2 example prints what the page shows, and the values worked by hand beside it
    (two positions of weight 1: targets 1 and 1; exposures 1 and 1/log2 3, or 1 + 1/log2 3)."""
    printed, shown = printed_and_shown("trec.md", "The track's task-2 targets")
    assert printed == shown
    c = 1.0 / math.log2(3)
    judged = (f"{(1 - c) ** 2:.6f}", f"{1 + c * c:.6f}", f"{1 + c:.5f}")
    retrieved = (f"{c * c:.6f}", f"{1 + (1 + c) ** 2:.6f}", f"{2 + c:.5f}")
    assert " ┆ ".join(judged) in printed
    assert " ┆ ".join(retrieved) in printed


def test_compare_page_shows_what_its_example_prints() -> None:
    """The comparison page's worked example prints what the page shows, every number."""
    printed, shown = printed_and_shown("compare.md")
    assert printed == shown


def test_compare_page_shows_the_calibration_benchmarks_tables() -> None:
    """The simulation tables on the page are the ones the benchmark wrote, row for row."""
    page = (ROOT / "docs" / "compare.md").read_text()
    shown = page.split("<!-- calibration:", 1)[1].split("<!-- end calibration -->", 1)[0]
    written = (ROOT / "benchmarks" / "results" / "calibration.md").read_text()
    rows = [line for line in written.splitlines() if line.startswith("|")]
    assert len(rows) > 20
    assert [line for line in shown.splitlines() if line.startswith("|")] == rows


def test_report_page_shows_the_four_fifths_rule_as_it_prints() -> None:
    printed, shown = printed_and_shown("report.md", "Audit gates")
    assert printed == shown
    assert "inconclusive" in printed
