"""Sample weights and bootstrap intervals of the reproducibility metrics (SPEC §5).

The resampling unit is the sample; the runs stay fixed. Weights are checked by their defining
identity (an integer weight k is the sample repeated k times, with fresh sample ids), against
frameaudit on the repeated data and against the numpy reference (tests/reference/repro.py) on
the repeated data, and on a case worked out by hand. Intervals are checked against a
straightforward numpy bootstrap (multinomial resampling of the samples, an independent random
stream, the reference metrics on each resample), for equality across engines and row orders,
and for what they do with few samples, undefined replicates and NaN.
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
from docs_examples import printed_and_shown
from reference.repro import (
    METRICS,
    Part,
    expected_leave_one_out,
    expected_long_summary,
    expected_pairwise,
    expected_summary,
    expected_total,
    leave_one_out,
    pair_metrics,
    random_runs,
    residual_pairs,
    summarize,
    total_consistency,
)

import frameaudit as fa
from frameaudit._engine.resample import with_poisson_counts
from tests.calls import arguments, names

Call = Callable[..., Any]

# ---------------------------------------------------------------------------------------------
# Integer weights: the sample repeated k times


def _weighted(seed: int, parts: int = 2, **options: Any) -> tuple[pl.DataFrame, list[Part]]:
    """Random runs with a weight ``w`` in 0..3 per sample (the same in every run)."""
    frame, wide = random_runs(seed, k=4, n=14, parts=parts, **options)
    rng = np.random.default_rng(seed + 100)
    weights = rng.integers(0, 4, frame.height)
    weights[0] = 2  # no part is left out entirely
    keys = ["part", "sample"] if parts > 1 else ["sample"]
    table = frame.select(keys).unique(maintain_order=True)
    table = table.with_columns(pl.Series("w", weights[: table.height]))
    return frame.join(table, on=keys), wide


def _repeated_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """Every row of a sample repeated w times, copy c under the fresh sample id 10·sample + c."""
    copies = frame.filter(pl.col("w") > 0).with_columns(pl.int_ranges(pl.col("w")).alias("copy"))
    return (
        copies.explode("copy")
        .with_columns((pl.col("sample") * 10 + pl.col("copy")).alias("sample"))
        .drop("copy", "w")
    )


def _repeated_parts(frame: pl.DataFrame, parts: list[Part]) -> list[Part]:
    """The same repetition in the reference's wide form (columns repeated, runs unchanged)."""
    out = []
    for part in parts:
        rows = frame.filter(pl.col("part") == part.key) if "part" in frame.columns else frame
        weight = dict(zip(rows["sample"], rows["w"], strict=False))
        index = np.repeat(np.arange(part.samples.size), [weight[s] for s in part.samples])
        out.append(
            Part(part.key, part.runs, part.samples[index], part.target[index],
                 part.predictions[:, index])
        )  # fmt: skip
    return out


# (id, call, the reference's expected frame on the given parts)
CLASSIFICATION: list[tuple[str, Call, Callable[[list[Part]], pl.DataFrame]]] = [
    *(
        (
            metric,
            lambda f, m=metric, **kw: getattr(fa.repro, m)(f, by="part", **kw),
            lambda parts, m=metric: expected_summary(parts, m),
        )
        for metric in METRICS
    ),
    (
        "ec_local-empty-1-pairwise",
        lambda f, **kw: fa.repro.ec_local(f, by="part", empty_union=1, pairwise=True, **kw),
        lambda parts: expected_pairwise(parts, ("ec_local",), 1),
    ),
    ("summary", lambda f, **kw: fa.repro.summary(f, by="part", **kw), expected_long_summary),
    (
        "summary-pairwise",
        lambda f, **kw: fa.repro.summary(f, by="part", pairwise=True, **kw),
        expected_pairwise,
    ),
    ("total", lambda f, **kw: fa.repro.total_consistency(f, by="part", **kw), expected_total),
    (
        "leave-one-out",
        lambda f, **kw: fa.repro.leave_one_out(f, by="part", **kw),
        expected_leave_one_out,
    ),
]
IDS = [case[0] for case in CLASSIFICATION]


