"""The ``frameaudit`` command line: ``frameaudit demo`` runs the metrics on built-in examples.

``frameaudit demo`` prints the fair-ranking report; ``frameaudit demo clustering``, ``repro``
and ``explain`` print the other families' reports, ``frameaudit demo all`` every one.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from frameaudit import datasets, explain, fair, repro

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


def _clustering_report(seed: int) -> str:
    points = datasets.clustering_example(seed=seed)
    groups: dict[str, Any] = {"a": "a", "b": "b"}
    features: dict[str, Any] = {"features": ["x", "y"]}
    metrics = pl.concat(
        [
            fair.cluster_balance(points, **groups),
            fair.min_cluster_ratio(points, **groups),
            fair.cluster_distribution_tv(points, **groups),
            fair.cluster_distribution_kl(points, **groups),
            fair.social_fairness_ratio(points, **groups, **features),
            fair.silhouette_difference(points, **groups, **features),
        ],
        how="horizontal",
    )
    return "\n\n".join(
        [
            "Clustering fairness: a segmentation of 2,000 customers into 4 clusters; group a (30%) "
            "falls into the clusters unevenly (0.4, 0.3, 0.2, 0.1), group b evenly.",
            "Balance of each cluster: the smaller of rho_a and rho_b, a group's share of the "
            "cluster over its share of all points (1 = the cluster mirrors the data):",
            str(fair.cluster_balance(points, **groups, per_cluster=True)),
            "Every clustering metric. Most fair: 1 for cluster_balance and social_fairness_ratio "
            "(mean distance to the nearest centroid, a over b), 1 for min_cluster_ratio when the "
            "groups are of equal size, 0 for the TV and KL distances between the groups' cluster "
            "distributions and for silhouette_difference (b's mean silhouette minus a's):",
            str(
                metrics.transpose(include_header=True, header_name="metric", column_names=["value"])
            ),
        ]
    )


def _repro_report(seed: int) -> str:
    runs = datasets.runs_example(seed=seed)
    return "\n\n".join(
        [
            "Reproducibility: 5 training runs predicting the same 1,000 samples; a fifth of the "
            "samples are hard and most runs get them wrong.",
            "Every pairwise measure over the 10 pairs of runs:",
            str(repro.summary(runs)),
            "Leave one out (each run's errors against the other runs'):",
            str(repro.leave_one_out(runs)),
        ]
    )


def _explain_report(seed: int) -> str:
    train, queries = datasets.cases_example(seed=seed)
    cases = explain.nearest_cases(
        train, queries, features=["f1", "f2"], label="label", k=7, carry="predicted"
    )
    importances = datasets.importance_example(seed=seed)
    overall: dict[str, Any] = {"overall": "overall", "per_group": True}
    cohesion = (
        explain.position_parity(importances, **overall)
        .join(explain.rank_alignment(importances, **overall), on="group")
        .join(
            explain.rank_alignment(importances, **overall, method="alpha_jaccard").rename(
                {"rank_alignment": "alpha_jaccard"}
            ),
            on="group",
        )
    )
    per_query = explain.correspondence(cases)
    return "\n\n".join(
        [
            "Case-based explanations: 200 test cases, their 7 nearest of 500 training cases, and "
            "a weaker model's predictions (it ignores one of the two features).",
            "The nearest cases of the first test case:",
            str(cases.filter(pl.col("query") == 0)),
            "Correspondence of the predictions with their cases' labels, per predicted class:",
            str(explain.correspondence(cases, by="predicted")),
            "The five least supported predictions:",
            str(per_query.sort("correspondence", "query").head(5)),
            "Explanation cohesion: feature importances of two groups against the overall ranking "
            "(g1 follows it, g2 reverses it; 1 = same order):",
            str(cohesion.sort("group")),
        ]
    )


_REPORTS: dict[str, Callable[[int], str]] = {
    "ranking": _ranking_report,
    "clustering": _clustering_report,
    "repro": _repro_report,
    "explain": _explain_report,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``frameaudit`` command."""
    parser = argparse.ArgumentParser(prog="frameaudit", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo", help="run the metrics on a built-in example and print a report"
    )
    demo.add_argument(
        "family",
        nargs="?",
        default="ranking",
        choices=[*_REPORTS, "all"],
        help="the metric family to show (default: ranking)",
    )
    demo.add_argument("--seed", type=int, default=0, help="seed of the example data")
    args = parser.parse_args(argv)
    families = list(_REPORTS) if args.family == "all" else [args.family]
    with pl.Config(tbl_rows=40, tbl_cols=12, float_precision=4, tbl_width_chars=140):
        print("\n\n\n".join(_REPORTS[family](args.seed) for family in families))
    if args.family == "ranking":
        print("\nThe other families: frameaudit demo clustering | repro | explain | all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
