"""The fair-ranking metrics on every option and every frame kind, against tests/reference.

The full option grid (metric × combo × role options) runs on Polars against the independent
reference implementation; a representative subset runs through the ``constructor`` fixture on
every frame kind and must equal both the Polars result and the reference.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import polars as pl
import pytest
from conftest import Constructor, assert_frame_close, to_polars
from reference.ranking import (
    COMBOS,
    GROUP_METRICS,
    METRICS,
    SIZED,
    expected,
    random_rankings,
)

import frameaudit as fa
from frameaudit._registry import entry
from tests import calls

# Frames: one full ranking; several full rankings in two partitions; partial rankings with gaps
# in the positions (so some mapping items are never ranked).
ONE, ONE_MAP = random_rankings(11, n_items=9, n_groups=3, n_rankings=1)
MANY, MANY_MAP = random_rankings(12, n_items=10, n_groups=3, n_rankings=4, n_parts=2)
PARTIAL, PARTIAL_MAP = random_rankings(
    13, n_items=14, n_groups=4, n_rankings=5, length=6, gaps=True, n_parts=2
)


def _mapping_frame(mapping: dict[int, str]) -> pl.DataFrame:
    return pl.DataFrame({"item": list(mapping), "group": list(mapping.values())})


# (id, frame, options). ``groups`` is attached per metric; iaa ignores the group options.
OPTIONS: list[tuple[str, pl.DataFrame, dict[str, Any]]] = [
    ("single", ONE, {}),
    ("single-item", ONE, {"item": "item"}),
    ("ranking", MANY, {"ranking": "query"}),
    ("ranking-list-item", MANY, {"ranking": ["query"], "item": "item"}),
    ("by", MANY, {"ranking": "query", "by": "part"}),
    ("groups-dict", MANY, {"ranking": "query", "item": "item", "groups": MANY_MAP}),
    (
        "groups-frame-by",
        MANY,
        {"ranking": "query", "item": "item", "groups": _mapping_frame(MANY_MAP), "by": "part"},
    ),
    ("intersectional", MANY, {"ranking": "query", "group": ["group", "region"]}),
    (
        "intersectional-by",
        MANY,
        {"ranking": "query", "item": "item", "group": ["region", "group"], "by": ["part"]},
    ),
    ("partial-gaps", PARTIAL, {"ranking": "query", "item": "item", "by": "part"}),
    # a listed universe with a group no row holds (absent everywhere: n = 0, SPEC §1)
    (
        "universe-listed",
        MANY,
        {"ranking": "query", "item": "item", "universe": ["g0", "g1", "g2", "g9"], "by": "part"},
    ),
    ("rows-size", MANY, {"ranking": "query", "item": "item", "size": "rows"}),
    ("partial-gaps-groups", PARTIAL, {"ranking": "query", "item": "item", "groups": PARTIAL_MAP}),
]


def arguments(metric: str, options: dict[str, Any], combo: str | None) -> dict[str, Any]:
    """The keyword arguments of ``metric`` for a row of OPTIONS."""
    kwargs = dict(options)
    if not entry(metric).grouped:
        kwargs.pop("group", None)
        kwargs.pop("groups", None)
        kwargs.pop("universe", None)
    if metric in SIZED and "ranking" in kwargs and "item" not in kwargs:
        kwargs["size"] = "rows"  # the explicit choice of n_g where items may recur
    if metric not in SIZED:
        kwargs.pop("size", None)
    if metric in GROUP_METRICS:
        kwargs["combo"] = combo
    return kwargs | calls.arguments(metric, {"relevant": "binary"}, p=0.3, decay=0.7)


def reference_arguments(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The reference takes ``groups`` as a dict only."""
    groups = kwargs.get("groups")
    if isinstance(groups, pl.DataFrame):
        return {**kwargs, "groups": dict(groups.iter_rows())}
    return kwargs


def _grid() -> list[Any]:
    """Every metric on every option, per-group (combo=None) and with one combo per option.

    The combo rotates with the option, so each metric meets all seven; test_ranking_combos.py
    covers the combos themselves.
    """
    cases = []
    for m, metric in enumerate(METRICS):
        seen = set()
        for o, (name, frame, options) in enumerate(OPTIONS):
            combos = (None, COMBOS[(m + o) % len(COMBOS)]) if metric in GROUP_METRICS else (None,)
            for combo in combos:
                kwargs = arguments(metric, options, combo)
                key = (id(frame), repr(sorted(kwargs.items(), key=str)))
                if key not in seen:
                    seen.add(key)
                    cases.append(pytest.param(metric, frame, kwargs, id=f"{metric}-{name}-{combo}"))
    return cases


@pytest.mark.parametrize(("metric", "frame", "kwargs"), _grid())
def test_option_grid_matches_reference(
    metric: str, frame: pl.DataFrame, kwargs: dict[str, Any]
) -> None:
    result = getattr(fa.fair, metric)(frame.sample(fraction=1.0, shuffle=True, seed=3), **kwargs)
    assert isinstance(result, pl.DataFrame)
    assert_frame_close(result, expected(frame, metric, **reference_arguments(kwargs)))


