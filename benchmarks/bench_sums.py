"""The price of the same bits: a grouped float sum, exact (``exact_sums``) against the engine's.

    python benchmarks/bench_sums.py            # 10^7 rows
    python benchmarks/bench_sums.py --quick    # 10^6 rows

frameaudit sums floats in fixed point on Polars and DuckDB so that a call gives the same bits
on every run (see Concepts, "The same bits on every run"). This measures that step alone:
``rows`` uniform values in 1,000 groups (and in 100,000), one float column summed per group,
the engine's own ``sum`` against ``exact_sums``: on Polars in memory and streaming (a LazyFrame
collected with each engine), on DuckDB (a relation from Arrow, fetched to Arrow). Each time is
the best of 5 runs after one warm-up. The same sums are then run 20 times each: the number of
different results, and whether the exact one equals ``math.fsum`` of every group. Results are
printed and written to benchmarks/results/sums.md.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import narwhals.stable.v2 as nw
import numpy as np
import polars as pl

from frameaudit._engine import exact_sums
from frameaudit._expr import aggregate

RESULTS = Path(__file__).parent / "results" / "sums.md"


def best(fn: Callable[[], Any], runs: int = 5) -> float:
    """Seconds of ``fn``: the best of ``runs`` after one warm-up."""
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def queries(frame: pl.DataFrame) -> dict[str, dict[str, Callable[[], pl.DataFrame]]]:
    """Per engine, the plain and the exact grouped sum, each giving a Polars frame by group."""
    lazy = nw.from_native(frame.lazy())
    relation = nw.from_native(duckdb.connect().from_arrow(frame.to_arrow()))

    def polars(exact: bool, engine: str) -> Callable[[], pl.DataFrame]:
        plan = (
            exact_sums(lazy, ["g"], ["x"]) if exact else aggregate(lazy, ["g"], nw.col("x").sum())
        )
        native = plan.to_native()
        return lambda: native.collect(engine=engine).sort("g")

    def on_duckdb(exact: bool) -> Callable[[], pl.DataFrame]:
        plan = (
            exact_sums(relation, ["g"], ["x"])
            if exact
            else aggregate(relation, ["g"], nw.col("x").sum())
        )
        native = plan.to_native()
        return lambda: pl.from_arrow(native.to_arrow_table()).sort("g")  # type: ignore[return-value]

    return {
        "Polars in memory": {"sum": polars(False, "in-memory"), "exact": polars(True, "in-memory")},
        "Polars streaming": {"sum": polars(False, "streaming"), "exact": polars(True, "streaming")},
        "DuckDB": {"sum": on_duckdb(False), "exact": on_duckdb(True)},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    rows = 10**6 if parser.parse_args().quick else 10**7
    rng = np.random.default_rng(0)
    lines = [
        f"Measured with `python benchmarks/bench_sums.py`{' --quick' if rows < 10**7 else ''}: "
        f"{rows:,} uniform floats in [0, 1000), one column summed per group; the best of 5 runs; "
        "then 20 runs of each sum: the distinct results, and whether every group equals `math.fsum`.",
        "",
        "| engine | groups | engine sum (s) | exact sum (s) | × | distinct results in 20 runs: engine / exact | exact = fsum |",
        "|---|---:|---:|---:|---:|---|---|",
    ]
    for groups in (1_000, 100_000):
        g = rng.integers(0, groups, rows)
        x = rng.random(rows) * 1000
        frame = pl.DataFrame({"g": g, "x": x})
        order = np.argsort(g, kind="stable")
        bounds = np.searchsorted(g[order], np.arange(groups + 1))
        ordered = x[order]
        fsum = np.array([math.fsum(ordered[bounds[i] : bounds[i + 1]]) for i in range(groups)])
        for engine, pair in queries(frame).items():
            seconds = {name: best(fn) for name, fn in pair.items()}
            distinct = {
                name: len({fn()["x"].to_numpy().tobytes() for _ in range(20)})
                for name, fn in pair.items()
            }
            equal = bool(np.array_equal(pair["exact"]()["x"].to_numpy(), fsum))
            line = (
                f"| {engine} | {groups:,} | {seconds['sum']:.3f} | {seconds['exact']:.3f} "
                f"| {seconds['exact'] / seconds['sum']:.1f} | {distinct['sum']} / {distinct['exact']} "
                f"| {'yes' if equal else 'no'} |"
            )
            print(line, flush=True)
            lines.append(line)
    RESULTS.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
