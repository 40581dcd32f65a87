"""Fair-ranking benchmarks: frameaudit against FairRankTune 0.0.7, measured in the same run.

    python benchmarks/bench_ranking.py            # full sizes (several minutes)
    python benchmarks/bench_ranking.py --quick    # small smoke run

Part 1 times every metric at 1 ranking x 100,000 items and 1,000 rankings x 100 items against
FairRankTune (NDKL and IAA accept a single ranking there, so FairRankTune is called once per
ranking; its ARP is quadratic and is measured at smaller sizes and extrapolated as O(n²) — the
table says so). Part 2 runs frameaudit alone at 10 million rows (100,000 rankings x 100 items,
``by`` the ranking) eager, lazy and streaming, on Polars and on pandas input, against a bare
single Polars pass over the same columns, and measures peak memory in a fresh process.
Results are printed and written to benchmarks/results/ranking.md.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl

import frameaudit as fa
from frameaudit.datasets import biased_rankings

RESULTS = Path(__file__).parent / "results" / "ranking.md"
METRICS = ["exp", "expu", "expru", "awrf", "erbe", "erbp", "erbr", "arp", "ndkl", "iaa"]
SIZED = (
    tuple(m.name for m in fa.metrics("ranking") if "size" in m.options)
    if hasattr(fa, "metrics")
    else ("exp", "awrf", "erbp")  # a checkout before the registry (bench_calls --against)
)
"""The metrics whose V_g divides by n_g: each benchmark row is its own item (size="rows")."""
# checkouts before the explicit choice of n_g (bench_calls --against) have no size=
_HAS_SIZE = "size" in inspect.signature(fa.fair.exp).parameters


def roles_of(metric: str) -> dict[str, str]:
    """The roles of a call of ``metric`` by ranking and group (as the registry declares them:
    the value columns of ``tidy_data`` are named after the report's parameters; a checkout
    without the registry calls the metrics that need only these two)."""
    found = (
        {m.name: m for m in fa.metrics("ranking")}.get(metric) if hasattr(fa, "metrics") else None
    )
    grouped = getattr(found, "grouped", True)
    values = dict(found.roles) if found is not None else {}
    groups = {"group": "group"} if grouped else {}
    size = {"size": "rows"} if metric in SIZED and _HAS_SIZE else {}
    return {"ranking": "ranking", **groups, **size, **values}


def best_of(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def tidy_data(num_rankings: int, num_items: int, seed: int = 0) -> pl.DataFrame:
    df = biased_rankings([0.3, 0.7], num_items, phi=0.5, num_rankings=num_rankings, seed=seed)
    rng = np.random.default_rng(seed)
    return df.with_columns(
        pl.Series("relevance", rng.random(df.height)),
        pl.Series("relevant", (rng.random(df.height) < 0.5).astype(np.int64)),
        pl.Series("ctr", rng.random(df.height)),
    )


def wide(df: pl.DataFrame, column: str) -> pd.DataFrame:
    """FairRankTune's layout: one column per ranking, rows are positions top-first."""
    pivot = df.sort("ranking", "rank").pivot(on="ranking", index="rank", values=column)
    return pivot.drop("rank").to_pandas()


def frt_calls(df: pl.DataFrame) -> dict[str, Callable[[], Any]]:
    from FairRankTune import Metrics as m  # noqa: N813

    rankings = wide(df, "item")
    groups = dict(zip(df["item"].to_list(), df["group"].to_list(), strict=True))
    rel = wide(df, "relevance")
    relevant = wide(df, "relevant")
    ctr = wide(df, "ctr")
    columns = list(rankings.columns)

    def per_ranking(fn: Callable[..., Any], *frames: pd.DataFrame) -> Callable[[], Any]:
        # FairRankTune's NDKL rejects several rankings and its IAA reads only the first one
        return lambda: [fn(*(f[[c]] for f in frames)) for c in columns]

    return {
        "exp": lambda: m.EXP(rankings, groups, "MinMaxRatio"),
        "expu": lambda: m.EXPU(rankings, groups, rel, "MinMaxRatio"),
        "expru": lambda: m.EXPRU(rankings, groups, rel, ctr, "MinMaxRatio"),
        "awrf": lambda: m.AWRF(rankings, groups, 0.5, "MinMaxRatio"),
        "erbe": lambda: m.ERBE(rankings, groups, 0.5, "MinMaxRatio"),
        "erbp": lambda: m.ERBP(rankings, groups, 0.5, "MinMaxRatio"),
        "erbr": lambda: m.ERBR(rankings, groups, relevant, 0.5, "MinMaxRatio"),
        "arp": lambda: m.ARP(rankings, groups, "MinMaxRatio"),
        "ndkl": per_ranking(lambda r: m.NDKL(r, {k: groups[k] for k in r.iloc[:, 0]}), rankings),
        "iaa": per_ranking(m.IAA, rankings, rel),
    }


