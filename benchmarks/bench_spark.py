"""PySpark at scale: every ranking metric against a bare ``groupBy`` over the same rows.

    python benchmarks/bench_spark.py            # 10M rows (100,000 rankings x 100 items)
    python benchmarks/bench_spark.py --quick    # 100,000 rows, a smoke run
    python benchmarks/bench_spark.py --metrics exp ndkl    # only these metrics

The rankings are written once to Parquet under /tmp and read with ``spark.read.parquet`` in a
local[2] session (Spark's default settings otherwise: adaptive query execution on). Each
metric is called on the DataFrame (``ranking=`` the ranking, ``group=`` the group, the roles
of ``bench_ranking.roles_of``), overall and with ``by="ranking"`` (a value per ranking), and
its result is run to Spark's ``noop`` sink, which computes every row and writes none: the
time of the call (which starts no job) and of the run are measured apart.
The reference, in the same session and run: the bare query summing 1/log2(rank+1) by
ranking and group, to the same sink. The machine's speed drifts by a third within minutes, so
each repeat times the bare query, the call and the run one after the other, and the ratio
reported is the median of the repeats' ratios (the times are the medians too). Targets: EXP
within 3x and NDKL within 6x of the bare query. Results are printed and written to
benchmarks/results/spark.md.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
from bench_ranking import METRICS, roles_of  # the ranking benchmark's roles
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as sf

import frameaudit as fa
from frameaudit.datasets import biased_rankings

RESULTS = Path(__file__).parent / "results" / "spark.md"
DATA = Path("/tmp/frameaudit_spark")
TARGETS = {"exp": 3.0, "ndkl": 6.0}


def write_rankings(num_rankings: int) -> Path:
    """The rankings as Parquet (one file per 100,000 rankings), made once per size."""
    folder = DATA / f"{num_rankings}"
    if (folder / "_done").exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for start in range(0, num_rankings, 100_000):
        count = min(100_000, num_rankings - start)
        log = biased_rankings([0.3, 0.7], 100, phi=0.5, num_rankings=count, seed=start)
        rng = np.random.default_rng(start)
        relevance = rng.random(log.height)
        log.with_columns(
            pl.col("ranking") + start,
            pl.Series("relevance", relevance),
            pl.Series("relevant", (relevance > 0.5).astype(np.int64)),
            pl.Series("ctr", rng.random(log.height)),
        ).write_parquet(folder / f"part-{start:09d}.parquet")
    (folder / "_done").touch()
    return folder


def run(frame: DataFrame) -> None:
    """Compute every row of ``frame`` and write none (Spark's benchmarking sink)."""
    frame.write.format("noop").mode("overwrite").save()


def seconds(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _measured(metric: str, log: DataFrame, by: str | None, bare: DataFrame, repeats: int) -> str:
    """The table's line of ``metric`` overall (``by=None``) or per ranking."""
    roles = {**roles_of(metric), "by": by}
    function = getattr(fa.fair, metric)
    result = function(log, **roles)
    run(result)  # warm-up
    times: dict[str, list[float]] = {"call": [], "run": [], "bare": [], "ratio": []}
    for _ in range(repeats):
        times["bare"].append(seconds(lambda: run(bare)))
        times["call"].append(seconds(lambda: function(log, **roles)))
        times["run"].append(seconds(lambda: run(result)))
        times["ratio"].append((times["call"][-1] + times["run"][-1]) / times["bare"][-1])
    call, ran, bare_time, ratio = (statistics.median(times[k]) for k in times)
    target = f"≤ {TARGETS[metric]:.0f}x" if metric in TARGETS and by is None else ""
    name = metric if by is None else f"{metric}, by={by}"
    return f"| {name} | {call:.2f} | {ran:.2f} | {bare_time:.2f} | {ratio:.1f}x | {target} |"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--metrics", nargs="+", choices=METRICS, default=METRICS)
    args = parser.parse_args()
    num_rankings, repeats = (1_000, 1) if args.quick else (100_000, 5)
    folder = write_rankings(num_rankings)
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.driver.memory", "8g")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    log = spark.read.parquet(str(folder))
    rows = log.count()
    bare_query = log.groupBy("ranking", "group").agg(
        sf.sum(1.0 / sf.log2(sf.col("rank") + 1.0)).alias("exposure")
    )
    run(bare_query)  # warm-up: the JVM's code generation and the file listing
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} on 2 cores with "
        f"`python benchmarks/bench_spark.py`{' --quick' if args.quick else ''} "
        f"(PySpark {spark.version}, local[2], median of {repeats} repeats).",
        "",
        f'{rows:,} rows ({num_rankings:,} rankings x 100 items) read from Parquet. "call" is '
        'the metric call itself (it starts no job); "run" computes its result to Spark\'s '
        '`noop` sink; "bare" is the bare query summing 1/log2(rank+1) by ranking and group '
        'over the same rows, to the same sink, timed just before; "vs bare" is the median of '
        'the repeats\' (call + run) / bare. Each metric overall, then with `by="ranking"` (a '
        "value per ranking: 100,000 rows out).",
        "",
        "| metric | call (s) | run (s) | bare (s) | vs bare | target |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for metric in args.metrics:
        for by in (None, "ranking"):
            line = _measured(metric, log, by, bare_query, repeats)
            print(line, flush=True)
            lines.append(line)
    spark.stop()
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:3]))


if __name__ == "__main__":
    main()
