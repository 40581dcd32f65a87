"""Dask: the metrics without ordered windows run natively; the others raise a clear error."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest
from conftest import assert_frame_close, to_polars

import frameaudit as fa
from frameaudit import UnsupportedBackendError
from tests.calls import arguments

dd = pytest.importorskip("dask.dataframe")


@pytest.fixture
def log() -> pl.DataFrame:
    df = fa.datasets.biased_rankings({"a": 0.3, "b": 0.7}, 20, phi=0.4, num_rankings=6, seed=5)
    rng = np.random.default_rng(5)
    return df.with_columns(
        pl.Series("relevance", rng.random(df.height)),
        pl.Series("relevant", (rng.random(df.height) < 0.5).astype(np.int64)),
        pl.Series("ctr", rng.random(df.height)),
    )


_TURNS: tuple[dict[str, Any], ...] = (
    {"item": "item", "combo": None},
    {"combo": "MaxAbsDiff"},
    {"by": "ranking", "combo": "Variance"},
    {"item": "item", "combo": "LTwo"},
)


def _turn(i: int, grouped: bool) -> dict[str, Any]:
    """The ``i``-th call's roles and combo (none for a single-number metric)."""
    turn = dict(_TURNS[i % len(_TURNS)])
    return turn if grouped else {k: v for k, v in turn.items() if k != "combo"}


# every ranking metric without an ordered window (not ARP, NDKL, nDCG's ideal order), each with
# its options and a combo in turn, by ranking or over items in turn
CASES: list[tuple[str, dict[str, Any]]] = [
    (m.name, arguments(m, p=0.3, decay=0.6, size="rows") | _turn(i, m.kind == "group"))
    for i, m in enumerate(fa.metrics("ranking", "group", "single"))
    if m.name not in ("arp", "ndkl", "ndcg")
]


@pytest.mark.parametrize(("metric", "options"), CASES)
def test_window_free_metrics_match_polars(
    log: pl.DataFrame, metric: str, options: dict[str, Any]
) -> None:
    function = getattr(fa.fair, metric)
    expected = function(log, ranking="ranking", **options)
    frame = dd.from_pandas(
        log.sample(fraction=1.0, shuffle=True, seed=1).to_pandas(), npartitions=3
    )
    actual = to_polars(
        function(frame, ranking="ranking", **options).compute().reset_index(drop=True)
    )
    assert_frame_close(actual, expected)


@pytest.mark.parametrize("metric", ["ndkl", "arp", "ndcg"])
def test_ordered_metrics_raise_with_a_workaround(log: pl.DataFrame, metric: str) -> None:
    frame = dd.from_pandas(log.to_pandas(), npartitions=2)
    with pytest.raises(UnsupportedBackendError, match=r"not supported on Dask.*Workaround"):
        getattr(fa.fair, metric)(frame, ranking="ranking")


# Every refusal is worded once: the metric, the workaround, then why Dask cannot run it.
REFUSED: list[tuple[str, Any]] = [
    ("ndkl", lambda f: fa.fair.ndkl(f, ranking="ranking")),
    (
        "position_parity",
        lambda f: fa.explain.position_parity(
            f, feature="item", importance="relevance", overall="a", k=2
        ),
    ),
    (
        "social_fairness_ratio",
        lambda f: fa.fair.social_fairness_ratio(
            f, cluster="ranking", a="a", b="b", features="relevance"
        ),
    ),
    (
        "pa",
        lambda f: fa.repro.pa(f, run="ranking", sample="item", target="group", prediction="rank"),
    ),
]


@pytest.mark.parametrize(("metric", "call"), REFUSED, ids=[r[0] for r in REFUSED])
def test_refusals_name_the_metric_the_workaround_and_the_reason(
    log: pl.DataFrame, metric: str, call: Any
) -> None:
    frame = dd.from_pandas(log.to_pandas(), npartitions=2)
    expected = (
        rf"^{metric} is not supported on Dask\. Workaround: run it on Polars "
        r"\(`polars\.from_pandas\(ddf\.compute\(\)\)`\) or on DuckDB/PySpark\. The reason: .+\.$"
    )
    with pytest.raises(UnsupportedBackendError, match=expected):
        call(frame)


def test_value_checks_run_on_dask(log: pl.DataFrame) -> None:
    tied = log.with_columns(pl.lit(1, dtype=pl.Int64).alias("rank"))
    frame = dd.from_pandas(tied.to_pandas(), npartitions=2)
    with pytest.raises(fa.InvalidValueError, match=r"rank='rank'.*unique within each ranking"):
        fa.fair.exp(frame, ranking="ranking", size="rows")


def test_intervals_raise_on_dask(log: pl.DataFrame) -> None:
    ddf = dd.from_pandas(log.to_pandas(), npartitions=2)
    with pytest.raises(UnsupportedBackendError, match=r"an interval \(ci=\) is not supported"):
        fa.fair.exp(ddf, ranking="ranking", size="rows", ci=0.9)
    # weights alone need no ordered window: they run on Dask
    weighted = log.with_columns(pl.lit(2.0).alias("w"))
    expected = fa.fair.exp(weighted, ranking="ranking", size="rows", weight="w")
    wdf = dd.from_pandas(weighted.to_pandas(), npartitions=2)
    assert_frame_close(
        to_polars(fa.fair.exp(wdf, ranking="ranking", size="rows", weight="w")), expected
    )
