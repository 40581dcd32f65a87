"""Bounded memory at scale: every ranking metric on Polars streaming from Parquet.

    python benchmarks/bench_scale.py            # 10^8 rows (1M rankings x 100 items; ~15 min)
    python benchmarks/bench_scale.py --quick    # 10^6 rows, a smoke run

The rankings are written in files of 100,000 rankings under /tmp (never held in memory at
once; the same files as the Spark benchmark, ``bench_spark.write_rankings``), scanned with
``pl.scan_parquet``, and each metric is called lazily (``ranking=`` the ranking, ``group=``
the group, the roles of ``ROLES``) and collected with ``engine="streaming"``, each in a fresh
process that samples its resident memory (``/proc/self/statm``, every 5 ms). The reference is
the bare streaming pass over the same files in the same run: the sum of 1/log2(rank+1) by
ranking and group. Every call runs at a tenth of the size too: the growth of the peak between
the two sizes, per row, is the memory a row costs (about 0 for a call that streams). Targets:
peak resident memory under 2 GiB for every metric, EXP within 3x and NDKL within 10x of the
bare pass's time. Results are printed and written to benchmarks/results/scale.md; the files
this run wrote are deleted afterwards.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench_spark import DATA, METRICS, ROLES, write_rankings

RESULTS = Path(__file__).parent / "results" / "scale.md"
GIB = 2**30
TARGETS = {"exp": 3.0, "ndkl": 10.0}

# One measurement in a fresh process: the call (source text) on the scan, collected by streaming
_RUN = """
import json, os, threading, time
import polars as pl
import frameaudit as fa
page = os.sysconf("SC_PAGE_SIZE")
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * page
peak, done = [resident()], threading.Event()
def watch():
    while not done.is_set():
        peak[0] = max(peak[0], resident())
        time.sleep(0.005)
watcher = threading.Thread(target=watch, daemon=True)
watcher.start()
lf = pl.scan_parquet({path!r})
start = time.perf_counter()
result = ({call}).collect(engine="streaming")
seconds = time.perf_counter() - start
done.set()
watcher.join()
print(json.dumps({{"seconds": seconds, "peak": max(peak[0], resident()), "rows": result.height}}))
"""
BARE = (
    'lf.group_by("ranking", "group")'
    '.agg((1.0 / (pl.col("rank") + 1).cast(pl.Float64).log(2)).sum())'
)


def metric_call(metric: str) -> str:
    """The lazy call of ``metric`` on ``lf``, as source text."""
    roles = {"ranking": "ranking", **({} if metric == "iaa" else {"group": "group"})}
    roles |= ROLES.get(metric, {})
    arguments = ", ".join(f"{k}={v!r}" for k, v in roles.items())
    return f"fa.fair.{metric}(lf, rank='rank', {arguments})"


def measure(call: str, folder: Path) -> dict[str, float]:
    """Seconds and peak resident bytes of ``call`` collected by streaming, in a new process."""
    code = _RUN.format(path=str(folder / "*.parquet"), call=call)
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    result: dict[str, float] = json.loads(output.strip().splitlines()[-1])
    return result


def row(name: str, small: dict[str, float], full: dict[str, float], bare: float, rows: int) -> str:
    """A table row: time, its ratio to the bare pass, peak memory and its growth per row."""
    growth = (full["peak"] - small["peak"]) / (rows * 0.9)
    target = f" (target {TARGETS[name]:.0f}x)" if name in TARGETS else ""
    return (
        f"| {name} | {full['seconds']:.2f} | {full['seconds'] / bare:.1f}x{target} "
        f"| {small['peak'] / GIB:.2f} | {full['peak'] / GIB:.2f} | {max(growth, 0.0):.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--metrics", nargs="*", default=METRICS, choices=METRICS)
    args = parser.parse_args()
    num_rankings = 10_000 if args.quick else 1_000_000
    sizes = [num_rankings // 10, num_rankings]
    made = [n for n in sizes if not (DATA / f"{n}" / "_done").exists()]  # the others are kept
    folders = [write_rankings(n) for n in sizes]
    calls = {"bare pass": BARE} | {m: metric_call(m) for m in args.metrics}
    measured: dict[str, list[dict[str, float]]] = {}
    try:
        for name, call in calls.items():
            measured[name] = [measure(call, folder) for folder in folders]
            print(name, measured[name], flush=True)
    finally:
        for n in made:
            shutil.rmtree(DATA / f"{n}", ignore_errors=True)
    rows = num_rankings * 100
    bare = measured["bare pass"][1]["seconds"]
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} on 2 cores with `python benchmarks/bench_scale.py`"
        f"{' --quick' if args.quick else ''}: {num_rankings:,} rankings x 100 items "
        f"({rows:,} rows) in Parquet files, `pl.scan_parquet`, the lazy call, "
        '`.collect(engine="streaming")`, each call in a fresh process; the peak at a tenth of '
        "the rows too, and the growth of the peak per row between the two sizes. The bare pass: "
        "the sum of 1/log2(rank+1) by ranking and group over the same files. Target: peak "
        "under 2 GiB.",
        "",
        f"| call | time (s) | x bare | peak, {rows // 10:,} rows (GiB) | peak, {rows:,} rows "
        "(GiB) | bytes per row |",
        "|---|---:|---:|---:|---:|---:|",
        *(row(name, *measured[name], bare, rows) for name in calls),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.write_text(text)


if __name__ == "__main__":
    main()
