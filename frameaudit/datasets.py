"""Seeded example data for documentation, notebooks, benchmarks and the demo.

:func:`biased_rankings` follows FairRankTune's RankTune generator: every position draws a group,
the smallest group with probability φ' = (1 − φ)(1 − m) + m (m its share) and the others in
proportion to their shares, until one group runs out; the rest are appended, smallest remaining
group first. φ = 0 puts the smallest group entirely on top, φ = 1 samples proportionally. Unlike
RankTune, group sizes honour the proportions exactly (largest-remainder rounding, so they sum to
the number of items), proportions are checked with a tolerance instead of exact float equality,
items inside a group are shuffled at every φ, and all rankings are drawn at once (vectorised over
rankings, one step per position).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from frameaudit._params import Real, strict
from frameaudit.exceptions import InvalidParameterError

__all__ = [
    "biased_rankings",
    "cases_example",
    "clustering_example",
    "group_sizes",
    "importance_example",
    "rankers_example",
    "ranking_example",
    "read_qrels",
    "read_trec_run",
    "runs_example",
    "trec_example",
]


@strict
def group_sizes(proportions: Sequence[float] | np.ndarray, num_items: int) -> np.ndarray:
    """Split ``num_items`` by ``proportions`` exactly (largest remainder; ties to the first).

    Examples
    --------
    >>> group_sizes([0.5, 0.3, 0.2], 7).tolist()
    [4, 2, 1]
    """
    shares = np.asarray(proportions, dtype=np.float64) * num_items
    sizes = np.floor(shares).astype(np.int64)
    remainder = num_items - int(sizes.sum())
    order = np.argsort(-(shares - sizes), kind="stable")
    sizes[order[:remainder]] += 1
    return sizes


def _check_proportions(
    group_proportions: Mapping[str, float] | Sequence[float],
) -> tuple[list[str], np.ndarray]:
    if isinstance(group_proportions, Mapping):
        names = [str(k) for k in group_proportions]
        values = list(group_proportions.values())
    else:
        values = list(group_proportions)
        names = [str(i) for i in range(len(values))]
    if len(values) < 2:
        msg = f"group_proportions={group_proportions!r}: expected at least two groups"
        raise InvalidParameterError(msg)
    for value in values:
        Real(0.0, 1.0, low_open=True).check("group_proportions", value)
    proportions = np.asarray(values, dtype=np.float64)
    if not math.isclose(float(proportions.sum()), 1.0, abs_tol=1e-9):
        msg = (
            f"group_proportions={group_proportions!r}: expected shares summing to 1, "
            f"got {proportions.sum()!r}"
        )
        raise InvalidParameterError(msg)
    return names, proportions


@strict
def biased_rankings(
    group_proportions: Mapping[str, float] | Sequence[float],
    num_items: int,
    *,
    phi: float,
    num_rankings: int = 1,
    seed: int | None = 0,
) -> pl.DataFrame:
    """Rankings of ``num_items`` items with tunable group unfairness ``phi`` (RankTune).

    Parameters
    ----------
    group_proportions
        Share of each group, summing to 1: a mapping name → share, or a sequence (groups are then
        named "0", "1", ...).
    num_items
        Items per ranking; group sizes are the exact largest-remainder split.
    phi
        Unfairness in [0, 1]: 0 puts the smallest group entirely on top, 1 samples each position
        in proportion to the group shares.
    num_rankings
        Number of independent rankings of the same items.
    seed
        Seed of the random generator (None: fresh entropy).

    Returns
    -------
    polars.DataFrame
        Columns ``ranking`` (Int64), ``rank`` (Int64, 1-based), ``item`` (Int64, the same item
        ids in every ranking) and ``group`` (String); one row per (ranking, position).

    Examples
    --------
    >>> df = biased_rankings({"a": 0.25, "b": 0.75}, 8, phi=0.0, num_rankings=2, seed=1)
    >>> df.filter(pl.col("ranking") == 0)["group"].to_list()
    ['a', 'a', 'b', 'b', 'b', 'b', 'b', 'b']
    """
    names, proportions = _check_proportions(group_proportions)
    Real(0.0, 1.0).check("phi", phi)
    phi = float(phi)
    if isinstance(num_items, bool) or not isinstance(num_items, int) or num_items < len(names):
        msg = (
            f"num_items={num_items!r}: expected an integer of at least the number of groups "
            f"({len(names)})"
        )
        raise InvalidParameterError(msg)
    if isinstance(num_rankings, bool) or not isinstance(num_rankings, int) or num_rankings < 1:
        msg = f"num_rankings={num_rankings!r}: expected a positive integer"
        raise InvalidParameterError(msg)
    rng = np.random.default_rng(seed)
    sizes = group_sizes(proportions, num_items)
    positions_of_group = _draw_group_sequences(sizes, proportions, phi, num_rankings, rng)
    items = _place_items(positions_of_group, sizes, rng)
    return pl.DataFrame(
        {
            "ranking": np.repeat(np.arange(num_rankings, dtype=np.int64), num_items),
            "rank": np.tile(np.arange(1, num_items + 1, dtype=np.int64), num_rankings),
            "item": items.ravel(),
            "group": pl.Series(np.asarray(names)[positions_of_group.ravel()]),
        }
    )


def _draw_group_sequences(
    sizes: np.ndarray,
    proportions: np.ndarray,
    phi: float,
    num_rankings: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """The group placed at each position of each ranking, shape (rankings, items)."""
    minority = int(np.argmin(proportions))
    share = proportions[minority]
    boosted = (1.0 - phi) * (1.0 - share) + share
    probabilities = proportions / (proportions.sum() - share) * (1.0 - boosted)
    probabilities[minority] = boosted
    cumulative = np.cumsum(probabilities)
    num_items = int(sizes.sum())
    remaining = np.tile(sizes, (num_rankings, 1))
    groups = np.empty((num_rankings, num_items), dtype=np.int64)
    rows = np.arange(num_rankings)
    for position in range(num_items):
        drawn = np.minimum(
            np.searchsorted(cumulative, rng.random(num_rankings), side="right"), len(sizes) - 1
        )
        # once a group has run out, the rest follow smallest remaining group first
        exhausted = (remaining == 0).any(axis=1)
        smallest = np.where(remaining > 0, remaining, np.iinfo(np.int64).max).argmin(axis=1)
        chosen = np.where(exhausted, smallest, drawn)
        groups[:, position] = chosen
        remaining[rows, chosen] -= 1
    return groups


def _place_items(groups: np.ndarray, sizes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Item ids per position: group g owns a contiguous id block, shuffled in every ranking."""
    num_rankings, num_items = groups.shape
    block = np.repeat(np.arange(len(sizes)), sizes)
    # ids sorted by (group block, random key): each block is shuffled independently per ranking
    shuffled = np.argsort(block[None, :] + rng.random((num_rankings, num_items)), axis=1)
    # positions sorted by (group, position): the k-th of them receives the k-th shuffled id
    slots = np.argsort(groups, axis=1, kind="stable")
    items = np.empty_like(groups)
    items[np.arange(num_rankings)[:, None], slots] = shuffled
    return items


