"""Properties of the fair-ranking metrics (hypothesis): invariances, bounds, parity, bad input."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import duckdb
import polars as pl
import pytest
from conftest import assert_frame_close, to_polars
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference.ranking import COMBOS, GROUP_METRICS, METRICS, explicit_size

import frameaudit as fa
from frameaudit._registry import entry
from tests.calls import entries

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LABELS = ("a", "b", "c", "d")
RELEVANCE = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])


@st.composite
def rankings(draw: st.DrawFn, *, min_length: int = 1, max_rankings: int = 3) -> pl.DataFrame:
    """Tidy rankings: items with a fixed group each, positions possibly non-contiguous."""
    n_items = draw(st.integers(max(min_length, 2), 7))
    labels = LABELS[: draw(st.integers(1, len(LABELS)))]
    group_of = draw(st.lists(st.sampled_from(labels), min_size=n_items, max_size=n_items))
    rows = []
    for query in range(draw(st.integers(1, max_rankings))):
        length = draw(st.integers(min_length, n_items))
        items = draw(st.permutations(range(n_items)))[:length]
        positions = sorted(
            draw(st.sets(st.integers(1, 3 * length), min_size=length, max_size=length))
        )
        for position, item in zip(positions, items, strict=True):
            rows.append(
                {
                    "query": query,
                    "rank": position,
                    "item": item,
                    "group": group_of[item],
                    "relevance": draw(RELEVANCE),
                    "ctr": draw(RELEVANCE),
                    "binary": draw(st.integers(0, 1)),
                }
            )
    return pl.DataFrame(rows)


GROUPED = tuple(m for m in METRICS if entry(m).grouped)  # the metrics of the items' groups


def kwargs_for(metric: str, combo: str | None = "MinMaxRatio") -> dict[str, Any]:
    kwargs: dict[str, Any] = {"ranking": "query", "item": "item"}
    if metric in GROUP_METRICS:
        kwargs["combo"] = combo
    if metric == "erbr":
        kwargs["relevance"] = "binary"
    return kwargs


def run(metric: str, frame: Any, **kwargs: Any) -> pl.DataFrame:
    return to_polars(getattr(fa.fair, metric)(frame, **explicit_size(metric, kwargs)))


@SETTINGS
@given(
    frame=rankings(),
    metric=st.sampled_from(METRICS),
    combo=st.sampled_from([None, *COMBOS]),
    seed=st.integers(0, 2**16),
)
def test_row_order_invariance(
    frame: pl.DataFrame, metric: str, combo: str | None, seed: int
) -> None:
    kwargs = kwargs_for(metric, combo)
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=seed)
    assert_frame_close(run(metric, shuffled, **kwargs), run(metric, frame, **kwargs))


@SETTINGS
@given(
    frame=rankings(),
    metric=st.sampled_from(GROUPED),
    combo=st.sampled_from(COMBOS),
    new_labels=st.permutations(["w", "x", "y", "z"]),
)
def test_group_relabelling_invariance(
    frame: pl.DataFrame, metric: str, combo: str, new_labels: list[str]
) -> None:
    """Renaming groups (which reorders them) permutes per-group values, keeps combos."""
    rename = dict(zip(LABELS, new_labels, strict=True))
    back = {new: old for old, new in rename.items()}
    renamed = frame.with_columns(pl.col("group").replace_strict(rename))
    if metric in GROUP_METRICS:
        per_group = run(metric, renamed, **kwargs_for(metric, None))
        restored = per_group.with_columns(pl.col("group").replace_strict(back)).sort("group")
        assert_frame_close(restored, run(metric, frame, **kwargs_for(metric, None)))
    assert_frame_close(
        run(metric, renamed, **kwargs_for(metric, combo)),
        run(metric, frame, **kwargs_for(metric, combo)),
    )


@SETTINGS
@given(frame=rankings(), metric=st.sampled_from(GROUP_METRICS))
def test_min_max_ratio_in_unit_interval(frame: pl.DataFrame, metric: str) -> None:
    value = run(metric, frame, **kwargs_for(metric)).item()
    assert value is None or 0.0 <= value <= 1.0


@SETTINGS
@given(frame=rankings())
def test_ndkl_non_negative_and_arp_in_unit_interval(frame: pl.DataFrame) -> None:
    ndkl = run("ndkl", frame, ranking="query").item()
    # against the universe's shares, a one-group universe compares nothing: undefined
    assert ndkl is None if frame["group"].n_unique() < 2 else ndkl >= 0.0
    for value in run("arp", frame, **kwargs_for("arp", None))["arp"]:
        assert value is None or 0.0 <= value <= 1.0


@st.composite
def identical_treatment(draw: st.DrawFn) -> pl.DataFrame:
    """G rankings of a base sequence where ranking r relabels group g as g + r (mod G).

    Over the G rankings every group holds every position exactly once per occurrence in the
    base sequence, so every position-based per-group value is the same for all groups.
    """
    n_groups = draw(st.integers(2, 4))
    copies = draw(st.integers(1, 3))
    base = draw(st.permutations([g for g in range(n_groups) for _ in range(copies)]))
    positions = sorted(draw(st.sets(st.integers(1, 20), min_size=len(base), max_size=len(base))))
    rows = [
        {
            "query": r,
            "rank": k,
            "group": LABELS[(g + r) % n_groups],
            "relevance": 1.0,
            "ctr": 0.5,
            "binary": 1,
        }
        for r in range(n_groups)
        for k, g in zip(positions, base, strict=True)
    ]
    return pl.DataFrame(rows)


@SETTINGS
@given(frame=identical_treatment(), metric=st.sampled_from(GROUP_METRICS))
def test_perfect_parity(frame: pl.DataFrame, metric: str) -> None:
    kwargs = {"ranking": "query", **({"relevance": "binary"} if metric == "erbr" else {})}
    kwargs = explicit_size(metric, kwargs)
    function = getattr(fa.fair, metric)
    assert function(frame, combo="MinMaxRatio", **kwargs).item() == pytest.approx(1.0, rel=1e-12)
    assert function(frame, combo="MaxMinDiff", **kwargs).item() == pytest.approx(0.0, abs=1e-12)


@SETTINGS
@given(frame=rankings(), label=st.sampled_from(LABELS))
def test_ndkl_zero_when_every_prefix_matches_the_reference(frame: pl.DataFrame, label: str) -> None:
    """With one group, every prefix has the reference proportions (all of that group).

    Measured against each ranking's own mix (FairRankTune's reference) that is 0; against the
    universe's shares a one-group universe compares nothing, and NDKL is undefined (SPEC §1).
    """
    one_group = frame.with_columns(pl.lit(label).alias("group"))
    own = run("ndkl", one_group, ranking="query", target="ranking").item()
    assert own == pytest.approx(0.0, abs=1e-12)
    assert run("ndkl", one_group, ranking="query").item() is None
    mapping = dict.fromkeys(frame["item"].unique(), label)
    assert run("ndkl", frame, ranking="query", item="item", groups=mapping).item() is None


# --- Bad input: random corruption must raise a frameaudit error, never anything else. --------

RELEVANCE_METRICS = tuple(m.name for m in entries("ranking", relevance=True))
GRADED = tuple(m for m in RELEVANCE_METRICS if entry(m).roles["relevance"] == "relevance")


def _set(frame: pl.DataFrame, column: str, row: int, value: Any) -> pl.DataFrame:
    """``frame`` with one cell replaced (the column's dtype widens if needed)."""
    index = pl.int_range(pl.len())
    return frame.with_columns(
        pl.when(index == row).then(pl.lit(value)).otherwise(pl.col(column)).alias(column)
    )


def _partner(frame: pl.DataFrame, row: int) -> int:
    """Another row of the same ranking (the strategy makes every ranking hold two rows)."""
    query = frame["query"][row]
    others = [i for i, q in enumerate(frame["query"]) if q == query and i != row]
    return others[0]


def _relevance_column(metric: str) -> str:
    return "binary" if entry(metric).roles["relevance"] == "relevant" else "relevance"


Corruption = Callable[[pl.DataFrame, str, int, st.DataObject], tuple[pl.DataFrame, dict[str, Any]]]

CORRUPTIONS: dict[str, tuple[tuple[str, ...], Corruption]] = {
    "null rank": (METRICS, lambda f, _m, i, _d: (_set(f, "rank", i, None), {})),
    "null group": (GROUPED, lambda f, _m, i, _d: (_set(f, "group", i, None), {})),
    "null ranking": (METRICS, lambda f, _m, i, _d: (_set(f, "query", i, None), {})),
    "null item": (METRICS, lambda f, _m, i, _d: (_set(f, "item", i, None), {})),
    "null relevance": (
        RELEVANCE_METRICS,
        lambda f, m, i, _d: (_set(f, _relevance_column(m), i, None), {}),
    ),
    "tied positions": (
        METRICS,
        lambda f, _m, i, _d: (_set(f, "rank", i, f["rank"][_partner(f, i)]), {}),
    ),
    "duplicate item": (
        METRICS,
        lambda f, _m, i, _d: (_set(f, "item", i, f["item"][_partner(f, i)]), {}),
    ),
    "rank below 1": (
        METRICS,
        lambda f, _m, i, d: (_set(f, "rank", i, d.draw(st.integers(-5, 0))), {}),
    ),
    "relevance out of range": (
        GRADED,
        lambda f, _m, i, d: (
            _set(f, "relevance", i, d.draw(st.sampled_from([-0.5, 1.5, math.nan, math.inf]))),
            {},
        ),
    ),
    "ctr out of range": (
        tuple(m.name for m in entries("ranking", ctr=True)),
        lambda f, _m, i, d: (_set(f, "ctr", i, d.draw(st.sampled_from([-1.0, 2.0, math.nan]))), {}),
    ),
    "non-binary relevance": (
        tuple(m for m in RELEVANCE_METRICS if m not in GRADED),
        lambda f, _m, i, d: (_set(f, "binary", i, d.draw(st.sampled_from([0.5, 2, -1]))), {}),
    ),
    "float rank": (
        METRICS,
        lambda f, _m, _i, _d: (f.with_columns(pl.col("rank").cast(pl.Float64)), {}),
    ),
    "string relevance": (
        RELEVANCE_METRICS,
        lambda f, m, _i, _d: (f.with_columns(pl.col(_relevance_column(m)).cast(pl.String)), {}),
    ),
    "unknown combo": (
        GROUP_METRICS,
        lambda f, _m, _i, d: (
            f,
            {"combo": d.draw(st.text(max_size=12).filter(lambda c: c not in COMBOS))},
        ),
    ),
    "missing column": (
        METRICS,
        lambda f, _m, _i, d: (f, {d.draw(st.sampled_from(["rank", "item", "ranking"])): "nope"}),
    ),
    "unmapped item": (
        GROUPED,
        lambda f, _m, i, _d: (
            f,
            {
                "groups": {
                    it: g for it, g in zip(f["item"], f["group"], strict=True) if it != f["item"][i]
                }
            },
        ),
    ),
    "p out of range": (
        ("awrf",),
        lambda f, _m, _i, d: (f, {"p": d.draw(st.sampled_from([0, -0.5, 1.5, math.nan, "0.5"]))}),
    ),
    "decay out of range": (
        tuple(m.name for m in entries("ranking", decay=True)),
        lambda f, _m, _i, d: (
            f,
            {"decay": d.draw(st.sampled_from([1, 1.5, -0.1, math.nan, None]))},
        ),
    ),
    "no rows": (METRICS, lambda f, _m, _i, _d: (f.head(0), {})),
}

BACKENDS: dict[str, Callable[[pl.DataFrame], Any]] = {
    "polars[eager]": lambda f: f,
    "polars[lazy]": lambda f: f.lazy(),
    "duckdb": lambda f: duckdb.from_arrow(f.to_arrow()),
}


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=rankings(min_length=2), data=st.data())
def test_bad_input_raises_a_frameaudit_error(frame: pl.DataFrame, data: st.DataObject) -> None:
    metric = data.draw(st.sampled_from(METRICS), label="metric")
    name = data.draw(
        st.sampled_from([n for n, (metrics, _) in CORRUPTIONS.items() if metric in metrics]),
        label="corruption",
    )
    backend = data.draw(st.sampled_from(list(BACKENDS)), label="backend")
    row = data.draw(st.integers(0, frame.height - 1), label="row")
    bad, overrides = CORRUPTIONS[name][1](frame, metric, row, data)
    kwargs = {**kwargs_for(metric), **overrides}
    with pytest.raises(fa.FrameAuditError):
        to_polars(getattr(fa.fair, metric)(BACKENDS[backend](bad), **kwargs))


