"""The audit a report records: its gate's verdicts, provenance, versions, time; every export.

An audit file attached to a ticket must say whether the audit passed, against which rules,
on what data, with which options and versions (issue: "the audit file records the audit").
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path
from typing import Any

import jsonschema
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import frameaudit as fa
from frameaudit import cli
from frameaudit.report import Report, _charts, _tables

ROLES: dict[str, Any] = {"group": ["gender", "age"], "ranking": "query", "item": "item"}
RULES = {"exp:MinMaxRatio": (">=", 0.8), "ndkl": ("<=", 0.5)}


@pytest.fixture(scope="module")
def log() -> pl.DataFrame:
    return fa.datasets.ranking_example()


@pytest.fixture(scope="module")
def gated(log: pl.DataFrame) -> Report:
    report = fa.report.ranking(log, **ROLES, ci=0.9, n_boot=40, seed=1)
    return report.gate(RULES)


FAMILIES = ["ranking", "clustering", "repro", "explain"]


@functools.cache
def _report(family: str) -> Report:
    """The family's report of its built-in example, with a gate (built once, when a test
    asks: at collection it cost every worker two seconds)."""
    if family == "ranking":
        return fa.report.ranking(fa.datasets.ranking_example(), **ROLES).gate(RULES)
    if family == "clustering":
        points = fa.datasets.clustering_example()
        return fa.report.clustering(points, a="a", b="b").gate({"cluster_balance": (">=", 0.5)})
    if family == "repro":
        return fa.report.repro(fa.datasets.runs_example()).gate({"ec_local": (">=", 0.2)})
    train, queries = fa.datasets.cases_example()
    cases = fa.explain.nearest_cases(
        train, queries, features=["f1", "f2"], label="label", k=5, carry="predicted"
    )
    return fa.report.explain(cases).gate({"correspondence": (">=", 0.5)})


# --- the gate --------------------------------------------------------------------------------


def _exp_row(report: Report) -> dict[str, Any]:
    exp = report.summary.filter((pl.col("metric") == "exp") & (pl.col("combo") == "MinMaxRatio"))
    return exp.row(0, named=True)


def test_the_gate_is_recorded_with_each_verdict_and_the_interval_it_read(gated: Report) -> None:
    assert gated.verdicts is not None
    columns = ("requirement", "value", "lo", "hi", "reads", "rule", "outcome", "passed")
    verdicts = gated.verdicts.select(columns).rows()
    row = _exp_row(gated)
    value, lo, hi = row["value"], row["lo"], row["hi"]
    # by hand: >= 0.8 holds over the whole interval, over none of it, or over a part
    outcome = "pass" if lo >= 0.8 else ("fail" if hi < 0.8 else "inconclusive")
    expected = ("exp:MinMaxRatio", value, lo, hi, "interval", ">= 0.8", outcome)
    assert verdicts[0] == (*expected, outcome == "pass")
    assert outcome == "fail"  # the example's interval lies below 0.8
    failed = [v for v in verdicts if v[-2] == "fail"]
    assert gated.headline.startswith(f"Audit FAILED: {len(failed)} of 2 rule(s) failed")
    shown = f"{value:.4g} [{lo:.4g}, {hi:.4g}]"
    assert f"exp:MinMaxRatio = {shown}, required >= 0.8" in gated.headline
    assert gated.outcome == "fail"


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        # thresholds placed against the interval [lo, hi] of EXP's MinMaxRatio
        ((">=", "below"), "pass"),
        ((">=", "inside"), "inconclusive"),
        ((">=", "above"), "fail"),
        (("<=", "below"), "fail"),
        (("<=", "inside"), "inconclusive"),
        (("<=", "above"), "pass"),
        ((">", "lo"), "inconclusive"),  # the lower end itself does not satisfy >
        ((">=", "lo"), "pass"),
    ],
    ids=lambda x: x if isinstance(x, str) else "".join(x),
)
def test_a_rule_on_an_interval_passes_fails_or_is_inconclusive(
    gated: Report, rule: tuple[str, str], expected: str
) -> None:
    row = _exp_row(gated)
    lo, hi = row["lo"], row["hi"]
    assert lo < row["value"] < hi
    op, where = rule
    threshold = {"below": lo / 2, "inside": (lo + hi) / 2, "above": hi * 2, "lo": lo}[where]
    verdict = gated.check({"exp:MinMaxRatio": (op, threshold)}).row(0, named=True)
    assert (verdict["reads"], verdict["outcome"]) == ("interval", expected)
    assert verdict["passed"] is (expected == "pass")
    straddles = f"the interval [{lo:.4g}, {hi:.4g}] straddles {threshold:g}"
    assert verdict["note"] == (straddles if expected == "inconclusive" else None)


@pytest.mark.parametrize(
    ("reading", "expected"), [("value", "pass"), ("lo", "fail"), ("hi", "pass")]
)
def test_a_rule_may_read_one_number(gated: Report, reading: str, expected: str) -> None:
    row = _exp_row(gated)
    middle = (row["value"] + row["lo"]) / 2  # between the lower end and the value
    verdict = gated.check({f"exp:MinMaxRatio.{reading}": (">=", middle)}).row(0, named=True)
    assert (verdict["reads"], verdict["outcome"]) == (reading, expected)


def test_a_rule_without_an_interval_reads_the_value(log: pl.DataFrame) -> None:
    report = fa.report.ranking(log, **ROLES)
    value = _exp_row(report)["value"]
    above, below = (
        report.check({"exp:MinMaxRatio": (">=", value / 2)}),
        report.check({"exp:MinMaxRatio": (">=", value * 1.5)}),
    )
    assert above.select("reads", "outcome").row(0) == ("value", "pass")
    assert below.select("reads", "outcome").row(0) == ("value", "fail")
    lower = report.check({"exp:MinMaxRatio.lo": (">=", 0.0)}).row(0, named=True)
    assert (lower["outcome"], lower["note"]) == ("inconclusive", "undefined: no lo (no interval)")


def test_an_inconclusive_gate_says_so_in_every_export(gated: Report) -> None:
    row = _exp_row(gated)
    middle = (row["lo"] + row["hi"]) / 2
    audit = gated.gate({"exp:MinMaxRatio": (">=", middle), "ndkl": ("<=", 1e9)})
    assert audit.outcome == "inconclusive"
    assert audit.headline.startswith(
        "Audit INCONCLUSIVE: none of 2 rule(s) failed, 1 undecided; exp:MinMaxRatio = "
    )
    data = json.loads(audit.to_json())
    assert (data["outcome"], data["passed"]) == ("inconclusive", False)
    jsonschema.validate(data, fa.report.json_schema())
    assert "class='fa-headline fa-inconclusive'" in audit.to_html()
    assert "Audit INCONCLUSIVE" in audit.to_markdown()
    assert not audit.passed({"exp:MinMaxRatio": (">=", middle)})


def test_a_passing_gate_says_so(log: pl.DataFrame) -> None:
    report = fa.report.ranking(log, **ROLES).gate({"exp:MinMaxRatio": (">=", 0.1)})
    assert report.headline.startswith("Audit passed: all 1 rule(s) hold.")
    assert json.loads(report.to_json())["passed"] is True


def test_an_absent_group_fails_the_gate_with_its_reason(log: pl.DataFrame) -> None:
    """The issue's example: a frame of one gender passes no gate, and says why."""
    men = log.filter(pl.col("gender") == "m")
    alone = fa.report.ranking(men, group="gender", ranking="query", item="item").gate(RULES)
    assert alone.verdicts is not None
    assert alone.verdicts["passed"].to_list() == [False, False]
    assert alone.verdicts["outcome"].to_list() == ["inconclusive", "inconclusive"]
    notes = alone.verdicts["note"].to_list()
    assert notes[0] == "undefined: fewer than two groups to compare"
    listed = fa.report.ranking(
        men, group="gender", ranking="query", item="item", universe=["m", "f"]
    ).gate(RULES)
    assert listed.verdicts is not None
    assert listed.verdicts["note"][0] == "undefined: group 'f' absent (n = 0)"
    assert listed.verdicts["note"][1].startswith("undefined: group 'f' has no row in the frame")
    assert "EXP MinMaxRatio is undefined: group 'f' absent (n = 0)." in listed.headline
    assert listed.worst.filter(pl.col("metric") == "exp")["name"].item() == "f (absent)"
    # with a target, NDKL is defined: the men-only rankings are far from it
    target = fa.report.ranking(
        men, group="gender", ranking="query", item="item", target={"m": 0.5, "f": 0.5}
    )
    ndkl = target.summary.filter(pl.col("metric") == "ndkl")["value"].item()
    assert ndkl == pytest.approx(
        fa.fair.ndkl(men, group="gender", ranking="query", target={"m": 0.5, "f": 0.5}).item()
    )
    assert ndkl > 0.5


