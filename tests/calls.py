"""How a test calls the registered metrics: the registry's entries and their arguments.

The tests list no metric names of their own: they read ``fa.metrics(family, *kinds)`` and ask
this module for the arguments that call an entry on the test frames (its roles' columns as a
report passes them, and chosen values of its options).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import frameaudit as fa
from frameaudit import Metric, _registry

# the test frames' column for each report parameter that names one (the repro frames' 0/1
# predictions serve as scores)
COLUMNS: dict[str, Any] = {
    "relevance": "relevance",
    "ctr": "ctr",
    "relevant": "relevant",
    "target": "target",
    "score": "prediction",
}


def names(family: str, *kinds: str) -> list[str]:
    """The names of the registered functions of ``family`` of the ``kinds`` (all if none)."""
    return [m.name for m in fa.metrics(family, *kinds)]  # type: ignore[arg-type]


def entries(family: str, *kinds: str, **having: bool) -> list[Metric]:
    """The entries of ``family`` of the ``kinds``, each with (True) or without (False) the
    option or role named by each keyword of ``having`` (``decay=True``: those taking decay)."""
    found = []
    for m in fa.metrics(family, *kinds):  # type: ignore[arg-type]
        declared = {*m.roles, *m.options}
        if all((name in declared) == wanted for name, wanted in having.items()):
            found.append(m)
    return found


def arguments(
    metric: Metric | str, columns: Mapping[str, Any] | None = None, **values: Any
) -> dict[str, Any]:
    """The arguments that call ``metric``: each of its roles' column (``columns`` over
    :data:`COLUMNS`), and the ``values`` of the options it takes (others are ignored)."""
    entry = metric if isinstance(metric, Metric) else _registry.entry(metric)
    given = {**COLUMNS, **(columns or {})}
    roles = {role: given[source] for role, source in entry.roles.items()}
    return roles | {option: values[option] for option in entry.options if option in values}
