"""``frameaudit compare FAMILY FILE --system COLUMN``: the comparison, its gate and exit status.

The numbers printed are the library's comparison on the same file (itself checked against an
independent numpy test in tests/test_compare.py); the exit statuses are the documented ones.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from test_compare import ROLES, _clusterings, _explainers, _pipelines, _systems

import frameaudit as fa
from frameaudit import cli
from frameaudit.report import _tables

FAST = ["--n-boot", "60", "--n-perm", "60"]
RANKING = ["--ranking", "query", "--group", "gender", "--size", "rows"]


def _file(tmp_path: Path, frame: pl.DataFrame, name: str = "systems.parquet") -> str:
    path = tmp_path / name
    frame.write_parquet(path)
    return str(path)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(["compare", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_the_json_is_the_librarys_comparison(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = _systems("A", "B", "C")
    path = _file(tmp_path, frame)
    argv = ["ranking", path, "--system", "system", *RANKING, "--metrics", "exp,ndkl", *FAST]
    status, out, _ = _run(capsys, *argv, "--format", "json", "--baseline", "B")
    assert status == 0
    written = json.loads(out)
    expected = fa.compare.ranking(
        frame, system="system", baseline="B", metrics=["exp", "ndkl"], n_boot=60, n_perm=60,
        **ROLES,
    )  # fmt: skip
    back = fa.compare.Comparison.from_dict(written)
    assert back.table.equals(expected.table)
    assert (written["baseline"], written["systems"]) == ("B", ["A", "B", "C"])
    assert written["record"]["source"]["files"] == [str(Path(path).resolve())]


@pytest.mark.parametrize(
    ("rules", "status", "said"),
    [
        (["exp:MinMaxRatio.p_value<=1"], 0, "passed"),
        (["exp:f.difference<-1"], 1, "FAILED"),
        (["exp:MinMaxRatio>=0"], 3, "INCONCLUSIVE"),  # B's interval straddles 0
    ],
)
def test_the_gate_decides_the_exit_status(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    rules: list[str],
    status: int,
    said: str,
) -> None:
    path = _file(tmp_path, _systems("A", "B"))
    argv = ["ranking", path, "--system", "system", *RANKING, "--metrics", "exp", *FAST]
    required = [arg for rule in rules for arg in ("--require", rule)]
    got, out, err = _run(capsys, *argv, *required)
    assert got == status
    assert f"frameaudit: {said}: {rules[0].split('<')[0].split('>')[0]} [system='B']" in err
    assert out.startswith("Comparison of ranking systems: B against A")


@pytest.mark.parametrize(
    ("family", "frame", "options"),
    [
        ("repro", _pipelines, ["--metrics", "ec_local,pa_kappa"]),
        ("explain", _explainers, []),
        ("clustering", lambda: _clusterings()[0], ["--a", "a", "--b", "b", "--point", "point"]),
    ],
)
def test_every_family_compares_from_a_file(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    family: str,
    frame: object,
    options: list[str],
) -> None:
    data = frame()  # type: ignore[operator]
    path = _file(tmp_path, data)
    status, out, _ = _run(
        capsys, family, path, "--system", "system", *options, *FAST, "--format", "json"
    )
    assert status == 0
    table = fa.compare.Comparison.from_json(out).table
    assert set(table["system"]) == {"B"}
    assert table["p_value"].is_not_null().all()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--baseline", "Z"], "baseline='Z' is not allowed; expected one of: A, B"),
        (["--n-perm", "1"], "n_perm=1: expected an integer in [2, 100000]"),
        (["--metrics", "expu"], "metrics='expu' is not allowed"),
        (["--require", "exp:LTwo.width>=0"], "the number read='width' is not allowed"),
        (["--require", "expu:MinMaxRatio>=0"], "requirement metric='expu' is not allowed"),
        (["--system", "engine"], "system='engine': column 'engine' not found"),
    ],
)
def test_bad_options_are_one_clear_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    path = _file(tmp_path, _systems("A", "B"))
    base = ["ranking", path, "--system", "system", *RANKING, "--metrics", "exp", *FAST]
    status, out, err = _run(capsys, *base, *argv)
    assert status == 2
    assert out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith("frameaudit compare: error: ")
    assert message in line


def test_a_comparison_needs_its_units_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _file(tmp_path, _systems("A", "B"))
    status, _, err = _run(capsys, "ranking", path, "--system", "system", "--group", "gender")
    assert status == 2
    assert "--ranking: a comparison pairs the systems' rankings; give the column" in err
    path = _file(tmp_path, _clusterings()[0], "points.parquet")
    status, _, err = _run(capsys, "clustering", path, "--system", "system", "--a", "a", "--b", "b")
    assert status == 2
    assert "--point: a comparison pairs the systems' points" in err


def test_help_lists_compare_and_its_exit_codes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "frameaudit.cli", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "frameaudit compare FAMILY FILE" in done.stdout
    assert "3  no --require rule failed but one is inconclusive" in done.stdout
    done = subprocess.run(
        [sys.executable, "-m", "frameaudit.cli", "compare", "ranking", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    for option in ("--system", "--baseline", "--n-perm", "--correction", "--on-missing"):
        assert option in done.stdout


def test_a_log_or_a_pipe_gets_no_progress_bar(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Standard error that is not a terminal (here captured) gets the verdicts only."""
    monkeypatch.setattr(_tables, "_PROGRESS_DELAY", 0.0)
    path = _file(tmp_path, _systems("A"))
    status = cli.main(["report", "ranking", path, *RANKING, "--require", "ndkl<=1"])
    err = capsys.readouterr().err
    assert status == 0
    (line,) = err.splitlines()
    assert line.startswith("frameaudit: passed: ndkl = ")
    fa.report.ranking(_systems("A"), **ROLES)  # the library's own bar is back
    assert "ranking report" in capsys.readouterr().err


