"""frameaudit.compat.fairranktune against FairRankTune 0.0.7 on its own wide input."""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import polars as pl
import pytest
from reference.ranking import COMBOS, per_group, random_rankings, to_wide

import frameaudit as fa
from frameaudit import InvalidParameterError, InvalidValueError
from frameaudit.compat import fairranktune as compat

FairRankTune = pytest.importorskip("FairRankTune")
Metrics = FairRankTune.Metrics

REL = 1e-12


@contextmanager
def quiet() -> Iterator[None]:
    """FairRankTune divides by zero with numpy warnings; the suite turns warnings into errors."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


def wide_input(
    seed: int,
    *,
    n_items: int,
    n_groups: int,
    n_rankings: int,
    length: int | None = None,
    strings: bool = False,
) -> tuple[pd.DataFrame, dict[Any, str], dict[str, pd.DataFrame]]:
    """FairRankTune's (ranking_df, item_group_dict, {relevance, ctr, binary}) from seeded data."""
    frame, mapping = random_rankings(
        seed, n_items=n_items, n_groups=n_groups, n_rankings=n_rankings, length=length
    )
    if strings:
        frame = frame.with_columns(pl.format("item-{}", "item").alias("item"))
        mapping = {f"item-{i}": g for i, g in mapping.items()}  # type: ignore[misc]
    ranking_df, values = to_wide(frame, ("relevance", "ctr", "binary"))
    return ranking_df, mapping, values


# (id, seed, items, groups, rankings, ranking length or None for all items, string ids)
INPUTS = [
    ("1-ranking-2-groups", 61, 9, 2, 1, None, False),
    ("4-rankings-3-groups", 62, 12, 3, 4, None, False),
    ("3-rankings-5-groups-strings", 63, 15, 5, 3, None, True),
    ("partial-rankings", 64, 14, 3, 5, 8, False),
]
FULL = [i for i in INPUTS if i[5] is None]

# name → (compat function, FairRankTune function, the arguments between item_group_dict and
# combo: a str names one of the value frames)
GROUP_METRICS: dict[str, tuple[Callable[..., Any], Callable[..., Any], tuple[str | float, ...]]] = {
    "EXP": (compat.EXP, Metrics.EXP, ()),
    "EXPU": (compat.EXPU, Metrics.EXPU, ("relevance",)),
    "EXPRU": (compat.EXPRU, Metrics.EXPRU, ("relevance", "ctr")),
    "AWRF": (compat.AWRF, Metrics.AWRF, (0.3,)),
    "ERBE": (compat.ERBE, Metrics.ERBE, (0.6,)),
    "ERBP": (compat.ERBP, Metrics.ERBP, (0.6,)),
    "ERBR": (compat.ERBR, Metrics.ERBR, ("binary", 0.6)),
    "ARP": (compat.ARP, Metrics.ARP, ()),
}


def both(
    name: str,
    ranking_df: pd.DataFrame,
    mapping: dict[Any, str],
    values: dict[str, pd.DataFrame],
    combo: str,
) -> tuple[Any, Any]:
    """(compat's result, FairRankTune's result) of one group metric."""
    ours_function, frt_function, extras = GROUP_METRICS[name]
    arguments = [values[e] if isinstance(e, str) else e for e in extras]
    with quiet():
        theirs = frt_function(ranking_df, mapping, *arguments, combo)
    return ours_function(ranking_df, mapping, *arguments, combo), theirs


def assert_same(
    ours: tuple[Any, dict[Any, Any]], theirs: tuple[Any, dict[Any, Any]], rtol: float = REL
) -> None:
    """Equal values (NaN equal to NaN), equal keys in the same order, FairRankTune's types."""
    value, groups = ours
    frt_value, frt_groups = theirs
    assert isinstance(value, np.float64)
    np.testing.assert_allclose(value, frt_value, rtol=rtol, atol=1e-15)
    assert list(groups) == list(frt_groups)
    assert [type(k) for k in groups] == [type(k) for k in frt_groups]
    assert all(isinstance(v, np.float64) for v in groups.values())
    np.testing.assert_allclose(
        list(groups.values()), list(frt_groups.values()), rtol=rtol, atol=1e-15
    )


