from __future__ import annotations

import subprocess
import sys

import pytest

from frameaudit import cli, fair
from frameaudit.datasets import ranking_example


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
