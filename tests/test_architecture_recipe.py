"""The architecture page's recipe for a new metric runs, registers, and computes what it says."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

import frameaudit as fa
from frameaudit import _registry

PAGE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


@pytest.fixture
def recipe() -> Iterator[dict[str, Any]]:
    """The recipe's code, run; the registry as it was afterwards."""
    section = PAGE.read_text().split("## Adding a metric\n", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None
    kept = dict(_registry._ENTRIES)
    namespace: dict[str, Any] = {}
    try:
        exec(compile(found.group(1), str(PAGE), "exec"), namespace)
        yield namespace
    finally:
        _registry._ENTRIES.clear()
        _registry._ENTRIES.update(kept)


FRAME = pl.DataFrame(
    {
        "rank": [1, 2, 3, 1, 2, 3],
        "group": ["a", "b", "a", "b", "a", "b"],
        "part": [0, 0, 0, 1, 1, 1],
    }
)


def test_the_recipe_registers_and_computes(recipe: dict[str, Any]) -> None:
    top_share = recipe["top_share"]
    (entry,) = (m for m in fa.metrics("ranking") if m.name == "top_share")
    assert entry.function is top_share
    assert entry.bounds == (0.0, 1.0, True, True)
    # by hand: in part 0 group a holds ranks 1 and 3 (one in the top 2), b rank 2 (one of one)
    result = top_share(FRAME, by="part", k=2)
    expected = pl.DataFrame(
        {"part": [0, 0, 1, 1], "group": ["a", "b", "a", "b"], "top_share": [0.5, 1.0, 1.0, 0.5]}
    )
    assert result.to_dicts() == expected.to_dicts()
    # the same on DuckDB, and a bad rank refused with the house's message
    relation = duckdb.from_arrow(FRAME.to_arrow())
    assert top_share(relation, by="part", k=2).pl().sort("part", "group").equals(expected)
    with pytest.raises(fa.InvalidValueError, match=r"rank='rank'"):
        top_share(FRAME.with_columns(pl.lit(0).alias("rank")), k=2)
    with pytest.raises(fa.InvalidParameterError, match=r"k=0"):
        top_share(FRAME, k=0)
