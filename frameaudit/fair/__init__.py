"""Fairness metrics: fair ranking and clustering fairness.

See :mod:`frameaudit.fair.ranking` and :mod:`frameaudit.fair.clustering`.
"""

from __future__ import annotations

from frameaudit.fair.clustering import (
    cluster_balance,
    cluster_distribution_kl,
    cluster_distribution_tv,
    min_cluster_ratio,
    silhouette_difference,
    social_fairness_ratio,
)
from frameaudit.fair.ranking import (
    COMBO_BEST,
    COMBOS,
    Combo,
    arp,
    awrf,
    combine,
    erbe,
    erbp,
    erbr,
    exp,
    expru,
    expu,
    iaa,
    ndkl,
)

__all__ = [
    "COMBOS",
    "COMBO_BEST",
    "Combo",
    "arp",
    "awrf",
    "cluster_balance",
    "cluster_distribution_kl",
    "cluster_distribution_tv",
    "combine",
    "erbe",
    "erbp",
    "erbr",
    "exp",
    "expru",
    "expu",
    "iaa",
    "min_cluster_ratio",
    "ndkl",
    "silhouette_difference",
    "social_fairness_ratio",
]
