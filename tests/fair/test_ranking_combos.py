"""The seven combos on hand-worked per-group vectors, with the undefined cases (docs/ranking.md).

ERBE with decay ½ gives exact binary fractions: V_g = ½·Σ_{k∈g} ½^(k−1), so every expected
value below is worked out by hand. Each ``by`` partition of one frame is one case, and the
whole table runs on every frame kind.
"""

from __future__ import annotations

import math

import polars as pl
import pytest
from conftest import Constructor, to_polars
from reference.ranking import COMBOS, combine

import frameaudit as fa
from frameaudit.fair import Combo
from tests.calls import entries

INF = math.inf

# partition → (ranks of each group, V by hand)
CASES = {
    # a: rank 1 → ½; b: ranks 2, 3 → ¼ + ⅛ = ⅜
    "two": ({"a": [1], "b": [2, 3]}, [0.5, 0.375]),
    # a: 1 → ½; b: 2 → ¼; c: 3, 4 → ⅛ + 1/16 = 3/16
    "three": ({"a": [1], "b": [2], "c": [3, 4]}, [0.5, 0.25, 0.1875]),
    # one group: V = ½ + ¼
    "single": ({"a": [1, 2]}, [0.75]),
}

# By hand, from the V above: mean, deviations, and the seven formulas.
EXPECTED: dict[str, dict[str, float | None]] = {
    "two": {
        "MinMaxRatio": 0.75,
        "MaxMinRatio": 4 / 3,
        "MaxMinDiff": 0.125,
        "MaxAbsDiff": 0.0625,  # mean 7/16
        "MeanAbsDev": 0.0625,
        "LTwo": 0.390625,  # ¼ + 9/64
        "Variance": 0.0078125,  # 2·(1/16)² / 1
    },
    "three": {
        "MinMaxRatio": 0.375,
        "MaxMinRatio": 8 / 3,
        "MaxMinDiff": 0.3125,
        "MaxAbsDiff": 0.5 - 0.3125,  # mean 15/48 = 0.3125
        "MeanAbsDev": (0.1875 + 0.0625 + 0.125) / 3,
        "LTwo": 0.25 + 0.0625 + 0.03515625,
        "Variance": (0.1875**2 + 0.0625**2 + 0.125**2) / 2,
    },
    # one group compares nothing: every combo is undefined (SPEC §1)
    "single": dict.fromkeys(COMBOS),
}


def _frame(parts: list[str]) -> pl.DataFrame:
    rows = [
        {"part": part, "rank": k, "group": g}
        for part in parts
        for g, positions in CASES[part][0].items()
        for k in positions
    ]
    return pl.DataFrame(rows)


def _close(value: float | None, want: float | None) -> bool:
    return value == (None if want is None else pytest.approx(want, rel=1e-15, abs=1e-15))


@pytest.mark.parametrize("combo", COMBOS)
def test_combos_by_hand(constructor: Constructor, combo: Combo) -> None:
    """Each case alone in its frame: its groups are the universe."""
    for part in CASES:
        result = to_polars(fa.fair.erbe(constructor(_frame([part])), decay=0.5, combo=combo))
        assert _close(result.item(), EXPECTED[part][combo]), part


@pytest.mark.spark(cases=["MaxAbsDiff"])
@pytest.mark.parametrize("combo", COMBOS)
def test_public_combine_of_per_group_values_by_hand(constructor: Constructor, combo: Combo) -> None:
    """fa.fair.combine applied afterwards to the per-group frame gives the same hand values."""
    for part in CASES:
        frame = constructor(_frame([part]))
        per_group = fa.fair.erbe(frame, decay=0.5, by="part", combo=None)
        result = to_polars(fa.fair.combine(per_group, metric="erbe", by="part", combo=combo))
        assert result.columns == ["part", "erbe"]
        assert _close(result.item(0, "erbe"), EXPECTED[part][combo]), part


def test_public_combine_of_several_combos_at_once(constructor: Constructor) -> None:
    """A list of combos: one row per combo, sorted by name, with the hand values."""
    chosen: list[Combo] = ["Variance", "MinMaxRatio", "LTwo"]
    for part in CASES:
        frame = constructor(_frame([part]))
        per_group = fa.fair.erbe(frame, decay=0.5, by="part", combo=None)
        result = to_polars(fa.fair.combine(per_group, metric="erbe", by="part", combo=chosen))
        assert result.columns == ["part", "combo", "erbe"]
        assert result["combo"].to_list() == sorted(chosen)
        for _, combo, value in result.iter_rows():
            assert _close(value, EXPECTED[part][combo]), (part, combo)


