"""Bad input to the clustering metrics: a frameaudit error naming the parameter, what was
expected and what was found — at call time for the schema, when the result is computed for
values (on every frame kind)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import duckdb
import polars as pl
import pytest
from conftest import Constructor, to_polars
from reference import clustering as ref

import frameaudit as fa
from frameaudit.exceptions import (
    ColumnNotFoundError,
    FrameAuditError,
    InvalidDtypeError,
    InvalidParameterError,
    InvalidValueError,
    UnsupportedBackendError,
)
from tests.calls import arguments, entries

FRAME = ref.random_clustering(5, n=40, k=3, d=2, n_parts=2)
FEATURES = ref.features(FRAME)

Metric = Callable[..., Any]
LABEL = [m.function for m in entries("clustering", "clusters")]
DISTANCE = [m.function for m in entries("clustering", features=True)]
ALL: list[tuple[Metric, dict[str, Any]]] = [
    (m.function, arguments(m, {"features": FEATURES})) for m in entries("clustering")
]
IDS = [m.__name__ for m, _ in ALL]


def _in_memory(native: Any) -> bool:
    """Whether the silhouette (an in-memory kernel) runs on this frame kind."""
    return type(native).__module__.split(".")[0] in ("polars", "pandas", "pyarrow")


def _run(metric: Metric, frame: Any, **options: Any) -> Any:
    """Call the metric and compute the result (value checks run then)."""
    return to_polars(metric(frame, **options))


@pytest.mark.parametrize(("metric", "options"), ALL, ids=IDS)
def test_absent_group_value_lists_the_values_found(
    constructor: Constructor, metric: Metric, options: dict[str, Any]
) -> None:
    if metric is fa.fair.silhouette_difference and not _in_memory(constructor(FRAME.head(1))):
        with pytest.raises(UnsupportedBackendError, match="in-memory engines"):
            _run(metric, constructor(FRAME), a="a", b="bb", **options)
        return
    with pytest.raises(
        InvalidValueError,
        match=r"b='bb': value not found in group='group'; values found \(3\): 'a', 'b', 'c'; "
        r"did you mean 'b'\?",
    ):
        _run(metric, constructor(FRAME), a="a", b="bb", **options)


@pytest.mark.parametrize(("metric", "options"), ALL, ids=IDS)
def test_schema_errors(metric: Metric, options: dict[str, Any]) -> None:
    lazy = FRAME.lazy()
    with pytest.raises(ColumnNotFoundError, match=r"group='grp'.*did you mean 'group'"):
        metric(lazy, a="a", b="b", group="grp", **options)
    with pytest.raises(InvalidParameterError, match="the two compared groups must differ"):
        metric(lazy, a="a", b="a", **options)
    with pytest.raises(
        InvalidParameterError,
        match=r"b=1: expected a value of the dtype of group='group' \(String\), got int",
    ):
        metric(lazy, a="a", b=1, **options)
    with pytest.raises(
        InvalidParameterError, match="group=\\['group'\\]: expected one column name"
    ):
        metric(lazy, a="a", b="b", group=["group"], **options)
    if metric is not fa.fair.social_fairness_ratio:
        with pytest.raises(ColumnNotFoundError, match="cluster='k'"):
            metric(lazy, a="a", b="b", cluster="k", **options)


@pytest.mark.parametrize(("metric", "options"), ALL, ids=IDS)
def test_nulls_in_role_columns(metric: Metric, options: dict[str, Any]) -> None:
    frame = FRAME.with_columns(pl.when(pl.col("x0") > 0).then(pl.col("cluster")).alias("cluster"))
    with pytest.raises(
        InvalidValueError, match=r"cluster='cluster': column 'cluster' holds \d+ null"
    ):
        _run(metric, frame.lazy(), a="a", b="b", **options)


def test_empty_frame() -> None:
    with pytest.raises(InvalidValueError, match="cluster_balance: the frame has no rows"):
        _run(fa.fair.cluster_balance, FRAME.head(0), a="a", b="b")
    with pytest.raises(InvalidValueError, match="silhouette_difference: the frame has no rows"):
        _run(fa.fair.silhouette_difference, FRAME.head(0), a="a", b="b", features=FEATURES)


@pytest.mark.parametrize("metric", DISTANCE, ids=lambda m: m.__name__)
def test_feature_errors(constructor: Constructor, metric: Metric) -> None:
    native = constructor(FRAME.with_columns(pl.col("x0").cast(pl.String).alias("text")))
    # a schema error, so it comes first on every engine (before the silhouette's engine check)
    with pytest.raises(
        InvalidDtypeError,
        match=r"features='text': expected numeric columns or one fixed-size array column, "
        "found String",
    ):
        metric(native, a="a", b="b", features=["x0", "text"])
    if metric is fa.fair.silhouette_difference and not _in_memory(native):
        with pytest.raises(UnsupportedBackendError, match="in-memory engines"):
            metric(constructor(FRAME), a="a", b="b", features=FEATURES)
        return
    bad = FRAME.with_columns(
        pl.when(pl.col("x0") > 0).then(pl.col("x1")).alias("x1"),
        pl.when(pl.col("x1") > 1).then(float("nan")).otherwise(pl.col("x0")).alias("x0"),
    )
    with pytest.raises(
        InvalidValueError,
        # numpy-backed pandas stores missing values as NaN: there they arrive as nulls
        match=r"features='x0': expected finite numbers, found (0 null and 13|13 null and 0) NaN",
    ):
        _run(metric, constructor(bad), a="a", b="b", features=FEATURES)
    with pytest.raises(
        InvalidValueError, match=r"features='x1': expected finite numbers, found \d+ null and 0 NaN"
    ):
        _run(metric, constructor(bad), a="a", b="b", features=["x1"])
    infinite = FRAME.with_columns(
        pl.when(pl.col("x0") > 0).then(float("-inf")).otherwise(pl.col("x0")).alias("x0")
    )
    with pytest.raises(
        InvalidValueError,
        match=r"features='x0': expected finite numbers, found 0 null and \d+ NaN or infinite",
    ):
        _run(metric, constructor(infinite.drop("vec")), a="a", b="b", features=["x0"])


@pytest.mark.parametrize("metric", DISTANCE, ids=lambda m: m.__name__)
def test_array_feature_errors(metric: Metric) -> None:
    listed = FRAME.with_columns(pl.col("vec").arr.to_list())
    with pytest.raises(
        InvalidDtypeError, match=r"features='vec': a List column has no fixed length.*list.to_array"
    ):
        metric(listed, a="a", b="b", features="vec")
    text = FRAME.with_columns(pl.col("vec").cast(pl.Array(pl.String, 2)))
    with pytest.raises(
        InvalidDtypeError, match="features='vec': expected a one-dimensional numeric array"
    ):
        metric(text, a="a", b="b", features="vec")
    holes = FRAME.with_columns(
        pl.when(pl.col("x0") > 0)
        .then(pl.col("vec"))
        .otherwise(pl.lit([1.0, float("nan")], dtype=pl.Array(pl.Float64, 2)))
        .alias("vec")
    )
    with pytest.raises(
        InvalidValueError, match=r"features='vec' \(element 1\): expected finite numbers"
    ):
        _run(metric, holes, a="a", b="b", features="vec")


def test_centroid_errors(constructor: Constructor) -> None:
    native = constructor(FRAME)
    centroids = FRAME.group_by("cluster").agg(pl.col(FEATURES).mean(), pl.col("vec").first())
    sfr = fa.fair.social_fairness_ratio
    with pytest.raises(ColumnNotFoundError, match=r"features='x1'.*not found in centroids"):
        sfr(native, a="a", b="b", features=FEATURES, centroids=centroids.drop("x1"))
    with pytest.raises(ColumnNotFoundError, match=r"by='part'.*not found in centroids"):
        sfr(native, a="a", b="b", features=FEATURES, centroids=centroids, by="part")
    with pytest.raises(InvalidDtypeError, match="features='x0' in centroids: expected numeric"):
        sfr(
            native,
            a="a",
            b="b",
            features=FEATURES,
            centroids=centroids.with_columns(pl.col("x0").cast(pl.String)),
        )
    twice = pl.concat([centroids, centroids.head(1)])
    with pytest.raises(
        InvalidValueError,
        match=r"centroids: 1 duplicated combination\(s\) of \(cluster\).*one row per cluster",
    ):
        _run(sfr, native, a="a", b="b", features=FEATURES, centroids=twice)
    nan = centroids.with_columns(pl.lit(float("nan")).alias("x1"))
    with pytest.raises(
        InvalidValueError, match=r"features='x1' in centroids: expected finite numbers"
    ):
        _run(sfr, native, a="a", b="b", features=FEATURES, centroids=nan)
    with pytest.raises(InvalidValueError, match="centroids: the frame has no rows"):
        _run(sfr, native, a="a", b="b", features=FEATURES, centroids=centroids.head(0))


def test_centroid_array_size() -> None:
    centroids = FRAME.group_by("cluster").agg(pl.col(FEATURES).mean())
    wide = centroids.with_columns(pl.concat_arr("x0", "x1", "x0").alias("vec"))
    with pytest.raises(
        InvalidDtypeError,
        match=r"centroids: features='vec' have 3 dimension\(s\) in centroids but 2 in the frame",
    ):
        fa.fair.social_fairness_ratio(FRAME, a="a", b="b", features="vec", centroids=wide)


def test_silhouette_needs_two_clusters() -> None:
    one = FRAME.with_columns(pl.lit("c0").alias("cluster"))
    with pytest.raises(
        InvalidValueError,
        match=r"cluster='cluster': silhouette_difference needs at least 2 clusters; found 1",
    ):
        _run(fa.fair.silhouette_difference, one, a="a", b="b", features=FEATURES)
    partly = FRAME.with_columns(
        pl.when(pl.col("part") == 1)
        .then(pl.lit("c0"))
        .otherwise(pl.col("cluster"))
        .alias("cluster")
    )
    with pytest.raises(
        InvalidValueError,
        match=(
            r"at least 2 clusters in every partition; "
            r"1 partition\(s\) have only one \(e.g. part=1\)$"
        ),
    ):
        _run(
            fa.fair.silhouette_difference, partly.lazy(), a="a", b="b", features=FEATURES, by="part"
        )


def test_silhouette_unsupported_engines() -> None:
    relation = duckdb.from_arrow(FRAME.drop("vec").to_arrow())
    with pytest.raises(
        UnsupportedBackendError, match=r"limited to in-memory engines.*relation.pl\(\)"
    ):
        fa.fair.silhouette_difference(relation, a="a", b="b", features=FEATURES)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"sample": 1}, r"sample=1: expected an integer in \[2, inf\]"),
        ({"sample": 2.5}, r"sample=2.5: expected an integer"),
        ({"sample": True}, r"sample=True: expected an integer"),
        ({"seed": -1}, r"seed=-1: expected an integer in \[0, 18446744073709551615\]"),
        ({"progress": "yes"}, r"progress='yes': expected True, False or None"),
    ],
)
def test_silhouette_parameters(options: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        fa.fair.silhouette_difference(FRAME, a="a", b="b", features=FEATURES, **options)


def test_errors_are_value_errors() -> None:
    """Callers that only know ``except ValueError`` still catch every frameaudit error."""
    with pytest.raises(ValueError, match="not found") as info:
        _run(fa.fair.cluster_balance, FRAME, a="a", b="zzz")
    assert isinstance(info.value, FrameAuditError)
