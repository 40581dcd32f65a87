"""Case-based correspondence (docs/explain.md) against case-explainer 0.2.0."""

from __future__ import annotations

import math
from typing import Any

import polars as pl
import pytest
from case_explainer.metrics import compute_correspondence
from conftest import Constructor, assert_frame_close, to_polars
from reference import explain as ref

import frameaudit as fa

SEED_EXAMPLE = pl.DataFrame(
    {
        "query": [0] * 5,
        "distance": [0.1, 0.2, 0.3, 0.5, 0.8],
        "label": [1, 1, 1, 0, 1],
        "predicted": [1] * 5,
    }
)


def test_seed_example() -> None:
    # The seed claims 94.5%; the formula it states gives 0.868485 (docs/explain.md).
    weighted = fa.explain.correspondence(SEED_EXAMPLE)
    assert weighted["correspondence"].item() == pytest.approx(0.868485, abs=5e-7)
    assert weighted["band"].item() == "high"
    neighbours = [
        (i, d, y)
        for i, (d, y) in enumerate(
            zip(SEED_EXAMPLE["distance"], SEED_EXAMPLE["label"], strict=True)
        )
    ]
    assert weighted["correspondence"].item() == pytest.approx(
        compute_correspondence(neighbours, 1)[0], rel=1e-15
    )
    unweighted = fa.explain.correspondence(SEED_EXAMPLE, weighted=False)
    assert unweighted["correspondence"].item() == pytest.approx(0.8, rel=1e-15)
    assert unweighted["band"].item() == "medium"


def _expected(
    cases: list[Any], *, weighted: bool, class_weights: dict[int, float] | None
) -> pl.DataFrame:
    rows = []
    for query, predicted, neighbours in cases:
        value, band = compute_correspondence(
            neighbours, predicted, distance_weighted=weighted, class_weights=class_weights
        )
        # case-explainer reports (0.0, "undefined") where frameaudit gives null.
        rows.append((query, None, None) if band == "undefined" else (query, value, band))
    return pl.DataFrame(
        rows,
        schema={"query": pl.Int64, "correspondence": pl.Float64, "band": pl.String},
        orient="row",
    )


CLASS_WEIGHTS = [None, {0: 1.0, 1: 3.0}, {0: 0.0, 2: 0.5}, {1: 0.0, 0: 0.0, 2: 0.0}]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("class_weights", CLASS_WEIGHTS)
def test_matches_case_explainer(
    seed: int, weighted: bool, class_weights: dict[int, float] | None
) -> None:
    cases = ref.random_neighbours(seed, n_queries=40, max_neighbours=12, n_classes=3)
    frame = ref.neighbour_frame(cases)
    result = fa.explain.correspondence(frame, weighted=weighted, class_weights=class_weights)
    assert_frame_close(
        result, _expected(cases, weighted=weighted, class_weights=class_weights), rel=1e-12
    )


@pytest.mark.spark
def test_backends(constructor: Constructor) -> None:
    cases = ref.random_neighbours(42, n_queries=25, max_neighbours=8, n_classes=3)
    frame = ref.neighbour_frame(cases)
    weights = {0: 2.0, 1: 0.5}
    expected = _expected(cases, weighted=True, class_weights=weights)
    polars_result = fa.explain.correspondence(frame, class_weights=weights)
    result = to_polars(fa.explain.correspondence(constructor(frame), class_weights=weights))
    assert_frame_close(result, polars_result, rel=1e-12)
    assert_frame_close(result, expected, rel=1e-12)


def test_summary_by(constructor: Constructor) -> None:
    cases = ref.random_neighbours(7, n_queries=60, max_neighbours=6, n_classes=2)
    frame = ref.neighbour_frame(cases).with_columns((pl.col("query") % 3).alias("fold"))
    expected_rows = []
    per_query = _expected(cases, weighted=True, class_weights=None).with_columns(
        (pl.col("query") % 3).alias("fold")
    )
    for fold in range(3):
        part = per_query.filter(pl.col("fold") == fold)
        values = [v for v in part["correspondence"].to_list() if v is not None]
        bands = part["band"].to_list()
        expected_rows.append(
            (
                fold,
                sum(values) / len(values),
                part.height,
                part.height - len(values),
                bands.count("high"),
                bands.count("medium"),
                bands.count("low"),
            )
        )
    expected = pl.DataFrame(
        expected_rows,
        schema=[
            "fold",
            "correspondence",
            "n_queries",
            "n_undefined",
            "n_high",
            "n_medium",
            "n_low",
        ],
        orient="row",
    )
    result = to_polars(fa.explain.correspondence(constructor(frame), by="fold"))
    assert_frame_close(result, expected, rel=1e-12)


