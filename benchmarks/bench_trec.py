"""Expected exposure against the reference code, and at 10^8 rows on Polars streaming.

1. 10^6 rows (10,000 queries x 10 sampled rankings x 10 documents, graded judgments of a pool
   of 20 documents a query, three groups): ``fa.fair.expected_exposure`` in memory against
   expeval's script (the paper's code, run as its README says, on the same data written as
   TREC files) and the TREC 2022 task-2 metric code (``wptrec.metrics.EELMetric``, applied
   per query as the track's notebook does, on the same run and its group targets), side by
   side in one run. The mean EE-L, EE-D and EE-R must equal expeval's (its six printed
   decimals). Target: frameaudit at least 100x faster than each.
2. 10^8 rows (1,000,000 queries x 10 x 10) from Parquet: the lazy call collected on Polars'
   streaming engine, against the bare pass over the same files (each document's exposure
   summed per query and document). Targets: within 3x the bare pass, under 2 GiB.

The reference code is not on the package registry: point ``EXPEVAL`` at a checkout of
github.com/diazf/expeval and ``WPTREC`` at one of github.com/fair-trec/trec2022-fair-public
(its ``wptrec`` package needs xarray). ``python benchmarks/bench_trec.py [--part 1|2]``
writes ``benchmarks/results/trec.md``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import polars as pl

import frameaudit as fa
from frameaudit._engine import exact_sums

RESULTS = Path(__file__).parent / "results" / "trec.md"
sys.path.insert(0, str(Path(__file__).parent))
from bench_scale import in_parts, sampled  # noqa: E402  (the memory-measuring subprocess)

POOL, DOCUMENTS, SAMPLES = 20, 10, 10


def data(queries: int, seed: int = 0) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A stochastic run and its judgments: each query's pool of POOL documents, graded 0-3
    (half of them relevant), in one of three groups; SAMPLES rankings of DOCUMENTS each,
    sampled by relevance with noise (Plackett-Luce by Gumbel keys)."""
    rng = np.random.default_rng(seed)
    grades = rng.choice([0, 0, 1, 2, 3], size=(queries, POOL)).astype(np.int64)
    groups = rng.integers(0, 3, size=(queries, POOL))
    judgments = pl.DataFrame(
        {
            "query": np.repeat(np.arange(queries), POOL),
            "item": np.tile(np.arange(POOL), queries),
            "relevance": grades.ravel(),
            "group": groups.ravel(),
        }
    )
    keys = grades[:, None, :] + rng.gumbel(size=(queries, SAMPLES, POOL))
    top = np.argsort(-keys, axis=2)[:, :, :DOCUMENTS]
    run = pl.DataFrame(
        {
            "query": np.repeat(np.arange(queries), SAMPLES * DOCUMENTS),
            "sample": np.tile(np.repeat(np.arange(SAMPLES), DOCUMENTS), queries),
            "item": top.ravel(),
            "rank": np.tile(np.arange(1, DOCUMENTS + 1), queries * SAMPLES),
        }
    )
    return run, judgments


