"""Unit weights and bootstrap intervals of the ranking metrics (SPEC §5).

Weights are checked by their defining identity (an integer weight k is the ranking repeated k
times), against frameaudit on the repeated data and against the reference implementation.
Intervals are checked against a straightforward numpy bootstrap (multinomial resampling of the
rankings, an independent random stream), by their coverage of a known population value, and
for equality across engines and row orders.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import polars as pl
import pytest

import frameaudit as fa
from frameaudit._engine.resample import with_poisson_counts
from frameaudit._registry import entry
from tests.calls import arguments, entries, names
from tests.conftest import Constructor, assert_frame_close, to_polars
from tests.reference.ranking import expected, explicit_size, random_rankings

EXTRA: dict[str, dict[str, Any]] = {
    m.name: arguments(m, {"relevant": "binary"}) for m in entries("ranking", "group", "single")
}
GROUPED = names("ranking", "group")
WEIGHTS = {0: 0, 1: 1, 2: 2, 3: 3, 4: 1, 5: 2}
OPTIONS: dict[str, dict[str, Any]] = {
    "rows": {},
    "item": {"item": "item"},
    "mapping": {"item": "item", "groups": "mapping"},
    "by": {"item": "item", "by": "part"},
}


def _repeated(frame: pl.DataFrame) -> pl.DataFrame:
    """Each query repeated WEIGHTS[query] times, every copy a ranking of its own."""
    copies = [
        frame.filter(pl.col("query") == query).with_columns(
            pl.lit(query * 10 + copy).alias("query")
        )
        for query, times in WEIGHTS.items()
        for copy in range(times)
    ]
    return pl.concat(copies)


def _call(metric: str, frame: Any, **kwargs: Any) -> Any:
    if not entry(metric).grouped:
        kwargs.pop("group", None)
    arguments = explicit_size(metric, {"ranking": "query", **EXTRA[metric], **kwargs})
    return getattr(fa.fair, metric)(frame, **arguments)


# the group metrics combined and per group; the single numbers; those without the items'
# groups (IAA, nDCG) take no groups=
WEIGHT_CASES = [
    (metric, combo, option)
    for metric in EXTRA
    for combo in (["MinMaxRatio", None] if metric in GROUPED else ["MinMaxRatio"])
    for option in OPTIONS
    if entry(metric).grouped or option != "mapping"
]


@pytest.mark.parametrize(("metric", "combo", "option"), WEIGHT_CASES)
def test_integer_weight_is_the_ranking_repeated(
    metric: str, combo: str | None, option: str
) -> None:
    frame, mapping = random_rankings(5, n_items=10, n_rankings=6, length=7, n_parts=2)
    options = {k: mapping if v == "mapping" else v for k, v in OPTIONS[option].items()}
    if metric in GROUPED:
        options["combo"] = combo
    weighted = frame.with_columns(pl.col("query").replace_strict(WEIGHTS).alias("w"))
    result = _call(metric, weighted, weight="w", **options)
    repeated = _repeated(frame)
    reference_options = {k: v for k, v in options.items() if k != "combo"}
    truth = expected(
        repeated, metric, ranking="query", **EXTRA[metric], **reference_options, combo=combo
    )
    if "n" in truth.columns:
        # the weighted group size is a Float64 sum of weights
        truth = truth.with_columns(pl.col("n").cast(pl.Float64))
    assert_frame_close(result, truth)
    unweighted = to_polars(_call(metric, repeated, **options))
    assert_frame_close(result, unweighted.with_columns(pl.col("^n$").cast(pl.Float64)))


def test_weight_zero_leaves_the_ranking_out_of_the_group_sizes() -> None:
    frame = pl.DataFrame(
        {
            "query": [1, 1, 2, 2],
            "rank": [1, 2, 1, 2],
            "item": ["x", "y", "z", "x"],
            "group": ["a", "b", "a", "a"],
            "w": [1.0, 1.0, 0.0, 0.0],
        }
    )
    # only query 1 counts: a holds item x at rank 1, b item y at rank 2
    result = fa.fair.exp(frame, ranking="query", item="item", weight="w", combo=None)
    assert result.rows() == [("a", 1.0, 1.0), ("b", pytest.approx(1 / np.log2(3)), 1.0)]


def test_fractional_weights_weigh_the_sums() -> None:
    frame = pl.DataFrame(
        {"query": [1, 1, 2], "rank": [1, 2, 1], "group": ["a", "b", "a"], "w": [0.5, 0.5, 2.0]}
    )
    # V_a = (0.5·1 + 2·1) / (0.5 + 2) = 1; V_b = 0.5·(1/log2 3) / 0.5
    result = fa.fair.exp(frame, ranking="query", size="rows", weight="w", combo=None)
    assert result["exp"].to_list() == pytest.approx([1.0, 1 / np.log2(3)])
    assert result["n"].to_list() == [2.5, 0.5]


# ---------------------------------------------------------------------------------------------
# Intervals against an independent numpy bootstrap


def _numpy_percentiles(values: np.ndarray, level: float) -> tuple[float, float]:
    tail = (1 - level) / 2
    defined = values[np.isfinite(values)]
    low, high = np.quantile(defined, [tail, 1 - tail])
    return float(low), float(high)


# the group metrics whose per-ranking numerator of V_g this module writes out
_NUMERATORS = {
    "exp": 1.0 / (pl.col("rank") + 1).log(2),
    "expu": 1.0 / (pl.col("rank") + 1).log(2),
}


def _per_ranking_sums(frame: pl.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Per ranking and group (g0, g1, g2): the numerator and the denominator of V_g."""
    numerator = _NUMERATORS[metric]
    denominator = pl.len().cast(pl.Float64) if metric == "exp" else pl.col("relevance").sum()
    sums = (
        frame.group_by("query", "group")
        .agg(numerator.sum().alias("num"), denominator.alias("den"))
        .pivot(on="group", index="query", values=["num", "den"])
        .sort("query")
        .fill_null(0.0)
    )
    groups = ["g0", "g1", "g2"]
    return (
        sums.select(f"num_{g}" for g in groups).to_numpy(),
        sums.select(f"den_{g}" for g in groups).to_numpy(),
    )


