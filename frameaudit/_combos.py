"""The combos of SPEC §1: their names, the output column and what fair looks like under each.

Definitions, shared by the families whose metrics have per-group values (fair ranking's group
metrics, reproducibility's multiplicity per group), the reports, and the engine's
:func:`~frameaudit._engine.combos.combined`, which computes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

__all__ = ["COMBO", "COMBOS", "COMBO_BEST", "Combo", "Combos"]

Combo = Literal[
    "MinMaxRatio", "MaxMinRatio", "MaxMinDiff", "MaxAbsDiff", "MeanAbsDev", "LTwo", "Variance"
]
COMBOS: tuple[Combo, ...] = get_args(Combo)
Combos = Combo | Sequence[Combo]
"""A combo, or several: the output then has one row per combo, named in its ``combo`` column."""
COMBO = "combo"
"""The output column naming the combo, when several are asked for."""

COMBO_BEST: dict[Combo, tuple[str, str]] = {
    "MinMaxRatio": ("1 = parity", "[0, 1]"),
    "MaxMinRatio": ("1 = parity", "[1, inf]"),
    "MaxMinDiff": ("0 = parity", "[0, inf)"),
    "MaxAbsDiff": ("0 = parity", "[0, inf)"),
    "MeanAbsDev": ("0 = parity", "[0, inf)"),
    "LTwo": ("no parity value (squared length of V)", "[0, inf)"),
    "Variance": ("0 = parity", "[0, inf)"),
}
"""What fair looks like under each combo, and the combo's range (the group values V_g ≥ 0)."""
