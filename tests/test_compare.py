"""Comparing systems (SPEC §7): each system's values, paired differences, p-values, corrections.

The differences' intervals and p-values are checked against an independent numpy comparison
(tests/reference/compare.py) with frameaudit's counter-based counts and coins; the values
against the metric functions on each system alone; the corrections against their definitions
and scipy.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest
import scipy.stats
from conftest import Constructor, assert_frame_close
from reference import compare as reference

import frameaudit as fa
from frameaudit._engine.resample import with_coin_flips, with_poisson_counts
from frameaudit.compare._comparison import adjusted
from frameaudit.exceptions import (
    ColumnNotFoundError,
    FrameAuditError,
    InvalidParameterError,
    InvalidValueError,
)

ROLES = {"ranking": "query", "group": "gender", "size": "rows"}


def _systems(*names: str) -> pl.DataFrame:
    """The example log as system ``names[0]``; the others rank each query's items otherwise."""
    log = fa.datasets.ranking_example()
    frames = [log.with_columns(pl.lit(names[0]).alias("system"))]
    for shift, name in enumerate(names[1:], start=1):
        n = pl.len().over("query")
        moved = ((pl.col("rank") - 1 + shift * 3) % n + 1).alias("rank")
        frames.append(log.with_columns(moved, pl.lit(name).alias("system")))
    return pl.concat(frames)


def test_a_row_is_numpys_paired_bootstrap_and_randomisation_test() -> None:
    frame = _systems("A", "B")
    boots, perms, seed, level = 150, 120, 5, 0.9
    result = fa.compare.ranking(
        frame,
        system="system",
        metrics=["exp"],
        ci=level,
        n_boot=boots,
        n_perm=perms,
        seed=seed,
        **ROLES,
    )
    row = result.table.filter(pl.col("combo") == "MinMaxRatio").row(0, named=True)
    renamed = frame.rename({"gender": "group"})
    queries = sorted(set(frame["query"].to_list()))
    expected = reference.paired(
        reference.exp_min_max,
        reference.exposure_per_query(renamed, "A", queries),
        reference.exposure_per_query(renamed, "B", queries),
        counts=reference.draws(with_poisson_counts, len(queries), boots, seed),
        coins=reference.draws(with_coin_flips, len(queries), perms, seed),
        level=level,
    )
    for column, value in expected.items():
        assert row[column] == pytest.approx(value, rel=1e-12), column
    assert (row["metric"], row["group"], row["system"], row["rankings"]) == ("exp", None, "B", 20)


def _pipelines() -> pl.DataFrame:
    """The example runs as pipeline A; pipeline B errs on other samples in its runs 0 and 1."""
    runs = fa.datasets.runs_example()
    moved = (pl.col("run") < 2) & (pl.col("sample") % 7 == 0)
    wrong = pl.when(moved).then(pl.col("target") + 1).otherwise(pl.col("prediction"))
    return pl.concat(
        [
            runs.with_columns(pl.lit("A").alias("system")),
            runs.with_columns(wrong.alias("prediction"), pl.lit("B").alias("system")),
        ]
    )


def _explainers() -> pl.DataFrame:
    """The example's cases predicted by model A, and by model B flipping a fifth of them."""
    train, queries = fa.datasets.cases_example()
    cases = fa.explain.nearest_cases(train, queries, features=["f1", "f2"], k=5, carry="predicted")
    flipped = pl.when(pl.col("query") % 5 == 0).then(1 - pl.col("predicted"))
    other = cases.with_columns(flipped.otherwise(pl.col("predicted")).alias("predicted"))
    return pl.concat(
        [
            cases.with_columns(pl.lit("A").alias("system")),
            other.with_columns(pl.lit("B").alias("system")),
        ]
    )


def _clusterings() -> pl.DataFrame:
    """The example clustering as A; B moves group b's points of cluster 0 to cluster 1,
    and names its clusters otherwise (0 → 2, 1 → 0, 2 → 1)."""
    points = fa.datasets.clustering_example().with_row_index("point")
    points = points.with_columns(pl.col("point").cast(pl.Int64))
    moved = (pl.col("group") == "b") & (pl.col("cluster") == 0)
    cluster = pl.when(moved).then((pl.col("cluster") + 1) % 4).otherwise(pl.col("cluster"))
    other = points.with_columns(cluster.alias("cluster"))
    renamed = other.with_columns(pl.col("cluster").replace({0: 2, 1: 0, 2: 1}))
    return pl.concat(
        [
            points.with_columns(pl.lit("A").alias("system")),
            renamed.with_columns(pl.lit("B").alias("system")),
        ]
    ), other


