"""The fixed cost of a call with an interval, of a report, and of the repro summary.

    python benchmarks/bench_ci_calls.py                          # this checkout
    python benchmarks/bench_ci_calls.py --against /tmp/before    # and another, in the same run

On 30 rankings x 20 items (600 rows, eager Polars; bench_ranking's data): EXP with
``ci=0.95, n_boot=200``; the same group metric's three views (per-group values, every combo and
the replicates, from one bootstrap: what a report computes for each group metric); the ranking
report with ``ci=0.95, n_boot=200``. On 2 partitions x 3 runs x 40 samples of three classes,
weighted samples: ``repro.summary`` with ``by=`` and ``weight=``, without and with ``ci=0.8,
n_boot=50``, and ``ec_local`` with it. The CPU time of one call, the best of 5 rounds (after warm-up calls), in a
subprocess per checkout, alternating (bench_calls' machinery). Results are printed and written
to benchmarks/results/ci_calls.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench_calls import cpu_ms, main

RESULTS = Path(__file__).parent / "results" / "ci_calls.md"


def measure() -> dict[str, Any]:
    """Per case, CPU ms a call, and where the frameaudit measured lives."""
    import polars as pl  # imported here: the subprocess chooses the checkout by its path
    from bench_ranking import tidy_data

    import frameaudit as fa
    from frameaudit._engine import grouped_views

    log = tidy_data(30, 20)
    roles = {"rank": "rank", "group": "group", "ranking": "ranking", "item": "item"}
    boot = {"ci": 0.95, "n_boot": 200}
    columns = {"relevance": "relevance", "ctr": "ctr", "relevant": "relevant"}

    def views() -> Any:
        with grouped_views():
            return fa.fair.exp(log, **roles, combo=None, **boot)

    # 2 partitions of 3 runs over 40 samples of three classes, each sample with its weight
    rows = [(p, r, s) for p in ("x", "y") for r in range(3) for s in range(40)]
    runs = pl.DataFrame(rows, schema=["part", "run", "sample"], orient="row").with_columns(
        target=(pl.col("sample") % 3).cast(pl.String),
        prediction=((pl.col("sample") * (pl.col("run") + 2)) % 3).cast(pl.String),
        w=(pl.col("sample") % 4 + 1).cast(pl.Float64),
    )
    weighted = {"by": "part", "weight": "w"}
    sampled = {"ci": 0.8, "n_boot": 50, "seed": 7}
    times: dict[str, Any] = {"frameaudit": str(Path(fa.__file__).resolve())}
    times["exp, ci="] = cpu_ms(lambda: fa.fair.exp(log, **roles, **boot), calls=10, warmup=3)
    times["exp, the three views of ci="] = cpu_ms(views, calls=10, warmup=3)
    times["ranking report, ci="] = cpu_ms(
        lambda: fa.report.ranking(log, **roles, **columns, **boot), calls=2, warmup=3
    )
    times["repro summary"] = cpu_ms(lambda: fa.repro.summary(runs, **weighted), calls=10, warmup=3)
    times["repro summary, ci="] = cpu_ms(
        lambda: fa.repro.summary(runs, **weighted, **sampled), calls=5, warmup=3
    )
    times["ec_local, ci="] = cpu_ms(
        lambda: fa.repro.ec_local(runs, **weighted, **sampled), calls=5, warmup=3
    )
    return times


if __name__ == "__main__":
    main(
        "bench_ci_calls.measure()",
        RESULTS,
        script="bench_ci_calls.py",
        rounds="best of 2 x 5 rounds",
        description="Calls with intervals on 600 rows (30 rankings x 20 items, `n_boot=200`), "
        "the ranking report, and the repro summary (2 partitions x 3 runs x 40 samples, "
        "`weight=`; `n_boot=50`), eager Polars.",
        column="call",
        digits=1,
    )
