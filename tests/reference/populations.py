"""Populations with a known sampling distribution, to validate intervals as statistics (SPEC §5).

Each :class:`Kind` draws many independent samples (audits) from one population, as one frame
with a ``sample`` column, and computes its statistic per sample with frameaudit (``by=`` the
sample). :func:`validate` then measures, for a 90% interval:

* the statistic's true sampling distribution, from ``truth_samples`` samples: its mean (the
  population value at this sample size) and its 90% spread (the 95th minus the 5th
  percentile);
* how often the interval of each of ``interval_samples`` further samples covers the mean, and
  its mean width over the true spread.

The populations are numpy generators written from the model alone; nothing here depends on how
frameaudit draws its replicates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

import frameaudit as fa
from frameaudit._engine import grouped_views
from frameaudit._registry import entry
from frameaudit.report._ranking import _ratios as _ranking_ratios

__all__ = ["KINDS", "SKEWED", "Kind", "Result", "validate"]

LEVEL = 0.9
Generator = Callable[[np.random.Generator, int], pl.DataFrame]
Statistic = Callable[..., pl.DataFrame]


@dataclass(frozen=True)
class Kind:
    """One kind of interval: a population and the statistic computed on its samples.

    ``statistic(frame, **bootstrap)`` returns one row per sample (and per ``keys`` value) with
    the value column ``value`` (and ``value_lo``, ``value_hi`` given ``ci=``).
    """

    name: str
    unit: str
    generate: Generator
    statistic: Statistic
    value: str
    keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class Result:
    """Coverage and width of one kind's interval, per key (e.g. per group)."""

    kind: str
    key: str
    truth: float
    spread: float
    coverage: float
    width: float
    samples: int


def _distinct_rows(rng: np.random.Generator, n: int, k: int, catalogue: int) -> np.ndarray:
    """``n`` rows of ``k`` distinct items drawn uniformly from ``catalogue`` items."""
    if catalogue == k:
        return np.argsort(rng.random((n, k)), axis=1)
    items = rng.integers(0, catalogue, size=(n, k))
    while True:
        ordered = np.sort(items, axis=1)
        repeated = (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)
        if not repeated.any():
            return items
        items[repeated] = rng.integers(0, catalogue, size=(int(repeated.sum()), k))


def search_log(rankings: int, length: int, catalogue: int | None, push: float = 0.3) -> Generator:
    """Samples of ``rankings`` rankings of ``length`` items; group "a" (40%) is pushed down.

    ``catalogue``: the number of items the rankings draw from (None: every row a new item,
    items never recur). An item's group is fixed (item id mod 5 < 2 is "a"). A ranking orders
    its items by a uniform noise plus ``push`` for the items of a.
    """

    def generate(rng: np.random.Generator, samples: int) -> pl.DataFrame:
        n = samples * rankings
        if catalogue is None:
            items = np.arange(n * length).reshape(n, length)
            is_a = rng.random((n, length)) < 0.4
        else:
            items = _distinct_rows(rng, n, length, catalogue)
            is_a = items % 5 < 2
        order = np.argsort(rng.random((n, length)) + push * is_a, axis=1)
        items = np.take_along_axis(items, order, axis=1)
        is_a = np.take_along_axis(is_a, order, axis=1)
        relevance = np.clip(0.6 - 0.3 * is_a + 0.3 * rng.standard_normal((n, length)), 0, 1)
        return pl.DataFrame(
            {
                "sample": np.repeat(np.arange(samples), rankings * length),
                "query": np.repeat(np.arange(n), length),
                "rank": np.tile(np.arange(1, length + 1), n),
                "item": items.ravel(),
                "group": np.where(is_a.ravel(), "a", "b"),
                "relevance": relevance.ravel(),
            }
        )

    return generate


def _ranking(metric: str, **options: Any) -> Statistic:
    def statistic(frame: pl.DataFrame, **bootstrap: Any) -> pl.DataFrame:
        function = getattr(fa.fair, metric)
        result = function(frame, ranking="query", by="sample", **options, **bootstrap)
        return result.rename(lambda c: c.replace(metric, "value"))

    return statistic


