"""Comparing ranking systems: every fair-ranking metric, paired over the rankings."""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, Literal

import polars as pl

from frameaudit import fair
from frameaudit._params import strict
from frameaudit._registry import metrics
from frameaudit.compare._comparison import Call, Correction, Derived, Options, compared
from frameaudit.compare._result import Comparison
from frameaudit.exceptions import InvalidParameterError
from frameaudit.fair.ranking import Size
from frameaudit.report import _tables
from frameaudit.report._ranking import group_calls

__all__ = ["ranking"]


@strict
def ranking(
    frame: Any,
    *,
    system: str,
    ranking: str | Sequence[str],
    baseline: Any | None = None,
    metrics: Sequence[str] | None = None,
    rank: str = "rank",
    group: str | Sequence[str] = "group",
    item: str | None = None,
    groups: Mapping[Any, Any] | Any | None = None,
    universe: Any | None = None,
    size: Size | None = None,
    target: Any | None = None,
    relevance: str | None = None,
    ctr: str | None = None,
    relevant: str | None = None,
    p: float = 0.5,
    decay: float = 0.5,
    by: str | Sequence[str] | None = None,
    weight: str | None = None,
    ci: float = 0.95,
    n_boot: int = 1000,
    n_perm: int = 1000,
    seed: int = 0,
    correction: Correction | None = "holm",
    on_missing: Literal["error", "drop"] = "error",
) -> Comparison:
    r"""Compare ranking systems on the same rankings: is B fairer than A, or is it noise.

    ``frame`` holds every system's rankings, one row per ranked item, the ``system`` column
    naming the system; every system ranks the same rankings (``ranking``: the query
    column). For each group metric (with every combo and per group) and each single-number
    metric (NDKL, AWRF_JS against ``target``, nDCG with ``relevance``), the comparison
    gives each system's value and its difference from the ``baseline`` system (default: the
    first in sort order), with

    * a paired bootstrap interval at ``ci`` (``n_boot`` replicates): a replicate draws
      rankings, and a drawn ranking brings every system's rows, so the interval is of the
      difference on the same queries, not of two independent samples;
    * a paired randomisation test's two-sided p-value (``n_perm`` permutations): within each
      ranking the two systems' labels are swapped at random;
    * ``p_adjusted``: the p-values adjusted over every row of the table, by Holm's method
      (``correction="holm"``, the family-wise error), Benjamini and Hochberg's (``"bh"``,
      the false discovery rate) or not at all (None).

    The roles and options are those of :func:`frameaudit.report.ranking`; ``metrics`` picks
    some of the family's metrics (default: every metric whose columns are given; IAA, whose
    bootstrap holds a sum per recurring item and replicate, only by name when ``item`` is
    given). A ranking that some system lacks is an error naming a few, or, with
    ``on_missing="drop"``, left out (counted in :attr:`Comparison.dropped`). Everything runs
    in the input's engine; the table is Polars.

    Returns
    -------
    A :class:`~frameaudit.compare.Comparison` whose ``table`` has one row per (metric, combo
    or group, system other than the baseline).
    """
    rankings = [ranking] if isinstance(ranking, str) else list(ranking)
    options = Options(by, ci, n_boot, n_perm, seed, correction, on_missing)
    keys = [group] if isinstance(group, str) else list(group)
    roles: dict[str, Any] = {"rank": rank, "group": group, "ranking": ranking, "item": item}
    roles |= {"groups": groups, "universe": universe, "weight": weight}
    given = {"relevance": relevance, "ctr": ctr, "relevant": relevant, "p": p, "decay": decay}
    given["size"] = size
    available = group_calls(roles, given)
    singles = _single_calls(roles, given, target)
    # IAA amortized over recurring items holds a sum per item and replicate (the report
    # leaves its interval out for that reason): asked for by name only
    default = [*available, *(name for name in singles if name != "iaa" or item is None)]
    chosen = default if metrics is None else list(metrics)
    for name in chosen:
        if name not in (*available, *singles):
            raise InvalidParameterError.choice("metrics", name, [*available, *singles])
    calls = []
    for name in chosen:
        if name in singles:
            calls.append(singles[name])
            continue
        declared, arguments = available[name]
        # the combos from the groups' replicate values: one bootstrap for both
        combos = Derived(("combo",), partial(_combos, name), {"combo": fair.COMBOS})
        per_group = {**arguments, "combo": None}
        calls.append(Call(name, declared.function, per_group, tuple(keys), (combos,)))
    parameters = {"metrics": chosen, **roles, **given, "group": keys, "ranking": rankings}
    parameters |= {"groups": None if groups is None else "given"}
    parameters |= {"universe": _tables.plain_values(universe)}
    parameters |= {"target": _tables.plain_values(target)}
    return compared(
        frame,
        calls,
        family="ranking",
        system=system,
        baseline=baseline,
        units=rankings,
        unit_name="rankings",
        options=options,
        parameters=parameters,
    )


def _combos(metric: str, values: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """Every combo of ``metric``'s per-group ``values``, per ``by`` (``fair.combine``)."""
    return _tables.eager(fair.combine(values, metric=metric, by=by, combo=list(fair.COMBOS)))


def _single_calls(
    roles: Mapping[str, Any], given: Mapping[str, Any], target: Any
) -> dict[str, Call]:
    """The single-number metrics whose columns are ``given``, each with its call.

    A metric of the items' groups takes the comparison's groups (and ``target``, where it
    compares with one); the others (IAA, nDCG) the rankings' roles only.
    """
    calls = {}
    for declared in metrics("ranking", "single"):
        if any(given[source] is None for source in declared.roles.values()):
            continue  # a column the metric needs was not given
        taken = ["rank", "ranking", "item", "weight"]
        if declared.grouped:
            taken += ["group", "groups", "universe"]
        arguments = {k: roles[k] for k in taken}
        arguments |= {role: given[source] for role, source in declared.roles.items()}
        if "target" in inspect.signature(declared.function).parameters:
            arguments["target"] = target
        calls[declared.name] = Call(declared.name, declared.function, arguments)
    return calls