@st.composite
def positions_any_order(draw: st.DrawFn) -> pl.DataFrame:
    """Small rankings whose positions may repeat, sorted, reversed, split into runs or shuffled."""
    rows = [
        {"query": query, "rank": draw(st.integers(1, 5)), "group": draw(st.sampled_from("ab"))}
        for query in draw(st.lists(st.sampled_from(["q1", "q2", "q3"]), min_size=1, max_size=9))
    ]
    frame = pl.DataFrame(rows)
    order = draw(st.sampled_from(["sorted", "descending", "as drawn", "shuffled"]))
    if order == "sorted":
        return frame.sort("query", "rank")
    if order == "descending":
        return frame.sort("query", "rank", descending=True)
    if order == "shuffled":
        return frame.sample(fraction=1.0, shuffle=True, seed=draw(st.integers(0, 99)))
    return frame


@SETTINGS
@given(frame=positions_any_order(), lazy=st.booleans())
def test_repeated_positions_are_found_in_any_row_order(frame: pl.DataFrame, lazy: bool) -> None:
    # independent: a position seen twice in one query, whatever the row order
    pairs = list(zip(frame["query"].to_list(), frame["rank"].to_list(), strict=True))
    repeated = {query for query, position in pairs if pairs.count((query, position)) > 1}

    def run() -> None:
        source = frame.lazy() if lazy else frame
        result = fa.fair.exp(source, ranking="query", size="rows", combo=None)
        if isinstance(result, pl.LazyFrame):
            result.collect()

    if repeated:
        with pytest.raises(fa.InvalidValueError, match=rf"{len(repeated)} ranking\(s\) repeat"):
            run()
    else:
        run()
