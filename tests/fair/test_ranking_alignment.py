"""Soft groups on the sum metrics (``alignment=``): TREC 2022's alignment vectors.

A hard alignment (every weight 1) must give what the same mapping gives as ``groups=`` (the
mapping path is checked against FairRankTune); soft and intersectional alignments must equal
a straightforward re-implementation (tests/reference/ranking.py ``soft_cells`` and
``soft_per_group``): a row counts in each cell of its item with the item's weight there, and
n_g sums the weights of every aligned item.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import polars as pl
import pytest
from conftest import Constructor, assert_frame_close, to_polars
from reference import ranking as ref

import frameaudit as fa

# the group metrics that take soft groups: the sum metrics (ARP compares items pairwise)
SUM_METRICS = [
    m.name
    for m in fa.metrics("ranking", "group")
    if "alignment" in inspect.signature(m.function).parameters
]
PARAMS = {"relevance": "relevance", "ctr": "ctr", "p": 0.5, "decay": 0.5}


def _columns(metric: str) -> dict[str, str]:
    """The value columns ``metric`` reads besides the rank."""
    parameters = inspect.signature(getattr(fa.fair, metric)).parameters
    return {c: c for c in ("relevance", "ctr") if c in parameters}


def _run(seed: int = 0, rankings: int = 12, length: int = 6, pool: int = 15) -> pl.DataFrame:
    """Rankings of items drawn from a pool, in two systems (``by``)."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(rankings):
        items = rng.choice(pool, size=length, replace=False)
        rows += [
            {
                "system": "AB"[q % 2],
                "query": q,
                "item": f"d{i}",
                "rank": k + 1,
                "relevance": float(rng.choice([0.0, 1.0])),  # ERBR: binary
                "ctr": float(rng.uniform(0.1, 0.9)),
            }
            for k, i in enumerate(items)
        ]
    return pl.DataFrame(rows)


def _alignment(seed: int, items: list[str], levels: list[str], hard: bool = False) -> dict:
    """item → {level: weight}, weights summing to 1 (one level of weight 1 when ``hard``)."""
    rng = np.random.default_rng(seed)
    out: dict[str, dict[str, float]] = {}
    for i in items:
        if hard:
            out[i] = {levels[int(rng.integers(len(levels)))]: 1.0}
        else:
            raw = rng.dirichlet(np.ones(len(levels)))
            raw[rng.random(len(levels)) < 0.3] = 0.0  # some items miss some levels
            raw = raw / raw.sum() if raw.sum() > 0 else np.eye(len(levels))[0]
            out[i] = {g: float(w) for g, w in zip(levels, raw, strict=True) if w > 0}
    return out


def _frame(alignment: dict, group: str) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {"item": i, group: g, "weight": w}
            for i, cells in alignment.items()
            for g, w in cells.items()
        ],
        schema={"item": pl.String, group: pl.String, "weight": pl.Float64},
    )


def _expected(
    metric: str, run: pl.DataFrame, alignments: list[dict], names: list[str], unaligned: str
) -> pl.DataFrame:
    """The reference's per-group frame: by, the group columns, the value and n."""
    items = sorted({*run["item"], *(i for a in alignments for i in a)})
    cells = ref.soft_cells(alignments, items, unaligned)
    out = []
    for (system,), part in sorted(run.partition_by("system", as_dict=True).items()):
        rows = part.to_dicts()
        values = ref.soft_per_group(metric, rows, cells, rank="rank", item="item", params=PARAMS)
        out += [
            {"system": system, **dict(zip(names, g, strict=True)), metric: v, "n": n}
            for g, (v, n) in values.items()
        ]
    schema = {"system": pl.String, **dict.fromkeys(names, pl.String), metric: pl.Float64}
    return pl.DataFrame(out, schema={**schema, "n": pl.Float64})


@pytest.mark.parametrize("metric", SUM_METRICS)
def test_a_hard_alignment_is_the_mapping(constructor: Constructor, metric: str) -> None:
    run = _run()
    pool = sorted({*run["item"], "d98", "d99"})  # two items aligned, never ranked
    mapping = {i: next(iter(c)) for i, c in _alignment(1, pool, ["m", "f", "x"], True).items()}
    hard = _frame({i: {g: 1.0} for i, g in mapping.items()}, "group")
    common = dict(item="item", ranking="query", by="system", **_columns(metric))
    frame = constructor(run)
    soft = to_polars(getattr(fa.fair, metric)(frame, alignment=hard, combo=None, **common))
    mapped = to_polars(getattr(fa.fair, metric)(frame, groups=mapping, combo=None, **common))
    # the same values; n is the summed weights (Float64) where the mapping counts items
    assert_frame_close(soft, mapped.with_columns(pl.col("n").cast(pl.Float64)), rel=1e-12)
    combined = to_polars(getattr(fa.fair, metric)(frame, alignment=hard, **common))
    expected = to_polars(getattr(fa.fair, metric)(frame, groups=mapping, **common))
    assert_frame_close(combined, expected, rel=1e-12)