def test_bands_are_inclusive_and_configurable() -> None:
    # Unweighted shares 17/20 = 0.85 and 14/20 = 0.70 sit exactly on the default thresholds.
    rows = [(0, 0.0, int(i < 17), 1) for i in range(20)] + [
        (1, 0.0, int(i < 14), 1) for i in range(20)
    ]
    rows += [(2, 0.0, int(i < 13), 1) for i in range(20)]
    frame = pl.DataFrame(rows, schema=["query", "distance", "label", "predicted"], orient="row")
    result = fa.explain.correspondence(frame, weighted=False)
    assert result["band"].to_list() == ["high", "medium", "low"]
    custom = fa.explain.correspondence(frame, weighted=False, high=0.9, medium=0.65)
    assert custom["band"].to_list() == ["medium", "medium", "medium"]


def test_undefined_is_null() -> None:
    frame = pl.DataFrame(
        {
            "query": [0, 1, 1, 2],
            "distance": [None, math.inf, math.inf, 0.5],
            "label": [None, 1, 0, 1],
            "predicted": [1, 1, 1, 1],
        }
    )
    result = fa.explain.correspondence(frame)
    # no neighbours, all distances infinite (zero weight), a normal query
    assert result["correspondence"].to_list() == [None, None, 1.0]
    assert result["band"].to_list() == [None, None, "high"]
    zero = fa.explain.correspondence(frame.filter(pl.col("query") == 2), class_weights={1: 0.0})
    assert zero["correspondence"].to_list() == [None]


def test_string_classes_and_query_lists() -> None:
    frame = pl.DataFrame(
        {
            "run": ["a", "a", "a", "b"],
            "query": [0, 0, 0, 0],
            "distance": [0.0, 1.0, 0.5, 0.0],
            "label": ["cat", "dog", "cat", "dog"],
            "predicted": ["cat", "cat", "cat", "dog"],
        }
    )
    result = fa.explain.correspondence(frame, query=["run", "query"], class_weights={"dog": 2.0})
    expected = compute_correspondence(
        [(0, 0.0, "cat"), (1, 1.0, "dog"), (2, 0.5, "cat")], "cat", class_weights={"dog": 2.0}
    )[0]
    assert result["correspondence"].to_list() == pytest.approx([expected, 1.0], rel=1e-15)
    assert result.columns == ["run", "query", "correspondence", "band"]


def test_unweighted_does_not_need_distance() -> None:
    frame = SEED_EXAMPLE.drop("distance")
    assert fa.explain.correspondence(frame, weighted=False)[
        "correspondence"
    ].item() == pytest.approx(0.8)


def test_lazy_and_untouched() -> None:
    frame = SEED_EXAMPLE.to_pandas()
    before = frame.copy()
    result = fa.explain.correspondence(frame)
    assert frame.equals(before)
    assert result["correspondence"].iloc[0] == pytest.approx(0.868485, abs=5e-7)
    lazy = fa.explain.correspondence(SEED_EXAMPLE.lazy())
    assert isinstance(lazy, pl.LazyFrame)