def best_of(function: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def expeval_seconds(
    run: pl.DataFrame, judgments: pl.DataFrame, checkout: Path
) -> tuple[float, tuple[float, ...]]:
    """expeval's script on the data as TREC files (rbp, p = 0.5, raw values): its seconds
    and the mean of each of its three metrics over the queries."""
    with tempfile.TemporaryDirectory() as folder:
        runfile, qrels = Path(folder) / "run.txt", Path(folder) / "qrels.txt"
        run.select(
            pl.format("q{} {} d{} {} 1.0 bench", "query", "sample", "item", "rank")
        ).write_csv(runfile, include_header=False, quote_style="never")
        judgments.select(
            pl.format("q{} {} d{} {}", "query", "group", "item", "relevance")
        ).write_csv(qrels, include_header=False, quote_style="never")
        command = [sys.executable, "expeval.py", "-u", "rbp", "-p", "0.5", "-U", str(qrels)]
        start = time.perf_counter()
        out = subprocess.run(
            [*command, str(runfile)], cwd=checkout, capture_output=True, text=True, check=True
        ).stdout
        seconds = time.perf_counter() - start
    printed = pl.DataFrame(
        [line.split("\t") for line in out.splitlines()],
        schema=["metric", "query", "value"],
        orient="row",
    ).with_columns(pl.col("value").cast(pl.Float64))
    means = printed.group_by("metric").agg(pl.col("value").mean())
    value = dict(means.iter_rows())
    return seconds, (value["difference"], value["disparity"], value["relevance"])


def wptrec_seconds(run: pl.DataFrame, judgments: pl.DataFrame, checkout: Path) -> float:
    """The TREC 2022 task-2 metric code (EELMetric, group mode over one dimension, only
    relevant documents' exposure), applied per query as the track's evaluation notebook does."""
    sys.path.insert(0, str(checkout))
    import pandas as pd
    import xarray as xr
    from wptrec.dimension import FairDim
    from wptrec.metrics import EELMetric

    pages = judgments.select(
        (pl.col("query").cast(pl.String) + "_" + pl.col("item").cast(pl.String)).alias("page"),
        "group",
    ).to_pandas()
    levels = ["g0", "g1", "g2"]
    onehot = np.zeros((len(pages), len(levels)))
    onehot[np.arange(len(pages)), pages["group"].to_numpy()] = 1.0
    align = pd.DataFrame(onehot, index=pages["page"], columns=levels)
    align.columns.name = "grp"
    align.name = "grp"
    aligned = xr.DataArray(
        align.values, coords={"page": align.index, "grp": levels}, dims=["page", "grp"]
    )
    dimension = FairDim(align, aligned)
    relevant = judgments.filter(pl.col("relevance") > 0).select(
        pl.col("query").alias("topic_id"),
        (pl.col("query").cast(pl.String) + "_" + pl.col("item").cast(pl.String)).alias("page_id"),
    )
    qrels = relevant.to_pandas().set_index("topic_id")
    share = np.full((judgments["query"].n_unique(), len(levels)), 1 / len(levels))
    targets = xr.DataArray(
        share,
        coords={"topic_id": np.arange(share.shape[0]), "grp": levels},
        dims=["topic_id", "grp"],
    )
    metric = EELMetric(qrels, [dimension], targets, target_len=DOCUMENTS)
    frame = run.select(
        pl.col("query").alias("topic_id"),
        pl.col("sample").alias("seq_no"),
        (pl.col("query").cast(pl.String) + "_" + pl.col("item").cast(pl.String)).alias("page_id"),
    ).to_pandas()
    start = time.perf_counter()
    frame.groupby("topic_id").apply(metric)
    return time.perf_counter() - start


def bare_query(
    run: pl.LazyFrame, judgments: pl.LazyFrame, *, same_work: bool = False
) -> list[pl.LazyFrame]:
    """The same means (rbp, p = 1/2, individual) as one hand-written Polars query: the floor of
    a DataFrame engine. Without ``same_work``: no check of the input, float sums, the samples
    a known constant. With it, the work frameaudit cannot leave out: the exposures and the
    per-query sums summed exactly (:func:`frameaudit._engine.exact_sums`, the same bits in any
    row order), the samples counted per query, and a second plan, collected with the first,
    proving positions and items unique within each sampled ranking."""
    kept = judgments.filter(pl.col("relevance") > 0)
    grades = kept.group_by("query", "relevance").agg(pl.len().alias("m"))
    above = pl.col("m").sum().over("query") - pl.col("m").cum_sum().over(
        "query", order_by="relevance"
    )
    grades = grades.with_columns(above.alias("b")).with_columns(
        ((0.5 ** pl.col("b")) * (1 - 0.5 ** pl.col("m")) / 0.5 / pl.col("m")).alias("t")
    )
    targets = kept.join(grades.select("query", "relevance", "t"), on=["query", "relevance"])
    weights = run.with_columns((0.5 ** (pl.col("rank") - 1)).alias("e"))
    if same_work:
        summed = _exact(weights, ["query", "item"], ["e"])
        samples = run.group_by("query").agg(pl.col("sample").n_unique().alias("n"))
        exposure = summed.join(samples, on="query").select(
            "query", "item", pl.col("e") / pl.col("n")
        )
    else:
        exposure = weights.group_by("query", "item").agg(pl.col("e").sum() / SAMPLES)
    both = exposure.join(
        targets.select("query", "item", "t"), on=["query", "item"], how="full", coalesce=True
    ).fill_null(0.0)
    e, t = pl.col("e"), pl.col("t")
    terms = {"ee_l": (e - t) ** 2, "ee_d": e * e, "ee_r": e * t}
    if same_work:
        per_query = _exact(both.with_columns(**terms), ["query"], list(terms))
    else:
        per_query = both.group_by("query").agg(term.sum().alias(n) for n, term in terms.items())
    means = per_query.select(pl.col(*terms).mean())
    if not same_work:
        return [means]
    unique = run.group_by("query", "sample").agg(
        (pl.col(c).n_unique() == pl.len()).alias(c) for c in ("rank", "item")
    )
    return [means, unique.select(pl.col("rank", "item").all())]


def _exact(frame: pl.LazyFrame, keys: list[str], columns: list[str]) -> pl.LazyFrame:
    summed: pl.LazyFrame = exact_sums(nw.from_native(frame), keys, columns).to_native()
    return summed


def part_one() -> list[str]:
    run, judgments = data(10_000)
    call = lambda: fa.fair.expected_exposure(  # noqa: E731
        run, judgments=judgments, sample="sample"
    )
    grouped = lambda: fa.fair.expected_exposure(  # noqa: E731
        run, judgments=judgments, sample="sample", group="group"
    )
    ours, result = best_of(call, 3)
    ours_grouped, _ = best_of(grouped, 3)
    floor, (bare,) = best_of(lambda: pl.collect_all(bare_query(run.lazy(), judgments.lazy())), 3)
    work, (same, unique) = best_of(
        lambda: pl.collect_all(bare_query(run.lazy(), judgments.lazy(), same_work=True)), 3
    )
    assert unique.row(0) == (True, True)
    assert all(
        abs(a - b) <= 1e-12 * abs(b)
        for means in (bare, same)
        for a, b in zip(result.row(0), means.row(0), strict=True)
    )
    lines = [
        "## 1. 10^6 rows in memory against the reference code",
        "",
        f"{run.height:,} run rows ({run['query'].n_unique():,} queries x {SAMPLES} samples x "
        f"{DOCUMENTS} documents), {judgments.height:,} judgments. Best of 3.",
        "",
        "| computation | seconds | frameaudit faster by |",
        "|---|---:|---:|",
        f"| `fa.fair.expected_exposure` (rbp, individual) | {ours:.3f} | |",
        f"| `fa.fair.expected_exposure` (rbp, per group) | {ours_grouped:.3f} | |",
        f"| the bare Polars query of the same means (no checks) | {floor:.3f} | |",
        f"| the same query with frameaudit's work (exact sums, samples counted, sampled "
        f"rankings checked) | {work:.3f} | |",
    ]
    expeval = os.environ.get("EXPEVAL")
    if expeval:
        seconds, means = expeval_seconds(run, judgments, Path(expeval))
        lines.append(
            f"| expeval's script against the bare query | | {seconds / floor:.0f}x (the floor) |"
        )
        mine = result.row(0)
        equal = all(abs(a - b) <= 5e-7 for a, b in zip(mine, means, strict=True))
        lines.append(
            f"| expeval's script (rbp, individual) | {seconds:.1f} | {seconds / ours:.0f}x |"
        )
        lines.append("")
        lines.append(
            f"Means over the queries, frameaudit {tuple(round(v, 6) for v in mine)}, expeval "
            f"{tuple(round(v, 6) for v in means)}: {'equal' if equal else 'DIFFERENT'} to its "
            "six printed decimals (EE-L, EE-D, EE-R)."
        )
    wptrec = os.environ.get("WPTREC")
    if wptrec:
        seconds = wptrec_seconds(run, judgments, Path(wptrec))
        lines.insert(
            -2 if expeval else len(lines),
            f"| TREC 2022 `EELMetric` per query (groups) | {seconds:.1f} | {seconds / ours_grouped:.0f}x |",
        )
    return lines


def part_two() -> list[str]:
    folder = Path(tempfile.gettempdir()) / "frameaudit_trec"
    done = folder / "_done"
    if not done.exists():
        folder.mkdir(parents=True, exist_ok=True)
        for chunk in range(10):
            run, judgments = data(100_000, seed=chunk)
            offset = chunk * 100_000
            run.with_columns(pl.col("query") + offset).write_parquet(folder / f"run{chunk}.parquet")
            judgments.with_columns(pl.col("query") + offset).write_parquet(
                folder / f"judgments{chunk}.parquet"
            )
        done.touch()
    setup = (
        "import polars as pl\nimport frameaudit as fa\n"
        f"lf = pl.scan_parquet({str(folder / 'run*.parquet')!r})\n"
        f"qrels = pl.scan_parquet({str(folder / 'judgments*.parquet')!r})\n"
    )
    call = 'fa.fair.expected_exposure(lf, judgments=qrels, sample="sample").collect(engine="streaming")'
    bare = (
        'lf.group_by("query", "item").agg((0.5 ** (pl.col("rank") - 1)).sum())'
        '.select(pl.col("literal").pow(2).sum()).collect(engine="streaming")'
    )
    # the same pass with the sums frameaudit promises (the same bits in any row order)
    exact = (
        "exact_sums(nw.from_native(lf.with_columns((0.5 ** (pl.col('rank') - 1)).alias('e'))),"
        ' ["query", "item"], ["e"]).to_native().select(pl.col("e").pow(2).sum())'
        '.collect(engine="streaming")'
    )
    # the whole computation by hand, with the work frameaudit cannot leave out
    by_hand = 'pl.collect_all(bare_query(lf, qrels, same_work=True), engine="streaming")[0]'
    here = f"import sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\n"
    measured = sampled(setup, call)
    floor = sampled(setup, bare)
    exact_floor = sampled(
        setup + "import narwhals.stable.v2 as nw\nfrom frameaudit._engine import exact_sums\n",
        exact,
    )
    work_floor = sampled(here + setup + "from bench_trec import bare_query\n", by_hand)
    rows = [
        ("bare pass (exposure per query and document)", floor),
        ("the bare pass summed exactly (`exact_sums`)", exact_floor),
        (
            "the means by hand with frameaudit's work (exact sums, samples counted, "
            "sampled rankings checked)",
            work_floor,
        ),
        ("`fa.fair.expected_exposure`", measured),
    ]
    return [
        "## 2. 10^8 rows from Parquet on Polars streaming",
        "",
        "| computation | seconds | peak GiB | over the bare pass |",
        "|---|---:|---:|---:|",
        *(
            f"| {name} | {m['seconds']:.1f} | {m['peak'] / 2**30:.2f} | "
            f"{m['seconds'] / floor['seconds']:.1f}x |"
            for name, m in rows
        ),
    ]


def main() -> None:
    in_parts(
        __doc__.splitlines()[0],
        "Expected exposure: the reference code and the scale",
        [part_one, part_two],
        RESULTS,
    )


if __name__ == "__main__":
    main()