@pytest.mark.parametrize(("call", "expected"), [c[1:] for c in CLASSIFICATION], ids=IDS)
@pytest.mark.parametrize("labels", ["int", "str"])
def test_integer_weight_is_the_sample_repeated(
    call: Call, expected: Callable[[list[Part]], pl.DataFrame], labels: str
) -> None:
    frame, parts = _weighted(5, labels=labels)
    result = call(frame, weight="w")
    repeated = _repeated_frame(frame)
    assert_frame_close(result, expected(_repeated_parts(frame, parts)))
    assert_frame_close(result, call(repeated))


@pytest.mark.parametrize("method", ["ratio", "ratio-diff-signed"])
def test_integer_weight_is_the_sample_repeated_for_residuals(method: str) -> None:
    rng = np.random.default_rng(3)
    k, n = 3, 10
    target = rng.normal(size=n).round(1)
    predictions = target + np.where(rng.random((k, n)) < 0.3, 0.0, rng.normal(size=(k, n)))
    weights = np.array([2, 0, 1, 3, 1, 0, 2, 1, 1, 3])
    frame = pl.DataFrame(
        {
            "run": np.repeat([7, 8, 9], n),
            "sample": np.tile(np.arange(n), k),
            "target": np.tile(target, k),
            "prediction": predictions.ravel(),
            "w": np.tile(weights, k),
        }
    )
    index = np.repeat(np.arange(n), weights)
    values = residual_pairs(target[index], predictions[:, index], method)
    pairs = fa.repro.residual_consistency(frame, method=method, weight="w", pairwise=True)
    assert pairs["residual_consistency"].to_numpy() == pytest.approx(values, rel=1e-12)
    stats = summarize(values)
    summary = fa.repro.residual_consistency(frame, method=method, weight="w")
    assert summary.row(0) == pytest.approx([stats.pop("mean"), *stats.values()], rel=1e-12)
    repeated = _repeated_frame(frame)
    assert_frame_close(summary, fa.repro.residual_consistency(repeated, method=method))


def test_fractional_weights_weigh_every_count() -> None:
    """Worked by hand. Sample 0: both runs wrong (the same class); sample 1: run 2 wrong only;
    sample 2: both right. Weights 0.5, 2, 1.5: n = 4, n_a = I = 0.5, n_b = U = 2.5.
    """
    frame = pl.DataFrame(
        {
            "run": [1, 1, 1, 2, 2, 2],
            "sample": [0, 1, 2] * 2,
            "target": [0, 1, 0] * 2,
            "prediction": [1, 1, 0, 1, 0, 0],
            "w": [0.5, 2.0, 1.5] * 2,
        }
    )
    pairs = fa.repro.summary(frame, weight="w", pairwise=True).row(0, named=True)
    assert pairs["ec_local"] == pytest.approx(0.5 / 2.5)
    assert pairs["ec_global"] == pytest.approx(0.5 / 4)
    assert pairs["ec_agreement"] == pytest.approx((0.5 + 1.5) / 4)
    assert pairs["pa"] == pytest.approx((0.5 + 1.5) / 4)  # sample 0: the same wrong class
    total = fa.repro.total_consistency(frame, weight="w").item()
    assert total == pytest.approx(0.5 / 2.5)


@pytest.mark.parametrize(("call", "expected"), [c[1:] for c in CLASSIFICATION], ids=IDS)
def test_the_interval_s_value_is_the_point_estimate(
    call: Call, expected: Callable[[list[Part]], pl.DataFrame]
) -> None:
    """With ``ci=``, the values (computed per replicate) are those of the call without it."""
    frame, parts = _weighted(9)
    # fractional weights too: a cell that only differences of weights would empty stays empty
    fractions = np.random.default_rng(1).uniform(0.1, 3.0, frame.height).round(2)
    fractional = frame.with_columns(pl.lit(pl.Series("f", fractions)).max().over("part", "sample"))
    for weight in (None, "w", "f"):
        point = call(fractional, weight=weight)
        with_interval = call(fractional, weight=weight, ci=0.9, n_boot=20)
        assert_frame_close(with_interval.select(point.columns), point)
    assert_frame_close(call(frame.drop("w")), expected(parts))


