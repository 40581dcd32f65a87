"""Reproducibility across repeated runs: whether runs err on the same samples.

Pairwise metrics (:mod:`frameaudit.repro.pairwise`) compare every pair of runs and summarise
the pair distribution; :mod:`frameaudit.repro.consistency` holds the metrics over all runs at
once (total and leave-one-out error consistency) and the regression extension;
:mod:`frameaudit.repro.multiplicity` how arbitrary the runs' decisions are (churn, flips,
ambiguity, discrepancy, score ranges, self-consistency), per protected group.
"""

from __future__ import annotations

from frameaudit.repro import consistency, multiplicity, pairwise
from frameaudit.repro._runs import EMPTY_UNION, EmptyUnion
from frameaudit.repro.consistency import *  # noqa: F403  (each module's __all__ is its list)
from frameaudit.repro.multiplicity import *  # noqa: F403
from frameaudit.repro.pairwise import *  # noqa: F403

__all__ = ["EMPTY_UNION", "EmptyUnion"]
__all__ += consistency.__all__
__all__ += multiplicity.__all__
__all__ += pairwise.__all__
