"""A comparison of systems: paired differences, their intervals, p-values and corrections.

A family's builder (:mod:`frameaudit.compare`) says which metric calls a comparison makes;
:func:`compared` runs each on every pair (baseline, other system) twice, within
:func:`~frameaudit._engine.paired_replicates`: once with paired bootstrap replicates, once
with the swaps of the randomisation test, and :func:`~frameaudit._engine.paired_difference`
turns the two into the difference, its interval and its p-value (SPEC §7). Every draw and
sum runs in the input's engine; the table of differences is small and is Polars.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import narwhals.stable.v2 as nw
import numpy as np
import polars as pl

from frameaudit._engine import (
    REPLICATE,
    SIDE,
    Bootstrap,
    paired_difference,
    paired_replicates,
)
from frameaudit._params import UNCERTAINTY
from frameaudit._registry import entry, metrics
from frameaudit.compare._result import Comparison
from frameaudit.exceptions import ColumnNotFoundError, InvalidParameterError
from frameaudit.report import _tables

__all__ = [
    "CORRECTIONS",
    "Call",
    "Derived",
    "Options",
    "Prepared",
    "adjusted",
    "compared",
    "single_calls",
]

Correction = Literal["holm", "bh"]
CORRECTIONS: tuple[Correction, ...] = ("holm", "bh")
_SHOWN_MISSING = 3


@dataclass(frozen=True)
class Call:
    """One metric call of a comparison: ``function(frame, **arguments, by=..., ci=...)``.

    ``keys``: the output columns beside ``by`` that key a value (``combo``, or the group
    columns with ``combo=None``; none for a single number).
    """

    metric: str
    function: Callable[..., Any]
    arguments: Mapping[str, Any]
    keys: Sequence[str] = ()
    derived: Sequence[Derived] = ()
    """Further rows computed from the same replicates' values (a group metric's combos)."""


@dataclass(frozen=True)
class Derived:
    """Rows a comparison derives from a call's replicate values, with no second call.

    ``values(frame, by)`` maps the call's values (one row per ``by`` and the call's keys, the
    metric's column) to one row per ``by`` and ``keys``; ``order`` lists, per key, its values
    in the order the table shows them.
    """

    keys: Sequence[str]
    values: Callable[[pl.DataFrame, list[str]], pl.DataFrame]
    order: Mapping[str, Sequence[Any]] = field(default_factory=dict)


Prepared = Callable[[nw.LazyFrame[Any], Any], nw.LazyFrame[Any]]
"""``prepared(rows, baseline)``: a family's check or change of a comparison's rows, once the
system column, the systems and the baseline are checked."""


@dataclass(frozen=True)
class Options:
    """The options every family's comparison takes, as the caller gave them."""

    by: str | Sequence[str] | None
    ci: float
    n_boot: int
    n_perm: int
    seed: int
    correction: Correction | None
    on_missing: Literal["error", "drop"]

    @property
    def partitions(self) -> list[str]:
        """The ``by`` columns as a list."""
        by = self.by
        return [] if by is None else [by] if isinstance(by, str) else list(by)


def compared(
    frame: Any,
    calls: Sequence[Call],
    *,
    family: str,
    system: str,
    baseline: Any,
    units: Sequence[str],
    unit_name: str,
    options: Options,
    parameters: Mapping[str, Any],
    prepared: Prepared | None = None,
    record_of: Any = None,
) -> Comparison:
    """Run ``calls`` on each pair of the baseline and another system, and tabulate them.

    ``parameters``: the family's own roles and options, as the comparison records them (the
    shared ones are added). ``prepared``: a family's own check or change of the rows, once the
    systems and the baseline are known (:data:`Prepared`). ``record_of``: the caller's frame,
    where ``frame`` is derived from it (the audit record describes the caller's). The options
    every family's comparison shares are checked here, before any data is read.
    """
    by, ci, n_boot, n_perm = options.partitions, options.ci, options.n_boot, options.n_perm
    correction, on_missing = options.correction, options.on_missing
    if correction is not None and correction not in CORRECTIONS:
        raise InvalidParameterError.choice("correction", correction, CORRECTIONS)
    if on_missing not in ("error", "drop"):
        raise InvalidParameterError.choice("on_missing", on_missing, ("error", "drop"))
    # the permutations are replicates of the same draws as the bootstrap's: the same range
    UNCERTAINTY["n_boot"].check("n_perm", n_perm)
    native = nw.from_native(frame)
    lazy = native.lazy() if isinstance(native, nw.DataFrame) else native
    names = lazy.collect_schema().names()
    if system not in names:
        raise ColumnNotFoundError.build(system, parameter="system", available=names)
    found = _tables.eager(lazy.select(system).unique().to_native())[system].to_list()
    if None in found:
        msg = f"system={system!r}: expected every row to name its system, found missing values"
        raise InvalidParameterError(msg)
    systems = tuple(sorted(found))
    if len(systems) < 2:
        msg = (
            f"system={system!r}: expected at least two systems to compare, found "
            f"{len(systems)} ({', '.join(map(repr, systems)) or 'none'})"
        )
        raise InvalidParameterError(msg)
    base = systems[0] if baseline is None else baseline
    if base not in systems:
        raise InvalidParameterError.choice("baseline", base, systems)
    if prepared is not None:
        lazy = prepared(lazy, base)
    lazy, dropped = _common_units(lazy, system, systems, [*by, *units], on_missing)
    distinct = lazy.select(*by, *units).unique()
    counted = nw.len().cast(nw.Int64).alias(unit_name)
    counts = distinct.group_by(*by).agg(counted) if by else distinct.select(counted)
    plan = _Plan(
        system,
        list(by),
        _tables.eager(counts.to_native()),
        unit_name,
        Bootstrap(ci, n_boot, options.seed),
        n_perm,
    )
    rows = []
    for other in (s for s in systems if s != base):
        pair = lazy.filter(nw.col(system).is_in([base, other])).with_columns(
            (nw.col(system) == other).cast(nw.Int64).alias(system)
        )
        rows += [table for call in calls for table in plan.rows(call, pair.to_native(), other)]
    table = pl.concat(rows, how="diagonal_relaxed")
    if by:
        table = table.sort(list(by), maintain_order=True, nulls_last=True)
    table = table.with_columns(adjusted(table["p_value"], correction))
    recorded = {"system": system, "baseline": base, **parameters, "by": options.by, "ci": ci}
    recorded |= {"n_boot": n_boot, "n_perm": n_perm, "seed": options.seed}
    recorded |= {"correction": correction, "on_missing": on_missing}
    source = frame if record_of is None else record_of
    record = _tables.record(source, units=[*by, *units], unit=unit_name)
    return Comparison(family, table, base, systems, recorded, dropped, record)


