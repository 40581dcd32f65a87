"""Pairs of systems with a known difference, to validate comparisons as statistics (SPEC §7).

Each :class:`PairedKind` draws many independent audits of two systems, "A" (the baseline) and
"B", evaluated on the same units, as one frame with an ``audit`` column; the comparison runs
once over all of them (``by="audit"``). Under the null the two systems are drawn from the same
distribution given the unit (exchangeable within each unit, the randomisation test's null);
otherwise B differs from A by a fixed change of its model. The functions measure:

* :func:`null_rejection`: how often p < 0.05 under the null (target 4-6%), and how often
  Holm's adjustment (the independent numpy one of ``reference.compare``) over every row of an
  audit rejects anything (the family-wise error, target at most 5%);
* :func:`coverage`: with a change, the difference's true sampling distribution from many
  audits (its mean, the population difference at this size, and its 95% spread), and how
  often each further audit's 95% interval covers that mean (target 93-97%) and its width over
  the true spread (target 0.8-1.3x);
* :func:`power`: how often p < 0.05 with a change, by number of units.

The populations are numpy generators written from the model alone; nothing here depends on how
frameaudit draws its replicates or coins.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
from reference.compare import holm

import frameaudit as fa

__all__ = ["PAIRED", "Coverage", "PairedKind", "coverage", "null_rejection", "power"]

ALPHA = 0.05
LEVEL = 0.95
Generator = Callable[[np.random.Generator, int, int, bool], pl.DataFrame]
"""``generate(rng, audits, units, changed)``: a frame of both systems' rows, per audit."""


@dataclass(frozen=True)
class PairedKind:
    """One comparison: two systems' population and the comparison that runs on it.

    ``compare(frame, **options)`` is a :mod:`frameaudit.compare` builder with its roles bound;
    ``rows`` picks the table's rows this kind validates (one per audit, or one per audit and
    group); ``keys`` tell those rows apart within an audit.
    """

    name: str
    unit: str
    units: int
    generate: Generator
    compare: Callable[..., fa.compare.Comparison]
    rows: pl.Expr
    keys: tuple[str, ...] = ()
    kink: bool = False
    """A minimum, maximum or absolute value over terms that nearly tie: the percentile
    interval over-covers there (the benchmark measures 98%), on the safe side."""


@dataclass(frozen=True)
class Coverage:
    """Coverage and width of one row's 95% interval of the difference."""

    key: str
    truth: float
    spread: float
    coverage: float
    width: float
    audits: int


def _table(kind: PairedKind, frame: pl.DataFrame, **options: Any) -> pl.DataFrame:
    table = kind.compare(frame, system="system", baseline="A", by="audit", **options).table
    return table.filter(kind.rows)


def null_rejection(
    kind: PairedKind, *, audits: int, n_perm: int, seed: int = 2026
) -> tuple[float, float, int]:
    """Under the null: the share of p < 0.05 over the kind's rows, the share of audits where
    Holm over every row of the audit rejects one, and the number of rows an audit has."""
    frame = kind.generate(np.random.default_rng(seed), audits, kind.units, False)
    table = kind.compare(
        frame, system="system", baseline="A", by="audit", n_boot=2, n_perm=n_perm, seed=seed
    ).table
    rejected = (table.filter(kind.rows)["p_value"] < ALPHA).mean()
    per_audit = table.group_by("audit").agg(pl.col("p_value"))
    family = [min(holm(p)) < ALPHA for p in per_audit["p_value"].to_list()]
    return float(rejected), float(np.mean(family)), table.height // audits


def coverage(
    kind: PairedKind, *, truth_audits: int, audits: int, n_boot: int, seed: int = 2026
) -> list[Coverage]:
    """With a change: the 95% interval's coverage of the population difference, and its width
    over the difference's true 95% spread (per row of the kind)."""
    rng = np.random.default_rng(seed)
    keys = list(kind.keys)
    truth_frame = kind.generate(rng, truth_audits, kind.units, True)
    truth = (
        _table(kind, truth_frame, n_boot=2, n_perm=2, seed=seed)
        .group_by(keys or pl.lit(0))
        .agg(
            pl.col("difference").mean().alias("truth"),
            (
                pl.col("difference").quantile(0.975, "linear")
                - pl.col("difference").quantile(0.025, "linear")
            ).alias("spread"),
        )
    )
    frame = kind.generate(rng, audits, kind.units, True)
    intervals = _table(kind, frame, ci=LEVEL, n_boot=n_boot, n_perm=2, seed=seed)
    if keys:
        joined = intervals.join(truth, on=keys, how="left")
    else:
        joined = intervals.join(truth.drop("literal"), how="cross")
    low, high = pl.col("difference_lo"), pl.col("difference_hi")
    summary = joined.group_by(keys or pl.lit(0)).agg(
        pl.col("truth").first(),
        pl.col("spread").first(),
        ((low <= pl.col("truth")) & (pl.col("truth") <= high)).mean().alias("coverage"),
        ((high - low).mean() / pl.col("spread").first()).alias("width"),
        pl.len().alias("audits"),
    )
    return [
        Coverage(
            "/".join(str(row[k]) for k in keys),
            row["truth"],
            row["spread"],
            row["coverage"],
            row["width"],
            row["audits"],
        )
        for row in summary.sort(keys or "truth").iter_rows(named=True)
    ]


