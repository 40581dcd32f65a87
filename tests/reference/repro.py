"""An independent numpy reference for the reproducibility metrics (docs/repro.md).

Written from the definitions, one pair of runs at a time, vectorised over samples: no shared
code with frameaudit. Input is wide — ``target`` of shape (n,) and ``predictions`` of shape
(k, n), row r holding run r's predictions in sample order — which is also how a numpy user
would hold repeated runs, so the benchmark times this very code. Undefined values are NaN.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import polars as pl

import frameaudit as fa

# the pairwise metrics, as the registry lists them (the formulas below are this module's own)
METRICS: tuple[str, ...] = fa.repro.METRICS
STATS = ("mean", "std", "min", "max", "q05", "q95", "n_pairs", "n_undefined")
RESIDUAL_METHODS = ("ratio", "ratio-signed", "ratio-diff", "ratio-diff-signed")


def _kappa(observed: float, chance: float) -> float:
    return np.nan if chance == 1.0 else (observed - chance) / (1.0 - chance)


def _cramers_v(codes_a: np.ndarray, codes_b: np.ndarray, classes: int) -> float:
    n = codes_a.size
    table = np.bincount(codes_a * classes + codes_b, minlength=classes * classes)
    table = table.reshape(classes, classes).astype(np.float64)
    table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
    if min(table.shape) < 2:
        return np.nan
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / n
    chi2 = ((table - expected) ** 2 / expected).sum()
    return float(np.sqrt(chi2 / (n * (min(table.shape) - 1))))


def pair_metrics(
    target: np.ndarray,
    predictions: np.ndarray,
    empty_union: Any = "null",
    metrics: tuple[str, ...] = METRICS,
) -> dict[str, np.ndarray]:
    """Per pair (a < b in row order) the value of each metric; also ``run_a``, ``run_b``."""
    k, n = predictions.shape
    labels, codes = np.unique(np.concatenate([target, predictions.ravel()]), return_inverse=True)
    classes = labels.size
    codes = codes[n:].reshape(k, n)
    errors = predictions != target
    pairs = list(combinations(range(k), 2))
    out: dict[str, list[float]] = {m: [] for m in metrics}
    for a, b in pairs:
        ea, eb = errors[a], errors[b]
        both = np.count_nonzero(ea & eb)
        either = np.count_nonzero(ea | eb)
        rate_a, rate_b = ea.mean(), eb.mean()
        values: dict[str, float] = {}
        if "ec_local" in metrics:
            empty = np.nan if empty_union == "null" else float(empty_union)
            values["ec_local"] = both / either if either else empty
        values["ec_global"] = both / n
        agreement = np.count_nonzero(ea == eb) / n
        values["ec_agreement"] = agreement
        values["ea_kappa"] = _kappa(agreement, rate_a * rate_b + (1.0 - rate_a) * (1.0 - rate_b))
        sd = ea.std() * eb.std()
        values["ec_corr"] = (
            np.nan if sd == 0 else float(np.mean((ea - rate_a) * (eb - rate_b)) / sd)
        )
        same = np.count_nonzero(predictions[a] == predictions[b]) / n
        values["pa"] = same
        if "pa_kappa" in metrics:
            share_a = np.bincount(codes[a], minlength=classes) / n
            share_b = np.bincount(codes[b], minlength=classes) / n
            values["pa_kappa"] = _kappa(same, float(share_a @ share_b))
        if "cramers_v" in metrics:
            values["cramers_v"] = _cramers_v(codes[a], codes[b], classes)
        for m in metrics:
            out[m].append(values[m])
    result = {m: np.array(v, dtype=np.float64) for m, v in out.items()}
    result["run_a"] = np.array([a for a, _ in pairs])
    result["run_b"] = np.array([b for _, b in pairs])
    return result


def summarize(values: np.ndarray) -> dict[str, float]:
    """frameaudit's summary of a pair distribution; NaN marks undefined pairs (left out)."""
    defined = values[~np.isnan(values)]
    stats: dict[str, float] = {"n_pairs": values.size, "n_undefined": values.size - defined.size}
    if defined.size == 0:
        return {**dict.fromkeys(STATS[:6], np.nan), **stats}
    return {
        "mean": float(defined.mean()),
        "std": float(defined.std(ddof=1)) if defined.size > 1 else np.nan,
        "min": float(defined.min()),
        "max": float(defined.max()),
        "q05": float(np.quantile(defined, 0.05, method="linear")),
        "q95": float(np.quantile(defined, 0.95, method="linear")),
        **stats,
    }


def summary(
    target: np.ndarray, predictions: np.ndarray, empty_union: Any = "null"
) -> dict[str, dict[str, float]]:
    """Every pairwise metric summarised: {metric: {stat: value}}."""
    per_pair = pair_metrics(target, predictions, empty_union)
    return {m: summarize(per_pair[m]) for m in METRICS}


def _iou(intersection: int, union: int, empty_union: Any) -> float:
    if union:
        return intersection / union
    return np.nan if empty_union == "null" else float(empty_union)


def total_consistency(
    target: np.ndarray, predictions: np.ndarray, empty_union: Any = "null"
) -> float:
    """|∩_r e_r| / |∪_r e_r| over all runs."""
    errors = predictions != target
    return _iou(int(errors.all(axis=0).sum()), int(errors.any(axis=0).sum()), empty_union)


def leave_one_out(
    target: np.ndarray, predictions: np.ndarray, empty_union: Any = "null"
) -> np.ndarray:
    """For each run r (row order): total consistency of the other runs."""
    k = predictions.shape[0]
    return np.array(
        [
            total_consistency(target, np.delete(predictions, r, axis=0), empty_union)
            for r in range(k)
        ]
    )