def _cases() -> list[Any]:
    """Every metric on every input; all seven combos on the first multi-ranking input, two
    (rotating) on the others — the combo conversion is shared by all metrics."""
    cases = []
    for m, name in enumerate(GROUP_METRICS):
        for i, (input_id, *config) in enumerate(INPUTS):
            if name == "ARP" and config[4] is not None:
                continue  # FairRankTune's ARP crashes on partial rankings: see below
            combos = COMBOS if i == 1 else (COMBOS[(m + i) % 7], COMBOS[(m + i + 3) % 7])
            cases += [
                pytest.param(name, combo, config, id=f"{name}-{input_id}-{combo}")
                for combo in combos
            ]
    return cases


@pytest.mark.parametrize(("name", "combo", "config"), _cases())
def test_group_metrics_reproduce_fairranktune(name: str, combo: str, config: list[Any]) -> None:
    seed, n_items, n_groups, n_rankings, length, strings = config
    ranking_df, mapping, values = wide_input(
        seed,
        n_items=n_items,
        n_groups=n_groups,
        n_rankings=n_rankings,
        length=length,
        strings=strings,
    )
    ours, theirs = both(name, ranking_df, mapping, values, combo)
    assert np.isfinite(list(theirs[1].values())).all(), "test data must give finite values"
    assert_same(ours, theirs)


def test_missing_cells_are_dropped_and_positions_renumbered() -> None:
    """A hole in a column moves the items below it up, in the rankings and in relevance_df."""
    ranking_df = pd.DataFrame(
        {"r1": ["a", None, "b", "c", "d"], "r2": ["d", "c", np.nan, "b", "a"]}
    )
    relevance_df = pd.DataFrame(
        {"r1": [0.5, 1.0, 0.25, np.nan, 0.75], "r2": [0.2, 0.4, 0.6, 0.8, None]}
    )
    mapping = {"a": 0, "b": 1, "c": 0, "d": 1, "e": 2}
    for combo in ("MinMaxRatio", "Variance"):
        assert_same(compat.EXP(ranking_df, mapping, combo), Metrics.EXP(ranking_df, mapping, combo))
        with quiet():  # group 2 is never ranked: 0/0
            theirs = Metrics.EXPU(ranking_df, mapping, relevance_df, combo)
        assert_same(compat.EXPU(ranking_df, mapping, relevance_df, combo), theirs)


@pytest.mark.parametrize("name", compat.__all__)
def test_drop_in_signatures(name: str) -> None:
    """Same names and parameters as FairRankTune's Metrics, so calls need no change."""
    ours = inspect.signature(getattr(compat, name)).parameters
    theirs = inspect.signature(getattr(Metrics, name)).parameters
    assert list(ours) == list(theirs)


@pytest.mark.parametrize("dtype", ["string[pyarrow]", "string[python]", "object"])
def test_pandas_string_dtypes(dtype: str) -> None:
    ranking_df = pd.DataFrame({"r1": ["a", None, "b", "c"], "r2": ["c", "b", "a", None]})
    ranking_df = ranking_df.astype(dtype)
    mapping = {"a": 0, "b": 1, "c": 0}
    assert_same(
        compat.ERBP(ranking_df, mapping, 0.5, "MaxMinRatio"),
        Metrics.ERBP(ranking_df, mapping, 0.5, "MaxMinRatio"),
    )


@pytest.mark.parametrize(
    ("seed", "n_items", "n_groups", "strings"),
    [(71, 6, 2, False), (72, 12, 3, True), (73, 25, 5, False)],
)
def test_ndkl_reproduces_fairranktune(
    seed: int, n_items: int, n_groups: int, *, strings: bool
) -> None:
    ranking_df, mapping, _ = wide_input(
        seed, n_items=n_items, n_groups=n_groups, n_rankings=1, strings=strings
    )
    ours = compat.NDKL(ranking_df, mapping)
    assert isinstance(ours, np.float64)
    assert ours == pytest.approx(Metrics.NDKL(ranking_df, mapping), rel=REL)


