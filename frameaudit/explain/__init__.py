"""Explainability metrics: order cohesion, case-based correspondence, nearest cases.

* :mod:`frameaudit.explain.cohesion`: position parity and rank alignment of feature-importance
  rankings across groups (holisticai's order cohesion).
* :mod:`frameaudit.explain.correspondence`: agreement between a prediction and the labels of
  its retrieved neighbours (case-explainer's correspondence).
* :mod:`frameaudit.explain.cases`: exact k-nearest training cases of query rows, and a
  Euclidean distance expression.
"""

from __future__ import annotations

from frameaudit.explain import cases as _cases
from frameaudit.explain import cohesion as _cohesion
from frameaudit.explain import correspondence as _correspondence
from frameaudit.explain.cases import *  # noqa: F403  (each module's __all__ is its list)
from frameaudit.explain.cohesion import *  # noqa: F403
from frameaudit.explain.correspondence import *  # noqa: F403

__all__ = _cases.__all__ + _cohesion.__all__ + _correspondence.__all__
