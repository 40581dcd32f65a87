"""One estimation path for every family: units, their weights, the bootstrap, the finished frame.

A metric's value is a function of sums over its resampling units (SPEC §5: the ranking, the
point, the sample, the query). :class:`Estimation` is everything a call needs to turn those
sums into its output, whatever the family:

* the **units**: the columns that key one (the partition's among them) and the name of the
  output column that counts them (``rankings``, ``points``, ``samples``, ``queries``);
* the **unit weights** (``weight=``): a unit of weight 0 is left out, and a partition whose
  units all weigh 0 keeps a row with a null value and 0 units (:meth:`Estimation.finish`);
* the **bootstrap** (``ci=``): each unit counts :math:`k_{b,u}` times in replicate b
  (:meth:`Estimation.summed`), the replicates' values become the interval
  (:meth:`Estimation.interval`), and the plan runs with the replicates' engine;
* the **finished frame**: the caller's kind, sorted, with the call's value checks.

The unit and count names are arguments: nothing of a family travels with it. A family asks
for it with :meth:`Estimator.requested` (before it reads the data: the interval's output
names are known then), builds it with :meth:`Estimator.over`, sums its terms with
:meth:`~Estimation.summed`, computes its values per estimate (the partition's keys, and with
a bootstrap the replicate) and hands them to :meth:`~Estimation.interval` and
:meth:`~Estimation.finish`.

Comparisons of systems resample the same units in every system: a system column is then one
of the ``keys`` of :meth:`~Estimation.summed`, never of the units, so that a drawn unit brings
every system's rows with the same count (paired draws).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import narwhals.stable.v2 as nw
import polars as pl

from frameaudit._combos import COMBO, COMBOS, Combos
from frameaudit._engine.checks import Check
from frameaudit._engine.combos import combined
from frameaudit._engine.convert import Kind, Source, collected, from_engine, long_form
from frameaudit._engine.plans import cached, count_distinct, exact_sums
from frameaudit._engine.resample import (
    REPLICATE,
    SINGLE,
    UNDEFINED,
    Bootstrap,
    Resampling,
    distinct_sizes,
    interval,
    requested_bootstrap,
    resampling,
)
from frameaudit._expr import WHOLE, aggregate, distinct, partitioned

__all__ = ["Estimation", "Estimator", "GroupedViews"]


class GroupedViews(NamedTuple):
    """Every view of a group metric's bootstrap, from one computation of its replicates.

    What a group metric's call with ``combo=None`` and ``ci=`` returns inside
    :func:`~frameaudit._engine.resample.grouped_views`, each an eager Polars frame.
    """

    values: pl.DataFrame
    """Per (partition, group): the value, its interval and the size, as ``combo=None`` gives."""
    combos: pl.DataFrame
    """Per (partition, combo): every combo and its interval, as ``combo=COMBOS`` gives."""
    replicates: pl.DataFrame
    """Per (partition, group, ``REPLICATE``): each replicate's value and size, the point
    estimate's among them, as :func:`~frameaudit._engine.resample.paired_replicates` gives."""