# --- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"class_weights": {1: -1.0}},
            fa.InvalidParameterError,
            r"class_weights\[1\]=-1.0: expected a finite, non-negative",
        ),
        ({"class_weights": {1: math.nan}}, fa.InvalidParameterError, "finite, non-negative"),
        ({"class_weights": {1: "2"}}, fa.InvalidParameterError, "expected a number, got str"),
        (
            {"class_weights": {"1": 2.0}},
            fa.InvalidParameterError,
            "key '1' .* cannot be a value of the label column",
        ),
        ({"high": 0.6, "medium": 0.7}, fa.InvalidParameterError, "expected medium <= high"),
        ({"high": 1.5}, fa.InvalidParameterError, r"high=1.5: expected a number in \[0.0, 1.0\]"),
        ({"label": "lable"}, fa.ColumnNotFoundError, "did you mean 'label'"),
        (
            {"predicted": "distance", "weighted": False},
            fa.InvalidDtypeError,
            "expected comparable class columns",
        ),
        (
            {"predicted": "distance"},
            fa.InvalidParameterError,
            "column 'distance' is given both as predicted= and as distance=",
        ),
        ({"label": "predicted"}, fa.InvalidParameterError, "given both as label= and as predic"),
        (
            {"class_weights": [1.0, 2.0]},
            fa.InvalidParameterError,
            r"class_weights=\[1.0, 2.0\]: expected a mapping",
        ),
    ],
)
def test_parameter_errors(kwargs: dict[str, Any], error: type[Exception], match: str) -> None:
    frame = SEED_EXAMPLE.with_columns(pl.col("label").cast(pl.Int64))
    if kwargs.get("predicted") == "distance":
        frame = frame.with_columns(pl.col("label").cast(pl.String))
    with pytest.raises(error, match=match):
        fa.explain.correspondence(frame, **kwargs)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (
            pl.col("distance") - 0.2,
            r"distance='distance': expected values in \[0, inf\], found 1 outside it \(e.g. -0.1",
        ),
        (
            pl.when(pl.col("distance") > 0.6).then(math.nan).otherwise(pl.col("distance")),
            r"found 1 outside it \(e.g. NaN\)",
        ),
        (
            pl.when(pl.col("distance") > 0.6).then(None).otherwise(pl.col("distance")),
            "null in one of the two columns",
        ),
        # several offenders of both kinds are counted exactly
        (
            pl.when(pl.col("distance") > 0.4).then(math.nan).otherwise(-pl.col("distance")),
            r"found 5 outside it \(e.g. -0.3",
        ),
    ],
)
def test_distance_errors(change: pl.Expr, match: str) -> None:
    with pytest.raises(fa.InvalidValueError, match=match):
        fa.explain.correspondence(SEED_EXAMPLE.with_columns(change.alias("distance")))


def test_huge_distances_are_in_range() -> None:
    """Distances whose sum overflows to inf fail the range check's cheap screen, not the check."""
    distances = [0.1, 1e308, 1e308, 0.5, 0.8]
    frame = SEED_EXAMPLE.with_columns(pl.Series("distance", distances))
    labels = SEED_EXAMPLE["label"].to_list()
    # their weight 1/(d+1)³ is 0 (case-explainer's Python pow overflows there instead)
    finite = [(i, d, y) for i, (d, y) in enumerate(zip(distances, labels, strict=True)) if d < 1]
    expected = compute_correspondence(finite, 1)[0]
    result = fa.explain.correspondence(frame)["correspondence"].item()
    assert result == pytest.approx(expected, rel=1e-15)


def test_predicted_must_be_constant_within_query() -> None:
    frame = SEED_EXAMPLE.with_columns(pl.Series("predicted", [1, 1, 0, 1, 1]))
    with pytest.raises(
        fa.InvalidValueError, match=r"predicted='predicted'.*query=0.*same on every row"
    ):
        fa.explain.correspondence(frame)
    frame = SEED_EXAMPLE.with_columns(pl.Series("query", [0, None, 0, 0, 0]))
    with pytest.raises(fa.InvalidValueError, match=r"query='query'.*1 null"):
        fa.explain.correspondence(frame)


@pytest.mark.parametrize("order", ["sorted", "reversed", "interleaved"])
@pytest.mark.parametrize("kind", ["polars", "pandas", "lazy"])
def test_predicted_disagreement_in_any_row_order(order: str, kind: str) -> None:
    # In-memory rows in key order are checked from neighbouring rows, other orders (and lazy
    # frames) per query: the same error either way. Queries 1 and 3 disagree.
    frame = pl.DataFrame(
        [(q, 0.5 + i, i % 2, int(q in {1, 3} and i == 2)) for q in range(5) for i in range(3)],
        schema=["query", "distance", "label", "predicted"],
        orient="row",
    )
    reorder = {
        "sorted": lambda f: f,
        "reversed": lambda f: f.reverse(),
        "interleaved": lambda f: f.sort("distance", "query"),  # a query's rows apart
    }[order]

    def run(data: pl.DataFrame) -> pl.DataFrame:
        native: Any = {"polars": data, "pandas": data.to_pandas(), "lazy": data.lazy()}[kind]
        return to_polars(fa.explain.correspondence(native))

    with pytest.raises(
        fa.InvalidValueError, match=r"predicted='predicted': 2 quer\(y/ies\) .*\(e\.g\. query=1\)"
    ):
        run(reorder(frame))
    agreeing = frame.with_columns(pl.lit(0).alias("predicted"))
    assert_frame_close(run(reorder(agreeing)), fa.explain.correspondence(agreeing))
