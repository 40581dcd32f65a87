"""Point weights and bootstrap intervals of the clustering metrics (SPEC §5).

Weights are checked by their defining identity (an integer weight k is the point repeated k
times, with fresh ids), against frameaudit on the repeated data and against the reference
implementation. Intervals are checked against a straightforward numpy bootstrap (multinomial
resampling of the points, an independent random stream), by their coverage of a known
population value, and for equality across engines and row orders. The silhouette difference
has neither, and says why.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import polars as pl
import pytest
from conftest import Constructor, assert_frame_close, to_polars
from reference import clustering as ref

import frameaudit as fa
from frameaudit._engine.resample import with_poisson_counts
from frameaudit.exceptions import (
    ColumnNotFoundError,
    InvalidDtypeError,
    InvalidParameterError,
    InvalidValueError,
    UnsupportedBackendError,
)
from frameaudit.fair.clustering import label_metrics

Metric = Callable[..., Any]
LABEL = ref.LABEL_METRICS
SFR = "social_fairness_ratio"
COUNTS = ["n_cluster", "n_a", "n_b"]


def _frame(seed: int, **options: Any) -> pl.DataFrame:
    """A random clustering with point ids (``id``) and integer weights 0 to 3 (``w``)."""
    frame = ref.random_clustering(seed, **options).drop("vec")
    ids = pl.int_range(pl.len(), dtype=pl.Int64)
    return frame.with_columns(ids.alias("id")).with_columns((pl.col("id") * 7 % 4).alias("w"))


def _repeated(frame: pl.DataFrame) -> pl.DataFrame:
    """Each point repeated ``w`` times (none for 0), every copy with a fresh id."""
    copies = frame.with_columns(pl.int_ranges(0, pl.col("w")).alias("copy")).explode("copy")
    fresh = pl.col("id") * 10 + pl.col("copy")
    return copies.drop_nulls("copy").with_columns(fresh.alias("id")).drop("copy", "w")


def _call(metric: str, frame: Any, **options: Any) -> Any:
    if metric == SFR:
        options.setdefault("features", ["x0", "x1", "x2"])
    return getattr(fa.fair, metric)(frame, a="a", b="b", **options)


def _with_float_counts(frame: pl.DataFrame) -> pl.DataFrame:
    """Weighted counts are Float64 sums of weights."""
    return frame.with_columns(pl.col(c).cast(pl.Float64) for c in COUNTS if c in frame.columns)


def _reference(metric: str, frame: pl.DataFrame, by: str | None, per_cluster: bool) -> pl.DataFrame:
    """tests/reference/clustering.py on ``frame``, in frameaudit's output layout."""
    parts = [None] if by is None else sorted(frame[by].unique().to_list())
    if per_cluster:
        rows = []
        for part in parts:
            own = frame if by is None else frame.filter(pl.col(by) == part)
            for cluster, values in ref.cluster_detail(own, "a", "b").items():
                key = {} if by is None else {by: part}
                rows.append({**key, "cluster": cluster, **values})
                rows[-1][metric] = ref.cluster_term(metric, values)
        return pl.DataFrame(rows)
    if metric == SFR:
        values = ref.social_fairness_ratio(frame, "a", "b", by=by)
    else:
        values = ref.label_metric(metric, frame, "a", "b", by=by)
    column = pl.Series(metric, values, dtype=pl.Float64)
    return pl.DataFrame([column]) if by is None else pl.DataFrame([pl.Series(by, parts), column])


WEIGHT_CASES = [
    *(
        (metric, by, per_cluster)
        for metric in LABEL
        for by in (None, "part")
        for per_cluster in (False, True)
    ),
    (SFR, None, False),
    (SFR, "part", False),
]


@pytest.mark.parametrize(("metric", "by", "per_cluster"), WEIGHT_CASES)
def test_integer_weight_is_the_point_repeated(
    metric: str, by: str | None, per_cluster: bool
) -> None:
    frame = _frame(3, n=80, k=4, n_parts=2)
    options: dict[str, Any] = {"by": by}
    if per_cluster:
        options["per_cluster"] = True
    weighted = _call(metric, frame, weight="w", **options)
    repeated = _repeated(frame)
    assert_frame_close(weighted, _with_float_counts(_call(metric, repeated, **options)))
    truth = _reference(metric, repeated, by, per_cluster)
    assert_frame_close(weighted, _with_float_counts(truth.select(weighted.columns)))


