"""The clustering-fairness metrics on every frame kind, against tests/reference/clustering.py.

Each case runs through the ``constructor`` fixture (Polars eager and lazy, pandas, pandas with
Arrow dtypes, pyarrow, DuckDB; PySpark behind the ``spark`` marker; rows shuffled) and must equal
both the Polars result and the independent reference. The silhouette is limited to in-memory
engines and must raise a clear error on the others.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import polars as pl
import pytest
from conftest import Constructor, assert_frame_close, to_polars
from reference import clustering as ref

import frameaudit as fa
from frameaudit import Metric
from frameaudit.exceptions import InvalidDtypeError, UnsupportedBackendError
from tests.calls import arguments, entries

FRAME = ref.random_clustering(21, n=90, k=4, d=3, n_parts=3)
FEATURES = ref.features(FRAME)
# A partition where group b is absent: its values are undefined (null).
NO_B = pl.concat(
    [
        FRAME.filter(pl.col("part") < 2),
        FRAME.filter(pl.col("part") == 2).with_columns(
            pl.when(pl.col("group") == "b")
            .then(pl.lit("c"))
            .otherwise(pl.col("group"))
            .alias("group")
        ),
    ]
)

IN_MEMORY = {"polars", "pandas", "pandas[pyarrow]", "pyarrow"}


def _backend(constructor: Constructor) -> str:
    """The name of the frame kind a constructor builds."""
    native = constructor(FRAME.head(2))
    module = type(native).__module__.split(".")[0]
    if module == "pandas":
        return "pandas[pyarrow]" if "pyarrow" in str(native.dtypes.iloc[0]) else "pandas"
    return {"polars": "polars", "pyarrow": "pyarrow", "duckdb": "duckdb"}.get(module, module)


def _expected(metric: str, column: list[Any], by: str | None) -> pl.DataFrame:
    if by is None:
        return pl.DataFrame({metric: column}, schema={metric: pl.Float64})
    parts = sorted(FRAME[by].unique().to_list())
    return pl.DataFrame({by: parts, metric: column}, schema={by: pl.Int64, metric: pl.Float64})


@pytest.mark.spark(cases=["part"])
@pytest.mark.parametrize("metric", ref.LABEL_METRICS)
@pytest.mark.parametrize("by", [None, "part"])
def test_label_metrics(constructor: Constructor, metric: str, by: str | None) -> None:
    function = getattr(fa.fair, metric)
    for frame in (FRAME, NO_B):
        expected = _expected(metric, ref.label_metric(metric, frame, "a", "b", by=by), by)
        got = to_polars(function(constructor(frame), a="a", b="b", by=by))
        on_polars = function(frame, a="a", b="b", by=by)
        assert_frame_close(got, on_polars)
        assert_frame_close(got, expected)


@pytest.mark.parametrize("metric", ref.LABEL_METRICS)
def test_label_metrics_without_b(constructor: Constructor, metric: str) -> None:
    """A partition without members of b: P_b and ρ_b are 0/0, so the value is null, except
    the minimum cluster ratio, where every cluster holding members of a has N_a/0 = +inf."""
    got = to_polars(getattr(fa.fair, metric)(constructor(NO_B), a="a", b="b", by="part"))
    last = got[metric][2]
    if metric == "min_cluster_ratio":
        assert last == float("inf")
    else:
        assert last is None


@pytest.mark.parametrize("metric", ref.LABEL_METRICS)
def test_label_metrics_per_cluster(constructor: Constructor, metric: str) -> None:
    function = getattr(fa.fair, metric)
    got = to_polars(function(constructor(FRAME), a="b", b="a", by="part", per_cluster=True))
    rows = []
    for part in sorted(FRAME["part"].unique().to_list()):
        detail = ref.cluster_detail(FRAME.filter(pl.col("part") == part), "b", "a")
        for cluster, values in detail.items():
            rows.append(
                {
                    "part": part,
                    "cluster": cluster,
                    **values,
                    metric: ref.cluster_term(metric, values),
                }
            )
    expected = pl.DataFrame(rows).select(got.columns)
    assert got.columns == [
        "part",
        "cluster",
        "n_cluster",
        "n_a",
        "n_b",
        "share_a",
        "share_b",
        "rho_a",
        "rho_b",
        metric,
    ]
    assert got.schema["n_a"] == pl.Int64
    assert_frame_close(got, expected)
    assert_frame_close(got, function(FRAME, a="b", b="a", by="part", per_cluster=True))


@pytest.mark.spark(cases=["part"])
@pytest.mark.parametrize("features", ["columns", "array"])
@pytest.mark.parametrize("by", [None, "part"])
def test_social_fairness_ratio(constructor: Constructor, features: str, by: str | None) -> None:
    chosen: str | list[str] = FEATURES if features == "columns" else "vec"
    native = constructor(FRAME)
    if features == "array" and _backend(constructor) in ("pandas", "pyspark"):
        # numpy-backed pandas stores an array column as objects, and Spark has only
        # variable-length arrays: no fixed size in the schema
        with pytest.raises(InvalidDtypeError, match="no fixed length"):
            fa.fair.social_fairness_ratio(native, a="a", b="b", features=chosen, by=by)
        return
    got = to_polars(fa.fair.social_fairness_ratio(native, a="a", b="b", features=chosen, by=by))
    expected = _expected(
        "social_fairness_ratio", ref.social_fairness_ratio(FRAME, "a", "b", by=by), by
    )
    assert_frame_close(got, expected)
    assert_frame_close(
        got, fa.fair.social_fairness_ratio(FRAME, a="a", b="b", features=chosen, by=by)
    )


@pytest.mark.parametrize("by", [None, "part"])
def test_social_fairness_ratio_given_centroids(constructor: Constructor, by: str | None) -> None:
    keys = [by] if by else []
    centroids = (
        FRAME.group_by([*keys, "cluster"]).agg(pl.col(FEATURES).median()).sort([*keys, "cluster"])
    )
    got = to_polars(
        fa.fair.social_fairness_ratio(
            constructor(FRAME), a="a", b="b", features=FEATURES, centroids=centroids, by=by
        )
    )
    expected = _expected(
        "social_fairness_ratio",
        ref.social_fairness_ratio(FRAME, "a", "b", centroids=centroids, by=by),
        by,
    )
    assert_frame_close(got, expected)


def test_social_fairness_ratio_undefined(constructor: Constructor) -> None:
    got = to_polars(
        fa.fair.social_fairness_ratio(constructor(NO_B), a="a", b="b", features=FEATURES, by="part")
    )
    assert got["social_fairness_ratio"].null_count() == 1
    assert got["social_fairness_ratio"][2] is None


@pytest.mark.spark
@pytest.mark.parametrize("by", [None, "part"])
def test_silhouette_difference(constructor: Constructor, by: str | None) -> None:
    native = constructor(FRAME)
    if _backend(constructor) not in IN_MEMORY:
        with pytest.raises(UnsupportedBackendError, match="in-memory engines"):
            fa.fair.silhouette_difference(native, a="a", b="b", features=FEATURES, by=by)
        return
    got = to_polars(fa.fair.silhouette_difference(native, a="a", b="b", features=FEATURES, by=by))
    rows = ref.silhouette_difference(FRAME, "a", "b", by=by)
    columns = ["silhouette_difference", "silhouette_a", "silhouette_b"]
    expected = pl.DataFrame(rows, schema=dict.fromkeys(columns, pl.Float64), orient="row")
    if by:
        expected = expected.select(pl.Series(by, sorted(FRAME[by].unique())), *columns)
    assert_frame_close(got, expected)


def test_silhouette_sample_in_memory(constructor: Constructor) -> None:
    options = {"a": "a", "b": "b", "features": FEATURES, "by": "part", "sample": 5, "seed": 3}
    if _backend(constructor) not in IN_MEMORY:
        with pytest.raises(UnsupportedBackendError, match="in-memory engines"):
            fa.fair.silhouette_difference(constructor(FRAME), **options)
        return
    got = to_polars(fa.fair.silhouette_difference(constructor(FRAME), **options))
    assert got.columns == [
        "part",
        "silhouette_difference",
        "silhouette_a",
        "silhouette_b",
        "std_error",
        "n_sampled",
    ]
    # 5 points of each group, at least 2 from each of its (up to 4) clusters: 10 to 26
    assert all(10 <= n <= 26 for n in got["n_sampled"])
    # the sample depends on the data and the seed, not on the (shuffled) row order
    assert_frame_close(got, fa.fair.silhouette_difference(FRAME, **options))


def test_results_keep_the_frame_kind() -> None:
    lazy = fa.fair.cluster_balance(FRAME.lazy(), a="a", b="b")
    assert isinstance(lazy, pl.LazyFrame)
    assert isinstance(
        fa.fair.silhouette_difference(FRAME.lazy(), a="a", b="b", features=FEATURES), pl.LazyFrame
    )
    assert isinstance(
        fa.fair.social_fairness_ratio(FRAME.to_pandas(), a="a", b="b", features=FEATURES),
        pd.DataFrame,
    )


@pytest.mark.parametrize("metric", entries("clustering"), ids=lambda m: m.name)
def test_accessors(metric: Metric) -> None:
    options = arguments(metric, {"features": FEATURES})
    expected = metric.function(FRAME, a="a", b="b", by="part", **options)
    for native in (FRAME, FRAME.lazy(), FRAME.drop("vec").to_pandas()):
        got = getattr(native.fair, metric.name)(a="a", b="b", by="part", **options)
        assert_frame_close(to_polars(got), expected)


def test_caller_frame_untouched() -> None:
    pdf = FRAME.drop("vec").to_pandas()
    before = pdf.copy()
    fa.fair.social_fairness_ratio(pdf, a="a", b="b", features=FEATURES)
    fa.fair.silhouette_difference(pdf, a="a", b="b", features=FEATURES)
    pd.testing.assert_frame_equal(pdf, before)


@pytest.mark.parametrize(
    ("metric", "options"),
    [
        *((m, {"by": by}) for m in ref.LABEL_METRICS for by in (None, "part")),
        ("cluster_balance", {"by": "part", "per_cluster": True}),
    ],
)
def test_dask(metric: str, options: dict[str, Any]) -> None:
    """Dask runs the label metrics natively (no ordered window)."""
    dd = pytest.importorskip("dask.dataframe")
    shuffled = FRAME.drop("vec").sample(fraction=1.0, shuffle=True, seed=2).to_pandas()
    frame = dd.from_pandas(shuffled, npartitions=3)
    function = getattr(fa.fair, metric)
    got = to_polars(function(frame, a="a", b="b", **options).compute().reset_index(drop=True))
    assert_frame_close(got, function(FRAME, a="a", b="b", **options))


def test_dask_distance_metrics_are_unsupported() -> None:
    dd = pytest.importorskip("dask.dataframe")
    frame = dd.from_pandas(FRAME.drop("vec").to_pandas(), npartitions=2)
    with pytest.raises(UnsupportedBackendError, match="in-memory engines"):
        fa.fair.silhouette_difference(frame, a="a", b="b", features=FEATURES)
    with pytest.raises(UnsupportedBackendError, match=r"not supported on Dask\. Workaround"):
        fa.fair.social_fairness_ratio(frame, a="a", b="b", features=FEATURES)
