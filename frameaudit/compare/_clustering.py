"""Comparing clusterings of the same points: is B's clustering fairer, or is it noise."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import narwhals.stable.v2 as nw
import numpy as np
import polars as pl
from scipy.optimize import linear_sum_assignment

from frameaudit.compare._comparison import Correction, Options, compared, single_calls
from frameaudit.compare._result import Comparison
from frameaudit.exceptions import ColumnNotFoundError
from frameaudit.report import _tables

__all__ = ["clustering"]


def clustering(
    frame: Any,
    *,
    system: str,
    a: Any,
    b: Any,
    point: str,
    baseline: Any | None = None,
    metrics: Sequence[str] | None = None,
    cluster: str = "cluster",
    group: str = "group",
    features: str | Sequence[str] | None = None,
    by: str | Sequence[str] | None = None,
    weight: str | None = None,
    ci: float = 0.95,
    n_boot: int = 1000,
    n_perm: int = 1000,
    seed: int = 0,
    correction: Correction | None = "holm",
    on_missing: Literal["error", "drop"] = "error",
) -> Comparison:
    r"""Compare clusterings of the same points: is B's fairer to groups a and b, or is it noise.

    ``frame`` holds every system's clustering, one row per (system, point), the ``system``
    column naming the clustering (two algorithms, or one algorithm before and after a fairness
    constraint); every system clusters the same points (``point``: the point ids). For each
    metric (default: the four label metrics, :func:`~frameaudit.fair.cluster_balance`,
    :func:`~frameaudit.fair.min_cluster_ratio`,
    :func:`~frameaudit.fair.cluster_distribution_tv` and
    :func:`~frameaudit.fair.cluster_distribution_kl`, and with ``features`` the
    :func:`~frameaudit.fair.social_fairness_ratio`), the comparison gives each system's value
    and its difference from the ``baseline`` system (default: the first in sort order), with

    * a paired bootstrap interval at ``ci`` (``n_boot`` replicates): a replicate draws points,
      and a drawn point brings its cluster in every system;
    * a paired randomisation test's two-sided p-value (``n_perm`` permutations): each point's
      clusters are exchanged between the two systems at random. Clusterings name their
      clusters arbitrarily, so first each system's clusters are matched to the baseline's by
      the most points they share (the Hungarian method on the table of shared points; a
      cluster left unmatched keeps a label of its own): the metrics do not depend on the
      names, the exchange does;
    * ``p_adjusted``: Holm's (``correction="holm"``), Benjamini and Hochberg's (``"bh"``) or
      no adjustment (None), over every row of the table.

    The roles are those of :func:`frameaudit.report.clustering`. A point some system lacks
    is an error naming a few, or, with ``on_missing="drop"``, left out (counted in
    :attr:`Comparison.dropped`). Everything but the matching (a table of clusters × clusters)
    runs in the input's engine; the table is Polars.

    Returns
    -------
    A :class:`~frameaudit.compare.Comparison` whose ``table`` has one row per (metric, system
    other than the baseline), ``combo`` and ``group`` null, and ``points``.
    """
    options = Options(by, ci, n_boot, n_perm, seed, correction, on_missing)
    native = nw.from_native(frame)
    lazy = native.lazy() if isinstance(native, nw.DataFrame) else native
    names = lazy.collect_schema().names()
    for parameter, column in (("system", system), ("cluster", cluster), ("point", point)):
        if column not in names:
            raise ColumnNotFoundError.build(column, parameter=parameter, available=names)
    aligned = _aligned(lazy, system, baseline, [*options.partitions, point], cluster)
    roles = {"cluster": cluster, "group": group, "a": a, "b": b, "point": point, "weight": weight}
    chosen, calls = single_calls("clustering", metrics, roles, {"features": features})
    parameters = {"metrics": chosen, **roles, "features": features}
    return compared(
        aligned.to_native(),
        calls,
        family="clustering",
        system=system,
        baseline=baseline,
        units=[point],
        unit_name="points",
        options=options,
        parameters=parameters,
    )


def _aligned(
    lazy: nw.LazyFrame[Any], system: str, baseline: Any, keys: Sequence[str], cluster: str
) -> nw.LazyFrame[Any]:
    """``lazy`` with each system's clusters coded as the baseline's they share most points with.

    The baseline's clusters are coded 0, 1, ... in sort order; another system's cluster takes
    the code of the baseline's it is matched to (a maximum matching on shared points), or a
    code past the baseline's when it is left unmatched. The codes replace the labels. An unknown
    ``baseline`` or a single system is left for the comparison to refuse.
    """
    keys = list(keys)
    systems = _tables.eager(lazy.select(system).unique().to_native())[system].to_list()
    present = sorted(s for s in systems if s is not None)
    base = present[0] if baseline is None and present else baseline
    if base not in present or len(present) < 2:
        return lazy
    base_rows = lazy.filter(nw.col(system) == base).select(*keys, nw.col(cluster).alias("__fa_b0"))
    shared = lazy.join(base_rows, on=keys, how="inner")
    table = _tables.eager(
        shared.group_by(system, cluster, "__fa_b0").agg(nw.len().alias("__fa_n")).to_native()
    )
    if table[cluster].null_count() or table["__fa_b0"].null_count():
        return lazy  # missing labels: the metrics refuse them, naming the column
    base_clusters = sorted(table.filter(pl.col(system) == base)["__fa_b0"].unique().to_list())
    codes = {(base, c): i for i, c in enumerate(base_clusters)}
    for other in present:
        if other == base:
            continue
        rows = table.filter(pl.col(system) == other)
        mine = sorted(rows[cluster].unique().to_list())
        shared_points = np.zeros((len(mine), len(base_clusters)))
        index = {c: i for i, c in enumerate(base_clusters)}
        own = {c: i for i, c in enumerate(mine)}
        for c, c0, n in rows.select(cluster, "__fa_b0", "__fa_n").iter_rows():
            shared_points[own[c], index[c0]] = n
        matched_rows, matched_columns = linear_sum_assignment(shared_points, maximize=True)
        matched = dict(zip(matched_rows.tolist(), matched_columns.tolist(), strict=True))
        spare = iter(range(len(base_clusters), len(base_clusters) + len(mine)))
        for c, i in own.items():
            codes[(other, c)] = matched[i] if i in matched else next(spare)
    code = nw.lit(-1, nw.Int64)  # every (system, cluster) has its code: never taken
    for (s, c), value in codes.items():
        where = (nw.col(system) == s) & (nw.col(cluster) == c)
        code = nw.when(where).then(nw.lit(value, nw.Int64)).otherwise(code)
    return lazy.with_columns(code.alias(cluster))
