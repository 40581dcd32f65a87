"""Multiplicity and churn per group (SPEC §8): equal to the numpy reference (loops over the
pairs of runs, tests/reference/multiplicity.py) and to hand-worked cases, on every engine,
with combos, weights, intervals and the refusals."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from conftest import to_polars
from docs_examples import printed_and_shown
from reference.multiplicity import expected, per_sample
from reference.ranking import combine

import frameaudit as fa
from frameaudit.exceptions import FrameAuditError

RUNS = ["r1", "r2", "r3", "r4"]


def _runs(seed: int, samples: int = 30, classes: int = 3) -> pl.DataFrame:
    """Four runs that agree on most samples, a target, a score in [0, 1], three groups, a
    weight per sample (0 to 3)."""
    rng = np.random.default_rng(seed)
    target = rng.integers(0, classes, size=samples)
    group = rng.choice(["a", "b", "c"], size=samples, p=[0.5, 0.3, 0.2])
    weight = rng.integers(0, 4, size=samples)
    weight[0] = 1  # every group keeps a sample of positive weight below
    rows = []
    for r in RUNS:
        noisy = rng.random(samples) < np.where(group == "a", 0.2, 0.5)
        prediction = np.where(noisy, rng.integers(0, classes, size=samples), target)
        score = np.clip(0.5 + 0.3 * rng.standard_normal(samples), 0.0, 1.0)
        rows += [
            (
                r,
                s,
                int(prediction[s]),
                int(target[s]),
                float(score[s]),
                str(group[s]),
                int(weight[s]),
            )
            for s in range(samples)
        ]
    frame = pl.DataFrame(
        rows, schema=["run", "sample", "prediction", "target", "score", "g", "w"], orient="row"
    )
    return frame.with_columns(pl.when(pl.col("sample") < 3).then(1).otherwise("w").alias("w"))


MULTIPLICITY = [m for m in fa.metrics("repro") if m.function.__module__.endswith("multiplicity")]


def _variants(metric: Any) -> list[dict[str, Any]]:
    """The calls to check of a registered multiplicity metric, from its parameters: plain,
    with an optional target, with each way of choosing the pairs, with a threshold."""
    parameters = inspect.signature(metric.function).parameters
    optional_target = "target" in parameters and parameters["target"].default is None
    labelled = {"target": "target"} if optional_target else {}
    variants: list[dict[str, Any]] = [{}]
    if labelled:
        variants.append(labelled)
    if "order" in parameters:
        variants.append({**labelled, "order": ["r3", "r1", "r4", "r2"]})
    if "reference" in parameters:
        variants.append({**labelled, "reference": "r3"})
    if "threshold" in parameters:
        variants.append({"threshold": 0.5})
    return variants


CASES = [(m.name, options) for m in MULTIPLICITY for options in _variants(m)]


def _ours(constructor: Any, frame: pl.DataFrame, metric: str, **options: Any) -> pl.DataFrame:
    return to_polars(getattr(fa.repro, metric)(constructor(frame), **options))


def _theirs(frame: pl.DataFrame, metric: str, options: dict[str, Any], **more: Any) -> Any:
    kept = {k: v for k, v in options.items() if k in ("order", "reference", "threshold")}
    data = frame if "target" in options or metric == "flip_rate" else frame.drop("target")
    return expected(data, metric, **kept, **more)


@pytest.mark.parametrize(("metric", "options"), CASES, ids=str)
@pytest.mark.parametrize("weighted", [False, True])
def test_per_group_equals_the_reference(
    constructor: Any, metric: str, options: dict[str, Any], weighted: bool
) -> None:
    frame = _runs(1)
    weight = {"weight": "w"} if weighted else {}
    ours = _ours(constructor, frame, metric, group="g", **options, **weight).sort("g")
    theirs = _theirs(frame, metric, options, group="g", weight="w" if weighted else None)
    assert ours["g"].to_list() == sorted(theirs)
    for row in ours.iter_rows(named=True):
        wanted = theirs[row.pop("g")]
        assert row.keys() == wanted.keys()
        for column, value in row.items():
            assert value == pytest.approx(wanted[column], rel=1e-12, abs=1e-15), column


@pytest.mark.spark(cases=[f"pyspark-{m.name}-{{}}" for m in MULTIPLICITY])  # one call each
@pytest.mark.parametrize(("metric", "options"), CASES, ids=str)
def test_whole_and_combos_equal_the_reference(
    constructor: Any, metric: str, options: dict[str, Any]
) -> None:
    frame = _runs(2)
    ours = _ours(constructor, frame, metric, **options)
    theirs = _theirs(frame, metric, options)[None]
    assert ours.columns == [c for c in theirs if c != "n"]
    assert list(ours.row(0)) == pytest.approx([theirs[c] for c in ours.columns], rel=1e-12)
    combos = ["MaxMinDiff", "MinMaxRatio", "Variance"]
    combined = _ours(constructor, frame, metric, group="g", combo=combos, **options)
    per_group = _theirs(frame, metric, options, group="g")
    assert combined["combo"].to_list() == sorted(combos)
    for row in combined.iter_rows(named=True):
        for column in ours.columns:
            values = [per_group[g][column] for g in sorted(per_group)]
            assert row[column] == pytest.approx(combine(np.array(values), row["combo"]), rel=1e-12)


def test_quantiles_equal_numpys() -> None:
    frame = _runs(3)
    ours = fa.repro.score_range(frame, group="g", quantiles=[0.5, 0.9, 0.975]).sort("g")
    theirs = expected(
        frame, "score_range", group="g", quantiles={"q50": 0.5, "q90": 0.9, "q97_5": 0.975}
    )
    assert ours.columns == ["g", "score_range", "n", "q50", "q90", "q97_5"]
    for row in ours.iter_rows(named=True):
        wanted = theirs[row.pop("g")]
        assert list(row.values()) == pytest.approx([wanted[c] for c in row], rel=1e-12)


def test_hand_worked_pairs() -> None:
    """Three runs of two samples (target 1, 0). Sample 0: runs predict 1, 0, 0 — right,
    wrong, wrong; sample 1: 0, 0, 1 — right, right, wrong.

    All pairs (1,2) (1,3) (2,3): sample 0 differs in (1,2), (1,3): churn 2/3, both losses;
    sample 1 differs in (1,3), (2,3): 2/3, both losses. Self-consistency: 1/3 each.
    Consecutive pairs of order 3, 1, 2: sample 0 — (3,1) wrong→right a win, (1,2) a loss;
    sample 1 — (3,1) a win. Against run 2: sample 0 — run 1 differs (a win), run 3 not;
    sample 1 — run 3 differs (a loss).
    """
    frame = pl.DataFrame(
        {
            "run": [1, 1, 2, 2, 3, 3],
            "sample": [0, 1] * 3,
            "target": [1, 0] * 3,
            "prediction": [1, 0, 0, 0, 0, 1],
        }
    )
    every = fa.repro.churn(frame, target="target").row(0)
    assert every == pytest.approx((2 / 3, 0.0, 2 / 3))
    assert fa.repro.self_consistency(frame).item() == pytest.approx(1 / 3)
    consecutive = fa.repro.churn(frame, target="target", order=[3, 1, 2]).row(0)
    assert consecutive == pytest.approx(((2 / 2 + 1 / 2) / 2, (1 / 2 + 1 / 2) / 2, (1 / 2) / 2))
    against = fa.repro.churn(frame, target="target", reference=2).row(0)
    assert against == pytest.approx((1 / 2, 1 / 4, 1 / 4))
    flips = fa.repro.flip_rate(frame, order=[3, 1, 2]).row(0)
    assert flips == pytest.approx((consecutive[2], consecutive[1]))
    assert fa.repro.discrepancy(frame, reference=2).item() == pytest.approx(1 / 2)
    assert fa.repro.ambiguity(frame).item() == 1.0


def test_an_integer_weight_repeats_the_sample() -> None:
    frame = _runs(4).filter(pl.col("w") > 0)
    repeated = frame.with_columns(pl.col("sample").repeat_by("w")).explode("sample")
    copies = repeated.with_columns(
        (pl.col("sample") * 10 + pl.int_range(pl.len()).over("run", "sample")).alias("sample")
    )
    for metric, options in CASES:
        weighted = getattr(fa.repro, metric)(frame, group="g", weight="w", **options)
        plain = getattr(fa.repro, metric)(copies, group="g", **options)
        for a, b in zip(weighted.rows(), plain.rows(), strict=True):
            assert a == pytest.approx(b, rel=1e-12), (metric, options)


def test_the_interval_holds_the_estimate_and_is_the_same_on_every_engine(constructor: Any) -> None:
    frame = _runs(5)
    options = {"group": "g", "ci": 0.9, "n_boot": 200, "seed": 3}
    polars = fa.repro.churn(frame, target="target", **options).sort("g")
    ours = to_polars(fa.repro.churn(constructor(frame), target="target", **options)).sort("g")
    assert ours.columns == polars.columns
    for a, b in zip(ours.rows(), polars.rows(), strict=True):
        assert a == pytest.approx(b, rel=1e-12)
    for row in ours.iter_rows(named=True):
        for c in ("churn", "win", "loss"):
            assert row[f"{c}_lo"] <= row[c] <= row[f"{c}_hi"]
    assert ours["samples"].to_list() == [30, 30, 30]


def test_a_lazy_call_reads_nothing(tmp_path: Path) -> None:
    path = tmp_path / "runs.parquet"
    _runs(6).write_parquet(path)
    lazy = fa.repro.self_consistency(pl.scan_parquet(path), group="g", threshold=0.5)
    expected_rows = fa.repro.self_consistency(_runs(6), group="g", threshold=0.5)
    assert isinstance(lazy, pl.LazyFrame)
    collected = lazy.collect()
    path.unlink()
    assert collected.rows() == expected_rows.rows()
    with pytest.raises(FileNotFoundError):
        fa.repro.self_consistency(pl.scan_parquet(path)).collect()


BAD: list[tuple[str, Any, dict[str, Any], str]] = [
    ("churn", lambda f: f.filter(~((pl.col("run") == "r2") & (pl.col("sample") == 4))), {},
     r"run='run': 1 sample\(s\) are not predicted by every run"),
    ("churn", lambda f: pl.concat([f, f.head(1)]), {},
     r"sample='sample': 1 sample\(s\) are predicted more than once"),
    ("churn", lambda f: f.filter(pl.col("run") == "r1"), {},
     "run='run': at least two runs are needed to compare"),
    ("churn", lambda f: f.with_columns(g=pl.when(pl.col("run") == "r1").then(pl.lit("z"))
                                       .otherwise("g")),
     {"group": "g"}, r"group='g': \d+ sample\(s\) have a group that differs between runs"),
    ("churn", None, {"order": ["r1", "r2", "r3"]},
     r"order=: 1 run\(s\) of the data are not listed"),
    ("churn", None, {"order": ["r1", "r2", "r3", "r3"]}, "a run is listed more than once"),
    ("churn", None, {"reference": "r9"}, r"reference=: 1 partition\(s\) have no run with this id"),
    ("discrepancy", None, {"reference": 3}, "reference=3: expected a run id like"),
    ("churn", None, {"order": ["r1"], "reference": "r1"}, "give the pairs by one of them"),
    ("churn", None, {"combo": "MaxMinDiff"}, "a combo compares groups; give group="),
    ("churn", None, {"group": "g", "combo": "Spread"}, "combo='Spread'"),
    ("self_consistency", None, {"threshold": 1.5},
     r"threshold=1.5: expected a number in \[0.0, 1.0\]"),
    ("score_range", lambda f: f.with_columns(score=pl.col("score") + 0.5), {},
     r"score='score': expected values in \[0.0, 1.0\]"),
    ("score_range", lambda f: f.with_columns(score=pl.lit(float("nan"))), {"bounds": None},
     "NaN value|null value"),
    ("score_range", None, {"bounds": (1.0, 0.0)}, r"bounds=\(1.0, 0.0\): expected \(low, high\)"),
    ("score_range", None, {"quantiles": [1.5]},
     r"quantiles=\[1.5\]: expected a list of distinct levels in \[0, 1\]"),
    ("score_range", None, {"quantiles": [0.5], "weight": "w"}, "quantiles= with weight="),
    ("flip_rate", lambda f: f.drop("target"), {}, "target='target'"),
]  # fmt: skip


@pytest.mark.spark(cases=["are not predicted by every run"])
@pytest.mark.parametrize(("metric", "mutate", "options", "message"), BAD)
def test_bad_input_gets_a_clear_error(
    constructor: Any, metric: str, mutate: Any, options: dict[str, Any], message: str
) -> None:
    frame = _runs(7)
    frame = mutate(frame) if mutate is not None else frame
    with pytest.raises(FrameAuditError, match=message):
        to_polars(getattr(fa.repro, metric)(constructor(frame), **options))


def test_the_docs_example_prints_its_hand_worked_numbers() -> None:
    """docs/repro.md's example prints what the page shows, and the values worked by hand
    beside it: self-consistency 7/9 and 1/3, ambiguity's gap 2/3, churn 1/6 and 4/6."""
    printed, shown = printed_and_shown("repro.md", "Multiplicity and churn per group")
    assert printed == shown
    for row in (
        f"│ a     ┆ {7 / 9:.6f}         ┆ {1 / 3:.6f}        ┆ 3 │",
        f"│ b     ┆ {1 / 3:.6f}         ┆ 1.0             ┆ 3 │",
        f"│ {2 / 3:.6f}  │",
        f"│ a     ┆ {1 / 6:.6f} ┆ 0.0      ┆ {1 / 6:.6f} ┆ 3 │",
        f"│ b     ┆ {4 / 6:.6f} ┆ {2 / 6:.6f} ┆ {2 / 6:.6f} ┆ 3 │",
    ):
        assert row in printed, row


def test_group_by_the_sample_gives_each_samples_value() -> None:
    """group= the sample column: one row per sample, its own value (the per-sample values
    Cooper et al.'s abstention reads)."""
    frame = _runs(8)
    ours = fa.repro.self_consistency(frame, group="sample").sort("sample")
    theirs = per_sample(frame, "self_consistency")["self_consistency"]
    assert ours["self_consistency"].to_list() == pytest.approx([theirs[s] for s in ours["sample"]])
    assert set(ours["n"].to_list()) == {1}
