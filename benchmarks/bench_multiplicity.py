"""Multiplicity at scale: the per-sample pass over every run's predictions.

1. 100 runs x 10^6 samples (10^8 rows) from Parquet on Polars' streaming engine: churn against
   a reference run and self-consistency, each against the bare pass over the same files (each
   sample's predictions summed over the runs: one aggregation per sample, no check, no join).
   Targets: within 3x the bare pass, under 2 GiB.
2. 20 runs x 10^6 samples in memory with ``group=`` and ``ci=0.95`` (1,000 replicates): the
   peak memory, against the frame's own size (bounded: it must not grow with the replicates).

Each computation runs in a fresh process (its peak resident memory from the start).
``python benchmarks/bench_multiplicity.py [--part 1|2]`` writes
``benchmarks/results/multiplicity.md``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import polars as pl

RESULTS = Path(__file__).parent / "results" / "multiplicity.md"
sys.path.insert(0, str(Path(__file__).parent))
from bench_scale import in_parts, sampled  # noqa: E402  (the memory-measuring subprocess)

GIB = 2**30


def runs(k: int, n: int, seed: int = 0) -> pl.DataFrame:
    """k runs of a binary classifier on n samples: each run flips 10% of the true labels at
    random; a score in [0, 1], three groups."""
    rng = np.random.default_rng(seed)
    target = rng.integers(0, 2, n, dtype=np.int8)
    group = rng.integers(0, 3, n, dtype=np.int8)
    frames = []
    for r in range(k):
        flip = rng.random(n) < 0.1
        frames.append(
            pl.DataFrame(
                {
                    "run": np.full(n, r, dtype=np.int32),
                    "sample": np.arange(n, dtype=np.int64),
                    "target": target,
                    "prediction": np.where(flip, 1 - target, target).astype(np.int8),
                    "score": rng.random(n).astype(np.float32),
                    "group": group,
                }
            )
        )
    return pl.concat(frames)


def files(k: int, n: int) -> Path:
    """The runs as one Parquet file per run, written once."""
    folder = Path(tempfile.gettempdir()) / f"frameaudit_multiplicity_{k}x{n}"
    if not (folder / "_done").exists():
        folder.mkdir(parents=True, exist_ok=True)
        every = runs(k, n)
        for r, part in enumerate(every.partition_by("run", maintain_order=True)):
            part.write_parquet(folder / f"run{r:03d}.parquet")
        (folder / "_done").touch()
    return folder


def part_one() -> list[str]:
    folder = files(100, 1_000_000)
    setup = (
        "import polars as pl\nimport frameaudit as fa\n"
        f"lf = pl.scan_parquet({str(folder / '*.parquet')!r})\n"
    )
    bare = (
        'lf.group_by("sample").agg(pl.col("prediction").cast(pl.Int64).sum())'
        '.select(pl.col("prediction").mean()).collect(engine="streaming")'
    )
    calls = {
        "`churn(reference=0)`": 'fa.repro.churn(lf, reference=0).collect(engine="streaming")',
        "`self_consistency()`": 'fa.repro.self_consistency(lf).collect(engine="streaming")',
    }
    floor = sampled(setup, bare)
    lines = [
        "## 1. 100 runs x 10^6 samples (10^8 rows) from Parquet, Polars streaming",
        "",
        "| computation | seconds | peak GiB | over the bare pass |",
        "|---|---:|---:|---:|",
        f"| bare pass (each sample's predictions summed) | {floor['seconds']:.1f} | "
        f"{floor['peak'] / GIB:.2f} | 1.0x |",
    ]
    for name, call in calls.items():
        measured = sampled(setup, call)
        lines.append(
            f"| {name} | {measured['seconds']:.1f} | {measured['peak'] / GIB:.2f} | "
            f"{measured['seconds'] / floor['seconds']:.1f}x |"
        )
    return lines


def part_two() -> list[str]:
    setup = (
        "import sys\nimport polars as pl\nimport frameaudit as fa\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from bench_multiplicity import runs\n"
        "df = runs(20, 1_000_000)\n"
    )
    loaded = sampled(setup, "df.head(1)")
    calls = {
        "`self_consistency(group=, ci=0.95)`": 'fa.repro.self_consistency(df, group="group", '
        "ci=0.95)",
        "`churn(target=, group=, combo=, ci=0.95)`": 'fa.repro.churn(df, target="target", '
        'group="group", combo="MaxMinDiff", ci=0.95)',
    }
    lines = [
        "## 2. 20 runs x 10^6 samples in memory, per group with 1,000 replicates",
        "",
        "| computation | seconds | peak GiB | over the loaded frame |",
        "|---|---:|---:|---:|",
        f"| the frame loaded (20,000,000 rows) | | {loaded['peak'] / GIB:.2f} | 1.0x |",
    ]
    for name, call in calls.items():
        measured = sampled(setup, call)
        lines.append(
            f"| {name} | {measured['seconds']:.1f} | {measured['peak'] / GIB:.2f} | "
            f"{measured['peak'] / loaded['peak']:.1f}x |"
        )
    return lines


def main() -> None:
    in_parts(__doc__.splitlines()[0], "Multiplicity at scale", [part_one, part_two], RESULTS)


if __name__ == "__main__":
    main()
