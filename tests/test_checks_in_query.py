"""Value checks inside the query on DuckDB and PySpark, with Polars' messages.

On DuckDB and Spark a metric call builds a plan and nothing else: it runs no DuckDB query and
starts no Spark job. Bad values raise when the result is computed, through the engine's own
raise-an-error function, and the text after :data:`frameaudit.exceptions.ENGINE_MARKER` is
the message Polars raises for the same input, character for character (the reference: each
case below runs on Polars first); :func:`frameaudit.exceptions.from_engine_error` gives back
that :class:`~frameaudit.InvalidValueError`, the "did you mean" hint included.

The cases are the bad-input tables of the family tests (ranking, repro) and the value errors
of the clustering and explanation tests.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import duckdb
import polars as pl
import pytest
from conftest import assert_frame_close
from reference import clustering as clustering_ref
from reference import explain as explain_ref

import frameaudit as fa
from frameaudit.exceptions import ENGINE_MARKER, frameaudit_errors, from_engine_error


def _tables(path: str) -> ModuleType:
    """The test module at ``path`` (under tests/), for its tables of bad input."""
    location = Path(__file__).parent / path
    spec = importlib.util.spec_from_file_location(f"_bad_input_{location.stem}", location)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ranking = _tables("fair/test_ranking_errors.py")
repro = _tables("repro/test_repro_errors.py")


class Case(NamedTuple):
    """A bad input: the call (frame → result) and the Polars frame it is given."""

    id: str
    call: Callable[[Any], Any]
    frame: pl.DataFrame


def _ranking_cases() -> Iterator[Case]:
    for case in ranking.VALUE_CASES:
        call = functools.partial(_ranking_call, case.metric, kwargs=case.kwargs)
        yield Case(f"ranking: {case.name}", call, case.change(ranking.BASE))


def _ranking_call(metric: str, frame: Any, kwargs: dict[str, Any]) -> Any:
    return ranking.call(metric, frame, kwargs)


def _repro_cases() -> Iterator[Case]:
    for case in repro.VALUE_CASES:
        # the checks of every repro metric are those of prepare(): one metric is enough
        call = functools.partial(fa.repro.ec_global, **case.options)
        yield Case(f"repro: {case.id}", call, case.frame)


CLUSTERS = clustering_ref.random_clustering(5, n=40, k=3, d=2, n_parts=2).drop("vec")
FEATURES = ["x0", "x1"]
CENTROIDS = CLUSTERS.group_by("cluster").agg(pl.col(FEATURES).mean())


def _sfr(frame: Any, **options: Any) -> Any:
    return fa.fair.social_fairness_ratio(frame, a="a", b="b", features=FEATURES, **options)


def _balance(frame: Any, **options: Any) -> Any:
    return fa.fair.cluster_balance(frame, **{"a": "a", "b": "b", **options})


CLUSTERING = [
    Case("clustering: absent group value", functools.partial(_balance, b="bb"), CLUSTERS),
    Case(
        "clustering: null cluster",
        _balance,
        CLUSTERS.with_columns(pl.when(pl.col("x0") > 0).then(pl.col("cluster")).alias("cluster")),
    ),
    Case("clustering: no rows", _balance, CLUSTERS.head(0)),
    Case(
        "clustering: NaN and null features",
        _sfr,
        CLUSTERS.with_columns(
            pl.when(pl.col("x0") > 0).then(pl.col("x1")).alias("x1"),
            pl.when(pl.col("x1") > 1).then(math.nan).otherwise(pl.col("x0")).alias("x0"),
        ),
    ),
    Case(
        "clustering: duplicated centroid",
        functools.partial(_sfr, centroids=pl.concat([CENTROIDS, CENTROIDS.head(1)])),
        CLUSTERS,
    ),
    Case(
        "clustering: NaN centroid",
        functools.partial(_sfr, centroids=CENTROIDS.with_columns(pl.lit(math.nan).alias("x1"))),
        CLUSTERS,
    ),
    Case(
        "clustering: negative weight",
        functools.partial(_balance, weight="w"),
        CLUSTERS.with_columns((pl.col("x0") * 1.5).alias("w")),
    ),
]

IMPORTANCES = explain_ref.to_frame(
    {"g1": {"a": 1.0, "b": 0.5}, "g2": {"a": 0.2, "b": 0.9}}, {"a": 1.0, "b": 0.3}
)


def _with_rows(*rows: tuple[str, str, float]) -> pl.DataFrame:
    extra = pl.DataFrame(list(rows), schema=["group", "feature", "importance"], orient="row")
    return pl.concat([IMPORTANCES, extra])


def _parity(frame: Any, **options: Any) -> Any:
    return fa.explain.position_parity(frame, **{"overall": "all", **options})


NEIGHBOURS = pl.DataFrame(
    {
        "query": [0, 0, 0, 1, 1],
        "distance": [0.1, 0.2, 0.3, 0.5, 0.8],
        "label": [1, 1, 0, 0, 1],
        "predicted": [1, 1, 1, 0, 0],
    }
)
EXPLAIN = [
    Case(
        "cohesion: NaN importance",
        _parity,
        IMPORTANCES.with_columns(
            pl.when(pl.col("feature") == "a").then(math.nan).otherwise("importance").alias("x")
        )
        .drop("importance")
        .rename({"x": "importance"}),
    ),
    Case("cohesion: feature twice", _parity, pl.concat([IMPORTANCES, IMPORTANCES.head(1)])),
    Case("cohesion: unknown feature", _parity, _with_rows(("g2", "zeta", 0.1))),
    Case(
        "cohesion: feature missing from a group",
        _parity,
        IMPORTANCES.filter(~((pl.col("group") == "g1") & (pl.col("feature") == "b"))),
    ),
    Case("cohesion: overall repeats a feature", _parity, _with_rows(("all", "b", 0.1))),
    Case("cohesion: no overall rows", functools.partial(_parity, overall="everyone"), IMPORTANCES),
    Case(
        "cohesion: no overall rows in a partition",
        functools.partial(_parity, by="model"),
        IMPORTANCES.with_columns(
            pl.when(pl.col("group") == "all")
            .then(pl.lit("m2"))
            .otherwise(pl.lit("m1"))
            .alias("model")
        ),
    ),
    Case(
        "cohesion: k too large",
        functools.partial(fa.explain.rank_alignment, overall="all", k=3),
        IMPORTANCES,
    ),
    Case(
        "correspondence: negative distance",
        fa.explain.correspondence,
        NEIGHBOURS.with_columns(pl.col("distance") - 0.2),
    ),
    Case(
        "correspondence: null in one of distance and label",
        fa.explain.correspondence,
        NEIGHBOURS.with_columns(
            pl.when(pl.col("distance") > 0.6).then(None).otherwise("distance").alias("distance")
        ),
    ),
    Case(
        "correspondence: predictions disagree",
        fa.explain.correspondence,
        NEIGHBOURS.with_columns(pl.Series("predicted", [1, 0, 1, 0, 0])),
    ),
]

CASES = [*_ranking_cases(), *_repro_cases(), *CLUSTERING, *EXPLAIN]
IDS = [case.id for case in CASES]


def _polars_message(case: Case) -> str:
    with pytest.raises(fa.InvalidValueError) as raised:
        case.call(case.frame)
    return str(raised.value)


def _without_hint(message: str) -> str:
    """The message as computed in the engine: Python adds the "did you mean" hint."""
    return message.split("; did you mean ", maxsplit=1)[0]


def _check_in_query(case: Case, native: Any, compute: Callable[[Any], Any]) -> None:
    expected = _polars_message(case)
    result = case.call(native)  # builds the plan only: the checks are part of it
    with pytest.raises(Exception) as raised:  # noqa: PT011 (the engine's own error class)
        compute(result)
    assert f"{ENGINE_MARKER}{_without_hint(expected)}" in str(raised.value)
    converted = from_engine_error(raised.value)
    assert isinstance(converted, fa.InvalidValueError)
    assert str(converted) == expected


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_duckdb_raises_polars_message_when_computed(case: Case) -> None:
    native = duckdb.from_arrow(case.frame.to_arrow())
    _check_in_query(case, native, lambda relation: relation.fetchall())


# Spark (4 s a case) takes one case per form of message: a form's other cases differ in the
# values the message shows, whose text on every engine tests/test_text.py compares with Python
SPARK_CASES = [
    "ranking: null rank",
    "ranking: tied positions",
    "ranking: rank below 1",
    "ranking: relevance above 1",
    "ranking: non-binary relevance for ERBR",
    "ranking: ranked item missing from groups=",
    "ranking: item in two groups of the mapping",
    "ranking: no rows",
    "repro: one-run",
    "repro: one-run-in-a-partition",
    "repro: missing-sample",
    "repro: predicted-twice",
    "repro: target-differs",
    "repro: nan-label",
    "clustering: absent group value",
    "clustering: NaN and null features",
    "clustering: duplicated centroid",
    "cohesion: feature twice",
    "cohesion: unknown feature",
    "cohesion: feature missing from a group",
    "cohesion: no overall rows",
    "cohesion: no overall rows in a partition",
    "cohesion: k too large",
    "correspondence: null in one of distance and label",
    "correspondence: predictions disagree",
]


def _form(message: str) -> str:
    """A message with what it names left out: the parameter, quoted and numeric values."""
    shown = re.sub(r"^[^:]*:", "", message)
    return re.sub(r"'[^']*'|\b[\w.]+=[\w.'-]+|-?\d+(\.\d+)?(e-?\d+)?|NaN|\([^)]*\)", "_", shown)


def test_spark_takes_one_case_of_each_form_of_message() -> None:
    forms = {case.id: _form(_polars_message(case)) for case in CASES}
    chosen = [forms[case] for case in SPARK_CASES]
    assert len(set(chosen)) == len(chosen)  # no form twice
    assert set(chosen) == set(forms.values())  # and every form


@pytest.mark.spark
@pytest.mark.parametrize("case", [c for c in CASES if c.id in SPARK_CASES], ids=lambda c: c.id)
def test_spark_raises_polars_message_when_computed(case: Case, spark_session: Any) -> None:
    native = spark_session.createDataFrame(case.frame.to_arrow())
    _check_in_query(case, native, lambda frame: frame.collect())


# --- the guard survives what is asked of the result ----------------------------------------------

BAD = ranking.at("rank", 0)(ranking.BASE)
RANK_ERROR = "rank='rank': expected values in [1, inf], found 1 outside it (e.g. 0)"


def test_duckdb_guard_is_not_pruned() -> None:
    """Whatever is computed from the result reads the checks, even when it keeps no row.

    (Only what the optimizer proves empty without reading, ``filter("false")`` or
    ``limit(0)``, skips them: documented.)
    """
    result = fa.fair.exp(duckdb.from_arrow(BAD.to_arrow()), ranking="query", size="rows")
    for compute in (
        lambda r: r.pl(),
        lambda r: r.df(),
        lambda r: r.aggregate("count(*)").fetchall(),
        lambda r: r.filter("exp > 100").fetchall(),  # keeps no row
    ):
        with pytest.raises(fa.InvalidValueError, match=re.escape(RANK_ERROR)), frameaudit_errors():
            compute(result)


@pytest.mark.spark
def test_spark_guard_is_not_pruned(spark_session: Any) -> None:
    result = fa.fair.exp(
        spark_session.createDataFrame(BAD.to_arrow()), ranking="query", size="rows"
    )
    for compute in (
        lambda r: r.collect(),
        lambda r: r.count(),
        lambda r: r.filter("exp > 100").collect(),  # keeps no row
        lambda r: r.toPandas(),
    ):
        with pytest.raises(fa.InvalidValueError, match=re.escape(RANK_ERROR)), frameaudit_errors():
            compute(result)


def test_valid_input_computes() -> None:
    """The guard passes every row of a valid result, and only those."""
    relation = duckdb.from_arrow(ranking.BASE.to_arrow())
    result = fa.fair.exp(relation, ranking="query", size="rows", combo=None)
    assert_frame_close(
        result.pl(), fa.fair.exp(ranking.BASE, ranking="query", size="rows", combo=None)
    )


# --- a call reads no data ------------------------------------------------------------------------


def _counted_relation(
    frame: pl.DataFrame, column: str = "rank", dtype: str = "BIGINT"
) -> tuple[Any, list[Any]]:
    """``frame`` as a DuckDB relation that counts its reads of ``column`` (of DuckDB type
    ``dtype``) through a Python function, and the list of those reads."""
    reads: list[Any] = []

    def read(value: Any) -> Any:
        reads.append(value)
        return value

    connection = duckdb.connect()
    connection.create_function("read", read, [dtype], dtype, side_effects=True)
    table = frame.to_arrow()  # noqa: F841 (read by the query below, by its name)
    query = f'SELECT * REPLACE (read("{column}") AS "{column}") FROM "table"'
    return connection.sql(query), reads


def test_duckdb_call_runs_no_query() -> None:
    """A relation that counts its reads through a Python function is not read by the call."""
    relation, reads = _counted_relation(BAD)
    result = fa.fair.exp(relation, ranking="query", size="rows")
    assert reads == []
    with pytest.raises(fa.InvalidValueError, match=r"e\.g\. 0"), frameaudit_errors():
        result.fetchall()
    assert reads


def test_duckdb_call_that_reads_its_centroids_runs_no_query() -> None:
    """The centroids, a frame in memory, are written into the query as the call is built
    (plans.nearest_distances); the data is read only with the result."""
    relation, reads = _counted_relation(CLUSTERS, "x0", "DOUBLE")
    result = _sfr(relation, centroids=CENTROIDS)
    assert reads == []
    query = result.sql_query()
    assert "least(" in query
    assert "__fa_c0" not in query  # the centroids' coordinates joined to the points
    assert_frame_close(result.pl(), _sfr(CLUSTERS, centroids=CENTROIDS))
    assert len(reads) >= CLUSTERS.height


def test_duckdb_call_with_an_interval_runs_no_query() -> None:
    """The plan of an interval, its shared steps rewritten to be computed once, stays lazy,
    and running it reads the source once."""
    relation, reads = _counted_relation(ranking.BASE)
    result = fa.fair.exp(relation, ranking="query", size="rows", ci=0.9, n_boot=20)
    assert reads == []
    expected = fa.fair.exp(ranking.BASE, ranking="query", size="rows", ci=0.9, n_boot=20)
    assert_frame_close(result.pl(), expected)
    assert len(reads) == ranking.BASE.height


# --- a frame given beside the data ----------------------------------------------------------------

_ONE_ROW_PER_CLUSTER = "one row per cluster"  # the text of the centroids' uniqueness check


def test_duckdb_proves_the_checks_of_a_given_frame_when_the_call_is_built() -> None:
    """Valid centroids (a frame in memory) are checked as the call is built: the query carries
    none of their checks, and the data is still not read."""
    relation = duckdb.from_arrow(CLUSTERS.to_arrow())
    result = _sfr(relation, centroids=CENTROIDS)
    assert _ONE_ROW_PER_CLUSTER not in result.sql_query()
    assert_frame_close(result.pl(), _sfr(CLUSTERS, centroids=CENTROIDS))
    # the checks of the data stay in the query: a null group raises when the result is read
    assert "role columns must not be null" in result.sql_query()
    null_group = CLUSTERS.with_columns(pl.lit(None, pl.String).alias("group"))
    late = _sfr(duckdb.from_arrow(null_group.to_arrow()), centroids=CENTROIDS)
    with pytest.raises(fa.InvalidValueError, match="must not be null"), frameaudit_errors():
        late.fetchall()


def test_duckdb_keeps_a_failed_check_of_a_given_frame_in_its_place() -> None:
    """A failed check of the centroids stays in the query: it raises when the result is read
    (not when the call is built), and a check of the data listed before it still comes first,
    as on Polars."""
    twice = pl.concat([CENTROIDS, CENTROIDS.head(1)])
    relation = duckdb.from_arrow(CLUSTERS.to_arrow())
    result = _sfr(relation, centroids=twice)  # no error yet
    assert _ONE_ROW_PER_CLUSTER in result.sql_query()
    with pytest.raises(fa.InvalidValueError, match=_ONE_ROW_PER_CLUSTER), frameaudit_errors():
        result.fetchall()
    nan_data = CLUSTERS.with_columns(pl.lit(math.nan).alias("x1"))
    with pytest.raises(fa.InvalidValueError) as on_polars:
        _sfr(nan_data, centroids=twice)
    assert _ONE_ROW_PER_CLUSTER not in str(on_polars.value)
    nan_relation = duckdb.from_arrow(nan_data.to_arrow())
    with pytest.raises(fa.InvalidValueError) as on_duckdb, frameaudit_errors():
        _sfr(nan_relation, centroids=twice).fetchall()
    assert str(on_duckdb.value) == str(on_polars.value)


@pytest.mark.spark
def test_spark_call_starts_no_job(spark_session: Any) -> None:
    context = spark_session.sparkContext
    tracker = context.statusTracker()
    native = spark_session.createDataFrame(BAD.to_arrow()).cache()
    native.count()  # the data in memory: any job from here on is frameaudit's
    context.setJobGroup("frameaudit-call", "a metric call")
    try:
        result = fa.fair.ndkl(native, ranking="query")
        result = fa.fair.exp(native, ranking="query", size="rows", combo="MinMaxRatio")
        assert list(tracker.getJobIdsForGroup("frameaudit-call")) == []
        with pytest.raises(fa.InvalidValueError, match=r"e\.g\. 0"), frameaudit_errors():
            result.collect()
        assert list(tracker.getJobIdsForGroup("frameaudit-call"))
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
        native.unpersist()
