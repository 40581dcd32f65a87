"""Nearest cases (docs/explain.md): case-explainer's retrieval step and the distance expression.

Neighbour indices and scaled distances are compared with case-explainer 0.2.0's
``CaseExplainer`` and scikit-learn's ``NearestNeighbors``; ties, exclusion of a query's own row
and the chunking of the kernel with the brute-force reference in ``tests/reference/explain.py``.
"""

from __future__ import annotations

from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import polars as pl
import pytest
from case_explainer import CaseExplainer
from conftest import Constructor, assert_frame_close, final_bar, to_polars
from reference import explain as ref
from scipy.spatial.distance import euclidean
from sklearn.neighbors import NearestNeighbors
from sklearn.preprocessing import StandardScaler

import frameaudit as fa
from frameaudit._kernels import knn

FEATURES = ["x0", "x1", "x2", "x3"]


def _data(
    seed: int, n_train: int, n_query: int, d: int = 4, *, scales: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    scale = rng.uniform(0.1, 50, d) if scales else np.ones(d)
    offset = rng.uniform(-100, 100, d) if scales else np.zeros(d)
    train = rng.standard_normal((n_train, d)) * scale + offset
    queries = rng.standard_normal((n_query, d)) * scale + offset
    return train, queries, rng.integers(0, 3, n_train)


def _frames(
    train: np.ndarray, queries: np.ndarray, labels: np.ndarray
) -> tuple[pl.DataFrame, pl.DataFrame]:
    names = [f"x{j}" for j in range(train.shape[1])]
    train_frame = pl.DataFrame(train, schema=names).with_columns(
        pl.Series("label", labels), pl.Series("id", np.arange(len(train)) + 1000)
    )
    query_frame = pl.DataFrame(queries, schema=names).with_columns(
        pl.Series("id", np.arange(len(queries)) + 5000),
        pl.Series("predicted", np.arange(len(queries)) % 3),
    )
    return train_frame, query_frame


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("standardize", [True, False])
def test_matches_case_explainer(seed: int, standardize: bool) -> None:
    train, queries, labels = _data(seed, 300, 40)
    k = 3 + seed
    explainer = CaseExplainer(train, labels, k=k, scale_data=standardize, n_jobs=1)
    train_frame, query_frame = _frames(train, queries, labels)
    cases = fa.explain.nearest_cases(
        train_frame, query_frame, features=FEATURES, k=k, standardize=standardize, carry="predicted"
    )
    assert cases.columns == ["query", "rank", "case", "distance", "label", "predicted"]
    assert cases.height == len(queries) * k
    correspondence = fa.explain.correspondence(cases)
    for q, sample in enumerate(queries):
        explanation = explainer.explain_instance(sample, predicted_class=q % 3)
        mine = cases.filter(pl.col("query") == q).sort("rank")
        assert mine["case"].to_list() == [n.index for n in explanation.neighbors]
        assert mine["distance"].to_list() == pytest.approx(
            [n.distance for n in explanation.neighbors], rel=1e-10
        )
        assert mine["label"].to_list() == [n.label for n in explanation.neighbors]
        assert correspondence["correspondence"][q] == pytest.approx(
            explanation.correspondence, rel=1e-10
        )
        assert correspondence["band"][q] == explanation.correspondence_interpretation


def test_matches_sklearn_nearest_neighbors() -> None:
    train, queries, labels = _data(11, 2000, 300, d=6)
    scaler = StandardScaler().fit(train)
    nn = NearestNeighbors(n_neighbors=9, algorithm="brute").fit(scaler.transform(train))
    distances, indices = nn.kneighbors(scaler.transform(queries))
    train_frame, query_frame = _frames(train, queries, labels)
    cases = fa.explain.nearest_cases(
        train_frame, query_frame, features=[f"x{j}" for j in range(6)], k=9
    )
    assert cases["case"].to_numpy().reshape(-1, 9).tolist() == indices.tolist()
    np.testing.assert_allclose(cases["distance"].to_numpy().reshape(-1, 9), distances, rtol=1e-10)


def test_constant_feature_keeps_scale_one() -> None:
    train, queries, _ = _data(3, 200, 20)
    train[:, 2] = 7.5
    ours_train, ours_queries = knn.standardize(train, queries)
    scaler = StandardScaler().fit(train)
    # StandardScaler's scale (1 for the constant feature), without its centring: distances
    # do not depend on the origin
    np.testing.assert_array_equal(scaler.scale_[2], 1.0)
    np.testing.assert_allclose(ours_train, train / scaler.scale_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours_queries, queries / scaler.scale_, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("budget", [1, 4096, 2**20])
def test_kernel_chunks_ties_and_exclusion(budget: int) -> None:
    rng = np.random.default_rng(5)
    # A small integer grid: many exact ties, broken by the lower training row index.
    train = rng.integers(0, 3, (500, 3)).astype(float)
    queries = rng.integers(0, 3, (60, 3)).astype(float)
    for exclude in (None, rng.integers(-1, 500, 60)):
        indices, distances = knn.nearest(train, queries, 12, exclude=exclude, memory_budget=budget)
        expected_indices, expected_distances = ref.knn(train, queries, 12, exclude)
        np.testing.assert_array_equal(indices, expected_indices)
        np.testing.assert_allclose(distances, expected_distances, rtol=1e-14)


@pytest.mark.parametrize(("tile", "members", "batch"), [(7, 3, 5), (16, 1, 64), (50, 8, 1)])
def test_kernel_blocks_of_tiles_and_batches(
    monkeypatch: pytest.MonkeyPatch, tile: int, members: int, batch: int
) -> None:
    # Narrow tiles in many blocks, and candidates re-scored every few queries, on a grid with
    # many exact ties: the (block, column) bookkeeping against the brute-force reference.
    monkeypatch.setattr(knn, "_TILE", tile)
    monkeypatch.setattr(knn, "_MEMBERS", members)
    monkeypatch.setattr(knn, "_BATCH", batch)
    rng = np.random.default_rng(tile)
    train = rng.integers(0, 4, (700, 3)).astype(float)
    queries = rng.integers(0, 4, (90, 3)).astype(float)
    for k, exclude in ((1, None), (9, rng.integers(-1, 700, 90)), (150, None)):
        indices, distances = knn.nearest(train, queries, k, exclude=exclude, memory_budget=4096)
        expected_indices, expected_distances = ref.knn(train, queries, k, exclude)
        np.testing.assert_array_equal(indices, expected_indices)
        np.testing.assert_allclose(distances, expected_distances, rtol=1e-14)


def test_kernel_crowded_group_is_rescreened_in_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    # One tile of 50 columns: every 50th training row sits in a tight cluster, so the queries
    # near it all have their candidates in group 0, far more than the average group; the
    # re-screen takes those in several rounds instead of padding every group to that length.
    monkeypatch.setattr(knn, "_TILE", 50)
    monkeypatch.setattr(knn, "_MEMBERS", 1000)
    rng = np.random.default_rng(3)
    train = rng.standard_normal((700, 3)) * 100
    train[::50] = rng.standard_normal((14, 3)) * 0.01
    queries = np.vstack([rng.standard_normal((150, 3)) * 0.01, rng.standard_normal((50, 3)) * 100])
    indices, distances = knn.nearest(train, queries, 5)
    expected_indices, expected_distances = ref.knn(train, queries, 5)
    np.testing.assert_array_equal(indices, expected_indices)
    np.testing.assert_allclose(distances, expected_distances, rtol=1e-14)


@pytest.mark.parametrize("budget", [1024, 2**20])
def test_kernel_exact_where_float32_cannot_rank(budget: int) -> None:
    # Far from the origin (||t|| ~ 1e3 after centring) the float32 screening error (~0.1 on
    # the scores) dwarfs the 1e-9 gaps between the near-tied distances of a shell of points
    # around each query; only the float64 re-scoring can rank them.
    rng = np.random.default_rng(17)
    d, per_shell = 5, 60
    centres = np.vstack([np.full(d, 1e3), np.full(d, -1e3), np.full(d, 1e3) * [1, -1, 1, -1, 1]])
    train = []
    for centre in centres:
        directions = rng.standard_normal((per_shell, d))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        radii = 1.0 + 1e-9 * rng.permutation(per_shell)
        train.append(centre + directions * radii[:, None])
    points = np.vstack(train)
    indices, distances = knn.nearest(points, centres, 12, memory_budget=budget)
    expected_indices, expected_distances = ref.knn(points, centres, 12)
    np.testing.assert_array_equal(indices, expected_indices)
    np.testing.assert_allclose(distances, expected_distances, rtol=1e-14)
    # The data does defeat float32: ranking in float32 gives other neighbours.
    naive, _ = ref.knn(points.astype(np.float32), centres.astype(np.float32), 12)
    assert not np.array_equal(naive, expected_indices)


def test_kernel_float64_screening_for_huge_values() -> None:
    rng = np.random.default_rng(8)
    train = rng.standard_normal((300, 3)) * 1e18
    queries = rng.standard_normal((30, 3)) * 1e18
    indices, distances = knn.nearest(train, queries, 5)
    expected_indices, expected_distances = ref.knn(train, queries, 5)
    np.testing.assert_array_equal(indices, expected_indices)
    np.testing.assert_allclose(distances, expected_distances, rtol=1e-12)


def test_ids_and_exclude_self() -> None:
    train, _, labels = _data(2, 150, 0)
    train_frame, _ = _frames(train, train[:0], labels)
    queries = train_frame.select(*FEATURES, "id", pl.col("label").alias("predicted"))
    cases = fa.explain.nearest_cases(
        train_frame, queries, features=FEATURES, k=4, id="id", exclude_self=True, carry="predicted"
    )
    scaled = StandardScaler().fit_transform(train)
    expected_indices, expected_distances = ref.knn(scaled, scaled, 4, exclude=list(range(150)))
    assert cases["query"].to_list() == np.repeat(np.arange(150) + 1000, 4).tolist()
    assert cases["case"].to_list() == (expected_indices.ravel() + 1000).tolist()
    np.testing.assert_allclose(cases["distance"].to_numpy(), expected_distances.ravel(), rtol=1e-10)
    assert (cases["query"] != cases["case"]).all()
    # Without exclusion every row finds itself first, at distance 0.
    itself = fa.explain.nearest_cases(train_frame, queries, features=FEATURES, k=1, id="id")
    assert (itself["query"] == itself["case"]).all()
    assert (itself["distance"] == 0).all()


@pytest.mark.spark
def test_backends(constructor: Constructor) -> None:
    train, queries, labels = _data(6, 120, 15)
    train_frame, query_frame = _frames(train, queries, labels)
    expected = fa.explain.nearest_cases(
        train_frame, query_frame, features=FEATURES, k=5, id="id", carry="predicted"
    )
    if type(constructor(train_frame)).__module__.startswith(("duckdb", "pyspark")):
        with pytest.raises(fa.UnsupportedBackendError, match="limited to in-memory engines"):
            fa.explain.nearest_cases(
                constructor(train_frame), constructor(query_frame), features=FEATURES, k=5, id="id"
            )
        return
    # Rows are shuffled by the constructor; ids identify them.
    result = fa.explain.nearest_cases(
        constructor(train_frame),
        constructor(query_frame),
        features=FEATURES,
        k=5,
        id="id",
        carry="predicted",
    )
    assert_frame_close(to_polars(result), expected, rel=1e-12)
    scaled_train = StandardScaler().fit(train)
    indices, distances = ref.knn(scaled_train.transform(train), scaled_train.transform(queries), 5)
    assert expected["case"].to_list() == (indices.ravel() + 1000).tolist()
    np.testing.assert_allclose(expected["distance"].to_numpy(), distances.ravel(), rtol=1e-10)


def test_lazy_runs_inside_the_plan() -> None:
    train, queries, labels = _data(9, 50, 5)
    train_frame, query_frame = _frames(train, queries, labels)
    broken = train_frame.with_columns(
        pl.when(pl.col("id") == 1003).then(float("nan")).otherwise(pl.col("x1")).alias("x1")
    )
    result = fa.explain.nearest_cases(broken.lazy(), query_frame.lazy(), features=FEATURES, k=3)
    assert isinstance(result, pl.LazyFrame)  # nothing computed yet, so no error yet
    with pytest.raises(
        fa.InvalidValueError, match="column 'x1' of train holds 1 null, NaN or infinite"
    ):
        result.collect()


def test_accessor_and_pipeline() -> None:
    train, queries, labels = _data(1, 80, 10)
    train_frame, query_frame = _frames(train, queries, labels)
    via_namespace = train_frame.xai.nearest_cases(
        query_frame, features=FEATURES, k=4, carry="predicted"
    )
    direct = fa.explain.nearest_cases(
        train_frame, query_frame, features=FEATURES, k=4, carry="predicted"
    )
    assert_frame_close(via_namespace, direct)
    assert_frame_close(via_namespace.explain.correspondence(), fa.explain.correspondence(direct))


def test_progress_bar(capsys: pytest.CaptureFixture[str]) -> None:
    train, queries, labels = _data(0, 300, 500)
    train_frame, query_frame = _frames(train, queries, labels)
    quiet = fa.explain.nearest_cases(train_frame, query_frame, features=FEATURES, k=3)
    assert capsys.readouterr().err == ""  # short searches are silent by default
    shown = fa.explain.nearest_cases(
        train_frame, query_frame, features=FEATURES, k=3, progress=True
    )
    final, done, total = final_bar(capsys.readouterr().err)
    assert final.startswith("nearest_cases: 100%|")
    assert " query chunks/s]" in final
    assert done == total
    assert_frame_close(shown, quiet)
    # the kernel's own default: silent below its threshold, the label given
    knn.nearest(train, queries, 3, progress=True, memory_budget=4096, label="search")
    final, done, total = final_bar(capsys.readouterr().err)
    assert final.startswith("search: 100%|")
    assert total > 1  # a small budget makes several chunks, each one counted
    assert done == total


# --- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"k": 0}, fa.InvalidParameterError, "k=0: expected a positive integer"),
        ({"k": True}, fa.InvalidParameterError, "k=True"),
        ({"exclude_self": True}, fa.InvalidParameterError, "exclude_self=True: needs id="),
        ({"carry": "rank"}, fa.InvalidParameterError, "'rank' is already an output column"),
        (
            {"features": ["x0", "label_text"]},
            fa.InvalidDtypeError,
            "features='label_text'.*numeric",
        ),
        ({"features": ["x0", "nope"]}, fa.ColumnNotFoundError, "features='nope'"),
        ({"progress": "yes"}, fa.InvalidParameterError, "progress='yes': expected True, False"),
    ],
)
def test_parameter_errors(kwargs: dict[str, Any], error: type[Exception], match: str) -> None:
    train, queries, labels = _data(0, 20, 3)
    train_frame, query_frame = _frames(train, queries, labels)
    train_frame = train_frame.with_columns(pl.lit("a").alias("label_text"))
    query_frame = query_frame.with_columns(pl.lit("a").alias("label_text"))
    arguments = {"features": FEATURES, "k": 3, **kwargs}
    with pytest.raises(error, match=match):
        fa.explain.nearest_cases(train_frame, query_frame, **arguments)


