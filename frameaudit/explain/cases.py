"""Case retrieval: the k nearest training cases of each query, and a Euclidean distance expression.

:func:`nearest_cases` is the retrieval step of case-explainer's ``CaseExplainer`` done for all
queries at once: exact Euclidean k-nearest neighbours, optionally in the space standardised on
the training data, returned as the long (query, neighbour) frame that
:func:`frameaudit.explain.correspondence` reads. The search itself is a numpy/BLAS kernel
(:mod:`frameaudit._kernels.knn`) that runs when the result is computed, inside the Polars plan.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
from typing import Any, Literal, overload

import narwhals.stable.v2 as nw

from frameaudit import _validate as validate
from frameaudit._engine import (
    NEIGHBOURS,
    PolarsExpr,
    expressions,
    from_engine,
    nearest_rows,
    require_kernel_engine,
)
from frameaudit._params import Choice, Flag, Integer, Optional, constraints, strict
from frameaudit._registry import registered
from frameaudit._roles import Names, Role, bind, column_names
from frameaudit.exceptions import InvalidDtypeError, InvalidParameterError

__all__ = ["euclidean_distance", "nearest_cases"]


_WORKAROUND = "collect the feature, label and id columns of both frames into Polars first"


@registered("explain", "table")
@constraints(k=Integer(1), standardize=Flag(), exclude_self=Flag(), progress=Optional(Flag()))
def nearest_cases(
    train: Any,
    queries: Any,
    *,
    features: Names,
    label: str = "label",
    k: int = 5,
    id: str | None = None,
    standardize: bool = True,
    exclude_self: bool = False,
    carry: Names | None = None,
    progress: bool | None = None,
) -> Any:
    r"""Find the ``k`` nearest training cases of every query row (exact Euclidean distance).

    The retrieval step of case-explainer's ``CaseExplainer``, for all queries in one batched
    computation. With ``standardize=True`` both frames are scaled with the training mean and
    population standard deviation (scikit-learn's ``StandardScaler``, as case-explainer does;
    a constant feature keeps scale 1) and distances are measured in that space.

    Parameters
    ----------
    train
        Polars DataFrame/LazyFrame, pandas DataFrame or pyarrow Table: the training cases.
    queries
        A frame of the same family with the query rows (it may be ``train`` itself).
    features
        Numeric feature column(s), present in both frames.
    label
        Column of ``train`` with each case's class.
    k
        Neighbours per query, ``1 <= k <=`` the number of training rows (minus one when the
        query's own row is excluded).
    id
        Optional column of both frames identifying rows (unique within each frame). Without
        it, rows are identified by their 0-based position.
    standardize
        Measure distances in the space standardised on ``train``.
    exclude_self
        Leave out the training row whose ``id`` equals the query's (leave-one-out retrieval
        when ``queries`` is ``train``); needs ``id``.
    carry
        Column(s) of ``queries`` copied onto each of its neighbour rows, e.g. the prediction
        that :func:`~frameaudit.explain.correspondence` compares with.
    progress
        Show a progress bar (tqdm: on stderr, a widget in Jupyter) while the neighbours are
        searched: True, False, or None for "when the search is long" (more than 5·10⁹ query ×
        training row pairs, a few seconds).

    Returns
    -------
    A frame of ``train``'s kind with one row per (query, neighbour), sorted by query and rank:
    ``query`` (the query's id or position), ``rank`` (Int64, 1 = nearest), ``case`` (the
    training row's id or position), ``distance`` (Float64), the ``label`` column, then the
    ``carry`` columns. Ties in distance go to the lower training position.

    Raises
    ------
    FrameAuditError
        Non-numeric features, null/NaN/infinite feature values, ``k`` < 1 or larger than the
        training set, duplicate or null ids, ``exclude_self`` without ``id``, DuckDB/PySpark
        frames.

    Notes
    -----
    O(m·n·d) for m queries and n training rows, in BLAS: chunks of queries are screened
    against tiles of training rows small enough to stay in a core's cache (2 MiB of scores
    per worker thread, one per core, and about 20 MiB to re-screen candidates at k = 10), so
    memory stays O(cores × k + (n + m)·d) and no all-pairs matrix exists. A float32
    screening pass with a rigorous rounding margin picks the candidates and float64 re-scores
    them, so the neighbours are those of an exact float64 search. The kernel needs the
    feature columns in memory: it runs on Polars (pandas and pyarrow go through Arrow), when
    the result is computed; a lazy input stays lazy until then. DuckDB and PySpark frames
    are refused (collect the features first).

    Examples
    --------
    >>> import polars as pl
    >>> import frameaudit as fa
    >>> train = pl.DataFrame({"x": [0.0, 1.0, 2.0, 10.0], "label": [0, 0, 1, 1]})
    >>> queries = pl.DataFrame({"x": [0.4, 9.0], "predicted": [0, 1]})
    >>> cases = fa.explain.nearest_cases(
    ...     train, queries, features="x", k=2, standardize=False, carry="predicted"
    ... )
    >>> cases
    shape: (4, 6)
    ┌───────┬──────┬──────┬──────────┬───────┬───────────┐
    │ query ┆ rank ┆ case ┆ distance ┆ label ┆ predicted │
    │ ---   ┆ ---  ┆ ---  ┆ ---      ┆ ---   ┆ ---       │
    │ i64   ┆ i64  ┆ i64  ┆ f64      ┆ i64   ┆ i64       │
    ╞═══════╪══════╪══════╪══════════╪═══════╪═══════════╡
    │ 0     ┆ 1    ┆ 0    ┆ 0.4      ┆ 0     ┆ 0         │
    │ 0     ┆ 2    ┆ 1    ┆ 0.6      ┆ 0     ┆ 0         │
    │ 1     ┆ 1    ┆ 3    ┆ 1.0      ┆ 1     ┆ 1         │
    │ 1     ┆ 2    ┆ 2    ┆ 7.0      ┆ 1     ┆ 1         │
    └───────┴──────┴──────┴──────────┴───────┴───────────┘
    >>> fa.explain.correspondence(cases)["correspondence"].to_list()
    [1.0, 1.0]

    """
    if exclude_self and id is None:
        msg = (
            "exclude_self=True: needs id= (a column of both frames) to recognise a query's own row"
        )
        raise InvalidParameterError(msg)
    carried = column_names(Role("carry", carry, many=True, optional=True))
    bound = bind(
        train,
        [
            Role("features", features, many=True, dtype="numeric"),
            Role("label", label),
            Role("id", id, optional=True),
        ],
        outputs=NEIGHBOURS,
        frame_name="train",
    )
    source, names = bound.source, bound.columns["features"]
    # carried columns are copies from queries: features and the id may be carried too
    clash = sorted(set(carried) & {*NEIGHBOURS, label})
    if clash:
        taken = ", ".join(NEIGHBOURS)
        msg = (
            f"carry={carry!r}: {clash[0]!r} is already an output column ({taken} and the "
            f"label={label!r} column)"
        )
        raise InvalidParameterError(msg)
    ids = {id: "id"} if id is not None else {}
    metric = "nearest_cases"
    # before the queries are brought to the data's engine, which the kernel does not run on
    require_kernel_engine(source, metric, _WORKAROUND)
    query_frame = source.align(
        queries,
        {**dict.fromkeys(names, "features"), **ids, **dict.fromkeys(carried, "carry")},
        frame_name="queries",
    )
    for column in names:
        validate.require_dtype(query_frame, column, "features", "numeric")
    for column in carried:
        validate.require_dtype(query_frame, column, "carry", "key")
    if id is not None:
        train_id, query_id = source.frame.collect_schema()[id], query_frame.collect_schema()[id]
        if train_id != query_id:
            msg = (
                f"id={id!r}: the ids of train ({train_id}) and of queries ({query_id}) must "
                "have the same dtype; cast one of them"
            )
            raise InvalidDtypeError(msg)
    checks = [validate.no_nulls(source.frame, {label: "label", **ids})]
    if id is not None:
        checks += [
            validate.no_nulls(query_frame, {id: "id"}),
            validate.unique_within(source.frame, [id], f"id={id!r} (train)", "ids identify rows"),
            validate.unique_within(query_frame, [id], f"id={id!r} (queries)", "ids identify rows"),
        ]
    found = nearest_rows(
        source.frame,
        query_frame,
        source,
        features=names,
        label=label,
        id=id,
        carry=carried,
        k=k,
        standardize=standardize,
        exclude_self=exclude_self,
        progress=progress,
        metric=metric,
        workaround=_WORKAROUND,
    )
    return from_engine(found, source, sort_by=["query", "rank"], checks=checks)


@overload
def euclidean_distance(
    x: Sequence[str], y: Sequence[str], *, backend: Literal["narwhals"] = "narwhals"
) -> nw.Expr: ...


@overload
def euclidean_distance(
    x: Sequence[str], y: Sequence[str], *, backend: Literal["polars"]
) -> PolarsExpr: ...


@strict
def euclidean_distance(
    x: Sequence[str], y: Sequence[str], *, backend: Literal["narwhals", "polars"] = "narwhals"
) -> nw.Expr | PolarsExpr:
    r"""Euclidean distance between two sets of feature columns, as a column expression.

    :math:`\sqrt{\sum_j (x_j - y_j)^2}` row by row, with ``x`` and ``y`` column names paired
    in order (case-explainer's ``euclidean_distance``, vectorised over rows). A null in any
    column gives null, a NaN gives NaN: nothing is skipped.

    Parameters
    ----------
    x, y
        Equally long lists of numeric column names.
    backend
        ``"narwhals"`` (default) returns a narwhals expression, usable on every backend through
        ``narwhals.from_native(frame)``; ``"polars"`` returns a Polars expression for
        ``pl.DataFrame.select`` / ``with_columns``.

    Returns
    -------
    An expression named ``distance`` (Float64).

    Examples
    --------
    The seed's example, distance between (1, 2, 3) and (1.5, 2.5, 3.5):

    >>> import polars as pl
    >>> import narwhals.stable.v2 as nw
    >>> import frameaudit as fa
    >>> df = pl.DataFrame({"a1": [1.0], "a2": [2.0], "a3": [3.0],
    ...                    "b1": [1.5], "b2": [2.5], "b3": [3.5]})
    >>> a, b = ["a1", "a2", "a3"], ["b1", "b2", "b3"]
    >>> round(df.select(fa.explain.euclidean_distance(a, b, backend="polars")).item(), 3)
    0.866
    >>> round(nw.from_native(df).select(fa.explain.euclidean_distance(a, b)).item(), 3)
    0.866

    """
    Choice(("narwhals", "polars")).check("backend", backend)
    left = validate.as_names(x, "x")
    right = validate.as_names(y, "y")
    if not left or len(left) != len(right):
        msg = f"x={x!r}, y={y!r}: expected two equally long, non-empty lists of column names"
        raise InvalidParameterError(msg)
    module = expressions(backend)
    squares = []
    for a, b in zip(left, right, strict=True):
        diff = module.col(a).cast(module.Float64) - module.col(b).cast(module.Float64)
        squares.append(diff * diff)
    # A plain sum, not sum_horizontal: sum_horizontal would skip nulls.
    return functools.reduce(operator.add, squares).sqrt().alias("distance")  # type: ignore[no-any-return]
