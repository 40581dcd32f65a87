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
within 3x and NDKL within 6x of the bare query. NDKL is also timed written by hand in plain
PySpark without checks, the floors of its cost, each checked to give frameaudit's value where
it computes one: its algorithm (:func:`ndkl_by_hand`); the cheapest exact plan for this data,
told in advance what no call can know (:func:`ndkl_given_positions`); and what any exact NDKL
needs, the rows of each (ranking, group) put in position order (:func:`in_position_order`).
Results are printed and written to benchmarks/results/spark.md.
"""

from __future__ import annotations

import argparse
import functools
import math
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
from bench_ranking import METRICS, roles_of  # the ranking benchmark's roles
from pyspark.sql import Column, DataFrame, SparkSession, Window, WindowSpec
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


def _in_group() -> WindowSpec:
    """Each (ranking, group)'s rows in position order: the window of a group's running count c."""
    return Window.partitionBy("ranking", "group").orderBy("rank")


def _order_terms(order: str) -> dict[str, Column]:
    """Along a ranking, at order i: the terms w_i / i of H, w_i and w_i ln i (w_i = 1/log2(i+1))."""
    i = sf.col(order).cast("double")
    w = 1.0 / sf.log2(i + 1.0)
    return {"t": w / i, "w": w, "wl": w * sf.log(i)}


def _step(c: Column) -> Column:
    """The step of c ln c when a group's running count goes from c - 1 to c."""
    return sf.when(c > 1, c * sf.log(c) - (c - 1) * sf.log(c - 1)).otherwise(0.0)


def _mean_value(per_ranking: DataFrame, a: Column, b: Column) -> DataFrame:
    """The mean over rankings of max(0, (H(n) a - b - Σ w_i ln i) / Σ w_i), per ranking's sums."""
    value = (sf.col("t") * a - b - sf.col("wl")) / sf.col("w")
    return per_ranking.select(sf.greatest(value, sf.lit(0.0)).alias("ndkl")).agg(
        sf.avg("ndkl").alias("ndkl")
    )


def ndkl_by_hand(log: DataFrame) -> DataFrame:
    """NDKL's algorithm written directly in PySpark, without checks: the floor of its plan.

    The same sums as ``fa.fair.ndkl`` (its docstring's notes): each row's order i and the sum
    H(i - 1) of w_k / k before it in one window, its group's running count c in another, then
    sums per (ranking, group) and per ranking, and the mean over rankings.
    """
    along = Window.partitionBy("ranking").orderBy("rank")
    so_far = along.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    rows = (
        log.select("ranking", "rank", "group")
        .withColumn("i", sf.row_number().over(along))
        .withColumns(_order_terms("i"))
        .withColumn("before", sf.sum("t").over(so_far) - sf.col("t"))
        .withColumn("c", sf.row_number().over(_in_group()).cast("double"))
    )
    sums = [sf.sum(x).alias(x) for x in ("before", "t", "w", "wl")]
    per_group = rows.groupBy("ranking", "group").agg(
        sf.count(sf.lit(1)).alias("ng"),
        sf.sum(_step(sf.col("c")) * sf.col("before")).alias("ds"),
        *sums,
    )
    per_group = per_group.withColumn("n", sf.sum("ng").over(Window.partitionBy("ranking")))
    log_share = sf.log(sf.col("ng") / sf.col("n"))
    per_ranking = per_group.groupBy("ranking").agg(
        sf.sum(sf.col("ng") * sf.log("ng") - sf.col("ng") * log_share).alias("a"),
        sf.sum(sf.col("ds") - log_share * sf.col("before")).alias("b"),
        *(sf.sum(x).alias(x) for x in ("t", "w", "wl")),
    )
    return _mean_value(per_ranking, sf.col("a"), sf.col("b"))


