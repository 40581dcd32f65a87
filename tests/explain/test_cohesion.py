"""Order cohesion (docs/explain.md): position parity and rank alignment.

Against holisticai 1.0.14 where frameaudit agrees with it (position parity on full,
equal feature sets; ``method="alpha_jaccard"``), against the plain implementation in
``tests/reference/explain.py`` for the seed's average top-k overlap, and on hand-worked cases.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import polars as pl
import pytest
from conftest import Constructor, assert_frame_close, to_polars
from reference import explain as ref

import frameaudit as fa

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from holisticai.explainability.metrics import position_parity as hai_position_parity
    from holisticai.explainability.metrics import rank_alignment as hai_rank_alignment
    from holisticai.utils import ConditionalImportances, Importances


def _holistic(importances: dict[str, float]) -> Importances:
    """holisticai keeps the order it is given: hand it frameaudit's documented order."""
    names = ref.order(importances)
    return Importances(values=np.array([importances[f] for f in names]), feature_names=names)


def _holistic_groups(groups: dict[str, dict[str, float]]) -> ConditionalImportances:
    return ConditionalImportances(values={g: _holistic(imp) for g, imp in groups.items()})


def _per_group(result: Any, column: str) -> dict[str, float | None]:
    frame = to_polars(result)
    return dict(zip(frame["group"].to_list(), frame[column].to_list(), strict=True))


SEEDS = range(12)


