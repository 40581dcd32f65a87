r"""The bootstrap: Poisson(1) unit counts derived from a seed, and percentile intervals.

A bootstrap replicate is the metric computed with every resampling unit (a ranking, a point, a
sample, a query) counted :math:`k_{b,u}` times. frameaudit draws :math:`k_{b,u}` from a
Poisson(1) distribution (the "Poisson bootstrap"), independently for every unit, instead of
drawing a multinomial sample of exactly U units: the counts of different units are then
independent, so that each one is a function of the seed, the replicate b and the unit alone,
and can be computed inside any engine, in any row order, without a pass that numbers the draws.
For U of more than a few dozen units the two bootstraps agree (the multinomial counts tend to
independent Poisson(1) counts); with few units the Poisson bootstrap's replicate sizes vary.

The count is derived with integer arithmetic that Polars, DuckDB and Spark compute identically
(every product below 2^62, no overflow, no engine hash): the unit's dense index u (its rank
among the distinct unit keys, so row order does not matter) and b pass through rounds of the
quadratic-residue permutation of :math:`[0, p)`, :math:`p = 2^{31} - 1` (a prime with
p ≡ 3 mod 4, so x ↦ ±x² mod p is a permutation), mixed with constants derived from the seed;
the result h is uniform on [0, p) and :math:`k = \#\{j : h \ge T_j\}` with
:math:`T_j = \lceil p\,F(j) \rceil`, F the Poisson(1) distribution function.

A family computes its metric from per-unit sums; with a bootstrap it pairs those sums with
every replicate that draws the unit (:meth:`Resampling.summed`: the count ``COUNT`` of the
unit in it, drawn once per (unit, replicate) by :meth:`Resampling.draws`, normalised so that a
replicate holds as many units as the data), multiplies, and adds ``REPLICATE`` to its
partition keys: the rest of its plan is unchanged. Sizes that count distinct items are not
sums over units; :class:`DistinctSizes` gives them a linearisation that is. The point
estimate is the replicate ``POINT`` (every count 1). :func:`interval` turns the replicate
values into the percentile interval.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import narwhals.stable.v2 as nw

from frameaudit._engine.convert import Source
from frameaudit._engine.native import namespace_of, native_step
from frameaudit._engine.plans import (
    cached,
    exact_sums,
    join_small,
    scaled_sums,
    scaled_terms,
)
from frameaudit._expr import (
    WHOLE,
    aggregate,
    distinct,
    hashed_keys,
    joined_on,
    null_float,
    over,
    partitioned,
)

__all__ = [
    "COUNT",
    "MAX_SEED",
    "POINT",
    "REPLICATE",
    "SIDE",
    "SINGLE",
    "UNDEFINED",
    "Bootstrap",
    "DistinctSizes",
    "Resampling",
    "distinct_sizes",
    "interval",
    "paired_difference",
    "paired_replicates",
    "requested_bootstrap",
    "resampling",
    "with_coin_flips",
    "with_poisson_counts",
]

REPLICATE = "__fa_rep"
"""The replicate column: ``POINT`` for the point estimate, 0 … n_boot − 1 for the replicates."""
COUNT = "__fa_k"
"""How often a unit counts in a replicate (Int64)."""
POINT = -1
UNDEFINED = "undefined_replicates"
"""The output column counting the replicates whose value is undefined (excluded)."""

_P = 2_147_483_647  # 2^31 − 1: prime, ≡ 3 (mod 4)
_HALF = _P // 2
_REPLICATE_STEP = 1_588_635_695  # any constant in (0, p); spreads consecutive replicates
MAX_SEED = _P - 1
_UNIT = "__fa_unit"
_MIXED = "__fa_mixed"
_KEY = "__fa_key"
_HASH = "__fa_h"
_CELL = "__fa_cell"
_DRAWN = "__fa_drawn"
_FLIP = "__fa_flip"
_COIN_STREAM = 0x2545F491  # any constant: the coins' seed is the seed XOR it
_ALL = "__fa_all_units"
_SCALE = "__fa_scale"


def _thresholds() -> list[int]:
    """T_j = ⌈p·F(j)⌉ for the Poisson(1) distribution function F, while T_j < p."""
    thresholds: list[int] = []
    term, total, j = math.exp(-1.0), 0.0, 0
    while True:
        total += term
        threshold = math.ceil(_P * total)
        if threshold >= _P:
            return thresholds
        thresholds.append(threshold)
        j += 1
        term /= j


_THRESHOLDS = _thresholds()


@dataclass(frozen=True)
class Bootstrap:
    """A percentile bootstrap: the interval's level, the number of replicates and the seed.

    ``paired``: columns of the units that do not tell units apart (a comparison's system
    column): the rows of every system of a unit are one unit, drawn the same number of times
    in every system (paired draws, SPEC §7).
    """

    level: float
    n_boot: int
    seed: int
    paired: tuple[str, ...] = ()
    replicates: bool = False
    """Whether a call returns each replicate's value (column ``REPLICATE``) instead of the
    interval: what a comparison of systems computes its differences from."""
    swaps: bool = False
    """A randomisation test instead of a bootstrap: each replicate counts every unit once and
    swaps the two systems (the paired column's values 0 and 1) of each unit with probability
    1/2 (:meth:`Resampling.swapped`)."""
    views: bool = False
    """Whether a group metric's call returns every view of its replicates at once
    (:func:`grouped_views`) instead of the one its ``combo=`` asks for."""

    def quantiles(self) -> tuple[float, float]:
        """The two percentile levels of the interval, e.g. (0.025, 0.975) for 95%."""
        tail = (1.0 - self.level) / 2.0
        return tail, 1.0 - tail


_PAIRED: contextvars.ContextVar[tuple[tuple[str, ...], bool] | None] = contextvars.ContextVar(
    "frameaudit_paired", default=None
)


@contextlib.contextmanager
def paired_replicates(*columns: str, swaps: bool = False) -> Iterator[None]:
    """Within the block, bootstraps pair units across ``columns`` and return their replicates.

    Each replicate's value comes out (:attr:`Bootstrap.replicates`), not the interval. This
    is how a comparison of systems asks any metric for paired replicates without a parameter
    of its own: the call passes ``by=`` the system column and ``ci=``, and every family
    asks for its estimation with :meth:`~frameaudit._engine.estimate.Estimator.requested`,
    which reads it (:func:`requested_bootstrap`). The setting is the calling
    thread's (or task's) alone. ``swaps``: the replicates of a randomisation test instead
    (:attr:`Bootstrap.swaps`; ``n_boot`` is then the number of permutations).
    """
    token = _PAIRED.set((tuple(columns), swaps))
    try:
        yield
    finally:
        _PAIRED.reset(token)


_VIEWS: contextvars.ContextVar[bool] = contextvars.ContextVar("frameaudit_views", default=False)


@contextlib.contextmanager
def grouped_views() -> Iterator[None]:
    """Within the block, a group metric's call with a bootstrap returns every view of it at once.

    Called with ``combo=None`` and ``ci=``, it returns a
    :class:`~frameaudit._engine.estimate.GroupedViews`: the per-group values with their
    intervals, every combo with its interval and each replicate's per-group values, all from
    one computation of the replicates (a report shows the three; three calls drew and summed
    the same replicates three times). The setting is the calling thread's (or task's) alone;
    :func:`paired_replicates` takes precedence.
    """
    token = _VIEWS.set(True)
    try:
        yield
    finally:
        _VIEWS.reset(token)


def requested_bootstrap(ci: float | None, n_boot: int, seed: int) -> Bootstrap | None:
    """The bootstrap that a call's ``ci=``, ``n_boot=`` and ``seed=`` ask for (None without ``ci``).

    The values have passed the call's parameter checks (``UNCERTAINTY``). Inside
    :func:`paired_replicates`, paired and returning its replicates; inside
    :func:`grouped_views`, giving every view.
    """
    if ci is None:
        return None
    paired = _PAIRED.get()
    if paired is None:
        return Bootstrap(float(ci), int(n_boot), int(seed), views=_VIEWS.get())
    columns, swaps = paired
    return Bootstrap(float(ci), int(n_boot), int(seed), columns, replicates=True, swaps=swaps)


def _permute(ns: Any, x: Any) -> Any:
    """The quadratic-residue permutation of [0, p): x² mod p, or p − (x² mod p) above p/2.

    In the expressions of ``ns`` (:func:`~frameaudit._engine.native.namespace_of`), as every
    step of the draws: each call with ``ci=`` builds them.
    """
    square = (x * x) % _P
    return ns.when(x <= _HALF).then(square).otherwise(_P - square)


def _permute_py(x: int) -> int:
    square = (x * x) % _P
    return square if x <= _HALF else _P - square


def _seed_offsets(seed: int) -> tuple[int, int]:
    """Two constants in [0, p) that depend on the seed (the same permutation, in Python)."""
    first = _permute_py((_permute_py(seed % _P) + 0x5BF03635) % _P)
    return first, _permute_py((first + 0x2F4A7C15) % _P)


def _mixed_units(frame: nw.LazyFrame[Any], unit: str, seed: int) -> nw.LazyFrame[Any]:
    """``frame`` with ``_MIXED``: the unit index through the seed's two rounds (once a unit)."""
    first, _ = _seed_offsets(seed)
    ns = namespace_of(frame)
    h = ns.col(_MIXED)
    for step in (ns.col(unit) % _P, _permute(ns, h), (h + first) % _P, _permute(ns, h)):
        frame = native_step(frame, "with_columns", [step.alias(_MIXED)])
    return frame


