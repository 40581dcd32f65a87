"""The ``.xai`` / ``.explain`` namespaces, and Polars' own ``LazyFrame.explain()`` left alone."""

from __future__ import annotations

import importlib

import pandas as pd
import polars as pl
import pytest

import frameaudit as fa
from frameaudit import _accessors

COHESION = pl.DataFrame(
    {
        "group": ["g1", "g1", "g2", "g2", "all", "all"],
        "feature": ["a", "b", "a", "b", "a", "b"],
        "importance": [0.9, 0.1, 0.2, 0.8, 0.6, 0.4],
    }
)
NEIGHBOURS = pl.DataFrame(
    {"query": [0, 0, 1], "distance": [0.1, 0.2, 0.0], "label": [1, 0, 0], "predicted": [1, 1, 0]}
)


def test_lazyframe_explain_is_still_the_query_plan() -> None:
    plan = COHESION.lazy().filter(pl.col("importance") > 0.5).explain()
    assert isinstance(plan, str)
    assert "FILTER" in plan.upper()
    assert not isinstance(pl.LazyFrame.__dict__["explain"], type)


@pytest.mark.parametrize(
    "frame",
    [COHESION, COHESION.lazy(), COHESION.to_pandas()],
    ids=["polars", "lazy", "pandas"],
)
def test_xai_everywhere(frame: object) -> None:
    expected = fa.explain.position_parity(COHESION, overall="all").item()
    result = frame.xai.position_parity(overall="all")  # type: ignore[attr-defined]
    value = result.collect().item() if isinstance(result, pl.LazyFrame) else result.to_numpy()[0, 0]
    assert value == expected == pytest.approx(0.5)


@pytest.mark.parametrize("frame", [COHESION, COHESION.to_pandas()], ids=["polars", "pandas"])
def test_explain_on_eager_frames(frame: object) -> None:
    result = frame.explain.rank_alignment(overall="all", per_group=True)  # type: ignore[attr-defined]
    values = list(result["rank_alignment"])
    assert values == pytest.approx([1.0, 0.5])


def test_correspondence_through_namespaces() -> None:
    expected = fa.explain.correspondence(NEIGHBOURS)
    assert NEIGHBOURS.explain.correspondence().equals(expected)
    assert NEIGHBOURS.lazy().xai.correspondence().collect().equals(expected)
    pandas_result = NEIGHBOURS.to_pandas().explain.correspondence()
    assert list(pandas_result["band"]) == expected["band"].to_list()


def test_registration_is_idempotent() -> None:
    _accessors.register_namespaces()
    importlib.reload(fa)
    assert isinstance(pl.DataFrame().xai, _accessors.XaiNamespace)
    assert isinstance(pd.DataFrame().explain, _accessors.XaiNamespace)
    assert isinstance(COHESION.lazy().explain(), str)
