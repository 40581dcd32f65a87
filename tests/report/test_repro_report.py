"""The reproducibility report: its numbers are the metric functions', and it exports and renders."""

from __future__ import annotations

import inspect
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
from frameaudit import cli
from frameaudit.report import Report

PAIR = ["run_a", "run_b"]
BOOT: dict[str, Any] = {"ci": 0.9, "n_boot": 30, "seed": 3}


@pytest.fixture(scope="module")
def runs() -> pl.DataFrame:
    return fa.datasets.runs_example(seed=1)


@pytest.fixture(scope="module")
def report(runs: pl.DataFrame) -> Report:
    return fa.report.repro(runs)


@pytest.fixture(scope="module")
def with_ci(runs: pl.DataFrame) -> Report:
    return fa.report.repro(runs, **BOOT)


def _summary(report: Report, metric: str, column: str = "value") -> Any:
    rows = report.summary.filter(pl.col("metric") == metric)
    assert rows.height == 1
    assert rows["combo"].item() is None
    return rows[column].item()


def _errors_of(wrong: dict[int, set[int]], samples: int) -> pl.DataFrame:
    """Binary predictions of runs that get exactly the given samples wrong."""
    target = [s % 2 for s in range(samples)]
    return pl.DataFrame(
        {
            "run": [r for r in wrong for _ in range(samples)],
            "sample": list(range(samples)) * len(wrong),
            "target": target * len(wrong),
            "prediction": [
                1 - t if s in errors else t
                for errors in wrong.values()
                for s, t in enumerate(target)
            ],
        }
    )


# --- the numbers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("metric", fa.repro.METRICS)
def test_per_pair_values_are_the_metric_functions(
    runs: pl.DataFrame, report: Report, metric: str
) -> None:
    expected = getattr(fa.repro, metric)(runs, pairwise=True)
    assert_frame_equal(report.per_group.select(*PAIR, metric), expected)
    assert report.per_group["n"].to_list() == [1000] * 10
    assert report.keys == tuple(PAIR)


@pytest.mark.parametrize("metric", fa.repro.METRICS)
def test_summary_is_each_metrics_mean_over_the_pairs(
    runs: pl.DataFrame, report: Report, metric: str
) -> None:
    expected = getattr(fa.repro, metric)(runs)[metric].item()
    assert _summary(report, metric) == pytest.approx(expected, rel=1e-12)


def test_summary_rows_directions_and_ranges(report: Report) -> None:
    assert report.summary["metric"].to_list() == list(fa.repro.METRICS)
    directions = dict(report.summary.select("metric", "direction").rows())
    assert directions.pop("ec_global").startswith("no most-reproducible value")
    assert all(d.startswith("1 = most reproducible") for d in directions.values())
    ranges = dict(report.summary.select("metric", "range").rows())
    assert ranges == {m.name: m.range for m in fa.metrics("repro", "pairs") if m.name in ranges}
    assert ranges["ea_kappa"] == "[-1, 1]"
    assert report.summary.columns == ["metric", "combo", "value", "lo", "hi", "direction", "range"]


def test_leave_one_out_is_the_functions(runs: pl.DataFrame, report: Report) -> None:
    assert_frame_equal(report.tables["leave_one_out"], fa.repro.leave_one_out(runs))
    assert list(report.tables) == ["leave_one_out"]


def test_intervals_are_the_metric_functions(runs: pl.DataFrame, with_ci: Report) -> None:
    for metric in fa.repro.METRICS:
        function = getattr(fa.repro, metric)
        pairs = function(runs, pairwise=True, **BOOT)
        shown = [*PAIR, metric, f"{metric}_lo", f"{metric}_hi", "samples"]
        assert_frame_equal(with_ci.per_group.select(shown), pairs.select(shown), rel_tol=1e-12)
        mean = function(runs, **BOOT)
        for end in ("lo", "hi"):
            expected = mean[f"{metric}_{end}"].item()
            assert _summary(with_ci, metric, end) == pytest.approx(expected, rel=1e-12)
        assert _summary(with_ci, metric, "samples") == mean["samples"].item() == 1000
        assert _summary(with_ci, metric, "undefined_replicates") == 0
    assert_frame_equal(
        with_ci.tables["leave_one_out"], fa.repro.leave_one_out(runs, **BOOT), rel_tol=1e-12
    )
    # per-pair undefined replicates are left to the functions; the per-pair table stays readable
    assert not any(c.endswith("undefined_replicates") for c in with_ci.per_group.columns)