def test_the_demo_compares_the_two_rankers(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo", "compare"]) == 0
    out = capsys.readouterr().out
    expected = fa.compare.ranking(
        fa.datasets.rankers_example(),
        system="ranker",
        baseline="current",
        ranking="query",
        item="item",
        group=["gender", "age"],
        metrics=["exp", "ndkl"],
    ).table.filter(pl.col("combo") == "MinMaxRatio")
    row = expected.row(0, named=True)
    cells = ["exp", "MinMaxRatio", "—", "reranked", f"{row['difference']:.4g}"]
    assert any(line.split()[:5] == cells for line in out.splitlines())
    assert "Audit passed: all 2 rule(s) hold." in out
    assert max(map(len, out.splitlines())) <= 100


def test_a_report_gates_each_group_against_the_reference_in_a_band(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The four-fifths rule from the command line: one verdict per group but the reference."""
    path = _file(tmp_path, fa.datasets.ranking_example(), "log.parquet")
    argv = ["report", "ranking", path, "--group", "gender", "--ranking", "query", "--size"]
    argv += ["rows", "--reference", "largest", "--require", "exp:ratio within 0.8,1.25"]
    status = cli.main([*argv, "--format", "json"])
    captured = capsys.readouterr()
    expected = fa.report.ranking(fa.datasets.ranking_example(), **ROLES, reference="largest").check(
        {"exp:ratio": ("within", (0.8, 1.25))}
    )
    (row,) = expected.iter_rows(named=True)
    assert status == {"pass": 0, "fail": 1}[row["outcome"]]
    said = {"pass": "passed", "fail": "FAILED"}[row["outcome"]]
    assert captured.err.startswith(f"frameaudit: {said}: exp:ratio [group='f / m'] = ")
    assert json.loads(captured.out)["verdicts"]["rows"][0][3] == "f / m"


def test_a_bad_band_or_reference_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _file(tmp_path, fa.datasets.ranking_example(), "log.parquet")
    base = ["report", "ranking", path, "--group", "gender", "--ranking", "query", "--size", "rows"]
    with pytest.raises(SystemExit) as exited:  # argparse refuses the rule before any work
        cli.main([*base, "--require", "exp:ratio within 1.25"])
    assert exited.value.code == 2
    assert "or a band, e.g. 'exp:ratio within 0.8,1.25'" in capsys.readouterr().err
    assert cli.main([*base, "--reference", "x"]) == 2
    err = capsys.readouterr().err
    assert "reference='x' is not allowed; expected one of: largest, best, f, m" in err


def test_the_demo_draws_no_progress_bar_into_a_log(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_tables, "_PROGRESS_DELAY", 0.0)
    assert cli.main(["demo"]) == 0
    assert capsys.readouterr().err == ""