@pytest.mark.parametrize("metric", [*_NUMERATORS, "ndkl"])
def test_interval_matches_a_numpy_bootstrap(metric: str) -> None:
    frame, _ = random_rankings(11, n_items=20, n_rankings=150, length=10)
    level, n_boot = 0.9, 2000
    result = _call(metric, frame, ci=level, n_boot=n_boot, seed=4)
    rng = np.random.default_rng(0)
    counts = rng.multinomial(150, np.full(150, 1 / 150), size=n_boot)  # (replicates, rankings)
    if metric == "ndkl":
        per_ranking = fa.fair.ndkl(frame, ranking="query", by="query").sort("query")["ndkl"]
        values = counts @ per_ranking.to_numpy() / counts.sum(axis=1)
    else:
        numerator, denominator = _per_ranking_sums(frame, metric)
        per_group = (counts @ numerator) / (counts @ denominator)
        values = per_group.min(axis=1) / per_group.max(axis=1)
    low, high = _numpy_percentiles(values, level)
    # Monte-Carlo error of a 5% quantile of 2,000 draws: about 0.05 of the interval's width
    tolerance = 0.15 * (high - low)
    assert result[f"{metric}_lo"].item() == pytest.approx(low, abs=tolerance)
    assert result[f"{metric}_hi"].item() == pytest.approx(high, abs=tolerance)
    assert result["rankings"].item() == 150
    assert result["undefined_replicates"].item() == 0


@pytest.mark.slow
def test_ninety_percent_intervals_cover_the_population_value_ninety_percent_of_the_time() -> None:
    """400 samples of 80 rankings from a model with a known population EXP MinMaxRatio.

    Position k (1..10) holds an item of group a with probability p_k, else of group b. The
    population V_g = E[Σ_{x∈g} 1/log2(k+1)] / E[n_g] = Σ_k d_k p_k / Σ_k p_k (b: 1 − p_k).
    """
    rng = np.random.default_rng(2026)
    samples, rankings, length = 400, 80, 10
    k = np.arange(1, length + 1)
    p = 0.65 - 0.04 * k  # group a favoured at the top
    d = 1.0 / np.log2(k + 1)
    v_a, v_b = (d * p).sum() / p.sum(), (d * (1 - p)).sum() / (1 - p).sum()
    truth = min(v_a, v_b) / max(v_a, v_b)
    is_a = rng.random((samples, rankings, length)) < p
    frame = pl.DataFrame(
        {
            "sample": np.repeat(np.arange(samples), rankings * length),
            "query": np.tile(np.repeat(np.arange(rankings), length), samples),
            "rank": np.tile(k, samples * rankings),
            "group": np.where(is_a.ravel(), "a", "b"),
        }
    )
    result = fa.fair.exp(
        frame, ranking="query", size="rows", by="sample", ci=0.9, n_boot=500, seed=1
    )
    covered = ((result["exp_lo"] <= truth) & (result["exp_hi"] >= truth)).mean()
    # the binomial standard error of the coverage over 400 samples is 0.015
    assert 0.85 <= covered <= 0.95, covered


