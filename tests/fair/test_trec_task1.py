"""nDCG and AWRF_JS: equal to scikit-learn, to the TREC Fair Ranking task-1 definitions
(independent numpy re-implementations in tests/reference/trec.py) and to hand-worked cases."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import polars as pl
import pytest
from conftest import to_polars
from reference.ranking import combine
from reference.trec import trec_awrf, trec_ndcg
from sklearn.metrics import ndcg_score

import frameaudit as fa


def _run(seed: int, queries: int = 12, items: int = 9) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(queries):
        n = int(rng.integers(2, items + 1))
        for k, item in enumerate(rng.permutation(items)[:n], start=1):
            rows.append(
                {
                    "query": q,
                    "rank": k,
                    "item": int(item),
                    "relevance": float(rng.integers(0, 4)),
                    "group": "abc"[int(item) % 3],
                    "users": "xy"[q % 2],
                }
            )
    return pl.DataFrame(rows)


@pytest.mark.parametrize("k", [None, 3])
@pytest.mark.parametrize("gain", ["linear", "exponential"])
def test_ndcg_equals_scikit_learn(k: int | None, gain: str) -> None:
    run = _run(1)
    ours = fa.fair.ndcg(run, ranking="query", k=k, gain=gain, by="query")  # type: ignore[arg-type]
    for query, value in ours.iter_rows():
        rows = run.filter(pl.col("query") == query).sort("rank")
        grades = rows["relevance"].to_numpy()
        gains = grades if gain == "linear" else 2.0**grades - 1.0
        if gains.max() == 0:
            assert value == 0.0  # no relevant item (scikit-learn warns and returns 0 too)
            continue
        scores = -rows["rank"].to_numpy().astype(float)
        assert value == pytest.approx(ndcg_score([gains], [scores], k=k), rel=1e-12)
    mean = fa.fair.ndcg(run, ranking="query", k=k, gain=gain).item()  # type: ignore[arg-type]
    assert mean == pytest.approx(ours["ndcg"].mean(), rel=1e-12)


def test_ndcg_with_judgments_equals_trec_task1(constructor: Any) -> None:
    run = _run(2)
    rng = random.Random(2)
    judged = [
        (q, item, 1)
        for q in range(12)
        for item in range(9)
        if rng.random() < 0.4 or (q, item) == (q, 0)
    ]
    qrels = pl.DataFrame(judged, schema=["query", "item", "relevance"], orient="row")
    ours = to_polars(
        fa.fair.ndcg(
            constructor(run.drop("relevance")),
            judgments=constructor(qrels),
            ranking="query",
            item="item",
            discount="log",
            by="query",
        )
    )
    for query, value in ours.iter_rows():
        ranked = run.filter(pl.col("query") == query).sort("rank")["item"].to_list()
        relevant = {i for q, i, _ in judged if q == query}
        assert value == pytest.approx(trec_ndcg(ranked, relevant), rel=1e-6)  # float32 there


def test_ndcg_per_group_of_rankings() -> None:
    run = _run(3)
    per_query = fa.fair.ndcg(run, ranking="query", by="query")
    users = run.select("query", "users").unique()
    joined = per_query.join(users, on="query")
    means = joined.group_by("users").agg(pl.col("ndcg").mean(), pl.len().alias("n")).sort("users")
    per_group = fa.fair.ndcg(run, ranking="query", group="users", combo=None)
    assert per_group["users"].to_list() == means["users"].to_list()
    assert per_group["ndcg"].to_list() == pytest.approx(means["ndcg"].to_list(), rel=1e-12)
    assert per_group["n"].to_list() == means["n"].to_list()
    combined = fa.fair.ndcg(run, ranking="query", group="users", combo="MaxMinDiff").item()
    assert combined == pytest.approx(combine(means["ndcg"].to_list(), "MaxMinDiff"), rel=1e-12)


def test_ndcg_groups_must_be_the_rankings() -> None:
    run = _run(4)
    with pytest.raises(fa.FrameAuditError, match=r"group='group': expected one value within"):
        fa.fair.ndcg(run, ranking="query", group="group")


def test_awrf_js_equals_trec_task1_with_a_target_per_query(constructor: Any) -> None:
    run = _run(5)
    rng = np.random.default_rng(5)
    shares = {q: rng.dirichlet([1.0, 1.0, 1.0]) for q in range(12)}
    target = pl.DataFrame(
        [(q, g, float(s[i])) for q, s in shares.items() for i, g in enumerate("abc")],
        schema=["query", "group", "share"],
        orient="row",
    )
    ours = to_polars(
        fa.fair.awrf_js(constructor(run), ranking="query", target=constructor(target), by="query")
    )
    for query, value in ours.iter_rows():
        rows = run.filter(pl.col("query") == query).sort("rank")
        alignment = {i: {g: 1.0} for i, g in rows.select("item", "group").iter_rows()}
        wanted = dict(zip("abc", shares[query], strict=True))
        expected = trec_awrf(rows["item"].to_list(), alignment, wanted)
        assert value == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("unaligned", ["drop", "unknown", "uniform"])
def test_awrf_js_with_soft_intersectional_alignments(unaligned: str) -> None:
    run = _run(6)
    rng = np.random.default_rng(6)
    items = sorted(set(run["item"]))
    gender = {i: dict(zip("fm", rng.dirichlet([1.0, 1.0]), strict=True)) for i in items[:-2]}
    region = {i: dict(zip("ns", rng.dirichlet([1.0, 1.0]), strict=True)) for i in items[1:]}

    def frame(weights: dict[int, dict[str, float]], column: str) -> pl.DataFrame:
        rows = [(i, g, float(w)) for i, cells in weights.items() for g, w in cells.items()]
        return pl.DataFrame(rows, schema=["item", column, "weight"], orient="row")

    levels = {"gender": "fm", "region": "ns"}

    def completed(weights: dict[int, dict[str, float]], dimension: str) -> dict[int, Any]:
        filler = {
            "drop": {},
            "unknown": {"unknown": 1.0},
            "uniform": dict.fromkeys(levels[dimension], 0.5),
        }[unaligned]
        return {i: weights.get(i, filler) for i in items}

    one, two = completed(gender, "gender"), completed(region, "region")
    cells = {
        i: {(a, b): x * y for a, x in one[i].items() for b, y in two[i].items()} for i in items
    }
    genders = "fm" + ("u" if unaligned == "unknown" else "")
    regions = "ns" + ("u" if unaligned == "unknown" else "")
    named = {"u": "unknown"}
    keys = [(named.get(a, a), named.get(b, b)) for a in genders for b in regions]
    wanted = dict(zip(keys, rng.dirichlet(np.ones(len(keys))), strict=True))
    target = pl.DataFrame(
        [(a, b, float(s)) for (a, b), s in wanted.items()],
        schema=["gender", "region", "share"],
        orient="row",
    )
    ours = fa.fair.awrf_js(
        run,
        ranking="query",
        item="item",
        alignment=[frame(gender, "gender"), frame(region, "region")],
        group=["gender", "region"],
        unaligned=unaligned,  # type: ignore[arg-type]
        target=target,
        by="query",
    )
    for query, value in ours.iter_rows():
        ranked = run.filter(pl.col("query") == query).sort("rank")["item"].to_list()
        assert value == pytest.approx(trec_awrf(ranked, cells, wanted), rel=1e-6)


def test_awrf_js_hand_worked() -> None:
    """Attention 1 + 1 for a (positions 1, 2), 1/log2 3 + 1/2 for b; the target 1/2, 1/2:
    JS² = ½ Σ a_g ln(a_g/m_g) + ½ Σ d_g ln(d_g/m_g) with a = attention / its total."""
    run = pl.DataFrame({"rank": [1, 2, 3, 4], "group": ["a", "a", "b", "b"]})
    attention = np.array([2.0, 1 / np.log2(3) + 0.5])
    a = attention / attention.sum()
    d = np.array([0.5, 0.5])
    m = (a + d) / 2
    js = 0.5 * np.sum(a * np.log(a / m)) + 0.5 * np.sum(d * np.log(d / m))
    assert fa.fair.awrf_js(run, target={"a": 0.5, "b": 0.5}).item() == pytest.approx(1 - js)
    # the attention on the target: 1
    exact = {"a": float(a[0]), "b": float(a[1])}
    assert fa.fair.awrf_js(run, target=exact).item() == pytest.approx(1.0, abs=1e-15)