def test_value_errors() -> None:
    train, queries, labels = _data(0, 20, 3)
    train_frame, query_frame = _frames(train, queries, labels)
    with pytest.raises(
        fa.InvalidValueError, match=r"k=21: expected 1 <= k <= 20 \(the training set has 20 row"
    ):
        fa.explain.nearest_cases(train_frame, query_frame, features=FEATURES, k=21)
    with pytest.raises(fa.InvalidValueError, match="k=20: expected 1 <= k <= 19"):
        fa.explain.nearest_cases(
            train_frame, train_frame, features=FEATURES, k=20, id="id", exclude_self=True
        )
    nulls = query_frame.with_columns(pl.lit(None, dtype=pl.Float64).alias("x2"))
    with pytest.raises(fa.InvalidValueError, match="column 'x2' of queries holds 3 null"):
        fa.explain.nearest_cases(train_frame, nulls, features=FEATURES, k=2)
    twice = pl.concat([train_frame, train_frame.head(1)])
    with pytest.raises(fa.InvalidValueError, match=r"id='id' \(train\).*id=1000"):
        fa.explain.nearest_cases(twice, query_frame, features=FEATURES, k=2, id="id")


# --- euclidean_distance -----------------------------------------------------------------------


def test_euclidean_distance_matches_scipy(constructor: Constructor) -> None:
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((30, 3)), rng.standard_normal((30, 3)) * 5
    frame = (
        pl.DataFrame(np.hstack([a, b]), schema=["a1", "a2", "a3", "b1", "b2", "b3"])
        .with_row_index("row")
        .with_columns(pl.col("row").cast(pl.Int64))
    )
    expr = fa.explain.euclidean_distance(["a1", "a2", "a3"], ["b1", "b2", "b3"])
    result = to_polars(
        nw.from_native(constructor(frame)).select("row", expr).sort("row").to_native()
    )
    expected = [euclidean(x, y) for x, y in zip(a, b, strict=True)]
    np.testing.assert_allclose(result["distance"].to_numpy(), expected, rtol=1e-14)


