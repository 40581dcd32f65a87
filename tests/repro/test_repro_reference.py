"""The reproducibility metrics against tests/reference, scikit-learn, scipy and hand-worked cases.

Expected values come from the independent numpy reference (``reference.repro``), from
scikit-learn's ``cohen_kappa_score``, scipy's ``contingency.association`` and ``np.corrcoef``,
or are worked out by hand in the test.
"""

from __future__ import annotations

import warnings
from itertools import combinations
from typing import Any

import numpy as np
import polars as pl
import pytest
from conftest import assert_frame_close
from reference.repro import (
    METRICS,
    RESIDUAL_METHODS,
    expected_long_summary,
    expected_pairwise,
    expected_summary,
    leave_one_out,
    random_runs,
    residual_pairs,
    summarize,
    total_consistency,
)
from scipy.stats.contingency import association, crosstab
from sklearn.metrics import cohen_kappa_score

import frameaudit as fa

# (id, seed, options of random_runs): binary and multi-class, string labels, error rates from
# "almost perfect" (many undefined EC_l pairs) to "mostly wrong", several partitions.
CASES: list[tuple[str, int, dict[str, Any]]] = [
    ("binary", 1, {"k": 5, "n": 30, "classes": 2}),
    ("multiclass", 2, {"k": 4, "n": 25, "classes": 4}),
    ("strings", 3, {"k": 3, "n": 20, "classes": 3, "labels": "str"}),
    ("almost-perfect", 5, {"k": 6, "n": 6, "classes": 2, "error": 0.05}),
    ("mostly-wrong", 5, {"k": 4, "n": 15, "classes": 5, "error": 0.9}),
    ("partitions", 6, {"k": 3, "n": 10, "classes": 3, "parts": 3}),
    ("two-runs", 7, {"k": 2, "n": 40, "classes": 3}),
    # Cramér's V numbers each cell of a pair's table p·C² + i·C + j: far-apart codes
    ("many-classes", 8, {"k": 5, "n": 80, "classes": 30, "parts": 2}),
]


def _by(options: dict[str, Any]) -> dict[str, Any]:
    return {"by": "part"} if options.get("parts", 1) > 1 else {}