@pytest.mark.parametrize("combo", COMBOS)
def test_a_partition_compares_every_group_of_the_frame(
    constructor: Constructor, combo: Combo
) -> None:
    """The cases as ``by`` partitions of one frame: the universe is a, b, c in each (SPEC §1).

    A group with no row in a partition has n = 0 and, ERBE being a total, V_g = 0: "two"
    compares (½, ⅜, 0), "single" (¾, 0, 0). The combos of those vectors come from the
    reference's combine, itself checked against the hand-worked table below.
    """
    frame = constructor(_frame(list(CASES)))
    per_group = to_polars(fa.fair.erbe(frame, decay=0.5, by="part", combo=None))
    assert per_group.filter(pl.col("n") == 0).select("part", "group", "erbe").rows() == [
        ("single", "b", 0.0),
        ("single", "c", 0.0),
        ("two", "c", 0.0),
    ]
    result = to_polars(fa.fair.erbe(frame, decay=0.5, by="part", combo=combo))
    vectors = {"single": [0.75, 0.0, 0.0], "three": CASES["three"][1], "two": [0.5, 0.375, 0.0]}
    for part, value in result.iter_rows():
        assert _close(value, combine(vectors[part], combo)), part


def test_an_absent_group_never_reads_as_parity(constructor: Constructor) -> None:
    """A group the frame (or the listed universe) has but a partition lacks: EXP is null."""
    frame = pl.DataFrame(
        {
            "q": [0, 0, 1, 1],
            "rank": [1, 2, 1, 2],
            "group": ["m", "m", "m", "w"],
        }
    )
    per_query = to_polars(fa.fair.exp(constructor(frame), ranking="q", size="rows", by="q"))
    assert per_query.rows() == [(0, None), (1, pytest.approx(1 / math.log2(3)))]
    only_m = frame.filter(pl.col("group") == "m")
    assert fa.fair.exp(only_m, ranking="q", size="rows").item() is None  # one group: undefined
    listed = fa.fair.exp(only_m, ranking="q", size="rows", universe=["m", "w"], combo=None)
    # m: ranks 1, 2 in query 0 and rank 1 in query 1
    assert listed.rows() == [("m", pytest.approx((2 + 1 / math.log2(3)) / 3), 3), ("w", None, 0)]


def test_public_combine_refuses_bad_input() -> None:
    per_group = fa.fair.erbe(_frame(list(CASES)), decay=0.5, by="part", combo=None)
    with pytest.raises(fa.InvalidParameterError, match="combo=None is not allowed"):
        fa.fair.combine(per_group, metric="erbe", by="part", combo=None)  # type: ignore[arg-type]
    with pytest.raises(
        fa.ColumnNotFoundError,
        match="metric='exp': column 'exp' not found in per_group; available: part, group, erbe",
    ):
        fa.fair.combine(per_group, metric="exp", by="part")
    with pytest.raises(fa.InvalidDtypeError, match="metric='group'"):
        fa.fair.combine(per_group, metric="group", by="part")
    with pytest.raises(fa.InvalidValueError, match="combine: the frame has no rows"):
        fa.fair.combine(per_group.head(0), metric="erbe", by="part")


@pytest.mark.parametrize("combo", COMBOS)
def test_reference_combine_agrees_with_the_hand_values(combo: Combo) -> None:
    """The reference's combine is itself checked against the same hand-worked table."""
    for part, (_, values) in CASES.items():
        want = EXPECTED[part][combo]
        got = combine(values, combo)
        assert got == (None if want is None else pytest.approx(want, rel=1e-15, abs=1e-15))


# EXPU partitions: "inf" has a group with exposure and zero relevance (V = +inf); with a mapping
# holding a never-ranked group, V of that group is 0/0 = null in every partition.
EDGE = pl.DataFrame(
    {
        "part": ["inf", "inf", "finite", "finite"],
        "rank": [1, 2, 1, 2],
        "item": [1, 2, 1, 2],
        "relevance": [0.0, 0.5, 1.0, 1.0],
    }
)
# The combo of V = (+inf, 1/log2(3)/0.5) by hand: the mean is inf and |inf − inf| is NaN.
INF_EXPECTED: dict[str, float | None] = {
    "MinMaxRatio": 0.0,
    "MaxMinRatio": INF,
    "MaxMinDiff": INF,
    "MaxAbsDiff": None,
    "MeanAbsDev": None,
    "LTwo": INF,
    "Variance": None,
}