def test_ndkl_partial_ranking_uses_its_own_group_mix() -> None:
    ranking_df, mapping, _ = wide_input(74, n_items=12, n_groups=3, n_rankings=1, length=7)
    assert compat.NDKL(ranking_df, mapping) == pytest.approx(
        Metrics.NDKL(ranking_df, mapping), rel=REL
    )


def test_iaa_one_ranking_reproduces_fairranktune() -> None:
    ranking_df, _, values = wide_input(75, n_items=10, n_groups=2, n_rankings=1)
    ours = compat.IAA(ranking_df, values["relevance"])
    assert isinstance(ours, np.float64)
    assert ours == pytest.approx(Metrics.IAA(ranking_df, values["relevance"]), rel=REL)


def test_iaa_amortizes_over_every_ranking() -> None:
    """FairRankTune returns inside its loop (first ranking only); compat reads them all."""
    frame, _ = random_rankings(76, n_items=8, n_rankings=3)
    ranking_df, values = to_wide(frame, ("relevance",))
    ours = compat.IAA(ranking_df, values["relevance"])
    assert ours == pytest.approx(fa.fair.iaa(frame, ranking="query", item="item").item(), rel=REL)
    first = Metrics.IAA(ranking_df, values["relevance"])
    assert first == pytest.approx(
        compat.IAA(ranking_df.iloc[:, :1], values["relevance"].iloc[:, :1]), rel=REL
    )
    assert ours != pytest.approx(first, rel=1e-3)


def test_arp_sums_per_ranking_fractions_on_partial_rankings() -> None:
    """FairRankTune crashes (KeyError/IndexError); compat computes each ranking on its items."""
    frame, mapping = random_rankings(77, n_items=12, n_groups=3, n_rankings=4, length=7)
    ranking_df, _ = to_wide(frame)
    with pytest.raises((KeyError, IndexError)):
        Metrics.ARP(ranking_df, mapping, "MinMaxRatio")
    sums: dict[Any, float] = dict.fromkeys(sorted(set(mapping.values())), 0.0)
    for query in range(4):
        rows = frame.filter(pl.col("query") == query).to_dicts()
        fractions = per_group(
            "arp",
            rows,
            rank="rank",
            group=["group"],
            ranking=[],
            item="item",
            groups=None,
            params={},
            universe=sorted({(r["group"],) for r in rows}),
            size="items",
        )
        for (g,), value in fractions.items():
            sums[g] += value or 0.0
    value, groups = compat.ARP(ranking_df, mapping, "MaxMinDiff")
    assert list(groups) == list(sums)
    np.testing.assert_allclose(list(groups.values()), list(sums.values()), rtol=REL)
    assert value == pytest.approx(max(sums.values()) - min(sums.values()), rel=REL)


def test_arp_group_in_no_ranking_is_nan() -> None:
    ranking_df = pd.DataFrame({"r1": ["a", "b", "c"], "r2": ["c", "a", "b"]})
    value, groups = compat.ARP(ranking_df, {"a": 0, "b": 1, "c": 0, "z": 2}, "MinMaxRatio")
    assert math.isnan(groups[2])
    assert math.isnan(value)
    assert groups[0] == pytest.approx(0.5 + 1.0)  # r1: a, c over b: 1 of 2; r2: c, a over b: 2 of 2
    assert groups[1] == pytest.approx(0.5 + 0.0)


def test_maxabsdiff_on_nan_is_nan_not_int_zero() -> None:
    ranking_df = pd.DataFrame({"r1": ["a", "b", "c"]})
    relevance_df = pd.DataFrame({"r1": [0.5, 1.0, 0.5]})
    mapping = {"a": 0, "b": 1, "c": 0, "z": 2}  # group 2 is never ranked: V = 0/0
    with quiet():
        frt_value, _ = Metrics.EXPU(ranking_df, mapping, relevance_df, "MaxAbsDiff")
    assert frt_value == 0
    assert isinstance(frt_value, int)
    value, groups = compat.EXPU(ranking_df, mapping, relevance_df, "MaxAbsDiff")
    assert math.isnan(value)
    assert math.isnan(groups[2])