@pytest.mark.parametrize("family", ["repro", "explain", "clustering"])
def test_every_family_is_numpys_paired_bootstrap_and_randomisation_test(family: str) -> None:
    boots, perms, seed, level = 120, 100, 3, 0.9
    options = {"ci": level, "n_boot": boots, "n_perm": perms, "seed": seed}
    if family == "repro":
        frame = _pipelines()
        result = fa.compare.repro(frame, system="system", metrics=["ec_local"], **options)
        data = [reference.errors_per_sample(frame, s) for s in ("A", "B")]
        statistic = reference.ec_local
    elif family == "explain":
        frame = _explainers()
        result = fa.compare.explain(frame, system="system", **options)
        data = [reference.correspondence_per_query(frame, s) for s in ("A", "B")]
        statistic = reference.mean
    else:
        frame, unnamed = _clusterings()
        result = fa.compare.clustering(
            frame,
            system="system",
            a="a",
            b="b",
            point="point",
            metrics=["cluster_distribution_tv"],
            **options,
        )
        # matched to A's clusters, B's are its clusters before renaming
        both = pl.concat(
            [
                frame.filter(pl.col("system") == "A"),
                unnamed.with_columns(pl.lit("B").alias("system")),
            ]
        )
        data = [reference.memberships(both, s, 4) for s in ("A", "B")]
        statistic = reference.cluster_tv
    (row,) = result.table.iter_rows(named=True)
    units = len(data[0])
    expected = reference.paired(
        statistic,
        *data,
        counts=reference.draws(with_poisson_counts, units, boots, seed),
        coins=reference.draws(with_coin_flips, units, perms, seed),
        level=level,
    )
    for column, value in expected.items():
        assert row[column] == pytest.approx(value, rel=1e-12, abs=1e-15), column
    unit = {"repro": "samples", "explain": "queries", "clustering": "points"}[family]
    assert (row["system"], row[unit]) == ("B", units)
    assert expected["p_value"] < 0.05  # the systems differ: the data shows it


def _comparison(family: str, frame: Any) -> fa.compare.Comparison:
    """A small comparison of ``family`` on ``frame`` (any kind) with the seed fixed."""
    options: dict[str, Any] = {"system": "system", "n_boot": 40, "n_perm": 40, "seed": 9}
    if family == "ranking":
        return fa.compare.ranking(frame, metrics=["exp", "ndkl"], **options, **ROLES)
    if family == "repro":
        return fa.compare.repro(frame, metrics=["ec_local", "pa_kappa"], **options)
    if family == "explain":
        return fa.compare.explain(frame, **options)
    return fa.compare.clustering(frame, a="a", b="b", point="point", **options)


def _family_frame(family: str) -> pl.DataFrame:
    frames = {"ranking": lambda: _systems("A", "B"), "repro": _pipelines}
    frames |= {"explain": _explainers, "clustering": lambda: _clusterings()[0]}
    return frames[family]()


@functools.cache
def _polars_table(family: str) -> pl.DataFrame:
    """The comparison table of ``family``'s frame on Polars (one call for every frame kind)."""
    return _comparison(family, _family_frame(family)).table


@pytest.mark.spark(cases=["explain"])
@pytest.mark.parametrize("family", ["ranking", "repro", "explain", "clustering"])
def test_every_engine_gives_the_same_table(family: str, constructor: Constructor) -> None:
    """The same seed gives the same draws, coins and numbers on every engine, in any row order."""
    shuffled = _family_frame(family).sample(fraction=1.0, shuffle=True, seed=4)
    table = _comparison(family, constructor(shuffled)).table
    assert_frame_close(table, _polars_table(family), rel=1e-12)


