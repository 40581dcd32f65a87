"""Comparing clusterings of the same points: is B's clustering fairer, or is it noise."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any, Literal

import narwhals.stable.v2 as nw
import numpy as np
import polars as pl
from scipy.optimize import linear_sum_assignment

from frameaudit._engine import Source, to_engine
from frameaudit._params import strict
from frameaudit.compare._comparison import Correction, Options, compared, single_calls
from frameaudit.compare._result import Comparison
from frameaudit.report import _tables

__all__ = ["clustering"]


@strict
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
    partitions = options.partitions
    named = {system: "system", cluster: "cluster", point: "point", group: "group"}
    named |= dict.fromkeys(partitions, "by")
    named |= dict.fromkeys(_names(features), "features")
    named |= {weight: "weight"} if weight is not None else {}
    source = to_engine(frame, named)
    aligned = partial(_aligned, source, system, partitions, point=point, cluster=cluster)
    roles = {"cluster": cluster, "group": group, "a": a, "b": b, "point": point, "weight": weight}
    chosen, calls = single_calls("clustering", metrics, roles, {"features": features})
    parameters = {"metrics": chosen, **roles, "features": features}
    return compared(
        source.frame.to_native(),
        calls,
        prepared=aligned,
        record_of=frame,
        family="clustering",
        system=system,
        baseline=baseline,
        units=[point],
        unit_name="points",
        options=options,
        parameters=parameters,
    )


def _names(features: str | Sequence[str] | None) -> list[str]:
    return [] if features is None else [features] if isinstance(features, str) else list(features)


_CODE = "__fa_code"
_BASE = "__fa_base_cluster"


def _aligned(
    source: Source,
    system: str,
    partitions: Sequence[str],
    lazy: nw.LazyFrame[Any],
    base: Any,
    *,
    point: str,
    cluster: str,
) -> nw.LazyFrame[Any]:
    """``lazy`` with each system's clusters coded as the baseline's they share most points with.

    Per partition, the baseline's clusters are coded 0, 1, ... in sort order; another
    system's cluster takes the code of the baseline's it is matched to (a maximum matching on
    shared points), or a code past the baseline's when it is left unmatched. The codes
    replace the labels. Missing labels are left for the metrics to refuse. The comparison's
    :data:`~frameaudit.compare._comparison.Prepared` step (``base`` is checked); ``source``
    builds the codes' frame in the rows' engine.
    """
    partitions = list(partitions)
    keys = [*partitions, point]
    base_rows = lazy.filter(nw.col(system) == base).select(*keys, nw.col(cluster).alias(_BASE))
    shared = lazy.join(base_rows, on=keys, how="inner")
    counted = shared.group_by(*partitions, system, cluster, _BASE).agg(nw.len().alias("__fa_n"))
    table = _tables.eager(counted.to_native())
    if table[cluster].null_count() or table[_BASE].null_count():
        return lazy  # missing labels: the metrics refuse them, naming the column
    rows: list[dict[str, Any]] = []
    parts = table.group_by(partitions, maintain_order=True) if partitions else [((), table)]
    for values, part in parts:
        where = dict(zip(partitions, values, strict=True))
        codes = _matched(part, system, base, cluster)
        rows += [{**where, system: s, cluster: c, _CODE: code} for (s, c), code in codes.items()]
    columns = [*partitions, system, cluster, _CODE]
    mapping = source.frame_from_columns(
        {c: [row[c] for row in rows] for c in columns}, parameter="cluster"
    )
    schema = lazy.collect_schema()
    mapping = mapping.with_columns(nw.col(c).cast(schema[c]) for c in columns[:-1])
    joined = lazy.join(mapping, on=columns[:-1], how="left")
    return joined.with_columns(nw.col(_CODE).alias(cluster)).drop(_CODE)


def _matched(table: pl.DataFrame, system: str, base: Any, cluster: str) -> dict[Any, int]:
    """Each (system, cluster)'s code in one partition (see :func:`_aligned`)."""
    base_clusters = sorted(table.filter(pl.col(system) == base)[_BASE].unique().to_list())
    index = {c: i for i, c in enumerate(base_clusters)}
    codes = {(base, c): i for c, i in index.items()}
    for other in sorted(set(table[system].to_list()) - {base}):
        rows = table.filter(pl.col(system) == other)
        own = {c: i for i, c in enumerate(sorted(rows[cluster].unique().to_list()))}
        shared_points = np.zeros((len(own), len(base_clusters)))
        for c, c0, n in rows.select(cluster, _BASE, "__fa_n").iter_rows():
            shared_points[own[c], index[c0]] = n
        matched_rows, matched_columns = linear_sum_assignment(shared_points, maximize=True)
        matched = dict(zip(matched_rows.tolist(), matched_columns.tolist(), strict=True))
        spare = iter(range(len(base_clusters), len(base_clusters) + len(own)))
        for c, i in own.items():
            codes[(other, c)] = matched[i] if i in matched else next(spare)
    return codes
