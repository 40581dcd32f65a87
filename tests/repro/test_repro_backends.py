"""The reproducibility metrics on every frame kind: equal to the Polars result and the reference.

Each case runs through the ``constructor`` fixture (Polars eager and lazy, pandas, pandas with
Arrow dtypes, pyarrow, DuckDB, PySpark behind its marker; rows shuffled), the result comes back
as the caller's kind, and its content must equal both the Polars result and the expected frame
built by the numpy reference.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from conftest import Constructor, assert_frame_close, to_polars
from reference.repro import (
    METRICS,
    RESIDUAL_METHODS,
    expected_leave_one_out,
    expected_long_summary,
    expected_pairwise,
    expected_summary,
    expected_total,
    random_runs,
    residual_pairs,
    summarize,
)

import frameaudit as fa
from tests.calls import arguments

FRAME, PARTS = random_runs(21, k=4, n=15, classes=3, parts=2, labels="str")


# (id, call, expected frame)
CASES: list[tuple[str, Callable[[Any], Any], Callable[[], pl.DataFrame]]] = [
    *(
        (
            metric,
            lambda f, m=metric: getattr(fa.repro, m)(f, by="part"),
            lambda m=metric: expected_summary(PARTS, m),
        )
        for metric in METRICS
    ),
    (
        "summary",
        lambda f: fa.repro.summary(f, by="part"),
        lambda: expected_long_summary(PARTS),
    ),
    (
        "summary-pairwise",
        lambda f: fa.repro.summary(f, by="part", pairwise=True),
        lambda: expected_pairwise(PARTS),
    ),
    (
        "ec_local-empty-1",
        lambda f: fa.repro.ec_local(f, by="part", empty_union=1, pairwise=True),
        lambda: expected_pairwise(PARTS, ("ec_local",), 1),
    ),
    ("total", lambda f: fa.repro.total_consistency(f, by="part"), lambda: expected_total(PARTS)),
    (
        "leave-one-out",
        lambda f: fa.repro.leave_one_out(f, by="part"),
        lambda: expected_leave_one_out(PARTS),
    ),
]


# on Spark (9 s a case): the eight pairwise metrics are one function of the metric's name,
# whose every formula summary-pairwise computes; one of them alone (ec_local, with and without
# empty_union), and the metrics over all runs
@pytest.mark.spark(cases=["ec_local", "summary-pairwise", "total", "leave-one-out"])
@pytest.mark.parametrize(("call", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_classification_metrics_on_every_backend(
    constructor: Constructor,
    call: Callable[[Any], Any],
    expected: Callable[[], pl.DataFrame],
) -> None:
    on_polars = call(FRAME)
    assert_frame_close(on_polars, expected())
    assert_frame_close(to_polars(call(constructor(FRAME))), on_polars)


def _regression() -> tuple[pl.DataFrame, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(8)
    k, n = 3, 12
    target = rng.normal(size=n).round(1)
    predictions = target + np.where(rng.random((k, n)) < 0.3, 0.0, rng.normal(size=(k, n)))
    frame = pl.DataFrame(
        {
            "run": np.repeat(["r1", "r2", "r3"], n),
            "sample": np.tile(np.arange(n), k),
            "target": np.tile(target, k),
            "prediction": predictions.ravel(),
        }
    )
    return frame, target, predictions


@pytest.mark.spark(cases=["ratio-diff-signed"])
@pytest.mark.parametrize("method", RESIDUAL_METHODS)
def test_residual_consistency_on_every_backend(constructor: Constructor, method: str) -> None:
    frame, target, predictions = _regression()
    values = residual_pairs(target, predictions, method)
    pairs = fa.repro.residual_consistency(frame, method=method, pairwise=True)
    expected = pl.DataFrame(
        {"run_a": ["r1", "r1", "r2"], "run_b": ["r2", "r3", "r3"], "residual_consistency": values}
    )
    assert_frame_close(pairs, expected)
    stats = summarize(values)
    expected_summary_row = pl.DataFrame(
        {"residual_consistency": [stats.pop("mean")], **{k: [v] for k, v in stats.items()}}
    )
    assert_frame_close(fa.repro.residual_consistency(frame, method=method), expected_summary_row)
    native = constructor(frame)
    for pairwise in (False, True):
        actual = fa.repro.residual_consistency(native, method=method, pairwise=pairwise)
        on_polars = fa.repro.residual_consistency(frame, method=method, pairwise=pairwise)
        assert_frame_close(to_polars(actual), on_polars)


def test_result_kind_follows_the_input() -> None:
    def summary(frame: Any) -> Any:
        return fa.repro.summary(frame, by="part")

    assert isinstance(summary(FRAME), pl.DataFrame)
    assert isinstance(summary(FRAME.lazy()), pl.LazyFrame)
    assert isinstance(summary(FRAME.to_pandas()), pd.DataFrame)
    assert isinstance(summary(FRAME.to_arrow()), pa.Table)
    assert isinstance(summary(nw.from_native(FRAME)), pl.DataFrame)


# every function on the classification runs (residual consistency reads regression runs: below)
# the labels are text here: the scores are the sample ids scaled into [0, 1]
SCORED = FRAME.with_columns((pl.col("sample") / pl.col("sample").max()).alias("score"))
NAMESPACE_CALLS: list[tuple[str, dict[str, Any]]] = [
    (m.name, {"by": "part", **arguments(m, {"score": "score"})})
    for m in fa.metrics("repro")
    if m.name != "residual_consistency"
]


@pytest.mark.parametrize(("name", "options"), NAMESPACE_CALLS, ids=[c[0] for c in NAMESPACE_CALLS])
def test_namespace_forwards_on_polars_lazy_and_pandas(name: str, options: dict[str, Any]) -> None:
    expected = getattr(fa.repro, name)(SCORED, **options)
    assert_frame_close(getattr(SCORED.repro, name)(**options), expected)
    assert_frame_close(getattr(SCORED.lazy().repro, name)(**options).collect(), expected)
    pandas = SCORED.to_pandas()
    before = pandas.copy()
    assert_frame_close(to_polars(getattr(pandas.repro, name)(**options)), expected)
    pd.testing.assert_frame_equal(pandas, before)  # the caller's frame is not modified


def test_residual_namespace() -> None:
    frame, _, _ = _regression()
    expected = fa.repro.residual_consistency(frame, method="ratio-diff")
    assert_frame_close(frame.repro.residual_consistency(method="ratio-diff"), expected)
    assert_frame_close(
        to_polars(frame.to_pandas().repro.residual_consistency(method="ratio-diff")), expected
    )


def test_a_lazy_call_reads_no_data() -> None:
    # a lazy frame whose data would fail every check: nothing is read until collect()
    broken = pl.LazyFrame(
        {"run": [1, 1], "sample": [1, 1], "target": [0, 1], "prediction": [None, 1]}
    )
    result = fa.repro.summary(broken)
    assert isinstance(result, pl.LazyFrame)
    with pytest.raises(fa.InvalidValueError):
        result.collect()


def test_dask_raises_a_clear_error_with_a_workaround() -> None:
    dd = pytest.importorskip("dask.dataframe")
    frame = dd.from_pandas(FRAME.to_pandas(), npartitions=2)
    with pytest.raises(fa.UnsupportedBackendError, match=r"not supported on Dask.*Workaround"):
        fa.repro.summary(frame, by="part")