# ---------------------------------------------------------------------------------------------
# Intervals against an independent numpy bootstrap


def _numpy_percentiles(values: np.ndarray, level: float) -> tuple[float, float]:
    tail = (1 - level) / 2
    defined = values[np.isfinite(values)]
    low, high = np.quantile(defined, [tail, 1 - tail])
    return float(low), float(high)


def _reference_value(metric: str, target: np.ndarray, predictions: np.ndarray) -> float:
    if metric == "total_consistency":
        return total_consistency(target, predictions)
    if metric == "residual_consistency":
        return float(residual_pairs(target, predictions, "ratio").mean())
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(np.nanmean(pair_metrics(target, predictions, metrics=(metric,))[metric]))


@pytest.mark.parametrize("metric", names("repro", "pairs", "single"))
def test_interval_matches_a_numpy_bootstrap(metric: str) -> None:
    level, n_boot, n = 0.9, 2000, 150
    frame, (part,) = random_runs(17, k=4, n=n, classes=3, error=0.3)
    target, predictions = part.target, part.predictions
    if metric == "residual_consistency":
        noise = np.random.default_rng(1).normal(size=predictions.shape)
        predictions = predictions + noise
        frame = frame.with_columns(pl.Series("prediction", predictions.ravel()))
        frame = frame.with_columns(pl.col("target").cast(pl.Float64))
    result = getattr(fa.repro, metric)(frame, ci=level, n_boot=n_boot, seed=4)
    rng = np.random.default_rng(0)
    counts = rng.multinomial(n, np.full(n, 1 / n), size=n_boot)  # (replicates, samples)
    values = np.array(
        [
            _reference_value(metric, target[index], predictions[:, index])
            for index in (np.repeat(np.arange(n), row) for row in counts)
        ]
    )
    low, high = _numpy_percentiles(values, level)
    # Monte-Carlo error of a 5% quantile of 2,000 draws: about 0.05 of the interval's width
    tolerance = 0.15 * (high - low)
    assert result[f"{metric}_lo"].item() == pytest.approx(low, abs=tolerance)
    assert result[f"{metric}_hi"].item() == pytest.approx(high, abs=tolerance)
    assert result["samples"].item() == n
    assert result["undefined_replicates"].item() == 0


def _drawn_counts(n_units: int, n_boot: int, seed: int) -> np.ndarray:
    """The Poisson counts the seed gives units 0 … n_units − 1 (samples in key order)."""
    pairs = {
        "unit": np.repeat(np.arange(n_units), n_boot),
        "rep": np.tile(np.arange(n_boot), n_units),
    }
    units = nw.from_native(pl.LazyFrame(pairs))
    draws = with_poisson_counts(units, "unit", "rep", seed, "k").collect().to_native()
    return draws["k"].to_numpy().reshape(n_units, n_boot).T  # (replicates, samples)


def _mean_of_defined(values: np.ndarray) -> float:
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if defined.size else np.nan


EXACT: list[tuple[str, Call, Callable[[np.ndarray, np.ndarray], np.ndarray]]] = [
    (
        "ec_local",
        lambda f, **kw: fa.repro.ec_local(f, **kw)["ec_local_lo", "ec_local_hi"],
        lambda t, p: np.array(
            [_mean_of_defined(pair_metrics(t, p, metrics=("ec_local",))["ec_local"])]
        ),
    ),
    (
        "cramers_v-pairwise",
        lambda f, **kw: fa.repro.cramers_v(f, pairwise=True, **kw)["cramers_v_lo", "cramers_v_hi"],
        lambda t, p: pair_metrics(t, p, metrics=("cramers_v",))["cramers_v"],
    ),
    (
        "summary-pairwise-pa_kappa",
        lambda f, **kw: fa.repro.summary(f, pairwise=True, **kw)["pa_kappa_lo", "pa_kappa_hi"],
        lambda t, p: pair_metrics(t, p, metrics=("pa_kappa",))["pa_kappa"],
    ),
    (
        "total",
        lambda f, **kw: fa.repro.total_consistency(f, **kw)[
            "total_consistency_lo", "total_consistency_hi"
        ],
        lambda t, p: np.array([total_consistency(t, p)]),
    ),
    (
        "leave-one-out",
        lambda f, **kw: fa.repro.leave_one_out(f, **kw)["leave_one_out_lo", "leave_one_out_hi"],
        leave_one_out,
    ),
]


