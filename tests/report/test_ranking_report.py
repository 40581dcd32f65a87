"""The fair-ranking report: its numbers are the metric functions', and it exports and renders."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import report_checks
from conftest import own_connection
from polars.testing import assert_frame_equal

import frameaudit as fa
from frameaudit._registry import entry
from frameaudit.report import Report
from tests.calls import arguments, entries

GROUPS = ["gender", "age"]
ROLES: dict[str, Any] = {"rank": "rank", "group": GROUPS, "ranking": "query", "item": "item"}
COLUMNS: dict[str, Any] = {"relevance": "relevance", "ctr": "ctr", "relevant": "relevant"}
# the metric functions' options for each group metric, as the report calls them
OPTIONS: dict[str, dict[str, Any]] = {
    m.name: arguments(m, p=0.5, decay=0.5) for m in entries("ranking", "group")
}
BOOT: dict[str, Any] = {"ci": 0.9, "n_boot": 40, "seed": 3}


@pytest.fixture(scope="module")
def log() -> pl.DataFrame:
    return fa.datasets.ranking_example(seed=1)


@pytest.fixture(scope="module")
def report(log: pl.DataFrame) -> Report:
    return fa.report.ranking(log, **ROLES, **COLUMNS)


@pytest.fixture(scope="module")
def with_ci(log: pl.DataFrame) -> Report:
    return fa.report.ranking(log, **ROLES, **COLUMNS, **BOOT)


def _value(report: Report, metric: str, combo: str | None, column: str = "value") -> Any:
    rows = report.summary.filter(
        (pl.col("metric") == metric)
        & (pl.col("combo").is_null() if combo is None else pl.col("combo") == combo)
    )
    assert rows.height == 1
    return rows[column].item()


# --- the numbers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("metric", list(OPTIONS))
def test_per_group_values_are_the_metric_functions(
    log: pl.DataFrame, report: Report, metric: str
) -> None:
    expected = getattr(fa.fair, metric)(log, **ROLES, **OPTIONS[metric], combo=None)
    assert_frame_equal(report.per_group.select(*GROUPS, metric, "n"), expected)


@pytest.mark.parametrize("metric", list(OPTIONS))
@pytest.mark.parametrize("combo", fa.fair.COMBOS)
def test_every_combo_is_the_metric_functions(
    log: pl.DataFrame, report: Report, metric: str, combo: str
) -> None:
    # the metric run with the combo, not the report's way (combine over per-group values)
    expected = getattr(fa.fair, metric)(log, **ROLES, **OPTIONS[metric], combo=combo).item()
    assert _value(report, metric, combo) == pytest.approx(expected, rel=1e-12)


def test_single_number_metrics_and_directions(log: pl.DataFrame, report: Report) -> None:
    ndkl = fa.fair.ndkl(log, rank="rank", group=GROUPS, ranking="query", item="item").item()
    iaa = fa.fair.iaa(log, rank="rank", ranking="query", item="item", relevance="relevance")
    assert _value(report, "ndkl", None) == pytest.approx(ndkl, rel=1e-12)
    assert _value(report, "iaa", None) == pytest.approx(iaa.item(), rel=1e-12)
    directions = dict(
        report.summary.unique("combo").select(pl.col("combo").fill_null(""), "direction").rows()
    )
    assert directions["MinMaxRatio"] == directions["MaxMinRatio"] == "1 = parity"
    assert {directions[c] for c in ("MaxMinDiff", "MaxAbsDiff", "MeanAbsDev", "Variance")} == {
        "0 = parity"
    }
    singles = report.summary.filter(pl.col("combo").is_null())
    for metric, direction in singles.select("metric", "direction").iter_rows():
        assert direction == entry(metric).best, metric
    awrf = fa.fair.awrf_js(log, rank="rank", group=GROUPS, ranking="query", item="item").item()
    assert _value(report, "awrf_js", None) == pytest.approx(awrf, rel=1e-12)
    grouped, single = entries("ranking", "group"), entries("ranking", "single")
    assert report.summary.height == len(grouped) * len(fa.fair.COMBOS) + len(single)


def test_intervals_are_the_metric_functions(log: pl.DataFrame, with_ci: Report) -> None:
    for metric, options in OPTIONS.items():
        function = getattr(fa.fair, metric)
        per_group = function(log, **ROLES, **options, combo=None, **BOOT)
        shown = [metric, f"{metric}_lo", f"{metric}_hi", "n", "rankings"]
        expected = per_group.drop("undefined_replicates")
        assert_frame_equal(with_ci.per_group.select(*GROUPS, *shown), expected, rel_tol=1e-12)
        # every combo has its interval: the metric's own with that combo
        for combo in fa.fair.COMBOS:
            combined = function(log, **ROLES, **options, combo=combo, **BOOT)
            for end in ("lo", "hi"):
                expected = combined[f"{metric}_{end}"].item()
                assert _value(with_ci, metric, combo, end) == pytest.approx(expected, rel=1e-12)
    ndkl = fa.fair.ndkl(log, rank="rank", group=GROUPS, ranking="query", item="item", **BOOT)
    assert _value(with_ci, "ndkl", None, "hi") == pytest.approx(ndkl["ndkl_hi"].item(), rel=1e-12)
    assert _value(with_ci, "ndkl", None, "rankings") == 20


def test_worst_names_the_group_furthest_from_parity(log: pl.DataFrame, report: Report) -> None:
    values = fa.fair.arp(log, **ROLES, combo=None)
    gaps = (values["arp"] - values["arp"].mean()).abs()
    expected = "/".join(values.row(int(gaps.arg_max()))[:2])  # type: ignore[arg-type]
    row = report.worst.filter(pl.col("metric") == "arp").row(0, named=True)
    assert row["name"] == expected
    assert row["reference"] == pytest.approx(values["arp"].mean())
    # NDKL: the five rankings with the highest NDKL, worst first
    by_query = fa.fair.ndkl(log, rank="rank", group=GROUPS, ranking="query", by="query")
    worst = report.worst.filter(pl.col("metric") == "ndkl")
    # (a ranking's sums over its rows may add in another order from one plan to the next)
    expected_worst = by_query["ndkl"].sort(descending=True).head(5).to_list()
    assert worst["value"].to_list() == pytest.approx(expected_worst, rel=1e-12)
    assert worst["kind"].unique().to_list() == ["ranking"]


def test_worst_of_two_groups_is_the_one_below_parity() -> None:
    # two groups are always equally far from their mean: the disadvantaged one is named
    log = pl.DataFrame({"rank": [1, 2, 3, 4], "group": ["b", "a", "b", "a"]})
    worst = fa.report.ranking(log).worst.filter(pl.col("kind") == "group")
    assert (worst["gap"] <= 0).all()
    assert set(worst.filter(pl.col("gap") < 0)["name"]) == {"a"}


def test_metrics_needing_a_missing_column_are_left_out(log: pl.DataFrame) -> None:
    plain = fa.report.ranking(log, **ROLES)
    assert plain.summary["metric"].unique(maintain_order=True).to_list() == [
        m.name for m in entries("ranking", "group", "single") if not m.roles
    ]
    # without rankings, NDKL is one number over all rows and nothing is shown per ranking
    single = fa.report.ranking(log.filter(pl.col("query") == 0), group=GROUPS)
    assert "ndkl_by_ranking" not in single.tables
    assert single.worst.filter(pl.col("metric") == "ndkl")["name"].to_list() == ["(all rows)"]


def test_positions_give_each_groups_share(report: Report, log: pl.DataFrame) -> None:
    positions = report.tables["positions"]
    top = positions.filter(pl.col("positions") == "1").sort("group")
    firsts = log.filter(pl.col("rank") == 1)
    counts = firsts.group_by(GROUPS).len().sort(GROUPS)["len"]
    assert top["rows"].to_list() == counts.to_list()
    assert positions.group_by("bucket").agg(pl.col("share").sum())["share"].to_list() == (
        pytest.approx([1.0] * positions["bucket"].n_unique())
    )


def test_every_frame_kind_gives_the_same_report(
    log: pl.DataFrame, with_ci: Report, constructor: Any
) -> None:
    # rows shuffled, lazy inputs included (PySpark behind the spark marker); DuckDB's relation
    # on a connection of its own
    other = fa.report.ranking(own_connection(constructor)(log), **ROLES, **COLUMNS, **BOOT)
    for name in ("per_group", "summary", "worst"):
        assert_frame_equal(getattr(other, name), getattr(with_ci, name), rel_tol=1e-9)
    for name, table in with_ci.tables.items():
        assert_frame_equal(other.tables[name], table, rel_tol=1e-9)


def test_a_group_mapping_names_the_groups(log: pl.DataFrame) -> None:
    items = log.unique("item").select("item", pl.col("gender"))
    mapping = dict(items.rows())
    report = fa.report.ranking(log, group="gender", ranking="query", item="item", groups=mapping)
    expected = fa.fair.exp(log, group="gender", ranking="query", item="item", groups=mapping)
    assert _value(report, "exp", "MinMaxRatio") == pytest.approx(expected.item())
    assert report.tables["positions"]["group"].unique().sort().to_list() == ["f", "m"]


# --- audit gates ---------------------------------------------------------------------------------


def test_check_gives_a_verdict_per_requirement(report: Report) -> None:
    ratio = _value(report, "exp", "MinMaxRatio")
    ndkl = _value(report, "ndkl", None)
    verdicts = report.check(
        {
            "exp:MinMaxRatio": (">=", 0.8),
            "exp:MaxMinDiff": ("<", 100),
            "ndkl": ("<=", 0.2),
            "arp:MinMaxRatio": (">", 0.0),
        }
    )
    columns = ["requirement", "metric", "combo", "group", "value", "lo", "hi", "reads", "rule"]
    assert verdicts.columns == [*columns, "outcome", "passed", "note"]
    assert verdicts["passed"].to_list() == [ratio >= 0.8, True, ndkl <= 0.2, True]
    outcome = "pass" if ndkl <= 0.2 else "fail"  # no interval: the value decides
    expected = ("ndkl", "ndkl", None, None, ndkl, None, None, "value", "<= 0.2", outcome)
    assert verdicts.row(2) == (*expected, ndkl <= 0.2, None)
    assert report.passed({"exp:MaxMinDiff": ("<", 100), "ndkl": (">=", 0)})
    assert not report.passed({"exp:MinMaxRatio": (">=", 0.99)})


@pytest.mark.parametrize(
    ("requirement", "rule", "message"),
    [
        ("exq:MinMaxRatio", (">=", 0.8), r"requirement metric='exq'.*did you mean 'exp'"),
        ("exp:MinMaxRatoi", (">=", 0.8), r"requirement='exp:MinMaxRatoi'.*exp:MinMaxRatio"),
        ("exp", (">=", 0.8), r"requirement='exp'.*expected one of: exp:MinMaxRatio"),
        ("ndkl:MinMaxRatio", ("<=", 0.2), r"expected one of: ndkl$"),
        ("ndkl", ("=<", 0.2), r"operator='=<' is not allowed; expected one of: >=, <=, >, <"),
        ("ndkl", ("<=", "0.2"), r"expected a number as threshold, got '0.2'"),
        ("ndkl", 0.2, r"expected a rule \(op, threshold\), got 0.2"),
        # not computed: the rule says what the metric needs
        ("expu:MinMaxRatio", (">=", 0.8), r"metric='expu': EXPU needs relevance=, and this"),
    ],
)
def test_check_refuses_unknown_requirements(
    log: pl.DataFrame, requirement: str, rule: Any, message: str
) -> None:
    report = fa.report.ranking(log.filter(pl.col("query") < 3), **ROLES)
    with pytest.raises(fa.InvalidParameterError, match=message):
        report.check({requirement: rule})


# --- export --------------------------------------------------------------------------------------


def test_json_round_trips(with_ci: Report) -> None:
    report_checks.round_trips(with_ci)


def test_json_writes_infinity_as_a_string() -> None:
    # group b has exposure but no relevance: EXPU's V_b is +inf, MaxMinRatio too
    log = pl.DataFrame(
        {"rank": [1, 2, 3, 4], "group": ["a", "b", "a", "b"], "relevance": [1.0, 0.0, 0.5, 0.0]}
    )
    report = fa.report.ranking(log, relevance="relevance")
    data = json.loads(report.to_json())
    expu = data["per_group"]["columns"].index("expu")
    assert [row[expu] for row in data["per_group"]["rows"]] == [1.0, "inf"]
    back = Report.from_dict(data)
    assert math.isinf(back.per_group["expu"][1])
    assert_frame_equal(back.summary, report.summary)


def test_text_fits_a_terminal_and_restores_the_display_options(with_ci: Report) -> None:
    with pl.Config(tbl_hide_dataframe_shape=False, tbl_rows=3):
        text = str(with_ci)
        assert "shape:" in str(with_ci.summary)  # the caller's options are back
    lines = text.splitlines()
    assert max(map(len, lines)) <= 100
    assert not any(line.strip().startswith(("shape:", "str ", "f64")) for line in lines)
    assert "MinMaxRatio, MaxMinRatio: 1 = parity" in text
    assert "90% bootstrap intervals" in text
    assert re.search(r"^\s+ndkl\s+ranking\s+\d+", text, re.M)  # the worst rankings are listed


def test_charts_are_altair_charts(with_ci: Report) -> None:
    import altair as alt

    charts = with_ci.charts()
    assert list(charts) == [*OPTIONS, "positions", "ndkl"]
    for chart in charts.values():
        assert isinstance(chart, alt.TopLevelMixin)
        spec = chart.to_dict()
        assert "Fair" in json.dumps(spec["title"])  # the title says what fair looks like


def test_html_is_one_self_contained_file(with_ci: Report, tmp_path: Path) -> None:
    text = report_checks.self_contained(with_ci, tmp_path)
    # a chart per group metric, the positions and the rankings' NDKL
    assert text.count("<svg") == len(entries("ranking", "group")) + 2


def test_importing_frameaudit_does_not_import_the_charts() -> None:
    code = (
        "import sys, frameaudit as fa; assert 'altair' not in sys.modules; "
        "assert 'frameaudit.report' not in sys.modules; fa.report.Report; "
        "assert 'altair' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_browser_draws_the_html_report(with_ci: Report, tmp_path: Path) -> None:
    page, charts, symbols = report_checks.browse(with_ci, tmp_path)
    dom = "".join(page.text)
    assert "Fair-ranking report by gender × age" in dom
    assert "Combined over the groups" in dom
    assert charts == [*OPTIONS, "positions", "ndkl"]
    # every chart drew its marks: points, whiskers and the parity rule; lines; bars
    assert symbols >= 8 * (4 + 4 + 1) + 28 + 10
