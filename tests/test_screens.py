"""The neighbouring-row screens prove what they claim, and refuse everything else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import narwhals.stable.v2 as nw
import polars as pl
import pytest

import frameaudit as fa
from frameaudit._engine import order_marks, sorted_screen
from frameaudit._expr import WHOLE

# (ranking, rank) rows in scan order, and whether they prove distinct positions
CASES = {
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


def _screen(rows: list[tuple[Any, Any]], partition: list[str]) -> bool:
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
    relation = duckdb.sql("select 0 as ranking, 1 as rank")
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
