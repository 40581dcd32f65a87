"""The ``frameaudit`` command line: reports of every metric family, on built-in examples or files.

``frameaudit demo`` prints the fair-ranking report on a built-in example; ``frameaudit demo
clustering``, ``repro`` and ``explain`` print the other families' reports, ``frameaudit demo
all`` every one. ``frameaudit report FAMILY FILE --role column ...`` prints the same report for
a Parquet, CSV, Arrow IPC or NDJSON file, with the file's column names given as options.
``frameaudit --version`` prints the installed version.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import polars as pl

from frameaudit import datasets, explain, fair, repro
from frameaudit.exceptions import ColumnNotFoundError, FrameAuditError, InvalidParameterError

__all__ = ["main"]

_READERS: dict[str, Callable[[Path], pl.LazyFrame]] = {
    ".parquet": pl.scan_parquet,
    ".pq": pl.scan_parquet,
    ".csv": pl.scan_csv,
    ".arrow": pl.scan_ipc,
    ".ipc": pl.scan_ipc,
    ".feather": pl.scan_ipc,
    ".ndjson": pl.scan_ndjson,
    ".jsonl": pl.scan_ndjson,
}
# the report families whose options are exactly their column roles (default: the role's name)
_PLAIN_ROLES = {
    "repro": ("run", "sample", "target", "prediction"),
    "correspondence": ("query", "distance", "label", "predicted"),
    "cohesion": ("group", "feature", "importance"),
}


def _ranking_sections(
    log: pl.DataFrame,
    roles: dict[str, Any],
    *,
    relevance: str | None,
    ctr: str | None,
    relevant: str | None,
    p: float,
    decay: float,
    ci: float | None = None,
) -> list[str]:
    """Per-group values, every combo and the single-number metrics of one ranking log.

    A metric that needs a column not given (relevance, click-through rate, binary relevance)
    is left out. With ``ci``, a last section gives each metric's bootstrap interval over the
    rankings (MinMaxRatio for the group metrics).
    """
    groups = roles["group"]
    # the group metrics in report order, with their options (None: a column is missing)
    options: dict[str, dict[str, Any] | None] = {
        "exp": {},
        "expu": {"relevance": relevance} if relevance else None,
        "expru": {"relevance": relevance, "ctr": ctr} if relevance and ctr else None,
        "awrf": {"p": p},
        "erbe": {"decay": decay},
        "erbp": {"decay": decay},
        "erbr": {"relevance": relevant, "decay": decay} if relevant else None,
        "arp": {},
    }
    per_group: pl.DataFrame | None = None
    combined = []
    for name, extra in options.items():
        if extra is None:
            continue
        metric = getattr(fair, name)
        values = metric(log, **roles, **extra, combo=None)
        # every group metric reports the same group sizes n: shown once
        per_group = values if per_group is None else per_group.join(values.drop("n"), on=groups)
        # the metric runs once; every combo combines its per-group values
        row = pl.concat(
            [fair.combine(values, metric=name, combo=c).rename({name: c}) for c in fair.COMBOS],
            how="horizontal",
        )
        combined.append(row.select(pl.lit(name).alias("metric"), pl.all()))
    assert per_group is not None
    positions = {"rank": roles["rank"], "ranking": roles["ranking"]}
    single = [
        fair.ndkl(log, **positions, group=groups).select(
            pl.lit("ndkl (mean over rankings)").alias("metric"), pl.col("ndkl").alias("value")
        )
    ]
    if relevance:
        iaa = fair.iaa(log, **positions, item=roles["item"], relevance=relevance)
        single.append(
            iaa.select(
                pl.lit("iaa (amortized over rankings)").alias("metric"),
                pl.col("iaa").alias("value"),
            )
        )
    sections = [
        "Per-group values (pooled over the rankings):",
        str(per_group.sort(groups)),
        "Combined over groups, one column per combo (MinMaxRatio 1 = parity):",
        str(pl.concat(combined)),
        "Single-number metrics (0 = fair):",
        str(pl.concat(single)),
    ]
    if roles["ranking"] is not None:
        by_ranking = fair.ndkl(log, **positions, group=groups, by=roles["ranking"])
        sections += ["NDKL per ranking, first five:", str(by_ranking.head(5))]
    if ci is not None:
        intervals = [
            _interval_row(getattr(fair, name)(log, **roles, **extra, ci=ci), name)
            for name, extra in options.items()
            if extra is not None
        ]
        intervals.append(_interval_row(fair.ndkl(log, **positions, group=groups, ci=ci), "ndkl"))
        sections += [
            f"{ci:.0%} bootstrap intervals over the rankings (group metrics: MinMaxRatio); "
            "rankings: how many went into each value:",
            str(pl.concat(intervals)),
        ]
    return sections


def _interval_row(result: pl.DataFrame, metric: str) -> pl.DataFrame:
    """A metric's value and interval as a row of the report's interval table."""
    return result.select(
        pl.lit(metric).alias("metric"),
        pl.col(metric).alias("value"),
        pl.col(f"{metric}_lo").alias("lo"),
        pl.col(f"{metric}_hi").alias("hi"),
        "rankings",
        "undefined_replicates",
    )


def _clustering_sections(
    points: pl.DataFrame, roles: dict[str, Any], features: list[str] | None
) -> list[str]:
    """Per-cluster balance and every clustering metric (the distance ones need ``features``)."""
    metrics = [
        fair.cluster_balance(points, **roles),
        fair.min_cluster_ratio(points, **roles),
        fair.cluster_distribution_tv(points, **roles),
        fair.cluster_distribution_kl(points, **roles),
    ]
    if features:
        metrics += [
            fair.social_fairness_ratio(points, **roles, features=features),
            fair.silhouette_difference(points, **roles, features=features),
        ]
    table = pl.concat(metrics, how="horizontal")
    return [
        "Balance of each cluster: the smaller of rho_a and rho_b, a group's share of the "
        "cluster over its share of all points (1 = the cluster mirrors the data):",
        str(fair.cluster_balance(points, **roles, per_cluster=True)),
        "Every clustering metric. Most fair: 1 for cluster_balance and social_fairness_ratio "
        "(mean distance to the nearest centroid, a over b), 1 for min_cluster_ratio when the "
        "groups are of equal size, 0 for the TV and KL distances between the groups' cluster "
        "distributions and for silhouette_difference (b's mean silhouette minus a's):",
        str(table.transpose(include_header=True, header_name="metric", column_names=["value"])),
    ]


def _repro_sections(runs: pl.DataFrame, roles: dict[str, Any]) -> list[str]:
    """Every pairwise measure over the pairs of runs, and leave-one-out consistency."""
    return [
        "Every pairwise measure over the pairs of runs:",
        str(repro.summary(runs, **roles)),
        "Leave one out (each run's errors against the other runs'):",
        str(repro.leave_one_out(runs, **roles)),
    ]


def _correspondence_sections(cases: pl.DataFrame, roles: dict[str, Any]) -> list[str]:
    """Correspondence per predicted class, and the least supported predictions."""
    per_query = explain.correspondence(cases, **roles)
    query = roles["query"]
    return [
        "Correspondence of the predictions with their cases' labels, per predicted class:",
        str(explain.correspondence(cases, **roles, by=roles["predicted"])),
        "The five least supported predictions:",
        str(per_query.sort("correspondence", query, nulls_last=True).head(5)),
    ]


def _cohesion_sections(importances: pl.DataFrame, roles: dict[str, Any]) -> list[str]:
    """Position parity and both rank alignments of every group against the overall ranking."""
    group = roles["group"]
    options = {**roles, "per_group": True}
    cohesion = (
        explain.position_parity(importances, **options)
        .join(explain.rank_alignment(importances, **options), on=group)
        .join(
            explain.rank_alignment(importances, **options, method="alpha_jaccard").rename(
                {"rank_alignment": "alpha_jaccard"}
            ),
            on=group,
        )
    )
    return [
        "Explanation cohesion: each group's feature importances against the overall ranking "
        "(1 = same order):",
        str(cohesion.sort(group)),
    ]


# --- the demo: the built-in examples --------------------------------------------------------------


def _ranking_demo(seed: int) -> list[str]:
    roles = {"rank": "rank", "group": ["gender", "age"], "ranking": "query", "item": "item"}
    return [
        "frameaudit demo: a search log of 20 queries x 30 results, intersectional groups "
        "(gender x age), generated with phi = 0.6: young women, the smallest group, are "
        "pushed towards the top.",
        *_ranking_sections(
            datasets.ranking_example(seed=seed),
            roles,
            relevance="relevance",
            ctr="ctr",
            relevant="relevant",
            p=0.5,
            decay=0.5,
            ci=0.95,
        ),
    ]


def _clustering_demo(seed: int) -> list[str]:
    return [
        "Clustering fairness: a segmentation of 2,000 customers into 4 clusters; group a (30%) "
        "falls into the clusters unevenly (0.4, 0.3, 0.2, 0.1), group b evenly.",
        *_clustering_sections(
            datasets.clustering_example(seed=seed), {"a": "a", "b": "b"}, ["x", "y"]
        ),
    ]


def _repro_demo(seed: int) -> list[str]:
    return [
        "Reproducibility: 5 training runs predicting the same 1,000 samples; a fifth of the "
        "samples are hard and most runs get them wrong.",
        *_repro_sections(datasets.runs_example(seed=seed), {}),
    ]


def _explain_demo(seed: int) -> list[str]:
    train, queries = datasets.cases_example(seed=seed)
    cases = explain.nearest_cases(
        train, queries, features=["f1", "f2"], label="label", k=7, carry="predicted"
    )
    cohesion = _cohesion_sections(
        datasets.importance_example(seed=seed), {"group": "group", "overall": "overall"}
    )
    return [
        "Case-based explanations: 200 test cases, their 7 nearest of 500 training cases, and "
        "a weaker model's predictions (it ignores one of the two features).",
        "The nearest cases of the first test case:",
        str(cases.filter(pl.col("query") == 0)),
        *_correspondence_sections(cases, {"query": "query", "predicted": "predicted"}),
        "In the importances example, group g1 follows the overall ranking and g2 reverses it.",
        *cohesion,
    ]


_DEMOS: dict[str, Callable[[int], list[str]]] = {
    "ranking": _ranking_demo,
    "clustering": _clustering_demo,
    "repro": _repro_demo,
    "explain": _explain_demo,
}


# --- the report: a file -------------------------------------------------------------------------


def _read(path: str, columns: dict[str, str]) -> pl.DataFrame:
    """The ``columns`` (name → option that named it) of a data file, checked against its schema."""
    file = Path(path)
    reader = _READERS.get(file.suffix.lower())
    if reader is None:
        msg = f"FILE={path!r}: expected a file ending in {', '.join(_READERS)}"
        raise InvalidParameterError(msg)
    if not file.is_file():
        msg = f"FILE={path!r}: no such file"
        raise InvalidParameterError(msg)
    lazy = reader(file)
    names = lazy.collect_schema().names()
    for column, option in columns.items():
        if column not in names:
            raise ColumnNotFoundError.build(column, parameter=option, available=names, frame=path)
    return lazy.select(list(columns)).collect()


def _typed(frame: pl.DataFrame, column: str, option: str, text: str) -> Any:
    """A value given on the command line, as a value of ``column``'s dtype."""
    dtype = frame.schema[column]
    booleans = {"true": True, "1": True, "false": False, "0": False}
    try:
        if dtype.is_integer():
            return int(text)
        if dtype.is_float():
            return float(text)
        if dtype == pl.Boolean:
            return booleans[text.lower()]
    except (ValueError, KeyError):
        msg = f"{option}={text!r}: expected a value of column {column!r} ({dtype})"
        raise InvalidParameterError(msg) from None
    return text


