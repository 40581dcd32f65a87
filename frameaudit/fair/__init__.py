"""Fairness metrics: fair ranking (:mod:`frameaudit.fair.ranking`)."""

from __future__ import annotations

from frameaudit.fair.ranking import (
    COMBOS,
    Combo,
    arp,
    awrf,
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
    "Combo",
    "arp",
    "awrf",
    "erbe",
    "erbp",
    "erbr",
    "exp",
    "expru",
    "expu",
    "iaa",
    "ndkl",
]
