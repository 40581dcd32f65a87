"""Per-group rules against a reference group (SPEC §7): ratios, their intervals, band verdicts.

The ratios are each group's value over the reference group's; their intervals are checked
against an independent numpy bootstrap with frameaudit's counter-based counts
(tests/reference/compare.py); the band verdicts are worked by hand.
"""

from __future__ import annotations

import re

import numpy as np
import polars as pl
import pytest
from reference import compare as reference

import frameaudit as fa
from frameaudit._engine.resample import with_poisson_counts
from frameaudit.exceptions import InvalidParameterError
from frameaudit.report._report import parse_rule

ROLES = {"ranking": "query", "group": "gender", "size": "rows"}


def _log() -> pl.DataFrame:
    return fa.datasets.ranking_example()


@pytest.mark.parametrize(("chosen", "expected"), [("largest", "m"), ("best", "f"), ("f", "f")])
def test_the_reference_group_is_the_largest_the_best_off_or_a_named_one(
    chosen: str, expected: str
) -> None:
    log = _log()
    report = fa.report.ranking(log, **ROLES, reference=chosen)
    ratios = report.tables["ratios"].filter(pl.col("metric") == "exp")
    # by hand: the example has more rows of men; women get more exposure per row
    rows = log.group_by("gender").len().sort("len")
    assert rows["gender"][-1] == "m"
    values = dict(fa.fair.exp(log, **ROLES, combo=None).select("gender", "exp").rows())
    assert values["f"] > values["m"]
    assert set(ratios["reference"]) == {expected}
    for group, ratio in ratios.select("group", "ratio").rows():
        assert ratio == pytest.approx(values[group] / values[expected], rel=1e-12)


def test_the_ratios_interval_is_numpys_over_the_same_replicates() -> None:
    log = _log()
    boots, seed, level = 200, 4, 0.9
    report = fa.report.ranking(log, **ROLES, reference="largest", ci=level, n_boot=boots, seed=seed)
    row = report.tables["ratios"].filter((pl.col("metric") == "exp") & (pl.col("group") == "f"))
    queries = sorted(set(log["query"].to_list()))
    data = reference.exposure_per_query(
        log.rename({"gender": "group"}).with_columns(pl.lit("A").alias("system")), "A", queries
    )  # groups sorted: f, m
    counts = reference.draws(with_poisson_counts, len(queries), boots, seed)
    sums = np.einsum("ub,ukg->bkg", counts, data)
    ratios = (sums[:, 0, 0] / sums[:, 1, 0]) / (sums[:, 0, 1] / sums[:, 1, 1])
    low, high = np.percentile(ratios, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    assert row["ratio_lo"].item() == pytest.approx(low, rel=1e-12)
    assert row["ratio_hi"].item() == pytest.approx(high, rel=1e-12)
    assert row["rankings"].item() == len(queries)


@pytest.mark.parametrize(
    ("band", "interval", "outcome"),
    [
        ((0.8, 1.25), (0.9, 1.1), "pass"),  # inside the band
        ((0.8, 1.25), (1.3, 1.5), "fail"),  # above it
        ((0.8, 1.25), (0.5, 0.7), "fail"),  # below it
        ((0.8, 1.25), (0.7, 0.9), "inconclusive"),  # across its low end
        ((0.8, 1.25), (0.7, 1.4), "inconclusive"),  # around the whole band
    ],
)
def test_a_band_rule_reads_the_interval(
    band: tuple[float, float], interval: tuple[float, float], outcome: str
) -> None:
    from frameaudit.report._report import verdict

    rule = parse_rule("exp:ratio", ("within", band))
    numbers = {"value": sum(interval) / 2, "lo": interval[0], "hi": interval[1]}
    assert verdict(numbers, "interval", rule, "no value")[0] == outcome
    assert rule.text == f"within [{band[0]:g}, {band[1]:g}]"


def test_the_four_fifths_rule_gives_a_verdict_per_group() -> None:
    report = fa.report.ranking(
        _log(), group=["gender", "age"], ranking="query", item="item", reference="largest",
        ci=0.95, n_boot=200,
    )  # fmt: skip
    verdicts = report.check({"exp:ratio": ("within", (0.8, 1.25))})
    ratios = report.tables["ratios"].filter(
        (pl.col("metric") == "exp") & (pl.col("group") != pl.col("reference"))
    )
    assert verdicts.height == ratios.height == 3  # every group but the reference
    rows = zip(verdicts.iter_rows(named=True), ratios.iter_rows(named=True), strict=True)
    for verdict, ratio in rows:
        assert verdict["group"] == f"{ratio['group']} / {ratio['reference']}"
        low, high = ratio["ratio_lo"], ratio["ratio_hi"]
        expected = (
            "pass" if low >= 0.8 and high <= 1.25 else
            "fail" if high < 0.8 or low > 1.25 else "inconclusive"
        )  # fmt: skip
        assert verdict["outcome"] == expected
        assert (verdict["value"], verdict["lo"], verdict["hi"]) == (ratio["ratio"], low, high)


@pytest.mark.parametrize(
    ("requirements", "message"),
    [
        ({"exp:ratio": ("within", (1.25, 0.8))}, "expected a band (low, high) with low <= high"),
        ({"exp:ratio": ("within", 0.8)}, "expected a band (low, high)"),
        ({"exp:ratio": ("in", (0.8, 1.25))}, "operator='in' is not allowed"),
    ],
)
def test_a_malformed_band_is_refused(requirements: dict[str, object], message: str) -> None:
    report = fa.report.ranking(_log(), **ROLES, reference="largest")
    with pytest.raises(InvalidParameterError, match=re.escape(message)):
        report.check(requirements)  # type: ignore[arg-type]


def test_a_ratio_rule_needs_a_reference_and_a_known_group() -> None:
    report = fa.report.ranking(_log(), **ROLES)
    with pytest.raises(InvalidParameterError, match="build it with reference="):
        report.check({"exp:ratio": ("within", (0.8, 1.25))})
    with pytest.raises(InvalidParameterError, match="reference='x' is not allowed"):
        fa.report.ranking(_log(), **ROLES, reference="x")