@dataclass(frozen=True)
class Estimation:
    """How one call estimates: its partition, its units, their weights and its bootstrap.

    Build it with :meth:`Estimator.over`.
    """

    source: Source
    by: list[str]
    units: list[str]
    """The columns that key a unit: the partition's (``WHOLE`` without ``by``) and the unit's."""
    estimator: Estimator
    """What the call asked for: the unit count's name and the bootstrap."""
    weight: str | None = None
    resampling: Resampling | None = None
    partitions: nw.LazyFrame[Any] | None = None
    """With ``weight=``: every partition of the frame, those whose units all weigh 0 too."""

    @property
    def counted(self) -> str:
        """The output column with the number of units behind a value (with a bootstrap)."""
        return self.estimator.counted

    @property
    def bootstrap(self) -> Bootstrap | None:
        """The bootstrap of ``ci=`` (None without)."""
        return self.estimator.bootstrap

    @property
    def partition(self) -> list[str]:
        """The columns that identify a partition: ``by``, or the constant ``WHOLE``."""
        return self.by or [WHOLE]

    @property
    def estimates(self) -> list[str]:
        """The keys of one estimate: the partition, and with a bootstrap the replicate."""
        return [*self.partition, REPLICATE] if self.bootstrap else self.partition

    @property
    def replicates(self) -> int:
        """The number of bootstrap replicates (0 without a bootstrap)."""
        return self.bootstrap.n_boot if self.bootstrap else 0

    def outputs(self, *values: str) -> list[str]:
        """The output columns an interval adds to ``values`` (:meth:`Estimator.outputs`)."""
        return self.estimator.outputs(*values)

    def unit_weight(self, *, integer: bool = False, ns: Any = nw) -> Any:
        """A row's unit weight (Float64), else 1 (Int64 with ``integer``, else Float64).

        An expression of ``ns``: narwhals, or Polars' own in a ``Written`` step.
        """
        if self.weight is not None:
            return ns.col(self.weight).cast(ns.Float64)
        return ns.lit(1, dtype=ns.Int64) if integer else ns.lit(1.0)

    def weight_kept(self, ns: Any) -> list[Any]:
        """The unit weight carried through an aggregation of rows that share it.

        A ``Written`` for :func:`~frameaudit._engine.plans.exact_sums`' ``also``: none
        without a weight.
        """
        return [ns.col(self.weight).max()] if self.weight is not None else []

    def point(self) -> Estimation:
        """The same estimation without the bootstrap: the point estimate's plan, on its own."""
        return replace(self, estimator=Estimator(self.counted), resampling=None)

    def summed(
        self,
        frame: nw.LazyFrame[Any],
        keys: Sequence[str],
        sums: Sequence[str],
        *,
        normalised: bool = False,
        floats: Sequence[str] | None = None,
    ) -> nw.LazyFrame[Any]:
        """The columns ``sums`` of ``frame`` summed per (estimate, ``keys``), exactly.

        ``frame`` holds rows of units. Without a bootstrap, over the partition's rows; with one,
        each unit counts k_{b,u} times in replicate b (:meth:`Resampling.summed`; a
        (partition, replicate, keys) that no drawn unit holds has no row, as in resampled
        data). ``normalised``: the statistic is a total over units, whose replicates are scaled
        to the partition's number of units (SPEC §5); ratios of sums need no scaling.
        ``floats``: the Float64 columns of ``sums``, where the caller knows them (the schema of
        a long plan costs a tenth of a millisecond or more to resolve).
        """
        if self.resampling is None:  # (the constant partition is added after the sums)
            return exact_sums(frame, [*self.partition, *keys], sums, floats=floats)
        if WHOLE in self.partition and WHOLE not in frame.collect_schema():
            frame = partitioned(frame, [])
        return self.resampling.summed(frame, self.partition, keys, sums, normalised=normalised)

    def sized(
        self,
        sums: nw.LazyFrame[Any],
        rows: nw.LazyFrame[Any],
        keys: Sequence[str],
        *,
        item: str,
        name: str,
    ) -> nw.LazyFrame[Any]:
        """``sums`` (per estimate and ``keys``) with the distinct ``item`` s of ``rows``: ``name``.

        The data's sizes, in every replicate too: the sizes a per-group output shows where the
        value does not divide by them (:meth:`summed_sized` for one that does).
        """
        cell = [*self.partition, *keys]
        return sums.join(count_distinct(rows, cell, {item: name}), on=cell, how="left")

    def group_sizes(
        self, rows: nw.LazyFrame[Any], keys: Sequence[str], *, item: str | None, name: str
    ) -> nw.LazyFrame[Any]:
        """Per ``keys`` over all of ``rows`` (every partition): each one's size, as ``name``.

        The distinct ``item`` s, else the rows, weighted by their unit weights: a group's size
        as the group metrics count it, for a reference distribution of the whole frame.
        """
        if item is not None:
            return count_distinct(rows, keys, {item: name})
        counted = nw.col(self.weight).cast(nw.Float64).sum() if self.weight else nw.len()
        return aggregate(rows, keys, counted.alias(name))

    def summed_sized(
        self,
        rows: nw.LazyFrame[Any],
        keys: Sequence[str],
        sums: Sequence[str],
        *,
        item: str,
        numerator: str,
        name: str,
        normalised: bool = False,
    ) -> nw.LazyFrame[Any]:
        """:meth:`summed`, with the distinct ``item`` s per (estimate, ``keys``) as ``name``.

        ``rows`` hold one row per (unit, item) at most and the ``numerator`` that the
        replicates sum. In a bootstrap replicate the size is a linearisation
        (:class:`~frameaudit._engine.resample.DistinctSizes`), whose terms are summed in the
        same pass over the draws as ``sums``.
        """
        if self.resampling is None:
            summed = self.summed(rows, keys, sums, normalised=normalised)
            return self.sized(summed, rows, keys, item=item, name=name)
        distinct = distinct_sizes(
            rows,
            self.partition,
            keys,
            item=item,
            units=self.units,
            numerator=numerator,
            name=name,
        )
        summed = self.summed(distinct.rows, keys, [*sums, SINGLE], normalised=normalised)
        return distinct.sized(summed, name)

    def grid(self, seen: nw.LazyFrame[Any]) -> nw.LazyFrame[Any]:
        """Every estimate: the partitions of ``seen`` (with a bootstrap, × the replicates).

        With a bootstrap the partitions come from the units, so that ``seen`` (the
        replicates' sums) is not read for them.
        """
        if self.resampling is None:
            return distinct(seen.select(self.partition))
        return self.resampling.estimates(self.partition)

    def completed(
        self,
        sums: nw.LazyFrame[Any],
        rows: nw.LazyFrame[Any],
        keys: Sequence[str],
        *,
        cells: nw.LazyFrame[Any] | None = None,
    ) -> nw.LazyFrame[Any]:
        """``sums`` (per estimate and ``keys``) with a row for every estimate and cell.

        The cells are the rows of ``cells`` (the ``keys`` and perhaps more columns, such as a
        listed group's size), or without it every cell of ``keys`` that occurs: in ``sums``
        without a bootstrap, in ``rows`` (the data the sums come from) with one. A cell that
        an estimate lacks has nulls in ``sums``' columns (a group no drawn unit holds, or one
        absent from a partition). Without a bootstrap, ``by`` or ``cells``, the one estimate
        has every cell that occurs: for an eager input, ``sums`` as they are (the grid's two
        joins were a sixth of a small call's time). A lazy input keeps them: without, ARP on
        10^8 rows from Parquet on Polars' streaming engine peaked at 3.6 GiB and NDKL at 2.0
        (the slow test's limit is 2 GiB; both pass with the joins).
        """
        if cells is None and self.bootstrap is None and not self.by and self.source.in_memory:
            return sums
        seen = rows
        if self.bootstrap is None:
            # the grid from the sums (small, cached): a scan of the rows for it was one more
            # branch reading them, and Polars' streaming engine held the rows between that
            # fast branch and the sums (EXP on 10^8 rows peaked at 2.5 GiB, 0.57 so)
            sums = cached(sums)
            seen = sums
        if cells is None:
            cells = distinct(seen.select(*keys))
        grid = self.grid(seen).join(cells, how="cross")
        return grid.join(sums, on=[*self.estimates, *keys], how="left")

    def with_replicates(self, frame: nw.LazyFrame[Any]) -> nw.LazyFrame[Any]:
        """``frame`` (keyed by the partition) once per estimate: × the replicates, if any."""
        if self.resampling is None:
            return frame
        return frame.join(self.resampling.numbers, how="cross")

    def long_form(
        self,
        frame: nw.LazyFrame[Any],
        keys: Sequence[str],
        columns: Sequence[str],
        *,
        name: str,
        picks: Mapping[str, Callable[[str], str]],
    ) -> nw.LazyFrame[Any]:
        """One row per (``keys``, c) for each of ``columns``, c in the column ``name``.

        Each output column of ``picks`` takes, in the row of c, the column ``pick(c)``
        (:func:`~frameaudit._engine.convert.long_form`, with the call's source).
        """
        return long_form(frame, keys, columns, self.source, name=name, picks=picks)

    def interval(
        self,
        values: nw.LazyFrame[Any],
        keys: Sequence[str],
        value: str,
        *,
        also: Sequence[str] = (),
        units: nw.LazyFrame[Any] | None = None,
    ) -> nw.LazyFrame[Any]:
        """Per (partition, ``keys``): ``value`` (and ``also``), with a bootstrap its interval.

        ``values`` holds them per (estimate, ``keys``). With a bootstrap, ``value_lo`` and
        ``value_hi`` follow the value, then ``also``, the units behind it (the partition's,
        or ``units``: a frame keyed by some of the partition and ``keys``, with the count in
        the column :attr:`counted`) and ``UNDEFINED`` (:func:`interval`).
        """
        estimate = [*self.partition, *keys]
        if self.bootstrap is None:
            return values.select(*estimate, value, *also)
        if self.bootstrap.replicates:  # a comparison's: every replicate's value
            return values.select(*estimate, REPLICATE, value, *also)
        assert self.resampling is not None
        if units is None:
            units = self.resampling.unit_counts(self.partition, self.counted)
        return interval(values, estimate, value, self.bootstrap, units=units, also=also)

    def intervals(
        self,
        values: nw.LazyFrame[Any],
        keys: Sequence[str],
        columns: Sequence[str],
        *,
        also: Sequence[str] = (),
        units: nw.LazyFrame[Any] | None = None,
    ) -> nw.LazyFrame[Any]:
        """Per (partition, ``keys``): each of several ``columns`` with its interval, one row.

        ``values`` holds the columns (and ``also``) per (estimate, ``keys``). With a bootstrap,
        each column c is followed by ``c_lo`` and ``c_hi``; then ``also`` (the point
        estimate's), the units behind them (:attr:`counted`) and each column's undefined
        replicates, ``c_undefined_replicates``: one interval computation over the long form (a
        ``metric`` column naming the column). Without one, the values; a comparison's
        bootstrap gives every replicate's (as :meth:`interval`).
        """
        estimate = [*self.partition, *keys]
        if self.bootstrap is None or self.bootstrap.replicates:
            replicate = [REPLICATE] if self.bootstrap is not None else []
            return values.select(*estimate, *replicate, *columns, *also)
        value = "__fa_value"
        long = self.long_form(
            values, [*estimate, REPLICATE, *also], columns, name="metric", picks={value: str}
        )
        result = self.interval(long, [*keys, "metric"], value, also=also, units=units)
        parts = {"": value, "_lo": f"{value}_lo", "_hi": f"{value}_hi", f"_{UNDEFINED}": UNDEFINED}
        metric = nw.col("metric")
        picks = [
            nw.when(metric == c).then(nw.col(source)).alias(f"{c}{suffix}")
            for c in columns
            for suffix, source in parts.items()
        ]
        wide = aggregate(
            result.with_columns(*picks),
            estimate,
            *(nw.col(f"{c}{suffix}").max() for c in columns for suffix in parts),
            *(nw.col(c).max() for c in also),
            nw.col(self.counted).max(),
        )
        return wide.select(
            *estimate,
            *(f"{c}{suffix}" for c in columns for suffix in ("", "_lo", "_hi")),
            *also,
            self.counted,
            *(f"{c}_{UNDEFINED}" for c in columns),
        )

    def grouped(
        self,
        values: nw.LazyFrame[Any],
        groups: Sequence[str],
        columns: Sequence[str],
        combo: Combos | None,
        *,
        also: Sequence[str] = (),
        checks: Sequence[Check] = (),
    ) -> Any:
        """A group metric's finished frame: its per-group values, or their combo(s).

        ``values`` holds ``columns`` (and ``also``, e.g. the group's size ``n``) per
        (estimate, ``groups``). ``combo`` None: one row per (partition, group), with
        ``also``; a combo: one row per partition, each column combined over the groups
        (:func:`~frameaudit._engine.combos.combined`); a list: one row per (partition,
        combo), the combo named in the column ``combo``. With a bootstrap each column has
        its interval (from the same replicates: a combo's from the replicates' combos);
        ``combo`` None inside :func:`~frameaudit._engine.resample.grouped_views`, every view
        (:meth:`views`).
        """
        columns, groups = list(columns), list(groups)
        if combo is None and self.bootstrap is not None and self.bootstrap.views:
            return self.views(values, groups, columns, also=also, checks=checks)
        if combo is None:
            return self.finish(self._valued(values, groups, columns, also), groups, checks=checks)
        return self._combined(values, columns, combo, checks=checks)

    def views(
        self,
        values: nw.LazyFrame[Any],
        groups: Sequence[str],
        columns: Sequence[str],
        *,
        also: Sequence[str] = (),
        checks: Sequence[Check] = (),
    ) -> GroupedViews:
        """Every view of :meth:`grouped`'s ``values`` (with a bootstrap), computed once.

        The values per (estimate, group), with the units behind each partition, are computed
        now in the caller's engine, with the call's ``checks``: a small frame (groups ×
        replicates per partition). The views are this estimation's steps on it, in Polars:
        the per-group intervals, the combos' and the replicates, as three calls would give.
        """
        assert self.resampling is not None
        groups, columns = list(groups), list(columns)
        units = self.resampling.unit_counts(self.partition, self.counted)
        held = collected(
            values.join(units, on=self.partition, how="left"),
            self.source,
            checks=checks,
            replicates=self.replicates,
        )
        frame = nw.from_native(held.lazy())
        source = Source(frame, Kind.POLARS_EAGER, nw.Implementation.POLARS, rows=held.height)
        partitions = self.partitions
        if partitions is not None:
            partitions = nw.from_native(collected(partitions, self.source).lazy())
        local = replace(self, source=source, partitions=partitions)
        counts = distinct(frame.select(*self.partition, self.counted))
        per_group = local._valued(frame, groups, columns, also, units=counts)
        estimate = [*self.partition, *groups]
        replicates = frame.select(*estimate, REPLICATE, *columns, *also)
        if not self.by:
            replicates = replicates.drop(WHOLE)
        return GroupedViews(
            local.finish(per_group, groups),
            local._combined(frame, columns, list(COMBOS), units=counts),
            from_engine(replicates, source, sort_by=[*self.by, *groups, REPLICATE]),
        )

    def _combined(
        self,
        values: nw.LazyFrame[Any],
        columns: Sequence[str],
        combo: Combos,
        *,
        checks: Sequence[Check] = (),
        units: nw.LazyFrame[Any] | None = None,
    ) -> Any:
        """:meth:`grouped` with a combo or several: the finished frame of the combos."""
        combos = [combo] if isinstance(combo, str) else list(combo)
        estimates = self.estimates

        def named(k: str, c: str) -> str:  # one combo: the column's own name; else a long form's
            return c if isinstance(combo, str) else f"__fa_{k}_{c}"

        table: nw.LazyFrame[Any] | None = None
        for c in columns:
            one = combined(values, estimates, c, combos, names={k: named(k, c) for k in combos})
            table = one if table is None else table.join(one, on=estimates, how="left")
        assert table is not None
        if isinstance(combo, str):
            result = self._valued(table, [], columns, (), units=units)
            return self.finish(result, [], checks=checks)
        picks = {c: (lambda k, c=c: named(k, c)) for c in columns}
        table = self.long_form(table, estimates, combos, name=COMBO, picks=picks)
        result = self._valued(table, [COMBO], columns, (), units=units)
        return self.finish(result, [COMBO], checks=checks, listed={COMBO: combos})

    def _valued(
        self,
        values: nw.LazyFrame[Any],
        keys: Sequence[str],
        columns: Sequence[str],
        also: Sequence[str],
        *,
        units: nw.LazyFrame[Any] | None = None,
    ) -> nw.LazyFrame[Any]:
        """Per (partition, ``keys``): ``columns`` (with a bootstrap, their intervals), ``also``.

        ``units``: the units behind each value, as in :meth:`interval`.
        """
        if len(columns) == 1:
            return self.interval(values, keys, columns[0], also=also, units=units)
        return self.intervals(values, keys, columns, also=also, units=units)

    def finish(
        self,
        result: nw.LazyFrame[Any],
        keys: Sequence[str] = (),
        *,
        checks: Sequence[Check] = (),
        listed: Mapping[str, Sequence[Any]] | None = None,
        sort_by: Sequence[str] | None = None,
    ) -> Any:
        """``result`` (per partition and ``keys``) in the caller's kind, with ``checks``.

        With unit weights, a partition whose units all weigh 0 has a row too where ``keys``
        can be listed (``listed``: each key's values; e.g. the combos): a null value, 0 units
        and every replicate undefined. The constant partition column is dropped; the rows are
        sorted by ``sort_by`` (default ``by`` and ``keys``).
        """
        keys = list(keys)
        listed = dict(listed or {})
        if self.partitions is not None and set(keys) <= set(listed):
            every = self.partitions
            for key in keys:
                named = self.source.frame_from_columns({key: list(listed[key])}, parameter=key)
                every = every.join(named, how="cross")
            if not self.by and WHOLE not in result.collect_schema():
                result = partitioned(result, [])
            estimate = [*self.partition, *keys]
            result = every.join(result, on=estimate, how="left")
            if self.bootstrap is not None and not self.bootstrap.replicates:
                result = result.with_columns(
                    nw.col(self.counted).fill_null(0),
                    *(
                        nw.col(c).fill_null(self.replicates)
                        for c in result.collect_schema().names()
                        if c.endswith(UNDEFINED)
                    ),
                )
        if not self.by:
            result = result.drop(WHOLE, strict=False)
        order = [*self.by, *keys] if sort_by is None else list(sort_by)
        if self.bootstrap is not None and self.bootstrap.replicates:
            order.append(REPLICATE)
        return from_engine(
            result, self.source, sort_by=order, checks=checks, replicates=self.replicates
        )