@pytest.mark.parametrize(("call", "reference"), [c[1:] for c in EXACT], ids=[c[0] for c in EXACT])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_interval_is_the_percentiles_of_the_drawn_replicates(
    call: Call, reference: Callable[[np.ndarray, np.ndarray], np.ndarray], weighted: bool
) -> None:
    """Exact: the reference metric on each replicate's data — sample s repeated k_bs·w_s
    times, with k_bs the count the seed draws — and numpy's percentiles of the defined values.
    """
    n, n_boot, seed, level = 12, 80, 11, 0.8
    frame, (part,) = random_runs(23, k=4, n=n, classes=3, error=0.35)
    order = np.argsort(part.samples)  # unit indexes follow the sample keys' order
    target, predictions = part.target[order], part.predictions[:, order]
    weights = np.array([2, 1, 0, 3, 1, 1, 2, 1, 3, 1, 2, 1]) if weighted else np.ones(n, int)
    table = pl.DataFrame({"sample": part.samples[order], "w": weights})
    frame = frame.join(table, on="sample")
    kept = weights > 0  # weight 0 leaves the sample out, and out of the unit numbering
    counts = _drawn_counts(int(kept.sum()), n_boot, seed) * weights[kept]
    values = np.array(
        [
            reference(target[kept][index], predictions[:, kept][:, index])
            for index in (np.repeat(np.arange(kept.sum()), row) for row in counts)
        ]
    )  # (replicates, values)
    result = call(frame, weight="w", ci=level, n_boot=n_boot, seed=seed)
    tail = (1 - level) / 2
    for column, row in zip(values.T, result.iter_rows(), strict=True):
        defined = column[~np.isnan(column)]
        assert row == pytest.approx(np.quantile(defined, [tail, 1 - tail]).tolist(), rel=1e-9)


@pytest.mark.slow
def test_ninety_percent_intervals_cover_the_population_value_ninety_percent_of_the_time() -> None:
    """400 evaluations of 4 runs on 200 samples from a model with a known population EC_g.

    A sample is hard with probability 0.3; each run errs on a hard sample with probability 0.6
    and on an easy one with 0.05, independently given the sample. The population EC_g of every
    pair is P(both wrong) = 0.3·0.6² + 0.7·0.05².
    """
    rng = np.random.default_rng(2027)
    datasets, runs, n = 400, 4, 200
    truth = 0.3 * 0.6**2 + 0.7 * 0.05**2
    hard = rng.random((datasets, 1, n)) < 0.3
    wrong = rng.random((datasets, runs, n)) < np.where(hard, 0.6, 0.05)
    frame = pl.DataFrame(
        {
            "dataset": np.repeat(np.arange(datasets), runs * n),
            "run": np.tile(np.repeat(np.arange(runs), n), datasets),
            "sample": np.tile(np.arange(n), datasets * runs),
            "target": np.zeros(datasets * runs * n, dtype=np.int64),
            "prediction": wrong.ravel().astype(np.int64),
        }
    )
    result = fa.repro.ec_global(frame, by="dataset", ci=0.9, n_boot=500, seed=1)
    covered = ((result["ec_global_lo"] <= truth) & (result["ec_global_hi"] >= truth)).mean()
    # the binomial standard error of the coverage over 400 evaluations is 0.015
    assert 0.85 <= covered <= 0.95, covered


