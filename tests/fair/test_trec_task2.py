"""Expected exposure against the TREC Fair Ranking track's task-2 targets (``target=``,
``length=``, ``exposed=``): equal to what the track's own 2022 and 2021 code printed for a
seeded run (tests/data/trec_task2, its README), to the numpy reference and to hand-worked
cases, on every engine, with its refusals."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from conftest import to_polars
from reference.trec import expected_exposure as reference

import frameaudit as fa
from frameaudit.exceptions import FrameAuditError

DATA = Path(__file__).parent.parent / "data" / "trec_task2"
UNALIGNED_2021 = 115
"""The page the 2021 alignment does not list (the README)."""


def _read(name: str) -> pl.DataFrame:
    return pl.read_csv(DATA / f"{name}.csv")


def _printed(year: int) -> dict[int, tuple[float, float, float]]:
    printed = _read(f"trec{year}")
    return {q: (ll, d, r) for q, ll, d, r in printed.iter_rows()}


def _compare(ours: pl.DataFrame, theirs: dict[int, tuple[float, float, float]]) -> None:
    """Every query's three values; the track's code sums float32 discounts (about 1e-7)."""
    assert sorted(ours["query"]) == sorted(theirs)
    for query, *values in ours.iter_rows():
        assert values == pytest.approx(list(theirs[query]), rel=1e-6, abs=1e-9), query


def test_equal_to_the_2022_task2_code(constructor: Any) -> None:
    """EELMetric: two dimensions' intersection, only relevant pages' exposure, length 20."""
    ours = fa.fair.expected_exposure(
        constructor(_read("run")),
        judgments=constructor(_read("qrels")),
        sample="sample",
        alignment=[constructor(_read("geo")), constructor(_read("gender"))],
        group=["geo", "gender"],
        target=constructor(_read("target2022")),
        length=20,
        model="log",
        by="query",
    )
    _compare(to_polars(ours), _printed(2022))


def test_equal_to_the_2021_task2_code(constructor: Any) -> None:
    """Task2Metric: every retrieved page's exposure (an unaligned page none), length 50."""
    geo = _read("geo").filter(pl.col("item") != UNALIGNED_2021)
    ours = fa.fair.expected_exposure(
        constructor(_read("run")),
        judgments=constructor(_read("qrels")),
        sample="sample",
        alignment=constructor(geo),
        group="geo",
        unaligned="drop",
        exposed="retrieved",
        target=constructor(_read("target2021")),
        length=50,
        model="log",
        by="query",
    )
    _compare(to_polars(ours), _printed(2021))


def test_hand_worked() -> None:
    """One ranking a (g1, relevant), b (g2, not), c (g2, relevant); target ½, ½ of a ranking
    of 2 positions, whose log weights are 1 and 1: t = (1, 1). Relevant exposure: g1 1,
    g2 1/log2 3; every retrieved item's: g2 also gets b's 1."""
    run = pl.DataFrame({"query": ["q"] * 3, "item": ["a", "b", "c"], "rank": [1, 2, 3]})
    qrels = pl.DataFrame({"query": ["q"] * 3, "item": ["a", "b", "c"], "relevance": [1, 0, 1]})
    groups = {"a": "g1", "b": "g2", "c": "g2"}
    options: dict[str, Any] = {"judgments": qrels, "groups": groups, "model": "log"}
    target = {"g1": 0.5, "g2": 0.5}
    c = 1.0 / math.log2(3)
    judged = fa.fair.expected_exposure(run, target=target, length=2, **options).row(0)
    assert judged == pytest.approx(((1 - c) ** 2, 1 + c * c, 1 + c), rel=1e-15)
    retrieved = fa.fair.expected_exposure(
        run, target=target, length=2, exposed="retrieved", **options
    ).row(0)
    assert retrieved == pytest.approx((c * c, 1 + (1 + c) ** 2, 2 + c), rel=1e-15)
    # RBP, p = ½: a ranking of 3 positions weighs 1 + ½ + ¼ = 7/4, t = 7/8 each
    rbp = fa.fair.expected_exposure(run, target=target, length=3, **{**options, "model": "rbp"})
    assert rbp.row(0) == pytest.approx(
        ((1 - 7 / 8) ** 2 + (0.25 - 7 / 8) ** 2, 1 + 0.0625, 7 / 8 * 1.25), rel=1e-15
    )


def _case(seed: int) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], dict[str, str]]:
    """A sampled run (every sixth query never retrieved), graded judgments of some of its
    items, and every item's group among a, b, c."""
    rng = random.Random(seed)
    run, qrels, groups = [], [], {}
    for q in range(15):
        docs = [f"d{q}_{i}" for i in range(rng.randint(2, 9))]
        for d in docs:
            groups[d] = rng.choice("abc")
        judged = rng.sample(docs, rng.randint(1, len(docs)))
        qrels += [(q, d, rng.choice([0, 1, 2])) for d in judged]
        if docs[0] not in judged:
            qrels.append((q, docs[0], 3))
        if q % 6 == 5:
            continue
        for s in range(rng.randint(1, 3)):
            for k, d in enumerate(rng.sample(docs, rng.randint(1, len(docs))), 1):
                run.append((q, s, d, k))
    return run, qrels, groups