@dataclass(frozen=True)
class Estimator:
    """How a call estimates, as its ``ci=``, ``n_boot=`` and ``seed=`` ask, before data is read.

    ``counted``: the output column with the number of units behind a value (``rankings``,
    ``points``, ``samples``, ``queries``). A call builds it first (:meth:`requested`), names
    its outputs with it (:meth:`outputs`, so that no input column takes their names) and,
    once the data's rows are in the engine, turns it into the call's :class:`Estimation`
    (:meth:`over`).
    """

    counted: str
    bootstrap: Bootstrap | None = None

    @classmethod
    def requested(cls, counted: str, ci: float | None, n_boot: int, seed: int) -> Estimator:
        """What ``ci=``, ``n_boot=`` and ``seed=`` ask for (no bootstrap without ``ci``).

        The values have passed the call's parameter checks (``UNCERTAINTY``). Inside
        :func:`~frameaudit._engine.resample.paired_replicates`, the bootstrap is paired and
        returns its replicates.
        """
        return cls(counted, requested_bootstrap(ci, n_boot, seed))

    def outputs(self, *values: str) -> list[str]:
        """The columns an interval adds to the outputs ``values`` (none without a bootstrap).

        Each value's ``_lo`` and ``_hi``, the units behind them (:attr:`counted`) and
        ``UNDEFINED``, and with several values each one's undefined replicates
        (:meth:`Estimation.intervals`); one that gives every view (:meth:`Estimation.views`),
        the combos' column ``combo``. A bootstrap that returns its replicates adds their
        number, ``REPLICATE``.
        """
        if self.bootstrap is None:
            return []
        if self.bootstrap.replicates:
            return [REPLICATE]
        each = [f"{v}_{UNDEFINED}" for v in values] if len(values) > 1 else []
        bounds = [f"{v}_{end}" for v in values for end in ("lo", "hi")]
        views = [COMBO] if self.bootstrap.views else []  # the combos' view names them
        return [*bounds, self.counted, UNDEFINED, *each, *views]

    def over(
        self,
        frame: nw.LazyFrame[Any],
        source: Source,
        *,
        by: Sequence[str],
        units: Sequence[str],
        weight: str | None = None,
    ) -> tuple[nw.LazyFrame[Any], Estimation]:
        """The rows of ``frame`` that count, and the call's :class:`Estimation` over them.

        ``units``: the columns that key a unit beyond the partition (``by``, or the constant
        ``WHOLE`` that is added where ``frame`` lacks it). With ``weight`` (a column of
        non-negative unit weights, checked by the caller), units of weight 0 are left out of
        the rows and the resampling, and the partitions are recorded first
        (:meth:`Estimation.finish`).
        """
        by = list(by)
        keys = list(dict.fromkeys([*(by or [WHOLE]), *units]))
        partitions = None
        if weight is not None:
            partitions = distinct(partitioned(frame, by).select(by or [WHOLE]))
            frame = frame.filter(nw.col(weight) > 0)
        resampled = None
        if self.bootstrap is not None:
            numbered = frame.select(*(k for k in keys if k != WHOLE))
            resampled = resampling(partitioned(numbered, by), keys, self.bootstrap, source)
        return frame, Estimation(source, by, keys, self, weight, resampled, partitions)