def residual_pairs(target: np.ndarray, predictions: np.ndarray, method: str) -> np.ndarray:
    """Per pair, the mean over samples of the per-sample residual consistency."""
    residuals = predictions - target
    out = []
    for a, b in combinations(range(residuals.shape[0]), 2):
        ra, rb = np.abs(residuals[a]), np.abs(residuals[b])
        sign = np.sign(residuals[a] * residuals[b])
        zero = (ra == 0) & (rb == 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            if method.startswith("ratio-diff"):
                value = np.where(zero, 0.0, np.abs(ra - rb) / (ra + rb))
            else:
                value = np.where(zero, 1.0, np.minimum(ra, rb) / np.maximum(ra, rb))
        if method.endswith("signed"):
            value = np.where(zero, value, sign * value)
        out.append(value.mean())
    return np.array(out)


# --- seeded inputs and expected frames for the tests ------------------------------------------


@dataclass
class Part:
    """One partition of repeated runs in wide form; row r of ``predictions`` is ``runs[r]``."""

    key: Any
    runs: np.ndarray
    samples: np.ndarray
    target: np.ndarray
    predictions: np.ndarray


def random_runs(
    seed: int,
    *,
    k: int = 4,
    n: int = 12,
    classes: int = 3,
    error: float = 0.4,
    parts: int = 1,
    labels: str = "int",
) -> tuple[pl.DataFrame, list[Part]]:
    """A tidy frame (``part`` when ``parts`` > 1, run, sample, target, prediction) and its parts.

    Run ids are sparse and out of order on purpose; string labels test non-numeric classes.
    """
    rng = np.random.default_rng(seed)
    frames, out = [], []
    for key in range(parts):
        runs = np.sort(rng.choice(1000, size=k, replace=False))
        samples = rng.choice(10_000, size=n, replace=False)
        target = rng.integers(0, classes, n)
        wrong = rng.random((k, n)) < error
        shift = rng.integers(1, max(classes, 2), (k, n))
        predictions = np.where(wrong, (target + shift) % max(classes, 2), target)
        if labels == "str":
            names = np.array([f"class-{c}" for c in range(max(classes, 2))])
            target, predictions = names[target], names[predictions]
        out.append(Part(key, runs, samples, target, predictions))
        frame = {
            "run": np.repeat(runs, n),
            "sample": np.tile(samples, k),
            "target": np.tile(target, k),
            "prediction": predictions.ravel(),
        }
        frames.append(pl.DataFrame({"part": [key] * (k * n), **frame} if parts > 1 else frame))
    return pl.concat(frames), out


def _frame(columns: dict[str, Any], by: bool) -> pl.DataFrame:
    frame = pl.DataFrame(columns)
    return frame if by else frame.drop("part")


def expected_pairwise(
    parts: list[Part], metrics: tuple[str, ...] = METRICS, empty_union: Any = "null"
) -> pl.DataFrame:
    """The pair distribution (``part``, run_a, run_b, one column per metric; None = undefined)."""
    columns: dict[str, list[Any]] = {"part": [], "run_a": [], "run_b": []}
    columns.update({m: [] for m in metrics})
    for part in parts:
        values = pair_metrics(part.target, part.predictions, empty_union, metrics)
        columns["part"] += [part.key] * values["run_a"].size
        columns["run_a"] += part.runs[values["run_a"]].tolist()
        columns["run_b"] += part.runs[values["run_b"]].tolist()
        for m in metrics:
            columns[m] += [None if np.isnan(x) else float(x) for x in values[m]]
    return _frame(columns, len(parts) > 1)


def _stats_row(values: np.ndarray) -> list[Any]:
    stats = summarize(values)
    return [None if isinstance(s, float) and np.isnan(s) else s for s in stats.values()]


def expected_summary(parts: list[Part], metric: str, empty_union: Any = "null") -> pl.DataFrame:
    """One metric's summary per partition, in the layout of ``frameaudit.repro.<metric>``."""
    names = [metric, *STATS[1:]]
    columns: dict[str, list[Any]] = {"part": [], **{s: [] for s in names}}
    for part in parts:
        values = pair_metrics(part.target, part.predictions, empty_union, (metric,))[metric]
        columns["part"].append(part.key)
        for name, stat in zip(names, _stats_row(values), strict=True):
            columns[name].append(stat)
    return _frame(columns, len(parts) > 1)


def expected_long_summary(parts: list[Part], empty_union: Any = "null") -> pl.DataFrame:
    """``frameaudit.repro.summary``'s long format: one row per (part, metric), sorted."""
    columns: dict[str, list[Any]] = {"part": [], "metric": [], **{s: [] for s in STATS}}
    for part in parts:
        values = pair_metrics(part.target, part.predictions, empty_union)
        for metric in sorted(METRICS):
            columns["part"].append(part.key)
            columns["metric"].append(metric)
            for stat, value in zip(STATS, _stats_row(values[metric]), strict=True):
                columns[stat].append(value)
    return _frame(columns, len(parts) > 1)


def expected_total(parts: list[Part]) -> pl.DataFrame:
    """``frameaudit.repro.total_consistency(by="part")``'s layout: one row per part."""
    values = [total_consistency(p.target, p.predictions) for p in parts]
    return pl.DataFrame({"part": [p.key for p in parts], "total_consistency": values})


def expected_leave_one_out(parts: list[Part]) -> pl.DataFrame:
    """``frameaudit.repro.leave_one_out(by="part")``'s layout: one row per (part, run)."""
    return pl.DataFrame(
        {
            "part": [p.key for p in parts for _ in p.runs],
            "run": [r for p in parts for r in p.runs.tolist()],
            "leave_one_out": np.concatenate(
                [leave_one_out(p.target, p.predictions) for p in parts]
            ),
        }
    ).fill_nan(None)
