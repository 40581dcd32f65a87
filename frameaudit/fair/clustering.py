"""Clustering-fairness metrics: how two groups fare in a clustering.

The clustering bias metrics of holisticai (Holistic AI), computed on tidy input: one row per
point, with its cluster label (``cluster``), its group (``group``) and, for the two
distance-based metrics, its coordinates (``features``). Two values of the group column are
compared, ``a`` and ``b``; rows of other groups still count in cluster sizes and totals.

With N_{g,c} the members of group g in cluster c, N_c the size of c, N_g and N the totals:

* label metrics (lazy column expressions, one aggregation over the rows and small ones):
  :func:`cluster_balance`, :func:`min_cluster_ratio`, :func:`cluster_distribution_tv`,
  :func:`cluster_distribution_kl`; each takes ``per_cluster=True`` for the per-cluster counts,
  shares and representation ratios behind the number;
* :func:`social_fairness_ratio`: the groups' mean distance to the nearest centroid;
* :func:`silhouette_difference`: the groups' mean silhouette, an exact numpy/BLAS kernel run
  when the result is computed (in-memory engines only), with an opt-in sampled estimate.

=========================  ===================================================================
metric                     definition (P_g(c) = N_{g,c}/N_g, ρ_{g,c} = (N_{g,c}/N_c)/(N_g/N))
=========================  ===================================================================
cluster_balance            min over g ∈ {a, b} and clusters c of ρ_{g,c}
min_cluster_ratio          min_c N_{a,c} / N_{b,c}
cluster_distribution_tv    ½ Σ_c |P_a(c) − P_b(c)|
cluster_distribution_kl    Σ_{c: P_a(c) > 0} P_a(c)·ln(P_a(c)/P_b(c))
social_fairness_ratio      mean_{i∈a} D_i / mean_{i∈b} D_i, D_i the distance to the nearest centroid
silhouette_difference      mean_{i∈b} s_i − mean_{i∈a} s_i, s_i the silhouette on all points
=========================  ===================================================================

Where frameaudit and holisticai 1.0.14 differ, the documentation's "Differences" page says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import narwhals.stable.v2 as nw

from frameaudit import _validate as validate
from frameaudit._docs import shared_docs, uncertainty_parameters
from frameaudit._engine import (
    Estimation,
    Estimator,
    cached,
    exact_means,
    exact_sums,
    group_silhouettes,
    native_step,
    nearest_centroid_sums,
)
from frameaudit._expr import (
    aggregate,
    divided_in,
    hashed_keys,
    joined_on,
    nan_to_null,
    partitioned,
    safe_div,
)
from frameaudit._params import UNCERTAINTY, Flag, Integer, Optional, constraints
from frameaudit._registry import registered
from frameaudit._roles import Names, Role, bind, column_names
from frameaudit.exceptions import InvalidDtypeError, InvalidParameterError

__all__ = [
    "cluster_balance",
    "cluster_distribution_kl",
    "cluster_distribution_tv",
    "min_cluster_ratio",
    "silhouette_difference",
    "social_fairness_ratio",
]


_CODE = "__fa_g"  # 1 for group a, 2 for group b, 0 for any other group, -1 for a centroid row
_POINTS = "__fa_n"
_DEFINED = "__fa_defined"  # clusters whose term is defined
_SUM_A, _COUNT_A, _SUM_B, _COUNT_B = "__fa_sum_a", "__fa_n_a", "__fa_sum_b", "__fa_n_b"
_COUNTS = ["n_cluster", "n_a", "n_b"]
_RESCALE = "distances square the coordinates: rescale the features (the ratios do not change)"
_KERNEL_WORKAROUND = (
    "select the cluster, group, feature and by columns into a Polars or pandas frame "
    "(DuckDB: relation.pl(); PySpark: df.toPandas()) and call it on that; for large data "
    "use sample=."
)


UNITS = "points"
"""The output column with the number of points behind a value (with ``ci=``)."""
_POINT = Estimator(UNITS)
"""The estimation of a call without ``ci=``: the point estimate."""


@dataclass
class _Prepared:
    """A validated point frame and the names of its roles.

    ``frame`` holds the role columns and the partition key (``WHOLE`` without ``by``), only
    the points of positive weight; for the distance metrics also the group code ``_CODE`` and
    the features as Float64 columns named in ``features``. Every clustering statistic is a
    ratio of sums over points: the replicates' sums need no normalisation.
    """

    estimation: Estimation
    frame: nw.LazyFrame[Any]
    features: list[str]
    checks: list[validate.Check]

    @property
    def by(self) -> list[str]:
        """The ``by`` columns (the centroids' and the kernels' keys)."""
        return self.estimation.by

    def point_weight(self) -> nw.Expr:
        """A point's weight (``weight=``), else 1 (Int64)."""
        weight: nw.Expr = self.estimation.unit_weight(integer=True)
        return weight


def _check_group_values(dtype: Any, group: str, values: dict[str, Any]) -> None:
    """``a`` and ``b`` must differ and be comparable with the group column (schema only)."""
    for name, value in values.items():
        validate.group_value(name, value, "group", group, dtype)
    a, b = values.values()
    if a == b:
        msg = f"a={a!r}, b={b!r}: the two compared groups must differ"
        raise InvalidParameterError(msg)


