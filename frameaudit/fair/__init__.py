"""Fairness metrics: fair ranking and clustering fairness.

See :mod:`frameaudit.fair.ranking` and :mod:`frameaudit.fair.clustering`.
"""

from __future__ import annotations

from frameaudit.fair import clustering, exposure, ranking
from frameaudit.fair.clustering import *  # noqa: F403  (each module's __all__ is its list)
from frameaudit.fair.exposure import *  # noqa: F403
from frameaudit.fair.ranking import *  # noqa: F403

__all__ = ranking.__all__ + exposure.__all__ + clustering.__all__