def fa_calls(df: pl.DataFrame) -> dict[str, Callable[[], Any]]:
    """frameaudit's calls."""
    roles: dict[str, Any] = {"ranking": "ranking", "item": "item"}
    by = {"by": "ranking"} if df["ranking"].n_unique() > 1 else {}
    options: dict[str, dict[str, Any]] = {
        "awrf": {"p": 0.5},
        "erbe": {"decay": 0.5},
        "erbp": {"decay": 0.5},
        "erbr": {"relevance": "relevant", "decay": 0.5},
        "ndkl": by,
    }
    return {
        name: functools.partial(getattr(fa.fair, name), df, **roles, **options.get(name, {}))
        for name in METRICS
    }


def against_fairranktune(
    num_rankings: int, num_items: int, arp_sizes: tuple[int, ...]
) -> list[dict[str, Any]]:
    df = tidy_data(num_rankings, num_items)
    ours = fa_calls(df)
    theirs = frt_calls(df)
    # the floor: one bare Polars pass over the same rows (no checks, no combo)
    exposure = (1.0 / (pl.col("rank") + 1).log(2)).sum()
    bare_pass = df.lazy().group_by("ranking", "group").agg(exposure)
    t_bare = best_of(lambda: bare_pass.collect(engine="in-memory"), 20)
    # ... plus the check every call with item= must make: items distinct within each ranking
    distinct = df.lazy().group_by("ranking").agg(pl.len(), pl.col("item").n_unique())
    t_checked = best_of(lambda: pl.collect_all([bare_pass, distinct], engine="in-memory"), 20)
    print(f"  bare Polars pass {t_bare:.4f}s, with the distinct-item check {t_checked:.4f}s")
    rows = []
    for metric in METRICS:
        t_ours = best_of(ours[metric], 10)
        note = ""
        if metric == "arp" and num_rankings == 1 and arp_sizes:
            # quadratic: time the largest affordable size and scale by (n / n_measured)²
            measured = arp_sizes[-1]
            small = tidy_data(1, measured)
            t_small = best_of(frt_calls(small)["arp"], 1)
            t_theirs = t_small * (num_items / measured) ** 2
            note = f"extrapolated as O(n²) from {measured:,} items ({t_small:.1f} s)"
        else:
            t_theirs = best_of(theirs[metric], 1)
        rows.append(
            {
                "size": f"{num_rankings:,} x {num_items:,}",
                "metric": metric,
                "frameaudit_s": t_ours,
                "fairranktune_s": t_theirs,
                "speedup": t_theirs / t_ours,
                "ceiling": t_theirs / t_bare,
                "checked_ceiling": t_theirs / t_checked,
                "note": note,
            }
        )
        print(
            f"  {rows[-1]['size']:>14} {metric:6} ours {t_ours:8.4f}s  FRT {t_theirs:9.3f}s  x{t_theirs / t_ours:9.1f} {note}",
            flush=True,
        )
    return rows


_CHILD = r"""
import json, sys, time
import polars as pl, frameaudit as fa
from frameaudit.datasets import biased_rankings
def rss(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024
mode, metric, n_rankings = sys.argv[1], sys.argv[2], int(sys.argv[3])
df = biased_rankings([0.3, 0.7], 100, phi=0.5, num_rankings=n_rankings, seed=0)
if mode.endswith("rows shuffled"):
    df = df.sample(fraction=1.0, shuffle=True, seed=0)
size = df.estimated_size()
data = df.to_pandas() if mode == "pandas" else df
run = {
    "bare": lambda: df.lazy().group_by("ranking", "group").agg((1.0 / (pl.col("rank") + 1).log(2)).sum()).collect(),
    "bare, rows shuffled": lambda: df.lazy().group_by("ranking", "group").agg((1.0 / (pl.col("rank") + 1).log(2)).sum()).collect(),
    "eager": lambda: getattr(fa.fair, metric)(df, by="ranking"),
    "lazy": lambda: getattr(fa.fair, metric)(df.lazy(), by="ranking").collect(engine="in-memory"),
    "streaming": lambda: getattr(fa.fair, metric)(df.lazy(), by="ranking").collect(engine="streaming"),
    "pandas": lambda: getattr(fa.fair, metric)(data, by="ranking"),
    "eager, rows shuffled": lambda: getattr(fa.fair, metric)(df, by="ranking"),
}[mode]
run()  # warm-up
open("/proc/self/clear_refs", "w").write("5")  # reset the peak-RSS counter
before = rss("VmRSS:")
times = []
for _ in range(3):
    start = time.perf_counter(); run(); times.append(time.perf_counter() - start)
print(json.dumps({"seconds": min(times), "peak_extra": rss("VmHWM:") - before, "input": size}))
"""