def power(
    kind: PairedKind,
    *,
    units: int,
    audits: int,
    n_perm: int,
    seed: int = 2026,
    generate: Generator | None = None,
) -> float:
    """With a change: the share of audits of ``units`` units where p < 0.05 (the kind's
    population, or ``generate``'s)."""
    frame = (generate or kind.generate)(np.random.default_rng(seed), audits, units, True)
    table = _table(kind, frame, n_boot=2, n_perm=n_perm, seed=seed)
    return float((table["p_value"] < ALPHA).mean())


def rankers(length: int, groups: int = 2, push: float = 0.3, change: float = 0.25) -> Generator:
    """Two rankers of the same queries' items; the items of group "a" are pushed down.

    A query holds ``length`` items; its share of group a is drawn from Beta(2, 3) (the
    queries differ, so pairing matters), the rest spread evenly over the other groups
    ("b", "c", ...). Each ranker orders them by a uniform noise plus a push of ``push`` for the
    items of a; ranker B pushes by ``push`` - ``change`` when ``changed`` (fairer), else by
    ``push`` as A does, with noise of its own.
    """
    names = np.array([chr(ord("a") + g) for g in range(groups)])

    def generate(rng: np.random.Generator, audits: int, units: int, changed: bool) -> pl.DataFrame:
        n = audits * units
        share = rng.beta(2, 3, n)[:, None]
        u = rng.random((n, length))
        other = 1 + np.minimum((u - share) / (1 - share) * (groups - 1), groups - 2).astype(int)
        code = np.where(u < share, 0, other)
        frames = []
        for system, pushed in (("A", push), ("B", push - change if changed else push)):
            order = np.argsort(rng.random((n, length)) + pushed * (code == 0), axis=1)
            ranked = np.take_along_axis(code, order, axis=1)
            frames.append(
                pl.DataFrame(
                    {
                        "audit": np.repeat(np.arange(audits), units * length),
                        "system": system,
                        "query": np.repeat(np.arange(n), length),
                        "rank": np.tile(np.arange(1, length + 1), n),
                        "group": names[ranked.ravel()],
                    }
                )
            )
        return pl.concat(frames)

    return generate


def _ranking(metrics: list[str], **options: Any) -> Callable[..., fa.compare.Comparison]:
    def compare(frame: pl.DataFrame, **arguments: Any) -> fa.compare.Comparison:
        return fa.compare.ranking(frame, ranking="query", metrics=metrics, **options, **arguments)

    return compare


def pipelines(runs: int) -> Generator:
    """Two training pipelines, each run ``runs`` times on the same samples (run ids alike).

    A fifth of the samples are hard (the same in both pipelines: the pairing): a run errs on a
    hard sample with probability 0.6, on an easy one with 0.1, independently. Pipeline B errs
    on hard samples with probability 0.45 when ``changed``.
    """

    def generate(rng: np.random.Generator, audits: int, units: int, changed: bool) -> pl.DataFrame:
        n = audits * units
        hard = rng.random(n) < 0.2
        target = rng.integers(0, 2, n)
        frames = []
        for system, on_hard in (("A", 0.6), ("B", 0.45 if changed else 0.6)):
            wrong = rng.random((runs, n)) < np.where(hard, on_hard, 0.1)
            frames.append(
                pl.DataFrame(
                    {
                        "audit": np.tile(np.repeat(np.arange(audits), units), runs),
                        "system": system,
                        "run": np.repeat(np.arange(runs), n),
                        "sample": np.tile(np.arange(n), runs),
                        "target": np.tile(target, runs),
                        "prediction": np.where(wrong, 1 - target, target).ravel(),
                    }
                )
            )
        return pl.concat(frames)

    return generate