def _feature_columns(
    frame: nw.LazyFrame[Any], names: list[str], where: str = ""
) -> tuple[list[nw.Expr], dict[str, str]]:
    """Float64 expressions ``__fa_x0 ..`` for the features, and how messages name each one.

    The features are numeric columns, or one fixed-size array column (one element per
    dimension).
    """
    schema = frame.collect_schema()
    if len(names) == 1 and isinstance(array := schema[names[0]], nw.Array):
        name, dtype = names[0], array
        if len(dtype.shape) != 1 or not dtype.inner.is_numeric():
            msg = (
                f"features={name!r}{where}: expected a one-dimensional numeric array, found {dtype}"
            )
            raise InvalidDtypeError(msg)
        element = nw.col(name).cast(nw.List(dtype.inner)).list
        return (
            [element.get(j).cast(nw.Float64).alias(f"__fa_x{j}") for j in range(dtype.shape[0])],
            {
                f"__fa_x{j}": f"features={name!r}{where} (element {j})"
                for j in range(dtype.shape[0])
            },
        )
    for name in names:
        kind = schema[name]
        if isinstance(kind, nw.List):
            msg = (
                f"features={name!r}{where}: a List column has no fixed length in its schema; "
                f"convert it to a fixed-size array (Polars: pl.col({name!r}).list.to_array(d)) "
                "or pass the feature columns as a list of names"
            )
            raise InvalidDtypeError(msg)
        if not kind.is_numeric():
            msg = (
                f"features={name!r}{where}: expected numeric columns or one fixed-size array "
                f"column, found {kind}"
            )
            raise InvalidDtypeError(msg)

    def as_float(name: str) -> nw.Expr:  # a cast that changes nothing still costs plan time
        return nw.col(name) if schema[name] == nw.Float64 else nw.col(name).cast(nw.Float64)

    return (
        [as_float(name).alias(f"__fa_x{j}") for j, name in enumerate(names)],
        {f"__fa_x{j}": f"features={name!r}{where}" for j, name in enumerate(names)},
    )


def _prepare(
    frame: Any,
    metric: str | Sequence[str],
    *,
    cluster: str,
    group: str,
    a: Any,
    b: Any,
    by: Names | None,
    outputs: Sequence[str],
    features: Names | None = None,
    distances: bool = False,
    read_labels: bool = True,
    point: str | None = None,
    weight: str | None = None,
    estimator: Estimator = _POINT,
) -> _Prepared:
    """Validate the schema and bring the frame into the engine.

    ``outputs`` are the columns the result adds besides ``metric`` (one name, or several for
    one result of several metrics) and, with a bootstrap, their intervals'. With
    ``distances`` (the distance metrics), also add the group code and the ``features``.
    ``read_labels=False``: the cluster labels are not read (``cluster``
    names the centroids' column). The checks on the rows start with the null check;
    :func:`_present` adds the others. A ``weight`` of 0 leaves the point out.
    """
    metrics = [metric] if isinstance(metric, str) else list(metric)
    if estimator.bootstrap is not None and point is None:
        msg = (
            f"ci={estimator.bootstrap.level!r}: intervals resample points; give point= the column "
            "of unique point ids (a point's identity must not depend on the row order)"
        )
        raise InvalidParameterError(msg)
    bound = bind(
        frame,
        [
            Role("group", group),
            Role("cluster", cluster if read_labels else None, optional=not read_labels),
            Role("by", by, many=True, optional=True),
            # numeric columns or one array column: _feature_columns checks them
            *([Role("features", features, many=True, dtype=None)] if distances else []),
            Role("point", point, optional=True),
            Role("weight", weight, optional=True, dtype="numeric"),
        ],
        outputs=[*metrics, *outputs, *estimator.outputs(*metrics)],
    )
    source = bound.source
    by_names = bound.columns["by"]
    feature_names = bound.columns.get("features", [])
    if not read_labels:
        column_names(Role("cluster", cluster))
    roles = {c: p for p in ("group", "cluster", "by", "point", "weight") for c in bound.columns[p]}
    lf = partitioned(source.frame, by_names)
    _check_group_values(lf.collect_schema()[group], group, {"a": a, "b": b})
    labels: dict[str, str] = {}
    if distances:
        expressions, labels = _feature_columns(lf, feature_names)
        code = (
            nw.when(nw.col(group) == a)
            .then(nw.lit(1))
            .when(nw.col(group) == b)
            .then(nw.lit(2))
            .otherwise(nw.lit(0))
            .cast(nw.Int8)
        )
        lf = lf.with_columns(code.alias(_CODE), *expressions)
    # Row rules on one frame are evaluated together, in one pass over the data.
    checks = [validate.no_nulls(lf, roles)]
    finite = dict(labels)
    if labels:
        checks.append(validate.magnitudes(lf, dict(labels), _RESCALE))
    if weight is not None:
        finite[weight] = f"weight={weight!r}"
        checks.append(validate.in_range(lf, weight, "weight", 0, None))
        checks.append(validate.relative_weights(lf, weight))
    if finite:
        checks.append(validate.finite(lf, finite))
    if point is not None:
        checks.append(
            validate.unique_within(
                lf, [*by_names, point], f"point={point!r}", "each point needs its own id"
            )
        )
    lf, estimated = estimator.over(
        lf, source, by=by_names, units=[point] if point else [], weight=weight
    )
    return _Prepared(estimated, lf, list(labels), checks)


def _present(
    prep: _Prepared, frame: nw.LazyFrame[Any], metric: str, *, group: str, a: Any, b: Any
) -> None:
    """``frame`` (the points, or their counts per group) has rows, and rows of a and of b.

    Both are row rules on one frame: the engine evaluates them in one pass.
    """
    prep.checks += [
        validate.non_empty(frame, metric),
        validate.values_present(frame, group, "group", {"a": a, "b": b}),
    ]


# --- label metrics -------------------------------------------------------------------------


def _f64(name: str, ns: Any = nw) -> Any:
    return ns.col(name).cast(ns.Float64)


def _over_positive(numerator: Any, denominator: Any, ns: Any = nw) -> Any:
    """Numerator / denominator for a denominator that is 0 only when the value is undefined."""
    return ns.when(denominator > 0).then(numerator / denominator)


# The per-cluster steps below are written for either namespace (narwhals', or Polars' own on
# Polars: ``native_step``), as every call builds them.


def _balance_term(ns: Any) -> Any:
    rho_a, rho_b = ns.col("rho_a"), ns.col("rho_b")
    return (
        ns.when(rho_a.is_null() | rho_b.is_null())
        .then(ns.lit(None, dtype=ns.Float64))
        .when(rho_a <= rho_b)
        .then(rho_a)
        .otherwise(rho_b)
    )


def _ratio_term(ns: Any) -> Any:
    return divided_in(ns, _f64("n_a", ns), _f64("n_b", ns))


def _tv_term(ns: Any) -> Any:
    return 0.5 * (ns.col("share_a") - ns.col("share_b")).abs()


