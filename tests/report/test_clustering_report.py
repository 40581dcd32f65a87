"""The clustering-fairness report: its numbers are the metric functions'; it exports and renders."""

from __future__ import annotations

import json
import math
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
from tests.calls import entries, names

ROLES: dict[str, Any] = {"a": "a", "b": "b"}
FEATURES = ["x", "y"]
BOOT: dict[str, Any] = {"point": "id", "ci": 0.9, "n_boot": 40, "seed": 3}
LABEL_METRICS = names("clustering", "clusters")
CHARTS = ["composition", "balance"]


@pytest.fixture(scope="module")
def points() -> pl.DataFrame:
    frame = fa.datasets.clustering_example(seed=1)
    return frame.with_row_index("id").with_columns(pl.col("id").cast(pl.Int64))


@pytest.fixture(scope="module")
def report(points: pl.DataFrame) -> Report:
    return fa.report.clustering(points, **ROLES, features=FEATURES)


@pytest.fixture(scope="module")
def with_ci(points: pl.DataFrame) -> Report:
    return fa.report.clustering(points, **ROLES, features=FEATURES, **BOOT)


def _value(report: Report, metric: str, column: str = "value") -> Any:
    rows = report.summary.filter(pl.col("metric") == metric)
    assert rows.height == 1
    return rows[column].item()


# --- the numbers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("metric", LABEL_METRICS)
def test_per_cluster_values_are_the_metric_functions(
    points: pl.DataFrame, report: Report, metric: str
) -> None:
    detail = getattr(fa.fair, metric)(points, **ROLES, per_cluster=True)
    expected = detail.select("cluster", "n_a", "n_b", metric)
    assert_frame_equal(report.per_group.select("cluster", "n_a", "n_b", metric), expected)


def test_n_counts_the_points_of_a_and_b(points: pl.DataFrame) -> None:
    # a third group counts in the clusters' sizes (and so in ρ) but not in n
    relabelled = points.with_columns(
        pl.when(pl.col("id") % 10 == 0).then(pl.lit("c")).otherwise("group").alias("group")
    )
    report = fa.report.clustering(relabelled, **ROLES)
    counts = (
        relabelled.filter(pl.col("group").is_in(["a", "b"]))
        .group_by("cluster")
        .agg(pl.len().cast(pl.Int64).alias("n"))
        .sort("cluster")
    )
    assert_frame_equal(report.per_group.select("cluster", "n"), counts)
    sizes = relabelled.group_by("cluster").len().sort("cluster")["len"]
    assert (report.per_group["n"] < sizes).all()


def test_summary_values_are_the_metric_functions(points: pl.DataFrame, report: Report) -> None:
    for metric in LABEL_METRICS:
        expected = getattr(fa.fair, metric)(points, **ROLES).item()
        assert _value(report, metric) == pytest.approx(expected, rel=1e-12)
    sfr = fa.fair.social_fairness_ratio(points, **ROLES, features=FEATURES).item()
    assert _value(report, "social_fairness_ratio") == pytest.approx(sfr, rel=1e-12)
    silhouette = fa.fair.silhouette_difference(points, **ROLES, features=FEATURES)
    expected = silhouette["silhouette_difference"].item()
    assert _value(report, "silhouette_difference") == pytest.approx(expected, rel=1e-12)
    assert report.summary["combo"].is_null().all()
    directions = dict(report.summary.select("metric", "direction").rows())
    assert directions == {m.name: m.best for m in entries("clustering")}
    assert directions["cluster_balance"].startswith("1 = parity")
    assert directions["silhouette_difference"].startswith("0 = parity")
    ranges = dict(report.summary.select("metric", "range").rows())
    assert ranges["cluster_distribution_tv"] == ranges["cluster_balance"] == "[0, 1]"
    assert ranges["silhouette_difference"] == "[-2, 2]"


def test_without_features_only_the_label_metrics_run(points: pl.DataFrame) -> None:
    plain = fa.report.clustering(points, **ROLES)
    assert plain.summary["metric"].to_list() == LABEL_METRICS
    assert plain.parameters["features"] is None


def test_given_centroids_reach_the_social_fairness_ratio(points: pl.DataFrame) -> None:
    centres = pl.DataFrame({"cluster": [0, 1, 2, 3], "x": [0.0, 1, 2, 3], "y": [0.0, 0, 1, 1]})
    report = fa.report.clustering(points, **ROLES, features=FEATURES, centroids=centres)
    expected = fa.fair.social_fairness_ratio(
        points, **ROLES, features=FEATURES, centroids=centres
    ).item()
    assert _value(report, "social_fairness_ratio") == pytest.approx(expected, rel=1e-12)
    assert report.parameters["centroids"] == "given"


