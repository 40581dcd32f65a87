"""Reproducibility across repeated runs: whether runs err on the same samples.

Pairwise metrics (:mod:`frameaudit.repro.pairwise`) compare every pair of runs and summarise
the pair distribution; :mod:`frameaudit.repro.consistency` holds the metrics over all runs at
once (total and leave-one-out error consistency) and the regression extension.
"""

from __future__ import annotations

from frameaudit.repro._runs import EMPTY_UNION, EmptyUnion
from frameaudit.repro.consistency import (
    RESIDUAL_METHODS,
    ResidualMethod,
    leave_one_out,
    residual_consistency,
    total_consistency,
)
from frameaudit.repro.pairwise import (
    METRICS,
    cramers_v,
    ea_kappa,
    ec_agreement,
    ec_corr,
    ec_global,
    ec_local,
    pa,
    pa_kappa,
    summary,
)

__all__ = [
    "EMPTY_UNION",
    "METRICS",
    "RESIDUAL_METHODS",
    "EmptyUnion",
    "ResidualMethod",
    "cramers_v",
    "ea_kappa",
    "ec_agreement",
    "ec_corr",
    "ec_global",
    "ec_local",
    "leave_one_out",
    "pa",
    "pa_kappa",
    "residual_consistency",
    "summary",
    "total_consistency",
]
