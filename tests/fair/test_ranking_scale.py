"""10^8 rows from Parquet on Polars streaming: the peak resident memory of a ranking metric.

Slow (a minute to write the files, then one fresh process per metric); the timings and every
metric are in ``benchmarks/bench_scale.py``, whose measurement this test reuses.
"""

from __future__ import annotations

import importlib
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

import frameaudit as fa

BENCHMARKS = Path(__file__).parents[2] / "benchmarks"
RANKINGS = 1_000_000  # x 100 items: 10^8 rows
LIMIT = 2 * 2**30


@pytest.fixture(scope="module")
def bench_scale() -> Iterator[ModuleType]:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        yield importlib.import_module("bench_scale")
    finally:
        sys.path.remove(str(BENCHMARKS))


@pytest.fixture(scope="module")
def rankings(bench_scale: ModuleType) -> Iterator[Path]:
    kept = (bench_scale.DATA / f"{RANKINGS}" / "_done").exists()
    folder: Path = bench_scale.write_rankings(RANKINGS)
    yield folder
    if not kept:
        shutil.rmtree(folder, ignore_errors=True)


METRICS = [m.name for m in fa.metrics("ranking", "group", "single")]
ORDERING = (
    'lf.select("ranking", "relevance").with_columns(pl.col("relevance").neg().rank("ordinal")'
    '.over("ranking").alias("p")).group_by("ranking").agg(pl.col("p").max())'
)
"""The bare ordering of each ranking's relevance values, that nDCG's ideal DCG needs: on
Polars' streaming engine a window (a sort, or lists per ranking) holds the ranked rows, 3.6
GiB at 10^8 rows (measured 2026-12-02), above the limit of the metrics that need none."""
ORDERED = {"ndcg": 1.6}
"""The metrics that order each ranking by another column, and their bound over ORDERING's."""


@pytest.mark.slow
@pytest.mark.parametrize("metric", METRICS)
def test_streaming_peak_memory_under_2_gib(
    bench_scale: ModuleType, rankings: Path, metric: str
) -> None:
    measured = bench_scale.measure(bench_scale.POLARS, bench_scale.metric_call(metric), rankings)
    assert measured["rows"] == 1
    limit = LIMIT
    if metric in ORDERED:  # the floor, measured in the same run
        floor = bench_scale.measure(bench_scale.POLARS, ORDERING, rankings)["peak"]
        limit = max(LIMIT, ORDERED[metric] * floor)
    assert measured["peak"] < limit, f"{metric}: peak {measured['peak'] / 2**30:.2f} GiB"