def test_intervals_are_the_metric_functions(points: pl.DataFrame, with_ci: Report) -> None:
    for metric in LABEL_METRICS:
        function = getattr(fa.fair, metric)
        detail = function(points, **ROLES, per_cluster=True, **BOOT)
        shown = ["cluster", metric, f"{metric}_lo", f"{metric}_hi", "points"]
        assert_frame_equal(with_ci.per_group.select(shown), detail.select(shown))
        overall = function(points, **ROLES, **BOOT)
        for end in ("lo", "hi"):
            expected = overall[f"{metric}_{end}"].item()
            assert _value(with_ci, metric, end) == pytest.approx(expected, rel=1e-12)
        assert _value(with_ci, metric, "points") == points.height
    sfr = fa.fair.social_fairness_ratio(points, **ROLES, features=FEATURES, **BOOT)
    assert _value(with_ci, "social_fairness_ratio", "hi") == pytest.approx(
        sfr["social_fairness_ratio_hi"].item(), rel=1e-12
    )
    # the silhouette has no interval: null, and a note says why
    assert _value(with_ci, "silhouette_difference", "lo") is None
    assert _value(with_ci, "silhouette_difference", "value") is not None
    assert any("silhouette_difference has no interval" in note for note in with_ci.notes)


def test_each_summary_row_holds_its_own_metrics_interval() -> None:
    """Six points, where the metrics' undefined replicates differ (a replicate without a point
    of a leaves the balance undefined, and the ratio infinite): each summary row is its own
    metric's call, though the report reads the four from one result."""
    frame = pl.DataFrame(
        {"id": range(6), "cluster": ["x"] * 3 + ["y"] * 3, "group": ["a", "a", "b", "a", "b", "b"]}
    )
    boot = {**BOOT, "n_boot": 200, "seed": 1}
    report = fa.report.clustering(frame, **ROLES, **boot)
    undefined = set()
    for metric in LABEL_METRICS:
        own = getattr(fa.fair, metric)(frame, **ROLES, **boot)
        for column, end in (("value", ""), ("lo", "_lo"), ("hi", "_hi")):
            assert _value(report, metric, column) == own[f"{metric}{end}"].item()
        for column in ("points", "undefined_replicates"):
            assert _value(report, metric, column) == own[column].item()
        undefined.add(own["undefined_replicates"].item())
    assert len(undefined) > 1  # a row that read another metric's would differ


def test_worst_names_the_cluster_furthest_from_parity() -> None:
    # holisticai's example: a = 4 points, b = 6; cluster 0 holds 1 of a and 4 of b, cluster 1
    # 2 and 1, cluster 2 1 and 1. ρ_a = (1/5)/0.4 = 0.5 in cluster 0 is the lowest balance,
    # N_a/N_b = 1/4 there the lowest ratio (parity 4/6), TV's largest term ½|1/4 − 4/6| = 5/24
    # is cluster 0's, KL's largest P_a·ln(P_a/P_b) = ½·ln 3 cluster 1's.
    points = pl.DataFrame(
        {"group": ["a"] * 4 + ["b"] * 6, "cluster": [0, 1, 1, 2, 0, 0, 0, 0, 1, 2]}
    )
    worst = fa.report.clustering(points, a="a", b="b").worst
    assert worst["metric"].to_list() == LABEL_METRICS
    assert worst["kind"].unique().to_list() == ["cluster"]
    assert worst["name"].to_list() == ["0", "0", "0", "1"]
    assert worst["value"].to_list() == pytest.approx([0.5, 0.25, 5 / 24, 0.5 * math.log(3)])
    assert worst["reference"].to_list() == pytest.approx([1.0, 4 / 6, 0.0, 0.0])
    assert worst["gap"].to_list() == pytest.approx([-0.5, 0.25 - 4 / 6, 5 / 24, 0.5 * math.log(3)])


def test_composition_gives_each_groups_share(points: pl.DataFrame, report: Report) -> None:
    composition = report.tables["composition"]
    counts = points.group_by("cluster", "group").agg(pl.len().cast(pl.Int64).alias("points"))
    assert_frame_equal(
        composition.select("cluster", "group", "points"), counts.sort("cluster", "group")
    )
    totals = composition.group_by("group").agg(pl.col("share").sum())["share"].to_list()
    assert totals == pytest.approx([1.0, 1.0])


def test_every_frame_kind_gives_the_same_report(
    points: pl.DataFrame, with_ci: Report, constructor: Any
) -> None:
    # rows shuffled, lazy inputs included (PySpark behind the spark marker); DuckDB's relation
    # on a connection of its own
    frame = own_connection(constructor)(points)
    other = fa.report.clustering(frame, **ROLES, features=FEATURES, **BOOT)
    summary = with_ci.summary
    if type(frame).__module__.split(".")[0] in ("duckdb", "pyspark"):
        # the silhouette's all-pairs kernel runs in memory only: left out, with a note
        summary = summary.filter(pl.col("metric") != "silhouette_difference")
        assert any("silhouette_difference is left out" in note for note in other.notes)
    assert_frame_equal(other.summary, summary, rel_tol=1e-9)
    for name in ("per_group", "worst"):
        assert_frame_equal(getattr(other, name), getattr(with_ci, name), rel_tol=1e-9)
    for name, table in with_ci.tables.items():
        assert_frame_equal(other.tables[name], table, rel_tol=1e-9)


