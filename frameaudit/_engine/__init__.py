"""The engine boundary: the only code that knows which kinds of frame exist.

The metric families hold definitions written in narwhals (roles, checks, formulas); everything
that depends on the frame library that runs them lives here, so that a family reads the same
on every engine:

* :mod:`~frameaudit._engine.convert`: frames in (:func:`to_engine`, :meth:`Source.align`, small
  frames from Python values) and results out (:func:`from_engine`, same kind out as in), and the
  refusal of what Dask cannot run;
* :mod:`~frameaudit._engine.checks`: what a value check is, and running the checks of a call
  inside its result's plan (DuckDB and Spark raise through their raise-an-error functions);
* :mod:`~frameaudit._engine.text`: values in check messages, formatted in the engine as
  Python's ``repr`` writes them;
* :mod:`~frameaudit._engine.plans`: the plan steps whose best form depends on the engine,
  with the fast paths on Polars that a proof in the same plan chooses (the screens over
  neighbouring rows among them);
* :mod:`~frameaudit._engine.kernels`: the numpy kernels run on a plan's rows;
* :mod:`~frameaudit._engine.resample`: the bootstrap's unit counts and percentile intervals;
* :mod:`~frameaudit._engine.combos`: the combos of per-group values;
* :mod:`~frameaudit._engine.estimate`: one call's estimation (units, weights, bootstrap,
  interval, the finished frame), used by every family.

The imports go one way: this package uses :mod:`frameaudit._expr`, :mod:`frameaudit._combos`,
:mod:`frameaudit.exceptions` and :mod:`frameaudit._kernels`, and nothing that uses it
(``tests/test_imports.py`` checks it).
"""

from __future__ import annotations

from frameaudit._engine import text
from frameaudit._engine.checks import (
    Check,
    Diagnosis,
    Proof,
    Rule,
    Written,
    first_failed,
    given,
    merge_rules,
)
from frameaudit._engine.combos import combined
from frameaudit._engine.convert import (
    Kind,
    PolarsExpr,
    Source,
    eager,
    expressions,
    from_engine,
    is_bool,
    is_frame,
    long_form,
    schema_names,
    to_engine,
)
from frameaudit._engine.estimate import Estimation, Estimator, GroupedViews
from frameaudit._engine.kernels import (
    NEIGHBOURS,
    group_silhouettes,
    nearest_centroid_sums,
    nearest_rows,
    require_kernel_engine,
    run_kernel,
)
from frameaudit._engine.native import native_step
from frameaudit._engine.plans import (
    PROVED,
    FastPlan,
    agreement_screen,
    cached,
    count_distinct,
    exact_means,
    exact_sums,
    order_marks,
    order_within,
    per_order,
    proven_or_exact,
    repeats_within,
    running_along,
    sorted_screen,
    sum_before,
)
from frameaudit._engine.resample import (
    MAX_SEED,
    POINT,
    REPLICATE,
    SIDE,
    UNDEFINED,
    Bootstrap,
    Resampling,
    distinct_sizes,
    grouped_views,
    interval,
    paired_difference,
    paired_replicates,
    resampling,
)

__all__ = [
    "MAX_SEED",
    "NEIGHBOURS",
    "POINT",
    "PROVED",
    "REPLICATE",
    "SIDE",
    "UNDEFINED",
    "Bootstrap",
    "Check",
    "Diagnosis",
    "Estimation",
    "Estimator",
    "FastPlan",
    "GroupedViews",
    "Kind",
    "PolarsExpr",
    "Proof",
    "Resampling",
    "Rule",
    "Source",
    "Written",
    "agreement_screen",
    "cached",
    "combined",
    "count_distinct",
    "distinct_sizes",
    "eager",
    "exact_means",
    "exact_sums",
    "expressions",
    "first_failed",
    "from_engine",
    "given",
    "group_silhouettes",
    "grouped_views",
    "interval",
    "is_bool",
    "is_frame",
    "long_form",
    "merge_rules",
    "native_step",
    "nearest_centroid_sums",
    "nearest_rows",
    "order_marks",
    "order_within",
    "paired_difference",
    "paired_replicates",
    "per_order",
    "proven_or_exact",
    "repeats_within",
    "require_kernel_engine",
    "resampling",
    "run_kernel",
    "running_along",
    "schema_names",
    "sorted_screen",
    "sum_before",
    "text",
    "to_engine",
]
