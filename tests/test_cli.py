from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import frameaudit
from frameaudit import cli, explain, fair, repro
from frameaudit.datasets import (
    cases_example,
    clustering_example,
    importance_example,
    ranking_example,
    runs_example,
)


def test_demo_prints_every_metric(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo"]) == 0
    out = capsys.readouterr().out
    for name in ["exp", "expu", "expru", "awrf", "erbe", "erbp", "erbr", "arp", "ndkl", "iaa"]:
        assert name in out
    for combo in fair.COMBOS:
        assert combo in out
    # the headline number printed is the function's value (4 decimals)
    value = fair.exp(
        ranking_example(), group=["gender", "age"], ranking="query", item="item"
    ).item()
    assert f"{value:.4f}" in out


def test_demo_clustering_prints_every_metric(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo", "clustering"]) == 0
    out = capsys.readouterr().out
    points = clustering_example()
    values = {
        name: getattr(fair, name)(points, a="a", b="b").item()
        for name in [
            "cluster_balance",
            "min_cluster_ratio",
            "cluster_distribution_tv",
            "cluster_distribution_kl",
        ]
    }
    values["social_fairness_ratio"] = fair.social_fairness_ratio(
        points, a="a", b="b", features=["x", "y"]
    ).item()
    silhouette = fair.silhouette_difference(points, a="a", b="b", features=["x", "y"])
    values.update(silhouette.row(0, named=True))
    assert len(values) == 8
    for name, value in values.items():
        assert re.search(rf"{name} +┆ {value:.4f}", out), name


def test_demo_repro_prints_the_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo", "repro"]) == 0
    out = capsys.readouterr().out
    runs = runs_example()
    for name, value in repro.ec_local(runs).row(0, named=True).items():
        if name in {"ec_local", "std", "min", "max", "q05", "q95"}:
            assert f"{value:.4f}" in out, name
    assert re.search(rf"ec_local +┆ {repro.ec_local(runs)['ec_local'].item():.4f}", out)
    for value in repro.leave_one_out(runs).get_column("leave_one_out"):
        assert f"{value:.4f}" in out


def test_demo_explain_prints_cases_correspondence_and_cohesion(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["demo", "explain"]) == 0
    out = capsys.readouterr().out
    train, queries = cases_example()
    cases = explain.nearest_cases(train, queries, features=["f1", "f2"], k=7, carry="predicted")
    summary = explain.correspondence(cases, by="predicted")
    for value in summary.get_column("correspondence"):
        assert f"{value:.4f}" in out
    importances = importance_example()
    alignment = explain.rank_alignment(importances, overall="overall", per_group=True)
    assert f"{alignment.filter(group='g2')['rank_alignment'].item():.4f}" in out


def test_demo_all_prints_every_family(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo", "all"]) == 0
    out = capsys.readouterr().out
    for title in ["a search log", "Clustering fairness", "Reproducibility", "Case-based"]:
        assert title in out


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
        "exp": fair.exp(log, **roles, combo="MaxMinDiff"),
        "expru": fair.expru(log, **roles, relevance="rel", combo="MaxMinDiff"),
        "erbr": fair.erbr(log, **roles, relevance="relevant", decay=0.8, combo="MaxMinDiff"),
        "awrf": fair.awrf(log, **roles, p=0.5, combo="MaxMinDiff"),
    }
    for name, value in expected.items():
        # the combos row of the metric: MinMaxRatio, MaxMinRatio, then MaxMinDiff
        row = re.search(rf"│ {name} +┆ [-\d.]+ +┆ [-\d.]+ +┆ ([-\d.]+)", out)
        assert row is not None, name
        assert row.group(1) == f"{value.item():.4f}", name
    iaa = fair.iaa(log, rank="position", ranking="q", item="item", relevance="rel").item()
    assert re.search(rf"iaa \(amortized over rankings\) +┆ {iaa:.4f}", out)
    ndkl = fair.ndkl(log, rank="position", group=["gender", "age"], ranking="q", by="q")
    assert "NDKL per ranking" in out
    assert f"{ndkl['ndkl'][0]:.4f}" in out


def test_report_ranking_leaves_out_metrics_without_their_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "log.csv"
    ranking_example().filter(query=0).select("rank", "gender").write_csv(path)
    out = _report(capsys, "ranking", str(path), "--group", "gender")
    for name in ("exp", "awrf", "erbe", "erbp", "arp", "ndkl"):
        assert name in out
    for name in ("expu", "expru", "erbr", "iaa", "NDKL per ranking"):
        assert name not in out
    one = ranking_example().filter(query=0)
    assert f"{fair.exp(one, group='gender').item():.4f}" in out


def test_report_clustering_types_the_group_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    points = clustering_example().with_columns(pl.col("group").eq("a").cast(pl.Int64))
    path = tmp_path / "points.csv"
    points.write_csv(path)
    out = _report(capsys, "clustering", str(path), "--a", "1", "--b", "0")
    value = fair.cluster_distribution_kl(points, a=1, b=0).item()
    assert re.search(rf"cluster_distribution_kl +┆ {value:.4f}", out)
    assert not re.search(r"│ social_fairness_ratio +┆", out)  # needs --features
    out = _report(capsys, "clustering", str(path), "--a", "1", "--b", "0", "--features", "x,y")
    value = fair.social_fairness_ratio(points, a=1, b=0, features=["x", "y"]).item()
    assert re.search(rf"social_fairness_ratio +┆ {value:.4f}", out)


def test_report_repro_correspondence_and_cohesion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = runs_example().rename({"prediction": "yhat"})
    runs.write_ipc(tmp_path / "runs.arrow")
    out = _report(capsys, "repro", str(tmp_path / "runs.arrow"), "--prediction", "yhat")
    value = repro.ec_local(runs, prediction="yhat")["ec_local"].item()
    assert re.search(rf"ec_local +┆ {value:.4f}", out)

    train, queries = cases_example()
    cases = explain.nearest_cases(train, queries, features=["f1", "f2"], k=5, carry="predicted")
    cases.write_parquet(tmp_path / "cases.parquet")
    out = _report(capsys, "correspondence", str(tmp_path / "cases.parquet"))
    for value in explain.correspondence(cases, by="predicted")["correspondence"]:
        assert f"{value:.4f}" in out

    importances = importance_example()
    importances.write_ndjson(tmp_path / "importances.ndjson")
    out = _report(capsys, "cohesion", str(tmp_path / "importances.ndjson"), "--overall", "overall")
    parity = explain.position_parity(importances, overall="overall", per_group=True)
    assert re.search(rf"g1 +┆ {parity.filter(group='g1')['position_parity'].item():.4f}", out)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["ranking", "{dir}/log.parquet", "--group", "gendr"], "did you mean 'gender'?"),
        (["ranking", "{dir}/absent.parquet"], "FILE='{dir}/absent.parquet': no such file"),
        (["ranking", "{dir}/log.txt"], "expected a file ending in .parquet"),
        (["ranking", "{dir}/log.parquet", "--group", "gender"], "unique within each ranking"),
        (["clustering", "{dir}/points.parquet", "--a", "x", "--b", "1"], "--a='x': expected a"),
        (["cohesion", "{dir}/log.parquet", "--overall", "all"], "--group='group': column"),
        (["clustering", "{dir}/flags.parquet", "--a", "yes", "--b", "false"], "--a='yes'"),
    ],
)
def test_report_errors_are_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    ranking_example().write_parquet(tmp_path / "log.parquet")
    (tmp_path / "log.txt").write_text("rank\n1\n")
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
    out = _report(capsys, *argv)
    assert "90% bootstrap intervals over the rankings" in out
    for name in ("exp", "arp", "ndkl"):
        result = getattr(fair, name)(log, group="gender", ranking="query", ci=0.9)
        lo, hi = result[f"{name}_lo"].item(), result[f"{name}_hi"].item()
        assert re.search(rf"│ {name} +┆ [-\d.]+ +┆ {lo:.4f} +┆ {hi:.4f} +┆ 20 ", out), name


def test_report_ranking_intervals_need_rankings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "log.csv"
    ranking_example().write_csv(path)
    assert cli.main(["report", "ranking", str(path), "--group", "gender", "--ci", "0.9"]) == 2
    assert "--ci=0.9: intervals resample the rankings; give --ranking" in capsys.readouterr().err
