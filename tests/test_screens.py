"""The neighbouring-row screens prove what they claim, and refuse everything else."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Any

import duckdb
import narwhals.stable.v2 as nw
import polars as pl
import pytest
from reference.ranking import ndkl_one

import frameaudit as fa
from frameaudit._engine import (
    PROVED,
    FastPlan,
    order_marks,
    plans,
    proven_or_exact,
    sorted_screen,
)
from frameaudit._expr import WHOLE

# (ranking, rank) rows in scan order, and whether they prove distinct positions
CASES: dict[str, tuple[list[tuple[int | None, int | None]], bool]] = {
    "sorted": ([(0, 1), (0, 2), (0, 3), (1, 1), (1, 2)], True),
    "sorted with gaps": ([(0, 2), (0, 5), (0, 9), (3, 1), (3, 7)], True),
    "one row": ([(0, 1)], True),
    "unsorted positions": ([(0, 2), (0, 1), (0, 3)], False),
    "unsorted rankings": ([(1, 1), (1, 2), (0, 1), (0, 2)], False),
    "interleaved rankings": ([(0, 1), (1, 1), (0, 2), (1, 2)], False),
    "duplicated position": ([(0, 1), (0, 2), (0, 2)], False),
    "null position": ([(0, 1), (0, None), (0, 3)], False),
    "null ranking": ([(0, 1), (None, 2), (0, 3)], False),
    "null first position": ([(0, None), (0, 1)], False),
}


def _screen(rows: list[tuple[int | None, int | None]], partition: list[str]) -> bool:
    frame = pl.LazyFrame(rows, schema={"ranking": pl.Int64, "rank": pl.Int64}, orient="row")
    marked, screened = order_marks(nw.from_native(frame), partition, ["rank"])
    assert screened == ["rank"]
    result = sorted_screen(marked, partition, {"rank": 0}).collect().item()
    assert isinstance(result, bool)
    return result


@pytest.mark.parametrize("case", list(CASES))
def test_sorted_screen_proves_only_sorted_distinct_positions(case: str) -> None:
    rows, proves = CASES[case]
    assert _screen(rows, ["ranking"]) is proves


def test_sorted_screen_without_partition_reads_positions_alone() -> None:
    # the constant whole-frame partition is no column: positions must rise over all rows
    assert _screen([(1, 1), (0, 2), (5, 3)], [WHOLE]) is True
    assert _screen([(0, 1), (1, 1)], [WHOLE]) is False


def test_other_engines_are_not_marked() -> None:
    relation = duckdb.from_arrow(pl.DataFrame({"ranking": [0], "rank": [1]}).to_arrow())
    frame = nw.from_native(relation)
    marked, screened = order_marks(frame, ["ranking"], ["rank"])
    assert screened == []
    assert marked.collect_schema().names() == ["ranking", "rank"]


@pytest.mark.parametrize("order", ["sorted", "shuffled"])
def test_parquet_scan_checks_positions_in_either_order(tmp_path: Path, order: str) -> None:
    """A failed screen falls back to the exact count: same value, same error, any order."""
    log = fa.datasets.biased_rankings([0.3, 0.7], 10, phi=0.5, num_rankings=20, seed=0)
    expected = fa.fair.exp(log, ranking="ranking", size="rows")
    if order == "shuffled":
        log = log.sample(fraction=1.0, shuffle=True, seed=1)
    log.write_parquet(tmp_path / "log.parquet")
    scan = pl.scan_parquet(tmp_path / "log.parquet")
    result = fa.fair.exp(scan, ranking="ranking", size="rows").collect(engine="streaming")
    assert result.item() == pytest.approx(expected.item(), rel=1e-12)
    tied = pl.concat([log, log.head(1)])
    tied.write_parquet(tmp_path / "tied.parquet")
    lazy = fa.fair.exp(pl.scan_parquet(tmp_path / "tied.parquet"), ranking="ranking", size="rows")
    with pytest.raises(fa.FrameAuditError, match="values must be unique within each ranking"):
        lazy.collect(engine="streaming")


@pytest.mark.parametrize("proved", [True, False, None])
def test_proven_or_exact_takes_the_exact_plan_unless_proved(proved: bool | None) -> None:
    fast = nw.from_native(pl.LazyFrame({"g": ["a", "b"], "v": [1.0, 2.0]}))
    exact = nw.from_native(pl.LazyFrame({"g": ["a"], "v": [9.0]}))
    proof = nw.from_native(pl.LazyFrame({PROVED: [proved]}, schema={PROVED: pl.Boolean}))
    built: list[FastPlan] = []

    def build() -> FastPlan:
        built.append(FastPlan(fast, proof))
        return built[-1]

    result = proven_or_exact(exact, build, in_memory=False).collect().to_native()
    assert result.to_dict(as_series=False) == (
        {"g": ["a", "b"], "v": [1.0, 2.0]} if proved else {"g": ["a"], "v": [9.0]}
    )
    assert len(built) == 1
    # in-memory data: no choice made inside the plan (no Python on Polars' pool), the exact
    # plan, and the fast one is not even built
    in_memory = proven_or_exact(exact, build, in_memory=True).collect().to_native()
    assert in_memory.to_dict(as_series=False) == {"g": ["a"], "v": [9.0]}
    assert len(built) == 1


@pytest.mark.parametrize("likely", [True, False, None])
@pytest.mark.parametrize("proved", [True, False])
def test_proven_or_exact_tries_the_fast_plan_only_where_likely(
    likely: bool | None, proved: bool
) -> None:
    exact = nw.from_native(pl.LazyFrame({"v": [9]}))
    proof = nw.from_native(pl.LazyFrame({PROVED: [proved]}))
    gate = nw.from_native(pl.LazyFrame({PROVED: [likely]}, schema={PROVED: pl.Boolean}))
    fast = nw.from_native(pl.LazyFrame({"v": [1]}))
    result = proven_or_exact(exact, lambda: FastPlan(fast, proof, gate), in_memory=False)
    expected = 1 if likely and proved else 9
    assert result.collect().to_native()["v"].to_list() == [expected]
    # where unlikely, the fast plan is not computed at all: one that fails is never run
    failing = nw.from_native(
        pl.LazyFrame({"v": [300]}).select(pl.col("v").cast(pl.Int8).cast(pl.Int64))
    )
    unlikely = proven_or_exact(exact, lambda: FastPlan(failing, proof, gate), in_memory=False)
    if likely:
        with pytest.raises(nw.exceptions.InvalidOperationError, match="conversion from"):
            unlikely.collect()
    else:
        assert unlikely.collect().to_native()["v"].to_list() == [9]


def test_proven_fast_plan_may_be_empty() -> None:
    fast = nw.from_native(pl.LazyFrame({"v": []}, schema={"v": pl.Float64}))
    exact = nw.from_native(pl.LazyFrame({"v": [9.0]}))
    proof = nw.from_native(pl.LazyFrame({PROVED: [True]}))
    chosen = proven_or_exact(exact, lambda: FastPlan(fast, proof), in_memory=False)
    assert chosen.collect().to_native().height == 0


# positions 1..n in every ranking (the orders, no window), and the same orders otherwise
POSITIONS = {
    "contiguous": [1, 2, 3, 4, 1, 2, 3],
    "gaps": [1, 3, 4, 9, 1, 2, 3],
    "from two": [2, 3, 4, 5, 1, 2, 3],
}


@pytest.mark.parametrize("kind", ["polars", "lazy", "lazy sorted", "duckdb"])
@pytest.mark.parametrize("positions", list(POSITIONS))
@pytest.mark.parametrize("metric", ["arp", "ndkl"])
def test_depends_on_the_order_of_positions_only(metric: str, kind: str, positions: str) -> None:
    """The rows in position order (one pass, no window) or shuffled (windows): same values."""
    frame = pl.DataFrame(
        {
            "ranking": [0, 0, 0, 0, 1, 1, 1],
            "rank": POSITIONS[positions],
            "group": ["a", "b", "a", "b", "b", "a", "b"],
        }
    )
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=2)
    native: Any = {
        "polars": shuffled,
        "lazy": shuffled.lazy(),
        "lazy sorted": frame.lazy(),
        "duckdb": duckdb.from_arrow(shuffled.to_arrow()),
    }[kind]
    if metric == "arp":
        result = fa.fair.arp(native, ranking="ranking", combo=None)
        values = nw.from_native(result).lazy().collect(backend="polars").sort("group").to_native()
        # ranking 0: a at orders 1 and 3 wins 3 of its 4 mixed pairs; ranking 1: a wins 1 of 2
        assert values["arp"].to_list() == [4 / 6, 2 / 6]
    else:
        result = fa.fair.ndkl(native, ranking="ranking", target="ranking")
        value = nw.from_native(result).lazy().collect(backend="polars").to_native().item()
        assert value == pytest.approx(_ndkl_reference(frame), rel=1e-12)


# (ranking, rank, group, term) rows in scan order; per ranking, whether the rows came in
# one run of rising positions 1 … n (every row's run proof then holds)
RUNS: dict[str, tuple[list[tuple[int, int, str, float]], dict[int, bool]]] = {
    "sorted": (
        [(0, 1, "a", 1.0), (0, 2, "b", 2.0), (0, 3, "a", 4.0), (1, 1, "b", 8.0), (1, 2, "b", 16.0)],
        {0: True, 1: True},
    ),
    "a gap": (
        [(0, 1, "a", 1.0), (0, 2, "b", 2.0), (0, 5, "a", 4.0), (1, 1, "b", 8.0), (1, 2, "b", 16.0)],
        {0: False, 1: True},
    ),
    "unsorted positions": (
        [(0, 2, "a", 1.0), (0, 1, "b", 2.0), (1, 1, "b", 8.0), (1, 2, "b", 16.0)],
        {0: False, 1: True},
    ),
    "split ranking": (
        [(0, 1, "a", 1.0), (1, 1, "b", 8.0), (0, 2, "b", 2.0), (1, 2, "b", 16.0)],
        {0: False, 1: False},
    ),
}


def _runs(rows: list[tuple[int, int, str, float]], partition: list[str]) -> pl.DataFrame:
    frame = pl.LazyFrame(
        rows,
        schema={"ranking": pl.Int64, "rank": pl.Int64, "group": pl.String, "term": pl.Float64},
        orient="row",
    )
    runs = plans._runs_along(
        nw.from_native(frame),
        partition,
        "rank",
        counts={"order": [], "count": ["group"]},
        sums={"term": "before"},
    )
    native: pl.LazyFrame = runs.to_native()
    return native.collect(engine="streaming")


def test_runs_along_counts_and_sums_in_position_order() -> None:
    result = _runs(RUNS["sorted"][0], ["ranking"]).sort("ranking", "rank")
    # by hand: ranking 0 is a, b, a (terms 1, 2, 4); ranking 1 is b, b (terms 8, 16)
    assert result.select("ranking", "rank", "group", "term").rows() == [
        r[:4] for r in RUNS["sorted"][0]
    ]
    assert result["order"].to_list() == [1, 2, 3, 1, 2]
    assert result["count"].to_list() == [1, 1, 2, 1, 2]
    assert result["before"].to_list() == [0.0, 1.0, 3.0, 0.0, 8.0]
    assert result.schema["order"] == pl.Int64


@pytest.mark.parametrize("case", list(RUNS))
def test_runs_along_proves_only_rankings_that_came_in_one_rising_run(case: str) -> None:
    rows, proved = RUNS[case]
    result = _runs(rows, ["ranking"])
    found = result.group_by("ranking").agg(pl.col(plans._RUN).all())
    assert dict(found.select("ranking", plans._RUN).rows()) == proved


def test_runs_along_without_partition_keys_is_one_partition() -> None:
    rows = [(1, 1, "a", 1.0), (0, 2, "b", 2.0), (5, 3, "a", 4.0)]
    result = _runs(rows, [WHOLE])
    assert result["order"].to_list() == [1, 2, 3]
    assert result["count"].to_list() == [1, 1, 2]
    assert result["before"].to_list() == [0.0, 1.0, 3.0]
    assert result[plans._RUN].to_list() == [True, True, True]
    assert _runs(list(reversed(rows)), [WHOLE])[plans._RUN].to_list() == [False, False, False]


def _ndkl_reference(frame: pl.DataFrame) -> float:
    """The mean over rankings of the straightforward NDKL (tests/reference)."""
    rows = frame.to_dicts()
    rankings = sorted({r["ranking"] for r in rows})
    values = [
        ndkl_one(
            [r for r in rows if r["ranking"] == k],
            rank="rank",
            group_of=operator.itemgetter("group"),
            target=None,
        )
        for k in rankings
    ]
    return sum(values) / len(values)


@pytest.mark.parametrize("order", ["sorted", "shuffled"])
def test_ndkl_on_a_sorted_scan_takes_the_one_pass_plan(
    monkeypatch: pytest.MonkeyPatch, order: str
) -> None:
    """Rankings in position order take the pass along each ranking, the others the windows.

    The windows' running sum is made wrong here on purpose (doubled: a shift would cancel, as
    Σ δ_j = 0 against each ranking's own mix): only the plan that does not use it may give the
    right value.
    """

    right_sums_along = plans._sums_along

    def wrong_sums_along(*args: Any, running: str, **kwargs: Any) -> Any:
        rows, totals = right_sums_along(*args, running=running, **kwargs)
        return rows.with_columns(nw.col(f"{running}_before") * 2.0), totals

    monkeypatch.setattr(plans, "_sums_along", wrong_sums_along)
    log = fa.datasets.biased_rankings([0.3, 0.7], 10, phi=0.5, num_rankings=20, seed=0)
    expected = _ndkl_reference(log)
    if order == "shuffled":
        log = log.sample(fraction=1.0, shuffle=True, seed=1)
    lazy = fa.fair.ndkl(log.lazy(), ranking="ranking", target="ranking")
    value = lazy.collect(engine="streaming").item()
    if order == "sorted":
        assert value == pytest.approx(expected, rel=1e-12)
    else:
        assert value != pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize(
    ("ranks", "in_memory", "fast"),
    [
        ([1, 2, 3, 1, 2], False, True),
        ([1, 3, 4, 1, 2], False, False),
        ([1, 2, 3, 1, 2], True, False),
    ],
    ids=["ranks 1..n, lazy", "a gap, lazy", "ranks 1..n, in memory"],
)
def test_per_order_takes_the_ranks_where_they_are_the_orders(
    monkeypatch: pytest.MonkeyPatch, ranks: list[int], in_memory: bool, fast: bool
) -> None:
    """Ranks 1..n in every ranking of a lazy Polars plan are the orders (no window); the
    window is made wrong here on purpose (every order 9), so only that plan sums the ranks."""
    monkeypatch.setattr(plans, "order_within", lambda *_: nw.lit(9, dtype=nw.Int64))
    rows = nw.from_native(pl.LazyFrame({"ranking": [0, 0, 0, 1, 1], "rank": ranks}))
    result = plans.per_order(
        rows,
        ["ranking"],
        "rank",
        lambda frame, order: frame.group_by("ranking").agg(order.sum().alias("s")),
        in_memory=in_memory,
    )
    sums = result.to_native().collect().sort("ranking")["s"].to_list()
    assert sums == ([sum(ranks[:3]), sum(ranks[3:])] if fast else [27, 18])