def _shares(seed: int) -> dict[int, dict[str, float]]:
    rng = random.Random(seed)
    out = {}
    for q in range(15):
        raw = [rng.randint(0, 4) for _ in "abc"]
        raw[q % 3] += 1
        out[q] = {g: w / sum(raw) for g, w in zip("abc", raw, strict=True)}
    return out


@pytest.mark.parametrize("per_query", [False, True])
@pytest.mark.parametrize("exposed", ["judged", "retrieved"])
@pytest.mark.parametrize("model", ["log", "rbp"])
def test_equal_to_the_reference(
    constructor: Any, model: str, exposed: str, per_query: bool
) -> None:
    run, qrels, groups = _case(3)
    shares = _shares(4)
    if per_query:
        target: Any = constructor(
            pl.DataFrame(
                [(q, g, s) for q, cells in shares.items() for g, s in cells.items()],
                schema=["query", "grp", "share"],
                orient="row",
            )
        )
    else:
        target = shares[0]
        shares = dict.fromkeys(shares, shares[0])
    ours = fa.fair.expected_exposure(
        constructor(pl.DataFrame(run, schema=["query", "sample", "item", "rank"], orient="row")),
        judgments=constructor(
            pl.DataFrame(qrels, schema=["query", "item", "relevance"], orient="row")
        ),
        sample="sample",
        groups=groups,
        group="grp",
        target=target,
        length=7,
        model=model,  # type: ignore[arg-type]
        patience=0.8,
        exposed=exposed,  # type: ignore[arg-type]
        by="query",
    )
    membership = {d: {g: 1.0} for d, g in groups.items()}
    expected = reference(
        run,
        qrels,
        model=model,
        patience=0.8,
        membership=membership,
        exposed=exposed,
        shares=shares,
        length=7,
    )
    ours = to_polars(ours)
    assert sorted(ours["query"]) == sorted(expected)
    for query, *values in ours.iter_rows():
        assert values == pytest.approx(list(expected[query]), rel=1e-12, abs=1e-15), query


def test_retrieved_exposure_with_the_grades_targets_equals_the_reference() -> None:
    """exposed="retrieved" without a target: expeval's group targets, every retrieved
    item's exposure (a group with no relevant item still exposed)."""
    run, qrels, groups = _case(5)
    ours = fa.fair.expected_exposure(
        pl.DataFrame(run, schema=["query", "sample", "item", "rank"], orient="row"),
        judgments=pl.DataFrame(qrels, schema=["query", "item", "relevance"], orient="row"),
        sample="sample",
        groups=groups,
        group="grp",
        exposed="retrieved",
        by="query",
    )
    membership = {d: {g: 1.0} for d, g in groups.items()}
    expected = reference(run, qrels, membership=membership, exposed="retrieved")
    for query, *values in ours.iter_rows():
        assert values == pytest.approx(list(expected[query]), rel=1e-12, abs=1e-15), query
    judged = reference(run, qrels, membership=membership)
    assert any(expected[q] != pytest.approx(judged[q]) for q in expected)


BAD: list[tuple[dict[str, Any], str]] = [
    ({"target": {"a": 0.5, "b": 0.5, "c": 0.0}, "length": 5, "groups": None}, "give group="),
    ({"target": {"a": 0.5, "b": 0.5, "c": 0.0}, "length": 5, "model": "gerr"}, "model='gerr'"),
    ({"target": {"a": 0.5, "b": 0.5, "c": 0.0}, "length": 5, "normalize": True}, "normalize"),
    ({"target": {"a": 0.5, "b": 0.5, "c": 0.0}}, "length=None: with target="),
    ({"length": 5}, "length=5: it scales a target="),
    ({"length": 0, "target": {"a": 1.0}}, r"length=0: expected a positive integer"),
    ({"exposed": "all"}, "exposed='all'"),
    ({"exposed": "retrieved", "normalize": True}, "normalize=True with exposed='retrieved'"),
    ({"target": {"a": 0.5, "b": 0.6, "c": 0.0}, "length": 5}, "the shares sum to"),
    ({"target": {"a": 0.5, "b": 0.5}, "length": 5}, r"target=: \d+ group\(s\) of the data"),
    ({"target": "per query, missing", "length": 5}, "evaluated queries .* have no shares"),
    ({"target": "per query, not summing", "length": 5}, "do not sum to 1"),
]


@pytest.mark.parametrize(("options", "message"), BAD)
def test_bad_input_gets_a_clear_error(
    constructor: Any, options: dict[str, Any], message: str
) -> None:
    run, qrels, groups = _case(6)
    r = pl.DataFrame(run, schema=["query", "sample", "item", "rank"], orient="row")
    j = pl.DataFrame(qrels, schema=["query", "item", "relevance"], orient="row")
    options = {"groups": groups, "group": "grp", **options}
    if isinstance(options.get("target"), str):
        rows = [(q, g, 1 / 3) for q in range(15) for g in "abc"]
        if options["target"].endswith("missing"):
            rows = [row for row in rows if row[0] != 5]  # a query the run lacks
        else:
            rows[0] = (0, "a", 0.5)
        options["target"] = constructor(
            pl.DataFrame(rows, schema=["query", "grp", "share"], orient="row")
        )
    if options["groups"] is None:
        options.pop("group")
    with pytest.raises(FrameAuditError, match=message):
        to_polars(
            fa.fair.expected_exposure(
                constructor(r), judgments=constructor(j), sample="sample", **options
            )
        )
