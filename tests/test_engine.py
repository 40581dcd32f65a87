from __future__ import annotations

import datetime as dt
import importlib
from collections.abc import Callable
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
import pytest
from conftest import to_polars
from polars.testing import assert_frame_equal

import frameaudit as fa
from frameaudit import UnsupportedBackendError, datasets
from frameaudit._engine import to_engine
from frameaudit._engine.checks import Check


def test_unsupported_frame_kind_names_the_supported_ones() -> None:
    with pytest.raises(UnsupportedBackendError, match=r"polars\.DataFrame.*pandas\.DataFrame"):
        fa.fair.exp([{"rank": 1, "group": "a"}])


def test_registration_survives_reload() -> None:
    importlib.reload(fa)
    df = pl.DataFrame({"rank": [1, 2], "group": ["a", "b"]})
    assert df.fair.exp().columns == ["exp"]


def test_lazy_call_reads_no_data() -> None:
    def boom(_: pl.DataFrame) -> pl.DataFrame:
        raise AssertionError("data was read at call time")

    lf = pl.LazyFrame({"rank": [1, 2], "group": ["a", "b"]}).map_batches(
        boom, schema={"rank": pl.Int64, "group": pl.String}
    )
    result = lf.fair.exp()
    assert isinstance(result, pl.LazyFrame)
    with pytest.raises(AssertionError, match="data was read"):
        result.collect()


def test_caller_frame_is_not_modified() -> None:
    pdf = pl.DataFrame({"rank": [1, 2, 3], "group": ["a", "b", "a"]}).to_pandas()
    before = pdf.copy()
    pdf.fair.exp(combo=None)
    assert pdf.equals(before)
    assert list(pdf.columns) == ["rank", "group"]


# A DuckDB relation on the user's own connection, with a second frame or a dict as a parameter:
# frameaudit builds that frame on the relation's connection (DuckDB refuses to combine relations
# of two connections), and the result is the Polars one.
_RANKINGS = datasets.biased_rankings([0.4, 0.6], 20, phi=0.4, num_rankings=3, seed=0)
_GROUPS = _RANKINGS.select("item", "group").unique()
_CLUSTERS = datasets.clustering_example().sample(300, seed=0)
_IMPORTANCES = datasets.importance_example()
_GROUP_IMPORTANCES = _IMPORTANCES.filter(pl.col("group") != "overall")
_OVERALL = _IMPORTANCES.filter(pl.col("group") == "overall").drop("group")

WITH_A_SECOND_FRAME: list[tuple[str, pl.DataFrame, Callable[[Any], Any]]] = [
    (
        "groups dict",
        _RANKINGS.drop("group"),
        lambda f: fa.fair.exp(f, ranking="ranking", item="item", groups=dict(_GROUPS.rows())),
    ),
    (
        "groups frame",
        _RANKINGS.drop("group"),
        lambda f: fa.fair.ndkl(f, ranking="ranking", item="item", groups=_GROUPS, by="ranking"),
    ),
    (
        "overall dict",
        _GROUP_IMPORTANCES,
        lambda f: fa.explain.position_parity(f, overall=dict(_OVERALL.rows()), k=4),
    ),
    (
        "overall frame",
        _GROUP_IMPORTANCES,
        lambda f: fa.explain.rank_alignment(f, overall=_OVERALL, k=4),
    ),
    (
        "centroids frame",
        _CLUSTERS,
        lambda f: fa.fair.social_fairness_ratio(
            f,
            a="a",
            b="b",
            features=["x", "y"],
            centroids=_CLUSTERS.group_by("cluster").agg(pl.col("x", "y").median()),
        ),
    ),
    ("long summary", datasets.runs_example().filter(pl.col("sample") < 100), fa.repro.summary),
]


@pytest.mark.parametrize(
    ("data", "call"), [c[1:] for c in WITH_A_SECOND_FRAME], ids=[c[0] for c in WITH_A_SECOND_FRAME]
)
def test_duckdb_relation_on_its_own_connection(
    data: pl.DataFrame, call: Callable[[Any], Any]
) -> None:
    connection = duckdb.connect()
    try:
        relation = connection.from_arrow(data.to_arrow())
        result = to_polars(call(relation))
    finally:
        connection.close()
    assert_frame_equal(result, call(data), check_exact=False, check_dtypes=False)


