"""Intervals on DuckDB: the bootstrap's plan with its shared steps computed once, or inlined.

    python benchmarks/bench_duckdb_bootstrap.py

DuckDB writes a relation as SQL whose steps are ``NOT MATERIALIZED`` common table expressions,
inlined at each reference; a bootstrap's steps read their inputs two or three times, so the
plan grows with every step. frameaudit rewrites a plan with replicates so that the steps read
more than once are materialized (``frameaudit._engine.plans.materialized_shared``). Each call
below runs in a fresh process (time and peak resident memory), once as shipped and once with
the rewrite switched off, in the same run:

* EXP with ``ci=0.95, n_boot=200`` on 10,000 rankings x 100 items (1,000,000 rows);
* the ranking report (the bundled ranking example, 600 rows) and the repro report (the
  bundled runs, 5,000 rows) with ``ci=0.9, n_boot=20``.

Results are printed and written to benchmarks/results/duckdb_bootstrap.md.
"""

from __future__ import annotations

import time
from pathlib import Path

from bench_scale import sampled  # a call measured in a fresh process

RESULTS = Path(__file__).parent / "results" / "duckdb_bootstrap.md"
GIB = 2**30

_SETUP = """
import numpy as np, polars as pl, duckdb
import frameaudit as fa
from frameaudit._engine import convert
if {inlined}:
    convert.materialized_shared = lambda relation, anchor: relation
rng = np.random.default_rng(0)
{data}
"""
CASES = {
    "EXP, 1,000,000 rows, n_boot=200": (
        "df = pl.DataFrame({'query': np.repeat(np.arange(10_000), 100), "
        "'rank': np.tile(np.arange(1, 101), 10_000), "
        "'group': rng.choice(['a', 'b'], 1_000_000)})\n"
        "frame = duckdb.connect().from_arrow(df.to_arrow())",
        "fa.fair.exp(frame, ranking='query', size='rows', ci=0.95, n_boot=200).pl()",
    ),
    "ranking report, 600 rows, n_boot=20": (
        "frame = duckdb.connect().from_arrow(fa.datasets.ranking_example().to_arrow())",
        "fa.report.ranking(frame, group=['gender', 'age'], ranking='query', item='item', "
        "relevance='relevance', ci=0.9, n_boot=20).summary",
    ),
    "repro report, 5,000 rows, n_boot=20": (
        "frame = duckdb.connect().from_arrow(fa.datasets.runs_example().to_arrow())",
        "fa.report.repro(frame, ci=0.9, n_boot=20).summary",
    ),
}


def main() -> None:
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} on 2 cores with "
        "`python benchmarks/bench_duckdb_bootstrap.py`: each call in a fresh process, the "
        "shared steps of the bootstrap's plan materialized (shipped) or inlined (DuckDB's "
        "default).",
        "",
        "| call | shipped (s) | inlined (s) | speed-up | shipped peak (GiB) | inlined peak (GiB) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, (data, compute) in CASES.items():
        shipped, inlined = (
            sampled(_SETUP.format(inlined=flag, data=data), compute) for flag in (False, True)
        )
        assert shipped["rows"] == inlined["rows"] > 0
        lines.append(
            f"| {name} | {shipped['seconds']:.2f} | {inlined['seconds']:.2f} | "
            f"{inlined['seconds'] / shipped['seconds']:.1f}x | {shipped['peak'] / GIB:.2f} | "
            f"{inlined['peak'] / GIB:.2f} |"
        )
        print(lines[-1], flush=True)
    RESULTS.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