def _kl_term(ns: Any) -> Any:
    share_a, share_b = ns.col("share_a"), ns.col("share_b")
    # An undefined share gives null; 0·ln 0 = 0: the logarithm's argument is 1 there (engines
    # that evaluate every branch would otherwise take ln 0); P_b(c) = 0 < P_a(c) gives
    # ln(+inf) = +inf. One when-chain: each one costs plan-building time.
    ratio = (
        ns.when(share_b.is_null())
        .then(ns.lit(None, dtype=ns.Float64))
        .when(share_a == 0)
        .then(ns.lit(1.0))
        .when(share_b == 0)
        .then(ns.lit(float("inf")))
        .otherwise(share_a / share_b)
    )
    return share_a * ratio.log()


# metric → (its per-cluster term, how the terms reduce over clusters, the columns it needs)
_LABEL_METRICS: dict[str, tuple[Callable[[Any], Any], Literal["min", "sum"], tuple[str, ...]]] = {
    "cluster_balance": (_balance_term, "min", ("rho_a", "rho_b")),
    "min_cluster_ratio": (_ratio_term, "min", ()),
    "cluster_distribution_tv": (_tv_term, "sum", ("share_a", "share_b")),
    "cluster_distribution_kl": (_kl_term, "sum", ("share_a", "share_b")),
}

_TOTALS = {"__fa_total": "n_cluster", "__fa_total_a": "n_a", "__fa_total_b": "n_b"}


def _share(count: str, total: str) -> Callable[[Any], Any]:
    """A group's share of the partition's points in a cluster: n_g(c) / N_g."""
    return lambda ns: _over_positive(_f64(count, ns), ns.col(total), ns)


def _rho(count: str, total: str) -> Callable[[Any], Any]:
    """A group's representation in a cluster against the data: (n_g(c)/n(c)) / (N_g/N)."""
    return lambda ns: _over_positive(
        _f64(count, ns) * ns.col("__fa_total"), _f64("n_cluster", ns) * ns.col(total), ns
    )


# per-cluster column → (its expression, the partition totals it reads)
_SHARES: dict[str, tuple[Callable[[Any], Any], tuple[str, ...]]] = {
    "share_a": (_share("n_a", "__fa_total_a"), ("__fa_total_a",)),
    "share_b": (_share("n_b", "__fa_total_b"), ("__fa_total_b",)),
    "rho_a": (_rho("n_a", "__fa_total_a"), ("__fa_total", "__fa_total_a")),
    "rho_b": (_rho("n_b", "__fa_total_b"), ("__fa_total", "__fa_total_b")),
}


def _conclude(
    prep: _Prepared,
    values: nw.LazyFrame[Any],
    metrics: Sequence[str],
    keys: Sequence[str] = (),
    before: Sequence[str] = (),
) -> Any:
    """Per (partition, ``keys``): the values (with a bootstrap, intervals), in the caller's kind.

    ``values`` holds ``metrics`` and the columns ``before`` (shown before them) per (estimate,
    ``keys``). One metric: its value, ``_lo``, ``_hi``, the points and the undefined
    replicates; several: each one's value and bounds in turn, then the points and each one's
    undefined replicates (:meth:`~frameaudit._engine.Estimation.intervals`).
    """
    estimation = prep.estimation
    first = [*estimation.partition, *keys, *before]
    if len(metrics) == 1:
        result = estimation.interval(values, keys, metrics[0], also=before)
        shown = [*metrics, *estimation.outputs(*metrics)]
    else:
        result = estimation.intervals(values, keys, metrics, also=before)
        shown = [c for c in result.collect_schema().names() if c not in first]
    return estimation.finish(result.select(*first, *shown), keys, checks=prep.checks)


def _label_metrics(
    frame: Any,
    metrics: Sequence[str],
    *,
    cluster: str,
    group: str,
    a: Any,
    b: Any,
    by: Names | None,
    per_cluster: bool,
    point: str | None,
    weight: str | None,
    estimator: Estimator,
) -> Any:
    """Counts per (partition, cluster, group), the per-cluster terms, their min or sum.

    One plan for every metric of ``metrics`` (the counts, the shares and the bootstrap draws
    are the same for all of them). A null term (0/0) makes the partition's value null: an
    undefined cluster is never skipped.
    Only the columns the metric needs are computed, in as few steps as possible: building the
    plan costs more than running it up to about a million rows. With weights the counts are
    sums of weights; with a bootstrap, every estimate (the point estimate and each replicate)
    is one more partition.
    """
    # the per-cluster columns are built on the way to every label metric's value
    outputs = [*_COUNTS, "share_a", "share_b", "rho_a", "rho_b"]
    prep = _prepare(
        frame,
        metrics,
        cluster=cluster,
        group=group,
        a=a,
        b=b,
        by=by,
        outputs=outputs,
        point=point,
        weight=weight,
        estimator=estimator,
    )
    # The one pass over the data. The checks read it too: cached, it is computed once.
    if weight is None and estimator.bootstrap is None:
        keys = [*prep.estimation.partition, cluster, group]
        counts = aggregate(prep.frame, keys, nw.len().alias(_POINTS))
    else:
        points = prep.frame.with_columns(prep.point_weight().alias(_POINTS))
        # a cell no drawn point holds is not in that replicate's data
        counts = prep.estimation.summed(points, [cluster, group], [_POINTS]).filter(
            nw.col(_POINTS) > 0
        )
    counts = cached(counts)
    # with a bootstrap the counts are per replicate: the checks read the points instead
    present = prep.frame if estimator.bootstrap else counts
    _present(prep, present, metrics[0], group=group, a=a, b=b)

    # DuckDB sums are decimals, hence the casts.
    def size(ns: Any) -> Any:
        return ns.Float64 if weight else ns.Int64

    def cell_counts(ns: Any) -> list[Any]:
        n = ns.col(_POINTS).cast(size(ns))
        return [
            n.alias("n_cluster"),
            ((ns.col(group) == a).cast(size(ns)) * n).alias("n_a"),
            ((ns.col(group) == b).cast(size(ns)) * n).alias("n_b"),
        ]

    estimates = prep.estimation.estimates
    per = exact_sums(
        native_step(counts, "with_columns", cell_counts), [*estimates, cluster], _COUNTS
    )
    needed = {column for metric in metrics for column in _LABEL_METRICS[metric][2]}
    derived = list(_SHARES) if per_cluster else [s for s in _SHARES if s in needed]
    totals = {total for name in derived for total in _SHARES[name][1]}
    if derived:
        wanted = {total: column for total, column in _TOTALS.items() if total in totals}
        # counts of points are integers, summed exactly as they are; sums of weights are floats
        summed = exact_sums(
            native_step(
                per,
                "select",
                lambda ns: [*estimates, *(ns.col(c).alias(t) for t, c in wanted.items())],
            ),
            estimates,
            list(wanted),
            floats=list(wanted) if weight else [],
        )
        hashed = hashed_keys(estimates)
        per = native_step(
            joined_on(per, summed.select(*hashed, *wanted), hashed),
            "with_columns",
            lambda ns: [_SHARES[name][0](ns).alias(name) for name in derived],
        )
    detail = native_step(
        per,
        "with_columns",
        lambda ns: [_LABEL_METRICS[metric][0](ns).alias(metric) for metric in metrics],
    )
    if per_cluster:
        sizes = (nw.col(c).cast(size(nw)) for c in _COUNTS)
        detail = detail.select(*estimates, cluster, *sizes, *_SHARES, *metrics)
        return _conclude(prep, detail, metrics, [cluster], [*_COUNTS, *_SHARES])
    defined = [f"{_DEFINED}{i}" for i in range(len(metrics))]
    added = [m for m in metrics if _LABEL_METRICS[m][1] == "sum"]

    def reductions(ns: Any) -> list[Any]:
        return [
            *(ns.col(m).min() for m in metrics if _LABEL_METRICS[m][1] == "min"),
            *(ns.col(m).count().alias(d) for m, d in zip(metrics, defined, strict=True)),
            ns.len().alias(_POINTS),
        ]

    def undefined_as_null(ns: Any) -> list[Any]:
        null = ns.lit(None, dtype=ns.Float64)
        return [
            *estimates,
            *(
                ns.when(ns.col(d) < ns.col(_POINTS)).then(null).otherwise(ns.col(m)).alias(m)
                for m, d in zip(metrics, defined, strict=True)
            ),
        ]

    reduced = exact_sums(detail, estimates, added, also=reductions)
    summary = native_step(reduced, "select", undefined_as_null)
    return _conclude(prep, summary, metrics)


