from __future__ import annotations

import re
import subprocess
import sys

import pytest

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


def test_demo_requires_a_command() -> None:
    with pytest.raises(SystemExit):
        cli.main([])


def test_demo_rejects_an_unknown_family(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["demo", "fairness"])
    assert "invalid choice: 'fairness'" in capsys.readouterr().err
