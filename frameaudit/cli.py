"""The ``frameaudit`` command line: ``frameaudit demo`` runs the metrics on a built-in example."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from frameaudit import datasets, fair

__all__ = ["main"]

# metric name → keyword arguments on the example search log
_GROUP_METRICS: dict[str, dict[str, Any]] = {
    "exp": {},
    "expu": {},
    "expru": {},
    "awrf": {"p": 0.5},
    "erbe": {"decay": 0.5},
    "erbp": {"decay": 0.5},
    "erbr": {"decay": 0.5, "relevance": "relevant"},
    "arp": {},
}


def _ranking_report(seed: int) -> str:
    log = datasets.ranking_example(seed=seed).lazy()
    roles = {"rank": "rank", "group": ["gender", "age"], "ranking": "query", "item": "item"}
    metric: Callable[..., Any]
    per_group: pl.LazyFrame | None = None
    combined = []
    for name, options in _GROUP_METRICS.items():
        metric = getattr(fair, name)
        values = metric(log, **roles, **options, combo=None)
        per_group = values if per_group is None else per_group.join(values, on=["gender", "age"])
        row = pl.concat(
            [metric(log, **roles, **options, combo=c).rename({name: c}) for c in fair.COMBOS],
            how="horizontal",
        )
        combined.append(row.select(pl.lit(name).alias("metric"), pl.all()))
    assert per_group is not None
    by_query = fair.ndkl(log, rank="rank", group=["gender", "age"], ranking="query", by="query")
    single = pl.concat(
        [
            fair.ndkl(log, rank="rank", group=["gender", "age"], ranking="query").select(
                pl.lit("ndkl (mean over queries)").alias("metric"), pl.col("ndkl").alias("value")
            ),
            fair.iaa(log, rank="rank", ranking="query", item="item").select(
                pl.lit("iaa (amortized over queries)").alias("metric"), pl.col("iaa").alias("value")
            ),
        ]
    )
    frames = pl.collect_all(
        [per_group.sort("gender", "age"), pl.concat(combined), single, by_query.head(5)]
    )
    return "\n\n".join(
        [
            "frameaudit demo: a search log of 20 queries x 30 results, intersectional groups "
            "(gender x age), generated with phi = 0.6: young women, the smallest group, are "
            "pushed towards the top.",
            "Per-group values (pooled over the 20 queries):",
            str(frames[0]),
            "Combined over groups, one column per combo (MinMaxRatio 1 = parity):",
            str(frames[1]),
            "Single-number metrics (0 = fair):",
            str(frames[2]),
            "NDKL per query (by='query'), first five:",
            str(frames[3]),
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``frameaudit`` command."""
    parser = argparse.ArgumentParser(prog="frameaudit", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo", help="run the metrics on a built-in example and print a report"
    )
    demo.add_argument("--seed", type=int, default=0, help="seed of the example data")
    args = parser.parse_args(argv)
    with pl.Config(tbl_rows=40, tbl_cols=12, float_precision=4, tbl_width_chars=140):
        print(_ranking_report(args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
