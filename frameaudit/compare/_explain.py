"""Comparing explanations: how far two systems' predictions agree with their nearest cases."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from frameaudit import explain as family
from frameaudit._params import strict
from frameaudit.compare._comparison import Call, Correction, Options, compared
from frameaudit.compare._result import Comparison

__all__ = ["explain"]


@strict
def explain(
    frame: Any,
    *,
    system: str,
    baseline: Any | None = None,
    query: str | Sequence[str] = "query",
    distance: str = "distance",
    label: str = "label",
    predicted: str = "predicted",
    class_weights: Mapping[Any, float] | None = None,
    weighted: bool = True,
    by: str | Sequence[str] | None = None,
    weight: str | None = None,
    ci: float = 0.95,
    n_boot: int = 1000,
    n_perm: int = 1000,
    seed: int = 0,
    correction: Correction | None = "holm",
    on_missing: Literal["error", "drop"] = "error",
) -> Comparison:
    r"""Compare systems' correspondence on the same queries: do B's predictions agree more.

    ``frame`` holds every system's cases, one row per (query, neighbour) as
    :func:`frameaudit.explain.correspondence` takes, the ``system`` column naming the system
    (two models predicting the same queries, or one model explained by two case bases); every
    system has the same queries. The comparison gives each system's mean correspondence over
    the queries and its difference from the ``baseline`` system (default: the first in sort
    order), with

    * a paired bootstrap interval at ``ci`` (``n_boot`` replicates): a replicate draws
      queries, and a drawn query brings its rows in every system;
    * a paired randomisation test's two-sided p-value (``n_perm`` permutations): each
      query's rows are exchanged between the two systems at random;
    * ``p_adjusted``: Holm's (``correction="holm"``), Benjamini and Hochberg's (``"bh"``) or
      no adjustment (None), over every row of the table.

    The roles and options are those of :func:`frameaudit.explain.correspondence`. A query
    some system lacks is an error naming a few, or, with ``on_missing="drop"``, left out
    (counted in :attr:`Comparison.dropped`). Everything runs in the input's engine; the
    table is Polars.

    Returns
    -------
    A :class:`~frameaudit.compare.Comparison` whose ``table`` has one row per (partition,
    system other than the baseline), ``metric`` "correspondence", ``combo`` and ``group``
    null, and ``queries``.
    """
    queries = [query] if isinstance(query, str) else list(query)
    options = Options(by, ci, n_boot, n_perm, seed, correction, on_missing)
    roles = {"query": query, "distance": distance, "label": label, "predicted": predicted}
    settings = {"class_weights": class_weights, "weighted": weighted, "weight": weight}
    call = Call("correspondence", family.correspondence, {**roles, **settings})
    weights = None if class_weights is None else dict(class_weights)
    parameters = {**roles, **settings, "class_weights": weights}
    return compared(
        frame,
        [call],
        family="explain",
        system=system,
        baseline=baseline,
        units=queries,
        unit_name="queries",
        options=options,
        parameters=parameters,
    )