def _hashed(frame: nw.LazyFrame[Any], replicate: str, seed: int) -> nw.LazyFrame[Any]:
    """``frame`` (with ``_MIXED``) with ``_HASH``: the pair's value, uniform on [0, p)."""
    _, second = _seed_offsets(seed)
    ns = namespace_of(frame)
    h = ns.col(_HASH)
    steps = [
        (ns.col(_MIXED) + ns.col(replicate) * _REPLICATE_STEP) % _P,
        _permute(ns, h),
        (h + second) % _P,
        _permute(ns, h),
    ]
    for step in steps:
        frame = native_step(frame, "with_columns", [step.alias(_HASH)])
    return frame


def _one(name: str, value: int = 1) -> nw.Expr:
    return nw.lit(value, dtype=nw.Int64).alias(name)


def _count(ns: Any, start: int = 0) -> Any:
    """The Poisson(1) count #{j : h ≥ T_j} of ``_HASH``, for an h known to be ≥ T_(start−1).

    In the expressions of ``ns``, as :func:`_permute`.
    """
    h = ns.col(_HASH)
    count = ns.when(h < _THRESHOLDS[start]).then(ns.lit(start, dtype=ns.Int64))
    for j in range(start + 1, len(_THRESHOLDS)):
        count = count.when(h < _THRESHOLDS[j]).then(ns.lit(j, dtype=ns.Int64))
    return count.otherwise(ns.lit(len(_THRESHOLDS), dtype=ns.Int64))


