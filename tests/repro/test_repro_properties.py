"""Properties of the reproducibility metrics, on inputs drawn by hypothesis.

Invariance under row order, run relabelling and class relabelling; bounds; agreement with the
numpy reference; and bad layouts (a dropped or repeated prediction) always raise a frameaudit
error.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest
from conftest import assert_frame_close
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from reference.repro import METRICS, Part, expected_pairwise

import frameaudit as fa
from frameaudit._registry import entry

SETTINGS = settings(max_examples=25, deadline=None)


@st.composite
def repeated_runs(draw: st.DrawFn) -> tuple[pl.DataFrame, Part]:
    k = draw(st.integers(2, 5))
    n = draw(st.integers(1, 10))
    classes = draw(st.integers(1, 4))
    labels = st.integers(0, classes - 1)
    target = np.array(draw(st.lists(labels, min_size=n, max_size=n)))
    predictions = np.array(
        [draw(st.lists(labels, min_size=n, max_size=n)) for _ in range(k)]
    ).reshape(k, n)
    runs = np.sort(
        np.array(draw(st.lists(st.integers(-50, 50), min_size=k, max_size=k, unique=True)))
    )
    samples = np.arange(n)
    frame = pl.DataFrame(
        {
            "run": np.repeat(runs, n),
            "sample": np.tile(samples, k),
            "target": np.tile(target, k),
            "prediction": predictions.ravel(),
        }
    )
    return frame, Part(None, runs, samples, target, predictions)


@SETTINGS
@given(repeated_runs())
def test_pairwise_matches_reference(data: tuple[pl.DataFrame, Part]) -> None:
    frame, part = data
    assert_frame_close(fa.repro.summary(frame, pairwise=True), expected_pairwise([part]))


@SETTINGS
@given(repeated_runs(), st.randoms(use_true_random=False))
def test_row_order_does_not_matter(data: tuple[pl.DataFrame, Part], rng: Any) -> None:
    frame, _ = data
    order = list(range(frame.height))
    rng.shuffle(order)
    shuffled = frame[order]
    assert_frame_close(fa.repro.summary(shuffled), fa.repro.summary(frame))
    assert_frame_close(fa.repro.leave_one_out(shuffled), fa.repro.leave_one_out(frame))


@SETTINGS
@given(repeated_runs(), st.randoms(use_true_random=False))
def test_relabelling_runs_keeps_the_pair_distribution(
    data: tuple[pl.DataFrame, Part], rng: Any
) -> None:
    frame, part = data
    names = [f"run-{i}" for i in range(part.runs.size)]
    rng.shuffle(names)
    mapping = dict(zip(part.runs.tolist(), names, strict=True))
    relabelled = frame.with_columns(pl.col("run").replace_strict(mapping))
    assert_frame_close(fa.repro.summary(relabelled), fa.repro.summary(frame))
    # each unordered pair keeps its values, whatever its new orientation
    before = fa.repro.summary(frame, pairwise=True).with_columns(
        pl.col("run_a").replace_strict(mapping), pl.col("run_b").replace_strict(mapping)
    )
    unordered = pl.min_horizontal("run_a", "run_b"), pl.max_horizontal("run_a", "run_b")
    before = before.with_columns(unordered[0].alias("run_a"), unordered[1].alias("run_b"))
    after = fa.repro.summary(relabelled, pairwise=True)
    assert_frame_close(after, before.sort("run_a", "run_b"))
    total = fa.repro.total_consistency(relabelled)
    assert_frame_close(total, fa.repro.total_consistency(frame))


@SETTINGS
@given(repeated_runs(), st.permutations(["cat", "dog", "eel", "fox"]))
def test_relabelling_classes_changes_nothing(
    data: tuple[pl.DataFrame, Part], names: list[str]
) -> None:
    frame, _ = data
    relabel = dict(enumerate(names))
    relabelled = frame.with_columns(
        pl.col("target").replace_strict(relabel), pl.col("prediction").replace_strict(relabel)
    )
    assert_frame_close(fa.repro.summary(relabelled), fa.repro.summary(frame))
    assert_frame_close(fa.repro.leave_one_out(relabelled), fa.repro.leave_one_out(frame))


@SETTINGS
@given(repeated_runs())
def test_bounds(data: tuple[pl.DataFrame, Part]) -> None:
    frame, _ = data
    pairs = fa.repro.summary(frame, pairwise=True)
    for metric in METRICS:
        values = pairs[metric].drop_nulls()
        low = entry(metric).bounds[0]  # 0, or -1 for the kappas and the correlation
        assert values.is_between(low - 1e-12, 1.0 + 1e-12).all(), metric
    summary = fa.repro.summary(frame)
    defined = summary.filter(pl.col("n_undefined") < pl.col("n_pairs"))
    assert (defined["min"] <= defined["q05"] + 1e-12).all()
    assert (defined["q05"] <= defined["mean"] + 1e-12).all()
    assert (defined["mean"] <= defined["q95"] + 1e-12).all()
    assert (defined["q95"] <= defined["max"] + 1e-12).all()
    total = fa.repro.total_consistency(frame).item()
    local = pairs["ec_local"].drop_nulls()
    if total is not None and local.len():
        assert total <= local.min() + 1e-12  # ∩ of all ⊆ ∩ of a pair, ∪ of all ⊇ ∪ of a pair


@SETTINGS
@given(repeated_runs(), st.data())
def test_a_broken_layout_always_raises(
    data: tuple[pl.DataFrame, Part], draw: st.DataObject
) -> None:
    frame, part = data
    # with one sample per run, dropping a row drops a whole run: a valid (smaller) input
    assume(part.samples.size > 1)
    row = draw.draw(st.integers(0, frame.height - 1))
    dropped = frame.filter(pl.int_range(pl.len()) != row)
    repeated = pl.concat([frame, frame[row]])
    for broken in (dropped, repeated):
        with pytest.raises(fa.InvalidValueError, match=r"sample|run"):
            fa.repro.summary(broken)