def test_maxabsdiff_on_inf_is_nan_not_inf() -> None:
    ranking_df = pd.DataFrame({"r1": ["a", "b", "c", "d"]})
    relevance_df = pd.DataFrame({"r1": [0, 1, 0, 1]})  # group 0 has exposure, nothing relevant
    mapping = {"a": 0, "b": 1, "c": 0, "d": 1}
    with quiet():
        frt_value, frt_groups = Metrics.ERBR(ranking_df, mapping, relevance_df, 0.5, "MaxAbsDiff")
    assert math.isinf(frt_value)
    value, groups = compat.ERBR(ranking_df, mapping, relevance_df, 0.5, "MaxAbsDiff")
    assert math.isnan(value)
    assert groups == frt_groups


@pytest.mark.parametrize("combo", COMBOS)
def test_one_group(combo: str) -> None:
    """One group: FairRankTune's Variance (ddof 0) is 0, its LTwo the value itself."""
    ranking_df = pd.DataFrame({"r1": ["a", "b"], "r2": ["b", "a"]})
    mapping = {"a": "g", "b": "g"}
    assert_same(compat.EXP(ranking_df, mapping, combo), Metrics.EXP(ranking_df, mapping, combo))


def test_unknown_combo_is_an_error_not_none() -> None:
    ranking_df = pd.DataFrame({"r1": ["a", "b"]})
    mapping = {"a": 0, "b": 1}
    assert Metrics.EXP(ranking_df, mapping, "MinMax") is None
    with pytest.raises(InvalidParameterError, match=r"combo='MinMax'.*MinMaxRatio.*Variance"):
        compat.EXP(ranking_df, mapping, "MinMax")
    with pytest.raises(InvalidParameterError, match="combo='L2'"):
        compat.ARP(ranking_df, mapping, "L2")


RANKING = pd.DataFrame({"r1": ["a", "b", "c", "d"], "r2": ["b", "a", "d", "c"]})
GROUPS = {"a": 0, "b": 1, "c": 0, "d": 1}
RELEVANCE = pd.DataFrame({"r1": [1.0, 0.5, 0.0, 0.25], "r2": [1.0, 0.5, 0.0, 0.25]})


class BadInput(NamedTuple):
    """A call made with FairRankTune's ``Metrics`` and with compat (``module``)."""

    name: str
    call: Callable[[Any], Any]
    frt: str  # "crashes" (KeyError, ...), "accepts" (returns a number) or "breaks" (any error)
    error: type[Exception]
    fragments: list[str]


