"""Drop-in replacements for the APIs of the reference libraries.

* :mod:`frameaudit.compat.fairranktune`: FairRankTune 0.0.7's ``Metrics`` functions.
"""

from __future__ import annotations

from frameaudit.compat import fairranktune

__all__ = ["fairranktune"]
