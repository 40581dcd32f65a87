"""Explainability metrics: order cohesion, case-based correspondence, nearest cases.

* :mod:`frameaudit.explain.cohesion`: position parity and rank alignment of feature-importance
  rankings across groups (holisticai's order cohesion).
* :mod:`frameaudit.explain.correspondence`: agreement between a prediction and the labels of
  its retrieved neighbours (case-explainer's correspondence).
* :mod:`frameaudit.explain.cases`: exact k-nearest training cases of query rows, and a
  Euclidean distance expression.
"""

from __future__ import annotations

from frameaudit.explain.cases import euclidean_distance, nearest_cases
from frameaudit.explain.cohesion import Method, position_parity, rank_alignment
from frameaudit.explain.correspondence import correspondence

__all__ = [
    "Method",
    "correspondence",
    "euclidean_distance",
    "nearest_cases",
    "position_parity",
    "rank_alignment",
]