def with_poisson_counts(
    frame: nw.LazyFrame[Any], unit: str, replicate: str, seed: int, name: str
) -> nw.LazyFrame[Any]:
    """``frame`` with the Poisson(1) count of unit index ``unit`` in replicate ``replicate``.

    ``unit`` and ``replicate`` are non-negative Int64 columns (unit indexes below p); the
    count is the Int64 column ``name``. One step a column: an engine evaluates a nested
    expression once per reference to a sub-expression, and each round refers to its input
    three times. (:class:`Resampling` runs the unit's rounds once a unit, the rest once a
    pair: the same numbers.)
    """
    hashed = _hashed(_mixed_units(frame, unit, seed), replicate, seed)
    counted = native_step(hashed, "with_columns", [_count(namespace_of(hashed)).alias(name)])
    return counted.drop(_MIXED, _HASH)


def with_coin_flips(
    frame: nw.LazyFrame[Any], unit: str, replicate: str, seed: int, name: str
) -> nw.LazyFrame[Any]:
    """``frame`` with a fair coin (Int64 0 or 1) per unit index ``unit`` and ``replicate``.

    The swaps of a randomisation test (:meth:`Resampling.swapped`), from the seed's own
    stream: independent of the bootstrap's counts for the same seed.
    """
    hashed = _hashed(_mixed_units(frame, unit, seed), replicate, seed ^ _COIN_STREAM)
    flipped = native_step(hashed, "with_columns", [_coin(namespace_of(hashed)).alias(name)])
    return flipped.drop(_MIXED, _HASH)


def _coin(ns: Any) -> Any:
    """A fair coin (Int64 0 or 1) of ``_HASH``, in the expressions of ``ns``."""
    return (ns.col(_HASH) > _HALF).cast(ns.Int64)