# ---------------------------------------------------------------------------------------------
# Reproducible everywhere


# every metric, the options that change the unit and the estimate taken in turn
_ENGINE_OPTIONS: list[dict[str, Any]] = [
    {"combo": None},
    {"item": "item", "by": "part"},
    {"groups": "mapping", "item": "item"},
    {"by": "part"},
    {"item": "item"},
]


_ENGINE_CASES = {
    m: _ENGINE_OPTIONS[i % len(_ENGINE_OPTIONS)]
    for i, m in enumerate(names("ranking", "group", "single"))
}


@functools.cache
def _same_seed_case(metric: str) -> tuple[pl.DataFrame, dict[str, Any], pl.DataFrame]:
    """``metric``'s weighted case with an interval: the frame, the keywords, the Polars result."""
    frame, mapping = random_rankings(3, n_items=12, n_rankings=9, length=6, n_parts=2)
    frame = frame.with_columns((pl.col("query") % 3 + 1).alias("w"))
    taken = inspect.signature(getattr(fa.fair, metric)).parameters  # IAA has no groups=
    options = {
        k: mapping if v == "mapping" else v for k, v in _ENGINE_CASES[metric].items() if k in taken
    }
    kwargs = {"weight": "w", "ci": 0.8, "n_boot": 200, "seed": 7, **options}
    return frame, kwargs, _call(metric, frame, **kwargs)


@pytest.mark.parametrize("metric", list(_ENGINE_CASES))
def test_same_seed_same_interval_on_every_engine(constructor: Constructor, metric: str) -> None:
    frame, kwargs, polars = _same_seed_case(metric)
    assert_frame_close(to_polars(_call(metric, constructor(frame), **kwargs)), polars)


@pytest.mark.parametrize("metric", list(_ENGINE_CASES))
def test_same_seed_same_interval_in_any_row_order(metric: str) -> None:
    frame, kwargs, polars = _same_seed_case(metric)
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=1)
    assert_frame_close(_call(metric, shuffled, **kwargs), polars)


def test_lazy_call_stays_lazy_and_streams() -> None:
    frame, _ = random_rankings(3, n_items=12, n_rankings=9, length=6)
    lazy = fa.fair.exp(frame.lazy(), ranking="query", size="rows", ci=0.9, n_boot=100)
    assert isinstance(lazy, pl.LazyFrame)
    eager = fa.fair.exp(frame, ranking="query", size="rows", ci=0.9, n_boot=100)
    assert_frame_close(lazy.collect(engine="streaming"), eager)


def test_seeds_give_different_intervals() -> None:
    frame, _ = random_rankings(3, n_items=12, n_rankings=30, length=6)
    first = fa.fair.exp(frame, ranking="query", size="rows", ci=0.9, n_boot=200, seed=1)
    second = fa.fair.exp(frame, ranking="query", size="rows", ci=0.9, n_boot=200, seed=2)
    # the point estimate does not depend on the seed (up to the last bit: Polars' parallel
    # grouped sums may add in another order from one call to the next)
    assert first["exp"].item() == pytest.approx(second["exp"].item(), rel=1e-14)
    assert first["exp_lo"].item() != pytest.approx(second["exp_lo"].item(), rel=1e-6)


# ---------------------------------------------------------------------------------------------
# Few units and undefined replicates


def test_a_single_ranking_gives_a_null_interval() -> None:
    frame, _ = random_rankings(3, n_items=12, n_rankings=4, length=6, n_parts=4)
    result = fa.fair.exp(frame, ranking="query", size="rows", by="part", ci=0.9, n_boot=50)
    assert result["rankings"].to_list() == [1, 1, 1, 1]
    assert result["exp_lo"].null_count() == 4
    assert result["exp_hi"].null_count() == 4
    assert result["exp"].null_count() == 0