@pytest.mark.parametrize(("seed", "options"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
@pytest.mark.parametrize("metric", METRICS)
def test_metric_summary_matches_reference(seed: int, options: dict[str, Any], metric: str) -> None:
    frame, parts = random_runs(seed, **options)
    actual = getattr(fa.repro, metric)(frame, **_by(options))
    assert_frame_close(actual, expected_summary(parts, metric))


@pytest.mark.parametrize(("seed", "options"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_pairwise_and_summary_match_reference(seed: int, options: dict[str, Any]) -> None:
    frame, parts = random_runs(seed, **options)
    by = _by(options)
    assert_frame_close(fa.repro.summary(frame, **by, pairwise=True), expected_pairwise(parts))
    assert_frame_close(fa.repro.summary(frame, **by), expected_long_summary(parts))
    for metric in METRICS:
        single = getattr(fa.repro, metric)(frame, **by, pairwise=True)
        assert_frame_close(single, expected_pairwise(parts, (metric,)))


@pytest.mark.parametrize("empty_union", ["null", 0, 1])
def test_empty_union_policy(empty_union: Any) -> None:
    # four of the six runs make no error: 6 of the 15 pairs have an empty union
    frame, parts = random_runs(5, k=6, n=6, classes=2, error=0.05)
    expected = expected_pairwise(parts, ("ec_local",), empty_union)
    assert expected["ec_local"].null_count() == (6 if empty_union == "null" else 0)
    actual = fa.repro.ec_local(frame, empty_union=empty_union, pairwise=True)
    assert_frame_close(actual, expected)
    summary = fa.repro.ec_local(frame, empty_union=empty_union)
    assert_frame_close(summary, expected_summary(parts, "ec_local", empty_union))
    assert summary["n_undefined"].item() == (6 if empty_union == "null" else 0)
    long = fa.repro.summary(frame, empty_union=empty_union)
    assert_frame_close(long, expected_long_summary(parts, empty_union))


def _pairs(seed: int, **options: Any) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, dict]]:
    """(target, ŷ_a, ŷ_b, frameaudit's pair row) for every pair of a random set of runs."""
    frame, parts = random_runs(seed, **options)
    (part,) = parts
    rows = fa.repro.summary(frame, pairwise=True).rows(named=True)
    out = []
    for (a, b), row in zip(combinations(range(part.runs.size), 2), rows, strict=True):
        assert (row["run_a"], row["run_b"]) == (part.runs[a], part.runs[b])
        out.append((part.target, part.predictions[a], part.predictions[b], row))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_kappas_match_scikit_learn(seed: int) -> None:
    for target, pred_a, pred_b, row in _pairs(seed, k=4, n=30, classes=3 + seed % 2):
        errors_a, errors_b = pred_a != target, pred_b != target
        assert row["pa_kappa"] == pytest.approx(cohen_kappa_score(pred_a, pred_b), abs=1e-12)
        if errors_a.any() or errors_b.any():
            expected = cohen_kappa_score(errors_a, errors_b)
            assert row["ea_kappa"] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_cramers_v_matches_scipy(seed: int) -> None:
    for _, pred_a, pred_b, row in _pairs(seed, k=4, n=40, classes=2 + seed):
        table = crosstab(pred_a, pred_b).count
        expected = association(table, method="cramer", correction=False)
        assert row["cramers_v"] == pytest.approx(expected, abs=1e-7)


@pytest.mark.parametrize("seed", range(4))
def test_error_correlation_matches_corrcoef(seed: int) -> None:
    for target, pred_a, pred_b, row in _pairs(seed, k=4, n=30, classes=3):
        e_a, e_b = (pred_a != target).astype(float), (pred_b != target).astype(float)
        assert row["ec_corr"] == pytest.approx(np.corrcoef(e_a, e_b)[0, 1], abs=1e-12)


def test_undefined_kappa_is_null_where_scikit_learn_gives_nan() -> None:
    # both runs perfect: p_e = 1
    frame = pl.DataFrame(
        {"run": [1, 1, 2, 2], "sample": [1, 2] * 2, "target": [0, 1] * 2, "prediction": [0, 1] * 2}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn warns of the single label and of 0/0
        assert np.isnan(cohen_kappa_score([False, False], [False, False]))
    row = fa.repro.summary(frame, pairwise=True).row(0, named=True)
    assert row["ea_kappa"] is None
    assert row["ec_local"] is None
    assert row["ec_corr"] is None
    assert row["pa_kappa"] == 1.0
    assert row["cramers_v"] == 1.0


def _runs(target: list[Any], *predictions: list[Any]) -> pl.DataFrame:
    n = len(target)
    return pl.DataFrame(
        {
            "run": [r for r in range(1, len(predictions) + 1) for _ in range(n)],
            "sample": list(range(n)) * len(predictions),
            "target": target * len(predictions),
            "prediction": [p for run in predictions for p in run],
        }
    )


def test_seed_example_disjoint_errors() -> None:
    # two runs whose errors never coincide: EC_l = EC_g = 0 (the seed's motivating case)
    frame = _runs([0, 1, 0, 1], [1, 1, 0, 1], [0, 1, 0, 0])
    row = fa.repro.summary(frame, pairwise=True).row(0, named=True)
    assert row["ec_local"] == 0.0
    assert row["ec_global"] == 0.0
    # e_a = (1, 0, 0, 0), e_b = (0, 0, 0, 1): a = 0, b = c = 1, d = 2, p_o = 1/2, p_e = 5/8
    assert row["ec_agreement"] == 0.5
    assert row["ea_kappa"] == pytest.approx((0.5 - 0.625) / (1 - 0.625))
    assert row["ec_corr"] == pytest.approx(-1 / 3)
    assert row["pa"] == 0.5


def test_identical_runs_are_perfectly_reproducible() -> None:
    predictions = [0, 2, 1, 1, 0, 2]
    frame = _runs([0, 1, 1, 2, 0, 2], predictions, predictions, predictions)
    long = fa.repro.summary(frame)
    means = dict(zip(long["metric"], long["mean"], strict=True))
    # every metric at its most reproducible, and EC_g at the shared error rate
    assert means == {m: pytest.approx(2 / 6) if m == "ec_global" else 1.0 for m in METRICS}
    assert long["std"].to_list() == [0.0] * 8
    assert fa.repro.total_consistency(frame).item() == 1.0
    assert fa.repro.leave_one_out(frame)["leave_one_out"].to_list() == [1.0, 1.0, 1.0]


def test_a_perfect_run() -> None:
    # run 1 never errs, run 2 errs twice
    frame = _runs([0, 1, 1, 0], [0, 1, 1, 0], [1, 1, 0, 0])
    row = fa.repro.summary(frame, pairwise=True).row(0, named=True)
    assert row["ec_local"] == 0.0
    assert row["ec_global"] == 0.0
    assert row["ea_kappa"] == 0.0  # a constant error vector agrees by chance only
    assert row["ec_corr"] is None  # ... and has no variance
    assert row["ec_agreement"] == 0.5
    assert row["pa"] == 0.5
    assert row["pa_kappa"] == 0.0
    assert row["cramers_v"] == 0.0
    assert fa.repro.total_consistency(frame).item() == 0.0
    # leaving run 1 out leaves run 2's errors against themselves; leaving 2 out, none at all
    loo = fa.repro.leave_one_out(frame)["leave_one_out"].to_list()
    assert loo == [1.0, None]
    assert fa.repro.leave_one_out(frame, empty_union=0)["leave_one_out"].to_list() == [1.0, 0.0]


def test_a_single_sample() -> None:
    frame = _runs(["x"], ["y"], ["x"], ["y"])
    pairs = fa.repro.summary(frame, pairwise=True)
    assert pairs["ec_local"].to_list() == [0.0, 1.0, 0.0]
    assert pairs["ec_global"].to_list() == [0.0, 1.0, 0.0]
    assert pairs["pa"].to_list() == [0.0, 1.0, 0.0]
    # one sample: each error vector is constant; κ is 0 for different runs, undefined for equal
    assert pairs["ea_kappa"].to_list() == [0.0, None, 0.0]
    assert pairs["pa_kappa"].to_list() == [0.0, None, 0.0]
    assert pairs["ec_corr"].to_list() == [None, None, None]
    assert pairs["cramers_v"].to_list() == [None, None, None]
    summary = fa.repro.pa_kappa(frame)
    assert summary.select("pa_kappa", "n_pairs", "n_undefined").row(0) == (0.0, 3, 1)


def test_quantiles_are_linear_and_std_has_ddof_one() -> None:
    frame, _parts = random_runs(11, k=7, n=50, classes=3)
    values = fa.repro.ec_global(frame, pairwise=True)["ec_global"].to_numpy()
    row = fa.repro.ec_global(frame).row(0, named=True)
    assert row["std"] == pytest.approx(values.std(ddof=1))
    assert row["q05"] == pytest.approx(np.quantile(values, 0.05, method="linear"))
    assert row["q95"] == pytest.approx(np.quantile(values, 0.95, method="linear"))
    assert row["n_pairs"] == 21
    assert summarize(values)["q95"] == pytest.approx(row["q95"])


@pytest.mark.parametrize(("seed", "options"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
@pytest.mark.parametrize("empty_union", ["null", 0, 1])
def test_total_and_leave_one_out_match_reference(
    seed: int, options: dict[str, Any], empty_union: Any
) -> None:
    frame, parts = random_runs(seed, **options)
    by = _by(options)
    total = fa.repro.total_consistency(frame, **by, empty_union=empty_union)
    loo = fa.repro.leave_one_out(frame, **by, empty_union=empty_union)
    expected_total: dict[str, list[Any]] = {"part": [], "total_consistency": []}
    expected_loo: dict[str, list[Any]] = {"part": [], "run": [], "leave_one_out": []}
    for part in parts:
        value = total_consistency(part.target, part.predictions, empty_union)
        expected_total["part"].append(part.key)
        expected_total["total_consistency"].append(None if np.isnan(value) else value)
        values = leave_one_out(part.target, part.predictions, empty_union)
        expected_loo["part"] += [part.key] * part.runs.size
        expected_loo["run"] += part.runs.tolist()
        expected_loo["leave_one_out"] += [None if np.isnan(x) else x for x in values]
    drop = [] if by else ["part"]
    assert_frame_close(total, pl.DataFrame(expected_total).drop(drop))
    assert_frame_close(loo, pl.DataFrame(expected_loo).drop(drop))


def _regression(
    seed: int, k: int = 4, n: int = 20, nan: bool = False
) -> tuple[pl.DataFrame, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    target = rng.normal(size=n).round(1)
    # a third of the predictions are exact, so 0/0 samples occur
    noise = np.where(rng.random((k, n)) < 0.33, 0.0, rng.normal(size=(k, n)).round(1))
    predictions = target + noise
    if nan:
        predictions[1, 3] = np.nan
    frame = pl.DataFrame(
        {
            "run": np.repeat(np.arange(k), n),
            "sample": np.tile(np.arange(n), k),
            "target": np.tile(target, k),
            "prediction": predictions.ravel(),
        }
    )
    return frame, target, predictions


@pytest.mark.parametrize("method", RESIDUAL_METHODS)
@pytest.mark.parametrize("seed", range(3))
def test_residual_consistency_matches_reference(method: str, seed: int) -> None:
    frame, target, predictions = _regression(seed)
    expected = residual_pairs(target, predictions, method)
    pairs = fa.repro.residual_consistency(frame, method=method, pairwise=True)
    np.testing.assert_allclose(pairs["residual_consistency"].to_numpy(), expected, rtol=1e-12)
    stats = summarize(expected)
    row = fa.repro.residual_consistency(frame, method=method).row(0, named=True)
    assert row == pytest.approx(
        {"residual_consistency": stats["mean"], **{k: v for k, v in stats.items() if k != "mean"}}
    )


def test_residual_consistency_hand_worked() -> None:
    # residuals: run 1 (0.5, 0, -1), run 2 (1, 0, 1)
    frame = pl.DataFrame(
        {
            "run": [1, 1, 1, 2, 2, 2],
            "sample": [0, 1, 2] * 2,
            "target": [1.0, 2.0, 3.0] * 2,
            "prediction": [1.5, 2.0, 2.0, 2.0, 2.0, 4.0],
        }
    )
    expected = {
        "ratio": (0.5 + 1 + 1) / 3,
        "ratio-signed": (0.5 + 1 - 1) / 3,
        "ratio-diff": (0.5 / 1.5 + 0 + 0) / 3,
        "ratio-diff-signed": (0.5 / 1.5 + 0 + 0) / 3,
    }
    for method, value in expected.items():
        actual = fa.repro.residual_consistency(frame, method=method, pairwise=True)
        assert actual["residual_consistency"].item() == pytest.approx(value)


def test_residual_nan_propagates() -> None:
    frame, target, predictions = _regression(0, nan=True)
    pairs = fa.repro.residual_consistency(frame, pairwise=True)["residual_consistency"]
    expected = residual_pairs(target, predictions, "ratio")
    assert np.isnan(expected[[0, 3, 4]]).all()  # the pairs of run 1
    np.testing.assert_allclose(pairs.to_numpy(), expected, rtol=1e-12)
    row = fa.repro.residual_consistency(frame).row(0, named=True)
    assert all(
        np.isnan(row[s]) for s in ("residual_consistency", "std", "min", "max", "q05", "q95")
    )
    assert (row["n_pairs"], row["n_undefined"]) == (6, 0)