@pytest.mark.parametrize("seed", SEEDS)
def test_position_parity_matches_holisticai(seed: int) -> None:
    groups, overall = ref.random_importances(seed, n_groups=1 + seed % 4, n_features=2 + 3 * seed)
    frame = ref.to_frame(groups, overall)
    expected = hai_position_parity(_holistic_groups(groups), _holistic(overall))
    assert fa.explain.position_parity(frame, overall="all").item() == pytest.approx(
        expected, rel=1e-12
    )
    per_group = _per_group(
        fa.explain.position_parity(frame, overall="all", per_group=True), "position_parity"
    )
    for name, imp in groups.items():
        alone = hai_position_parity(_holistic_groups({name: imp}), _holistic(overall))
        assert per_group[name] == pytest.approx(alone, rel=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("alpha", [0.8, 0.5, 0.95])
def test_alpha_jaccard_matches_holisticai(seed: int, alpha: float) -> None:
    groups, overall = ref.random_importances(seed, n_groups=1 + seed % 4, n_features=2 + 3 * seed)
    frame = ref.to_frame(groups, overall)
    expected = hai_rank_alignment(_holistic_groups(groups), _holistic(overall), aggregation=False)
    if alpha != 0.8:
        # rank_alignment() fixes alpha at 0.8; its metric class takes it as a parameter.
        from holisticai.explainability.metrics.global_feature_importance._rank_alignment import (
            RankAlignment,
        )

        expected = RankAlignment()(
            _holistic_groups(groups), _holistic(overall), alpha=alpha, aggregation=False
        )
    result = fa.explain.rank_alignment(
        frame, overall="all", method="alpha_jaccard", alpha=alpha, per_group=True
    )
    per_group = _per_group(result, "rank_alignment")
    assert [per_group[g] for g in groups] == pytest.approx(expected, rel=1e-12)
    mean = fa.explain.rank_alignment(frame, overall="all", method="alpha_jaccard", alpha=alpha)
    assert mean.item() == pytest.approx(float(np.mean(expected)), rel=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("k", [None, 1, 2])
def test_topk_matches_reference(seed: int, k: int | None) -> None:
    groups, overall = ref.random_importances(
        seed, n_groups=1 + seed % 4, n_features=2 + 3 * seed, ties=seed % 2 == 1
    )
    frame = ref.to_frame(groups, overall)
    ra = _per_group(
        fa.explain.rank_alignment(frame, overall="all", k=k, per_group=True), "rank_alignment"
    )
    pp = _per_group(
        fa.explain.position_parity(frame, overall="all", k=k, per_group=True), "position_parity"
    )
    expected_ra = ref.rank_alignment(groups, overall, k)
    expected_pp = ref.position_parity(groups, overall, k)
    for name in groups:
        assert ra[name] == pytest.approx(expected_ra[name], rel=1e-12)
        assert pp[name] == pytest.approx(expected_pp[name], rel=1e-12)


def _ranking(order: str, scores: list[float] | None = None) -> dict[str, float]:
    """Features named by the letters of ``order``, most important first."""
    values = scores or [float(len(order) - i) for i in range(len(order))]
    return dict(zip(order, values, strict=True))


@pytest.mark.parametrize(
    ("group_order", "k", "rank_alignment", "position_parity"),
    [
        ("abcd", None, 1.0, 1.0),  # identical orders
        ("abcd", 2, 1.0, 1.0),
        ("dcba", None, (0 + 0 + 2 / 3 + 1) / 4, 0.0),  # reversed, no position agrees
        ("dcba", 3, (0 + 0 + 2 / 3) / 3, 0.0),
        ("cba", None, (0 + 1 / 2 + 1) / 3, (0 + 1 / 2 + 1 / 3) / 3),  # reversed, middle agrees
        ("bacd", None, (0 + 1 + 1 + 1) / 4, (0 + 0 + 1 / 3 + 2 / 4) / 4),  # first two swapped
        ("bacd", 1, 0.0, 0.0),
    ],
)
def test_hand_worked(
    group_order: str, k: int | None, rank_alignment: float, position_parity: float
) -> None:
    overall = _ranking("".join(sorted(group_order)))
    frame = ref.to_frame({"g": _ranking(group_order)}, overall)
    ra = fa.explain.rank_alignment(frame, overall="all", k=k).item()
    pp = fa.explain.position_parity(frame, overall="all", k=k).item()
    assert ra == pytest.approx(rank_alignment, abs=1e-15)
    assert pp == pytest.approx(position_parity, abs=1e-15)


def test_order_uses_absolute_importance_and_breaks_ties_by_name() -> None:
    # |−3| ranks first; b and c tie at 1 and go in name order: overall order is a, b, c.
    overall = {"a": -3.0, "c": 1.0, "b": 1.0}
    group = {"a": 3.0, "b": -2.0, "c": 2.0}  # b, c tie: b first
    frame = ref.to_frame({"g": group}, overall)
    assert fa.explain.position_parity(frame, overall="all").item() == 1.0
    swapped = ref.to_frame({"g": {"a": 3.0, "b": 1.0, "c": 2.0}}, overall)
    assert fa.explain.position_parity(swapped, overall="all").item() == pytest.approx(
        (1 + 1 / 2 + 1 / 3) / 3
    )


@pytest.mark.parametrize("k", [None, 7])
def test_identical_orders_give_exactly_one(k: int | None) -> None:
    # The metrics sum harmonic tails; with identical orders those sums are n (or k) only up to
    # rounding, and the agreement count must make the value exactly 1.
    _, overall = ref.random_importances(6, n_groups=1, n_features=300)
    frame = ref.to_frame({"g1": overall, "g2": overall}, overall)
    for metric in ("position_parity", "rank_alignment"):
        result = getattr(fa.explain, metric)(frame, overall="all", k=k, per_group=True)
        assert result[metric].to_list() == [1.0, 1.0]


def _expected_frame(
    groups: dict[str, dict[str, float]],
    overall: dict[str, float],
    column: str,
    values: dict[str, float | None],
) -> pl.DataFrame:
    return pl.DataFrame({"group": sorted(groups), column: [values[g] for g in sorted(groups)]})


@pytest.mark.spark(cases=["kwargs0", "kwargs2"])  # one case a function
@pytest.mark.parametrize(
    ("metric", "kwargs", "reference"),
    [
        ("position_parity", {}, ref.position_parity),
        ("position_parity", {"k": 3}, lambda g, o: ref.position_parity(g, o, 3)),
        ("rank_alignment", {}, ref.rank_alignment),
        ("rank_alignment", {"k": 2}, lambda g, o: ref.rank_alignment(g, o, 2)),
        ("rank_alignment", {"method": "alpha_jaccard"}, lambda g, o: ref.alpha_jaccard(g, o, 0.8)),
    ],
)
def test_backends(
    constructor: Constructor, metric: str, kwargs: dict[str, Any], reference: Any
) -> None:
    groups, overall = ref.random_importances(3, n_groups=3, n_features=7)
    frame = ref.to_frame(groups, overall)
    function = getattr(fa.explain, metric)
    expected = _expected_frame(groups, overall, metric, reference(groups, overall))
    polars_result = to_polars(function(frame, overall="all", per_group=True, **kwargs))
    result = to_polars(function(constructor(frame), overall="all", per_group=True, **kwargs))
    assert_frame_close(result, polars_result, rel=1e-12)
    assert_frame_close(result, expected, rel=1e-12)
    mean = to_polars(function(constructor(frame), overall="all", **kwargs))
    assert mean.columns == [metric]
    assert mean.item() == pytest.approx(float(np.mean(expected[metric].to_numpy())), rel=1e-12)


def test_backends_by_and_overall_frame(constructor: Constructor) -> None:
    parts = []
    overall_parts = []
    expected_rows = []
    for model, seed in (("m1", 5), ("m2", 9)):
        groups, overall = ref.random_importances(seed, n_groups=2, n_features=6)
        parts.append(ref.to_frame(groups).with_columns(pl.lit(model).alias("model")))
        overall_parts.append(
            ref.to_frame({"x": overall}).drop("group").with_columns(pl.lit(model).alias("model"))
        )
        expected_rows.append(
            (model, float(np.mean(list(ref.rank_alignment(groups, overall).values()))))
        )
    frame = pl.concat(parts)
    overall_frame = pl.concat(overall_parts)
    expected = pl.DataFrame(expected_rows, schema=["model", "rank_alignment"], orient="row")
    result = fa.explain.rank_alignment(constructor(frame), overall=overall_frame, by="model")
    assert_frame_close(to_polars(result), expected, rel=1e-12)


@pytest.mark.parametrize(
    ("metric", "kwargs"),
    [
        ("position_parity", {}),
        ("rank_alignment", {"k": 5}),
        ("rank_alignment", {"method": "alpha_jaccard"}),
    ],
)
def test_overall_as_dict_frame_and_value_agree(metric: str, kwargs: dict[str, Any]) -> None:
    groups, overall = ref.random_importances(11, n_groups=3, n_features=8)
    with_rows = ref.to_frame(groups, overall)
    alone = ref.to_frame(groups)
    overall_frame = pl.DataFrame({"feature": list(overall), "importance": list(overall.values())})
    function = getattr(fa.explain, metric)
    expected = function(with_rows, overall="all", per_group=True, **kwargs)
    for given in (overall, overall_frame, overall_frame.to_pandas()):
        assert function(alone, overall=given, per_group=True, **kwargs).equals(expected)


def test_shared_overall_is_broadcast_over_partitions() -> None:
    groups, overall = ref.random_importances(2, n_groups=2, n_features=5)
    frame = pl.concat(
        [ref.to_frame(groups).with_columns(pl.lit(m).alias("model")) for m in ("a", "b")]
    )
    result = fa.explain.rank_alignment(frame, overall=overall, by="model")
    value = float(np.mean(list(ref.rank_alignment(groups, overall).values())))
    assert result["rank_alignment"].to_list() == pytest.approx([value, value], rel=1e-12)


def test_alpha_jaccard_all_zero_importances_is_null() -> None:
    frame = ref.to_frame(
        {"g1": {"a": 0.0, "b": 0.0}, "g2": {"a": 1.0, "b": 0.5}}, {"a": 2.0, "b": 1.0}
    )
    result = fa.explain.rank_alignment(frame, overall="all", method="alpha_jaccard", per_group=True)
    assert result["rank_alignment"].to_list() == [None, 1.0]
    # One undefined group makes the mean undefined: nothing is skipped silently.
    assert fa.explain.rank_alignment(frame, overall="all", method="alpha_jaccard").item() is None


@pytest.mark.parametrize(
    ("metric", "kwargs"),
    [
        ("position_parity", {}),
        ("rank_alignment", {}),
        ("rank_alignment", {"method": "alpha_jaccard"}),
    ],
)
def test_no_group_to_compare_is_null(metric: str, kwargs: dict[str, Any]) -> None:
    # Only the overall ranking: the mean over an empty set of groups is undefined (frameaudit: null,
    # one row when by is not given).
    frame = ref.to_frame({}, {"a": 1.0, "b": 0.5})
    result = getattr(fa.explain, metric)(frame, overall="all", **kwargs)
    assert result.shape == (1, 1)
    assert result.item() is None


def test_lazy_in_lazy_out() -> None:
    groups, overall = ref.random_importances(1, n_groups=2, n_features=4)
    lazy = ref.to_frame(groups, overall).lazy()
    result = fa.explain.position_parity(lazy, overall="all")
    assert isinstance(result, pl.LazyFrame)
    assert result.collect().item() == pytest.approx(
        float(np.mean(list(ref.position_parity(groups, overall).values())))
    )


def test_caller_frame_untouched() -> None:
    groups, overall = ref.random_importances(4, n_groups=2, n_features=4)
    frame = ref.to_frame(groups, overall).to_pandas()
    before = frame.copy()
    fa.explain.rank_alignment(frame, overall="all")
    assert frame.equals(before)


# --- errors -----------------------------------------------------------------------------------


def _simple() -> pl.DataFrame:
    return ref.to_frame(
        {"g1": {"a": 1.0, "b": 0.5}, "g2": {"a": 0.2, "b": 0.9}}, {"a": 1.0, "b": 0.3}
    )


@pytest.mark.parametrize("metric", ["position_parity", "rank_alignment"])
def test_missing_overall(metric: str) -> None:
    function = getattr(fa.explain, metric)
    with pytest.raises(fa.InvalidParameterError, match="overall=None"):
        function(_simple())
    with pytest.raises(fa.InvalidValueError, match=r"no rows with group == 'everyone'.*missing"):
        function(_simple(), overall="everyone")
    frame = _simple().with_columns(
        pl.when(pl.col("group") == "all").then(pl.lit("m2")).otherwise(pl.lit("m1")).alias("model")
    )
    with pytest.raises(
        fa.InvalidValueError,
        match=r"in 1 partition\(s\) \(e.g. model='m1'\); the overall ranking is missing$",
    ):
        function(frame, overall="all", by="model")
    with pytest.raises(fa.InvalidParameterError, match="cannot be a value of the group column"):
        function(_simple(), overall=3)


def test_feature_sets_must_match() -> None:
    extra = pl.concat(
        [_simple(), pl.DataFrame({"group": ["g2"], "feature": ["zeta"], "importance": [0.1]})]
    )
    with pytest.raises(
        fa.InvalidValueError,
        match=r"not in the overall ranking \(e.g. group='g2', feature='zeta'\)$",
    ):
        fa.explain.position_parity(extra, overall="all")
    missing = _simple().filter(~((pl.col("group") == "g1") & (pl.col("feature") == "b")))
    with pytest.raises(
        fa.InvalidValueError, match=r"missing from a group \(e.g. group='g1', feature='b'\)$"
    ):
        fa.explain.rank_alignment(missing, overall="all")


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"k": 0}, fa.InvalidParameterError, "k=0: expected a positive integer"),
        (
            {"k": 3},
            fa.InvalidValueError,
            r"k=3: larger than the number of features in 1 partition\(s\) \(e\.g\. features=2\)",
        ),
        ({"method": "jaccard"}, fa.InvalidParameterError, "did you mean 'alpha_jaccard'"),
        ({"method": "alpha_jaccard", "alpha": 0.0}, fa.InvalidParameterError, "alpha=0.0"),
        (
            {"method": "alpha_jaccard", "k": 2},
            fa.InvalidParameterError,
            "k applies to method='topk' only",
        ),
        ({"feature": "feat"}, fa.ColumnNotFoundError, "did you mean 'feature'"),
    ],
)
def test_parameter_errors(kwargs: dict[str, Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        fa.explain.rank_alignment(_simple(), overall="all", **kwargs)


def test_value_errors() -> None:
    nan = _simple().with_columns(
        pl.when(pl.col("feature") == "a")
        .then(float("nan"))
        .otherwise(pl.col("importance"))
        .alias("importance")
    )
    with pytest.raises(fa.InvalidValueError, match=r"expected finite numbers.*NaN or infinite"):
        fa.explain.position_parity(nan, overall="all")
    twice = pl.concat([_simple(), _simple().head(1)])
    with pytest.raises(
        fa.InvalidValueError,
        match=r"feature='feature': values must be unique within each group; 1 group\(s\) repeat "
        r"a value \(e.g. group='g1'\)",
    ):
        fa.explain.position_parity(twice, overall="all")
    text = _simple().with_columns(pl.col("feature").alias("note"))
    with pytest.raises(fa.InvalidDtypeError, match="importance='note'"):
        fa.explain.position_parity(text, overall="all", importance="note")
    with pytest.raises(
        fa.InvalidParameterError, match="column 'feature' is given both as feature= and as impo"
    ):
        fa.explain.position_parity(_simple(), overall="all", importance="feature")
    nulls = _simple().with_columns(
        pl.when(pl.col("feature") == "a").then(None).otherwise(pl.col("group")).alias("group")
    )
    with pytest.raises(fa.InvalidValueError, match=r"group='group'.*null"):
        fa.explain.position_parity(nulls, overall="all")
    lazy = nan.lazy()
    result = fa.explain.position_parity(lazy, overall="all")  # value checks run at collect time
    with pytest.raises(fa.InvalidValueError, match="NaN or infinite"):
        result.collect()


def _with_rows(frame: pl.DataFrame, *rows: tuple[str, str, float]) -> pl.DataFrame:
    extra = pl.DataFrame(list(rows), schema=["group", "feature", "importance"], orient="row")
    return pl.concat([frame, extra])


def _without(frame: pl.DataFrame, group: str, feature: str) -> pl.DataFrame:
    return frame.filter(~((pl.col("group") == group) & (pl.col("feature") == feature)))


REPEATED = r"feature='feature': values must be unique within each group; 1 group\(s\) repeat"


@pytest.mark.parametrize(
    ("frame", "match"),
    [
        # a group ranks a feature twice and misses another: same size, known features
        (
            _with_rows(_without(_simple(), "g1", "b"), ("g1", "a", 0.7)),
            REPEATED + r" a value \(e.g. group='g1'\)",
        ),
        # a feature twice that is not in the overall ranking: reported as repeated first
        (
            _with_rows(_simple(), ("g2", "zeta", 0.1), ("g2", "zeta", 0.2)),
            REPEATED + r" a value \(e.g. group='g2'\)",
        ),
        # the overall ranking repeats a feature
        (_with_rows(_simple(), ("all", "b", 0.1)), REPEATED + r" a value \(e.g. group='all'\)"),
        # ... also when there is no group to compare
        (
            _with_rows(_simple().filter(pl.col("group") == "all"), ("all", "a", 0.1)),
            REPEATED + r" a value \(e.g. group='all'\)",
        ),
        # a feature replaced by an unknown one: same size, every position distinct
        (
            _with_rows(_without(_simple(), "g2", "b"), ("g2", "zeta", 0.1)),
            r"1 \(group, feature\) pair\(s\) are not in the overall ranking "
            r"\(e.g. group='g2', feature='zeta'\)$",
        ),
    ],
)
@pytest.mark.parametrize(
    ("metric", "kwargs"),
    [
        ("position_parity", {}),
        ("rank_alignment", {}),
        ("rank_alignment", {"method": "alpha_jaccard"}),
    ],
)
def test_feature_set_errors(
    frame: pl.DataFrame, match: str, metric: str, kwargs: dict[str, Any]
) -> None:
    with pytest.raises(fa.InvalidValueError, match=match):
        getattr(fa.explain, metric)(frame, overall="all", **kwargs)


def test_feature_set_errors_per_partition() -> None:
    # Only the second model's overall ranking repeats a feature.
    frame = pl.concat(
        [
            _simple().with_columns(pl.lit("m1").alias("model")),
            _with_rows(_simple(), ("all", "a", 0.125)).with_columns(pl.lit("m2").alias("model")),
        ]
    )
    with pytest.raises(
        fa.InvalidValueError, match=REPEATED + r" a value \(e.g. model='m2', group='all'\)"
    ):
        fa.explain.position_parity(frame, overall="all", by="model")
    valid = frame.filter(pl.col("importance") != 0.125)
    result = fa.explain.position_parity(valid, overall="all", by="model", per_group=True)
    assert result.height == 4