def test_values_are_each_systems_metric_on_its_own_rows() -> None:
    frame = _systems("A", "B", "C")
    result = fa.compare.ranking(
        frame, system="system", metrics=["exp", "ndkl"], n_boot=20, n_perm=20, **ROLES
    )
    table = result.table
    assert (result.baseline, result.systems) == ("A", ("A", "B", "C"))
    assert sorted(set(table["system"])) == ["B", "C"]
    for system in ("A", "B", "C"):
        alone = frame.filter(pl.col("system") == system)
        exp = fa.fair.exp(alone, **ROLES, combo="Variance").item()
        per_group = dict(fa.fair.exp(alone, **ROLES, combo=None).select("gender", "exp").rows())
        # the systems rank the same items: the pooled reference shares are each one's own
        ndkl = fa.fair.ndkl(alone, ranking="query", group="gender").item()
        column = "baseline_value" if system == "A" else "value"
        rows = table if system == "A" else table.filter(pl.col("system") == system)
        variance = rows.filter((pl.col("metric") == "exp") & (pl.col("combo") == "Variance"))
        assert variance[column].to_list() == pytest.approx([exp] * variance.height, rel=1e-12)
        for group, value in per_group.items():
            got = rows.filter((pl.col("metric") == "exp") & (pl.col("group") == group))
            assert got[column].to_list() == pytest.approx([value] * got.height, rel=1e-12)
        got = rows.filter(pl.col("metric") == "ndkl")[column].to_list()
        assert got == pytest.approx([ndkl] * len(got), rel=1e-12)
    differences = table["value"] - table["baseline_value"]
    assert (table["difference"] - differences).abs().max() < 1e-12


def test_the_single_number_metrics_are_compared_from_the_registry() -> None:
    """AWRF_JS (against the target) and nDCG (ideal from the run's relevance) as each
    system's own call gives them; the default list holds every metric whose columns are
    given."""
    both = fa.datasets.rankers_example()
    roles = {"ranking": "query", "item": "item", "group": ["gender", "age"]}
    target = {("f", "old"): 0.3, ("f", "young"): 0.2, ("m", "old"): 0.3, ("m", "young"): 0.2}
    result = fa.compare.ranking(
        both,
        system="ranker",
        baseline="current",
        relevance="relevance",
        target=target,
        n_boot=20,
        n_perm=20,
        **roles,
    )
    singles = {m.name for m in fa.metrics("ranking", "single")} - {"iaa"}  # items recur
    assert singles <= set(result.table["metric"])
    for system, column in (("current", "baseline_value"), ("reranked", "value")):
        alone = both.filter(pl.col("ranker") == system)
        awrf = fa.fair.awrf_js(alone, **roles, target=target).item()
        ndcg = fa.fair.ndcg(alone, ranking="query", item="item").item()
        for metric, expected in (("awrf_js", awrf), ("ndcg", ndcg)):
            got = result.table.filter(pl.col("metric") == metric)[column].item()
            assert got == pytest.approx(expected, rel=1e-12), metric


def test_the_table_is_the_same_whatever_the_row_order() -> None:
    """Rows come in the order of the partitions, the combos as listed, then the groups."""
    frame = _systems("A", "B").with_columns((pl.col("query") % 2).alias("half"))
    options = {"system": "system", "metrics": ["exp"], "by": "half", "n_boot": 30, "n_perm": 30}
    tables = [
        fa.compare.ranking(frame.sample(fraction=1.0, shuffle=True, seed=s), **options, **ROLES)
        for s in range(3)
    ]
    for table in tables[1:]:
        assert table.table.equals(tables[0].table)
    first = tables[0].table.filter(pl.col("half") == 0)
    assert first["combo"].to_list() == [*fa.fair.COMBOS, None, None]
    assert first["group"].to_list()[-2:] == sorted(frame["gender"].unique().to_list())
    assert tables[0].table["half"].is_sorted()