@pytest.mark.parametrize("combo", COMBOS)
def test_undefined_and_infinite_group_values(constructor: Constructor, combo: Combo) -> None:
    frame = constructor(EDGE)
    per_item = to_polars(fa.fair.expu(frame, group="item", by="part", combo=combo))
    assert per_item.filter(pl.col("part") == "inf").item(0, "expu") == INF_EXPECTED[combo]
    assert per_item.filter(pl.col("part") == "finite").item(0, "expu") is not None
    mapping = {1: "a", 2: "b", 3: "c"}
    with_null = to_polars(fa.fair.expu(frame, item="item", groups=mapping, by="part", combo=combo))
    assert with_null["expu"].to_list() == [None, None]
    assert combine([INF, 1.0], combo) == INF_EXPECTED[combo]
    assert combine([1.0, None], combo) is None


@pytest.mark.parametrize(
    ("combo", "value"),
    [("MinMaxRatio", 0.0), ("MaxMinRatio", INF), ("MaxMinDiff", 1.0), ("LTwo", 1.0)],
)
def test_zero_group_value(combo: Combo, value: float) -> None:
    """ERBE with decay 0 gives all exposure to rank 1: V = (1, 0); 1/0 = +inf, not an error."""
    frame = pl.DataFrame({"rank": [1, 2], "group": ["a", "b"]})
    assert fa.fair.erbe(frame, decay=0.0, combo=combo).item() == value


@pytest.mark.parametrize("combo", ["MinMaxRatio", "MaxMinRatio"])
def test_all_zero_ratio_is_null(combo: Combo) -> None:
    """EXPRU with zero clicks everywhere: V = (0, 0) and 0/0 is undefined."""
    frame = pl.DataFrame(
        {"rank": [1, 2], "group": ["a", "b"], "relevance": [1.0, 1.0], "ctr": [0.0, 0.0]}
    )
    assert fa.fair.expru(frame, combo=combo).item() is None


@pytest.mark.parametrize("metric", [m.name for m in entries("ranking", "group", relevance=False)])
def test_parity_when_groups_are_treated_identically(metric: str) -> None:
    """Two rankings where a and b swap places: every group meets every position equally often."""
    frame = pl.DataFrame(
        {
            "query": [0, 0, 0, 0, 1, 1, 1, 1],
            "rank": [1, 2, 3, 4, 1, 2, 3, 4],
            "group": ["a", "b", "b", "a", "b", "a", "a", "b"],
        }
    )
    function = getattr(fa.fair, metric)
    size = {"size": "rows"} if metric not in {"erbe", "arp"} else {}
    assert function(frame, ranking="query", combo="MinMaxRatio", **size).item() == pytest.approx(
        1.0
    )
    assert function(frame, ranking="query", combo="MaxMinDiff", **size).item() == pytest.approx(
        0.0, abs=1e-15
    )


def test_arp_without_mixed_pairs_is_null() -> None:
    """Query 0 holds one group: no mixed pair, V = 0/0. Query 1: a above b, V = (1, 0).

    Each row is its own item, so n counts the group's rows: 2 a in query 0, 1 a and 1 b in 1;
    b, a group of the frame, is absent from query 0 (n = 0, no pair: null).
    """
    frame = pl.DataFrame(
        {"query": [0, 0, 1, 1], "rank": [1, 2, 1, 2], "group": ["a", "a", "a", "b"]}
    )
    per_group = fa.fair.arp(frame, ranking="query", by="query", combo=None)
    assert per_group.rows() == [
        (0, "a", None, 2),
        (0, "b", None, 0),
        (1, "a", 1.0, 1),
        (1, "b", 0.0, 1),
    ]
    combined = fa.fair.arp(frame, ranking="query", by="query", combo="MinMaxRatio")
    assert combined.rows() == [(0, None), (1, 0.0)]
    pooled = fa.fair.arp(frame, ranking="query", combo=None)  # the one-group ranking adds nothing
    assert pooled.rows() == [("a", 1.0, 3), ("b", 0.0, 1)]
