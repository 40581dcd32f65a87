"""Comparing reproducibility: two training pipelines' repeated runs, paired over the samples."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any, Literal

import narwhals.stable.v2 as nw

from frameaudit._params import strict
from frameaudit.compare._comparison import Correction, Options, compared, single_calls
from frameaudit.compare._result import Comparison
from frameaudit.exceptions import ColumnNotFoundError, InvalidParameterError
from frameaudit.report import _tables
from frameaudit.repro._runs import EmptyUnion

__all__ = ["repro"]


@strict
def repro(
    frame: Any,
    *,
    system: str,
    baseline: Any | None = None,
    metrics: Sequence[str] | None = None,
    run: str = "run",
    sample: str = "sample",
    target: str = "target",
    prediction: str = "prediction",
    empty_union: EmptyUnion = "null",
    by: str | Sequence[str] | None = None,
    weight: str | None = None,
    ci: float = 0.95,
    n_boot: int = 1000,
    n_perm: int = 1000,
    seed: int = 0,
    correction: Correction | None = "holm",
    on_missing: Literal["error", "drop"] = "error",
) -> Comparison:
    r"""Compare the reproducibility of systems on the same samples: is B's more consistent.

    ``frame`` holds every system's repeated runs, one row per (run, sample), the ``system``
    column naming the system (e.g. two training pipelines, each trained with the same seeds);
    every system predicts the same samples in the same number of runs, named alike (the
    seeds), since the randomisation test exchanges a sample's run r between the systems. For
    each metric (default: every one that gives a number with an interval: the eight of
    :data:`frameaudit.repro.METRICS` and :func:`~frameaudit.repro.residual_consistency`, each
    the mean over the system's pairs of runs, and :func:`~frameaudit.repro.total_consistency`),
    the comparison gives each system's value and its difference from the ``baseline`` system
    (default: the first in sort order), with

    * a paired bootstrap interval at ``ci`` (``n_boot`` replicates): a replicate draws
      samples, and a drawn sample brings every run of every system, so the interval is of the
      difference on the same samples;
    * a paired randomisation test's two-sided p-value (``n_perm`` permutations): each
      sample's predictions are exchanged between the two systems at random;
    * ``p_adjusted``: Holm's (``correction="holm"``), Benjamini and Hochberg's (``"bh"``) or
      no adjustment (None), over every row of the table.

    The roles and ``empty_union`` are those of :func:`frameaudit.report.repro`. A sample some
    system lacks is an error naming a few, or, with ``on_missing="drop"``, left out (counted
    in :attr:`Comparison.dropped`). Everything runs in the input's engine; the table is Polars.

    Returns
    -------
    A :class:`~frameaudit.compare.Comparison` whose ``table`` has one row per (metric, system
    other than the baseline), ``combo`` and ``group`` null, and ``samples``.
    """
    options = Options(by, ci, n_boot, n_perm, seed, correction, on_missing)
    roles = {"run": run, "sample": sample, "target": target, "prediction": prediction}
    arguments = {**roles, "weight": weight}
    given = {"empty_union": empty_union}
    chosen, calls = single_calls("repro", metrics, arguments, given)
    parameters = {"metrics": chosen, **arguments, **given}
    return compared(
        frame,
        calls,
        prepared=partial(_same_runs, system=system, run=run),
        family="repro",
        system=system,
        baseline=baseline,
        units=[sample],
        unit_name="samples",
        options=options,
        parameters=parameters,
    )


def _same_runs(lazy: nw.LazyFrame[Any], base: Any, *, system: str, run: str) -> nw.LazyFrame[Any]:
    """``lazy``, once every system names its runs alike (the test swaps run r between systems).

    The comparison's :data:`~frameaudit.compare._comparison.Prepared` step: the system column
    and ``base`` are checked.
    """
    del base  # every system's runs are held against every other's
    names = lazy.collect_schema().names()
    if run not in names:
        raise ColumnNotFoundError.build(run, parameter="run", available=names)
    found = _tables.eager(lazy.select(system, run).unique().to_native())
    runs = {
        key[0]: sorted(map(str, rows[run].to_list()))
        for key, rows in found.group_by(system, maintain_order=False)
    }
    if len({tuple(v) for v in runs.values()}) > 1:
        shown = "; ".join(
            f"{s!r}: {', '.join(v[:5])}{', ...' if len(v) > 5 else ''}"
            for s, v in sorted(runs.items(), key=lambda item: str(item[0]))
        )
        msg = (
            f"run={run!r}: expected every system to name its runs alike (the randomisation test "
            f"exchanges a sample's run between systems), found {shown}"
        )
        raise InvalidParameterError(msg)
    return lazy