@strict
def ranking_example(seed: int = 0) -> pl.DataFrame:
    """A realistic search log: 20 queries × 30 results, intersectional groups, relevance, clicks.

    Columns: ``query``, ``rank``, ``item``, ``gender`` (f/m), ``age`` (young/old),
    ``relevance`` in [0, 1], ``relevant`` (0/1) and ``ctr`` in [0, 1]. Rankings are biased
    (φ = 0.6) towards the smallest intersectional group, young women.

    Examples
    --------
    >>> ranking_example().shape
    (600, 8)
    """
    shares = {"f/young": 0.2, "f/old": 0.25, "m/young": 0.25, "m/old": 0.3}
    df = biased_rankings(shares, 30, phi=0.6, num_rankings=20, seed=seed)
    rng = np.random.default_rng(seed + 1)
    position = df["rank"].to_numpy()
    relevance = np.clip(1.0 - position / 40.0 + rng.normal(0.0, 0.15, df.height), 0.0, 1.0)
    ctr = np.clip(relevance / np.log2(position + 1.0) * rng.uniform(0.5, 1.0, df.height), 0.0, 1.0)
    return df.select(
        pl.col("ranking").alias("query"),
        "rank",
        "item",
        pl.col("group").str.split("/").list.get(0).alias("gender"),
        pl.col("group").str.split("/").list.get(1).alias("age"),
        pl.Series("relevance", relevance.round(3)),
        pl.Series("relevant", (relevance >= 0.5).astype(np.int64)),
        pl.Series("ctr", ctr.round(3)),
    )