@dataclass(frozen=True)
class Resampling:
    """The units of a frame, numbered, and the replicates that count them.

    Build it with :func:`resampling`; :meth:`summed` pairs per-unit sums with every replicate
    and its count, computed on the fly (never a units × replicates table held in memory: on a
    streaming engine the pairs flow through to the aggregation that follows).
    """

    units: list[str]
    indexed: nw.LazyFrame[Any]
    numbers: nw.LazyFrame[Any]
    bootstrap: Bootstrap

    def draws(self) -> nw.LazyFrame[Any]:
        """Every (unit, replicate) pair that counts the unit: ``_UNIT``, ``REPLICATE``, ``COUNT``.

        The count is drawn once per pair (and is 1 in the point replicate ``POINT``); a pair
        whose count is 0 has no row (about 1/e of them).
        """
        units = self.indexed.select(_UNIT, _MIXED)
        if self.bootstrap.paired:  # a unit has a row per system: drawn once
            units = distinct(units)
        replicates = self.numbers.filter(nw.col(REPLICATE) != POINT)
        paired = units.join(replicates, how="cross")
        # the pairs drawn 0 times (h < T_0) leave before their count is computed
        drawn = _hashed(paired, REPLICATE, self.bootstrap.seed).filter(
            nw.col(_HASH) >= _THRESHOLDS[0]
        )
        point = units.select(
            _UNIT,
            nw.lit(POINT, dtype=nw.Int64).alias(REPLICATE),
            nw.lit(1, dtype=nw.Int64).alias(COUNT),
        )
        ns = namespace_of(drawn)
        counts = [ns.col(_UNIT), ns.col(REPLICATE), _count(ns, 1).alias(COUNT)]
        return nw.concat([point, native_step(drawn, "select", counts)])

    def summed(
        self,
        frame: nw.LazyFrame[Any],
        partition: Sequence[str],
        keys: Sequence[str],
        sums: Sequence[str],
        *,
        normalised: bool,
    ) -> nw.LazyFrame[Any]:
        """The columns ``sums`` of ``frame`` summed per (partition, ``REPLICATE``, ``keys``).

        Each unit counts ``COUNT`` times in each replicate. A (partition, replicate, keys) that
        no drawn unit holds has no row, as in resampled data.

        ``normalised``: a replicate's counts are scaled to the partition's number of units U
        (each sum times U / K_b, K_b the units the replicate draws in the partition), as in a
        multinomial bootstrap: the number of units is not uncertain, and a statistic that is a
        total over units (SPEC §5) must not take its Poisson spread as uncertainty. A
        statistic of ratios of these sums is the same either way; without normalisation its
        sums stay exact integers where the summed values are (a variance of counts that is 0
        stays 0).

        The rows are first summed per unit (so the replicates multiply units × keys, not
        rows), the counts are drawn once per (unit, replicate) whatever the number of keys, and
        the large aggregation groups by one integer: the number of the (partition, keys) cell
        (the columns may be text) times n_boot + 1, plus the replicate's. K_b comes out of the
        same aggregation: each unit of the partition (all of them, also those ``frame`` has no
        row of) adds one marker row to the partition's first cell. A float sum is put in fixed
        point once per unit (:func:`~frameaudit._engine.plans.scaled_terms`): the draws
        multiply integers, and a replicate's sum has the same bits in any order (EXP's interval
        on 10,000 rankings: 0.75 s, against 1.36 s with the multiplied sums put in fixed point
        and 0.39 s with plain float sums).
        """
        partition, keys, sums = list(partition), list(keys), list(sums)
        units = self.indexed.select(*self.units, _UNIT)
        per_unit = exact_sums(frame, [*self.units, *keys], sums).join(
            units, on=self.units, how="inner"
        )
        if self.bootstrap.swaps:
            return self.swapped(per_unit, partition, keys, sums)
        counted = [*sums, _DRAWN] if normalised else sums
        schema = per_unit.collect_schema()
        cells, parts = hashed_keys([*partition, *keys]), hashed_keys(partition)
        size = self.bootstrap.n_boot + 1  # the replicates, the point's among them
        if cells:
            # read by the labels too: computed once (the rows are summed once)
            per_unit = cached(per_unit)
            labels = cached(distinct(per_unit.select(cells)).with_row_index(_KEY, order_by=cells))
            per_unit = per_unit.join(labels, on=cells, how="inner").select(_UNIT, _KEY, *sums)
        else:
            per_unit = per_unit.select(_UNIT, nw.lit(0, dtype=nw.Int64).alias(_KEY), *sums)
        if normalised:
            if cells:
                first = aggregate(labels, parts, nw.col(_KEY).min())
                markers = joined_on(self.indexed, first, parts)
            else:
                markers = self.indexed.with_columns(nw.lit(0, dtype=nw.Int64).alias(_KEY))
            markers = markers.select(
                _UNIT, _KEY, *(nw.lit(0).cast(schema[c]).alias(c) for c in sums), _one(_DRAWN)
            )
            per_unit = nw.concat([per_unit.with_columns(_one(_DRAWN, 0)), markers])
        # float sums in fixed point once per unit, at one scale per cell: the draws multiply
        # integers, and each replicate's sums are exact
        floats = [c for c in sums if schema[c].is_float()]
        per_unit, terms, windows = scaled_terms(per_unit, [_KEY], floats)
        first_replicate = nw.col(_KEY) * size - POINT  # the number of the cell's point replicate
        # a unit drawn 0 times adds nothing: draws() has no row for it
        paired = join_small(
            self.draws(),
            per_unit.select(_UNIT, first_replicate.alias(_CELL), *counted, *terms, *windows),
            _UNIT,
        )
        paired = paired.select(
            (nw.col(_CELL) + nw.col(REPLICATE)).alias(_CELL),
            *((nw.col(c) * nw.col(COUNT)).alias(c) for c in [*counted, *terms]),
            *windows,
        )
        cell = nw.col(_CELL)
        summed = scaled_sums(paired, [_CELL], counted, floats).select(
            (cell // size).alias(_KEY), (cell % size + POINT).alias(REPLICATE), *counted
        )
        if cells:
            summed = summed.join(labels, on=_KEY, how="inner")
        if normalised:
            summed = self._normalised(summed, parts, sums)
        if WHOLE in partition:
            summed = partitioned(summed, [])
        return summed.select(*partition, REPLICATE, *keys, *sums)

    def swapped(
        self,
        per_unit: nw.LazyFrame[Any],
        partition: list[str],
        keys: list[str],
        sums: list[str],
    ) -> nw.LazyFrame[Any]:
        """``sums`` per (partition, ``REPLICATE``, ``keys``), each unit's systems swapped at random.

        ``per_unit`` holds the sums per unit and system (the paired column, coded 0 and 1).
        In replicate b a unit's rows of system s count as system s XOR f_{b,u}, f a fair coin
        drawn from the seed, b and the unit alone (every engine draws the same); the point
        replicate swaps nothing. Every unit counts once: a permutation of labels, not a
        resample.
        """
        (system,) = self.bootstrap.paired
        units = distinct(self.indexed.select(_UNIT, _MIXED))
        replicates = self.numbers.filter(nw.col(REPLICATE) != POINT)
        # the coins of with_coin_flips: another stream of the seed than the counts'
        hashed = _hashed(
            units.join(replicates, how="cross"), REPLICATE, self.bootstrap.seed ^ _COIN_STREAM
        )
        ns = namespace_of(hashed)
        coins = native_step(
            hashed, "select", [ns.col(_UNIT), ns.col(REPLICATE), _coin(ns).alias(_FLIP)]
        )
        point = units.select(_UNIT, _one(REPLICATE, POINT), _one(_FLIP, 0))
        flips = nw.concat([point, coins])
        parts = hashed_keys(partition)
        paired = join_small(flips, per_unit.select(_UNIT, *parts, *keys, *sums), _UNIT)
        relabelled = paired.with_columns(((nw.col(system) + nw.col(_FLIP)) % 2).alias(system))
        summed = exact_sums(relabelled, [*parts, REPLICATE, *keys], sums)
        if WHOLE in partition:
            summed = partitioned(summed, [])
        return summed.select(*partition, REPLICATE, *keys, *sums)

    @staticmethod
    def _normalised(
        summed: nw.LazyFrame[Any], parts: list[str], sums: list[str]
    ) -> nw.LazyFrame[Any]:
        """``summed`` (with the drawn units ``_DRAWN`` per cell) with ``sums`` times U / K_b."""
        summed = cached(summed)  # read by the unit counts too
        drawn = aggregate(summed, [*parts, REPLICATE], nw.col(_DRAWN).sum())
        every = drawn.filter(nw.col(REPLICATE) == POINT).select(*parts, nw.col(_DRAWN).alias(_ALL))
        drawn = joined_on(drawn, every, parts)
        scale = nw.col(_ALL).cast(nw.Float64) / nw.col(_DRAWN).cast(nw.Float64)
        scaled = summed.drop(_DRAWN).join(
            drawn.select(*parts, REPLICATE, scale.alias(_SCALE)), on=[*parts, REPLICATE]
        )
        return scaled.with_columns(*((nw.col(c) * nw.col(_SCALE)).alias(c) for c in sums))

    def interval(
        self,
        values: nw.LazyFrame[Any],
        partition: Sequence[str],
        keys: Sequence[str],
        value: str,
        unit: str,
        *,
        also: Sequence[str] = (),
    ) -> nw.LazyFrame[Any]:
        """Per (``partition``, ``keys``): ``value``, its interval and the units behind it.

        :func:`interval` with this bootstrap, and the partition's number of units from
        :meth:`unit_counts` in the column ``unit``.
        """
        units = self.unit_counts(partition, unit)
        estimate = [*partition, *keys]
        return interval(values, estimate, value, self.bootstrap, units=units, also=also)

    def unit_counts(self, partition: Sequence[str], name: str) -> nw.LazyFrame[Any]:
        """The number of units per partition, in the column ``name`` (Int64)."""
        return aggregate(self.indexed, partition, nw.len().cast(nw.Int64).alias(name))

    def estimates(self, partition: Sequence[str]) -> nw.LazyFrame[Any]:
        """Every (partition, replicate) pair: the estimates a plan computes."""
        partitions = distinct(self.indexed.select(list(partition)))
        return partitions.join(self.numbers, how="cross")


SINGLE = "__fa_single"
"""1.0 on a row whose item no other unit of its partition holds, else 0.0 (DistinctSizes)."""
_M = "__fa_m_units"
_F1 = "__fa_f1"
_ODD = "__fa_odd"
_A = "__fa_a0"
_BETA = "__fa_beta"
_GAMMA = "__fa_gamma"


@dataclass(frozen=True)
class DistinctSizes:
    r"""Sizes that count distinct items, and their value in a bootstrap replicate.

    A replicate cannot recount the distinct items of the units it draws: a resample holds
    about 63% of the units, so the count shrinks and every replicate lands above the
    estimate. Nor is the observed count a constant: which rarely seen items a sample holds is
    random, and moves with the sample's numerator (more of g's items, more of g's exposure).
    The replicate's size is a linearisation of the count in the units' counts
    :math:`\tilde k` (normalised):

    .. math:: n_g^{(b)} = n_g + \gamma_g (S_b - f_{1,g}) + \beta_g (1 - \gamma_g)(A_b - A)

    with :math:`s_{u,g}` the items of g that unit u alone holds (leaving the unit out loses
    exactly these: the jackknife's influence of the unit on the count),
    :math:`S_b = \sum_u \tilde k_{b,u} s_{u,g}` and :math:`f_{1,g}` its observed value, and
    :math:`A_b` the replicate's numerator (the metric's summed value column) and :math:`A`
    the observed one. :math:`\beta_g` regresses :math:`s_u` on :math:`a_u` over the units,
    so the size keeps the covariance of the count with the numerator that the jackknife
    gives; :math:`\gamma_g` shrinks the rest so that the count's spread is
    :math:`\min(f_1, \max(0, T_g)) / f_1` of the jackknife's, with
    :math:`T_g = \sum_{i \in g} (-1)^{m_i + 1}` (m_i the units holding item i), an unbiased
    estimate of the count's variance under Poisson recurrence (the jackknife's alone
    overstates it: Efron–Stein). Items that recur in every unit give :math:`s = 0` (a fixed
    catalogue); items seen once give every row its own item (the rows). The size is linear in
    the counts, so the point replicate gives :math:`n_g` exactly. The uncertainty page shows
    its coverage and width by simulation.
    """

    rows: nw.LazyFrame[Any]
    """The frame with :data:`SINGLE`, to be summed over units with the other sums."""
    constants: nw.LazyFrame[Any]
    """Per (partition, keys): the observed size and numerator, f_1, β and γ."""
    keys: list[str]
    numerator: str

    def sized(self, sums: nw.LazyFrame[Any], name: str) -> nw.LazyFrame[Any]:
        """``sums`` (per estimate and keys, with :data:`SINGLE` and the numerator) sized.

        The size column is ``name``.
        """
        gamma, beta = nw.col(_GAMMA), nw.col(_BETA)
        singles = nw.col(SINGLE) - nw.col(_F1).cast(nw.Float64)
        numerator = nw.col(self.numerator) - nw.col(_A)
        size = nw.col(name).cast(nw.Float64) + gamma * singles + beta * (1.0 - gamma) * numerator
        joined = sums.join(self.constants, on=self.keys, how="left")
        return joined.with_columns(size.alias(name)).drop(_F1, _A, _BETA, _GAMMA, SINGLE)


def distinct_sizes(
    frame: nw.LazyFrame[Any],
    partition: Sequence[str],
    keys: Sequence[str],
    *,
    item: str,
    units: Sequence[str],
    numerator: str,
    name: str,
) -> DistinctSizes:
    """The distinct ``item`` s per (``partition``, ``keys``), as :class:`DistinctSizes`.

    ``frame`` holds one row per (unit, item) at most (``units`` name the unit, the partition's
    columns among them: items are distinct within a unit, so an item's rows in a partition
    count the units holding it) and the ``numerator`` column the replicates sum.
    """
    partition, keys, units = list(partition), list(keys), list(units)
    cell = [*partition, *keys]
    m = nw.col(_M)
    per_item = aggregate(frame, [*cell, item], nw.len().cast(nw.Int64).alias(_M)).with_columns(
        (m == 1).cast(nw.Int64).alias(_F1),
        nw.when(m % 2 == 1).then(nw.lit(1)).otherwise(nw.lit(-1)).cast(nw.Int64).alias(_ODD),
    )
    per_item = cached(per_item)
    on = [*hashed_keys(partition), *keys, item]
    singles = per_item.select(*on, nw.col(_F1).cast(nw.Float64).alias(SINGLE))
    rows = frame.join(singles, on=on, how="left")
    counts = aggregate(
        per_item, cell, nw.len().cast(nw.Int64).alias(name), nw.col(_F1).sum(), nw.col(_ODD).sum()
    )
    moments = _unit_moments(rows, partition, keys, units, numerator)
    return DistinctSizes(rows, _coefficients(counts, moments, cell, name), cell, numerator)


def _unit_moments(
    rows: nw.LazyFrame[Any],
    partition: list[str],
    keys: list[str],
    units: list[str],
    numerator: str,
) -> nw.LazyFrame[Any]:
    """Per (partition, keys): the sums, squares and products over units of a_u and s_u.

    A unit without a row of the keys has a_u = s_u = 0: the centred moments use the
    partition's number of units (``__fa_r``).
    """
    a, s = nw.col("__fa_au"), nw.col("__fa_su")
    per_unit = aggregate(
        rows,
        [*units, *keys],
        nw.col(numerator).cast(nw.Float64).sum().alias("__fa_au"),
        nw.col(SINGLE).sum().alias("__fa_su"),
    ).with_columns((a * a).alias("__fa_aa"), (s * s).alias("__fa_ss"), (a * s).alias("__fa_as"))
    moments = aggregate(
        per_unit,
        [*partition, *keys],
        *(nw.col(c).sum() for c in ("__fa_au", "__fa_su", "__fa_aa", "__fa_ss", "__fa_as")),
    )
    count = aggregate(
        distinct(rows.select(units)), partition, nw.len().cast(nw.Float64).alias("__fa_r")
    )
    return moments.join(count, on=partition, how="left")  # small frames: the constant key too


def _coefficients(
    counts: nw.LazyFrame[Any], moments: nw.LazyFrame[Any], cell: list[str], name: str
) -> nw.LazyFrame[Any]:
    """f_1, the observed numerator, β and γ of :class:`DistinctSizes`, per cell.

    The per-cell steps in the expressions of :func:`~frameaudit._engine.native.namespace_of`.
    """
    joined = counts.join(moments, on=cell, how="left")
    ns = namespace_of(joined)
    c = ns.col
    r = c("__fa_r")
    joined = native_step(
        joined,
        "with_columns",
        [
            (c("__fa_aa") - c("__fa_au") * c("__fa_au") / r).alias("__fa_vara"),
            (c("__fa_ss") - c("__fa_su") * c("__fa_su") / r).alias("__fa_vars"),
            (c("__fa_as") - c("__fa_au") * c("__fa_su") / r).alias("__fa_cov"),
            c(_F1).cast(ns.Float64).alias(_F1),
            c(_ODD).cast(ns.Float64).alias(_ODD),
        ],
    )
    f1, odd, zero = c(_F1), c(_ODD), ns.lit(0.0)
    shrink = ns.when(f1 > 0).then(ns.min_horizontal(ns.max_horizontal(odd, zero), f1) / f1)
    beta = ns.when(c("__fa_vara") > 0).then(c("__fa_cov") / c("__fa_vara")).otherwise(zero)
    joined = native_step(
        joined, "with_columns", [shrink.otherwise(zero).alias("__fa_shrink"), beta.alias(_BETA)]
    )
    # the residual's variance, and the share of it kept so that the total is shrink · Var(s)
    residual = c("__fa_vars") - c(_BETA) * c("__fa_cov")
    kept = c("__fa_shrink") * c("__fa_vars") - c(_BETA) * c(_BETA) * c("__fa_vara")
    gamma_squared = ns.when(residual > 0).then(kept / residual).otherwise(ns.lit(1.0))
    gamma = ns.min_horizontal(ns.max_horizontal(gamma_squared, zero), ns.lit(1.0)).sqrt()
    return native_step(
        joined,
        "select",
        [
            *map(c, cell),
            c(name),
            f1,
            c("__fa_au").fill_null(0.0).alias(_A),
            c(_BETA).fill_null(0.0),
            gamma.fill_null(1.0).alias(_GAMMA),
        ],
    )


def resampling(
    frame: nw.LazyFrame[Any], units: Sequence[str], bootstrap: Bootstrap, like: Source
) -> Resampling:
    """The distinct units of ``frame`` (the columns ``units``, the partition's among them).

    A unit's number is its rank in key order (categories as their text), so that neither row
    order nor the engine matters. The columns ``bootstrap.paired`` are left out of the key:
    a unit's rows in every system share its number, and so its draws.
    """
    like.refuse_dask("an interval (ci=)", "the bootstrap numbers its units with an ordered window")
    units = list(units)
    keyed = [u for u in units if u not in bootstrap.paired]
    # categories sort in their own order in Polars and as text after a conversion (pandas,
    # DuckDB, Spark): numbered by their text, a unit is the same unit on every engine
    schema = frame.collect_schema()
    textual = [u for u in keyed if isinstance(schema[u], nw.Categorical | nw.Enum)]
    order = [f"__fa_text{i}" if u in textual else u for i, u in enumerate(keyed)]
    found = distinct(frame.select(units))
    numbered = (
        (distinct(found.select(keyed)) if bootstrap.paired else found)
        .with_columns(
            nw.col(u).cast(nw.String).alias(name)
            for u, name in zip(keyed, order, strict=True)
            if u in textual
        )
        .with_row_index(_UNIT, order_by=order)
        .with_columns(nw.col(_UNIT).cast(nw.Int64))
        .drop(*(name for name in order if name not in keyed))
    )
    indexed = found.join(numbered, on=keyed) if bootstrap.paired else numbered
    indexed = _mixed_units(indexed, _UNIT, bootstrap.seed)
    numbers = like.frame_from_columns(
        {REPLICATE: [POINT, *range(bootstrap.n_boot)]}, parameter="n_boot"
    ).with_columns(nw.col(REPLICATE).cast(nw.Int64))
    return Resampling(units, cached(indexed), numbers, bootstrap)


def interval(
    values: nw.LazyFrame[Any],
    keys: Sequence[str],
    value: str,
    bootstrap: Bootstrap,
    *,
    units: nw.LazyFrame[Any],
    also: Sequence[str] = (),
) -> nw.LazyFrame[Any]:
    """Per ``keys``: the point value, its percentile interval and the undefined replicates.

    ``values`` holds ``keys``, ``REPLICATE``, ``value`` and the columns ``also`` (taken from
    the point estimate's row). The interval is the pair of ``bootstrap.quantiles()`` of the
    defined replicate values (linear interpolation between order statistics, numpy's
    default); a replicate whose value is null or NaN, or that has no row for the keys (a group
    no drawn unit holds), is undefined, left out and counted in ``UNDEFINED``. ``units`` (from
    :meth:`Resampling.unit_counts`, keyed by some of ``keys``) gives the number of units behind
    each value, shown after the interval: with fewer than two units, or no defined replicate,
    the interval is null.
    """
    keys = list(keys)
    values = cached(values)  # read by the point and by the replicates: computed once
    # the per-row steps in Polars' own expressions on Polars (a fifth of narwhals' cost to
    # build: every call with ci= builds this), narwhals' elsewhere, by the same code
    ns = namespace_of(values)
    val, at = ns.col(value), ns.col("__fa_m")
    point = values.filter(nw.col(REPLICATE) == POINT).select(*keys, value, *also)
    # a replicate without a row for these keys (a group no drawn unit holds) is undefined too
    undefined = nw.col(value).is_null() | nw.col(value).is_nan()
    defined = values.filter((nw.col(REPLICATE) != POINT) & ~undefined)
    counts = aggregate(defined, keys, nw.len().cast(nw.Float64).alias("__fa_m"))
    # the order statistics either side of each quantile: 1-based positions at and after h + 1
    ends = []
    for end, q in zip(("lo", "hi"), bootstrap.quantiles(), strict=True):
        h = (at - 1.0) * q
        ends += [
            (h.floor() + 1.0).alias(f"__fa_{end}_at"),
            ns.min_horizontal(h.floor() + 2.0, at).alias(f"__fa_{end}_after"),
            (h - h.floor()).alias(f"__fa_{end}_frac"),
        ]
    position = over(val.rank(method="ordinal"), keys).cast(ns.Float64).alias("__fa_pos")
    ranked = native_step(defined, "with_columns", [position])
    located = native_step(
        ranked.join(counts.select(*keys, "__fa_m"), on=keys, how="left"), "with_columns", ends
    )
    pos, null = ns.col("__fa_pos"), ns.lit(None, dtype=ns.Float64)
    picks = [
        ns.when(pos == ns.col(f"__fa_{end}_{which}"))
        .then(val)
        .otherwise(null)
        .alias(f"__fa_{end}_{which}")
        for end in ("lo", "hi")
        for which in ("at", "after")
    ]
    picked = aggregate(
        native_step(located, "with_columns", picks),
        keys,
        *(nw.col(f"__fa_{end}_{which}").max() for end in ("lo", "hi") for which in ("at", "after")),
        *(nw.col(f"__fa_{end}_frac").max() for end in ("lo", "hi")),
    )
    bounds = []
    for end in ("lo", "hi"):
        x, y, frac = (ns.col(f"__fa_{end}_{part}") for part in ("at", "after", "frac"))
        # x + frac·(y − x), without inf − inf where the two order statistics are equal
        bounds.append(
            ns.when((frac == 0.0) | (x == y))
            .then(x)
            .otherwise(x + frac * (y - x))
            .alias(f"{value}_{end}")
        )
    unit_keys = [c for c in units.collect_schema().names() if c in keys]
    (unit_name,) = (c for c in units.collect_schema().names() if c not in keys)
    few = ns.col(unit_name) < 2
    joined = (
        point.join(
            native_step(picked, "select", [*map(ns.col, keys), *bounds]), on=keys, how="left"
        )
        .join(counts, on=keys, how="left")
        .join(units, on=unit_keys, how="left")
    )
    return native_step(
        joined,
        "select",
        [
            *map(ns.col, keys),
            val,
            *(
                ns.when(few).then(null).otherwise(ns.col(f"{value}_{end}")).alias(f"{value}_{end}")
                for end in ("lo", "hi")
            ),
            *map(ns.col, also),
            ns.col(unit_name),
            (bootstrap.n_boot - at.fill_null(0.0)).cast(ns.Int64).alias(UNDEFINED),
        ],
    )


SIDE = "__fa_side"
"""A comparison's side of a row: 0 for the baseline system, 1 for the other (Int64)."""
_TIES = 1e-12  # a permuted statistic within this relative distance of the observed one ties


def paired_difference(
    replicates: nw.LazyFrame[Any],
    swapped: nw.LazyFrame[Any],
    keys: Sequence[str],
    value: str,
    bootstrap: Bootstrap,
    *,
    units: nw.LazyFrame[Any],
    permutations: int,
) -> nw.LazyFrame[Any]:
    """Per ``keys``: two systems' values, their difference, its interval and its p-value.

    SPEC §7: the paired bootstrap's interval and the randomisation test's two-sided p-value.
    ``replicates`` holds ``value`` per (``keys``, :data:`SIDE`, ``REPLICATE``) from paired
    bootstrap replicates (:func:`paired_replicates`); ``swapped`` the same from the
    ``permutations`` replicates of the randomisation test (``swaps=True``). The difference is
    other − baseline; its interval is the percentile interval of the replicates' differences
    (:func:`interval`, with ``units`` behind each). A replicate where either side has no row
    or an undefined value is undefined. The p-value is (1 + #{|T*| ≥ |T|}) / (1 + B) over the
    B permutations, T the observed difference and T* a permutation's; an undefined T* counts
    as at least as extreme (the test never claims more than the data shows), and so do the
    T* that tie with T to 1e-12 (relative). Null where T is undefined.
    """
    keys = list(keys)

    def differences(frame: nw.LazyFrame[Any], name: str) -> nw.LazyFrame[Any]:
        def side(code: int, alias: str) -> nw.LazyFrame[Any]:
            rows = frame.filter(nw.col(SIDE) == code)
            return rows.select(*keys, REPLICATE, nw.col(value).alias(alias))

        joined = side(1, "__fa_other").join(side(0, "__fa_base"), on=[*keys, REPLICATE])
        difference = (nw.col("__fa_other") - nw.col("__fa_base")).alias(name)
        return joined.with_columns(difference)

    boot = differences(replicates, "difference")
    boot = boot.with_columns(
        nw.col("__fa_other").alias(value), nw.col("__fa_base").alias(f"baseline_{value}")
    )
    result = interval(
        boot, keys, "difference", bootstrap, units=units, also=[value, f"baseline_{value}"]
    )
    t = nw.col("__fa_t")
    perm = differences(swapped, "__fa_t").with_columns(t.abs())
    observed = perm.filter(nw.col(REPLICATE) == POINT).select(*keys, t.alias("__fa_t0"))
    t0 = nw.col("__fa_t0")
    extreme = t.is_null() | t.is_nan() | (t >= t0 * (1.0 - _TIES))
    # a permutation without a row for the keys (a group no unit holds once swapped) is
    # undefined too: counted from the permutations that have one
    counted = aggregate(
        perm.filter(nw.col(REPLICATE) != POINT).join(observed, on=keys, how="inner"),
        keys,
        extreme.cast(nw.Int64).sum().alias("__fa_extreme"),
        nw.len().cast(nw.Int64).alias("__fa_present"),
    )
    missing = permutations - nw.col("__fa_present")
    p_value = (1.0 + nw.col("__fa_extreme") + missing) / (1.0 + permutations)
    defined = ~(t0.is_null() | t0.is_nan())
    tested = observed.join(counted, on=keys, how="left").select(
        *keys, nw.when(defined).then(p_value).otherwise(null_float()).alias("p_value")
    )
    return result.join(tested, on=keys, how="left")