def test_worst_names_the_least_reproducible_pair_and_run() -> None:
    # run 1 errs on {0, 1}, run 2 on {0, 1, 2}, run 3 on {3, 4}:
    # EC_ℓ(1, 2) = 2/3, EC_ℓ(1, 3) = EC_ℓ(2, 3) = 0 → the tie goes to 1/3, mean 2/9;
    # predictions agree on 5, 2 and 1 of 6 samples → PA's worst pair is 2/3 (1/6);
    # leaving run 3 out leaves runs 1 and 2: 2/3, the others 0 → run 3, mean 2/9
    runs = _errors_of({1: {0, 1}, 2: {0, 1, 2}, 3: {3, 4}}, 6)
    worst = fa.report.repro(runs).worst
    rows = {row["metric"]: row for row in worst.iter_rows(named=True)}
    assert rows["ec_local"]["name"] == "1/3"
    assert rows["ec_local"]["kind"] == "pair"
    assert rows["ec_local"]["value"] == 0.0
    assert rows["ec_local"]["reference"] == pytest.approx(2 / 9)
    assert rows["ec_local"]["gap"] == pytest.approx(-2 / 9)
    assert rows["pa"]["name"] == "2/3"
    assert rows["pa"]["value"] == pytest.approx(1 / 6)
    assert rows["leave_one_out"]["name"] == "3"
    assert rows["leave_one_out"]["kind"] == "run"
    assert rows["leave_one_out"]["value"] == pytest.approx(2 / 3)
    assert rows["leave_one_out"]["reference"] == pytest.approx(2 / 9)
    # EC_g has no most-reproducible value: no pair is named by it
    named = [m for m in fa.repro.METRICS if m != "ec_global"]
    assert worst["metric"].to_list() == [*named, "leave_one_out"]


def test_undefined_pairs_are_left_out_of_worst_and_empty_union_decides() -> None:
    # runs 1 and 2 make no error: their EC_ℓ is 0/0
    runs = _errors_of({1: set(), 2: set(), 3: {0}}, 4)
    plain = fa.report.repro(runs)
    assert plain.per_group["ec_local"].to_list() == [None, 0.0, 0.0]
    assert plain.worst.filter(pl.col("metric") == "ec_local")["name"].item() == "1/3"
    assert _summary(plain, "ec_local") == 0.0
    ones = fa.report.repro(runs, empty_union=1)
    assert ones.per_group["ec_local"].to_list() == [1.0, 0.0, 0.0]
    assert _summary(ones, "ec_local") == pytest.approx(
        fa.repro.ec_local(runs, empty_union=1)["ec_local"].item()
    )
    assert ones.parameters["empty_union"] == 1
    # two runs that never err: every error metric undefined, nothing to name
    perfect = fa.report.repro(_errors_of({1: set(), 2: set()}, 4))
    row = perfect.worst.filter(pl.col("metric") == "ec_local").row(0, named=True)
    assert (row["name"], row["value"], row["gap"]) == ("(no defined value)", None, None)


def test_weights_count_the_samples_of_positive_weight(runs: pl.DataFrame) -> None:
    weighted = runs.with_columns(weight=(pl.col("sample") % 4).cast(pl.Float64))
    report = fa.report.repro(weighted, weight="weight", **BOOT)
    expected = fa.repro.summary(weighted, weight="weight", pairwise=True, **BOOT)
    assert report.per_group["n"].to_list() == expected["samples"].to_list() == [750] * 10
    assert_frame_equal(
        report.per_group.select(*PAIR, *fa.repro.METRICS),
        expected.select(*PAIR, *fa.repro.METRICS),
    )
    assert report.title == "Reproducibility report: 5 runs, 750 samples"