def single_calls(
    family: str,
    chosen: Sequence[str] | None,
    arguments: Mapping[str, Any],
    given: Mapping[str, Any],
) -> tuple[list[str], list[Call]]:
    """The calls of a family's metrics that give one number with an interval, and their names.

    ``chosen``: the metrics' names (None: every such metric whose roles are given).
    ``arguments`` go to every call; ``given`` holds the options and roles a metric takes only
    where it declares them (:attr:`~frameaudit._registry.Metric.options`,
    :attr:`~frameaudit._registry.Metric.roles`).
    """
    comparable = [m for m in metrics(family) if m.kind != "table" and m.unit is not None]
    names = [m.name for m in comparable]
    if chosen is None:
        chosen = [m.name for m in comparable if all(given[r] is not None for r in m.roles.values())]
    calls = []
    for name in chosen:
        if name not in names:
            raise InvalidParameterError.choice("metrics", name, names)
        declared = entry(name)
        for role in declared.roles.values():
            if given[role] is None:
                msg = f"metrics={name!r}: expected {role}= to compute it, found none"
                raise InvalidParameterError(msg)
        own = {option: given[option] for option in declared.options}
        own |= {parameter: given[role] for parameter, role in declared.roles.items()}
        calls.append(Call(name, declared.function, {**arguments, **own}))
    return list(chosen), calls


_ALL = "__fa_all"