def test_sfr_weights_weigh_the_computed_centroids() -> None:
    """Two points of cluster c, weights 3 and 1: the centroid is at 3/4 of the way."""
    frame = pl.DataFrame(
        {
            "cluster": ["c", "c", "d"],
            "group": ["a", "b", "b"],
            "x": [0.0, 4.0, 100.0],
            "w": [3.0, 1.0, 1.0],
        }
    )
    # the centroid of c is at x = 1: D = 1 for the point of a, 3 for c's point of b, 0 for d
    got = fa.fair.social_fairness_ratio(frame, a="a", b="b", features=["x"], weight="w")
    assert got.item() == pytest.approx(1.0 / ((3.0 + 0.0) / 2.0))


def test_fractional_weights_weigh_the_counts() -> None:
    frame = pl.DataFrame(
        {
            "cluster": [0, 0, 1, 1, 1],
            "group": ["a", "b", "a", "b", "b"],
            "w": [0.5, 1.5, 2.0, 0.25, 0.0],
        }
    )
    got = fa.fair.min_cluster_ratio(frame, a="a", b="b", weight="w", per_cluster=True)
    assert got.select(COUNTS).rows() == [(2.0, 0.5, 1.5), (2.25, 2.0, 0.25)]
    assert got["min_cluster_ratio"].to_list() == pytest.approx([1 / 3, 8.0])
    # weight 0 leaves the point out: the same as dropping its row
    assert_frame_close(
        got, fa.fair.min_cluster_ratio(frame.head(4), a="a", b="b", weight="w", per_cluster=True)
    )


# ---------------------------------------------------------------------------------------------
# Intervals against an independent numpy bootstrap


def _percentiles(values: np.ndarray, level: float) -> tuple[float, float]:
    tail = (1 - level) / 2
    low, high = np.quantile(values[np.isfinite(values)], [tail, 1 - tail])
    return float(low), float(high)


def _cells(frame: pl.DataFrame) -> np.ndarray:
    """One-hot (point, cluster × {a, b, other}) indicators, clusters in label order."""
    clusters = sorted(frame["cluster"].unique().to_list())
    cluster = np.array([clusters.index(c) for c in frame["cluster"]])
    group = np.select([frame["group"] == "a", frame["group"] == "b"], [0, 1], 2)
    onehot = np.zeros((frame.height, len(clusters) * 3))
    onehot[np.arange(frame.height), cluster * 3 + group] = 1.0
    return onehot