# Small frames built from Python values on DuckDB: as constants (integers, text, booleans, up to
# 64 KiB) or through a query that reads an Arrow table (anything else); both give the values back.
SMALL_FRAMES: dict[str, dict[str, list[Any]]] = {
    "constants": {
        "int": [2**62, None, -(2**63), 0],
        "small int": [1, 2, None, 3],
        "text": ["it's", 'a "quoted" \\n', None, "é🙂"],
        "bool": [True, None, False, True],
    },
    "floats": {"x": [1.5, float("nan"), float("-inf"), None]},
    "dates": {"day": [dt.date(2026, 1, 1), None]},
    "large": {"text": [f"item {i:06d}" for i in range(6_000)]},
}


@pytest.mark.parametrize("name", list(SMALL_FRAMES))
def test_a_small_frame_on_duckdb_holds_its_values(name: str) -> None:
    columns = SMALL_FRAMES[name]
    expected = pa.table(columns)
    connection = duckdb.connect()
    try:
        data = connection.from_arrow(pa.table({"a": [1, 2]}))
        like = to_engine(data, {"a": "a"})
        built = like.frame_from_columns(columns, parameter="p").to_native().arrow()
        result = built.read_all() if isinstance(built, pa.RecordBatchReader) else built
    finally:
        connection.close()
    assert result.schema == expected.schema
    # NaN compares unequal to itself: compared as their text, which keeps NaN, nulls and signs
    assert [c.cast(pa.string()).to_pylist() for c in result.columns] == [
        c.cast(pa.string()).to_pylist() for c in expected.columns
    ]


# A dict parameter becomes a small frame in the data's engine: each of its columns must hold
# values of one type, and the error names the parameter (it once escaped as Polars' TypeError).
MIXED_DICTS: list[tuple[str, Callable[[], Any], str]] = [
    (
        "groups values",
        lambda: fa.fair.exp(
            _RANKINGS.drop("group"), ranking="ranking", item="item", groups={0: "a", 1: 5}
        ),
        r"groups=: the values of 'group' must all be of one type, found int, str",
    ),
    (
        "overall importances",
        lambda: fa.explain.position_parity(
            _GROUP_IMPORTANCES, overall={"f0": 1.0, "f1": "high"}, k=4
        ),
        r"overall=: the values of 'importance' must all be of one type, found float, str",
    ),
    (
        "integer too large",
        lambda: fa.fair.exp(
            _RANKINGS.drop("group"), ranking="ranking", item="item", groups={2**70: "a"}
        ),
        r"groups=: its values cannot form typed columns",
    ),
]


@pytest.mark.parametrize(
    ("call", "message"), [c[1:] for c in MIXED_DICTS], ids=[c[0] for c in MIXED_DICTS]
)
def test_dict_parameters_hold_one_type_per_column(call: Callable[[], Any], message: str) -> None:
    with pytest.raises(fa.InvalidParameterError, match=message):
        call()


def test_polars_builds_diagnostics_only_after_a_failed_proof(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the checks' diagnostics plans and messages are a sixth of a small call's cost:
    # on Polars they are built only for a check whose proof fails, on the way to its error
    built: list[Check] = []
    diagnosis = Check.diagnosis

    def spied(check: Check) -> Any:
        built.append(check)
        return diagnosis(check)

    monkeypatch.setattr(Check, "diagnosis", spied)
    good = pl.DataFrame({"rank": [1, 2, 1, 2], "group": ["a", "b", "b", "a"], "q": [1, 1, 2, 2]})
    for metric in (fa.fair.exp, fa.fair.ndkl, fa.fair.arp):
        options = {"size": "rows"} if metric is fa.fair.exp else {}
        metric(good, ranking="q", **options)
        metric(good.lazy(), ranking="q", **options).collect()
    assert built == []
    repeated = good.with_columns(pl.lit(1).alias("rank"))
    with pytest.raises(fa.InvalidValueError, match=r"rank='rank': values must be unique"):
        fa.fair.exp(repeated, ranking="q", size="rows")
    assert len(built) == 1