@dataclass(frozen=True)
class _Plan:
    """What every call of a comparison shares.

    The system column, the partition, the units per partition, the bootstrap and the number
    of permutations.
    """

    system: str
    by: list[str]
    counts: pl.DataFrame
    unit_name: str
    bootstrap: Bootstrap
    n_perm: int

    def rows(self, call: Call, pair: Any, other: Any) -> list[pl.DataFrame]:
        """One call's rows of the table for the pair (baseline, ``other``), after its derived rows.

        All from one set of replicates and permutations.
        """
        boot = self._replicates(call, pair, self.bootstrap.n_boot, swaps=False)
        perm = self._replicates(call, pair, self.n_perm, swaps=True)
        # a derivation is a family's public function: it sees the internal keys renamed
        taken = set(boot.columns)
        plain = {name: _free(name.removeprefix("__fa_"), taken) for name in (SIDE, REPLICATE, _ALL)}
        back = {v: k for k, v in plain.items()}
        every = [*self.by, *plain.values()]
        shown = []
        for derived in call.derived:  # the derived rows lead (a group metric's combos)
            values = (
                derived.values(boot.rename(plain), every).rename(back),
                derived.values(perm.rename(plain), every).rename(back),
            )
            shown.append(self._table(call.metric, derived.keys, values, other, derived.order))
        listed = {k: v for k, v in call.arguments.items() if isinstance(v, list)}
        shown.append(self._table(call.metric, call.keys, (boot, perm), other, listed))
        return shown

    def _table(
        self,
        metric: str,
        keys: Sequence[str],
        values: tuple[pl.DataFrame, pl.DataFrame],
        other: Any,
        order: Mapping[str, Sequence[Any]],
    ) -> pl.DataFrame:
        """The rows of ``metric``'s ``values`` (bootstrap, permutations) keyed by ``keys``."""
        boot = self.bootstrap
        # the constant key: the units' frame is keyed by it where no by= column keys it
        counts = self.counts.with_columns(pl.lit(0).alias(_ALL))
        replicates, swapped = (nw.from_native(frame.lazy()) for frame in values)
        difference = paired_difference(
            replicates,
            swapped,
            [*self.by, *keys, _ALL],
            metric,
            boot,
            units=nw.from_native(counts.lazy()),
            permutations=self.n_perm,
        )
        found = _ordered(_tables.eager(difference.to_native()), [*self.by, *keys], order)
        combo = pl.col("combo") if "combo" in keys else pl.lit(None)
        return found.select(
            *self.by,
            pl.lit(metric).alias("metric"),
            combo.cast(pl.String).alias("combo"),
            _group_label(found, keys).alias("group"),
            pl.lit(str(other)).alias("system"),
            pl.col(metric).alias("value"),
            pl.col(f"baseline_{metric}").alias("baseline_value"),
            "difference",
            "difference_lo",
            "difference_hi",
            "p_value",
            self.unit_name,
        )

    def _replicates(self, call: Call, pair: Any, count: int, *, swaps: bool) -> pl.DataFrame:
        """The call's value per (by, side, keys, replicate), paired or swapped."""
        with paired_replicates(self.system, swaps=swaps):
            result = call.function(
                pair,
                **call.arguments,
                by=[*self.by, self.system],
                ci=self.bootstrap.level,
                n_boot=count,
                seed=self.bootstrap.seed,
            )
        values = _tables.eager(result).rename({self.system: SIDE})
        return values.with_columns(pl.lit(0).alias(_ALL))


def _free(name: str, taken: set[str]) -> str:
    """``name``, with underscores added until it is none of ``taken``."""
    while name in taken:
        name += "_"
    return name


def _ordered(
    found: pl.DataFrame, keys: Sequence[str], order: Mapping[str, Sequence[Any]]
) -> pl.DataFrame:
    """``found`` sorted by ``keys``; a key ``order`` lists the values of in that order."""
    return found.sort(
        [pl.col(k).cast(pl.Enum(list(order[k]))) if k in order else pl.col(k) for k in keys],
        nulls_last=True,
    )


def _group_label(found: pl.DataFrame, keys: Sequence[str]) -> pl.Expr:
    """A per-group row's group as text ("f/young" for several columns); null otherwise."""
    columns = [k for k in keys if k != "combo"]
    if not columns:
        return pl.lit(None, dtype=pl.String)
    return _tables.label(columns, found.schema)


def _common_units(
    lazy: nw.LazyFrame[Any],
    system: str,
    systems: Sequence[Any],
    units: Sequence[str],
    on_missing: str,
) -> tuple[nw.LazyFrame[Any], int]:
    """``lazy`` where every system has every unit; else an error naming a few, or dropped."""
    units = list(units)
    per_unit = lazy.select(*units, system).unique().group_by(*units).agg(nw.len().alias(_N))
    missing = _tables.eager(per_unit.filter(nw.col(_N) < len(systems)).to_native())
    if missing.is_empty():
        return lazy, 0
    if on_missing == "error":
        shown = ", ".join(
            "(" + ", ".join(f"{k}={v!r}" for k, v in row.items()) + ")"
            for row in missing.drop(_N).sort(units).head(_SHOWN_MISSING).iter_rows(named=True)
        )
        msg = (
            f"system={system!r}: expected every unit in every system, found {missing.height} "
            f"unit(s) missing from some system (e.g. {shown}); pass on_missing='drop' to "
            "compare the units every system has"
        )
        raise InvalidParameterError(msg)
    common = per_unit.filter(nw.col(_N) == len(systems)).select(units)
    return lazy.join(common, on=units, how="inner"), missing.height


_N = "__fa_systems"


def adjusted(p_values: pl.Series, correction: Correction | None) -> pl.Series:
    """The p-values adjusted for multiple comparisons over all of them (nulls stay null).

    ``"holm"``: Holm's step-down adjustment (family-wise error); ``"bh"``: Benjamini and
    Hochberg's (false discovery rate); None: unadjusted.
    """
    values = p_values.cast(pl.Float64).to_numpy()
    if correction is None:
        return pl.Series("p_adjusted", values).fill_nan(None)
    defined = ~np.isnan(values)
    p = values[defined]
    m = len(p)
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if correction == "holm":
        scaled = np.maximum.accumulate((m - np.arange(m)) * ranked)
    else:
        scaled = np.minimum.accumulate(m / np.arange(m, 0, -1) * ranked[::-1])[::-1]
    result = np.full(m, np.nan)
    result[order] = np.minimum(scaled, 1.0)
    out = values.copy()
    out[defined] = result
    return pl.Series("p_adjusted", out).fill_nan(None)