# ---------------------------------------------------------------------------------------------
# Reproducible everywhere

ENGINE_CASES: dict[str, Call] = {
    "ec_local-by": lambda f, **kw: fa.repro.ec_local(f, by="part", **kw),
    "summary-by": lambda f, **kw: fa.repro.summary(f, by="part", **kw),
    "summary-pairwise": lambda f, **kw: fa.repro.summary(f, by="part", pairwise=True, **kw),
    "total-by": lambda f, **kw: fa.repro.total_consistency(f, by="part", **kw),
    "leave-one-out": lambda f, **kw: fa.repro.leave_one_out(f, by="part", **kw),
}


_SAME_SEED = {"weight": "w", "ci": 0.8, "n_boot": 50, "seed": 7}


@functools.cache
def _same_seed_case(case: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The frame of the same-seed cases, and ``case``'s Polars result on it."""
    frame, _ = _weighted(2, labels="str")
    return frame, ENGINE_CASES[case](frame, **_SAME_SEED)


@pytest.mark.spark(cases=["ec_local-by"])
@pytest.mark.parametrize("case", list(ENGINE_CASES))
def test_same_seed_same_interval_on_every_engine(constructor: Constructor, case: str) -> None:
    frame, polars = _same_seed_case(case)
    native = ENGINE_CASES[case](constructor(frame), **_SAME_SEED)
    assert_frame_close(to_polars(native), polars)


@pytest.mark.parametrize("case", list(ENGINE_CASES))
def test_same_seed_same_interval_in_any_row_order(case: str) -> None:
    frame, polars = _same_seed_case(case)
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=1)
    assert_frame_close(ENGINE_CASES[case](shuffled, **_SAME_SEED), polars)


def test_residual_interval_on_every_engine(constructor: Constructor) -> None:
    frame, _ = _weighted(4, parts=1)
    frame = frame.with_columns(
        pl.col("target").cast(pl.Float64), (pl.col("prediction") * 0.7).alias("prediction")
    )
    kwargs = {"weight": "w", "ci": 0.8, "n_boot": 50, "seed": 3, "pairwise": True}
    polars = fa.repro.residual_consistency(frame, **kwargs)
    native = fa.repro.residual_consistency(constructor(frame), **kwargs)
    assert_frame_close(to_polars(native), polars)


def test_lazy_call_stays_lazy_and_streams() -> None:
    frame, _ = _weighted(3)
    lazy = fa.repro.summary(frame.lazy(), by="part", weight="w", ci=0.9, n_boot=40)
    assert isinstance(lazy, pl.LazyFrame)
    eager = fa.repro.summary(frame, by="part", weight="w", ci=0.9, n_boot=40)
    assert_frame_close(lazy.collect(engine="streaming"), eager)


def test_seeds_give_different_intervals() -> None:
    frame, _ = random_runs(3, k=4, n=60)
    first = fa.repro.ec_local(frame, ci=0.9, n_boot=200, seed=1)
    second = fa.repro.ec_local(frame, ci=0.9, n_boot=200, seed=2)
    # the point estimate does not depend on the seed (up to the last bit: Polars' parallel
    # grouped sums may add the pairs' values in another order from one call to the next)
    assert first["ec_local"].item() == pytest.approx(second["ec_local"].item(), rel=1e-14)
    assert first["ec_local_lo"].item() != pytest.approx(second["ec_local_lo"].item(), rel=1e-6)


