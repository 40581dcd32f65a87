"""The ranking report's cost against the metric calls it shows, and on a search log.

    python benchmarks/bench_report.py            # 10,000 rankings x 100 items (1M rows)
    python benchmarks/bench_report.py --quick    # small smoke run
    python benchmarks/bench_report.py --against /tmp/before   # and the report at another checkout
    python benchmarks/bench_report.py --clustering-against /tmp/before   # the clustering report

Part 1: ``fa.report.ranking`` runs each group metric once (per group, ``combo=None``; every
combo from the same per-group values, under ``ci=`` from the same replicates), runs NDKL (mean
and per ranking) and IAA, and counts each group's rows per position bucket for its chart. Its cost is
compared with the sum of the metric calls it shows (each group metric per group and with every
combo, NDKL, AWRF_JS, nDCG and IAA; target: at most about 2x), without and with intervals
(``ci=0.95, n_boot=200``).

Part 2, a search log of 300,000 rows (12,000 queries x 25 results from a catalogue of
240,000 items, which recur in 1.25 queries on average): EXP with ``ci=0.95, n_boot=1000`` and
``item=`` against the same call counting rows (target: within 3x), and the whole report with
intervals (``ci=0.95, n_boot=1000``) in a fresh process (targets: under a minute, under 2 GiB
peak). Results are printed and written to benchmarks/results/report.md.

``--against`` adds the report with intervals (``ci=0.95, n_boot=200``) at this checkout and at
another, each in a subprocess, alternating, best of two: on Polars over Part 1's log and on
DuckDB over 500 of its rankings.

``--clustering-against`` times only the clustering report of the built-in example (2,000
points, 4 clusters), without and with intervals (``ci=0.95, n_boot=200``), on Polars and
DuckDB, here and at another checkout in the same way, and writes
benchmarks/results/clustering_report.md.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import polars as pl
from bench_calls import HERE, best_at, commit_of  # a call at another checkout
from bench_ranking import best_of, tidy_data  # the same timing and data as the ranking benchmark
from bench_scale import Engine, measure  # a call in a fresh process, with its peak memory

import frameaudit as fa
from frameaudit.report._ranking import group_calls

RESULTS = Path(__file__).parent / "results" / "report.md"
CLUSTERING_RESULTS = RESULTS.with_name("clustering_report.md")
ROLES: dict[str, Any] = {"rank": "rank", "group": "group", "ranking": "ranking", "item": "item"}
COLUMNS = {"relevance": "relevance", "ctr": "ctr", "relevant": "relevant"}


def metric_calls(log: Any, boot: dict[str, Any]) -> None:
    """The calls whose results the report shows, each made once, with the report's arguments.

    Each group metric per group and with every combo (the report's registry-driven calls),
    NDKL (mean and per ranking), AWRF_JS, nDCG and IAA.
    """
    given = {**COLUMNS, "p": 0.5, "decay": 0.5, "size": None}
    for declared, arguments in group_calls(ROLES, given).values():
        declared.function(log, **arguments, combo=None, **boot)
        declared.function(log, **arguments, combo=list(fa.fair.COMBOS), **boot)
    fa.fair.ndkl(log, **ROLES, **boot)
    fa.fair.ndkl(log, **ROLES, by="ranking")
    fa.fair.awrf_js(log, **ROLES, **boot)
    positions = {"rank": "rank", "ranking": "ranking", "item": "item"}
    fa.fair.ndcg(log, **positions, relevance="relevance", **boot)
    fa.fair.iaa(log, **positions, relevance="relevance", **boot)


def report_seconds(rankings: int) -> dict[str, Any]:
    """The report with intervals over ``rankings`` x 100 rows: on Polars, and on DuckDB over 500."""
    fa.report._tables.SHOW_PROGRESS.set(False)
    boot = {"ci": 0.95, "n_boot": 200}
    log = tidy_data(rankings, 100)
    small = tidy_data(500, 100).to_arrow()
    return {
        "frameaudit": str(Path(fa.__file__).resolve()),
        "Polars": best_of(lambda: fa.report.ranking(log, **ROLES, **COLUMNS, **boot), 1),
        "DuckDB": best_of(
            lambda: fa.report.ranking(duckdb.from_arrow(small), **ROLES, **COLUMNS, **boot), 1
        ),
    }


def ab_table(
    other: Path, call: str, intro: str, *, first: str, rows: dict[str, str], digits: int
) -> list[str]:
    """``call``'s times here and at ``other`` (:func:`bench_calls.best_at`), as a table.

    ``intro`` may name ``{commit}`` and ``{day}``; ``rows``: each row's label → the key of its
    time in ``call``'s result; ``first``: the label column's heading.
    """
    runs = [HERE, other.resolve()]
    best = best_at(runs, call)
    commit = commit_of(other)
    lines = [
        intro.format(commit=commit, day=time.strftime("%Y-%m-%d")),
        "",
        f"| {first} | seconds | at {commit} (s) | this / {commit} |",
        "|---|---:|---:|---:|",
    ]
    for label, key in rows.items():
        mine, theirs = best[HERE][key], best[runs[1]][key]
        lines.append(f"| {label} | {mine:.{digits}f} | {theirs:.{digits}f} | {mine / theirs:.2f} |")
    return lines


def against(other: Path, rankings: int) -> list[str]:
    """The report with intervals here and at ``other``: a table of the two and their ratio."""
    intro = (
        "The report with intervals (`ci=0.95, n_boot=200`) at this checkout and at {commit}, "
        "measured {day} with `--against <a checkout of {commit}>` (best of two, alternating):"
    )
    rows = {f"Polars, {rankings * 100:,}": "Polars", "DuckDB, 50,000": "DuckDB"}
    call = f"bench_report.report_seconds({rankings})"
    return ab_table(other, call, intro, first="engine, rows", rows=rows, digits=2)


CLUSTERING_CASES = {
    "Polars, no interval": ("polars", {}),
    "Polars, ci=0.95, n_boot=200": ("polars", {"ci": 0.95, "n_boot": 200}),
    "DuckDB, no interval": ("duckdb", {}),
    "DuckDB, ci=0.95, n_boot=200": ("duckdb", {"ci": 0.95, "n_boot": 200}),
}


def clustering_seconds() -> dict[str, Any]:
    """The clustering report of the built-in example in each case of CLUSTERING_CASES."""
    points = fa.datasets.clustering_example().with_row_index("id")
    times: dict[str, Any] = {"frameaudit": str(Path(fa.__file__).resolve())}
    for case, (engine, boot) in CLUSTERING_CASES.items():
        frame = duckdb.from_arrow(points.to_arrow()) if engine == "duckdb" else points
        times[case] = best_of(
            lambda frame=frame, boot=boot: fa.report.clustering(
                frame, a="a", b="b", point="id", seed=0, **boot
            ),
            5,
        )
    return times


def clustering_against(other: Path) -> str:
    """The clustering report here and at ``other`` (alternating, best of two): a table."""
    intro = (
        "The clustering report of `fa.datasets.clustering_example()` (2,000 points, 4 clusters), "
        "measured {day} with `--clustering-against <a checkout of {commit}>` (best of 5 calls, "
        "two passes alternating):"
    )
    rows = {case: case for case in CLUSTERING_CASES}
    call = "bench_report.clustering_seconds()"
    return (
        "\n".join(ab_table(other, call, intro, first="engine, intervals", rows=rows, digits=3))
        + "\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--against", type=Path, help="another checkout of frameaudit")
    parser.add_argument(
        "--clustering-against", type=Path, help="the clustering report here and at a checkout"
    )
    args = parser.parse_args()
    if args.clustering_against:
        table = clustering_against(args.clustering_against)
        print(table)
        CLUSTERING_RESULTS.write_text(table)
        return
    rankings, repeats = (500, 1) if args.quick else (10_000, 3)
    log = tidy_data(rankings, 100)
    lines = [
        "# Ranking report: cost against the metric calls it shows",
        "",
        f"{log.height:,} rows ({rankings:,} rankings x 100 items), best of {repeats}"
        f"{'; --quick' if args.quick else ''}.",
        "",
        "| intervals | metric calls (s) | report (s) | report / calls |",
        "|---|---|---|---|",
    ]
    for label, boot in (("none", {}), ("ci=0.95, n_boot=200", {"ci": 0.95, "n_boot": 200})):
        calls = best_of(lambda boot=boot: metric_calls(log, boot), repeats)
        report = best_of(
            lambda boot=boot: fa.report.ranking(log, **ROLES, **COLUMNS, **boot), repeats
        )
        lines.append(f"| {label} | {calls:.2f} | {report:.2f} | {report / calls:.2f} |")
    lines += ["", *search_log_part(args.quick, repeats)]
    if args.against:
        lines += ["", *against(args.against, rankings)]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.quick:
        RESULTS.write_text(text)


SEARCH = {"group": "group", "ranking": "query", "item": "item", "relevance": "relevance"}
BOOT = {"ci": 0.95, "n_boot": 1000, "seed": 0}


def search_log(queries: int, results: int = 25, seed: int = 0) -> pl.DataFrame:
    """Queries answered by distinct items of a catalogue of 20 items a query (groups: 40% a)."""
    rng = np.random.default_rng(seed)
    catalogue = 20 * queries
    items = np.concatenate([rng.choice(catalogue, results, replace=False) for _ in range(queries)])
    return pl.DataFrame(
        {
            "query": np.repeat(np.arange(queries), results),
            "rank": np.tile(np.arange(1, results + 1), queries),
            "item": items,
            "group": np.where(items % 5 < 2, "a", "b"),
            "relevance": rng.random(queries * results),
        }
    )


def search_log_part(quick: bool, repeats: int) -> list[str]:
    """EXP's interval with and without ``item=``; the report with intervals, time and memory."""
    queries = 600 if quick else 12_000
    log = search_log(queries)
    roles = {k: v for k, v in SEARCH.items() if k != "relevance"}
    with_items = best_of(lambda: fa.fair.exp(log, **roles, **BOOT), repeats)
    rows = {**roles, "item": None, "size": "rows"}
    without = best_of(lambda: fa.fair.exp(log, **rows, **BOOT), repeats)
    folder = Path("/tmp/frameaudit_report") / str(queries)
    folder.mkdir(parents=True, exist_ok=True)
    log.write_parquet(folder / "log.parquet")
    engine = Engine(source="lf = pl.read_parquet({path!r})", compute="({call}).summary", bare="")
    arguments = ", ".join(f"{k}={v!r}" for k, v in {**SEARCH, **BOOT}.items())
    report = measure(engine, f"fa.report.ranking(lf, {arguments})", folder)
    return [
        f"A search log of {log.height:,} rows ({queries:,} queries x 25 results from "
        f"{20 * queries:,} items), `ci=0.95, n_boot=1000`, best of {repeats}:",
        "",
        "| call | seconds | target |",
        "|---|---:|---|",
        f"| EXP with `item=` | {with_items:.2f} | |",
        f"| EXP counting rows (`size='rows'`) | {without:.2f} | |",
        f"| ratio | {with_items / without:.2f}x | at most 3x |",
        f"| the ranking report with intervals (fresh process) | {report['seconds']:.1f} "
        f"| under 60 s |",
        f"| its peak resident memory | {report['peak'] / 2**30:.2f} GiB | under 2 GiB |",
    ]


if __name__ == "__main__":
    main()
