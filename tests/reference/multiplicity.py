"""Independent, plain implementations of the multiplicity metrics (SPEC §8), for tests.

Written from the definitions — Milani Fard et al. 2016 (churn, win and loss), Yan et al. 2021
(negative and positive flips), Marx, Calmon & Ustun 2020 (ambiguity, discrepancy),
Watson-Daniels, Parkes & Ustun 2023 (the viable prediction range), Cooper et al. 2024 (self-
consistency) — with explicit loops over the pairs of runs and the samples, where the package
uses closed forms (class counts, error counts and run positions), so that it shares no code
path with ``frameaudit.repro``.

Input: a Polars frame of one row per (run, sample) with ``run``, ``sample``, ``prediction``,
and as needed ``target``, ``score``, a group column ``g`` and a weight column ``w``. Output:
per group (or for the whole frame), a dict of the output columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations, pairwise, permutations
from typing import Any

import numpy as np
import polars as pl


def _table(
    frame: pl.DataFrame, column: str
) -> tuple[list[Any], list[Any], dict[Any, dict[Any, Any]]]:
    """The runs, the samples and ``column`` per run and sample."""
    runs = sorted(frame["run"].unique().to_list())
    samples = sorted(frame["sample"].unique().to_list())
    cell: dict[Any, dict[Any, Any]] = {r: {} for r in runs}
    for row in frame.select("run", "sample", column).iter_rows():
        cell[row[0]][row[1]] = row[2]
    return runs, samples, cell


def _pairs(
    runs: list[Any], order: Sequence[Any] | None, reference: Any | None
) -> list[tuple[Any, Any]]:
    """(earlier, later) pairs: all (sorted), consecutive in ``order``, or the reference first."""
    if order is not None:
        return list(pairwise(order))
    if reference is not None:
        return [(reference, r) for r in runs if r != reference]
    return list(combinations(runs, 2))


def _samples_of(frame: pl.DataFrame, group: str | None) -> dict[Any, list[Any]]:
    """Each group's samples (one group None without ``group``)."""
    if group is None:
        return {None: sorted(frame["sample"].unique().to_list())}
    firsts = frame.group_by("sample").agg(pl.col(group).first())
    out: dict[Any, list[Any]] = {}
    for sample, value in firsts.iter_rows():
        out.setdefault(value, []).append(sample)
    return {k: sorted(v) for k, v in out.items()}


def _weights(frame: pl.DataFrame, weight: str | None) -> dict[Any, float]:
    if weight is None:
        return dict.fromkeys(frame["sample"].unique().to_list(), 1.0)
    return dict(frame.group_by("sample").agg(pl.col(weight).first()).iter_rows())


def _mean(values: dict[Any, float], samples: list[Any], w: dict[Any, float]) -> float:
    total = sum(w[s] for s in samples)
    return sum(w[s] * values[s] for s in samples) / total if total else float("nan")


def per_sample(
    frame: pl.DataFrame,
    metric: str,
    *,
    order: Sequence[Any] | None = None,
    reference: Any | None = None,
    threshold: float | None = None,
) -> dict[str, dict[Any, float]]:
    """Each output column's value per sample (all but discrepancy, a maximum over runs)."""
    runs, samples, pred = _table(frame, "prediction")
    target = (
        dict(frame.group_by("sample").agg(pl.col("target").first()).iter_rows())
        if "target" in frame.columns
        else None
    )
    out: dict[str, dict[Any, float]] = {}
    if metric in ("churn", "flip_rate"):
        pairs = _pairs(runs, order if metric == "churn" else (order or runs), reference)
        churn, win, loss = {}, {}, {}
        for s in samples:
            differ = sum(pred[a][s] != pred[b][s] for a, b in pairs)
            churn[s] = differ / len(pairs)
            if target is not None:
                right = {r: pred[r][s] == target[s] for r in runs}
                win[s] = sum((not right[a]) and right[b] for a, b in pairs) / len(pairs)
                loss[s] = sum(right[a] and not right[b] for a, b in pairs) / len(pairs)
        if metric == "churn":
            out["churn"] = churn
            if target is not None:
                out |= {"win": win, "loss": loss}
        else:
            out = {"negative_flip_rate": loss, "positive_flip_rate": win}
    elif metric == "ambiguity":
        out["ambiguity"] = {s: float(len({pred[r][s] for r in runs}) > 1) for s in samples}
    elif metric == "self_consistency":
        ordered = list(permutations(runs, 2))
        sc = {s: sum(pred[a][s] == pred[b][s] for a, b in ordered) / len(ordered) for s in samples}
        out["self_consistency"] = sc
        if threshold is not None:
            out["below_threshold"] = {s: float(v < threshold) for s, v in sc.items()}
    elif metric == "score_range":
        _, _, score = _table(frame, "score")
        out["score_range"] = {
            s: max(score[r][s] for r in runs) - min(score[r][s] for r in runs) for s in samples
        }
    else:
        raise ValueError(metric)
    return out


def expected(
    frame: pl.DataFrame,
    metric: str,
    *,
    group: str | None = None,
    weight: str | None = None,
    order: Sequence[Any] | None = None,
    reference: Any | None = None,
    threshold: float | None = None,
    quantiles: dict[str, float] | None = None,
) -> dict[Any, dict[str, float]]:
    """Per group (None without ``group``): each output column, ``n`` and the ``quantiles``
    (column name → level) of the score ranges."""
    w = _weights(frame, weight)
    groups = _samples_of(frame, group)
    result: dict[Any, dict[str, float]] = {}
    if metric == "discrepancy":
        runs, _, pred = _table(frame, "prediction")
        ref = runs[0] if reference is None else reference
        for g, samples in groups.items():
            shares = [
                _mean({s: float(pred[r][s] != pred[ref][s]) for s in samples}, samples, w)
                for r in runs
                if r != ref
            ]
            result[g] = {"discrepancy": max(shares), "n": sum(w[s] for s in samples)}
        return result
    values = per_sample(frame, metric, order=order, reference=reference, threshold=threshold)
    for g, samples in groups.items():
        row = {c: _mean(v, samples, w) for c, v in values.items()}
        row["n"] = sum(w[s] for s in samples)
        for name, q in (quantiles or {}).items():
            row[name] = float(np.quantile([values["score_range"][s] for s in samples], q))
        result[g] = row
    return result