@pytest.mark.parametrize("unaligned", ["unknown", "uniform", "drop"])
@pytest.mark.parametrize("metric", SUM_METRICS)
def test_soft_intersectional_groups_equal_the_reference(metric: str, unaligned: str) -> None:
    run = _run(seed=2)
    pool = sorted(run["item"].unique())
    # each dimension leaves some ranked items out, and lists one item never ranked
    gender = _alignment(3, [*pool[:-3], "d99"], ["m", "f"])
    region = _alignment(4, [*pool[2:], "d98"], ["north", "south", "east"])
    common = dict(item="item", ranking="query", by="system", **_columns(metric))
    result = getattr(fa.fair, metric)(
        run,
        alignment=[_frame(gender, "gender"), _frame(region, "region")],
        group=["gender", "region"],
        unaligned=unaligned,
        combo=None,
        **common,
    )
    expected = _expected(metric, run, [gender, region], ["gender", "region"], unaligned)
    assert_frame_close(result, expected, rel=1e-12)


@pytest.mark.spark(cases=["erbe"])  # PySpark's case (a cases= name matches as a substring)
@pytest.mark.parametrize("metric", ["exp", "erbe"])
def test_soft_groups_on_every_engine(constructor: Constructor, metric: str) -> None:
    run = _run(seed=5)
    alignment = _alignment(6, sorted(run["item"].unique())[1:], ["m", "f", "x"])
    kwargs: dict[str, Any] = {"item": "item", "ranking": "query", "by": "system", "combo": None}
    result = to_polars(
        getattr(fa.fair, metric)(constructor(run), alignment=_frame(alignment, "group"), **kwargs)
    )
    expected = _expected(metric, run, [alignment], ["group"], "unknown")
    assert_frame_close(result, expected, rel=1e-12)


def test_a_hard_alignment_gives_the_mapping_s_interval() -> None:
    run = _run(seed=7, rankings=30)
    mapping = {
        i: next(iter(c))
        for i, c in _alignment(8, sorted(run["item"].unique()), ["m", "f"], True).items()
    }
    hard = _frame({i: {g: 1.0} for i, g in mapping.items()}, "group")
    common = {
        "item": "item",
        "ranking": "query",
        "by": "system",
        "ci": 0.9,
        "n_boot": 200,
        "seed": 3,
    }
    soft = fa.fair.exp(run, alignment=hard, **common)
    mapped = fa.fair.exp(run, groups=mapping, **common)
    assert_frame_close(soft, mapped, rel=1e-12)
    assert soft["exp_lo"].null_count() == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "alignment=: give item= the item column to join on"),
        (
            {"item": "item", "groups": {"d1": "m"}},
            "groups=, alignment=: give the groups as a mapping or as alignments, not both",
        ),
        (
            {"item": "item", "universe": ["m", "f"]},
            "universe=: with alignment= the alignments' groups are the universe",
        ),
        (
            {"item": "item", "ranking": "query", "group": "query"},
            "group='query': with alignment= it names an alignment's group column, but the "
            "frame's column or an output column of that name plays another role",
        ),
        (
            {"item": "item", "group": "n", "combo": None},
            "group='n': with alignment= it names an alignment's group column",
        ),
    ],
)
def test_bad_alignment_options_are_refused_naming_the_parameter(
    kwargs: dict[str, Any], message: str
) -> None:
    run = _run()
    name = kwargs.get("group", "group")
    alignment = _frame(_alignment(0, sorted(run["item"].unique()), ["m", "f"]), name)
    with pytest.raises(fa.InvalidParameterError) as raised:
        fa.fair.exp(run, alignment=alignment, **kwargs)
    assert str(raised.value).startswith(message)


def test_weights_that_do_not_sum_to_one_are_refused() -> None:
    run = _run()
    alignment = _frame({"d1": {"m": 0.5, "f": 0.4}}, "group")
    with pytest.raises(
        fa.InvalidValueError, match=r"alignment=: the weights of 1 item\(s\) do not sum to 1"
    ):
        fa.fair.erbe(run, alignment=alignment, item="item", ranking="query")


def test_awrf_js_refuses_an_alignment_group_named_like_a_role_column() -> None:
    run = _run()
    alignment = _frame(_alignment(0, sorted(run["item"].unique()), ["m", "f"]), "query")
    with pytest.raises(fa.InvalidParameterError) as raised:
        fa.fair.awrf_js(
            run,
            item="item",
            ranking="query",
            group="query",
            alignment=alignment,
            target={"m": 0.5, "f": 0.5},
        )
    assert str(raised.value).startswith(
        "group='query': with alignment= it names an alignment's group column"
    )
