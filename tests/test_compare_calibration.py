"""Comparisons validated as statistics (SPEC §7): p-values under a true null, coverage, width.

Under a true null, p < 0.05 in 4-6% of simulated audits and Holm's family-wise error is at most
5%; with a known change, the 95% interval of the difference covers the population difference
in 93-97% of audits, at 0.8-1.3x its true spread. The populations are in
``tests/reference/paired_populations.py``; the full table (``benchmarks/bench_calibration.py``)
is on the "Comparing systems" page. The default suite runs a small seeded simulation of EXP;
the slow marker runs every kind at the benchmark's sizes.
"""

from __future__ import annotations

import pytest
from reference.paired_populations import PAIRED, coverage, null_rejection

EXP = PAIRED["EXP MinMaxRatio (a ratio of sums)"]


def test_a_small_simulation_rejects_true_nulls_at_about_five_percent() -> None:
    # 300 audits: the share's standard error is 1.3%, so 5% +- 2.6 standard errors
    rejected, family, rows = null_rejection(EXP, audits=300, n_perm=200, seed=11)
    assert 0.016 <= rejected <= 0.084, rejected
    assert family <= 0.084
    assert rows == 9


def test_a_small_simulation_covers_the_known_difference() -> None:
    (result,) = coverage(EXP, truth_audits=600, audits=300, n_boot=200, seed=12)
    assert 0.92 <= result.coverage <= 0.98, result
    assert 0.8 <= result.width <= 1.3, result


@pytest.mark.slow
@pytest.mark.parametrize("name", list(PAIRED))
def test_true_nulls_are_rejected_at_their_nominal_rate(name: str) -> None:
    rejected, family, _ = null_rejection(PAIRED[name], audits=1000, n_perm=1000)
    if name.startswith("EXP and ERBE"):  # 20 rows: the first is EXP's MinMaxRatio
        assert family <= 0.05
    assert 0.04 <= rejected <= 0.06, rejected


@pytest.mark.slow
@pytest.mark.parametrize("name", list(PAIRED))
def test_intervals_of_a_known_difference_are_calibrated(name: str) -> None:
    kind = PAIRED[name]
    highest = 0.99 if kind.kink else 0.97  # over-covering is the safe side (see PairedKind)
    for result in coverage(kind, truth_audits=2000, audits=1000, n_boot=1000):
        assert 0.93 <= result.coverage <= highest, result
        assert 0.8 <= result.width <= 1.3, result