def _report(args: argparse.Namespace) -> list[str]:
    """Read the file the arguments name and build the family's report."""
    family = args.family
    if family == "ranking":
        roles = {"rank": args.rank, "group": args.group, "ranking": args.ranking, "item": args.item}
        named = {
            "--rank": [args.rank],
            "--group": args.group,
            "--ranking": [args.ranking],
            "--item": [args.item],
            "--relevance": [args.relevance],
            "--ctr": [args.ctr],
            "--relevant": [args.relevant],
        }
        if args.ci is not None and args.ranking is None:
            msg = f"--ci={args.ci}: intervals resample the rankings; give --ranking"
            raise InvalidParameterError(msg)
        log = _read(args.file, _columns(named))
        extra = {"relevance": args.relevance, "ctr": args.ctr, "relevant": args.relevant}
        return _ranking_sections(log, roles, **extra, p=args.p, decay=args.decay, ci=args.ci)
    if family == "clustering":
        named = {"--cluster": [args.cluster], "--group": [args.group], "--features": args.features}
        points = _read(args.file, _columns(named))
        a = _typed(points, args.group, "--a", args.a)
        b = _typed(points, args.group, "--b", args.b)
        roles = {"cluster": args.cluster, "group": args.group, "a": a, "b": b}
        return _clustering_sections(points, roles, args.features)
    roles = {r: getattr(args, r) for r in _PLAIN_ROLES[family]}
    frame = _read(args.file, _columns({f"--{r}": [c] for r, c in roles.items()}))
    if family == "repro":
        return _repro_sections(frame, roles)
    if family == "correspondence":
        return _correspondence_sections(frame, roles)
    overall = _typed(frame, args.group, "--overall", args.overall)
    return _cohesion_sections(frame, {**roles, "overall": overall})


