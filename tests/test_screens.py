"""The neighbouring-row screens prove what they claim, and refuse everything else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import narwhals.stable.v2 as nw
import polars as pl
import pytest

import frameaudit as fa
from frameaudit._engine import PROVED, order_marks, proven_or_exact, sorted_screen
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
    expected = fa.fair.exp(log, ranking="ranking")
    if order == "shuffled":
        log = log.sample(fraction=1.0, shuffle=True, seed=1)
    log.write_parquet(tmp_path / "log.parquet")
    scan = pl.scan_parquet(tmp_path / "log.parquet")
    result = fa.fair.exp(scan, ranking="ranking").collect(engine="streaming")
    assert result.item() == pytest.approx(expected.item(), rel=1e-12)
    tied = pl.concat([log, log.head(1)])
    tied.write_parquet(tmp_path / "tied.parquet")
    lazy = fa.fair.exp(pl.scan_parquet(tmp_path / "tied.parquet"), ranking="ranking")
    with pytest.raises(fa.FrameAuditError, match="values must be unique within each ranking"):
        lazy.collect(engine="streaming")


@pytest.mark.parametrize("proved", [True, False, None])
def test_proven_or_exact_takes_the_exact_plan_unless_proved(proved: bool | None) -> None:
    fast = nw.from_native(pl.LazyFrame({"g": ["a", "b"], "v": [1.0, 2.0]}))
    exact = nw.from_native(pl.LazyFrame({"g": ["a"], "v": [9.0]}))
    proof = nw.from_native(pl.LazyFrame({PROVED: [proved]}, schema={PROVED: pl.Boolean}))
    result = proven_or_exact(fast, proof, exact, in_memory=False).collect().to_native()
    assert result.to_dict(as_series=False) == (
        {"g": ["a", "b"], "v": [1.0, 2.0]} if proved else {"g": ["a"], "v": [9.0]}
    )
    # in-memory data: no choice made inside the plan (no Python on Polars' pool), the exact plan
    in_memory = proven_or_exact(fast, proof, exact, in_memory=True).collect().to_native()
    assert in_memory.to_dict(as_series=False) == {"g": ["a"], "v": [9.0]}


def test_proven_fast_plan_may_be_empty() -> None:
    fast = nw.from_native(pl.LazyFrame({"v": []}, schema={"v": pl.Float64}))
    exact = nw.from_native(pl.LazyFrame({"v": [9.0]}))
    proof = nw.from_native(pl.LazyFrame({PROVED: [True]}))
    assert proven_or_exact(fast, proof, exact, in_memory=False).collect().to_native().height == 0


# positions 1..n in every ranking (the orders, no window), and the same orders otherwise
POSITIONS = {
    "contiguous": [1, 2, 3, 4, 1, 2, 3],
    "gaps": [1, 3, 4, 9, 1, 2, 3],
    "from two": [2, 3, 4, 5, 1, 2, 3],
}


@pytest.mark.parametrize("kind", ["polars", "lazy", "duckdb"])
@pytest.mark.parametrize("positions", list(POSITIONS))
def test_arp_depends_on_the_order_of_positions_only(kind: str, positions: str) -> None:
    frame = pl.DataFrame(
        {
            "ranking": [0, 0, 0, 0, 1, 1, 1],
            "rank": POSITIONS[positions],
            "group": ["a", "b", "a", "b", "b", "a", "b"],
        }
    ).sample(fraction=1.0, shuffle=True, seed=2)
    native: Any = {
        "polars": frame,
        "lazy": frame.lazy(),
        "duckdb": duckdb.from_arrow(frame.to_arrow()),
    }[kind]
    result = fa.fair.arp(native, ranking="ranking", combo=None)
    values = nw.from_native(result).lazy().collect(backend="polars").sort("group").to_native()
    # ranking 0: a at orders 1 and 3 wins 3 of its 4 mixed pairs; ranking 1: a wins 1 of 2
    assert values["arp"].to_list() == [4 / 6, 2 / 6]