def test_columns_follow_their_values() -> None:
    frame, _ = random_runs(3, k=3, n=20, parts=2)
    one = frame.filter(pl.col("part") == 0).drop("part")
    stats = ["std", "min", "max", "q05", "q95", "n_pairs", "n_undefined"]
    interval = ["samples", "undefined_replicates"]
    assert fa.repro.pa(frame, by="part", ci=0.9, n_boot=10).columns == [
        "part", "pa", "pa_lo", "pa_hi", *stats, *interval
    ]  # fmt: skip
    assert fa.repro.pa(one, ci=0.9, n_boot=10, pairwise=True).columns == [
        "run_a", "run_b", "pa", "pa_lo", "pa_hi", *interval
    ]  # fmt: skip
    assert fa.repro.summary(one, ci=0.9, n_boot=10).columns == [
        "metric", "mean", "mean_lo", "mean_hi", *stats, *interval
    ]  # fmt: skip
    wide = fa.repro.summary(one, ci=0.9, n_boot=10, pairwise=True).columns
    assert wide[:5] == ["run_a", "run_b", "ec_local", "ec_local_lo", "ec_local_hi"]
    assert wide[2 + 3 * len(METRICS) :] == [
        "samples", *(f"{m}_undefined_replicates" for m in METRICS)
    ]  # fmt: skip
    assert fa.repro.leave_one_out(one, ci=0.9, n_boot=10).columns == [
        "run", "leave_one_out", "leave_one_out_lo", "leave_one_out_hi", *interval
    ]  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Few samples, undefined replicates, NaN


def test_a_single_sample_gives_a_null_interval() -> None:
    frame = pl.DataFrame(
        {
            "part": ["x", "x", "y", "y", "y", "y"],
            "run": [1, 2, 1, 2, 1, 2],
            "sample": [0, 0, 1, 1, 2, 2],
            "target": [0, 0, 1, 1, 0, 0],
            "prediction": [1, 1, 1, 0, 0, 1],
        }
    )
    result = fa.repro.ec_global(frame, by="part", ci=0.9, n_boot=50)
    assert result["samples"].to_list() == [1, 2]
    assert result["ec_global"].to_list() == [1.0, 0.0]
    assert result["ec_global_lo"].to_list()[0] is None
    assert result["ec_global_hi"].to_list()[0] is None
    assert result["ec_global_lo"].to_list()[1] is not None


def test_undefined_replicates_are_counted() -> None:
    """Only sample 0 (unit index 0) is ever predicted wrong: a pair's EC_l is 0/0, undefined,
    in exactly the replicates that draw sample 0 zero times; with ``empty_union=0`` it is 0.
    """
    n, n_boot, seed = 6, 300, 5
    frame = pl.DataFrame(
        {
            "run": np.repeat([1, 2, 3], n),
            "sample": np.tile(np.arange(n), 3),
            "target": [0] * (3 * n),
            "prediction": [1, 0, 0, 0, 0, 0] * 3,
        }
    )
    units = nw.from_native(pl.LazyFrame({"unit": [0] * n_boot, "rep": list(range(n_boot))}))
    draws = with_poisson_counts(units, "unit", "rep", seed, "k").collect().to_native()
    without = int((draws["k"] == 0).sum())
    assert 0.3 * n_boot < without < 0.45 * n_boot  # about e^-1 of the replicates
    options = {"ci": 0.9, "n_boot": n_boot, "seed": seed}
    pairs = fa.repro.ec_local(frame, pairwise=True, **options)
    assert pairs["undefined_replicates"].to_list() == [without] * 3
    assert pairs["ec_local_lo"].to_list() == [1.0] * 3
    assert fa.repro.ec_local(frame, **options)["undefined_replicates"].item() == without
    total = fa.repro.total_consistency(frame, **options)
    assert total["undefined_replicates"].item() == without
    zero = fa.repro.ec_local(frame, empty_union=0, **options)
    assert zero["undefined_replicates"].item() == 0
    assert zero["ec_local_lo"].item() == 0.0


def test_a_nan_residual_gives_a_nan_interval() -> None:
    frame = pl.DataFrame(
        {
            "run": [1, 1, 1, 2, 2, 2],
            "sample": [0, 1, 2] * 2,
            "target": [1.0, 2.0, 3.0] * 2,
            "prediction": [1.5, float("nan"), 2.0, 2.0, 2.5, 4.0],
        }
    )
    for pairwise in (False, True):
        result = fa.repro.residual_consistency(frame, ci=0.9, n_boot=50, pairwise=pairwise)
        row = result.row(0, named=True)
        assert np.isnan(row["residual_consistency"])
        assert np.isnan(row["residual_consistency_lo"])
        assert np.isnan(row["residual_consistency_hi"])


