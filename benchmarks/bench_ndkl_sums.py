"""What the exact sums cost NDKL: its time with them, with fewer scale windows, and without.

    python benchmarks/bench_ndkl_sums.py

NDKL by ranking and group on 100,000 rankings x 100 items (10^7 rows, the scale benchmark's
files) on Polars streaming, in one process, best of two, against the bare pass (the sum of
1/log2(rank+1) by ranking and group) measured in the same run. The variants change
``frameaudit._engine.plans`` for the measurement only: the three scale windows of the exact
sums (the shipped code), two of them, one, and none (the engines' float sums, whose last bits
depend on the order of the rows). Results are printed and written to
benchmarks/results/ndkl_sums.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import polars as pl
from bench_spark import write_rankings

import frameaudit as fa
from frameaudit._engine import plans

RESULTS = Path(__file__).parent / "results" / "ndkl_sums.md"
VARIANTS: dict[str, tuple[tuple[int, ...], bool]] = {
    "exact sums, three windows (shipped)": ((93, 60, 27), True),
    "exact sums, two windows": ((93, 53), True),
    "exact sums, one window": ((60,), True),
    "float sums": ((93, 60, 27), False),
}


def best_of_two(compute: Callable[[], object]) -> float:
    times = []
    for _ in range(2):
        start = time.perf_counter()
        compute()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    lf = pl.scan_parquet(str(write_rankings(100_000) / "*.parquet"))
    bare = lf.group_by("ranking", "group").agg((1.0 / (pl.col("rank") + 1).log(2)).sum())
    bare_time = best_of_two(lambda: bare.collect(engine="streaming"))
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} with `python benchmarks/bench_ndkl_sums.py`: "
        "NDKL by ranking and group, 10^7 rows from Parquet, Polars streaming, best of two; "
        f"the bare pass took {bare_time:.2f} s.",
        "",
        "| sums | time (s) | x bare |",
        "|---|---:|---:|",
    ]
    kept = plans._WINDOWS, plans._FIXED
    try:
        for label, (windows, exact) in VARIANTS.items():
            plans._WINDOWS = windows
            plans._FIXED = kept[1] if exact else ()
            call = fa.fair.ndkl(lf, ranking="ranking", group="group")
            seconds = best_of_two(lambda call=call: call.collect(engine="streaming"))
            lines.append(f"| {label} | {seconds:.2f} | {seconds / bare_time:.1f}x |")
            print(lines[-1], flush=True)
    finally:
        plans._WINDOWS, plans._FIXED = kept
    RESULTS.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
