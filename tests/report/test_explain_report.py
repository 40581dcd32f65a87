"""The explanations report: its numbers are the metric functions', and it exports and renders."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import report_checks
from conftest import own_connection
from polars.testing import assert_frame_equal

import frameaudit as fa
from frameaudit.report import Report

BOOT: dict[str, Any] = {"ci": 0.9, "n_boot": 20, "seed": 3}
COHESION = ["position_parity", "rank_alignment_topk", "rank_alignment_alpha_jaccard"]
# the metric functions' options for each cohesion metric, as the report calls them
METHODS: dict[str, tuple[Any, dict[str, Any]]] = {
    "position_parity": (fa.explain.position_parity, {}),
    "rank_alignment_topk": (fa.explain.rank_alignment, {"method": "topk"}),
    "rank_alignment_alpha_jaccard": (
        fa.explain.rank_alignment,
        {"method": "alpha_jaccard", "alpha": 0.8},
    ),
}
CHARTS = ["bands", "correspondence", "cohesion"]


@pytest.fixture(scope="module")
def cases() -> pl.DataFrame:
    train, queries = fa.datasets.cases_example()
    cases: pl.DataFrame = fa.explain.nearest_cases(
        train, queries, features=["f1", "f2"], label="label", k=7, carry="predicted"
    )
    return cases


@pytest.fixture(scope="module")
def importances() -> pl.DataFrame:
    return fa.datasets.importance_example()


@pytest.fixture(scope="module")
def report(cases: pl.DataFrame, importances: pl.DataFrame) -> Report:
    return fa.report.explain(cases, importances, overall="overall")


@pytest.fixture(scope="module")
def with_ci(cases: pl.DataFrame, importances: pl.DataFrame) -> Report:
    return fa.report.explain(cases, importances, overall="overall", **BOOT)


def _value(report: Report, metric: str, column: str = "value") -> Any:
    rows = report.summary.filter(pl.col("metric") == metric)
    assert rows.height == 1
    return rows[column].item()


# --- the numbers ---------------------------------------------------------------------------------


def test_per_class_values_are_the_functions(cases: pl.DataFrame, report: Report) -> None:
    expected = fa.explain.correspondence(cases, by="predicted")
    assert report.keys == ("predicted",)
    assert_frame_equal(report.per_group, expected.rename({"n_queries": "n"}))


def test_overall_values_are_the_functions(cases: pl.DataFrame, report: Report) -> None:
    # from the per-query values, not the report's way (a summary over a constant partition)
    per_query = fa.explain.correspondence(cases)
    assert _value(report, "correspondence") == pytest.approx(
        per_query["correspondence"].mean(), rel=1e-12
    )
    low = (per_query["band"] == "low").mean()
    assert _value(report, "low_share") == pytest.approx(low, rel=1e-12)
    assert report.summary["combo"].is_null().all()
    assert report.summary["direction"].str.contains("better|cohesive").all()


def test_bands_give_each_classs_share(cases: pl.DataFrame, report: Report) -> None:
    per_query = fa.explain.correspondence(cases).join(
        cases.select("query", "predicted").unique(), on="query"
    )
    expected = (
        per_query.group_by("predicted", "band")
        .agg(pl.len().cast(pl.Float64).alias("queries"))
        .with_columns(
            pl.col("predicted").cast(pl.String).alias("class"),
            (pl.col("queries") / pl.col("queries").sum().over("predicted")).alias("share"),
        )
        .select("class", "band", "queries", "share")
    )
    bands = report.tables["bands"]
    assert bands["band"].unique(maintain_order=True).to_list() == ["low", "medium", "high"]
    shown = bands.select("class", "band", "queries", "share")
    assert_frame_equal(shown, expected, check_row_order=False)


def test_intervals_are_the_functions(cases: pl.DataFrame, with_ci: Report) -> None:
    per_class = fa.explain.correspondence(cases, by="predicted", **BOOT)
    expected = per_class.drop("undefined_replicates").rename({"n_queries": "n"})
    assert_frame_equal(with_ci.per_group, expected)
    # the overall interval: the function's summary of one constant partition
    whole = fa.explain.correspondence(cases.with_columns(all=pl.lit(0)), by="all", **BOOT)
    for end in ("lo", "hi"):
        expected_end = whole[f"correspondence_{end}"].item()
        assert _value(with_ci, "correspondence", end) == pytest.approx(expected_end, rel=1e-12)
    assert _value(with_ci, "correspondence", "queries") == 200
    # counts and cohesion have no interval
    assert _value(with_ci, "low_share", "lo") is None
    assert with_ci.summary.filter(pl.col("metric").is_in(COHESION))["lo"].is_null().all()
    assert any("Cohesion has no interval" in note for note in with_ci.notes)


def test_cohesion_is_the_functions(importances: pl.DataFrame, report: Report) -> None:
    table = report.tables["cohesion"]
    for metric, (function, options) in METHODS.items():
        mean = function(importances, overall="overall", **options).item()
        assert _value(report, metric) == pytest.approx(mean, rel=1e-12)
        per_group = function(importances, overall="overall", **options, per_group=True)
        assert_frame_equal(
            table.select("group", metric), per_group.rename({per_group.columns[1]: metric})
        )
    assert table["n"].to_list() == [8, 8]


def test_the_least_supported_queries_are_the_lowest(cases: pl.DataFrame, report: Report) -> None:
    per_query = fa.explain.correspondence(cases)
    lowest = per_query.sort("correspondence", "query").head(10)
    least = report.tables["least_supported"]
    assert least["query"].to_list() == lowest["query"].to_list()
    assert least["correspondence"].to_list() == lowest["correspondence"].to_list()
    worst = report.worst.filter(pl.col("kind") == "query")
    assert worst["name"].to_list() == [str(q) for q in lowest["query"].head(5)]


def test_worst_names_the_class_query_and_group_by_hand() -> None:
    # unweighted: query 0 → 1, 1 → 1/2 (class a: mean 3/4); 2 → 0, 3 → 1, 4 → 1/2 (b: 1/2)
    cases = pl.DataFrame(
        {
            "query": [0, 0, 1, 1, 2, 2, 3, 3, 4, 4],
            "label": ["a", "a", "a", "b", "a", "a", "b", "b", "b", "a"],
            "predicted": ["a"] * 4 + ["b"] * 6,
        }
    )
    # holisticai's example: g1 orders the features as overall, g2 agrees at one position only
    importances = pl.DataFrame(
        {
            "group": ["g1"] * 3 + ["g2"] * 3 + ["all"] * 3,
            "feature": ["f1", "f2", "f3"] * 3,
            "importance": [0.40, 0.35, 0.25, 0.20, 0.25, 0.55, 0.50, 0.40, 0.10],
        }
    )
    report = fa.report.explain(cases, importances, weighted=False, overall="all")
    rows = report.worst.select("metric", "kind", "name", "value").rows()
    assert rows[0] == ("correspondence", "class", "b", 0.5)
    assert rows[1:4] == [
        ("correspondence", "query", "2", 0.0),
        ("correspondence", "query", "1", 0.5),
        ("correspondence", "query", "4", 0.5),
    ]
    assert rows[-3][:3] == ("position_parity", "group", "g2")
    assert rows[-3][3] == pytest.approx(5 / 18)
    assert rows[-2][:3] == ("rank_alignment_topk", "group", "g2")
    assert rows[-2][3] == pytest.approx(0.5)
    assert _value(report, "correspondence") == pytest.approx(3 / 5)
    assert _value(report, "low_share") == pytest.approx(3 / 5)
    bands = report.tables["bands"].filter(pl.col("class") == "b")
    assert bands.select("band", "queries").rows() == [("low", 2.0), ("medium", 0.0), ("high", 1.0)]


def test_weights_reach_the_summaries(cases: pl.DataFrame) -> None:
    weighted = cases.with_columns(traffic=(pl.col("query") % 3).cast(pl.Float64))
    report = fa.report.explain(weighted, weight="traffic")
    expected = fa.explain.correspondence(weighted, by="predicted", weight="traffic")
    assert_frame_equal(report.per_group, expected.rename({"n_queries": "n"}))


def test_every_frame_kind_gives_the_same_report(
    cases: pl.DataFrame, importances: pl.DataFrame, with_ci: Report, constructor: Any
) -> None:
    # rows shuffled, lazy inputs included (PySpark behind the spark marker); on DuckDB each
    # frame a relation of a connection of its own
    build = own_connection(constructor)
    other = fa.report.explain(build(cases), build(importances), overall="overall", **BOOT)
    for name in ("per_group", "summary", "worst"):
        assert_frame_equal(getattr(other, name), getattr(with_ci, name), rel_tol=1e-9)
    assert other.tables.keys() == with_ci.tables.keys()
    for name, table in with_ci.tables.items():
        assert_frame_equal(other.tables[name], table, rel_tol=1e-9)


# --- what is given -------------------------------------------------------------------------------


def test_cases_alone(cases: pl.DataFrame, report: Report) -> None:
    alone = fa.report.explain(cases)
    assert_frame_equal(alone.per_group, report.per_group)
    assert alone.summary["metric"].to_list() == ["correspondence", "low_share"]
    assert list(alone.tables) == ["bands", "least_supported"]
    assert list(alone.charts()) == ["bands", "correspondence"]
    assert alone.title == "Explanation report: correspondence by predicted"


def test_importances_alone(importances: pl.DataFrame, report: Report) -> None:
    alone = fa.report.explain(importances=importances, overall="overall", k=4)
    assert alone.keys == ("group",)
    assert_frame_equal(alone.per_group, alone.tables["cohesion"])
    assert alone.per_group["n"].to_list() == [4, 4]
    parity = fa.explain.position_parity(importances, overall="overall", k=4).item()
    assert _value(alone, "position_parity") == pytest.approx(parity)
    assert alone.summary["metric"].to_list() == COHESION
    assert list(alone.charts()) == ["cohesion"]
    assert "low_share" not in str(alone)


def test_neither_is_an_error() -> None:
    with pytest.raises(fa.InvalidParameterError, match="expected at least one of them"):
        fa.report.explain()


def test_check_gates_on_the_summary(report: Report) -> None:
    verdicts = report.check({"low_share": ("<=", 0.1), "position_parity": (">=", 0.4)})
    assert verdicts["passed"].to_list() == [False, True]


# --- export --------------------------------------------------------------------------------------


def test_json_round_trips(with_ci: Report) -> None:
    report_checks.round_trips(with_ci)


def test_class_weights_and_a_mapping_overall_are_kept_as_pairs(
    cases: pl.DataFrame, importances: pl.DataFrame
) -> None:
    overall = dict(
        importances.filter(pl.col("group") == "overall").select("feature", "importance").rows()
    )
    report = fa.report.explain(
        cases,
        importances.filter(pl.col("group") != "overall"),
        class_weights={1: 2.0},
        overall=overall,
    )
    back = report_checks.round_trips(report)
    assert back.parameters["class_weights"] == [[1, 2.0]]
    assert back.parameters["overall"] == [list(pair) for pair in overall.items()]


def test_text_fits_a_terminal(with_ci: Report) -> None:
    text = str(with_ci)
    lines = text.splitlines()
    assert max(map(len, lines)) <= 100
    assert not any(line.strip().startswith(("shape:", "str ", "f64", "i64")) for line in lines)
    assert "90% bootstrap intervals over the queries" in text
    assert re.search(r"^\s+correspondence\s+class\s+0\s", text, re.M)


def test_charts_are_altair_charts(with_ci: Report) -> None:
    import altair as alt

    charts = with_ci.charts()
    assert list(charts) == CHARTS
    for chart in charts.values():
        assert isinstance(chart, alt.TopLevelMixin)
        title = json.dumps(chart.to_dict()["title"])
        assert "Fair" in title or "Supported" in title  # what good looks like


def test_html_is_one_self_contained_file(with_ci: Report, tmp_path: Path) -> None:
    text = report_checks.self_contained(with_ci, tmp_path)
    assert text.count("<svg") == len(CHARTS)
    assert "<th>n_low</th>" in text  # the counts are shown beside the intervals


def test_a_browser_draws_the_html_report(with_ci: Report, tmp_path: Path) -> None:
    page, charts, symbols = report_checks.browse(with_ci, tmp_path)
    dom = "".join(page.text)
    assert "Explanation report: correspondence by predicted and cohesion by group" in dom
    assert charts == CHARTS
    # bars: 2 classes x 3 bands and their labels; points and whiskers; 2 groups x 3 metrics
    assert symbols >= 6 + 2 + 2 + 6


def test_docs_show_what_the_explanation_example_prints() -> None:
    # every number on the page's explanation section is the code's output today
    printed, shown = report_checks.docs_example("Explanation report")
    assert printed == shown