def _ratio_to_largest(frame: pl.DataFrame, **bootstrap: Any) -> pl.DataFrame:
    """EXP's ratio of each group to the largest group, per sample, as the ranking report gives
    it with ``reference="largest"`` (``tables["ratios"]``; the reference's own row left out)."""
    arguments = {"ranking": "query", "by": "sample", "size": "rows"}
    replicates = None
    if bootstrap:  # the per-group values and the replicates of one call, as the report has them
        with grouped_views():
            values, _, replicates = fa.fair.exp(frame, **arguments, combo=None, **bootstrap)
    else:
        values = fa.fair.exp(frame, **arguments, combo=None)
    found = _ranking_ratios(
        "exp", values, replicates, boot=bootstrap, reference="largest",
        partitions=["sample"], keys=["group"],
    )  # fmt: skip
    ends = [pl.col(f"ratio_{end}").alias(f"value_{end}") for end in ("lo", "hi") if bootstrap]
    return found.filter(pl.col("group") != pl.col("reference")).select(
        "sample", "group", pl.col("ratio").alias("value"), *ends
    )


def points(size: int) -> Generator:
    """Samples of ``size`` points in 4 clusters; group a (30%) falls into them unevenly."""

    def generate(rng: np.random.Generator, samples: int) -> pl.DataFrame:
        n = samples * size
        is_a = rng.random(n) < 0.3
        cumulative_a, cumulative_b = np.cumsum([0.4, 0.3, 0.2, 0.1]), np.cumsum([0.25] * 4)
        u = rng.random(n)
        cluster = np.where(is_a, np.searchsorted(cumulative_a, u), np.searchsorted(cumulative_b, u))
        return pl.DataFrame(
            {
                "sample": np.repeat(np.arange(samples), size),
                "point": np.arange(n),
                "cluster": np.minimum(cluster, 3),
                "group": np.where(is_a, "a", "b"),
            }
        )

    return generate


def _clustering(frame: pl.DataFrame, **bootstrap: Any) -> pl.DataFrame:
    result = fa.fair.cluster_distribution_tv(
        frame, a="a", b="b", point="point", by="sample", **bootstrap
    )
    return result.rename(lambda c: c.replace("cluster_distribution_tv", "value"))


def runs(samples_per_audit: int, n_runs: int) -> Generator:
    """Samples of ``samples_per_audit`` evaluation items, each predicted by ``n_runs`` runs.

    A fifth of the items are hard (each run errs with probability 0.6), the rest easy (0.1).
    """

    def generate(rng: np.random.Generator, samples: int) -> pl.DataFrame:
        n = samples * samples_per_audit
        hard = rng.random(n) < 0.2
        wrong = rng.random((n_runs, n)) < np.where(hard, 0.6, 0.1)
        target = rng.integers(0, 2, n)
        return pl.DataFrame(
            {
                "sample_id": np.tile(np.repeat(np.arange(samples), samples_per_audit), n_runs),
                "run": np.repeat(np.arange(n_runs), n),
                "sample": np.tile(np.arange(n), n_runs),
                "target": np.tile(target, n_runs),
                "prediction": np.where(wrong, 1 - target, target).ravel(),
            }
        )

    return generate


def _repro(frame: pl.DataFrame, **bootstrap: Any) -> pl.DataFrame:
    result = fa.repro.ec_local(frame, by="sample_id", **bootstrap)
    return result.rename({"sample_id": "sample"}).rename(lambda c: c.replace("ec_local", "value"))


def grouped_runs(samples_per_audit: int, n_runs: int) -> Generator:
    """Samples of ``samples_per_audit`` items in groups a (70%) and b, predicted by ``n_runs``
    runs with 3 classes; an item is hard (each run predicts at random) with probability 0.1 in
    a and 0.4 in b, else every run predicts its class with probability 0.9."""

    def generate(rng: np.random.Generator, samples: int) -> pl.DataFrame:
        n = samples * samples_per_audit
        group = np.where(rng.random(n) < 0.7, "a", "b")
        hard = rng.random(n) < np.where(group == "a", 0.1, 0.4)
        target = rng.integers(0, 3, n)
        keep = rng.random((n_runs, n)) < np.where(hard, 1 / 3, 0.9)
        other = rng.integers(0, 3, (n_runs, n))
        return pl.DataFrame(
            {
                "sample_id": np.tile(np.repeat(np.arange(samples), samples_per_audit), n_runs),
                "run": np.repeat(np.arange(n_runs), n),
                "sample": np.tile(np.arange(n), n_runs),
                "grp": np.tile(group, n_runs),
                "target": np.tile(target, n_runs),
                "prediction": np.where(keep, target, other).ravel(),
            }
        )

    return generate