def test_euclidean_distance_polars_and_nulls() -> None:
    frame = pl.DataFrame(
        {"x": [0.0, None, float("nan")], "y": [3.0, 1.0, 1.0], "u": [4, 1, 1], "v": [0, 1, 1]}
    )
    result = frame.select(fa.explain.euclidean_distance(["x", "u"], ["v", "y"], backend="polars"))
    assert result["distance"][0] == 1.0  # sqrt((0 − 0)² + (4 − 3)²)
    assert result["distance"][1] is None  # a null is not skipped
    assert np.isnan(result["distance"][2])
    with pytest.raises(fa.InvalidParameterError, match="equally long"):
        fa.explain.euclidean_distance(["x"], ["y", "u"])
    with pytest.raises(fa.InvalidParameterError, match="backend='arrow'"):
        fa.explain.euclidean_distance(["x"], ["y"], backend="arrow")  # type: ignore[call-overload]


@pytest.mark.slow
def test_large_search_matches_sklearn() -> None:
    train, queries, labels = _data(21, 30_000, 3_000, d=20)
    names = [f"x{j}" for j in range(20)]
    scaler = StandardScaler().fit(train)
    nn = NearestNeighbors(n_neighbors=15, algorithm="brute").fit(scaler.transform(train))
    distances, indices = nn.kneighbors(scaler.transform(queries))
    train_frame, query_frame = _frames(train, queries, labels)
    cases = fa.explain.nearest_cases(train_frame.lazy(), query_frame.lazy(), features=names, k=15)
    found = cases.collect()
    assert found["case"].to_numpy().reshape(-1, 15).tolist() == indices.tolist()
    np.testing.assert_allclose(found["distance"].to_numpy().reshape(-1, 15), distances, rtol=1e-9)