def at_scale(num_rankings: int) -> list[dict[str, Any]]:
    def child(mode: str, metric: str) -> dict[str, Any]:
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, mode, metric, str(num_rankings)],
            check=True,
            capture_output=True,
            text=True,
        )
        return json.loads(out.stdout.strip().splitlines()[-1])

    bare = child("bare", "exp")
    # shuffled rows make every grouped pass slower (cache misses): compare like with like
    bare_shuffled = child("bare, rows shuffled", "exp")
    rows = []
    for metric, target in (("exp", 3.0), ("ndkl", 10.0)):
        for mode in ("eager", "lazy", "streaming", "pandas", "eager, rows shuffled"):
            result = child(mode, metric)
            rows.append(
                {
                    "metric": metric,
                    "input": mode,
                    "seconds": result["seconds"],
                    "vs_bare": result["seconds"]
                    / (bare_shuffled if mode.endswith("rows shuffled") else bare)["seconds"],
                    "target": target,
                    "peak_extra_x_input": result["peak_extra"] / result["input"],
                }
            )
            print(
                f"  {metric:5} {mode:9} {result['seconds']:7.3f}s  {rows[-1]['vs_bare']:5.2f}x bare (target {target}x)  peak +{rows[-1]['peak_extra_x_input']:.2f}x input",
                flush=True,
            )
    rows += [
        {
            "metric": "bare pass",
            "input": name,
            "seconds": result["seconds"],
            "vs_bare": 1.0,
            "target": 1.0,
            "peak_extra_x_input": result["peak_extra"] / result["input"],
        }
        for name, result in (("polars", bare), ("polars, rows shuffled", bare_shuffled))
    ]
    return rows


def markdown(
    vs_frt: list[dict[str, Any]], scale: list[dict[str, Any]], scale_rows: int, quick: bool
) -> str:
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} on 2 cores with `python benchmarks/bench_ranking.py{' --quick' if quick else ''}`"
        " (best of 10 for frameaudit, 1 run for FairRankTune).",
        "",
        '"ceiling" is the speed-up of a bare Polars pass over the same rows (summing '
        "1/log2(rank+1) by ranking and group; no checks, no combo): FairRankTune's time divided by "
        "that pass's. No metric can be cheaper than one such pass, so where the ceiling is below "
        '100x the target is out of reach on this machine. "with the check" adds the one check '
        "every call with `item=` must make (items unique within each ranking), a count "
        "of distinct items per ranking computed together with the pass.",
        "",
        "| size (rankings x items) | metric | frameaudit (s) | FairRankTune (s) | speed-up (target ≥ 100x) | ceiling | ceiling with the check | note |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    lines += [
        f"| {r['size']} | {r['metric']} | {r['frameaudit_s']:.4f} | {r['fairranktune_s']:.2f} | {r['speedup']:,.0f}x | {r['ceiling']:,.0f}x | {r['checked_ceiling']:,.0f}x | {r['note']} |"
        for r in vs_frt
    ]
    lines += [
        "",
        f"At {scale_rows:,} rows ({scale_rows // 100:,} rankings x 100 items, `by` the ranking); "
        '"vs bare" divides by one Polars pass summing 1/log2(rank+1) by ranking and group over the '
        "same rows (the generator's order, sorted by ranking and position, or the same rows "
        "shuffled); peak is the extra resident memory while computing, as a multiple of the "
        "input's in-memory size (target < 3x).",
        "",
        "| metric | input | seconds | vs bare pass | target | peak memory / input |",
        "|---|---|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r['metric']} | {r['input']} | {r['seconds']:.3f} | {r['vs_bare']:.2f}x | ≤ {r['target']:g}x | {r['peak_extra_x_input']:.2f}x |"
        for r in scale
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    args = parser.parse_args()
    if args.quick:
        sizes = [(1, 2_000, (1_000,)), (20, 100, ())]
        scale_rankings = 2_000
    else:
        sizes = [(1, 100_000, (8_000,)), (1_000, 100, ())]
        scale_rankings = 100_000
    print("frameaudit vs FairRankTune 0.0.7")
    vs_frt = [row for n_r, n_i, arp in sizes for row in against_fairranktune(n_r, n_i, arp)]
    print(f"frameaudit at {scale_rankings * 100:,} rows")
    scale = at_scale(scale_rankings)
    text = markdown(vs_frt, scale, scale_rankings * 100, args.quick)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