# ---------------------------------------------------------------------------------------------
# Bad input

FRAME = pl.DataFrame(
    {
        "run": [1, 1, 2, 2],
        "sample": [1, 2, 1, 2],
        "target": [0, 1, 0, 1],
        "prediction": [0, 0, 1, 1],
        "w": [1.0, 2.0, 1.0, 2.0],
        "label": ["x"] * 4,
    }
)


def _with_w(values: list[Any]) -> pl.DataFrame:
    return FRAME.with_columns(pl.Series("w", values, dtype=pl.Float64))


BAD = [
    ({"ci": 1.0}, FRAME, fa.InvalidParameterError, r"ci=1.0: expected"),
    ({"ci": 0}, FRAME, fa.InvalidParameterError, r"ci=0: expected"),
    ({"ci": 0.9, "n_boot": 1}, FRAME, fa.InvalidParameterError, r"n_boot=1: expected an integer"),
    ({"ci": 0.9, "n_boot": 10.5}, FRAME, fa.InvalidParameterError, r"n_boot=10.5"),
    ({"seed": -1}, FRAME, fa.InvalidParameterError, r"seed=-1: expected"),
    ({"seed": 0.5}, FRAME, fa.InvalidParameterError, r"seed=0.5"),
    ({"weight": "missing"}, FRAME, fa.ColumnNotFoundError, r"weight='missing'"),
    ({"weight": "label"}, FRAME, fa.InvalidDtypeError, r"weight='label': expected"),
    (
        {"weight": "w"},
        _with_w([1.0, -2.0, 1.0, -2.0]),
        fa.InvalidValueError,
        r"weight='w': expected values in \[0, inf\], found 2 outside it",
    ),
    (
        {"weight": "w"},
        _with_w([1.0, None, 1.0, None]),
        fa.InvalidValueError,
        r"weight='w': column 'w' holds 2 null",
    ),
    (
        {"weight": "w"},
        _with_w([1.0, float("inf"), 1.0, float("inf")]),
        fa.InvalidValueError,
        r"weight='w': expected finite numbers",
    ),
    (
        {"weight": "w", "ci": 0.9, "n_boot": 10},
        _with_w([1.0, 2.0, 1.0, 3.0]),
        fa.InvalidValueError,
        r"weight='w': expected one value within each sample, found 1 sample\(s\) with "
        r"several \(e.g. sample=2\)",
    ),
]


@pytest.mark.spark(cases=["expected one value within"])
@pytest.mark.parametrize(("kwargs", "frame", "error", "match"), BAD, ids=[m for _, _, _, m in BAD])
def test_bad_uncertainty_input_is_refused(
    constructor: Constructor, kwargs: dict[str, Any], frame: pl.DataFrame, error: type, match: str
) -> None:
    with pytest.raises(error, match=match):
        to_polars(fa.repro.ec_local(constructor(frame), **kwargs))


@pytest.mark.parametrize("name", names("repro"))
def test_every_metric_checks_its_weight(name: str) -> None:
    frame = _with_w([1.0, 2.0, 3.0, 2.0])
    given = arguments(name)
    with pytest.raises(fa.InvalidValueError, match=r"weight='w': expected one value within"):
        getattr(fa.repro, name)(frame, weight="w", ci=0.9, n_boot=10, **given)
    with pytest.raises(fa.ColumnNotFoundError, match=r"weight='wt'.*did you mean 'w'"):
        getattr(fa.repro, name)(frame, weight="wt", **given)


# ---------------------------------------------------------------------------------------------
# Docs


def test_repro_page_shows_what_its_uncertainty_example_prints() -> None:
    """docs/repro.md's interval example prints what the page shows (every number in it)."""
    printed, shown = printed_and_shown("repro.md", "Uncertainty and sample weights")
    assert printed == shown