def test_holm_and_benjamini_hochberg_adjust_every_p_value() -> None:
    p = [0.01, 0.04, 0.03, 0.2, None, 0.005]
    defined = [x for x in p if x is not None]
    holm = adjusted(pl.Series(p), "holm").to_list()
    bh = adjusted(pl.Series(p), "bh").to_list()
    assert holm[4] is None
    assert bh[4] is None
    assert [x for x in holm if x is not None] == pytest.approx(reference.holm(defined))
    # by hand: sorted 0.005, 0.01, 0.03, 0.04, 0.2 -> 5*0.005, 4*0.01, max(3*0.03, .), ...
    assert holm[5] == pytest.approx(0.025)
    assert holm[0] == pytest.approx(0.04)
    assert holm[2] == pytest.approx(0.09)
    assert holm[1] == pytest.approx(0.09)  # 2 * 0.04 = 0.08, but never below the step before
    fdr = scipy.stats.false_discovery_control(defined, method="bh")
    assert [x for x in bh if x is not None] == pytest.approx(list(fdr))
    assert adjusted(pl.Series(p), None).to_list() == p


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"system": "engine"}, ColumnNotFoundError, "system='engine': column 'engine' not found"),
        ({"baseline": "Z"}, InvalidParameterError, "baseline='Z' is not allowed; expected one of"),
        ({"n_perm": 1}, InvalidParameterError, "n_perm=1: expected an integer in [2, 100000]"),
        ({"n_perm": 2.5}, InvalidParameterError, "n_perm=2.5: expected an integer"),
        ({"n_perm": 10**6}, InvalidParameterError, "n_perm=1000000: expected an integer in [2,"),
        ({"correction": "bonf"}, InvalidParameterError, "correction='bonf' is not allowed"),
        ({"metrics": ["expu"]}, InvalidParameterError, "metrics='expu' is not allowed"),
    ],
)
def test_bad_input_is_refused(change: dict[str, object], error: type, message: str) -> None:
    arguments = {"system": "system", "n_boot": 5, "n_perm": 5, **ROLES, **change}
    with pytest.raises(error, match=re.escape(message)):
        fa.compare.ranking(_systems("A", "B"), **arguments)  # type: ignore[arg-type]


def test_one_system_or_a_missing_one_is_refused() -> None:
    with pytest.raises(InvalidParameterError, match="expected at least two systems to compare"):
        fa.compare.ranking(_systems("A"), system="system", n_boot=5, n_perm=5, **ROLES)
    unnamed = _systems("A", "B").with_columns(
        pl.when(pl.col("query") == 2).then(None).otherwise(pl.col("system")).alias("system")
    )
    with pytest.raises(InvalidParameterError, match="expected every row to name its system"):
        fa.compare.ranking(unnamed, system="system", n_boot=5, n_perm=5, **ROLES)


def test_units_missing_from_a_system_are_named_or_dropped() -> None:
    frame = _systems("A", "B").filter(~((pl.col("system") == "B") & pl.col("query").is_in([3, 7])))
    with pytest.raises(
        InvalidParameterError,
        match=r"found 2 unit\(s\) missing from some system "
        r"\(e.g. \(query=3\), \(query=7\)\)",
    ):
        fa.compare.ranking(frame, system="system", n_boot=5, n_perm=5, **ROLES)
    dropped = fa.compare.ranking(
        frame, system="system", n_boot=5, n_perm=5, on_missing="drop", metrics=["exp"], **ROLES
    )
    assert dropped.dropped == 2
    assert set(dropped.table["rankings"]) == {18}
    kept = frame.filter(~pl.col("query").is_in([3, 7]))
    value = fa.fair.exp(kept.filter(pl.col("system") == "B"), **ROLES).item()
    got = dropped.table.filter(pl.col("combo") == "MinMaxRatio")["value"].item()
    assert got == pytest.approx(value, rel=1e-12)


def _renamed_runs() -> pl.DataFrame:
    frame = _pipelines()
    return frame.with_columns(
        pl.when(pl.col("system") == "B").then(pl.col("run") + 10).otherwise(pl.col("run"))
    )


def _unlabelled() -> pl.DataFrame:
    frame = _clusterings()[0].with_columns(pl.col("cluster").cast(pl.Int64))
    hole = (pl.col("system") == "B") & (pl.col("point") == 4)
    return frame.with_columns(
        pl.when(hole).then(None).otherwise(pl.col("cluster")).alias("cluster")
    )


_CLUSTERING = {"a": "a", "b": "b", "point": "point"}


