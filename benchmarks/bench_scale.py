"""Bounded memory at scale: the ranking metrics on Polars streaming and DuckDB from Parquet.

    python benchmarks/bench_scale.py            # 10^8 rows (1M rankings x 100 items; ~15 min)
    python benchmarks/bench_scale.py --quick    # 10^6 rows, a smoke run

The rankings are written in files of 100,000 rankings under /tmp (never held in memory at
once; the same files as the Spark benchmark, ``bench_spark.write_rankings``). Every ranking
metric (``ranking=`` the ranking, ``group=`` the group, the roles of ``bench_ranking.roles_of``) runs on Polars
streaming: the files scanned with ``pl.scan_parquet``, the lazy call collected with
``engine="streaming"``; EXP and NDKL also run on DuckDB with a memory limit and a spill
directory on disk. NDKL runs on Polars once more on its columns shuffled (the rows held in
memory once to shuffle them, about 3 GB at full size): rows out of order take its windows.
Each call runs in a fresh process that samples its resident memory
(``/proc/self/statm``, every 5 ms), at a tenth of the size and at full size: the growth of the
peak between the two, per row, is the memory a row costs (about 0 for a call that streams).
The reference on each engine is the bare pass over the same files in the same run: the sum of
1/log2(rank+1) by ranking and group. Targets on Polars: peak resident memory under 2 GiB for
every metric, EXP within 3x and NDKL within 10x of the bare pass's time. Results are printed
and written to benchmarks/results/scale.md; the files this run wrote are deleted afterwards.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl
from bench_ranking import METRICS, roles_of
from bench_spark import DATA, write_rankings

RESULTS = Path(__file__).parent / "results" / "scale.md"
GIB = 2**30
TARGETS = {"exp": 3.0, "ndkl": 10.0}
SPILL = Path("/tmp/frameaudit_duckdb_spill")

# One measurement in a fresh process: ``{setup}`` runs, then ``{compute}`` (an expression
# giving a frame) is timed, while a thread samples the resident memory from the start
_RUN = """
import json, os, threading, time
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
{setup}
start = time.perf_counter()
result = {compute}
seconds = time.perf_counter() - start
done.set()
watcher.join()
print(json.dumps({{"seconds": seconds, "peak": max(peak[0], resident()), "rows": len(result)}}))
"""


@dataclass(frozen=True)
class Engine:
    """How a measurement reads the files (``lf``), computes a call, and writes the bare pass."""

    source: str
    compute: str
    bare: str


POLARS = Engine(
    source="lf = pl.scan_parquet({path!r})",
    compute='({call}).collect(engine="streaming")',
    bare='lf.group_by("ranking", "group").agg((1.0 / (pl.col("rank") + 1).log(2)).sum())',
)
DUCKDB_MEMORY = "1GB"
DUCKDB = Engine(
    source="import duckdb\n"
    "con = duckdb.connect()\n"
    f"con.execute(\"SET memory_limit = '{DUCKDB_MEMORY}'\")\n"
    f"con.execute(\"SET temp_directory = '{SPILL}'\")\n"
    "lf = con.read_parquet({path!r})",
    compute="({call}).fetchall()",
    bare="con.sql('select ranking, \"group\", sum(1.0 / log2(rank + 1)) from lf group by all')",
)
ENGINES = {"Polars streaming": POLARS, "DuckDB": DUCKDB}
DESCRIPTIONS = {
    "Polars streaming": '`pl.scan_parquet`, the lazy call, `.collect(engine="streaming")`. '
    "Targets: peak under 2 GiB, EXP within 3x and NDKL within 10x of the bare pass.",
    "DuckDB": f"a connection with `memory_limit = '{DUCKDB_MEMORY}'` and a `temp_directory` "
    "on disk, `con.read_parquet`, the call on the relation, `.fetchall()`; the bare pass in SQL.",
}
ON_DUCKDB = ["exp", "ndkl"]
UNSORTED = "ndkl, rows shuffled"


def metric_call(metric: str) -> str:
    """The lazy call of ``metric`` on ``lf``, as source text."""
    arguments = ", ".join(f"{k}={v!r}" for k, v in roles_of(metric).items())
    return f"fa.fair.{metric}(lf, rank='rank', {arguments})"


def measure(engine: Engine, call: str, folder: Path) -> dict[str, float]:
    """Seconds and peak resident bytes of ``call`` computed on ``engine``, in a new process."""
    setup = "import polars as pl\nimport frameaudit as fa\n"
    setup += engine.source.format(path=str(folder / "*.parquet"))
    return sampled(setup, engine.compute.format(call=call))


def sampled(setup: str, compute: str) -> dict[str, float]:
    """In a new process: ``setup`` (source text) run, then the expression ``compute`` (giving a
    frame) timed; its seconds, the peak resident bytes from the start, and its rows."""
    code = _RUN.format(setup=setup, compute=compute)
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    result: dict[str, float] = json.loads(output.strip().splitlines()[-1])
    return result


def in_parts(
    description: str, title: str, parts: Sequence[Callable[[], list[str]]], results: Path
) -> None:
    """A benchmark of numbered parts: ``--part N`` runs one, the default all of them (and
    writes ``results``); the tables are printed under ``title``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--part", choices=[*map(str, range(1, len(parts) + 1)), "all"], default="all"
    )
    chosen = parser.parse_args().part
    lines = [f"# {title}", ""]
    for number, part in enumerate(parts, start=1):
        if chosen in (str(number), "all"):
            lines += [*part(), ""]
    text = "\n".join(lines)
    print(text)
    if chosen == "all":
        results.write_text(text)