BAD_INPUTS = [
    BadInput(
        "unmapped item",
        lambda m: m.EXP(RANKING, {"a": 0, "b": 1, "c": 0}, "MinMaxRatio"),
        "crashes",
        InvalidValueError,
        ["item_group_dict", "2 ranked item(s)", "'d'", "column 'r1'"],
    ),
    BadInput(
        "one-group ranking in ARP",
        lambda m: m.ARP(pd.DataFrame({"r1": ["a", "c"]}), {"a": 0, "c": 0}, "MinMaxRatio"),
        "crashes",
        InvalidValueError,
        ["ranking_df", "1 ranking(s)", "one group", "'r1'"],
    ),
    BadInput(
        "NDKL on two rankings",
        lambda m: m.NDKL(RANKING, GROUPS),
        "crashes",
        InvalidParameterError,
        ["ranking_df", "single ranking", "found 2", "by="],
    ),
    BadInput(
        "relevance_df shorter than the ranking",
        lambda m: m.EXPU(RANKING, GROUPS, RELEVANCE.iloc[:3], "MinMaxRatio"),
        "crashes",
        InvalidValueError,
        ["relevance_df", "2 ranked item(s) have no value", "position 4"],
    ),
    BadInput(
        "relevance_df with fewer columns",
        lambda m: m.EXPU(RANKING, GROUPS, RELEVANCE[["r1"]], "LTwo"),
        "crashes",
        InvalidValueError,
        ["relevance_df", "4 ranked item(s) have no value", "column 1"],
    ),
    BadInput(
        "EXPU relevance above 1",
        lambda m: m.EXPU(RANKING, GROUPS, RELEVANCE * 2, "LTwo"),
        "crashes",
        InvalidValueError,
        ["relevance='relevance'", "[0, 1]", "2.0"],
    ),
    BadInput(
        "ERBR non-binary relevance",
        lambda m: m.ERBR(RANKING, GROUPS, RELEVANCE, 0.5, "LTwo"),
        "accepts",
        InvalidValueError,
        ["relevance", "ERBR", "exactly 0 or 1"],
    ),
    BadInput(
        "IAA relevance above 1",
        lambda m: m.IAA(RANKING, RELEVANCE * 2),
        "accepts",
        InvalidValueError,
        ["relevance", "[0, 1]"],
    ),
    BadInput(
        "repeated item in a ranking",
        lambda m: m.EXP(pd.DataFrame({"r1": ["a", "a", "b"]}), GROUPS, "LTwo"),
        "accepts",
        InvalidValueError,
        ["item", "unique within each ranking"],
    ),
    BadInput(
        "decay = 1",
        lambda m: m.ERBE(RANKING, GROUPS, 1.0, "LTwo"),
        "accepts",
        InvalidParameterError,
        ["decay=1.0"],
    ),
    BadInput(
        "p = 0",
        lambda m: m.AWRF(RANKING, GROUPS, 0.0, "LTwo"),
        "accepts",
        InvalidParameterError,
        ["p=0.0"],
    ),
    BadInput(
        "ranking_df not a DataFrame",
        lambda m: m.EXP({"r1": ["a"]}, GROUPS, "LTwo"),
        "breaks",
        InvalidParameterError,
        ["ranking_df", "pandas DataFrame", "dict"],
    ),
    BadInput(
        "item_group_dict not a mapping",
        lambda m: m.EXP(RANKING, [("a", 0)], "LTwo"),
        "breaks",
        InvalidParameterError,
        ["item_group_dict", "list"],
    ),
    BadInput(
        "non-numeric relevance",
        lambda m: m.EXPU(RANKING, GROUPS, RELEVANCE.astype(str).replace("1.0", "high"), "LTwo"),
        "breaks",
        fa.InvalidDtypeError,
        ["relevance_df", "numbers", "'high'"],
    ),
]


@pytest.mark.parametrize("case", BAD_INPUTS, ids=[c.name for c in BAD_INPUTS])
def test_bad_input(case: BadInput) -> None:
    """A frameaudit error where FairRankTune crashes, breaks, or silently accepts the input."""
    if case.frt == "accepts":
        with quiet():
            assert case.call(Metrics) is not None
    else:
        crashes = (KeyError, IndexError, ZeroDivisionError, AssertionError)
        with quiet(), pytest.raises(crashes if case.frt == "crashes" else Exception):
            case.call(Metrics)
    with pytest.raises(case.error) as raised:
        case.call(compat)
    for fragment in case.fragments:
        assert fragment in str(raised.value), (fragment, str(raised.value))


def test_extra_relevance_values_are_ignored() -> None:
    """As in FairRankTune, values beyond the ranking's length do not pair with any item."""
    longer = pd.concat([RELEVANCE, pd.DataFrame({"r1": [0.9], "r2": [0.1]})], ignore_index=True)
    assert_same(
        compat.EXPU(RANKING, GROUPS, longer, "MaxMinDiff"),
        Metrics.EXPU(RANKING, GROUPS, longer, "MaxMinDiff"),
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", ["EXP", "ERBR", "ARP"])
def test_many_rankings(name: str) -> None:
    """1,000 rankings of 100 items (FairRankTune: seconds per metric)."""
    ranking_df, mapping, values = wide_input(78, n_items=100, n_groups=4, n_rankings=1000)
    # 100,000 terms summed in a different order: rounding differs beyond 1e-12
    assert_same(*both(name, ranking_df, mapping, values, "MeanAbsDev"), rtol=1e-9)