@pytest.mark.parametrize(
    ("family", "frame", "change", "error", "message"),
    [
        (
            "repro",
            _renamed_runs,
            {},
            InvalidParameterError,
            "run='run': expected every system to name its runs alike (the randomisation test "
            "exchanges a sample's run between systems), found 'A': 0, 1, 2, 3, 4; 'B': 10, 11,",
        ),
        ("repro", _pipelines, {"metrics": ["exp"]}, InvalidParameterError, "metrics='exp' is not"),
        ("repro", _pipelines, {"run": "seed"}, ColumnNotFoundError, "run='seed': column 'seed'"),
        (
            "clustering",
            lambda: _clusterings()[0],
            {**_CLUSTERING, "metrics": ["social_fairness_ratio"]},
            InvalidParameterError,
            "metrics='social_fairness_ratio': expected features= to compute it, found none",
        ),
        (
            "clustering",
            lambda: _clusterings()[0],
            {**_CLUSTERING, "point": "id"},
            ColumnNotFoundError,
            "point='id': column 'id' not found",
        ),
        (
            "clustering",
            _unlabelled,
            _CLUSTERING,
            InvalidValueError,
            "cluster='cluster': column 'cluster' holds 1 null value(s)",
        ),
        (
            "explain",
            lambda: _explainers().filter(~((pl.col("system") == "B") & (pl.col("query") == 5))),
            {},
            InvalidParameterError,
            "found 1 unit(s) missing from some system (e.g. (query=5))",
        ),
    ],
    ids=[
        "runs-named-otherwise",
        "not-a-repro-metric",
        "no-run-column",
        "sfr-without-features",
        "no-point-column",
        "missing-cluster-label",
        "query-missing",
    ],
)
def test_every_familys_bad_input_is_refused(
    family: str,
    frame: Callable[[], pl.DataFrame],
    change: dict[str, Any],
    error: type,
    message: str,
) -> None:
    compare = getattr(fa.compare, family)
    with pytest.raises(error, match=re.escape(message)):
        compare(frame(), system="system", n_boot=5, n_perm=5, **change)


def test_clusters_are_matched_within_each_partition() -> None:
    """B names its clusters by another permutation in each half: the matching undoes each.

    B moves a few of group a's points from cluster 0 to 3. Renamed or not, B compares alike;
    matched once over both halves, one half's exchanges would mix unmatched clusters.
    """
    points = fa.datasets.clustering_example().with_row_index("point")
    points = points.with_columns(pl.col("point").cast(pl.Int64)).with_columns(
        (pl.col("point") % 2).alias("half")
    )
    moved = (pl.col("group") == "a") & (pl.col("cluster") == 0) & (pl.col("point") % 41 == 0)
    other = points.with_columns(
        pl.when(moved).then(3).otherwise(pl.col("cluster")).alias("cluster")
    )
    renamed = other.with_columns(
        pl.when(pl.col("half") == 0)
        .then(pl.col("cluster").replace({0: 3, 1: 2, 2: 1, 3: 0}))
        .otherwise(pl.col("cluster").replace({0: 1, 1: 2, 2: 3, 3: 0}))
        .alias("cluster")
    )
    options = {"system": "system", "a": "a", "b": "b", "point": "point", "by": "half"}
    options |= {"n_boot": 50, "n_perm": 100, "metrics": ["cluster_distribution_tv"]}
    a = points.with_columns(pl.lit("A").alias("system"))
    expected = fa.compare.clustering(
        pl.concat([a, other.with_columns(pl.lit("B").alias("system"))]), **options
    ).table
    got = fa.compare.clustering(
        pl.concat([a, renamed.with_columns(pl.lit("B").alias("system"))]), **options
    ).table
    assert got.equals(expected)
    assert 0.1 < expected["p_value"].min() < 0.5  # not at the permutations' floor


@pytest.mark.spark(cases=["baseline"])
@pytest.mark.parametrize(
    ("case", "change", "message"),
    [
        ("one-system", {}, "system='system': expected at least two systems to compare, found 1"),
        ("baseline", {"baseline": "Z"}, "baseline='Z' is not allowed; expected one of: A, B"),
        ("n_perm", {"n_perm": 0}, "n_perm=0: expected an integer in [2, 100000]"),
        ("correction", {"correction": "bonf"}, "correction='bonf' is not allowed"),
        ("column", {"system": "engine"}, "system='engine': column 'engine' not found"),
    ],
)
def test_bad_input_reads_the_same_on_every_engine(
    constructor: Constructor, case: str, change: dict[str, Any], message: str
) -> None:
    frame = _systems("A") if case == "one-system" else _systems("A", "B")
    arguments = {"system": "system", "n_boot": 5, "n_perm": 5, "metrics": ["exp"], **ROLES}
    with pytest.raises(FrameAuditError, match=re.escape(message)):
        fa.compare.ranking(constructor(frame), **{**arguments, **change})