def _multiplicity(metric: str, **options: Any) -> Statistic:
    """A multiplicity metric per audit and group: its headline column as ``value``."""

    def statistic(frame: pl.DataFrame, **bootstrap: Any) -> pl.DataFrame:
        function = getattr(fa.repro, metric)
        result = function(frame, by="sample_id", group="grp", **options, **bootstrap)
        column = next(iter(entry(metric).outputs))
        ends = [pl.col(f"{column}_{end}").alias(f"value_{end}") for end in ("lo", "hi")]
        return result.select(
            pl.col("sample_id").alias("sample"), "grp", pl.col(column).alias("value"),
            *(ends if bootstrap else []),
        )  # fmt: skip

    return statistic


def neighbours(queries: int, k: int) -> Generator:
    """Samples of ``queries`` queries with ``k`` neighbours; a query is "hard" with p = 0.3."""

    def generate(rng: np.random.Generator, samples: int) -> pl.DataFrame:
        n = samples * queries
        hard = rng.random(n) < 0.3
        agree = rng.random((n, k)) < np.where(hard, 0.4, 0.9)[:, None]
        return pl.DataFrame(
            {
                "sample": np.repeat(np.arange(samples), queries * k),
                "query": np.repeat(np.arange(n), k),
                "distance": rng.exponential(1.0, n * k),
                "label": np.where(agree.ravel(), 1, 0),
                "predicted": np.ones(n * k, dtype=np.int64),
            }
        )

    return generate


def _correspondence(frame: pl.DataFrame, **bootstrap: Any) -> pl.DataFrame:
    result = fa.explain.correspondence(frame, by="sample", **bootstrap)
    return result.rename(lambda c: c.replace("correspondence", "value"))


def stochastic_run(queries: int, pool: int = 8, samples: int = 4, length: int = 5) -> Generator:
    """Samples of ``queries`` queries, each with a pool of ``pool`` items graded 0-2 and a
    stochastic ranker's ``samples`` rankings of ``length`` (grades plus Gumbel noise).

    The judgments are the rows with ``draw`` -1 (every pool item, ``rank`` 0); query ids are
    unique across samples.
    """

    def generate(rng: np.random.Generator, samples_per_audit: int) -> pl.DataFrame:
        n = samples_per_audit * queries
        grades = rng.choice([0, 0, 1, 2], size=(n, pool))
        keys = grades[:, None, :] + rng.gumbel(size=(n, samples, pool))
        top = np.argsort(-keys, axis=2)[:, :, :length]
        audit = np.arange(n) // queries
        ranked = pl.DataFrame(
            {
                "sample": np.repeat(audit, samples * length),
                "query": np.repeat(np.arange(n), samples * length),
                "draw": np.tile(np.repeat(np.arange(samples), length), n),
                "item": top.ravel(),
                "rank": np.tile(np.arange(1, length + 1), n * samples),
                "grade": np.zeros(n * samples * length, dtype=np.int64),
            }
        )
        judged = pl.DataFrame(
            {
                "sample": np.repeat(audit, pool),
                "query": np.repeat(np.arange(n), pool),
                "draw": np.full(n * pool, -1),
                "item": np.tile(np.arange(pool), n),
                "rank": np.zeros(n * pool, dtype=np.int64),
                "grade": grades.ravel(),
            }
        )
        return pl.concat([ranked, judged])

    return generate


def _expected_exposure(frame: pl.DataFrame, **bootstrap: Any) -> pl.DataFrame:
    """EE-L per sample (audit): the judgments are the frame's rows with draw -1."""
    run = frame.filter(pl.col("draw") >= 0).select("sample", "query", "draw", "item", "rank")
    judgments = frame.filter(pl.col("draw") < 0).select(
        "sample", "query", "item", pl.col("grade").alias("relevance")
    )
    result = fa.fair.expected_exposure(
        run, judgments=judgments, sample="draw", by="sample", **bootstrap
    )
    ends = [pl.col(f"ee_l_{end}").alias(f"value_{end}") for end in ("lo", "hi") if bootstrap]
    return result.select("sample", pl.col("ee_l").alias("value"), *ends)


KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in [
        Kind(
            "EXP MinMaxRatio (a ratio of sums)",
            "query",
            search_log(200, 25, None),
            _ranking("exp", size="rows"),
            "value",
        ),
        Kind(
            "ERBE per group (a total)",
            "query",
            search_log(200, 25, None),
            _ranking("erbe", combo=None),
            "value",
            ("group",),
        ),
        Kind("IAA (a total)", "query", search_log(200, 25, None), _ranking("iaa"), "value"),
        Kind(
            "EXP per group, item=, items never recur",
            "query",
            search_log(200, 25, None),
            _ranking("exp", item="item", combo=None),
            "value",
            ("group",),
        ),
        Kind(
            "EXP per group, item=, items recur (1.25 rankings an item)",
            "query",
            search_log(200, 25, 4000),
            _ranking("exp", item="item", combo=None),
            "value",
            ("group",),
        ),
        Kind(
            "EXP per group, item=, 25 items in every ranking",
            "query",
            search_log(200, 25, 25),
            _ranking("exp", item="item", combo=None),
            "value",
            ("group",),
        ),
        Kind(
            "EXP ratio to the largest group (a ratio of two groups' values)",
            "query",
            search_log(200, 25, None),
            _ratio_to_largest,
            "value",
            ("group",),
        ),
        Kind(
            "NDKL (a mean over rankings)",
            "query",
            search_log(200, 25, None),
            _ranking("ndkl"),
            "value",
        ),
        Kind(
            "ARP MinMaxRatio (pairs)",
            "query",
            search_log(200, 25, None),
            _ranking("arp"),
            "value",
        ),
        Kind(
            "AWRF_JS (a mean over rankings)",
            "query",
            search_log(200, 25, None),
            _ranking("awrf_js"),
            "value",
        ),
        Kind(
            "nDCG (a mean over rankings)",
            "query",
            search_log(200, 25, None),
            _ranking("ndcg"),
            "value",
        ),
        Kind(
            "EE-L (a mean over judged queries)",
            "query",
            stochastic_run(200),
            _expected_exposure,
            "value",
        ),
        Kind("cluster distribution TV", "point", points(2000), _clustering, "value"),
        Kind("EC_l, mean over run pairs", "sample", runs(500, 5), _repro, "value"),
        Kind(
            "self-consistency per group (a mean over samples)",
            "sample",
            grouped_runs(400, 8),
            _multiplicity("self_consistency"),
            "value",
            ("grp",),
        ),
        Kind(
            "discrepancy per group (a maximum over runs)",
            "sample",
            grouped_runs(400, 8),
            _multiplicity("discrepancy"),
            "value",
            ("grp",),
        ),
        Kind("mean correspondence", "query", neighbours(300, 7), _correspondence, "value"),
    ]
}


SKEWED = Kind(
    "ERBE per group, a strongly skewed total (a pushed far down)",
    "query",
    search_log(200, 25, None, push=0.7),
    _ranking("erbe", combo=None),
    "value",
    ("group",),
)
"""A total whose per-ranking values are so skewed (a's exposure: mostly near 0, now and then
an item of a on top) that the percentile bootstrap under-covers; the benchmark sets the
textbook multinomial bootstrap beside it."""


def validate(
    kind: Kind,
    *,
    truth_samples: int = 2000,
    interval_samples: int = 300,
    n_boot: int = 400,
    seed: int = 2026,
    generate: Generator | None = None,
) -> list[Result]:
    """Coverage and width of ``kind``'s 90% interval (see the module's docstring)."""
    generate = generate or kind.generate
    rng = np.random.default_rng(seed)
    keys = list(kind.keys)
    truth_frame = kind.statistic(generate(rng, truth_samples))
    truth = truth_frame.group_by(keys or pl.lit(0)).agg(
        pl.col("value").mean().alias("truth"),
        (pl.col("value").quantile(0.95, "linear") - pl.col("value").quantile(0.05, "linear")).alias(
            "spread"
        ),
    )
    intervals = kind.statistic(generate(rng, interval_samples), ci=LEVEL, n_boot=n_boot, seed=seed)
    if keys:
        joined = intervals.join(truth, on=keys, how="left")
    else:
        joined = intervals.join(truth.drop("literal"), how="cross")
    summary = joined.group_by(keys or pl.lit(0)).agg(
        pl.col("truth").first(),
        pl.col("spread").first(),
        ((pl.col("value_lo") <= pl.col("truth")) & (pl.col("truth") <= pl.col("value_hi")))
        .mean()
        .alias("coverage"),
        ((pl.col("value_hi") - pl.col("value_lo")).mean() / pl.col("spread").first()).alias(
            "width"
        ),
        pl.len().alias("samples"),
    )
    label = (lambda row: "/".join(str(row[k]) for k in keys)) if keys else (lambda _: "")
    return [
        Result(
            kind.name,
            label(row),
            row["truth"],
            row["spread"],
            row["coverage"],
            row["width"],
            row["samples"],
        )
        for row in summary.sort(keys or "truth").iter_rows(named=True)
    ]