def test_every_frame_kind_gives_the_same_report(
    runs: pl.DataFrame, with_ci: Report, constructor: Any
) -> None:
    # rows shuffled, lazy inputs included (PySpark behind the spark marker); DuckDB's relation
    # on a connection of its own
    other = fa.report.repro(own_connection(constructor)(runs), **BOOT)
    for name in ("per_group", "summary", "worst"):
        assert_frame_equal(getattr(other, name), getattr(with_ci, name), rel_tol=1e-9)
    assert_frame_equal(other.tables["leave_one_out"], with_ci.tables["leave_one_out"], rel_tol=1e-9)
    assert other.title == with_ci.title


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"run": "runs"}, fa.FrameAuditError, r"'runs'.*did you mean 'run'"),
        ({"ci": 1.5}, fa.InvalidParameterError, r"ci"),
        ({"empty_union": "zero"}, fa.InvalidParameterError, r"empty_union"),
        ({"n_boot": 1, "ci": 0.9}, fa.InvalidParameterError, r"n_boot"),
        ({"weight": "missing"}, fa.FrameAuditError, r"'missing'"),
    ],
)
def test_bad_options_raise_frameaudit_errors(
    runs: pl.DataFrame, options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        fa.report.repro(runs, **options)


def test_bad_data_raises_frameaudit_errors(runs: pl.DataFrame) -> None:
    with pytest.raises(fa.FrameAuditError, match="run"):
        fa.report.repro(runs.filter(pl.col("run") == 0))  # one run: no pair
    with pytest.raises(fa.FrameAuditError, match="sample"):
        fa.report.repro(runs.filter((pl.col("run") > 0) | (pl.col("sample") > 0)))


# --- audit gates ---------------------------------------------------------------------------------


def test_check_gates_on_the_means(report: Report) -> None:
    verdicts = report.check({"ec_local": (">=", 0.4), "pa_kappa": (">=", 0.8)})
    assert verdicts["passed"].to_list() == [
        _summary(report, "ec_local") >= 0.4,
        _summary(report, "pa_kappa") >= 0.8,
    ]
    with pytest.raises(fa.InvalidParameterError, match=r"did you mean 'ec_local'"):
        report.check({"ec_locl": (">=", 0.4)})


# --- export --------------------------------------------------------------------------------------


def test_json_round_trips(with_ci: Report) -> None:
    report_checks.round_trips(with_ci)


def test_text_fits_a_terminal(with_ci: Report) -> None:
    text = str(with_ci)
    lines = text.splitlines()
    assert max(map(len, lines)) <= 100
    assert not any(line.strip().startswith(("shape:", "str ", "f64", "i64")) for line in lines)
    assert "90% bootstrap intervals over the samples" in text
    assert "Per pair of runs (n: the samples compared):" in text
    assert re.search(r"^\s+leave_one_out\s+run\s+\d+", text, re.M)


def test_charts_are_altair_charts(with_ci: Report) -> None:
    import altair as alt

    charts = with_ci.charts()
    assert list(charts) == ["matrix", "leave_one_out"]
    for chart in charts.values():
        assert isinstance(chart, alt.TopLevelMixin)
        assert "Reproducible:" in json.dumps(chart.to_dict()["title"])  # what good looks like
    # both triangles of the matrix, every pair once in each
    matrix = charts["matrix"].to_dict()
    cells = next(iter(matrix["datasets"].values()))
    assert len(cells) == 2 * with_ci.per_group.height


def test_html_is_one_self_contained_file(with_ci: Report, tmp_path: Path) -> None:
    text = report_checks.self_contained(with_ci, tmp_path)
    assert text.count("<svg") == 2


def test_a_browser_draws_the_html_report(with_ci: Report, tmp_path: Path) -> None:
    page, charts, symbols = report_checks.browse(with_ci, tmp_path)
    dom = "".join(page.text)
    assert "Reproducibility report: 5 runs, 1000 samples" in dom
    assert "Per pair of runs" in dom
    assert charts == ["matrix", "leave_one_out"]
    # 20 matrix cells and their 20 labels; 5 bars, 5 whiskers and the mean
    assert symbols >= 20 + 20 + 5 + 5 + 1


def test_docs_section_shows_what_its_example_prints() -> None:
    printed, shown = report_checks.docs_example("Reproducibility report")
    assert printed == shown


# --- multiplicity per group ------------------------------------------------------------------

MULTIPLICITY = [m for m in fa.metrics("repro", "table") if m.function.__module__.endswith("ity")]


@pytest.fixture(scope="module")
def grouped(runs: pl.DataFrame) -> tuple[pl.DataFrame, Report]:
    frame = runs.with_columns(grp=(pl.col("sample") % 3).cast(pl.String))
    return frame, fa.report.repro(frame, group="grp", **BOOT)


def _called(metric: Any, frame: pl.DataFrame, **options: Any) -> pl.DataFrame:
    taken = inspect.signature(metric.function).parameters
    target = {"target": "target"} if "target" in taken else {}
    return metric.function(frame, **target, **options, **BOOT)


def test_multiplicity_section_is_the_functions(grouped: tuple[pl.DataFrame, Report]) -> None:
    frame, report = grouped
    table = report.tables["multiplicity"].sort("grp")
    shown = [m for m in MULTIPLICITY if "score" not in m.roles]
    assert len(shown) == len(MULTIPLICITY) - 1 > 0  # the score range needs score=
    for metric in shown:
        per_group = _called(metric, frame, group="grp").sort("grp")
        overall = _called(metric, frame)
        for column in [c for c in metric.outputs if c in overall.columns]:
            assert table[column].to_list() == per_group[column].to_list()
            assert table[f"{column}_lo"].to_list() == per_group[f"{column}_lo"].to_list()
            assert _summary(report, column) == overall[column].item()
            assert _summary(report, column, "lo") == overall[f"{column}_lo"].item()
        # the worst group: the highest value, or the lowest where low is worst
        headline = next(iter(metric.outputs))
        values = dict(per_group.select("grp", headline).iter_rows())
        sign = 1 if metric.worst == "low" else -1  # a tie goes to the first group
        worst = report.worst.filter(pl.col("metric") == headline, pl.col("kind") == "group")
        assert worst["name"].item() == min(values, key=lambda g: (sign * values[g], g))
    assert table["n"].to_list() == [334, 333, 333]


def test_multiplicity_is_shown_only_when_asked(report: Report) -> None:
    assert "multiplicity" not in report.tables
    assert not report.worst.filter(pl.col("kind") == "group").height
    assert "churn" not in report.summary["metric"].to_list()


def test_multiplicity_chart_text_html_and_json(
    grouped: tuple[pl.DataFrame, Report], tmp_path: Path
) -> None:
    _, report = grouped
    charts = report.charts()
    assert list(charts) == ["matrix", "leave_one_out", "multiplicity"]
    spec = json.dumps(charts["multiplicity"].to_dict())
    assert "Arbitrariness per group" in spec
    assert "Multiplicity per group (n: the group's samples):" in str(report)
    assert report_checks.self_contained(report, tmp_path).count("<svg") == 3
    again = Report.from_json(report.to_json())
    assert_frame_equal(again.tables["multiplicity"], report.tables["multiplicity"])


def test_the_command_line_shows_the_section(
    grouped: tuple[pl.DataFrame, Report], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame, _ = grouped
    path = tmp_path / "runs.csv"
    frame.write_csv(path)
    assert cli.main(["report", "repro", str(path), "--group", "grp"]) == 0
    out = capsys.readouterr().out
    assert "Multiplicity per group" in out
    assert re.search(r"self_consistency\s+group\s+\d", out)
