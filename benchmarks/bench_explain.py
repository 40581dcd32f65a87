"""Explainability benchmarks: frameaudit against holisticai 1.0.14 and case-explainer 0.2.0.

    python benchmarks/bench_explain.py            # full sizes (several minutes)
    python benchmarks/bench_explain.py --quick    # small smoke run

Three comparisons, each measured in the same run:

1. Correspondence of 100,000 queries x 10 neighbours against case-explainer's
   ``compute_correspondence`` called once per query (its neighbour lists are built beforehand
   and not timed), and against a bare Polars aggregation computing the same values (no checks,
   no bands, no sorting): the floor of any implementation on Polars; the same aggregation with
   its rows sorted by query (frameaudit's output order) is timed too.
2. Nearest-case retrieval plus correspondence for 100,000 queries against 100,000 training rows
   x 20 features, against ``CaseExplainer``'s per-query pipeline (``explain_instance`` per
   query, as ``explain_batch`` does). The reference is timed on a subset of queries and
   extrapolated linearly (plus its index build); the table says so. frameaudit runs in a fresh
   process whose peak resident memory is reported.
3. Order cohesion at 1,000 features x 20 groups against holisticai's ``position_parity`` and
   ``rank_alignment``. holisticai needs its ``Importances`` objects sorted by importance: the
   reference is timed both from the same tidy frame (building them included) and on prebuilt
   objects. Position parity and top-k rank alignment are also timed as bare hand-written Polars
   queries (no checks), the floor of a lazy-plan implementation.

Results are printed and written to benchmarks/results/explain.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import frameaudit as fa

RESULTS = Path(__file__).parent / "results" / "explain.md"


def best_of(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


# --- 1. correspondence --------------------------------------------------------------------------


def correspondence(n_queries: int, k: int) -> list[dict[str, Any]]:
    from case_explainer.metrics import compute_correspondence

    rng = np.random.default_rng(0)
    distance = rng.exponential(1.0, n_queries * k)
    label = rng.integers(0, 3, n_queries * k)
    predicted = rng.integers(0, 3, n_queries)
    frame = pl.DataFrame(
        {
            "query": np.repeat(np.arange(n_queries), k),
            "distance": distance,
            "label": label,
            "predicted": np.repeat(predicted, k),
        }
    )
    weights = {0: 1.0, 1: 2.0, 2: 0.5}
    neighbours = [
        list(
            zip(
                range(k),
                distance[q * k : (q + 1) * k].tolist(),
                label[q * k : (q + 1) * k].tolist(),
                strict=True,
            )
        )
        for q in range(n_queries)
    ]
    predictions = predicted.tolist()

    def reference() -> None:
        for q in range(n_queries):
            compute_correspondence(neighbours[q], predictions[q], class_weights=weights)

    pandas_frame = frame.to_pandas()
    theirs = best_of(reference, 3)
    chain: Any = pl
    for cls, value in weights.items():
        chain = chain.when(pl.col("label") == cls).then(value)
    weight = chain.otherwise(1.0) / (pl.col("distance") + 1.0) ** 3
    match = pl.when(pl.col("label") == pl.col("predicted")).then(weight).otherwise(0.0)
    bare = frame.lazy().group_by("query").agg((match.sum() / weight.sum()).alias("value"))
    ours_values = fa.explain.correspondence(frame, class_weights=weights)["correspondence"]
    assert np.allclose(bare.collect().sort("query")["value"], ours_values, rtol=1e-12, atol=0)
    floor = best_of(bare.collect, 10)
    sorted_floor = best_of(bare.sort("query").collect, 10)
    rows = []
    for name, data in (("polars", frame), ("pandas", pandas_frame)):
        ours = best_of(lambda data=data: fa.explain.correspondence(data, class_weights=weights), 10)
        rows.append(
            {
                "case": f"correspondence, {n_queries:,} queries x {k} neighbours ({name} input)",
                "frameaudit_s": ours,
                "reference_s": theirs,
                "speedup": theirs / ours,
                "target": 15,
                "note": (
                    "compute_correspondence per query; a bare Polars aggregation (no checks, "
                    f"bands or sorting) takes {floor:.4f} s (x{theirs / floor:.1f}), "
                    f"{sorted_floor:.4f} s (x{theirs / sorted_floor:.1f}) with its rows sorted"
                ),
            }
        )
        print(
            f"  {rows[-1]['case']}: ours {ours:.3f}s  case-explainer {theirs:.3f}s  x{theirs / ours:.1f}",
            flush=True,
        )
    return rows


# --- 2. nearest cases + correspondence ------------------------------------------------------------


def case_data(
    n_train: int, n_queries: int, d: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    scale = rng.uniform(0.5, 20.0, d)
    train = rng.standard_normal((n_train, d)) * scale
    queries = rng.standard_normal((n_queries, d)) * scale
    labels = (train[:, 0] + rng.standard_normal(n_train) * scale[0] > 0).astype(np.int64)
    predicted = (queries[:, 0] > 0).astype(np.int64)
    return train, labels, queries, predicted


_CHILD = r"""
import json, sys, time
import numpy as np, polars as pl
sys.path.insert(0, sys.argv[4])
import frameaudit as fa
from bench_explain import case_data
def rss(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024
n_train, n_queries, k = (int(a) for a in sys.argv[1:4])
train, labels, queries, predicted = case_data(n_train, n_queries, 20)
names = [f"x{j}" for j in range(20)]
train_frame = pl.DataFrame(train, schema=names).with_columns(pl.Series("label", labels))
query_frame = pl.DataFrame(queries, schema=names).with_columns(pl.Series("predicted", predicted))
open("/proc/self/clear_refs", "w").write("5")  # reset the peak-RSS counter
start = time.perf_counter()
cases = fa.explain.nearest_cases(train_frame, query_frame, features=names, k=k, carry="predicted")
result = fa.explain.correspondence(cases)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "peak": rss("VmHWM:"), "rows": result.height}))
"""


def screen_floors(n_train: int, n_queries: int, d: int) -> tuple[float, float]:
    """Seconds for the float32 distance products alone, and with the minimum a screen needs.

    Every (query, training row) pair's score ||t||² − 2 q·t from BLAS, in the kernel's tiles
    (192 training rows, eight per call, chunks of 200 queries) on one thread per core: no
    candidate selection, no exact re-scoring. The second time also reduces the scores to their
    elementwise minimum over the tiles of each call, as the kernel does (every score read once).
    No BLAS-based exact search of every pair can be faster than the first; none that screens by
    minima, than the second.
    """
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(3)
    width, stack, chunk = 192, 8, 200
    tiles = rng.standard_normal((-(-n_train // width), d + 1, width)).astype(np.float32)
    lhs = rng.standard_normal((n_queries, d + 1)).astype(np.float32)
    workers = len(os.sched_getaffinity(0))

    def run(reduce: bool) -> float:
        def work(worker: int) -> None:
            out = np.empty((stack, chunk, width), np.float32)
            low = np.empty((chunk, width), np.float32)
            for start in range(worker * chunk, n_queries, workers * chunk):
                rows = lhs[start : start + chunk]
                for t in range(0, tiles.shape[0], stack):
                    part = tiles[t : t + stack]
                    scores = out[: part.shape[0], : rows.shape[0]]
                    np.matmul(rows, part, out=scores)
                    if reduce:
                        np.min(scores, axis=0, out=low[: rows.shape[0]])

        with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(workers) as pool:
            begin = time.perf_counter()
            list(pool.map(work, range(workers)))
            return time.perf_counter() - begin

    return run(reduce=False), run(reduce=True)


def nearest(n_train: int, n_queries: int, k: int, measured: int) -> list[dict[str, Any]]:
    from case_explainer import CaseExplainer

    out = subprocess.run(
        [
            sys.executable,
            "-c",
            _CHILD,
            str(n_train),
            str(n_queries),
            str(k),
            str(Path(__file__).parent),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    ours = json.loads(out.stdout.strip().splitlines()[-1])
    train, labels, queries, predicted = case_data(n_train, n_queries, 20)
    start = time.perf_counter()
    explainer = CaseExplainer(train, labels, k=k)
    build = time.perf_counter() - start
    start = time.perf_counter()
    for q in range(measured):
        explainer.explain_instance(queries[q], predicted_class=int(predicted[q]))
    per_query = (time.perf_counter() - start) / measured
    theirs = build + per_query * n_queries
    products, screened = screen_floors(n_train, n_queries, 20)
    row = {
        "case": f"nearest cases + correspondence, {n_queries:,} queries x {n_train:,} training rows x 20 features, k = {k}",
        "frameaudit_s": ours["seconds"],
        "reference_s": theirs,
        "speedup": theirs / ours["seconds"],
        "target": 100,
        "note": (
            f"CaseExplainer.explain_instance per query, timed on {measured:,} queries "
            f"({per_query * 1e3:.1f} ms each) and extrapolated, plus its index build ({build:.2f} s); "
            f"frameaudit peak memory {ours['peak'] / 2**30:.2f} GiB (target < 2 GiB); the "
            f"float32 distance products alone, in the kernel's tiles on every core, take "
            f"{products:.2f} s (x{theirs / products:.0f}), {screened:.2f} s (x{theirs / screened:.0f}) "
            "with the elementwise minimum of the screen"
        ),
        "peak_gib": ours["peak"] / 2**30,
    }
    print(
        f"  {row['case']}: ours {ours['seconds']:.1f}s  case-explainer ~{theirs:.0f}s  x{row['speedup']:.0f}  {row['note']}",
        flush=True,
    )
    return [row]


# --- 3. order cohesion ----------------------------------------------------------------------------


def cohesion(n_features: int, n_groups: int) -> list[dict[str, Any]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from holisticai.explainability.metrics import position_parity, rank_alignment
        from holisticai.utils import ConditionalImportances, Importances

    rng = np.random.default_rng(2)
    features = [f"feature_{i:04d}" for i in range(n_features)]
    groups = [f"g{i:02d}" for i in range(n_groups)] + ["all"]
    frame = pl.DataFrame(
        {
            "group": np.repeat(groups, n_features),
            "feature": features * len(groups),
            "importance": rng.standard_normal(len(groups) * n_features),
        }
    )

    def holistic_inputs() -> tuple[Any, Any]:
        # holisticai keeps the order it is given: sort each group as frameaudit orders it.
        ordered = frame.with_columns(pl.col("importance").abs().alias("size")).sort(
            "group", "size", "feature", descending=[False, True, False]
        )
        objects = {
            name: Importances(
                values=part["importance"].to_numpy(), feature_names=part["feature"].to_list()
            )
            for (name,), part in ordered.group_by("group", maintain_order=True)
        }
        overall = objects.pop("all")
        return ConditionalImportances(values=objects), overall

    conditional, overall = holistic_inputs()
    floors = bare_cohesion(frame)
    cases = [
        (
            "position_parity",
            lambda: fa.explain.position_parity(frame, overall="all"),
            position_parity,
        ),
        (
            "rank_alignment, alpha_jaccard",
            lambda: fa.explain.rank_alignment(frame, overall="all", method="alpha_jaccard"),
            rank_alignment,
        ),
        (
            "rank_alignment, topk (no holisticai equivalent)",
            lambda: fa.explain.rank_alignment(frame, overall="all"),
            None,
        ),
    ]
    rows = []
    for name, ours_fn, theirs_fn in cases:
        ours = best_of(ours_fn, 20)
        notes = []
        if theirs_fn is None:
            theirs = float("nan")
            notes.append("frameaudit alone")
        else:
            metric_only = best_of(lambda f=theirs_fn: f(conditional, overall), 10)
            theirs = best_of(lambda f=theirs_fn: f(*holistic_inputs()), 10)
            notes.append(
                "holisticai from the same tidy frame (building its Importances included); "
                f"its metric call alone takes {metric_only:.4f} s (x{metric_only / ours:.2f})"
            )
        if name in floors:
            bare, expected = floors[name]
            assert abs(ours_fn().item() - expected) < 1e-12  # the floor computes the same value
            floor = best_of(bare, 20)
            notes.append(f"a bare hand-written Polars query (no checks) takes {floor:.4f} s")
        rows.append(
            {
                "case": f"{name}, {n_features:,} features x {n_groups} groups",
                "frameaudit_s": ours,
                "reference_s": theirs,
                "speedup": theirs / ours,
                "target": 5,
                "note": "; ".join(notes),
            }
        )
        print(
            f"  {rows[-1]['case']}: ours {ours:.4f}s  holisticai {theirs:.4f}s  x{rows[-1]['speedup']:.1f}  ({rows[-1]['note']})",
            flush=True,
        )
    return rows


def bare_cohesion(frame: pl.DataFrame) -> dict[str, tuple[Callable[[], Any], float]]:
    """Hand-written Polars queries for two cohesion metrics: no checks, overall group "all".

    The floor of a lazy-plan implementation: rank every group in one window, give each feature
    its overall position and the harmonic tail T(q) = sum of 1/i for i >= q by one join (T at
    the group position by a second one for top-k), sum per group. Run on the in-memory engine,
    as frameaudit runs small in-memory inputs (the streaming engine's set-up dominates here).
    """
    order = [-pl.col("importance").abs(), "feature"]
    ranked = frame.lazy().with_columns(
        pl.int_range(1, pl.len() + 1).over("group", order_by=order).alias("pos")
    )
    overall = (
        ranked.filter(pl.col("group") == "all")
        .select("feature", rpos="pos")
        .with_columns(tail=(1 / pl.col("rpos")).cum_sum(reverse=True).over(order_by="rpos"))
    )
    pairs = ranked.filter(pl.col("group") != "all").join(overall, on="feature")
    pos, rpos, tail = pl.col("pos"), pl.col("rpos"), pl.col("tail")
    # position i adds (1/i) x (agreements up to i): agreeing position j adds T(j) in all; a
    # feature is in both top-j sets for j >= max(pos, rpos): it adds T(max) = min(T(pos), T(rpos))
    tails = overall.select(pos="rpos", group_tail="tail")
    queries = {
        "position_parity": pairs.select(
            "group", value=pl.when(pos == rpos).then(tail).otherwise(0.0)
        ),
        "rank_alignment, topk (no holisticai equivalent)": pairs.join(tails, on="pos").select(
            "group", value=pl.min_horizontal(tail, "group_tail")
        ),
    }
    floors: dict[str, tuple[Callable[[], Any], float]] = {}
    for name, values in queries.items():
        query = values.group_by("group").agg(pl.col("value").mean()).select(pl.col("value").mean())

        def run(query: pl.LazyFrame = query) -> pl.DataFrame:
            return query.collect(engine="in-memory")

        floors[name] = (run, run().item())
    return floors


# --- report ---------------------------------------------------------------------------------------


def markdown(rows: list[dict[str, Any]], quick: bool) -> str:
    def ratio(row: dict[str, Any]) -> str:
        return "—" if np.isnan(row["speedup"]) else f"{row['speedup']:,.1f}x"

    def reference(row: dict[str, Any]) -> str:
        return "—" if np.isnan(row["reference_s"]) else f"{row['reference_s']:,.4g}"

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} on 2 shared cores (load average {load} at the end) "
        f"with `python benchmarks/bench_explain.py{' --quick' if quick else ''}` (frameaudit: best "
        "of 10–20 runs; one run for the retrieval; "
        "references: see the notes). The per-query reference pipeline slows down much more "
        "than frameaudit when other processes load the machine, so the retrieval ratio is "
        "highest on a busy machine and lowest on an idle one.",
        "",
        "| case | frameaudit (s) | reference (s) | speed-up | target | note |",
        "|---|---:|---:|---:|---:|---|",
    ]
    lines += [
        f"| {r['case']} | {r['frameaudit_s']:.4g} | {reference(r)} | {ratio(r)} | ≥ {r['target']}x | {r['note']} |"
        for r in rows
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    args = parser.parse_args()
    if args.quick:
        corr, near, coh = (10_000, 10), (10_000, 2_000, 10, 50), (200, 20)
    else:
        corr, near, coh = (100_000, 10), (100_000, 100_000, 10, 500), (1_000, 20)
    rows = []
    print("correspondence vs case-explainer 0.2.0")
    rows += correspondence(*corr)
    print("nearest cases + correspondence vs CaseExplainer")
    rows += nearest(*near)
    print("order cohesion vs holisticai 1.0.14")
    rows += cohesion(*coh)
    text = markdown(rows, args.quick)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
