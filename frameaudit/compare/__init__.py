"""Comparing systems: is system B fairer than A, or is the difference noise? (SPEC §7).

Each family's comparison takes one long frame with a ``system`` column (two or more systems
evaluated on the same units) and gives, for every metric, combo and group, each system's
value, its difference from the baseline system with a paired bootstrap interval, and a
paired randomisation test's p-value, adjusted for the number of comparisons.
"""

from __future__ import annotations

from frameaudit.compare._clustering import clustering
from frameaudit.compare._explain import explain
from frameaudit.compare._ranking import ranking
from frameaudit.compare._repro import repro
from frameaudit.compare._result import Comparison

__all__ = ["Comparison", "clustering", "explain", "ranking", "repro"]