def row(
    name: str, sizes: list[dict[str, float]], bare: float, rows: int, target: float | None
) -> str:
    """A table row: time, its ratio to the bare pass, peak memory and its growth per row."""
    small, full = sizes
    growth = (full["peak"] - small["peak"]) / (rows * 0.9)
    aim = f" (target {target:.0f}x)" if target else ""
    return (
        f"| {name} | {full['seconds']:.2f} | {full['seconds'] / bare:.1f}x{aim} "
        f"| {small['peak'] / GIB:.2f} | {full['peak'] / GIB:.2f} | {max(growth, 0.0):.0f} |"
    )


def write_shuffled(folder: Path) -> Path:
    """NDKL's columns of the rankings in ``folder``, the rows in random order, made once."""
    shuffled = folder.with_name(f"{folder.name}_shuffled")
    if (shuffled / "_done").exists():
        return shuffled
    shutil.rmtree(shuffled, ignore_errors=True)
    shuffled.mkdir(parents=True)
    rows = pl.scan_parquet(folder / "*.parquet").select("ranking", "rank", "group").collect()
    rows = rows.sample(fraction=1.0, shuffle=True, seed=0)
    for i, part in enumerate(rows.iter_slices(n_rows=-(-rows.height // 10))):
        part.write_parquet(shuffled / f"part-{i}.parquet")
    (shuffled / "_done").touch()
    return shuffled


def table(
    engine: Engine, metrics: list[str], folders: list[Path], rows: int, shuffled: list[Path]
) -> list[str]:
    """The measured table of ``engine``: the bare pass and ``metrics``, at both sizes.

    With ``shuffled`` folders, NDKL again on the rows in random order (its windows).
    """
    calls = {"bare pass": engine.bare} | {m: metric_call(m) for m in metrics}
    measured: dict[str, list[dict[str, float]]] = {}
    for name, call in calls.items():
        measured[name] = [measure(engine, call, folder) for folder in folders]
        print(name, measured[name], flush=True)
    if shuffled:
        calls[UNSORTED] = metric_call("ndkl")
        measured[UNSORTED] = [measure(engine, calls[UNSORTED], folder) for folder in shuffled]
        print(UNSORTED, measured[UNSORTED], flush=True)
    # the reference again after the metrics, the faster of the two: one slow run of it
    # (another process on the machine) would skew every ratio
    again = measure(engine, engine.bare, folders[1])
    if again["seconds"] < measured["bare pass"][1]["seconds"]:
        measured["bare pass"][1] = again
    bare = measured["bare pass"][1]["seconds"]
    return [
        f"| call | time (s) | x bare | peak, {rows // 10:,} rows (GiB) | peak, {rows:,} rows "
        "(GiB) | bytes per row |",
        "|---|---:|---:|---:|---:|---:|",
        *(
            row(name, measured[name], bare, rows, TARGETS.get(name) if engine is POLARS else None)
            for name in calls
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--metrics", nargs="*", default=METRICS, choices=METRICS)
    args = parser.parse_args()
    num_rankings = 10_000 if args.quick else 1_000_000
    sizes = [num_rankings // 10, num_rankings]
    made = [n for n in sizes if not (DATA / f"{n}" / "_done").exists()]  # the others are kept
    folders = [write_rankings(n) for n in sizes]
    shuffled = [write_shuffled(folder) for folder in folders] if "ndkl" in args.metrics else []
    rows = num_rankings * 100
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} on 2 cores with `python benchmarks/bench_scale.py`"
        f"{' --quick' if args.quick else ''}: {num_rankings:,} rankings x 100 items "
        f"({rows:,} rows) in Parquet files, each call in a fresh process; the peak at a tenth "
        "of the rows too, and the growth of the peak per row between the two sizes. The bare "
        "pass: the sum of 1/log2(rank+1) by ranking and group over the same files.",
    ]
    try:
        for name, engine in ENGINES.items():
            metrics = args.metrics if engine is POLARS else ON_DUCKDB
            lines += ["", f"**{name}**: {DESCRIPTIONS[name]}", ""]
            lines += table(engine, metrics, folders, rows, shuffled if engine is POLARS else [])
    finally:
        for n in made:
            shutil.rmtree(DATA / f"{n}", ignore_errors=True)
        for folder in shuffled:
            shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(SPILL, ignore_errors=True)
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.write_text(text)


if __name__ == "__main__":
    main()