def _columns(named: dict[str, list[str | None]]) -> dict[str, str]:
    """Column name → the option that named it, for the options that were given."""
    return {c: option for option, columns in named.items() for c in columns or [] if c}


def _names(text: str) -> list[str]:
    """Column names separated by commas."""
    return [name.strip() for name in text.split(",")]


def _report_parser(commands: Any) -> None:
    report = commands.add_parser(
        "report",
        help="run a metric family on a data file and print a report",
        description="Run a metric family on a Parquet, CSV, Arrow IPC or NDJSON file. The "
        "options name the file's columns; their defaults are frameaudit's role names.",
    )
    families = report.add_subparsers(dest="family", required=True, metavar="FAMILY")

    def family(name: str, summary: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = families.add_parser(name, help=summary)
        parser.add_argument("file", metavar="FILE", help="the data file, one row per observation")
        return parser

    ranking = family("ranking", "fair-ranking metrics: one row per ranked item")
    ranking.add_argument("--rank", default="rank", help="1-based position column")
    ranking.add_argument(
        "--group",
        type=_names,
        default=["group"],
        help="group column, or columns separated by commas (intersectional groups)",
    )
    ranking.add_argument("--ranking", help="column identifying the rankings (default: one)")
    ranking.add_argument("--item", help="item id column (group sizes count distinct items)")
    ranking.add_argument("--relevance", help="relevance in [0, 1] (adds EXPU, IAA)")
    ranking.add_argument("--ctr", help="click-through rate in [0, 1] (with --relevance: EXPRU)")
    ranking.add_argument("--relevant", help="binary relevance, 0 or 1 (adds ERBR)")
    ranking.add_argument("--p", type=float, default=0.5, help="AWRF's p (default 0.5)")
    ranking.add_argument("--decay", type=float, default=0.5, help="ERB* decay (default 0.5)")
    ranking.add_argument(
        "--ci",
        type=float,
        metavar="LEVEL",
        help="add bootstrap intervals at this level, e.g. 0.95, resampling the rankings "
        "(needs --ranking; default: no intervals)",
    )

    clustering = family("clustering", "clustering fairness: one row per point")
    clustering.add_argument("--cluster", default="cluster", help="cluster label column")
    clustering.add_argument("--group", default="group", help="protected attribute column")
    clustering.add_argument("--a", required=True, help="the first compared group value")
    clustering.add_argument("--b", required=True, help="the second compared group value")
    clustering.add_argument(
        "--features",
        type=_names,
        help="numeric feature columns, separated by commas (adds the distance metrics)",
    )

    plain = {
        "repro": family("repro", "reproducibility: one row per (run, sample)"),
        "correspondence": family(
            "correspondence", "case-based correspondence: one row per (query, neighbour)"
        ),
        "cohesion": family("cohesion", "explanation cohesion: one row per (group, feature)"),
    }
    for name, parser in plain.items():
        for role in _PLAIN_ROLES[name]:
            parser.add_argument(f"--{role}", default=role, help=f"{role} column")
    plain["cohesion"].add_argument(
        "--overall", required=True, help="the group value whose rows hold the overall ranking"
    )


def _installed_version() -> str:
    """The version of the installed frameaudit distribution (its metadata, not the source)."""
    try:
        return metadata.version("frameaudit")
    except metadata.PackageNotFoundError:
        return "(not installed: no package metadata; pip install -e .)"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``frameaudit`` command."""
    parser = argparse.ArgumentParser(prog="frameaudit", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_installed_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo", help="run the metrics on a built-in example and print a report"
    )
    demo.add_argument(
        "family",
        nargs="?",
        default="ranking",
        choices=[*_DEMOS, "all"],
        help="the metric family to show (default: ranking)",
    )
    demo.add_argument("--seed", type=int, default=0, help="seed of the example data")
    _report_parser(commands)
    args = parser.parse_args(argv)
    with pl.Config(tbl_rows=40, tbl_cols=12, float_precision=4, tbl_width_chars=140):
        if args.command == "report":
            try:
                sections = _report(args)
            except FrameAuditError as error:
                print(f"frameaudit report: error: {error}", file=sys.stderr)
                return 2
            print("\n\n".join(sections))
            return 0
        families = list(_DEMOS) if args.family == "all" else [args.family]
        print("\n\n\n".join("\n\n".join(_DEMOS[family](args.seed)) for family in families))
    if args.family == "ranking":
        print("\nThe other families: frameaudit demo clustering | repro | explain | all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
