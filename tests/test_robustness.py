"""What the adversarial suite does not reach: files, extreme keys, engines, the CLI's failures.

Each class of escape found by trying frameaudit as a user and as a red team would gets the clear
error or the right value here, on every engine it concerns: unreadable input files, report
keys of every dtype through JSON, charts of thousands of groups, bootstrap units whose key is
a category, group labels that differ only in type, partitions whose every ranking weighs 0.
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pytest
from conftest import Constructor, assert_frame_close, to_polars
from polars.testing import assert_frame_equal

import frameaudit as fa
from frameaudit import cli
from frameaudit.compat import fairranktune as compat
from frameaudit.report import Report

# --- files the command line cannot read ------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.parquet", b"", "cannot be read as parquet"),
        ("corrupt.parquet", b"PAR1 not really", "cannot be read as parquet"),
        ("latin1.csv", "rank,group\n1,caf\xe9\n".encode("latin-1"), "is not UTF-8: re-encode"),
        ("truncated.arrow", b"ARROW1\x00\x00", "cannot be read as arrow"),
    ],
)
def test_an_unreadable_file_is_one_error_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert cli.main(["report", "ranking", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"frameaudit report: error: FILE={str(path)!r}: ")
    assert message in captured.err
    assert len(captured.err.splitlines()) == 1


def test_a_nan_threshold_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "log.parquet"
    fa.datasets.ranking_example().write_parquet(path)
    with pytest.raises(SystemExit) as raised:
        cli.main(["report", "ranking", str(path), "--require", "exp:MinMaxRatio>=nan"])
    assert raised.value.code == 2
    log = fa.datasets.ranking_example()
    report = fa.report.ranking(log, group="gender", ranking="query", item="item")
    with pytest.raises(fa.InvalidParameterError, match="expected a number as threshold"):
        report.check({"exp:MinMaxRatio": (">=", float("nan"))})


# --- report keys of every dtype, through JSON ----------------------------------------------


KEYS: dict[str, pl.Expr] = {
    "date": pl.col("gender").replace_strict({"f": dt.date(2024, 1, 1), "m": dt.date(2024, 2, 1)}),
    "datetime-zoned": pl.col("gender")
    .replace_strict(
        {
            "f": dt.datetime(2024, 1, 1, 9, tzinfo=dt.UTC),
            "m": dt.datetime(2024, 2, 1, 9, tzinfo=dt.UTC),
        }
    )
    .dt.convert_time_zone("Europe/Paris"),
    "time": pl.col("gender").replace_strict({"f": dt.time(1, 2), "m": dt.time(3, 4)}),
    "decimal": pl.col("gender").replace_strict(
        {"f": decimal.Decimal("1.25"), "m": decimal.Decimal("2.50")},
        return_dtype=pl.Decimal(10, 2),
    ),
    "duration": pl.col("gender").replace_strict(
        {"f": dt.timedelta(hours=1), "m": dt.timedelta(minutes=90)}
    ),
    "enum": pl.col("gender").cast(pl.Enum(["m", "f"])),
}


@pytest.mark.parametrize("kind", list(KEYS))
def test_a_report_with_any_key_dtype_goes_to_json_and_back(kind: str) -> None:
    log = fa.datasets.ranking_example().with_columns(KEYS[kind].alias("key"))
    report = fa.report.ranking(
        log, group="key", ranking="query", item="item", ci=np.float64(0.9), n_boot=np.int64(40)
    ).gate({"exp:MinMaxRatio": (">=", np.float32(0.8))})
    back = Report.from_json(report.to_json())
    assert_frame_equal(back.per_group, report.per_group)
    assert_frame_equal(back.summary, report.summary)
    assert back.per_group.schema["key"] == log.schema["key"]
    assert json.loads(report.to_json())["parameters"]["n_boot"] == 40
    assert "<svg" in report.to_html()


def test_a_report_file_cannot_run_code() -> None:
    log = fa.datasets.ranking_example()
    report = fa.report.ranking(log, group="gender", ranking="query", item="item")
    data = report.to_dict()
    data["per_group"]["dtypes"][0] = "__import__('os').system('true')"
    with pytest.raises(fa.InvalidParameterError, match="unknown dtype"):
        Report.from_dict(data)


# --- charts of many groups --------------------------------------------------------------------


def test_a_chart_of_thousands_of_rows_renders_and_names_what_it_shows() -> None:
    rng = np.random.default_rng(0)
    queries, length = 300, 20
    label = "a group whose name is far longer than any chart axis can show, number"
    names = [f"{label} {g:04d}" for g in rng.integers(0, 834, queries * length)]
    log = pl.DataFrame(
        {
            "query": np.repeat(np.arange(queries), length),
            "rank": np.tile(np.arange(1, length + 1), queries),
            "group": names,
        }
    )
    report = fa.report.ranking(log, ranking="query", size="rows")
    assert report.per_group.height > 800
    assert report.tables["positions"].height > 5000  # past Altair's row guard
    html = report.to_html()
    assert html.count("<svg") >= 3
    assert f"The 40 of {report.per_group.height} groups furthest from it." in html
    assert label not in html.split("<h2>Combined")[0].split("<h2>Charts</h2>")[1]
    assert "…" in html


# --- bootstrap units whose key is a category ----------------------------------------------------


def _with_enum_units(frame: pl.DataFrame, column: str) -> pl.DataFrame:
    values = frame[column].cast(pl.String).unique().sort().to_list()
    scrambled = [values[i] for i in np.random.default_rng(1).permutation(len(values))]
    return frame.with_columns(pl.col(column).cast(pl.String).cast(pl.Enum(scrambled)))


CATEGORY_UNITS: list[tuple[str, Any]] = [
    (
        "ranking",
        lambda f: fa.fair.exp(
            f, group="gender", ranking="query", item="item", ci=0.9, n_boot=60, seed=2
        ),
    ),
    (
        "point",
        lambda f: fa.fair.cluster_balance(f, a="a", b="b", point="point", ci=0.9, n_boot=60),
    ),
    ("sample", lambda f: fa.repro.ec_local(f, ci=0.9, n_boot=60, seed=3)),
]


def _unit_frame(name: str) -> pl.DataFrame:
    if name == "ranking":
        log = fa.datasets.ranking_example().with_columns(pl.format("q{}", pl.col("query")))
        return _with_enum_units(log, "query")
    if name == "point":
        points = fa.datasets.clustering_example().head(300)
        points = points.with_columns(pl.format("p{}", pl.int_range(pl.len())).alias("point"))
        return _with_enum_units(points, "point")
    runs = fa.datasets.runs_example().filter(pl.col("sample") < 120)
    return _with_enum_units(runs.with_columns(pl.format("s{}", pl.col("sample"))), "sample")


@pytest.mark.parametrize(("unit", "call"), CATEGORY_UNITS, ids=[c[0] for c in CATEGORY_UNITS])
def test_a_category_unit_gives_the_same_interval_on_every_engine(
    constructor: Constructor, unit: str, call: Any
) -> None:
    frame = _unit_frame(unit)
    expected = call(frame)
    as_text = frame.with_columns(pl.col(pl.Enum).cast(pl.String))
    assert_frame_close(to_polars(call(as_text)), expected)
    assert_frame_close(to_polars(call(constructor(frame))), expected)


# --- group labels of FairRankTune's dict ------------------------------------------------------


@pytest.mark.parametrize(
    ("groups", "message"),
    [
        ({"a": 1, "b": "1", "c": 1, "d": "1"}, r"labels 1 \(int\) and '1' \(str\) differ only"),
        ({"a": True, "b": "True", "c": True, "d": "x"}, r"True \(bool\) and 'True' \(str\)"),
        ({"a": None, "b": "x", "c": "y", "d": "x"}, "the group of item 'a' is None"),
    ],
)
def test_compat_refuses_labels_that_would_merge(groups: dict[str, Any], message: str) -> None:
    ranking_df = pd.DataFrame({"r1": ["a", "b", "c", "d"]})
    with pytest.raises(fa.InvalidValueError, match=message):
        compat.EXP(ranking_df, groups, "MinMaxRatio")


# --- partitions whose every ranking weighs 0 ---------------------------------------------


def test_a_partition_of_weight_zero_keeps_its_null_row(constructor: Constructor) -> None:
    frame = pl.DataFrame(
        {
            "query": [1, 1, 2, 2, 3, 3],
            "rank": [1, 2, 1, 2, 1, 2],
            "group": ["a", "b", "a", "b", "a", "b"],
            "w": [0.0, 0.0, 0.0, 0.0, 1.0, 1.0],
            "part": ["x", "x", "y", "y", "z", "z"],
        }
    )
    options: dict[str, Any] = {"ranking": "query", "size": "rows", "weight": "w", "by": "part"}
    result = to_polars(fa.fair.exp(constructor(frame), **options, ci=0.9, n_boot=30))
    assert result["part"].to_list() == ["x", "y", "z"]
    assert result["exp"].to_list()[:2] == [None, None]
    assert result["rankings"].to_list() == [0, 0, 1]
    assert result["undefined_replicates"].to_list()[:2] == [30, 30]
    everything = frame.with_columns(pl.lit(0.0).alias("w"))
    alone = {"ranking": "query", "size": "rows", "weight": "w"}
    assert to_polars(fa.fair.exp(constructor(everything), **alone)).rows() == [(None,)]
    ndkl = to_polars(fa.fair.ndkl(constructor(everything), ranking="query", weight="w"))
    assert ndkl.rows() == [(None,)]


# --- names and values the error messages must survive ---------------------------------------------


@pytest.mark.parametrize("parameter", ["rank", "group", "ranking"])
def test_a_column_named_with_the_empty_string_is_refused(parameter: str) -> None:
    frame = pl.DataFrame({"rank": [1, 2], "group": ["a", "b"], "ranking": [0, 0]}).rename(
        {parameter: ""}
    )
    with pytest.raises(fa.InvalidParameterError, match=f"{parameter}='': a column named with"):
        fa.fair.exp(frame, **{parameter: ""})


def test_a_nan_group_value_missing_from_the_column_is_named() -> None:
    points = pl.DataFrame({"cluster": [0, 0, 1, 1], "group": [0.5, 1.5, 0.5, 1.5]})
    with pytest.raises(fa.InvalidValueError, match="a=nan: value not found in group='group'"):
        fa.fair.cluster_balance(points, a=float("nan"), b=0.5)


# --- report role columns named like the report's own columns ----------------------------------

# every column name the report code writes or reads (found in its source, so that a name the
# reports start to use is tested too): named in a call, or in a module's tuple of names; a
# caller's role column may be named like any of them
_NAMED = r"(?:alias|col|lit|sort|select|group_by|rename|with_columns|drop|join)\(\s*\"(\w+)\""
_TUPLE = r"^_?[A-Z_]+ = \(([^)]*)\)"
_REPORT_NAMES = sorted(
    {
        name
        for path in (Path(fa.report.__file__).parent).glob("*.py")
        for text in [path.read_text()]
        for name in [
            *re.findall(_NAMED, text),
            *(n for t in re.findall(_TUPLE, text, re.M) for n in re.findall(r"\"(\w+)\"", t)),
        ]
        if not name.startswith("__fa_")  # the reserved prefix no role may take
    }
)
_TRAIN, _QUERIES = fa.datasets.cases_example()
_CORRESPONDENCE = fa.explain.nearest_cases(
    _TRAIN, _QUERIES, features=["f1", "f2"], k=3, carry="predicted"
)
# per builder: its frame, its role columns (role → column) and its other arguments
_BUILDERS: dict[str, tuple[pl.DataFrame, dict[str, str], dict[str, Any]]] = {
    "ranking": (
        fa.datasets.ranking_example().with_columns(w=pl.col("query") % 3 + 1),
        {
            "rank": "rank",
            "group": "gender",
            "ranking": "query",
            "item": "item",
            "relevance": "relevance",
            "weight": "w",
        },
        {},
    ),
    "clustering": (
        fa.datasets.clustering_example().with_row_index("pt"),
        {"cluster": "cluster", "group": "group", "features": "x", "point": "pt"},
        {"a": "a", "b": "b"},
    ),
    "repro": (
        fa.datasets.runs_example(),
        {"run": "run", "sample": "sample", "target": "target", "prediction": "prediction"},
        {},
    ),
    "explain": (
        _CORRESPONDENCE,
        {"query": "query", "distance": "distance", "label": "label", "predicted": "predicted"},
        {},
    ),
}


def _report_cases() -> list[tuple[str, str, str]]:
    """(builder, role, name): every name once per builder, the roles taken in turn."""
    cases = []
    for builder, (_, roles, _) in _BUILDERS.items():
        parameters = list(roles)
        cases += [
            (builder, parameters[i % len(parameters)], name) for i, name in enumerate(_REPORT_NAMES)
        ]
    return cases


def _report(builder: str, roles: dict[str, str], frame: pl.DataFrame) -> Report:
    _, _, options = _BUILDERS[builder]
    if builder == "explain":
        return fa.report.explain(frame, **roles, ci=0.9, n_boot=10)
    return getattr(fa.report, builder)(frame, **roles, **options, ci=0.9, n_boot=10)


@functools.cache
def _baseline_summary(builder: str) -> pl.DataFrame:
    frame, roles, _ = _BUILDERS[builder]
    return _report(builder, roles, frame).summary


def test_the_report_names_are_found() -> None:
    assert {"rows", "bucket", "share", "points", "n", "undefined_replicates"} <= set(_REPORT_NAMES)


@pytest.mark.parametrize(("builder", "role", "name"), _report_cases())
def test_a_role_column_named_like_a_report_column(builder: str, role: str, name: str) -> None:
    frame, roles, _ = _BUILDERS[builder]
    column = roles[role]
    if name in frame.columns and name != column:
        frame = frame.drop(name)  # the renamed column takes the name; what held it goes
        if name in roles.values():
            pytest.skip(f"{name!r} is another role's column")
    renamed = {**roles, role: name}
    outcome: Report | fa.FrameAuditError
    try:
        outcome = _report(builder, renamed, frame.rename({column: name}))
    except fa.FrameAuditError as error:
        outcome = error
    if isinstance(outcome, Report):
        assert_frame_equal(outcome.summary, _baseline_summary(builder))
    else:
        assert f"{role}={name!r}" in str(outcome)


# --- rows a report orders by value ------------------------------------------------------------


def test_values_equal_to_twelve_digits_are_ties_broken_by_the_key() -> None:
    from frameaudit.report import _tables

    # two rankings whose NDKL is equal in exact arithmetic, apart in the last bit (the order
    # of a parallel sum decides which is larger on a given run)
    ndkl = pl.DataFrame({"query": [19, 15], "ndkl": [0.778020782091027, 0.7780207820910269]})
    ordered = ndkl.sort(_tables.ordered("ndkl"), "query", descending=[True, False])
    assert ordered["query"].to_list() == [15, 19]
    apart = pl.DataFrame({"query": [19, 15], "ndkl": [0.7780207821, 0.7780207820]})
    assert apart.sort(_tables.ordered("ndkl"), "query", descending=[True, False])[
        "query"
    ].to_list() == [19, 15]
