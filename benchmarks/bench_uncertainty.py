"""Bootstrap intervals: their cost against the point estimate and against a hand-written loop.

    python benchmarks/bench_uncertainty.py            # full sizes (a few minutes)
    python benchmarks/bench_uncertainty.py --quick    # small smoke run

Part 1, 10,000 rankings x 100 items (1M rows), ``ranking=`` the query: every ranking metric
with ``ci=0.95, n_boot=1000`` against the same call without ``ci`` (target: within 10x), and
EXP's interval against what a user would otherwise write: 1,000 point estimates, each on a
resample of the rankings drawn with numpy (timed on 20 of them and scaled; target: the
in-engine bootstrap at least 100x faster). Part 2, 10M rows (100,000 rankings x 100 items):
EXP with ``n_boot=1000`` in a fresh process, its peak resident memory against the input's
size. Results are printed and written to benchmarks/results/uncertainty.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import polars as pl
from bench_ranking import METRICS, best_of, roles_of  # the ranking benchmark's timing, roles

import frameaudit as fa
from frameaudit._engine.resample import with_poisson_counts
from frameaudit.datasets import biased_rankings

RESULTS = Path(__file__).parent / "results" / "uncertainty.md"


def rankings(num_rankings: int, num_items: int) -> pl.DataFrame:
    log = biased_rankings([0.3, 0.7], num_items, phi=0.5, num_rankings=num_rankings, seed=0)
    rng = np.random.default_rng(1)
    relevance = rng.random(log.height)
    return log.with_columns(
        pl.Series("relevance", relevance),
        pl.Series("relevant", (relevance > 0.5).astype(np.int64)),
        pl.Series("ctr", rng.random(log.height)),
    )


def call(metric: str, log: pl.DataFrame, **kwargs: Any) -> pl.DataFrame:
    return getattr(fa.fair, metric)(log, **roles_of(metric), **kwargs)


def resampled_loop(log: pl.DataFrame, calls: int) -> float:
    """Seconds for ``calls`` point estimates, each on a numpy resample of the rankings."""
    by_ranking = log.partition_by("ranking", as_dict=True)
    keys = list(by_ranking)
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for _ in range(calls):
        drawn = rng.integers(0, len(keys), len(keys))
        sample = pl.concat(
            [by_ranking[keys[i]].with_columns(ranking=pl.lit(j)) for j, i in enumerate(drawn)]
        )
        call("exp", sample)
    return time.perf_counter() - start


def draws_alone(num_units: int, n_boot: int, repeats: int) -> float:
    """Seconds to draw every (unit, replicate) count and sum them: no data, no metric.

    The floor of any bootstrap over ``num_units`` units: the counter-based generator that
    gives the same counts on every engine, run by Polars over units x replicates pairs.
    """
    units = nw.from_native(pl.LazyFrame({"unit": range(num_units)}))
    replicates = nw.from_native(pl.LazyFrame({"replicate": range(n_boot)}))
    pairs = units.join(replicates, how="cross")
    drawn = with_poisson_counts(pairs, "unit", "replicate", 0, "count")
    total = drawn.select(nw.col("count").sum())
    return best_of(total.collect, repeats)


def memory_run(num_rankings: int, n_boot: int) -> dict[str, float]:
    """Run in a fresh process: input size, time and peak resident memory above the input's
    (sampled while the call runs) of one EXP interval."""
    code = f"""
import json, os, threading, time
import polars as pl
import frameaudit as fa
from frameaudit.datasets import biased_rankings
log = biased_rankings([0.3, 0.7], 100, phi=0.5, num_rankings={num_rankings}, seed=0)
size = log.estimated_size()
page = os.sysconf("SC_PAGE_SIZE")
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * page
base, peak, done = resident(), [0], threading.Event()
def watch():  # the resident memory, sampled every 5 ms while the call runs
    while not done.is_set():
        peak[0] = max(peak[0], resident())
        time.sleep(0.005)
watcher = threading.Thread(target=watch)
watcher.start()
start = time.perf_counter()
fa.fair.exp(log, ranking="ranking", size="rows", group="group", ci=0.95, n_boot={n_boot})
seconds = time.perf_counter() - start
done.set()
watcher.join()
print(json.dumps({{"rows": log.height, "size": size, "seconds": seconds,
                   "extra": max(peak[0] - base, 0)}}))
"""
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    num_rankings, big, repeats, loop_calls = (
        (500, 5_000, 1, 3) if args.quick else (10_000, 100_000, 3, 20)
    )
    n_boot = 1000
    log = rankings(num_rankings, 100)
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} on 2 cores with "
        "`python benchmarks/bench_uncertainty.py`"
        f"{' --quick' if args.quick else ''} (best of {repeats}).",
        "",
        f"Part 1: {num_rankings:,} rankings x 100 items ({log.height:,} rows), `ranking=` the "
        f"ranking, `ci=0.95, n_boot={n_boot}` against the same call without `ci` "
        "(target: within 10x).",
        "",
        "| metric | point estimate (s) | with interval (s) | ratio |",
        "|---|---:|---:|---:|",
    ]
    exp_interval = exp_point = 0.0
    for metric in METRICS:
        point = best_of(lambda m=metric: call(m, log), repeats)  # type: ignore[misc]
        interval = best_of(
            lambda m=metric: call(m, log, ci=0.95, n_boot=n_boot),  # type: ignore[misc]
            repeats,
        )
        if metric == "exp":
            exp_point, exp_interval = point, interval
        lines.append(f"| {metric} | {point:.3f} | {interval:.3f} | {interval / point:.1f}x |")
        print(lines[-1], flush=True)
    draws = draws_alone(num_rankings, n_boot, repeats)
    pairs = num_rankings * n_boot
    lines += [
        "",
        f"The floor: drawing the Poisson counts of the {pairs:,} (ranking, replicate) pairs "
        f"alone (summed; no data, no metric) takes {draws:.3f} s, **{draws / exp_point:.1f}x** "
        f"EXP's point estimate ({draws / pairs * 1e9:.0f} ns a pair). A metric's groups "
        "multiply the pairs its interval aggregates (two groups here).",
    ]
    print(lines[-1], flush=True)
    loop = resampled_loop(log, loop_calls) * n_boot / loop_calls
    lines += [
        "",
        f"EXP's interval against {n_boot:,} point estimates on numpy resamples of the rankings "
        f"(timed on {loop_calls} and scaled): {loop:.1f} s against {exp_interval:.2f} s, "
        f"**{loop / exp_interval:.0f}x** faster (target: at least 100x).",
    ]
    print(lines[-1], flush=True)
    memory = memory_run(big, n_boot)
    lines += [
        "",
        f"Part 2: {memory['rows']:,.0f} rows ({big:,} rankings x 100 items), EXP with "
        f"`n_boot={n_boot}` in a fresh process: {memory['seconds']:.1f} s, peak extra resident "
        f"memory {memory['extra'] / 2**30:.2f} GiB, {memory['extra'] / memory['size']:.1f}x "
        f"the input's {memory['size'] / 2**30:.2f} GiB.",
    ]
    print(lines[-1], flush=True)
    RESULTS.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