# --- the record --------------------------------------------------------------------------------


def test_the_record_holds_the_input_the_versions_and_the_time(
    gated: Report, log: pl.DataFrame
) -> None:
    source = gated.record["source"]
    assert source["kind"] == "polars.DataFrame"
    assert source["rows"] == log.height
    assert source["rankings"] == log["query"].n_unique()
    assert source["groups"] == ["f/old", "f/young", "m/old", "m/young"]
    versions = gated.record["versions"]
    assert versions["frameaudit"] == fa.__version__
    assert versions["polars"] == pl.__version__
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", gated.record["created"])
    assert gated.parameters["ci"] == 0.9


def test_source_date_epoch_fixes_the_time(
    log: pl.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    report = fa.report.ranking(log, group="gender", ranking="query", item="item")
    assert report.record["created"] == "2023-11-14T22:13:20+00:00"


@pytest.mark.parametrize("family", FAMILIES)
def test_json_validates_against_the_shipped_schema_and_reads_back(family: str) -> None:
    report = _report(family)
    assert report.family == family
    data = json.loads(report.to_json())
    jsonschema.validate(data, fa.report.json_schema())
    assert data["headline"] == report.headline
    back = Report.from_json(report.to_json())
    assert back.verdicts is not None
    assert report.verdicts is not None
    assert_frame_equal(back.verdicts, report.verdicts)
    assert back.record == report.record
    assert back.headline == report.headline


def test_the_schema_refuses_a_file_without_the_verdicts(gated: Report) -> None:
    data = json.loads(gated.to_json())
    del data["passed"]
    with pytest.raises(jsonschema.ValidationError, match="'passed' is a required property"):
        jsonschema.validate(data, fa.report.json_schema())


@pytest.mark.parametrize("family", FAMILIES)
def test_every_export_opens_with_the_outcome_and_holds_the_record(family: str) -> None:
    report = _report(family)
    assert report.family == family
    assert report.verdicts is not None
    first = report.verdicts.row(0, named=True)
    assert str(report).splitlines()[2].startswith(report.headline[:40])
    for text in (report.to_html(), report.to_markdown()):
        assert report.headline.split(".")[0][:40] in text
        assert first["requirement"] in text
        assert report.record["created"] in text
        assert f"frameaudit: {report.record['versions']['frameaudit']}" in text
    markdown = report.to_markdown()
    assert markdown.startswith(f"# {report.title}\n\n**Audit ")
    assert "## Audit gate" in markdown
    assert "## Audit record" in markdown
    html = report.to_html()
    assert html.index("fa-headline") < html.index("<h2>Audit gate</h2>")


def test_markdown_tables_escape_pipes_and_markup() -> None:
    log = pl.DataFrame({"rank": [1, 2, 3, 4], "group": ["a|b", "<i>", "a|b", "<i>"]})
    text = fa.report.ranking(log).to_markdown()
    assert "a\\|b" in text
    assert "\\<i\\>" in text
    assert "<i>" not in text


# --- files, whole or not at all --------------------------------------------------------------


@pytest.mark.parametrize("method", ["to_html", "to_json", "to_markdown"])
def test_a_failed_write_keeps_the_previous_file(
    gated: Report, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    path = tmp_path / "audit.out"
    path.write_text("the previous report")

    def full_disk(_: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space left"):
        getattr(gated, method)(path)
    assert path.read_text() == "the previous report"
    assert [p.name for p in tmp_path.iterdir()] == ["audit.out"]  # no temporary file left
    monkeypatch.undo()
    getattr(gated, method)(path)
    assert path.read_text() == getattr(gated, method)()


# --- partitions and weights ----------------------------------------------------------------------


def test_by_gives_every_partition_its_values_and_verdicts(log: pl.DataFrame) -> None:
    markets = log.with_columns((pl.col("query") % 3).alias("market"))
    report = fa.report.ranking(markets, group="gender", ranking="query", item="item", by="market")
    expected = fa.fair.exp(
        markets, group="gender", ranking="query", item="item", by="market", combo=None
    )
    assert_frame_equal(report.per_group.select("market", "gender", "exp", "n"), expected)
    ratio = fa.fair.exp(markets, group="gender", ranking="query", item="item", by="market")
    rows = report.summary.filter((pl.col("metric") == "exp") & (pl.col("combo") == "MinMaxRatio"))
    assert_frame_equal(rows.select("market", pl.col("value").alias("exp")), ratio)
    verdicts = report.check({"exp:MinMaxRatio": (">=", 0.8)})
    assert verdicts["market"].to_list() == [0, 1, 2]
    assert verdicts["passed"].to_list() == [v >= 0.8 for v in ratio["exp"]]
    assert report.title.endswith(", per market")
    assert "partitions" in report.headline


def test_weight_reaches_every_metric(log: pl.DataFrame) -> None:
    traffic = log.with_columns(((pl.col("query") % 4) + 1).alias("traffic"))
    report = fa.report.ranking(
        traffic, group="gender", ranking="query", item="item", weight="traffic"
    )
    for metric in ("exp", "arp"):
        value = getattr(fa.fair, metric)(
            traffic, group="gender", ranking="query", item="item", weight="traffic"
        ).item()
        row = report.summary.filter(
            (pl.col("metric") == metric) & (pl.col("combo") == "MinMaxRatio")
        )
        assert row["value"].item() == pytest.approx(value, rel=1e-12)
    ndkl = fa.fair.ndkl(traffic, group="gender", ranking="query", item="item", weight="traffic")
    row = report.summary.filter(pl.col("metric") == "ndkl")
    assert row["value"].item() == pytest.approx(ndkl.item(), rel=1e-12)
    assert report.parameters["weight"] == "traffic"


# --- without the report extra, and with progress ----------------------------------------------


def test_html_without_the_charts_extra_degrades_to_tables(
    gated: Report, monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing() -> Any:
        raise ImportError("charts need the report extra: pip install 'frameaudit[report]'")

    monkeypatch.setattr(_charts, "altair", missing)
    html = gated.to_html()
    assert "No charts: charts need the report extra" in html
    assert "<svg" not in html
    assert "<h2>Audit gate</h2>" in html


def test_a_long_report_shows_its_progress(
    log: pl.DataFrame, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(_tables, "_PROGRESS_DELAY", 0.0)
    fa.report.ranking(log, group="gender", ranking="query", item="item")
    assert "ranking report" in capsys.readouterr().err


# --- the command line ----------------------------------------------------------------------------


def test_the_cli_writes_the_audit_into_the_file_and_exits_3_on_an_undefined_value(
    log: pl.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An absent group leaves the value undefined: inconclusive, never a pass (exit 3)."""
    data = tmp_path / "log.parquet"
    log.filter(pl.col("gender") == "m").write_parquet(data)
    argv = ["report", "ranking", str(data), "--group", "gender", "--ranking", "query"]
    argv += ["--item", "item", "--universe", "m,f", "--require", "exp:MinMaxRatio>=0.8"]
    for form in ("json", "html", "markdown"):
        out = tmp_path / f"audit.{form}"
        assert cli.main([*argv, "--format", form, "--output", str(out)]) == 3
        text = out.read_text()
        assert "Audit INCONCLUSIVE: none of 1 rule(s) failed, 1 undecided" in text
        assert str(data.resolve()) in text
    assert "group 'f' absent (n = 0)" in capsys.readouterr().err
    record = json.loads((tmp_path / "audit.json").read_text())
    assert (record["passed"], record["outcome"]) == (False, "inconclusive")
    assert record["record"]["source"]["files"] == [str(data.resolve())]


@pytest.mark.parametrize(
    ("output", "message"),
    [
        ("folder", "is a folder; give a file path"),
        ("missing/audit.html", "the folder"),
    ],
)
def test_an_unwritable_output_is_refused_before_any_work(
    log: pl.DataFrame,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    output: str,
    message: str,
) -> None:
    data = tmp_path / "log.parquet"
    log.write_parquet(data)
    (tmp_path / "folder").mkdir()
    argv = ["report", "ranking", str(data), "--ranking", "query", "--item", "item"]
    assert cli.main([*argv, "--output", str(tmp_path / output)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("frameaudit report: error: --output=")
    assert message in err
    assert len(err.splitlines()) == 1


def test_a_forgotten_ranking_column_is_named(
    log: pl.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "log.parquet"
    log.write_parquet(data)
    assert cli.main(["report", "ranking", str(data), "--group", "gender"]) == 2
    err = capsys.readouterr().err
    assert "repeat a value" in err
    assert "name the column identifying them with --ranking" in err


def test_help_is_plain_text_with_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert "``" not in out
    assert ":data:" not in out
    assert "1  a --require rule failed" in out