_POINT_UNCERTAINTY = uncertainty_parameters(
    "point",
    weights="Column of point weights: non-negative and finite. Every count becomes a sum of "
    "weights",
    interval="over the points (``point=`` required)",
)


# holisticai's example clustering, which the label metrics' examples start from
_EXAMPLE_CLUSTERING = """\
>>> import polars as pl
>>> import frameaudit as fa
>>> df = pl.DataFrame({
...     "group": ["a"] * 4 + ["b"] * 6,
...     "cluster": [0, 1, 1, 2, 0, 0, 0, 0, 1, 2],
... })"""


@registered(
    "clustering",
    "clusters",
    unit=UNITS,
    best="1 = parity (every cluster mirrors the data)",
    range="[0, 1]",
    worst="low",
)
@constraints(per_cluster=Flag(), **UNCERTAINTY)
@shared_docs(uncertainty=_POINT_UNCERTAINTY, example_clustering=_EXAMPLE_CLUSTERING)
def cluster_balance(
    frame: Any,
    *,
    cluster: str = "cluster",
    group: str = "group",
    a: Any,
    b: Any,
    by: Names | None = None,
    per_cluster: bool = False,
    point: str | None = None,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Cluster balance (Chierichetti et al. 2017, as in holisticai): the worst representation.

    .. math::
        \mathrm{CB} = \min_{g \in \{a, b\},\, c} \rho_{g,c}, \qquad
        \rho_{g,c} = \frac{N_{g,c} / N_c}{N_g / N}

    ρ_{g,c} = 1 when cluster c has group g's overall share; the minimum is 1 only when every
    cluster mirrors the data (most fair), and 0 when a cluster has no member of a or of b.

    Parameters
    ----------
    frame
        Polars DataFrame/LazyFrame, pandas DataFrame, pyarrow Table, DuckDB relation, PySpark
        DataFrame: one row per point.
    cluster
        Cluster label column (any dtype).
    group
        Group column.
    a, b
        The two compared values of ``group``; both must occur (else an error listing the
        values found). Rows of other groups count in N_c and N.
    by
        Column(s): one independent result per partition (e.g. per clustering run or per k).
    per_cluster
        Return the per-cluster detail instead of the number.
    point
        Column of point ids, unique within each ``by`` partition: the resampling unit,
        required with ``ci`` (a point's identity must not depend on the row order).
    weight, ci, n_boot, seed
        <<uncertainty>>

    Returns
    -------
    A frame of the input's kind: the ``by`` columns and ``cluster_balance`` (Float64), one
    row per partition, sorted by ``by``. With ``per_cluster=True``, one row per (partition,
    cluster), sorted by them: ``by``, ``cluster``, ``n_cluster``, ``n_a``, ``n_b`` (Int64
    counts N_c, N_{a,c}, N_{b,c}; with ``weight``, Float64 sums of weights), ``share_a``,
    ``share_b`` (P_g(c) = N_{g,c}/N_g), ``rho_a``, ``rho_b`` (ρ_{g,c}) and the metric's
    column holding the cluster's term, here min(ρ_{a,c}, ρ_{b,c}). The other label metrics
    return the same detail with their own term. With ``ci``, ``cluster_balance_lo`` and
    ``cluster_balance_hi`` follow the metric's column (in the detail too), and ``points``
    (Int64, the points behind the value; the interval is null below 2) and
    ``undefined_replicates`` (Int64, replicates whose value is undefined, left out of the
    interval: a group no drawn point holds; in the detail also a cluster none of them is
    in) close the row.

    Notes
    -----
    One aggregation (a count per cluster and group) and small ones: O(N); on a LazyFrame the
    value checks read the source once more (2 reads at collect). With ``ci``, every
    point is paired with every replicate on its way into the counts: O(N·n_boot), streamed.
    holisticai 1.0.14 returns min(ρ, 1/ρ) instead (with ε = 1e-20 added to the counts); see
    the Differences page. A partition without members of a or b has null ρ for that group
    and a null result.

    Examples
    --------
    holisticai's example clustering (here min ρ = 0.5 in both definitions):

    <<example_clustering>>
    >>> fa.fair.cluster_balance(df, a="a", b="b").item()
    0.5
    >>> fa.fair.cluster_balance(df, a="a", b="b", per_cluster=True).select(
    ...     "cluster", "n_a", "n_b", "rho_a", "rho_b", "cluster_balance"
    ... )
    shape: (3, 6)
    ┌─────────┬─────┬─────┬──────────┬──────────┬─────────────────┐
    │ cluster ┆ n_a ┆ n_b ┆ rho_a    ┆ rho_b    ┆ cluster_balance │
    │ ---     ┆ --- ┆ --- ┆ ---      ┆ ---      ┆ ---             │
    │ i64     ┆ i64 ┆ i64 ┆ f64      ┆ f64      ┆ f64             │
    ╞═════════╪═════╪═════╪══════════╪══════════╪═════════════════╡
    │ 0       ┆ 1   ┆ 4   ┆ 0.5      ┆ 1.333333 ┆ 0.5             │
    │ 1       ┆ 2   ┆ 1   ┆ 1.666667 ┆ 0.555556 ┆ 0.555556        │
    │ 2       ┆ 1   ┆ 1   ┆ 1.25     ┆ 0.833333 ┆ 0.833333        │
    └─────────┴─────┴─────┴──────────┴──────────┴─────────────────┘
    """
    return _label_metrics(
        frame,
        ["cluster_balance"],
        cluster=cluster,
        group=group,
        a=a,
        b=b,
        by=by,
        per_cluster=per_cluster,
        point=point,
        weight=weight,
        estimator=Estimator.requested(UNITS, ci, n_boot, seed),
    )


@registered(
    "clustering",
    "clusters",
    unit=UNITS,
    best="1 = parity for equal groups (else N_a/N_b)",
    range="[0, inf]",
    worst="low",
)
@constraints(per_cluster=Flag(), **UNCERTAINTY)
@shared_docs(example_clustering=_EXAMPLE_CLUSTERING)
def min_cluster_ratio(
    frame: Any,
    *,
    cluster: str = "cluster",
    group: str = "group",
    a: Any,
    b: Any,
    by: Names | None = None,
    per_cluster: bool = False,
    point: str | None = None,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Minimum cluster ratio (holisticai): the cluster where a is scarcest relative to b.

    .. math::
        \mathrm{MCR} = \min_c \frac{N_{a,c}}{N_{b,c}}

    1 is most fair when the groups are equally large (every cluster balanced); below 1, some
    cluster has fewer members of a than of b.

    Parameters and the ``per_cluster`` detail as for :func:`cluster_balance`; the cluster's
    term is N_{a,c}/N_{b,c}.

    Notes
    -----
    O(N). A cluster with members of a but none of b has ratio +inf; a cluster with members of
    neither has an undefined ratio (null), and then the result is null: inspect it with
    ``per_cluster=True``. holisticai adds 1e-32 to the denominator (so 1e32·N_{a,c} and 0
    in those two cases).

    Examples
    --------
    <<example_clustering>>
    >>> fa.fair.min_cluster_ratio(df, a="a", b="b").item()
    0.25
    >>> fa.fair.min_cluster_ratio(df, a="b", b="a", per_cluster=True)["min_cluster_ratio"].to_list()
    [4.0, 0.5, 1.0]
    """
    return _label_metrics(
        frame,
        ["min_cluster_ratio"],
        cluster=cluster,
        group=group,
        a=a,
        b=b,
        by=by,
        per_cluster=per_cluster,
        point=point,
        weight=weight,
        estimator=Estimator.requested(UNITS, ci, n_boot, seed),
    )


@registered("clustering", "clusters", unit=UNITS, best="0 = parity", range="[0, 1]", worst="high")
@constraints(per_cluster=Flag(), **UNCERTAINTY)
@shared_docs(example_clustering=_EXAMPLE_CLUSTERING)
def cluster_distribution_tv(
    frame: Any,
    *,
    cluster: str = "cluster",
    group: str = "group",
    a: Any,
    b: Any,
    by: Names | None = None,
    per_cluster: bool = False,
    point: str | None = None,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Total variation between the groups' distributions over clusters (holisticai).

    .. math::
        \mathrm{TV} = \tfrac12 \sum_c \lvert P_a(c) - P_b(c) \rvert, \qquad
        P_g(c) = N_{g,c} / N_g

    In [0, 1]; 0 (most fair) when both groups spread over the clusters in the same
    proportions, 1 when they share no cluster. (The seed's extra factor n is a typo; holisticai
    computes this value.)

    Parameters and the ``per_cluster`` detail as for :func:`cluster_balance`; the cluster's
    term is ½|P_a(c) − P_b(c)|.

    Notes
    -----
    O(N). Null when a partition has no member of a or of b (P_g undefined).

    Examples
    --------
    <<example_clustering>>
    >>> round(fa.fair.cluster_distribution_tv(df, a="a", b="b").item(), 6)
    0.416667
    """
    return _label_metrics(
        frame,
        ["cluster_distribution_tv"],
        cluster=cluster,
        group=group,
        a=a,
        b=b,
        by=by,
        per_cluster=per_cluster,
        point=point,
        weight=weight,
        estimator=Estimator.requested(UNITS, ci, n_boot, seed),
    )


@registered(
    "clustering",
    "clusters",
    unit=UNITS,
    best="0 = parity (in nats)",
    range="[0, inf]",
    worst="high",
)
@constraints(per_cluster=Flag(), **UNCERTAINTY)
@shared_docs(example_clustering=_EXAMPLE_CLUSTERING)
def cluster_distribution_kl(
    frame: Any,
    *,
    cluster: str = "cluster",
    group: str = "group",
    a: Any,
    b: Any,
    by: Names | None = None,
    per_cluster: bool = False,
    point: str | None = None,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""KL divergence of group a's distribution over clusters from group b's (holisticai).

    .. math::
        \mathrm{KL}(P_a \,\|\, P_b) = \sum_{c:\, P_a(c) > 0} P_a(c) \ln \frac{P_a(c)}{P_b(c)},
        \qquad P_g(c) = N_{g,c} / N_g

    In nats; 0 (most fair) when both distributions are equal. Not symmetric in a and b.

    Parameters and the ``per_cluster`` detail as for :func:`cluster_balance`; the cluster's
    term is P_a(c)·ln(P_a(c)/P_b(c)), 0 when P_a(c) = 0.

    Notes
    -----
    O(N). +inf when a cluster holds members of a but none of b (P_b(c) = 0 < P_a(c)); null
    when a partition has no member of a or of b.

    Examples
    --------
    <<example_clustering>>
    >>> round(fa.fair.cluster_distribution_kl(df, a="a", b="b").item(), 6)
    0.405465
    """
    return _label_metrics(
        frame,
        ["cluster_distribution_kl"],
        cluster=cluster,
        group=group,
        a=a,
        b=b,
        by=by,
        per_cluster=per_cluster,
        point=point,
        weight=weight,
        estimator=Estimator.requested(UNITS, ci, n_boot, seed),
    )


@constraints(per_cluster=Flag(), **UNCERTAINTY)
def label_metrics(
    frame: Any,
    *,
    cluster: str = "cluster",
    group: str = "group",
    a: Any,
    b: Any,
    by: Names | None = None,
    per_cluster: bool = False,
    point: str | None = None,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    """The four label metrics in one result, from one plan: what the clustering report reads.

    Each value is the one its own function gives with the same arguments, and so is each
    interval (the same draws). With ``per_cluster``, one row per cluster: the counts and
    shares once, then each metric's term; else one row per partition. With ``ci``, each
    metric's value is followed by its ``_lo`` and ``_hi``, and the result ends with the
    points and each metric's ``<metric>_undefined_replicates``. The counts, the shares and
    the bootstrap draws are computed once for the four (the report made eight calls: on
    DuckDB, each one a plan of its own).
    """
    return _label_metrics(
        frame,
        list(_LABEL_METRICS),
        cluster=cluster,
        group=group,
        a=a,
        b=b,
        by=by,
        per_cluster=per_cluster,
        point=point,
        weight=weight,
        estimator=Estimator.requested(UNITS, ci, n_boot, seed),
    )


# --- social fairness ratio -------------------------------------------------------------------


def _centroids(
    prep: _Prepared, centroids: Any, *, cluster: str, features: Names
) -> nw.LazyFrame[Any]:
    """The centroids as (by, features): given, or the cluster means in the query.

    With ``weight=``, the means are weighted (a point of weight k counts as k points).
    """
    if centroids is None and prep.estimation.weight is None:
        means = exact_means(prep.frame, [*prep.by, cluster], prep.features)
        return means.select(*prep.by, *prep.features)
    if centroids is None:
        w = prep.point_weight()
        sums = exact_sums(
            prep.frame.with_columns(
                *((nw.col(x) * w).alias(x) for x in prep.features), w.alias("__fa_w")
            ),
            [*prep.by, cluster],
            [*prep.features, "__fa_w"],
        )
        return sums.select(
            *prep.by, *((nw.col(x) / nw.col("__fa_w")).alias(x) for x in prep.features)
        )
    names = validate.as_names(features, "features")
    columns = {
        cluster: "cluster",
        **dict.fromkeys(names, "features"),
        **dict.fromkeys(prep.by, "by"),
    }
    other = prep.estimation.source.align(centroids, columns, frame_name="centroids")
    expressions, labels = _feature_columns(other, names, where=" in centroids")
    if len(expressions) != len(prep.features):
        msg = (
            f"centroids: features={features!r} have {len(expressions)} dimension(s) in "
            f"centroids but {len(prep.features)} in the frame"
        )
        raise InvalidDtypeError(msg)
    schema = prep.frame.collect_schema()
    other = other.with_columns(*expressions, *(nw.col(c).cast(schema[c]) for c in prep.by))
    prep.checks += validate.given(
        [
            validate.non_empty(other, "centroids"),
            validate.no_nulls(
                other, {c: f"centroids {p}" for c, p in columns.items() if p != "features"}
            ),
            validate.finite(other, labels),
            validate.magnitudes(other, labels, _RESCALE),
            validate.unique_within(other, [*prep.by, cluster], "centroids", "one row per cluster"),
        ]
    )
    return other.select(*prep.by, *prep.features)


@registered(
    "clustering",
    "single",
    unit=UNITS,
    best="1 = parity (below 1: a closer to the centroids)",
    range="[0, inf]",
    roles={"features": "features"},
)
@constraints(**UNCERTAINTY)
def social_fairness_ratio(
    frame: Any,
    *,
    group: str = "group",
    a: Any,
    b: Any,
    features: Names,
    centroids: Any = None,
    cluster: str = "cluster",
    by: Names | None = None,
    point: str | None = None,
    weight: str | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Any:
    r"""Social fairness ratio (Ghadiri et al. 2021, as in holisticai).

    .. math::
        \mathrm{SFR} = \frac{\operatorname{mean}_{i \in a} D_i}{\operatorname{mean}_{i \in b} D_i},
        \qquad D_i = \min_c \lVert x_i - \mu_c \rVert_2

    D_i is the Euclidean distance from point i to the nearest of all centroids (whatever its
    cluster label). 1 is most fair; below 1, group a is on average closer to the centroids
    (better served by the clustering), above 1 further.

    Parameters
    ----------
    frame
        One row per point; any supported frame kind.
    group, a, b
        The group column and its two compared values (both must occur).
    features
        The coordinates: a list of numeric columns, or one fixed-size array column.
    centroids
        Optional frame (Polars, pandas, pyarrow, or a frame of the same engine as ``frame``)
        with one row per cluster: the ``cluster`` column, the same feature column(s) and, with
        ``by``, the ``by`` columns. None: the centroids are the cluster means of all points of
        the partition, computed in the query.
    cluster
        Cluster label column (of ``frame`` when ``centroids`` is None, else of ``centroids``).
    by
        Column(s): one independent result per partition.
    point, weight, ci, n_boot, seed
        As for :func:`cluster_balance`: a point of weight k counts k times in both means and,
        when the centroids are computed, in its cluster's mean. The bootstrap resamples the
        points with the centroids held fixed: given, or the cluster means of all the data
        (not recomputed in each replicate), so the interval is conditional on them.

    Returns
    -------
    A frame of the input's kind: the ``by`` columns and ``social_fairness_ratio`` (Float64),
    one row per partition, sorted by ``by``. With ``ci``, ``social_fairness_ratio_lo``,
    ``social_fairness_ratio_hi``, ``points`` and ``undefined_replicates`` as for
    :func:`cluster_balance`.

    Notes
    -----
    Null when a group has no point in a partition, or both mean distances are 0; +inf when
    only b's is 0. Features and centroids must be finite. On Polars, pandas and pyarrow the
    nearest-centroid distances come from a chunked BLAS kernel inside the plan (O(N·k·d),
    memory O(N·d)); on DuckDB and PySpark, and with ``weight`` or ``ci`` on every engine (the
    kernel returns sums per partition, not per point), from the query (O(N·k·d) in the
    engine; with ``ci`` then O(N·n_boot) to count the points in the replicates). On DuckDB,
    given ``centroids`` without ``by`` are read as the call is built and written into the
    query as numbers when there are few (centroids × features up to 256); otherwise the
    points are joined with the centroids and each keeps its minimum. Not supported on Dask.
    Same as holisticai 1.0.14.

    Examples
    --------
    holisticai's example, with its centroids:

    >>> import polars as pl
    >>> import frameaudit as fa
    >>> points = pl.DataFrame({
    ...     "group": ["a"] * 4 + ["b"] * 6,
    ...     "x": [-1, 1, 1, 0, -1, -1, -1, -1, 1, 0],
    ...     "y": [1, 1, 1, -1, 1, 1, 1, 1, 1, -1],
    ... })
    >>> centres = pl.DataFrame({"cluster": [0, 1, 2], "x": [-2, 1, 0], "y": [1, 2, -2]})
    >>> fa.fair.social_fairness_ratio(
    ...     points, a="a", b="b", features=["x", "y"], centroids=centres
    ... ).item()
    1.0
    """
    metric = "social_fairness_ratio"
    prep = _prepare(
        frame,
        metric,
        cluster=cluster,
        group=group,
        a=a,
        b=b,
        by=by,
        outputs=[],
        features=features,
        distances=True,
        read_labels=centroids is None,
        point=point,
        weight=weight,
        estimator=Estimator.requested(UNITS, ci, n_boot, seed),
    )
    # (a KeyError, depending on the partitioning): an error beats a result that only sometimes
    # comes
    prep.estimation.source.refuse_dask(
        metric, "Dask's optimizer fails on its join and per-point grouping, on some partitionings"
    )
    _present(prep, prep.frame, metric, group=group, a=a, b=b)
    centres = _centroids(prep, centroids, cluster=cluster, features=features)
    stats = nearest_centroid_sums(
        prep.frame,
        centres,
        prep.estimation,
        code=_CODE,
        features=prep.features,
        sums={1: (_SUM_A, _COUNT_A), 2: (_SUM_B, _COUNT_B)},
        metric=metric,
        workaround=_KERNEL_WORKAROUND,
    )
    means = stats.select(
        *prep.estimation.estimates,
        _over_positive(nw.col(_SUM_A), _f64(_COUNT_A)).alias("__fa_mean_a"),
        _over_positive(nw.col(_SUM_B), _f64(_COUNT_B)).alias("__fa_mean_b"),
    )
    # A group without points has no mean (null), and safe_div keeps null; coordinates so large
    # that squares overflow make both means inf, and inf/inf is undefined too.
    ratio = safe_div(nw.col("__fa_mean_a"), nw.col("__fa_mean_b")).alias(metric)
    # (two steps: narwhals would build the division twice inside nan_to_null)
    result = means.with_columns(ratio).select(
        *prep.estimation.estimates, nan_to_null(nw.col(metric)).alias(metric)
    )
    return _conclude(prep, result, [metric])


# --- silhouette difference -------------------------------------------------------------------


def _at_least_two_clusters(prep: _Prepared, cluster: str) -> validate.Check:
    """Every partition has at least two clusters (the silhouette needs a nearest other one)."""
    k = nw.col(cluster).n_unique().cast(nw.Int64).alias("__fa_k")
    per = aggregate(prep.frame, prep.by, k)
    offenders = per.filter(nw.col("__fa_k") < 2)
    head = f"cluster={cluster!r}: silhouette_difference needs at least 2 clusters"
    if prep.by:
        # a partition holds rows, and a null label is refused first: fewer than 2 is one
        return validate.offending(
            offenders, prep.by, f"{head} in every partition; ", " partition(s) have only one"
        )
    counts = offenders.select(nw.len().cast(nw.Int64).alias("n"))
    summary = validate.first_offender(counts, offenders, ["__fa_k"], "k")
    message = validate.message(f"{head}; found ", nw.col("k0"), "")
    return validate.Check(summary, nw.when(nw.col("n") > 0).then(message))


def _refuse_resampling(ci: float | None, weight: str | None) -> None:
    """The silhouette has neither point weights nor a bootstrap interval: say why."""
    if ci is not None:
        msg = (
            f"ci={ci!r}: silhouette_difference has no bootstrap interval. A point's silhouette "
            "depends on its distances to every other point, so each replicate would recompute "
            "all N² distances with the drawn counts; frameaudit does not run that kernel and "
            "gives no interval from another estimator. (sample= reports the standard error of "
            "its sampled estimate of this data's value, not an interval over points.)"
        )
        raise InvalidParameterError(msg)
    if weight is not None:
        msg = (
            f"weight={weight!r}: silhouette_difference takes no point weights: a weighted "
            "silhouette needs every pairwise distance weighted inside the kernel, which "
            "frameaudit does not have. For integer weights, repeat each row that many times."
        )
        raise InvalidParameterError(msg)


@registered(
    "clustering",
    "single",
    best="0 = parity (above 0: a's points worse clustered)",
    range="[-2, 2]",
    roles={"features": "features"},
    note="(and no weight=, on an in-memory engine)",
)
@constraints(
    sample=Optional(Integer(2)),
    seed=Integer(0, 2**64 - 1),
    progress=Optional(Flag()),
    ci=UNCERTAINTY["ci"],
)
def silhouette_difference(
    frame: Any,
    *,
    cluster: str = "cluster",
    group: str = "group",
    a: Any,
    b: Any,
    features: Names,
    by: Names | None = None,
    sample: int | None = None,
    seed: int = 0,
    progress: bool | None = None,
    weight: str | None = None,
    ci: float | None = None,
) -> Any:
    r"""Silhouette difference: how much better group b's points sit in their clusters than a's.

    .. math::
        \mathrm{SD} = \operatorname{mean}_{i \in b} s_i - \operatorname{mean}_{i \in a} s_i,
        \qquad s_i = \frac{b_i - a_i}{\max(a_i, b_i)}

    s_i is the silhouette of point i (Rousseeuw 1987) computed on all points (Euclidean):
    a_i its mean distance to the other members of its cluster, b_i the smallest mean distance
    to another cluster; a point alone in its cluster has s_i = 0 (scikit-learn's convention).
    SD lies in [−2, 2]; 0 is most fair, positive values mean group a's points are worse
    clustered. holisticai 1.0.14 returns ½(mean_a − mean_b), i.e. −½·SD.

    Parameters
    ----------
    frame
        One row per point. **In-memory engines only** (Polars eager or lazy, pandas, pyarrow):
        the silhouette needs every pairwise distance, computed by a numpy/BLAS kernel when the
        result is computed (inside the plan on Polars: lazy in, lazy out). DuckDB and PySpark
        frames raise :class:`~frameaudit.UnsupportedBackendError`; select the needed columns
        into Polars or pandas first.
    cluster
        Cluster label column; at least 2 clusters per partition.
    group, a, b
        The group column and its two compared values (both must occur).
    features
        The coordinates: a list of numeric columns, or one fixed-size array column; finite.
    by
        Column(s): one independent result per partition (e.g. per clustering run).
    sample
        None (default): exact, every s_i. An integer m ≥ 2: evaluate the exact s_i (against
        all points) of a random sample of about m points from each of a and b, stratified by
        cluster, and report the standard error of the estimate. Each group's m points are
        shared among its clusters in proportion to their sizes (largest remainders), at least
        2 per cluster (or all its points when fewer), so the sample may exceed m by up to 2 per
        cluster. Groups with at most m points are taken whole.
    seed
        Seed of the sample. The sample is a function of the data and the seed only (not of
        the row order).
    progress
        Show a progress line on stderr: True, False, or None for "when the run is long"
        (more than 5·10⁸ distances).
    weight
        Not supported: an error. A point's silhouette depends on all its distances, so a
        weighted silhouette would need weights inside the kernel; for integer weights,
        repeat the rows.
    ci
        Not supported: an error. A bootstrap replicate of the silhouette would recompute
        all N² distances with the drawn counts; frameaudit gives no interval rather than one
        from another estimator. (``sample``'s ``std_error`` is the sampling error of the
        estimate of this data's value, not an interval over points.)

    Returns
    -------
    A frame of the input's kind, one row per partition sorted by ``by``: the ``by`` columns,
    ``silhouette_difference``, ``silhouette_a`` and ``silhouette_b`` (the groups' mean
    silhouettes, Float64); with ``sample``, also ``std_error`` (Float64, of
    ``silhouette_difference``; 0 when both groups were taken whole) and ``n_sampled`` (Int64,
    points evaluated).

    Notes
    -----
    Exact mode: O(N²·d) arithmetic (half the pairs, BLAS), memory O(N·(d + k)) plus one
    block of at most 256 × 256 distances per thread, never an N × N matrix. Sampled mode:
    O(m·N·d). With strata h = the clusters of group g (N_h points, m_h sampled, weight
    W_h = N_h/N_g), the group mean is the stratified estimate Σ_h W_h·ȳ_h and the standard
    error that of stratified sampling without replacement,
    √(Σ_g Σ_h W_h²·(1 − m_h/N_h)·s_h²/m_h) with s_h² of ddof 1: the differences between the
    clusters' silhouettes add nothing to it. Undefined (null) when a partition has no point of
    a or of b.

    Examples
    --------
    holisticai's example clustering:

    >>> import polars as pl
    >>> import frameaudit as fa
    >>> df = pl.DataFrame({
    ...     "group": ["a"] * 4 + ["b"] * 6,
    ...     "cluster": [0, 1, 1, 2, 0, 0, 0, 0, 1, 2],
    ...     "x": [-1, 1, 1, 0, -1, -1, -1, -1, 1, 0],
    ...     "y": [1, 1, 1, -1, 1, 1, 1, 1, 1, -1],
    ... })
    >>> fa.fair.silhouette_difference(df, a="a", b="b", features=["x", "y"])
    shape: (1, 3)
    ┌───────────────────────┬──────────────┬──────────────┐
    │ silhouette_difference ┆ silhouette_a ┆ silhouette_b │
    │ ---                   ┆ ---          ┆ ---          │
    │ f64                   ┆ f64          ┆ f64          │
    ╞═══════════════════════╪══════════════╪══════════════╡
    │ 0.0                   ┆ 1.0          ┆ 1.0          │
    └───────────────────────┴──────────────┴──────────────┘
    """
    metric = "silhouette_difference"
    # the kernel's results, named as in the result
    columns = {"mean_a": "silhouette_a", "mean_b": "silhouette_b"}
    if sample is not None:
        columns.update(std_error="std_error", n_sampled="n_sampled")
    outputs = list(columns.values())
    _refuse_resampling(ci, weight)
    prep = _prepare(
        frame,
        metric,
        cluster=cluster,
        group=group,
        a=a,
        b=b,
        by=by,
        outputs=outputs,
        features=features,
        distances=True,
    )
    _present(prep, prep.frame, metric, group=group, a=a, b=b)
    prep.checks.append(_at_least_two_clusters(prep, cluster))
    means = group_silhouettes(
        prep.frame,
        prep.estimation.source,
        by=prep.by,
        cluster=cluster,
        code=_CODE,
        features=prep.features,
        sample=sample,
        seed=seed,
        progress=progress,
        columns=columns,
        metric=metric,
        workaround=_KERNEL_WORKAROUND,
    )
    # NaN only comes from coordinates so large that distances overflow: undefined, null.
    mean_a, mean_b = nan_to_null(nw.col("silhouette_a")), nan_to_null(nw.col("silhouette_b"))
    result = means.select(
        *prep.by,
        (mean_b - mean_a).alias(metric),
        mean_a.alias("silhouette_a"),
        mean_b.alias("silhouette_b"),
        *outputs[2:],
    )
    return prep.estimation.finish(result, checks=prep.checks)