def explainers(k: int) -> Generator:
    """Two models' predictions of the same queries, each with ``k`` neighbours.

    A query is hard with probability 0.3 (in both models: the pairing); a neighbour agrees with
    the prediction with probability 0.4 on a hard query, 0.9 on an easy one, independently per
    model. Model B's neighbours agree on hard queries with probability 0.55 when ``changed``.
    """

    def generate(rng: np.random.Generator, audits: int, units: int, changed: bool) -> pl.DataFrame:
        n = audits * units
        hard = rng.random(n) < 0.3
        frames = []
        for system, on_hard in (("A", 0.4), ("B", 0.55 if changed else 0.4)):
            agree = rng.random((n, k)) < np.where(hard, on_hard, 0.9)[:, None]
            frames.append(
                pl.DataFrame(
                    {
                        "audit": np.repeat(np.arange(audits), units * k),
                        "system": system,
                        "query": np.repeat(np.arange(n), k),
                        "distance": rng.exponential(1.0, n * k),
                        "label": agree.ravel().astype(np.int64),
                        "predicted": np.ones(n * k, dtype=np.int64),
                    }
                )
            )
        return pl.concat(frames)

    return generate


def clusterers(clusters: int = 4) -> Generator:
    """Two clusterings of the same points, each naming its clusters in an order of its own.

    A point of group a (30%) lies in cluster c with probability 0.4, 0.3, 0.2, 0.1; one of b
    uniformly (the shared geometry: the pairing). A clustering keeps a point in its cluster
    with probability 0.8, else puts it in a cluster drawn uniformly, independently per
    clustering; clustering B keeps group a's points with probability 0.5 when ``changed``
    (spreading a more evenly: fairer). Each audit's B names its clusters by a permutation.
    """
    shares = np.array([0.4, 0.3, 0.2, 0.1])

    def generate(rng: np.random.Generator, audits: int, units: int, changed: bool) -> pl.DataFrame:
        n = audits * units
        is_a = rng.random(n) < 0.3
        u = rng.random(n)
        home = np.where(
            is_a,
            np.minimum(np.searchsorted(np.cumsum(shares), u), clusters - 1),
            (u * clusters).astype(int),
        )
        frames = []
        for system, keep_a in (("A", 0.8), ("B", 0.5 if changed else 0.8)):
            kept = rng.random(n) < np.where(is_a, keep_a, 0.8)
            cluster = np.where(kept, home, rng.integers(0, clusters, n))
            if system == "B":
                names = np.argsort(rng.random((audits, clusters)), axis=1)
                cluster = names[np.repeat(np.arange(audits), units), cluster]
            frames.append(
                pl.DataFrame(
                    {
                        "audit": np.repeat(np.arange(audits), units),
                        "system": system,
                        "point": np.arange(n),
                        "cluster": cluster,
                        "group": np.where(is_a, "a", "b"),
                    }
                )
            )
        return pl.concat(frames)

    return generate


def _family(family: str, **options: Any) -> Callable[..., fa.compare.Comparison]:
    def compare(frame: pl.DataFrame, **arguments: Any) -> fa.compare.Comparison:
        return getattr(fa.compare, family)(frame, **options, **arguments)

    return compare


_EXP_RATIO = (pl.col("metric") == "exp") & (pl.col("combo") == "MinMaxRatio")

PAIRED: dict[str, PairedKind] = {
    kind.name: kind
    for kind in [
        PairedKind(
            "EXP MinMaxRatio (a ratio of sums)",
            "query",
            30,
            rankers(10),
            _ranking(["exp"], size="rows"),
            _EXP_RATIO,
        ),
        PairedKind(
            "ERBE per group (a total)",
            "query",
            30,
            rankers(10),
            _ranking(["erbe"]),
            (pl.col("metric") == "erbe") & pl.col("group").is_not_null(),
            ("group",),
        ),
        PairedKind(
            "NDKL (a mean over rankings)",
            "query",
            30,
            rankers(10, push=0.6, change=0.6),
            _ranking(["ndkl"]),
            pl.col("metric") == "ndkl",
        ),
        PairedKind(
            "cluster distribution TV",
            "point",
            500,
            clusterers(),
            _family("clustering", a="a", b="b", point="point", metrics=["cluster_distribution_tv"]),
            pl.col("metric") == "cluster_distribution_tv",
            kink=True,
        ),
        PairedKind(
            "EC_l, mean over 6 pairs of runs",
            "sample",
            200,
            pipelines(4),
            _family("repro", metrics=["ec_local"]),
            pl.col("metric") == "ec_local",
        ),
        PairedKind(
            "mean correspondence",
            "query",
            100,
            explainers(7),
            _family("explain"),
            pl.col("metric") == "correspondence",
        ),
        PairedKind(
            "EXP and ERBE, 3 groups: every combo and group (20 rows)",
            "query",
            30,
            rankers(10, groups=3),
            _ranking(["exp", "erbe"], size="rows"),
            _EXP_RATIO,
            kink=True,
        ),
    ]
}
