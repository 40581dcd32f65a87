"""An interval over rankings whose item ids are long: memory on each engine.

    python benchmarks/bench_long_ids.py

100 rankings of 20 items (2,000 rows) drawn from 400 items whose ids are 10,000 characters long
(20 MB of ids in all); EXP with ``item=`` (group sizes counting distinct items) and
``ci=0.9, n_boot=200``, on eager Polars, lazy Polars and a DuckDB relation, each in a fresh
process that samples its resident memory (``/proc/self/statm``, every 5 ms); the same calls
with 10-character ids are the baseline. An engine that paired each replicate with the ids
would hold n_boot copies of them (4 GB). Results are printed and written to
benchmarks/results/long_ids.md.
"""

from __future__ import annotations

import time
from pathlib import Path

from bench_scale import sampled  # a call measured in a fresh process

RESULTS = Path(__file__).parent / "results" / "long_ids.md"
GIB = 2**30

# the frame (``df``) and the engine's view of it (``frame``), then the call computed
_SETUP = """
import numpy as np, polars as pl, duckdb
import frameaudit as fa
rng = np.random.default_rng(0)
items = [("x" * {padding}) + f"{{i:010d}}" for i in range(400)]
rows = [
    (r, position + 1, items[i], "a" if i % 3 else "b")
    for r in range(100)
    for position, i in enumerate(rng.choice(400, size=20, replace=False))
]
df = pl.DataFrame(rows, schema=["query", "rank", "item", "group"], orient="row")
frame = {frame}
"""
ENGINES = {
    "polars eager": ("df", "{call}"),
    "polars lazy": ("df.lazy()", "({call}).collect()"),
    "duckdb": ("duckdb.connect().from_arrow(df.to_arrow())", "({call}).pl()"),
}
CALL = 'fa.fair.exp(frame, ranking="query", item="item", group="group", ci=0.9, n_boot=200)'


def measure(engine: str, padding: int) -> dict[str, float]:
    frame, compute = ENGINES[engine]
    return sampled(_SETUP.format(padding=padding, frame=frame), compute.format(call=CALL))


def main() -> None:
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} with `python benchmarks/bench_long_ids.py`: "
        "EXP with `item=`, `ci=0.9, n_boot=200` on 100 rankings of 20 items (2,000 rows); "
        "each call in a fresh process.",
        "",
        "| engine | peak, 10-character ids (GiB) | peak, 10,000-character ids (GiB) | "
        "growth (GiB) | time, 10-character ids (s) | time, 10,000-character ids (s) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for engine in ENGINES:
        short, long = measure(engine, 0), measure(engine, 9990)
        assert short["rows"] == long["rows"] == 1
        growth = (long["peak"] - short["peak"]) / GIB
        lines.append(
            f"| {engine} | {short['peak'] / GIB:.2f} | {long['peak'] / GIB:.2f} | "
            f"{growth:.2f} | {short['seconds']:.2f} | {long['seconds']:.2f} |"
        )
        print(lines[-1], flush=True)
    RESULTS.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