def _label_terms(metric: str, cells: np.ndarray) -> np.ndarray:
    """Per replicate and cluster, the metric's term; NaN where the cluster has no point.

    ``cells`` holds the counts per (replicate, cluster, group a/b/other).
    """
    n_a, n_b, n_c = cells[..., 0], cells[..., 1], cells.sum(axis=2)
    total, total_a, total_b = (
        n_c.sum(1, keepdims=True),
        n_a.sum(1, keepdims=True),
        n_b.sum(1, keepdims=True),
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        if metric == "cluster_balance":
            terms = np.minimum(n_a * total / (n_c * total_a), n_b * total / (n_c * total_b))
        elif metric == "cluster_distribution_tv":
            terms = 0.5 * np.abs(n_a / total_a - n_b / total_b)
        else:
            raise AssertionError(metric)
    return np.where(n_c > 0, terms, np.nan)


def _bootstrap_counts(n: int, n_boot: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    return rng.multinomial(n, np.full(n, 1 / n), size=n_boot).astype(float)


def _assert_within(result: pl.DataFrame, column: str, low: float, high: float) -> None:
    # Monte-Carlo error of a 5% quantile of 2,000 draws: about 0.05 of the interval's width
    tolerance = 0.15 * (high - low)
    assert result[f"{column}_lo"].item() == pytest.approx(low, abs=tolerance)
    assert result[f"{column}_hi"].item() == pytest.approx(high, abs=tolerance)


@pytest.mark.parametrize("metric", ["cluster_balance", "cluster_distribution_tv"])
def test_interval_matches_a_numpy_bootstrap(metric: str) -> None:
    frame = _frame(11, n=400, k=4)
    level, n_boot = 0.9, 2000
    result = _call(metric, frame, point="id", ci=level, n_boot=n_boot, seed=4)
    counts = _bootstrap_counts(frame.height, n_boot)
    cells = (counts @ _cells(frame)).reshape(n_boot, -1, 3)
    terms = _label_terms(metric, cells)
    values = np.nanmin(terms, axis=1) if metric == "cluster_balance" else np.nansum(terms, axis=1)
    _assert_within(result, metric, *_percentiles(values, level))
    assert result["points"].item() == 400
    assert result["undefined_replicates"].item() == 0


def test_per_cluster_interval_matches_a_numpy_bootstrap() -> None:
    frame = _frame(12, n=400, k=3)
    level, n_boot = 0.9, 2000
    result = fa.fair.cluster_balance(
        frame, a="a", b="b", point="id", per_cluster=True, ci=level, n_boot=n_boot, seed=9
    )
    counts = _bootstrap_counts(frame.height, n_boot)
    terms = _label_terms("cluster_balance", (counts @ _cells(frame)).reshape(n_boot, -1, 3))
    for j in range(3):
        _assert_within(result[j], "cluster_balance", *_percentiles(terms[:, j], level))
    assert result.columns[-5:] == [
        "cluster_balance",
        "cluster_balance_lo",
        "cluster_balance_hi",
        "points",
        "undefined_replicates",
    ]


def test_sfr_interval_holds_the_centroids_fixed() -> None:
    frame = _frame(13, n=400, k=4)
    level, n_boot = 0.9, 2000
    result = _call(SFR, frame, point="id", ci=level, n_boot=n_boot, seed=2)
    # the full data's centroids, never re-estimated
    x = frame.select("x0", "x1", "x2").to_numpy()
    labels = frame["cluster"].to_numpy()
    centres = np.array([x[labels == c].mean(axis=0) for c in np.unique(labels)])
    distance = np.sqrt(((x[:, None, :] - centres[None, :, :]) ** 2).sum(-1)).min(axis=1)
    in_a = (frame["group"] == "a").to_numpy().astype(float)
    in_b = (frame["group"] == "b").to_numpy().astype(float)
    counts = _bootstrap_counts(frame.height, n_boot)
    mean_a = counts @ (distance * in_a) / (counts @ in_a)
    mean_b = counts @ (distance * in_b) / (counts @ in_b)
    _assert_within(result, SFR, *_percentiles(mean_a / mean_b, level))
    assert result["points"].item() == 400


@pytest.mark.slow
def test_ninety_percent_intervals_cover_the_population_value_ninety_percent_of_the_time() -> None:
    """300 samples of 600 points from a model with a known population TV distance.

    A point is of group a with probability 0.3; its cluster is drawn from P_a or P_b, so the
    population TV is ½ Σ_c |P_a(c) − P_b(c)| = 0.6 (every cluster's difference far from 0,
    where the absolute value would bias the estimate).
    """
    rng = np.random.default_rng(2026)
    samples, size = 300, 600
    p_a, p_b = np.array([0.6, 0.25, 0.1, 0.05]), np.array([0.1, 0.15, 0.35, 0.4])
    truth = 0.5 * np.abs(p_a - p_b).sum()
    is_a = rng.random(samples * size) < 0.3
    cluster = np.where(
        is_a, rng.choice(4, samples * size, p=p_a), rng.choice(4, samples * size, p=p_b)
    )
    frame = pl.DataFrame(
        {
            "sample": np.repeat(np.arange(samples), size),
            "id": np.tile(np.arange(size), samples),
            "cluster": cluster,
            "group": np.where(is_a, "a", "b"),
        }
    )
    result = fa.fair.cluster_distribution_tv(
        frame, a="a", b="b", point="id", by="sample", ci=0.9, n_boot=300, seed=1
    )
    covered = (
        (result["cluster_distribution_tv_lo"] <= truth)
        & (result["cluster_distribution_tv_hi"] >= truth)
    ).mean()
    # the binomial standard error of the coverage over 300 samples is 0.017
    assert 0.84 <= covered <= 0.95, covered


# ---------------------------------------------------------------------------------------------
# Reproducible everywhere


ENGINE_CASES: list[tuple[str, dict[str, Any]]] = [
    *((metric, {"by": "part"}) for metric in LABEL),
    ("cluster_distribution_kl", {"per_cluster": True}),
    (SFR, {"by": "part"}),
    (SFR, {"centroids": "given"}),
]


_ENGINE_IDS = {f"{m}-{'-'.join(o)}": (m, o) for m, o in ENGINE_CASES}


@functools.cache
def _same_seed_case(case: str) -> tuple[pl.DataFrame, dict[str, Any], pl.DataFrame]:
    """The weighted frame, ``case``'s keywords with an interval and its Polars result."""
    metric, options = _ENGINE_IDS[case]
    frame = _frame(5, n=60, k=3, n_parts=2)
    if options.get("centroids") == "given":
        options = {"centroids": frame.group_by("cluster").agg(pl.col("x0", "x1", "x2").median())}
    kwargs = {"point": "id", "weight": "w", "ci": 0.8, "n_boot": 200, "seed": 7, **options}
    return frame, kwargs, _call(metric, frame, **kwargs)


@pytest.mark.spark(cases=["cluster_distribution_kl-per_cluster"])
@pytest.mark.parametrize("case", list(_ENGINE_IDS))
def test_same_seed_same_interval_on_every_engine(constructor: Constructor, case: str) -> None:
    frame, kwargs, polars = _same_seed_case(case)
    native = _call(_ENGINE_IDS[case][0], constructor(frame), **kwargs)
    assert_frame_close(to_polars(native), polars)


@pytest.mark.parametrize("case", list(_ENGINE_IDS))
def test_same_seed_same_interval_in_any_row_order(case: str) -> None:
    frame, kwargs, polars = _same_seed_case(case)
    metric, options = _ENGINE_IDS[case]
    assert polars[f"{metric}_lo"].null_count() == 0
    # the points of weight 0 are left out
    positive = frame.filter(pl.col("w") > 0)
    if "by" in options:
        sizes = dict(positive.group_by("part").len().iter_rows())
        assert polars["points"].to_list() == [sizes[part] for part in polars["part"]]
    else:
        assert set(polars["points"]) == {positive.height}
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=1)
    assert_frame_close(_call(metric, shuffled, **kwargs), polars)


def test_lazy_call_stays_lazy_and_streams() -> None:
    frame = _frame(3, n=60, k=3)
    lazy = fa.fair.cluster_balance(frame.lazy(), a="a", b="b", point="id", ci=0.9, n_boot=100)
    assert isinstance(lazy, pl.LazyFrame)
    eager = fa.fair.cluster_balance(frame, a="a", b="b", point="id", ci=0.9, n_boot=100)
    assert_frame_close(lazy.collect(engine="streaming"), eager)


def test_seeds_give_different_intervals() -> None:
    frame = _frame(3, n=100, k=3)
    first = _call(SFR, frame, point="id", ci=0.9, n_boot=200, seed=1)
    second = _call(SFR, frame, point="id", ci=0.9, n_boot=200, seed=2)
    # the point estimate does not depend on the seed (up to the last bit: Polars' parallel
    # grouped sums may add in another order from one call to the next)
    assert first[SFR].item() == pytest.approx(second[SFR].item(), rel=1e-14)
    assert first[f"{SFR}_lo"].item() != pytest.approx(second[f"{SFR}_lo"].item(), rel=1e-6)


def test_point_ids_may_repeat_across_partitions() -> None:
    frame = _frame(3, n=60, k=3, n_parts=2)
    per_part = frame.with_columns(pl.int_range(pl.len()).over("part").alias("id"))
    got = fa.fair.cluster_balance(per_part, a="a", b="b", by="part", point="id", ci=0.9)
    assert got["points"].to_list() == frame.group_by("part").len().sort("part")["len"].to_list()


def test_without_ci_point_changes_nothing() -> None:
    frame = _frame(3, n=60, k=3)
    for metric in (*LABEL, SFR):
        assert_frame_close(_call(metric, frame, point="id"), _call(metric, frame))


@pytest.mark.spark(cases=["per_cluster-True"])
@pytest.mark.parametrize("per_cluster", [False, True], ids=["whole", "per_cluster-True"])
def test_the_four_label_metrics_in_one_result_are_each_function(
    constructor: Constructor, *, per_cluster: bool
) -> None:
    """``label_metrics`` (the clustering report's one plan) gives, column for column, what
    each label metric's own call gives: values, intervals from the same draws, points and
    undefined replicates; weighted, by partition, with a partition whose points weigh 0."""
    frame = _frame(5, n=60, k=3, n_parts=3)
    frame = frame.with_columns(pl.when(pl.col("part") == 2).then(0).otherwise("w").alias("w"))
    kwargs = {"by": "part", "point": "id", "weight": "w", "ci": 0.8, "n_boot": 50, "seed": 7}
    kwargs["per_cluster"] = per_cluster
    together = to_polars(label_metrics(constructor(frame), a="a", b="b", **kwargs))
    # per cluster, the counts and shares first
    first = ["part", "cluster", *COUNTS, "share_a", "share_b", "rho_a", "rho_b"]
    for metric in LABEL:
        own = _call(metric, frame, **kwargs)
        shown = [*(first if per_cluster else ["part"]), metric, f"{metric}_lo", f"{metric}_hi"]
        shown.append("points")
        undefined = pl.col(f"{metric}_undefined_replicates").alias("undefined_replicates")
        assert_frame_close(
            together.select(*shown, undefined), own.select(*shown, "undefined_replicates")
        )
    assert [c for c in together.columns if c in LABEL] == list(LABEL)


# ---------------------------------------------------------------------------------------------
# Few units and undefined replicates


def test_a_single_point_gives_a_null_interval() -> None:
    frame = pl.DataFrame(
        {"part": [0, 1, 1], "id": [0, 0, 1], "cluster": [0, 0, 1], "group": ["a", "a", "b"]}
    )
    got = fa.fair.cluster_distribution_tv(frame, a="a", b="b", by="part", point="id", ci=0.9)
    assert got["points"].to_list() == [1, 2]
    assert got["cluster_distribution_tv_lo"][0] is None
    assert got["cluster_distribution_tv_hi"][0] is None


def test_replicates_without_a_group_or_a_cluster_are_counted_as_undefined() -> None:
    """Points 0-3 (unit indexes 0-3): a, a, b, a in clusters x, y, x, y.

    TV is undefined where no point of b (point 2) or none of a is drawn; the detail of
    cluster y is undefined there too and where neither point 1 nor point 3 is drawn.
    """
    frame = pl.DataFrame(
        {"id": [0, 1, 2, 3], "cluster": ["x", "y", "x", "y"], "group": ["a", "a", "b", "a"]}
    )
    n_boot, seed = 400, 5
    options: dict[str, Any] = {"a": "a", "b": "b", "point": "id", "ci": 0.9}
    options.update(n_boot=n_boot, seed=seed)
    pairs = {"unit": [u for u in range(4) for _ in range(n_boot)], "rep": list(range(n_boot)) * 4}
    units = nw.from_native(pl.LazyFrame(pairs))
    draws = with_poisson_counts(units, "unit", "rep", seed, "k").collect().to_native()
    k = draws["k"].to_numpy().reshape(4, n_boot)
    no_group = (k[2] == 0) | (k[[0, 1, 3]].sum(axis=0) == 0)
    no_y = (k[1] + k[3]) == 0
    assert 0.3 * n_boot < no_group.sum() < 0.5 * n_boot  # about e^-1 + e^-3
    assert no_y.sum() > 0
    combined = fa.fair.cluster_distribution_tv(frame, **options)
    assert combined["undefined_replicates"].item() == no_group.sum()
    detail = fa.fair.cluster_distribution_tv(frame, per_cluster=True, **options)
    assert detail["undefined_replicates"].to_list() == [no_group.sum(), (no_group | no_y).sum()]


# ---------------------------------------------------------------------------------------------
# Bad input


BAD = _frame(5, n=40, k=3).with_columns(pl.lit("x").alias("note"))


def _negative(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(pl.when(pl.col("id") < 3).then(-1).otherwise(pl.col("w")).alias("w"))


def _holes(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(
        pl.when(pl.col("id") < 2).then(None).otherwise(pl.col("w")).alias("w")
    )


def _infinite(frame: pl.DataFrame) -> pl.DataFrame:
    weight = pl.when(pl.col("id") < 2).then(float("inf")).otherwise(pl.col("w"))
    return frame.with_columns(weight.alias("w"))


def _twice(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(
        pl.when(pl.col("id") == 5).then(4).otherwise(pl.col("id")).alias("id")
    )


@pytest.mark.spark(cases=["point-twice-cluster_balance"])
@pytest.mark.parametrize("metric", [*LABEL, SFR])
@pytest.mark.parametrize(
    "case",  # (how the frame is spoilt, the options, the error, its message)
    [
        (
            None,
            {"ci": 0.95},
            InvalidParameterError,
            r"ci=0.95: intervals resample points; give point= the column of unique point ids",
        ),
        (None, {"point": "id", "ci": 1.0}, InvalidParameterError, r"ci=1.0: expected"),
        (
            None,
            {"point": "id", "ci": 0.9, "n_boot": 1},
            InvalidParameterError,
            r"n_boot=1: expected an integer in \[2, 100000\]",
        ),
        (None, {"point": "id", "seed": -1}, InvalidParameterError, r"seed=-1: expected"),
        (None, {"weight": "missing"}, ColumnNotFoundError, r"weight='missing'"),
        (None, {"weight": "note"}, InvalidDtypeError, r"weight='note': expected"),
        (None, {"point": "nope"}, ColumnNotFoundError, r"point='nope'"),
        (
            _negative,
            {"weight": "w"},
            InvalidValueError,
            r"weight='w': expected values in \[0, inf\], found 3 outside it",
        ),
        (_holes, {"weight": "w"}, InvalidValueError, r"weight='w': column 'w' holds 2 null"),
        (_infinite, {"weight": "w"}, InvalidValueError, r"weight='w': expected finite numbers"),
        (
            _twice,
            {"point": "id", "ci": 0.9, "n_boot": 10},
            InvalidValueError,
            r"point='id': 1 duplicated combination\(s\) of \(id\), e.g. id=4; each point needs "
            r"its own id",
        ),
    ],
    ids=[
        "ci-without-point",
        "ci-1",
        "n_boot-1",
        "seed-negative",
        "weight-missing",
        "weight-text",
        "point-missing",
        "weight-negative",
        "weight-null",
        "weight-infinite",
        "point-twice",
    ],
)
def test_bad_uncertainty_input_is_refused(
    constructor: Constructor, metric: str, case: tuple[Any, dict[str, Any], type, str]
) -> None:
    change, kwargs, error, match = case
    frame = BAD if change is None else change(BAD)
    with pytest.raises(error, match=match):
        to_polars(_call(metric, constructor(frame), **kwargs))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"ci": 0.9}, r"ci=0.9: silhouette_difference has no bootstrap interval"),
        ({"weight": "w"}, r"weight='w': silhouette_difference takes no point weights"),
    ],
)
def test_silhouette_refuses_weights_and_intervals(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        fa.fair.silhouette_difference(BAD, a="a", b="b", features=["x0", "x1", "x2"], **kwargs)


def test_dask_runs_weights_and_refuses_intervals() -> None:
    dd = pytest.importorskip("dask.dataframe")
    frame = dd.from_pandas(BAD.to_pandas(), npartitions=2)
    got = fa.fair.cluster_balance(frame, a="a", b="b", weight="w", per_cluster=True).compute()
    expected = fa.fair.cluster_balance(BAD, a="a", b="b", weight="w", per_cluster=True)
    assert_frame_close(to_polars(got.reset_index(drop=True)), expected)
    with pytest.raises(
        UnsupportedBackendError, match=r"an interval \(ci=\) is not supported on Dask"
    ):
        fa.fair.cluster_balance(frame, a="a", b="b", point="id", ci=0.9)