def ndkl_given_positions(log: DataFrame, longest: int) -> DataFrame:
    """NDKL in one sort, given that every ranking's positions are 1..n with n <= ``longest``.

    No call knows this in advance: frameaudit would first have to prove it (an aggregation
    over every row) and keep the plan of :func:`ndkl_by_hand` for the rankings where it fails.
    Given it, the order i is the position and H(i - 1) comes from a table of 1..``longest``
    (with the totals H(n), Σ w_i and Σ w_i ln i at each length n); one window along each
    (ranking, group) gives the running count c, the group's last row (``lead`` is null) and
    the running sum R of H(i - 1). With D the ranking's own mix, Σ_j a_j = n ln n and
    Σ_j a_j H(j - 1) = Σ Δ(c ln c) H(i - 1) - Σ_g ln n_g R_g + ln n Σ H(i - 1), so the rows
    aggregate by ranking directly.
    """
    upto = Window.orderBy("i").rowsBetween(Window.unboundedPreceding, Window.currentRow)
    terms = _order_terms("i")
    table = (
        log.sparkSession.range(1, longest + 1)
        .select(sf.col("id").alias("i"))
        .select("i", *(sf.sum(term).over(upto).alias(name) for name, term in terms.items()))
        .withColumn("before", sf.col("t") - terms["t"])
    )
    in_group = _in_group()
    so_far = in_group.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    rows = (
        log.select("ranking", "rank", "group")
        .join(sf.broadcast(table.select(sf.col("i").alias("rank"), "before")), "rank")
        .select(
            "ranking",
            "before",
            sf.row_number().over(in_group).cast("double").alias("c"),
            sf.lead("rank").over(in_group).isNull().alias("last"),
            sf.sum("before").over(so_far).alias("run"),
        )
    )
    c = sf.col("c")
    per_ranking = rows.groupBy("ranking").agg(
        sf.count(sf.lit(1)).alias("n"),
        sf.sum(_step(c) * sf.col("before")).alias("b1"),
        sf.sum(sf.when(sf.col("last"), sf.log(c) * sf.col("run"))).alias("q"),
        sf.sum("before").alias("sb"),
    )
    at_length = table.select(sf.col("i").alias("n"), "t", "w", "wl")
    n = sf.col("n").cast("double")
    b = sf.col("b1") - sf.col("q") + sf.log(n) * sf.col("sb")
    return _mean_value(per_ranking.join(sf.broadcast(at_length), "n"), n * sf.log(n), b)


def in_position_order(log: DataFrame) -> DataFrame:
    """Each row's running count along its (ranking, group) by position, summed per group.

    The least an exact NDKL computes: the counts c of its c ln c terms need each group's rows
    in position order, so every row is shuffled by ranking and sorted.
    """
    counted = log.select("ranking", "group", sf.row_number().over(_in_group()).alias("c"))
    return counted.groupBy("ranking", "group").agg(sf.sum("c").alias("c"))


def _measured(
    name: str, call: Callable[[], DataFrame], bare: DataFrame, repeats: int, target: str
) -> str:
    """The table's line of a call: its median time, its run's, the bare query's, the ratio."""
    result = call()
    run(result)  # warm-up
    times: dict[str, list[float]] = {"call": [], "run": [], "bare": [], "ratio": []}
    for _ in range(repeats):
        times["bare"].append(seconds(lambda: run(bare)))
        times["call"].append(seconds(call))
        times["run"].append(seconds(lambda: run(result)))
        times["ratio"].append((times["call"][-1] + times["run"][-1]) / times["bare"][-1])
    call_time, ran, bare_time, ratio = (statistics.median(times[k]) for k in times)
    return f"| {name} | {call_time:.2f} | {ran:.2f} | {bare_time:.2f} | {ratio:.1f}x | {target} |"


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
        function = getattr(fa.fair, metric)
        for by in (None, "ranking"):
            roles = {**roles_of(metric), "by": by}
            name = metric if by is None else f"{metric}, by={by}"
            target = f"≤ {TARGETS[metric]:.0f}x" if metric in TARGETS and by is None else ""
            call = functools.partial(function, log, **roles)
            lines.append(_measured(name, call, bare_query, repeats, target))
            print(lines[-1], flush=True)
        if metric == "ndkl":
            by_hand = ndkl_by_hand(log).first()
            ours = function(log, **roles_of(metric)).first()
            assert by_hand is not None
            assert ours is not None
            assert math.isclose(by_hand[0], ours[0], rel_tol=1e-12), (by_hand, ours)
            longest = log.groupBy("ranking").count().agg(sf.max("count")).first()
            assert longest is not None
            given = ndkl_given_positions(log, longest[0]).first()
            assert given is not None
            assert math.isclose(given[0], ours[0], rel_tol=1e-12), (given, ours)
            floors = {
                "ndkl by hand, no checks": functools.partial(ndkl_by_hand, log),
                "ndkl by hand, positions given, no checks": functools.partial(
                    ndkl_given_positions, log, longest[0]
                ),
                "rows in position order only": functools.partial(in_position_order, log),
            }
            for name, floor in floors.items():
                lines.append(_measured(name, floor, bare_query, repeats, ""))
                print(lines[-1], flush=True)
    spark.stop()
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:3]))


if __name__ == "__main__":
    main()