@strict
def rankers_example(seed: int = 0) -> pl.DataFrame:
    """Two rankers of the same search log: the current one and a fairness re-ranker.

    The rows of :func:`ranking_example` (``ranker`` "current"), and the same 20 queries' items
    re-ranked (``ranker`` "reranked"): each query's items ordered by their current position
    plus 3 for the over-exposed young women, plus a normal noise of standard deviation 2. An
    item keeps its ``relevance`` and ``relevant``; its ``ctr`` is recomputed for its new
    position, as in :func:`ranking_example`. For :func:`frameaudit.compare.ranking`: is the
    re-ranker fairer, or is the difference noise?

    Examples
    --------
    >>> both = rankers_example()
    >>> both.group_by("ranker").len().sort("ranker").rows()
    [('current', 600), ('reranked', 600)]
    """
    current = ranking_example(seed)
    rng = np.random.default_rng(seed + 2)
    young_women = ((current["gender"] == "f") & (current["age"] == "young")).to_numpy()
    score = current["rank"].to_numpy() + 3.0 * young_women + rng.normal(0.0, 2.0, current.height)
    position = pl.col("__fa_score").rank("ordinal").over("query").cast(pl.Int64)
    reranked = current.with_columns(pl.Series("__fa_score", score)).with_columns(
        position.alias("rank")
    )
    clicks = reranked["relevance"].to_numpy() / np.log2(reranked["rank"].to_numpy() + 1.0)
    ctr = np.clip(clicks * rng.uniform(0.5, 1.0, current.height), 0.0, 1.0).round(3)
    reranked = reranked.drop("__fa_score").with_columns(pl.Series("ctr", ctr))
    return pl.concat(
        [
            current.with_columns(pl.lit("current").alias("ranker")),
            reranked.with_columns(pl.lit("reranked").alias("ranker")),
        ]
    ).select("ranker", *current.columns)


@strict
def clustering_example(seed: int = 0) -> pl.DataFrame:
    """A customer segmentation: 2,000 points in 4 clusters, with a protected attribute.

    Columns: ``cluster`` (0–3), ``group`` ("a", 30% of the points, or "b"), ``x`` and ``y``
    (the cluster's centre plus standard normal noise). Group "b" is spread evenly over the
    clusters; group "a" falls into them with probabilities 0.4, 0.3, 0.2 and 0.1, so its
    clusters are unbalanced.

    Examples
    --------
    >>> clustering_example().group_by("group").len().sort("group").rows()
    [('a', 604), ('b', 1396)]
    """
    rng = np.random.default_rng(seed)
    n = 2_000
    group = rng.choice(["a", "b"], size=n, p=[0.3, 0.7])
    centres = rng.normal(0.0, 4.0, size=(4, 2))
    cluster = np.where(group == "a", rng.choice(4, n, p=[0.4, 0.3, 0.2, 0.1]), rng.choice(4, n))
    noise = rng.normal(size=(n, 2))
    return pl.DataFrame(
        {
            "cluster": cluster,
            "group": group,
            "x": centres[cluster, 0] + noise[:, 0],
            "y": centres[cluster, 1] + noise[:, 1],
        }
    )


