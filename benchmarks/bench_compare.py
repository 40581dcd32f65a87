"""The cost of a comparison: against the point estimate, and against the loop a user would write.

    python benchmarks/bench_compare.py            # 2 systems x 10,000 queries x 100 items
    python benchmarks/bench_compare.py --quick    # 2 systems x 1,000 queries x 100 items

Two rankers of the same queries (2,000,000 rows in memory, Polars) compared on EXP with
``n_boot=1000`` and ``n_perm=1000`` (every combo and both groups), each call in a fresh process
with its peak resident memory:

* the point estimate of the two systems (``fa.fair.exp(..., by="system")``);
* ``fa.compare.ranking(..., metrics=["exp"])``: target within 25x the point estimate, in
  bounded memory;
* the loop a user would write without it: per bootstrap replicate, the queries drawn with
  replacement (numpy) and EXP's MinMaxRatio of each system on the drawn rows; per
  permutation, the systems' labels exchanged on a random half of the queries and EXP again.
  Timed over a few iterations and multiplied up to the 2,000 the comparison does (it gives one
  combo, the comparison gives seven and every group). Target: the comparison at least 100x
  faster.

The table is printed and written to benchmarks/results/compare.md (the performance page shows
it).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).parent))

from bench_scale import GIB, sampled

RESULTS = Path(__file__).parent / "results" / "compare.md"
REPLICATES = 1000
LOOPED = 4  # the user loop's timed iterations of each kind

_SETUP = """
import numpy as np
import polars as pl
import frameaudit as fa
frame = pl.read_parquet({path!r})
"""

_POINT = 'fa.fair.exp(frame, ranking="query", size="rows", by="system")'
_COMPARE = (
    'fa.compare.ranking(frame, system="system", ranking="query", size="rows", '
    f'metrics=["exp"], n_boot={REPLICATES}, n_perm={REPLICATES}).table'
)
# the loop a user writes: one metric call per system on each resampled or relabelled frame
_LOOP_SETUP = """
rng = np.random.default_rng(0)
queries = frame["query"].unique().sort()
def exp_of(rows):
    return fa.fair.exp(rows, ranking="query", size="rows", by="system").sort("system")["exp"]
def replicate():
    drawn = pl.DataFrame({"query": rng.choice(queries.to_numpy(), len(queries))})
    drawn = drawn.with_row_index("copy")
    rows = drawn.join(frame, on="query").with_columns(pl.col("copy").alias("query"))
    values = exp_of(rows)
    return values[1] - values[0]
def permutation():
    flipped = pl.DataFrame({"query": queries, "flip": rng.random(len(queries)) < 0.5})
    rows = frame.join(flipped, on="query").with_columns(
        pl.when(pl.col("flip") & (pl.col("system") == "A")).then(pl.lit("B"))
        .when(pl.col("flip")).then(pl.lit("A"))
        .otherwise(pl.col("system")).alias("system"))
    values = exp_of(rows)
    return values[1] - values[0]
"""
_LOOP = f"[f() for f in [replicate] * {LOOPED} + [permutation] * {LOOPED}]"


def rankers(queries: int, items: int, seed: int = 0) -> pl.DataFrame:
    """Two rankers of the same queries' items; group a (40%) pushed down by 0.3 and 0.2."""
    rng = np.random.default_rng(seed)
    n = queries * items
    is_a = rng.random((queries, items)) < 0.4
    frames = []
    for system, push in (("A", 0.3), ("B", 0.2)):
        order = np.argsort(rng.random((queries, items)) + push * is_a, axis=1)
        ranked = np.take_along_axis(is_a, order, axis=1)
        frames.append(
            pl.DataFrame(
                {
                    "system": system,
                    "query": np.repeat(np.arange(queries), items),
                    "rank": np.tile(np.arange(1, items + 1), queries),
                    "group": np.where(ranked.ravel(), "a", "b"),
                }
            )
        )
        assert frames[-1].height == n
    return pl.concat(frames)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 queries (a smoke run)")
    args = parser.parse_args()
    queries, items = (1_000 if args.quick else 10_000), 100
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rankers.parquet"
        rankers(queries, items).write_parquet(path)
        setup = _SETUP.format(path=str(path))
        point = sampled(setup, _POINT)
        print("point estimate", point, flush=True)
        comparison = sampled(setup, _COMPARE)
        print("comparison", comparison, flush=True)
        loop = sampled(setup + _LOOP_SETUP, _LOOP)
        print("user loop", loop, flush=True)
    per_iteration = loop["seconds"] / (2 * LOOPED)
    looped = per_iteration * 2 * REPLICATES
    rows = 2 * queries * items
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} with `python benchmarks/bench_compare.py`: two "
        f"systems x {queries:,} queries x {items} items ({rows:,} rows, Polars, in memory), "
        f"EXP with `n_boot={REPLICATES}` and `n_perm={REPLICATES}`, each call in a fresh "
        "process. The user loop is timed over "
        f"{2 * LOOPED} iterations and multiplied up to {2 * REPLICATES:,}.",
        "",
        "| call | time (s) | x point estimate | peak memory (GiB) |",
        "|---|---:|---:|---:|",
        f"| point estimate of both systems | {point['seconds']:.2f} | 1.0 "
        f"| {point['peak'] / GIB:.2f} |",
        f"| `fa.compare.ranking(metrics=['exp'])` | {comparison['seconds']:.1f} "
        f"| {comparison['seconds'] / point['seconds']:.1f} | {comparison['peak'] / GIB:.2f} |",
        f"| the user loop (one combo) | {looped:,.0f} | {looped / point['seconds']:,.0f} "
        f"| {loop['peak'] / GIB:.2f} |",
        "",
        f"Targets: the comparison within 25x the point estimate "
        f"({comparison['seconds'] / point['seconds']:.1f}x) and at least 100x faster than the "
        f"user loop ({looped / comparison['seconds']:.0f}x).",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.quick:
        RESULTS.write_text(text)


if __name__ == "__main__":
    main()
