"""The fixed cost of a clustering-fairness call: every label metric on a frame of 20 points.

    python benchmarks/bench_clustering_calls.py                          # this checkout
    python benchmarks/bench_clustering_calls.py --against /tmp/before    # and another

The clustering counterpart of bench_calls (whose rows are the ranking metrics): each label
metric (bench_clustering's) on an eager Polars frame of 20 points in three groups and three
clusters (``a="a", b="b"``), the CPU time of one call, the best of 5 rounds of 100 calls after
20 warm-up calls, against a bare Polars ``group_by`` counting the points per (group, cluster).
In a subprocess per checkout, alternating (bench_calls' machinery). Results are printed and
written to benchmarks/results/clustering_calls.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench_calls import cpu_ms, main

RESULTS = Path(__file__).parent / "results" / "clustering_calls.md"


def measure() -> dict[str, Any]:
    """Per label metric (and the bare pass), CPU ms a call, and where frameaudit lives."""
    import polars as pl  # imported here: the subprocess chooses the checkout by its path
    from bench_clustering import LABEL_METRICS

    import frameaudit as fa

    frame = pl.DataFrame({"group": ["a", "b", "c", "a", "b"] * 4, "cluster": [0, 1, 2, 1, 0] * 4})
    times: dict[str, Any] = {"frameaudit": str(Path(fa.__file__).resolve())}
    for metric in LABEL_METRICS:
        function = getattr(fa.fair, metric)
        times[metric] = cpu_ms(lambda f=function: f(frame, a="a", b="b"))  # type: ignore[misc]
    times["bare group_by"] = cpu_ms(lambda: frame.group_by("group", "cluster").agg(pl.len()))
    return times


if __name__ == "__main__":
    main(
        "bench_clustering_calls.measure()",
        RESULTS,
        script="bench_clustering_calls.py",
        rounds="best of 2 x 5 rounds of 100 calls",
        description="One call on an eager Polars frame of 20 points (3 groups, 3 clusters): "
        "what frameaudit costs around the engine, against a bare Polars `group_by` counting the "
        "points per (group, cluster).",
        column="metric",
    )