def test_weights_leave_the_silhouette_out(points: pl.DataFrame) -> None:
    weighted = points.with_columns((pl.col("id") % 3).cast(pl.Float64).alias("w"))
    report = fa.report.clustering(weighted, **ROLES, features=FEATURES, weight="w")
    assert "silhouette_difference" not in report.summary["metric"].to_list()
    assert any("takes no point weights" in note for note in report.notes)
    expected = fa.fair.cluster_balance(weighted, **ROLES, weight="w", per_cluster=True)
    assert_frame_equal(report.per_group.select("n_a", "n_b"), expected.select("n_a", "n_b"))


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"a": "c", "b": "b"}, fa.InvalidValueError, r"a='c': value not found in group='group'"),
        ({"a": "a", "b": "z"}, fa.InvalidValueError, r"b='z': value not found"),
        ({"a": "a", "b": "b", "ci": 0.9}, fa.InvalidParameterError, r"give point="),
        ({"a": "a", "b": "b", "group": "grp"}, fa.ColumnNotFoundError, r"did you mean 'group'"),
        ({"a": "a", "b": "b", "features": ["x", "z"]}, fa.ColumnNotFoundError, r"'z' not found"),
    ],
)
def test_bad_input_raises_frameaudit_errors(
    points: pl.DataFrame, options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        fa.report.clustering(points, **options)


# --- audit gates and export ----------------------------------------------------------------------


def test_check_gates_on_single_metrics(report: Report) -> None:
    balance = _value(report, "cluster_balance")
    verdicts = report.check(
        {"cluster_balance": (">=", 0.8), "cluster_distribution_tv": ("<=", 1.0)}
    )
    assert verdicts["passed"].to_list() == [balance >= 0.8, True]
    with pytest.raises(fa.InvalidParameterError, match=r"did you mean 'cluster_balance'"):
        report.check({"cluster_balanse": (">=", 0.8)})


def test_json_round_trips(with_ci: Report) -> None:
    report_checks.round_trips(with_ci)


def test_json_writes_infinity_as_a_string() -> None:
    # cluster 1 holds a but no b: its ratio N_a/N_b and its KL term are +inf
    points = pl.DataFrame({"group": ["a", "b", "a", "b", "a"], "cluster": [0, 0, 0, 0, 1]})
    report = fa.report.clustering(points, a="a", b="b")
    data = json.loads(report.to_json())
    kl = data["per_group"]["columns"].index("cluster_distribution_kl")
    assert data["per_group"]["rows"][1][kl] == "inf"
    back = Report.from_dict(data)
    assert math.isinf(back.per_group["cluster_distribution_kl"][1])
    worst = back.worst.filter(pl.col("metric") == "cluster_distribution_kl").row(0, named=True)
    assert (worst["name"], worst["value"]) == ("1", math.inf)


def test_text_fits_a_terminal_with_no_shape_or_dtype_rows(with_ci: Report) -> None:
    text = str(with_ci)
    assert max(len(line) for line in text.splitlines()) <= 100
    assert not re.search(r"^\s*(?:shape:|str |f64|i64)", text, re.M)
    assert "90% bootstrap intervals over the points" in text
    assert "Per cluster (n: the cluster's points of groups a and b):" in text
    assert re.search(r"^\s+cluster_balance\s+cluster\s+\d+", text, re.M)  # the worst cluster


def test_charts_are_altair_charts(with_ci: Report) -> None:
    import altair as alt

    charts = with_ci.charts()
    assert list(charts) == CHARTS
    for chart in charts.values():
        assert isinstance(chart, alt.TopLevelMixin)
        spec = chart.to_dict()
        assert "Fair" in json.dumps(spec["title"])  # the title says what fair looks like
    composition = charts["composition"].to_dict()
    assert composition["encoding"]["xOffset"]["field"] == "group"
    assert composition["encoding"]["color"]["scale"]["range"] == ["#0072B2", "#E69F00"]


def test_html_is_one_self_contained_file(with_ci: Report, tmp_path: Path) -> None:
    text = report_checks.self_contained(with_ci, tmp_path)
    assert text.count("<svg") == len(CHARTS)


def test_a_browser_draws_the_html_report(with_ci: Report, tmp_path: Path) -> None:
    page, charts, symbols = report_checks.browse(with_ci, tmp_path)
    dom = "".join(page.text)
    assert "Clustering-fairness report: group a vs b over cluster" in dom
    assert "Single-number metrics" in dom
    assert charts == CHARTS
    # every chart drew its marks: 2 bars per cluster; a bar and a whisker per cluster, parity
    assert symbols >= 4 * 2 + 4 * 2 + 1


def test_docs_show_what_the_clustering_example_prints() -> None:
    # every number on the page's clustering section is the code's output today
    printed, shown = report_checks.docs_example("Clustering report")
    assert printed == shown