# Each metric once (a single-number metric, whose windows differ most by engine, twice), the
# options that exercise joins (groups=), windows, partitions (by=) and intersectional groups
# taken in turn, and a combo in turn, on every frame kind.
_BACKEND_OPTIONS = (
    "groups-frame-by",
    "intersectional",
    "groups-dict",
    "by",
    "single",
    "partial-gaps-groups",
    "intersectional-by",
    "ranking-list-item",
    "partial-gaps",
)
BACKEND_CASES = [
    (
        metric,
        _BACKEND_OPTIONS[(i + turn) % len(_BACKEND_OPTIONS)],
        COMBOS[i % len(COMBOS)] if metric in GROUP_METRICS and i % 3 else None,
    )
    for i, metric in enumerate(METRICS)
    for turn in ((0,) if metric in GROUP_METRICS else (0, 4))
]
_OPTIONS = {name: (frame, options) for name, frame, options in OPTIONS}


@pytest.mark.spark
@pytest.mark.parametrize(
    ("metric", "option", "combo"), BACKEND_CASES, ids=["-".join(map(str, c)) for c in BACKEND_CASES]
)
def test_backends_match_polars_and_reference(
    constructor: Constructor, metric: str, option: str, combo: str | None
) -> None:
    frame, options = _OPTIONS[option]
    kwargs = arguments(metric, options, combo)
    function = getattr(fa.fair, metric)
    result = to_polars(function(constructor(frame), **kwargs))
    assert_frame_close(result, to_polars(function(frame, **kwargs)))
    assert_frame_close(result, expected(frame, metric, **reference_arguments(kwargs)))


# every metric by query and item within parts, a combo in turn
ACCESSOR_CASES = [
    (metric, arguments(metric, {"ranking": "query", "item": "item", "by": "part"}, combo))
    for i, metric in enumerate(METRICS)
    for combo in [COMBOS[i % len(COMBOS)] if i % 2 else None]
]


@pytest.mark.parametrize(("metric", "kwargs"), ACCESSOR_CASES, ids=[c[0] for c in ACCESSOR_CASES])
def test_polars_accessors_forward(metric: str, kwargs: dict[str, Any]) -> None:
    eager = MANY.clone()
    function = getattr(fa.fair, metric)
    expected_frame = function(MANY, **kwargs)
    assert_frame_close(getattr(eager.fair, metric)(**kwargs), expected_frame)  # type: ignore[attr-defined]
    lazy = getattr(MANY.lazy().fair, metric)(**kwargs)  # type: ignore[attr-defined]
    assert isinstance(lazy, pl.LazyFrame)
    assert_frame_close(lazy.collect(), expected_frame)
    assert eager.equals(MANY)


@pytest.mark.parametrize(("metric", "kwargs"), ACCESSOR_CASES, ids=[c[0] for c in ACCESSOR_CASES])
@pytest.mark.parametrize("arrow_dtypes", [False, True], ids=["numpy", "pyarrow"])
def test_pandas_accessor_returns_arrow_backed_pandas(
    metric: str, kwargs: dict[str, Any], *, arrow_dtypes: bool
) -> None:
    frame = MANY.to_pandas(use_pyarrow_extension_array=arrow_dtypes)
    before = frame.copy()
    result = getattr(frame.fair, metric)(**kwargs)
    assert isinstance(result, pd.DataFrame)
    assert all(isinstance(dtype, pd.ArrowDtype) for dtype in result.dtypes), result.dtypes
    assert_frame_close(to_polars(result), to_polars(getattr(fa.fair, metric)(frame, **kwargs)))
    assert_frame_close(to_polars(result), to_polars(getattr(fa.fair, metric)(MANY, **kwargs)))
    pd.testing.assert_frame_equal(frame, before)
    assert list(frame.columns) == MANY.columns


@pytest.mark.parametrize("metric", METRICS)
def test_lazy_in_lazy_out_and_input_untouched(metric: str) -> None:
    kwargs = arguments(metric, {"ranking": "query", "item": "item"}, "MinMaxRatio")
    lazy = MANY.lazy()
    result = getattr(fa.fair, metric)(lazy, **kwargs)
    assert isinstance(result, pl.LazyFrame)
    assert_frame_close(result.collect(), expected(MANY, metric, **kwargs))
    assert lazy.collect_schema().names() == MANY.columns
    assert lazy.collect().equals(MANY)


@pytest.mark.slow
def test_arp_pair_counts_do_not_overflow() -> None:
    """200,000 alternating items: m² = 10¹⁰ mixed pairs (beyond 32 bits). a sits at the odd
    positions, so it wins m(m+1)/2 of them: V_a = ½ + 1/(2m), V_b = ½ − 1/(2m)."""
    m = 100_000
    frame = pl.DataFrame({"rank": range(1, 2 * m + 1), "group": ["a", "b"] * m})
    result = fa.fair.arp(frame, combo=None)
    assert result["arp"].to_list() == pytest.approx([0.5 + 0.5 / m, 0.5 - 0.5 / m], rel=1e-12)
