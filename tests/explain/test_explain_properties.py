"""Hypothesis properties of the explainability family (docs/explain.md).

Against the plain references on generated input, plus invariances: row order, group relabelling,
scaling class weights, and "bad input raises a frameaudit error, never anything else".
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from case_explainer.metrics import compute_correspondence
from hypothesis import example, given, settings
from hypothesis import strategies as st
from reference import explain as ref

import frameaudit as fa
from frameaudit._kernels import knn

SETTINGS = settings(max_examples=40, deadline=None)

importance = st.one_of(st.sampled_from([0.0, 0.5, 1.0, -1.0]), st.floats(-10, 10, allow_nan=False))


@st.composite
def rankings(draw: st.DrawFn) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    n_features = draw(st.integers(1, 8))
    features = [f"f{i}" for i in range(n_features)]
    n_groups = draw(st.integers(1, 4))

    def one() -> dict[str, float]:
        return {f: draw(importance) for f in features}

    return {f"g{i}": one() for i in range(n_groups)}, one()


@SETTINGS
@given(rankings(), st.data())
def test_cohesion_matches_reference(
    data: tuple[dict[str, dict[str, float]], dict[str, float]], extra: st.DataObject
) -> None:
    groups, overall = data
    n = len(overall)
    k = extra.draw(st.one_of(st.none(), st.integers(1, n)))
    frame = ref.to_frame(groups, overall).sample(
        fraction=1.0, shuffle=True, seed=extra.draw(st.integers(0, 99))
    )
    pp = fa.explain.position_parity(frame, overall="all", k=k, per_group=True)
    ra = fa.explain.rank_alignment(frame, overall="all", k=k, per_group=True)
    expected_pp = ref.position_parity(groups, overall, k)
    expected_ra = ref.rank_alignment(groups, overall, k)
    assert pp["position_parity"].to_list() == pytest.approx(
        [expected_pp[g] for g in sorted(groups)], rel=1e-12
    )
    assert ra["rank_alignment"].to_list() == pytest.approx(
        [expected_ra[g] for g in sorted(groups)], rel=1e-12
    )
    for value in [*pp["position_parity"], *ra["rank_alignment"]]:
        assert 0.0 <= value <= 1.0
    # Identical orders give 1.
    same = ref.to_frame(dict.fromkeys(groups, overall), overall)
    assert fa.explain.position_parity(same, overall="all", k=k).item() == pytest.approx(1.0)
    assert fa.explain.rank_alignment(same, overall="all", k=k).item() == pytest.approx(1.0)


@SETTINGS
@given(rankings(), st.sampled_from([0.3, 0.8, 1.0]))
def test_alpha_jaccard_matches_reference(
    data: tuple[dict[str, dict[str, float]], dict[str, float]], alpha: float
) -> None:
    groups, overall = data
    frame = ref.to_frame(groups, overall)
    result = fa.explain.rank_alignment(
        frame, overall="all", method="alpha_jaccard", alpha=alpha, per_group=True
    )
    expected = ref.alpha_jaccard(groups, overall, alpha)
    values = result["rank_alignment"].to_list()
    for value, name in zip(values, sorted(groups), strict=True):
        if expected[name] is None:
            assert value is None
        else:
            assert value == pytest.approx(expected[name], rel=1e-12)
    # Relabelling the groups changes nothing but the labels.
    relabelled = frame.with_columns(pl.col("group").str.replace("g", "group_"))
    again = fa.explain.rank_alignment(
        relabelled, overall="all", method="alpha_jaccard", alpha=alpha, per_group=True
    )
    assert again["rank_alignment"].to_list() == values


neighbour = st.tuples(st.integers(0, 99), st.floats(0, 5, allow_nan=False), st.integers(0, 2))


@SETTINGS
@given(
    st.lists(st.tuples(st.integers(0, 2), st.lists(neighbour, max_size=8)), min_size=1, max_size=6),
    st.booleans(),
    st.one_of(
        st.none(), st.dictionaries(st.integers(0, 2), st.floats(0, 4, allow_nan=False), max_size=3)
    ),
)
# the case that once failed on a fresh machine: undefined values (no neighbours; zero weight)
@example(
    queries=[(0, []), (1, [(1, 0.5, 0)]), (0, [(2, 1.0, 0)])], weighted=True, class_weights={0: 0.0}
)
def test_correspondence_matches_case_explainer(
    queries: list[tuple[int, list[tuple[int, float, int]]]],
    weighted: bool,
    class_weights: dict[int, float] | None,
) -> None:
    cases = [(q, predicted, neighbours) for q, (predicted, neighbours) in enumerate(queries)]
    frame = ref.neighbour_frame(cases).sample(fraction=1.0, shuffle=True, seed=1)
    result = fa.explain.correspondence(frame, weighted=weighted, class_weights=class_weights)
    for (_, predicted, neighbours), value in zip(cases, result["correspondence"], strict=True):
        expected, band = compute_correspondence(
            neighbours, predicted, distance_weighted=weighted, class_weights=class_weights
        )
        if band == "undefined":
            assert value is None
        else:
            assert value == pytest.approx(expected, rel=1e-12, abs=1e-15)
            assert 0.0 <= value <= 1.0
    if class_weights:
        # Correspondence is a ratio: scaling every class weight by the same factor changes nothing.
        scaled = {c: 3.0 * w for c, w in class_weights.items()}
        other = {c for _, _, ns in cases for _, _, c in ns} - set(scaled)
        scaled.update(dict.fromkeys(other, 3.0))
        again = fa.explain.correspondence(frame, weighted=weighted, class_weights=scaled)
        # an undefined value (no neighbours, or zero total weight) stays null
        for scaled_value, value in zip(
            again["correspondence"], result["correspondence"], strict=True
        ):
            if value is None:
                assert scaled_value is None
            else:
                assert scaled_value == pytest.approx(value, rel=1e-12)


@SETTINGS
@given(
    st.integers(1, 60),
    st.integers(0, 12),
    st.integers(1, 4),
    st.integers(0, 2**32 - 1),
    st.booleans(),
)
def test_kernel_matches_brute_force(n: int, m: int, d: int, seed: int, grid: bool) -> None:
    rng = np.random.default_rng(seed)
    draw = (lambda shape: rng.integers(-2, 3, shape).astype(float)) if grid else rng.standard_normal
    train, queries = draw((n, d)), draw((m, d))
    k = int(rng.integers(1, n + 1))
    indices, distances = knn.nearest(train, queries, k, memory_budget=int(rng.integers(1, 4096)))
    expected_indices, expected_distances = ref.knn(train, queries, k)
    np.testing.assert_array_equal(indices, expected_indices)
    np.testing.assert_allclose(distances, expected_distances, rtol=1e-12, atol=1e-12)


@SETTINGS
@given(
    st.one_of(st.integers(-3, 30), st.floats(allow_nan=True), st.text(max_size=2), st.none()),
    st.one_of(st.floats(allow_nan=True), st.integers(-2, 2), st.text(max_size=2)),
)
def test_bad_input_raises_frameaudit_errors(k: object, distance: object) -> None:
    frame = pl.DataFrame(
        {"query": [0, 0], "distance": [0.5, 1.0], "label": [1, 0], "predicted": [1, 1]}
    )
    if isinstance(distance, (int, float)):
        bad = frame.with_columns(pl.Series("distance", [distance, 1.0], dtype=pl.Float64))
        try:
            result = fa.explain.correspondence(bad)
        except fa.FrameAuditError:
            assert math.isnan(float(distance)) or float(distance) < 0
        else:
            assert float(distance) >= 0
            assert result.height == 1
    else:
        with pytest.raises(fa.FrameAuditError):
            fa.explain.correspondence(frame.with_columns(pl.lit(distance).alias("distance")))
    cohesion = ref.to_frame({"g": {"a": 1.0, "b": 2.0}}, {"a": 2.0, "b": 1.0})
    try:
        fa.explain.rank_alignment(cohesion, overall="all", k=k)  # type: ignore[arg-type]
    except fa.FrameAuditError:
        assert k is not None
        assert not (isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= 2)
    train = pl.DataFrame({"x": [0.0, 1.0, 2.0], "label": [0, 1, 1]})
    try:
        fa.explain.nearest_cases(train, train, features="x", k=k)  # type: ignore[arg-type]
    except fa.FrameAuditError:
        assert not (isinstance(k, int) and 1 <= k <= 3)