def test_a_group_missing_from_a_replicate_is_counted_as_undefined() -> None:
    """Group c is only in query 0 (unit index 0): undefined where query 0 is drawn 0 times.

    Groups a and b are in every query: undefined only where no query is drawn at all.
    """
    frame = pl.DataFrame(
        {
            "query": [0, 0, 0, 1, 1, 2, 2],
            "rank": [1, 2, 3, 1, 2, 1, 2],
            "group": ["a", "b", "c", "a", "b", "b", "a"],
        }
    )
    n_boot, seed = 300, 5
    result = fa.fair.exp(
        frame, ranking="query", size="rows", combo=None, ci=0.9, n_boot=n_boot, seed=seed
    )
    pairs = {"unit": [u for u in range(3) for _ in range(n_boot)], "rep": list(range(n_boot)) * 3}
    units = nw.from_native(pl.LazyFrame(pairs))
    draws = with_poisson_counts(units, "unit", "rep", seed, "k").collect().to_native()
    counts = draws["k"].to_numpy().reshape(3, n_boot)
    without_c = int((counts[0] == 0).sum())
    empty = int((counts.sum(axis=0) == 0).sum())
    assert 0.3 * n_boot < without_c < 0.45 * n_boot  # about e^-1 of the replicates
    assert 0 < empty < 0.1 * n_boot  # about e^-3
    undefined = dict(zip(result["group"], result["undefined_replicates"], strict=True))
    assert undefined == {"a": empty, "b": empty, "c": without_c}


# ---------------------------------------------------------------------------------------------
# Bad input


FRAME = pl.DataFrame(
    {
        "query": [1, 1, 2, 2],
        "rank": [1, 2, 1, 2],
        "group": ["a", "b", "a", "b"],
        "w": [1.0, 1.0, 2.0, 2.0],
        "label": ["x"] * 4,
    }
)


@pytest.mark.spark(cases=["expected one value within"])
@pytest.mark.parametrize(
    ("frame", "kwargs", "error", "match"),
    [
        (FRAME, {"ci": 0.95}, fa.InvalidParameterError, r"ci=0.95: intervals resample rankings"),
        (FRAME, {"ranking": "query", "ci": 1.0}, fa.InvalidParameterError, r"ci=1.0: expected"),
        (FRAME, {"ranking": "query", "ci": 0}, fa.InvalidParameterError, r"ci=0: expected"),
        (
            FRAME,
            {"ranking": "query", "ci": 0.9, "n_boot": 1},
            fa.InvalidParameterError,
            r"n_boot=1: expected an integer in \[2, 100000\]",
        ),
        (
            FRAME,
            {"ranking": "query", "ci": 0.9, "n_boot": 10**9},
            fa.InvalidParameterError,
            r"n_boot=1000000000: expected an integer in \[2, 100000\]",
        ),
        (
            FRAME,
            {"ranking": "query", "ci": 0.9, "n_boot": 10.5},
            fa.InvalidParameterError,
            r"n_boot=10.5",
        ),
        (FRAME, {"ranking": "query", "seed": -1}, fa.InvalidParameterError, r"seed=-1: expected"),
        (FRAME, {"ranking": "query", "seed": 0.5}, fa.InvalidParameterError, r"seed=0.5"),
        (FRAME, {"weight": "missing"}, fa.ColumnNotFoundError, r"weight='missing'"),
        (FRAME, {"weight": "label"}, fa.InvalidDtypeError, r"weight='label': expected"),
        (
            FRAME.with_columns(w=pl.Series([1.0, 1.0, -2.0, -2.0])),
            {"ranking": "query", "weight": "w"},
            fa.InvalidValueError,
            r"weight='w': expected values in \[0, inf\], found 2 outside it",
        ),
        (
            FRAME.with_columns(w=pl.Series([1.0, 1.0, None, None])),
            {"ranking": "query", "weight": "w"},
            fa.InvalidValueError,
            r"weight='w': column 'w' holds 2 null",
        ),
        (
            FRAME.with_columns(w=pl.Series([1.0, 1.0, float("inf"), float("inf")])),
            {"ranking": "query", "weight": "w"},
            fa.InvalidValueError,
            r"weight='w': expected finite numbers",
        ),
        (
            FRAME.with_columns(w=pl.Series([1.0, 2.0, 1.0, 1.0])),
            {"ranking": "query", "weight": "w"},
            fa.InvalidValueError,
            r"weight='w': expected one value within each ranking, found 1 ranking\(s\) with "
            r"several \(e.g. query=1\)",
        ),
    ],
)
def test_bad_uncertainty_input_is_refused(
    constructor: Constructor, frame: pl.DataFrame, kwargs: dict[str, Any], error: type, match: str
) -> None:
    with pytest.raises(error, match=match):
        to_polars(fa.fair.exp(constructor(frame), size="rows", **kwargs))