@strict
def runs_example(seed: int = 0) -> pl.DataFrame:
    """Five training runs of a 3-class classifier, predicting the same 1,000 samples.

    Columns: ``run`` (0–4), ``sample``, ``target`` and ``prediction`` (classes 0–2). A fifth of
    the samples are hard: every run gets each of them wrong with probability 0.8, against 0.05
    for the others, so the runs tend to make the same mistakes.

    Examples
    --------
    >>> runs_example().shape
    (5000, 4)
    """
    rng = np.random.default_rng(seed)
    samples, runs = 1_000, 5
    target = rng.integers(0, 3, samples)
    hard = rng.random(samples) < 0.2
    wrong = np.where(hard, rng.random((runs, samples)) < 0.8, rng.random((runs, samples)) < 0.05)
    # a wrong prediction is one of the two other classes
    prediction = np.where(wrong, (target + 1 + rng.integers(0, 2, (runs, samples))) % 3, target)
    return pl.DataFrame(
        {
            "run": np.repeat(np.arange(runs), samples),
            "sample": np.tile(np.arange(samples), runs),
            "target": np.tile(target, runs),
            "prediction": prediction.ravel(),
        }
    )


@strict
def cases_example(seed: int = 0) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Training cases and test queries for case-based explanations.

    ``train``: 500 rows of features ``f1``, ``f2`` (standard normal) and ``label`` = 1 when
    f1 + f2 > 0, else 0. ``queries``: 200 rows of ``f1``, ``f2`` and ``predicted``, the
    prediction of a deliberately weaker model (1 when f1 > 0), which disagrees with the
    training labels' rule near the diagonal.

    Examples
    --------
    >>> train, queries = cases_example()
    >>> train.columns, queries.columns
    (['f1', 'f2', 'label'], ['f1', 'f2', 'predicted'])
    """
    rng = np.random.default_rng(seed)
    train = rng.normal(size=(500, 2))
    queries = rng.normal(size=(200, 2))
    return (
        pl.DataFrame(
            {"f1": train[:, 0], "f2": train[:, 1], "label": (train.sum(axis=1) > 0).astype(int)}
        ),
        pl.DataFrame(
            {
                "f1": queries[:, 0],
                "f2": queries[:, 1],
                "predicted": (queries[:, 0] > 0).astype(int),
            }
        ),
    )


@strict
def importance_example(seed: int = 0) -> pl.DataFrame:
    """Feature importances of 8 features, overall and for two groups.

    Columns: ``group`` ("overall", "g1", "g2"), ``feature`` (f0–f7) and ``importance``. The
    overall importances fall linearly from 1.0 (f0) to 0.1 (f7); group g1 follows them with
    a little noise (sd 0.05), group g2 reverses them.

    Examples
    --------
    >>> importance_example().group_by("group").len().sort("group").rows()
    [('g1', 8), ('g2', 8), ('overall', 8)]
    """
    rng = np.random.default_rng(seed)
    base = np.linspace(1.0, 0.1, 8)
    return pl.DataFrame(
        {
            "group": np.repeat(["overall", "g1", "g2"], 8),
            "feature": [f"f{i}" for i in range(8)] * 3,
            "importance": np.concatenate([base, base + rng.normal(0.0, 0.05, 8), base[::-1]]),
        }
    )


# --- TREC files --------------------------------------------------------------------------------

_RUN_FIELDS = ("query", "sample", "item", "rank", "score", "run")
_QRELS_FIELDS = ("query", "iteration", "item", "relevance")
_DATA = Path(__file__).parent / "data"


@strict
def read_trec_run(path: str | Path) -> pl.DataFrame:
    """A TREC run file as a tidy frame: one row per retrieved item of a ranking.

    A line holds six fields separated by spaces or tabs: the query, the iteration (``Q0`` in
    most tracks; in the fair-ranking track's task 2, the number of the sampled ranking), the
    item (document id), its rank, its score and the run's tag. Blank lines are skipped.

    Returns
    -------
    A Polars DataFrame with ``query``, ``sample`` (the second field), ``item`` and ``run``
    (String: identifiers, compared as text, as in the qrels), ``rank`` (Int64) and ``score``
    (Float64), in the file's order: ``sample="sample"`` and ``ranking="query"`` name the
    rankings for the fair-ranking metrics.

    Raises
    ------
    InvalidParameterError
        For a path that is no file, or a line that does not have the six fields (naming the
        line), a rank that is not an integer or a score that is not a number.

    Examples
    --------
    >>> run = read_trec_run(trec_example()[0])
    >>> run.head(2).rows()
    [('q1', '0', 'd1', 1, 0.9, 'toy'), ('q1', '0', 'd2', 2, 0.8, 'toy')]
    """
    fields = _fields(path, _RUN_FIELDS, "a TREC run")
    return fields.select(
        "query",
        "sample",
        "item",
        _integer(fields, "rank", path),
        _real(fields, "score", path),
        "run",
    )


@strict
def read_qrels(path: str | Path) -> pl.DataFrame:
    """A TREC qrels file (relevance judgments) as a tidy frame: one row per judged item.

    A line holds four fields separated by spaces or tabs: the query, the iteration (unused,
    usually 0), the item (document id) and its relevance grade (an integer).

    Returns
    -------
    A Polars DataFrame with ``query``, ``iteration`` and ``item`` (String) and ``relevance``
    (Int64), in the file's order: the ``judgments=`` of the TREC-style metrics.

    Examples
    --------
    >>> qrels = read_qrels(trec_example()[1])
    >>> qrels.head(2).rows()
    [('q1', '0', 'd1', 2), ('q1', '0', 'd2', 1)]
    """
    fields = _fields(path, _QRELS_FIELDS, "a TREC qrels")
    return fields.select("query", "iteration", "item", _integer(fields, "relevance", path))


@strict
def trec_example() -> tuple[Path, Path]:
    """The paths of a tiny TREC run and its qrels, bundled with the package.

    Two queries, each ranked twice (samples 0 and 1, as in the fair-ranking track's task 2)
    by the run ``toy``; graded judgments 0-2, one judged item (q2's d7) never retrieved.

    Examples
    --------
    >>> run, qrels = trec_example()
    >>> (run.name, qrels.name)
    ('toy.run', 'toy.qrels')
    """
    return _DATA / "toy.run", _DATA / "toy.qrels"


def _fields(path: str | Path, names: Sequence[str], kind: str) -> pl.DataFrame:
    """The whitespace-separated fields of every non-blank line of ``path``, as text, named.

    A line with another number of fields is an error naming its number and content.
    """
    file = Path(path)
    if not file.is_file():
        msg = f"path={str(path)!r}: expected {kind} file, found no such file"
        raise InvalidParameterError(msg)
    text = file.read_text(encoding="utf-8")
    pattern = r"^\s*" + r"\s+".join(r"(\S+)" for _ in names) + r"\s*$"
    lines = pl.DataFrame({"line": text.splitlines()}, schema={"line": pl.String})
    lines = lines.with_row_index("number", offset=1)
    lines = lines.filter(pl.col("line").str.strip_chars() != "")
    found = lines.with_columns(pl.col("line").str.extract_groups(pattern).alias("fields"))
    bad = found.filter(pl.col("fields").struct.field("1").is_null())
    if not bad.is_empty():
        number, line = bad.row(0)[:2]
        count = len(line.split())
        msg = (
            f"path={str(path)!r}: expected {len(names)} fields a line ({', '.join(names)}), "
            f"found {count} on line {number}: {line.strip()[:80]!r}"
        )
        raise InvalidParameterError(msg)
    return found.select(
        pl.col("number"),
        *(pl.col("fields").struct.field(str(i + 1)).alias(name) for i, name in enumerate(names)),
    )


def _integer(fields: pl.DataFrame, column: str, path: str | Path) -> pl.Series:
    return _typed(fields, column, pl.Int64, "an integer", path)


def _real(fields: pl.DataFrame, column: str, path: str | Path) -> pl.Series:
    return _typed(fields, column, pl.Float64, "a number", path)


def _typed(
    fields: pl.DataFrame, column: str, dtype: Any, expected: str, path: str | Path
) -> pl.Series:
    """``column`` cast to ``dtype``; the first value that is not one is an error naming it."""
    cast = fields[column].cast(dtype, strict=False)
    wrong = fields.filter(cast.is_null())
    if not wrong.is_empty():
        number, value = wrong.select("number", column).row(0)
        msg = (
            f"path={str(path)!r}: expected {expected} as {column}, found {value!r} on line {number}"
        )
        raise InvalidParameterError(msg)
    return cast
