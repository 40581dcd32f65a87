from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import frameaudit
from frameaudit import cli, datasets, explain, fair, repro
from frameaudit.datasets import (
    cases_example,
    clustering_example,
    importance_example,
    ranking_example,
    runs_example,
)
from tests.calls import entries

CLUSTER_METRICS = entries("clustering", "clusters")


def _shown(value: float) -> str:
    """A number as the text report shows it: four significant digits."""
    return f"{value:.4g}"


def _row(out: str, *cells: str) -> bool:
    """Whether a line of the text report holds ``cells`` in order, separated by spaces."""
    return (
        re.search(r"^\s*" + r"\s+".join(map(re.escape, cells)) + r"(\s|$)", out, re.M) is not None
    )


def test_demo_prints_every_metric(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo"]) == 0
    out = capsys.readouterr().out
    given = {"relevance", "ctr", "relevant", "judgments"}  # the columns the demo passes
    for metric in entries("ranking"):
        if set(metric.roles.values()) <= given:
            for name in metric.outputs or [metric.name]:  # a table's columns are its rows
                assert re.search(rf"^\s*{name}\s", out, re.M), name
    for combo in fair.COMBOS:
        assert combo in out
    # the headline number printed is the function's value
    value = fair.exp(
        ranking_example(), group=["gender", "age"], ranking="query", item="item"
    ).item()
    assert _row(out, "exp", _shown(value))
    assert max(map(len, out.splitlines())) <= 100
    assert "shape:" not in out


def test_demo_clustering_prints_every_metric(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo", "clustering"]) == 0
    out = capsys.readouterr().out
    points = clustering_example()
    values = {m.name: m.function(points, a="a", b="b").item() for m in CLUSTER_METRICS}
    values["social_fairness_ratio"] = fair.social_fairness_ratio(
        points, a="a", b="b", features=["x", "y"]
    ).item()
    silhouette = fair.silhouette_difference(points, a="a", b="b", features=["x", "y"])
    values["silhouette_difference"] = silhouette["silhouette_difference"].item()
    for name, value in values.items():
        assert _row(out, name, _shown(value)), name


def test_demo_repro_prints_the_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo", "repro"]) == 0
    out = capsys.readouterr().out
    runs = runs_example()
    assert _row(out, "ec_local", _shown(repro.ec_local(runs)["ec_local"].item()))
    for value in repro.leave_one_out(runs).get_column("leave_one_out"):
        assert _shown(value) in out


def test_demo_explain_prints_correspondence_and_cohesion(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["demo", "explain"]) == 0
    out = capsys.readouterr().out
    train, queries = cases_example()
    cases = explain.nearest_cases(train, queries, features=["f1", "f2"], k=7, carry="predicted")
    summary = explain.correspondence(cases, by="predicted")
    for value in summary.get_column("correspondence"):
        assert _shown(value) in out
    importances = importance_example()
    alignment = explain.rank_alignment(importances, overall="overall", per_group=True)
    assert _shown(alignment.filter(group="g2")["rank_alignment"].item()) in out


def test_demo_all_prints_every_family(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo", "all"]) == 0
    out = capsys.readouterr().out
    for title in ["a search log", "Clustering fairness", "Reproducibility", "Case-based"]:
        assert title in out


@pytest.mark.parametrize("family", ["ranking", "clustering", "repro", "explain"])
def test_demo_writes_json_and_html(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], family: str
) -> None:
    assert cli.main(["demo", family, "--format", "json", "--output", str(tmp_path / "r.json")]) == 0
    report = frameaudit.report.Report.from_json((tmp_path / "r.json").read_text())
    assert report.family == family
    assert cli.main(["demo", family, "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert page.startswith("<!DOCTYPE html>")
    assert "<svg" in page


def test_demo_all_shows_one_family_per_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo", "all", "--format", "json"]) == 2
    assert "--format json shows one family" in capsys.readouterr().err


def test_console_script_runs() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "frameaudit.cli", "demo", "--seed", "3"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "MinMaxRatio" in result.stdout


@pytest.mark.parametrize("argv", [["--version"], ["--version", "demo"]])
def test_version_is_the_installed_distributions(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"frameaudit {metadata.version('frameaudit')}\n"
    # the package's own __version__ says the same (a release bumps both)
    assert frameaudit.__version__ == metadata.version("frameaudit")


def test_version_without_package_metadata(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(cli.metadata, "version", missing)
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert "not installed" in capsys.readouterr().out


def test_version_console_script() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "frameaudit.cli", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"frameaudit {metadata.version('frameaudit')}\n"


def test_demo_requires_a_command() -> None:
    with pytest.raises(SystemExit):
        cli.main([])


def test_demo_rejects_an_unknown_family(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["demo", "fairness"])
    assert "invalid choice: 'fairness'" in capsys.readouterr().err


# --- frameaudit report FILE ----------------------------------------------------------------------


def _report(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert cli.main(["report", *argv]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def test_report_ranking_from_parquet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the file's own column names, given as options
    log = ranking_example().rename({"rank": "position", "query": "q", "relevance": "rel"})
    path = tmp_path / "log.parquet"
    log.write_parquet(path)
    roles: dict[str, Any] = {"rank": "position", "group": ["gender", "age"], "ranking": "q"}
    roles["item"] = "item"
    out = _report(
        capsys,
        "ranking",
        str(path),
        *("--rank", "position", "--group", "gender,age", "--ranking", "q", "--item", "item"),
        *("--relevance", "rel", "--ctr", "ctr", "--relevant", "relevant", "--decay", "0.8"),
    )
    expected = {
        name: [call(combo=c).item() for c in ("MinMaxRatio", "MaxMinRatio", "MaxMinDiff")]
        for name, call in {
            "exp": lambda **o: fair.exp(log, **roles, **o),
            "expru": lambda **o: fair.expru(log, **roles, relevance="rel", **o),
            "erbr": lambda **o: fair.erbr(log, **roles, relevance="relevant", decay=0.8, **o),
            "awrf": lambda **o: fair.awrf(log, **roles, p=0.5, **o),
        }.items()
    }
    for name, values in expected.items():
        # the combos row of the metric: MinMaxRatio, MaxMinRatio, then MaxMinDiff
        assert _row(out, name, *map(_shown, values)), name
    iaa = fair.iaa(log, rank="position", ranking="q", item="item", relevance="rel").item()
    assert _row(out, "iaa", _shown(iaa))
    ndkl = fair.ndkl(log, rank="position", group=["gender", "age"], ranking="q", by="q")
    worst = ndkl.sort("ndkl", "q", descending=[True, False]).row(0, named=True)
    assert _row(out, "ndkl", "ranking", str(worst["q"]), _shown(worst["ndkl"]))


def test_report_ranking_leaves_out_metrics_without_their_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "log.csv"
    ranking_example().filter(query=0).select("rank", "gender").write_csv(path)
    out = _report(capsys, "ranking", str(path), "--group", "gender")
    for metric in entries("ranking"):  # those needing a column the file lacks are left out
        shown = re.search(rf"^\s*{metric.name}\s", out, re.M) is not None
        assert shown == (not metric.roles), metric.name
    one = ranking_example().filter(query=0)
    assert _row(out, "exp", _shown(fair.exp(one, group="gender").item()))


def test_report_formats_and_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = ranking_example()
    path = tmp_path / "log.parquet"
    log.write_parquet(path)
    roles = ["--group", "gender", "--ranking", "query", "--item", "item"]
    data = json.loads(_report(capsys, "ranking", str(path), *roles, "--format", "json"))
    exp = fair.exp(log, group="gender", ranking="query", item="item").item()
    rows = data["summary"]["rows"]
    assert [r[2] for r in rows if r[:2] == ["exp", "MinMaxRatio"]] == [exp]
    html = tmp_path / "out" / "report.html"
    html.parent.mkdir()
    out = _report(capsys, "ranking", str(path), *roles, "--format", "html", "--output", str(html))
    assert out == ""
    page = html.read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page
    assert page.count("<svg") >= 5


@pytest.mark.parametrize(
    ("rules", "status", "lines"),
    [
        (["exp:MinMaxRatio>=0.5", "ndkl<=1"], 0, ["passed: exp:MinMaxRatio", "passed: ndkl"]),
        (["exp:MinMaxRatio>=0.99", "ndkl < 1"], 1, ["FAILED: exp:MinMaxRatio", "passed: ndkl"]),
        (["arp:MaxMinDiff<=0"], 1, ["FAILED: arp:MaxMinDiff"]),
    ],
)
def test_report_gates_exit_1_when_a_requirement_fails(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    rules: list[str],
    status: int,
    lines: list[str],
) -> None:
    log = ranking_example()
    path = tmp_path / "log.parquet"
    log.write_parquet(path)
    argv = ["report", "ranking", str(path), "--group", "gender", "--ranking", "query"]
    argv += ["--size", "rows"]
    assert cli.main([*argv, *(a for r in rules for a in ("--require", r))]) == status
    captured = capsys.readouterr()
    assert "Fair-ranking report" in captured.out  # the report is printed either way
    verdicts = captured.err.splitlines()
    assert len(verdicts) == len(lines)
    for verdict, expected in zip(verdicts, lines, strict=True):
        assert verdict.startswith(f"frameaudit: {expected} = ")
    # the value in the verdict is the metric function's
    exp = fair.exp(log, group="gender", ranking="query", size="rows").item()
    if rules[0].startswith("exp:"):
        assert f"= {_shown(exp)}, required" in verdicts[0]


def test_report_gate_on_an_interval_exits_3_when_it_straddles_a_threshold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With --ci a rule reads the interval: inside it the data cannot decide (exit 3)."""
    log = ranking_example()
    path = tmp_path / "log.parquet"
    log.write_parquet(path)
    roles = {"group": "gender", "ranking": "query", "size": "rows"}
    boot = {"ci": 0.9, "n_boot": 50, "seed": 3}
    exp = fair.exp(log, **roles, **boot)
    lo, value, hi = exp["exp_lo"].item(), exp["exp"].item(), exp["exp_hi"].item()
    assert lo < value < hi
    argv = ["report", "ranking", str(path), "--group", "gender", "--ranking", "query"]
    argv += ["--size", "rows", "--ci", "0.9", "--n-boot", "50", "--seed", "3"]
    middle = (lo + hi) / 2

    def gate(*rules: str) -> tuple[int, list[str]]:
        status = cli.main([*argv, *(a for r in rules for a in ("--require", r))])
        return status, capsys.readouterr().err.splitlines()

    status, err = gate(f"exp:MinMaxRatio>={middle!r}")
    assert status == 3
    assert err == [
        f"frameaudit: INCONCLUSIVE: exp:MinMaxRatio = {_shown(value)} [{_shown(lo)}, "
        f"{_shown(hi)}], required >= {middle:g} (the interval [{_shown(lo)}, {_shown(hi)}] "
        f"straddles {middle:g})"
    ]
    # one number read: the point value, or an end of the interval
    assert gate(f"exp:MinMaxRatio.value>={value / 2!r}")[0] == 0
    assert gate(f"exp:MinMaxRatio.lo>={middle!r}")[0] == 1
    # a fail decides over an inconclusive rule; passes below the interval
    assert gate(f"exp:MinMaxRatio>={middle!r}", f"exp:MinMaxRatio>={hi * 1.01!r}")[0] == 1
    assert gate(f"exp:MinMaxRatio>={lo * 0.99!r}")[0] == 0


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("exp:MinMaxRatio.mid>=0.8", "the number read='mid' is not allowed"),
        ("exp:Foo>=0.8", "requirement='exp:Foo' is not allowed"),
        ("nope>=1", "requirement metric='nope' is not allowed"),
        ("exp>=0.8", "requirement='exp' is not allowed; expected one of: exp:MinMaxRatio"),
    ],
)
def test_report_gate_on_an_unknown_metric_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rule: str, message: str
) -> None:
    ranking_example().write_parquet(tmp_path / "log.parquet")
    argv = [
        "report",
        "ranking",
        str(tmp_path / "log.parquet"),
        "--group",
        "gender",
        "--ranking",
        "query",
        "--item",
        "item",
    ]
    assert cli.main([*argv, "--require", rule]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err


@pytest.mark.parametrize("rule", ["exp:MinMaxRatio=>0.8", "exp:MinMaxRatio>=high", "ndkl"])
def test_report_malformed_gate_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rule: str
) -> None:
    ranking_example().write_parquet(tmp_path / "log.parquet")
    argv = ["report", "ranking", str(tmp_path / "log.parquet"), "--require", rule]
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    assert "expected METRIC:COMBO>=VALUE" in capsys.readouterr().err


def test_report_clustering_types_the_group_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    points = clustering_example().with_columns(pl.col("group").eq("a").cast(pl.Int64))
    path = tmp_path / "points.csv"
    points.write_csv(path)
    out = _report(capsys, "clustering", str(path), "--a", "1", "--b", "0")
    value = fair.cluster_distribution_kl(points, a=1, b=0).item()
    assert _row(out, "cluster_distribution_kl", _shown(value))
    assert "social_fairness_ratio" not in out  # needs --features
    out = _report(capsys, "clustering", str(path), "--a", "1", "--b", "0", "--features", "x,y")
    value = fair.social_fairness_ratio(points, a=1, b=0, features=["x", "y"]).item()
    assert _row(out, "social_fairness_ratio", _shown(value))


def test_report_clustering_intervals_need_points(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    points = clustering_example().with_row_index("id")
    points.write_parquet(tmp_path / "points.parquet")
    argv = ["report", "clustering", str(tmp_path / "points.parquet"), "--a", "a", "--b", "b"]
    assert cli.main([*argv, "--ci", "0.9"]) == 2
    assert "--ci=0.9: intervals resample the points; give --point" in capsys.readouterr().err
    out = _report(capsys, *argv[1:], "--ci", "0.9", "--n-boot", "50", "--point", "id")
    result = fair.cluster_balance(points, a="a", b="b", point="id", ci=0.9, n_boot=50)
    lo, hi = result["cluster_balance_lo"].item(), result["cluster_balance_hi"].item()
    value = result["cluster_balance"].item()
    assert _row(out, "cluster_balance", *map(_shown, (value, lo, hi)), "2000")


def test_report_repro_and_explain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = runs_example().rename({"prediction": "yhat"})
    runs.write_ipc(tmp_path / "runs.arrow")
    out = _report(capsys, "repro", str(tmp_path / "runs.arrow"), "--prediction", "yhat")
    value = repro.ec_local(runs, prediction="yhat")["ec_local"].item()
    assert _row(out, "ec_local", _shown(value))

    train, queries = cases_example()
    cases = explain.nearest_cases(train, queries, features=["f1", "f2"], k=5, carry="predicted")
    cases.write_parquet(tmp_path / "cases.parquet")
    out = _report(capsys, "explain", str(tmp_path / "cases.parquet"))
    for value in explain.correspondence(cases, by="predicted")["correspondence"]:
        assert _shown(value) in out

    importances = importance_example()
    importances.write_ndjson(tmp_path / "importances.ndjson")
    argv = ["--importances", str(tmp_path / "importances.ndjson"), "--overall", "overall"]
    out = _report(capsys, "explain", *argv)
    parity = explain.position_parity(importances, overall="overall", per_group=True)
    assert _shown(parity.filter(group="g1")["position_parity"].item()) in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["ranking", "{dir}/log.parquet", "--group", "gendr"], "did you mean 'gender'?"),
        (["ranking", "{dir}/absent.parquet"], "FILE='{dir}/absent.parquet': no such file"),
        (["ranking", "{dir}/log.txt"], "expected a file ending in .parquet"),
        # a header alone: its columns read as text, but the file is what is wrong
        (["ranking", "{dir}/header.csv", "--group", "g"], "FILE='{dir}/header.csv': holds no rows"),
        (["ranking", "{dir}/log.parquet", "--group", "gender"], "unique within each ranking"),
        (["clustering", "{dir}/points.parquet", "--a", "x", "--b", "1"], "--a='x': expected a"),
        (
            ["explain", "--importances", "{dir}/log.parquet", "--overall", "all"],
            "--group='group': column",
        ),
        (["explain"], "FILE: expected a cases file, --importances FILE, or both"),
        (["clustering", "{dir}/flags.parquet", "--a", "yes", "--b", "false"], "--a='yes'"),
    ],
)
def test_report_errors_are_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    ranking_example().write_parquet(tmp_path / "log.parquet")
    (tmp_path / "log.txt").write_text("rank\n1\n")
    (tmp_path / "header.csv").write_text("rank,g\n")
    pl.DataFrame({"cluster": [0, 1], "group": [0, 1]}).write_parquet(tmp_path / "points.parquet")
    flags = pl.DataFrame({"cluster": [0, 1], "group": [True, False]})
    flags.write_parquet(tmp_path / "flags.parquet")
    arguments = [a.format(dir=tmp_path) for a in argv]
    assert cli.main(["report", *arguments]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("frameaudit report: error: ")
    assert message.format(dir=tmp_path) in captured.err
    assert captured.err.count("\n") == 1  # one line, no traceback


def test_report_console_script(tmp_path: Path) -> None:
    runs_example().write_parquet(tmp_path / "runs.parquet")
    result = subprocess.run(
        [sys.executable, "-m", "frameaudit.cli", "report", "repro", str(tmp_path / "runs.parquet")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "leave_one_out" in result.stdout


def test_report_ranking_with_intervals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = ranking_example()
    path = tmp_path / "log.csv"
    log.write_csv(path)
    argv = ["ranking", str(path), "--group", "gender", "--ranking", "query", "--ci", "0.9"]
    out = _report(capsys, *argv, "--size", "rows", "--n-boot", "200", "--seed", "4")
    assert "90% bootstrap intervals over the rankings" in out
    for name in ("exp", "arp", "ndkl"):
        size = {"size": "rows"} if name == "exp" else {}
        result = getattr(fair, name)(
            log, group="gender", ranking="query", **size, ci=0.9, n_boot=200, seed=4
        )
        values = (result[c].item() for c in (name, f"{name}_lo", f"{name}_hi"))
        combo = "MinMaxRatio" if name != "ndkl" else "—"
        assert _row(out, name, combo, *map(_shown, values), "20"), name


def test_report_ranking_intervals_need_rankings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "log.csv"
    ranking_example().write_csv(path)
    assert cli.main(["report", "ranking", str(path), "--group", "gender", "--ci", "0.9"]) == 2
    assert "--ci=0.9: intervals resample the rankings; give --ranking" in capsys.readouterr().err


def test_report_ranking_reads_trec_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A .run and a .qrels file: the expected-exposure rows are the function's, which equal
    expeval's on these files (docs/trec.md)."""
    run_path, qrels_path = datasets.trec_example()
    # the run's group: the qrels' second field is 0 for every item, so the run gets its own
    grouped = tmp_path / "system.run"
    grouped.write_text(run_path.read_text())
    out = _report(
        capsys,
        "ranking",
        str(grouped),
        "--ranking",
        "query",
        "--item",
        "item",
        "--sample",
        "sample",
        "--group",
        "run",
        "--judgments",
        str(qrels_path),
        "--format",
        "json",
    )
    rows = {r[0]: r[2] for r in json.loads(out)["summary"]["rows"] if r[1] is None}
    expected = fair.expected_exposure(
        datasets.read_trec_run(run_path),
        judgments=datasets.read_qrels(qrels_path),
        sample="sample",
    ).row(0, named=True)
    for column in ("ee_l", "ee_d", "ee_r"):
        assert rows[column] == pytest.approx(expected[column], rel=1e-15)
    assert rows["ee_l"] == pytest.approx((0.28125 + 1.625) / 2, rel=1e-15)  # expeval's q1, q2


def test_judgments_need_the_query_and_item(tmp_path: Path) -> None:
    run_path, qrels_path = datasets.trec_example()
    code = cli.main(
        ["report", "ranking", str(run_path), "--group", "run", "--judgments", str(qrels_path)]
    )
    assert code == 2
