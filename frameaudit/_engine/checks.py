"""Value checks: what a check is, and how the checks of a call run with its result.

A metric's value checks (nulls, ranges, duplicates, ...) are declared by
:mod:`frameaudit._validate` and the families as :class:`Check` objects: a lazy one-row frame
of diagnostics (violation counts and an example of each violation) and the error message as a
string expression over that row (null when the check holds), its values written as Python
writes them (:mod:`frameaudit._engine.text`). Declaring them lazily is what keeps a call lazy;
one message definition is what keeps the text the same on every engine. Running them is the
engine's business:

* on DuckDB and PySpark the messages join the result's plan (:func:`guarded`): a filter over
  every row raises the first failed check's message through the engine's raise-an-error
  function (DuckDB ``error``, Spark ``raise_error``) when the result is computed, with
  :data:`~frameaudit.exceptions.ENGINE_MARKER` in front, so that
  :func:`frameaudit.exceptions.from_engine_error` can give back the frameaudit error;
* on Polars the checks are joined into the plan (:func:`attach`, or computed with an eager
  result), and a check with a cheaper proof computes only that proof (its diagnostics only
  when the proof fails, on the way to the error);
* on the other lazy engines (Dask) the messages run as one query when the metric is called.

A check on a frame the caller gave beside the data (centroids, a group mapping, an overall
ranking: ``given``) reads a table that is in memory on DuckDB, where
:meth:`~frameaudit._engine.convert.Source.align` rebuilds it on the data's connection. There
it is proved when the call is built (:func:`unproved`), and only a check that fails stays in
the query, at its place in the order: a valid call's query carries no such check.

Row-level rules on one frame are merged first (:func:`merge_rules`), so that all of them cost
one pass over the data instead of one query each.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import narwhals.stable.v2 as nw
import polars as pl

from frameaudit._engine.native import Written, from_polars, native_step
from frameaudit._engine.text import duckdb_name, spark_name, with_reprs
from frameaudit.exceptions import ENGINE_MARKER, InvalidValueError

__all__ = [
    "Check",
    "Rule",
    "Written",
    "attach",
    "diagnostics",
    "first_failed",
    "given",
    "guarded",
    "merge_rules",
    "raise_first",
    "unproved",
]

MESSAGE = "__fa_message"
_DIAG_KEY = "__fa_diag_key"
_PRESENT = "__fa_present"

Diagnosis = tuple[nw.LazyFrame[Any], nw.Expr]
"""A check's one-row diagnostics frame and its message, a string expression over that row."""
Proof = Callable[[Mapping[str, Any]], bool]
"""Whether a check's computed proof row (column name → value) proves that it holds.

A null value proves nothing. A plain function of the row, not an expression: it is read
once, on one row, and building an expression for it cost more than computing the row.
"""


@dataclass(frozen=True)
class Check:
    """A lazy one-row frame of diagnostics and the error message it means.

    ``message`` is a string expression over ``frame`` (with the texts of
    :func:`~frameaudit._engine.text.with_reprs`): the error text, null when the check holds.
    ``proof``, when given, builds a cheaper one-row frame whose row ``holds`` (a
    :data:`Proof`) accepts only if the check holds; Polars computes that row with every result
    instead of ``frame``, and DuckDB the row of a ``given`` check as the call is built. It is
    built only there: DuckDB and Spark otherwise carry the messages, and building a proof
    they never read cost a sixth of the building of social_fairness_ratio on DuckDB. Such a
    check may leave ``frame`` and ``message`` to ``later``, which builds them only when they
    are needed (:meth:`proved_or_diagnosed`): on Polars, after the proof fails.

    Row-level checks instead carry ``rules`` on a ``base`` frame (:meth:`of_rules`);
    :func:`merge_rules` turns all the rules on one frame into a single check before they run.

    ``given``: the check reads only a frame the caller gave beside the data (:func:`given`).
    """

    frame: nw.LazyFrame[Any] | None
    message: nw.Expr | None
    proof: Callable[[], nw.LazyFrame[Any]] | None = None
    holds: Proof | None = None
    base: nw.LazyFrame[Any] | None = None
    rules: tuple[Rule, ...] = ()
    later: Callable[[], Diagnosis] | None = None
    given: bool = False

    @classmethod
    def proved_or_diagnosed(
        cls,
        proof: Callable[[], nw.LazyFrame[Any]],
        holds: Proof,
        diagnose: Callable[[], Diagnosis],
    ) -> Check:
        """A check proved by ``holds`` over ``proof()``; ``diagnose()`` builds its diagnostics.

        Building the diagnostics' plans and messages took about a sixth of a call on a small
        frame, and Polars needs them only after a failed proof.
        """
        return cls(None, None, proof=proof, holds=holds, later=diagnose)

    def diagnosis(self) -> Diagnosis:
        """The one-row diagnostics frame and the message over it."""
        if self.later is not None:
            return self.later()
        assert self.frame is not None  # rule checks were merged into frame checks
        assert self.message is not None
        return self.frame, self.message

    @classmethod
    def of_rules(cls, base: nw.LazyFrame[Any], *rules: Rule) -> Check:
        """The row ``rules`` on ``base``, evaluated with the other rules on it."""
        return cls(None, None, base=base, rules=rules)


@dataclass(frozen=True)
class Rule:
    """A row-level rule: rows where ``flag`` is true offend; ``example`` shows one of them.

    Rules on the same frame are evaluated together in one pass (:func:`merge_rules`). The rule
    fails when some row offends (with ``absent``: when none does, for a value that must occur).
    ``message`` gets the number of offending rows and the name of the diagnostics column that
    holds the smallest example value (null without ``example``), and returns the error text.

    ``flag``, ``count`` and ``screen`` are written for either namespace
    (:data:`~frameaudit._engine.native.Written`): the proof, which every call computes, is
    built in Polars' own expressions on Polars; the diagnostics in narwhals'.
    """

    flag: Written
    message: Callable[[nw.Expr, str], nw.Expr]
    example: nw.Expr | None = None
    # an aggregate giving the count directly (e.g. a null count, which Polars keeps as metadata)
    count: Written | None = None
    # an aggregate that is true when no row can offend (e.g. a minimum and a maximum inside the
    # bounds): cheaper than a per-row flag, so Polars computes it instead when it can
    screen: Written | None = None
    absent: bool = False
    # a one-row frame of further values the message shows (e.g. the values found), built and
    # computed with the diagnostics only (Polars builds them after a failed proof): a function
    # that builds it; rules may share one
    context: Callable[[], nw.LazyFrame[Any]] | None = None


def given(checks: Sequence[Check]) -> list[Check]:
    """``checks``, marked as reading only a frame the caller gave beside the data.

    For the checks of a frame brought into the data's engine by
    :meth:`~frameaudit._engine.convert.Source.align` (and of steps on it alone): on DuckDB they
    are proved when the call is built (:func:`unproved`).
    """
    return [replace(check, given=True) for check in checks]


def merge_rules(checks: Sequence[Check]) -> list[Check]:
    """Evaluate all rules on one frame in one aggregation instead of one query per rule.

    The merged check takes the place of the first rule check on its frame, so errors keep the
    order in which the checks were listed; it is ``given`` when all of them are.
    """
    slots: list[Check | int] = []
    groups: dict[int, tuple[nw.LazyFrame[Any], list[Rule], list[bool]]] = {}
    for check in checks:
        if check.base is None:
            slots.append(check)
            continue
        key = id(check.base)
        if key not in groups:
            groups[key] = (check.base, [], [])
            slots.append(key)
        groups[key][1].extend(check.rules)
        groups[key][2].append(check.given)
    merged = []
    for slot in slots:
        if isinstance(slot, Check):
            merged.append(slot)
            continue
        base, rules, marks = groups[slot]
        merged.append(replace(_merged(base, rules), given=all(marks)))
    return merged


def _merged(base: nw.LazyFrame[Any], rules: Sequence[Rule]) -> Check:
    """One check for ``rules``: counts and examples in one aggregation, screens for Polars."""
    flagged = [i for i, rule in enumerate(rules) if rule.count is None]
    # the proof reads a screen instead of the count where a rule has one
    proof_flagged = [i for i in flagged if rules[i].screen is None]

    def flags(ns: Any, which: Sequence[int] = flagged) -> list[Any]:
        return [rules[i].flag(ns).cast(ns.Int64).alias(f"__fa_flag{i}") for i in which]

    def count(ns: Any, i: int) -> Any:
        written = rules[i].count
        return (ns.col(f"__fa_flag{i}").sum() if written is None else written(ns)).cast(ns.Int64)

    def quick(ns: Any) -> list[Any]:
        screens = (
            count(ns, i) if rule.screen is None else rule.screen(ns) for i, rule in enumerate(rules)
        )
        return [
            ns.len().cast(ns.Int64).alias("rows"),
            *(s.alias(f"n{i}") for i, s in enumerate(screens)),
        ]

    def holds(row: Mapping[str, Any]) -> bool:
        for i, rule in enumerate(rules):
            value = row[f"n{i}"]
            if rule.screen is not None:
                proved = bool(value)
            else:
                proved = value is not None and (value > 0 if rule.absent else value == 0)
            if not proved:
                return False
        return True

    def proof() -> nw.LazyFrame[Any]:
        flagged_rows = (
            native_step(base, "with_columns", lambda ns: flags(ns, proof_flagged))
            if proof_flagged
            else base
        )
        return native_step(flagged_rows, "select", quick)

    def diagnose() -> Diagnosis:
        n = [nw.col(f"n{i}") for i in range(len(rules))]
        fails = [n[i] == 0 if rule.absent else n[i] > 0 for i, rule in enumerate(rules)]
        full = [nw.len().cast(nw.Int64).alias("rows")]
        examples: list[nw.Expr] = []
        messages: list[nw.Expr] = []
        for i, rule in enumerate(rules):
            full.append(count(nw, i).alias(f"n{i}"))
            if rule.example is not None:
                examples.append(nw.when(rule.flag(nw)).then(rule.example).alias(f"__fa_ex{i}"))
                full.append(nw.col(f"__fa_ex{i}").min().alias(f"e{i}"))
            else:
                full.append(nw.lit(None, nw.String).alias(f"e{i}"))
            messages.append(nw.when(fails[i]).then(rule.message(n[i], f"e{i}")))
        columns = [*flags(nw), *examples]
        rows = (base.with_columns(*columns) if columns else base).select(*full)
        contexts = {id(r.context): r.context for r in rules if r.context is not None}
        for context in contexts.values():
            rows = rows.join(context(), how="cross")
        return rows, nw.coalesce(*messages)

    return Check.proved_or_diagnosed(proof, holds, diagnose)


def message_frame(check: Check, name: str = MESSAGE) -> nw.LazyFrame[Any]:
    """One row, one column (``name``): the check's error text, null when it holds."""
    frame, message = check.diagnosis()
    return with_reprs(frame).select(message.alias(name))


def _first_message(checks: Sequence[Check], prefix: str | None = None) -> nw.LazyFrame[Any]:
    """One row: the message of the first failed check (after ``prefix``), null when all hold."""
    names = [f"{MESSAGE}{i}" for i in range(len(checks))]
    combined: nw.LazyFrame[Any] | None = None
    for check, name in zip(checks, names, strict=True):
        own = message_frame(check, name)
        combined = own if combined is None else combined.join(own, how="cross")
    assert combined is not None
    first = nw.coalesce(*names)
    if prefix is not None:
        first = nw.concat_str(nw.lit(prefix), first)
    return combined.select(first.alias(MESSAGE))


def first_failed(checks: Sequence[Check]) -> Check:
    """One check made of several: the message of the first that fails, in their order."""
    merged = merge_rules(checks)
    return Check(None, None, later=lambda: (_first_message(merged), nw.col(MESSAGE)))


def guarded(result: nw.LazyFrame[Any], checks: Sequence[Check]) -> nw.LazyFrame[Any]:
    """``result``, raising the first failed check's message when it is computed.

    Whatever is computed from the result reads the message: every column of every row
    raises it when it is not null, and so does a filter over every row (a count, or a filter
    the caller adds that keeps no row, still reads it). An empty result still raises: the
    one-row message frame goes with it, its row kept only to raise (DuckDB: on the left of a
    left join; Spark: a second branch of a union, beside the result left-joined with the
    broadcast message, where a left join from the message computed the result twice).
    Engines without a raise-an-error function (Dask) run the checks now, as on Polars: one
    query, and the diagnostics of a failed proof.
    """
    implementation = result.implementation
    if implementation not in _RAISING:
        _raise_now(checks)
        return result
    message = _first_message(checks, prefix=ENGINE_MARKER)
    columns = result.collect_schema().names()
    native = _RAISING[implementation](message, result, columns)
    filtered: nw.LazyFrame[Any] = nw.from_native(native)
    return filtered


def _raise_now(checks: Sequence[Check]) -> None:
    """Run the checks now, one query each: the proof, and the diagnostics if it fails."""
    for check in checks:
        text = _message_now(check)
        if text is not None:
            raise InvalidValueError.of_check(text)


def _message_now(check: Check) -> str | None:
    """The check's error text, computed now (None when it holds).

    The proof first, then the diagnostics if it fails. The one-row frames are read into
    Polars, which evaluates the proofs and the messages (Dask cannot compute expressions over
    an aggregated frame).
    """
    if check.proof is not None:
        (row,) = _read(check.proof()).collect().rows(named=True)
        if _proves(check, row):
            return None
    frame, message = check.diagnosis()
    text: str | None = with_reprs(_read(frame)).select(message).collect().item()
    return text


def unproved(result: nw.LazyFrame[Any], checks: Sequence[Check]) -> list[Check]:
    """The (merged) ``checks`` that the query of ``result`` must still carry.

    On DuckDB a ``given`` check reads a small table in memory: it is computed now, and left
    out when it holds (building its messages into the query took a third of the checks'
    building in social_fairness_ratio with centroids). One that fails stays, so that the
    first failed check in their order still raises when the result is read.
    """
    if result.implementation is not nw.Implementation.DUCKDB:
        return list(checks)
    return [check for check in checks if not check.given or _message_now(check) is not None]


def _read(frame: nw.LazyFrame[Any]) -> nw.LazyFrame[Any]:
    """A small frame computed, as a Polars LazyFrame."""
    return frame.collect(backend="polars").lazy()


def _proves(check: Check, row: Mapping[str, Any]) -> bool:
    """Whether the check's computed proof ``row`` proves that it holds."""
    assert check.holds is not None
    return check.holds(row)


def _duckdb_guard(
    message: nw.LazyFrame[Any], result: nw.LazyFrame[Any], columns: Sequence[str]
) -> Any:
    import duckdb  # noqa: PLC0415 (an optional engine)

    def raising(otherwise: str) -> str:
        return f'CASE WHEN "{MESSAGE}" IS NOT NULL THEN error("{MESSAGE}") ELSE {otherwise} END'

    left = message.with_columns(nw.lit(0).alias(_DIAG_KEY))
    right = result.with_columns(nw.lit(0).alias(_DIAG_KEY), nw.lit(value=True).alias(_PRESENT))
    joined = left.join(right, on=_DIAG_KEY, how="left").to_native()
    present = raising(duckdb_name(_PRESENT))
    kept = joined.filter(duckdb.SQLExpression(f"({present}) IS NOT NULL"))
    return kept.select(*(duckdb.SQLExpression(raising(duckdb_name(c))).alias(c) for c in columns))


def _spark_guard(
    message: nw.LazyFrame[Any], result: nw.LazyFrame[Any], columns: Sequence[str]
) -> Any:
    from pyspark.sql import functions as sf  # noqa: PLC0415 (an optional engine)

    notes, frame = message.to_native(), result.to_native()
    text = sf.col(MESSAGE)

    def raising(otherwise: Any) -> Any:
        return sf.when(text.isNotNull(), sf.raise_error(text)).otherwise(otherwise)

    # the result streamed once, the one-row message broadcast to its rows (a left join from
    # the message, keeping its row, would stream the message and compute the result twice)
    joined = frame.join(sf.broadcast(notes), how="left").filter(raising(sf.lit(True)))
    rows = joined.select(*(raising(sf.col(spark_name(c))).alias(c) for c in columns))
    types = {field.name: field.dataType for field in frame.schema.fields}
    # and the message's own row, kept only to raise: whatever reads it raises (every column
    # being the raise, a filter the caller adds cannot fold it away)
    alone = notes.filter(raising(sf.lit(False))).select(
        *(raising(sf.lit(None).cast(types[c])).alias(c) for c in columns)
    )
    return rows.unionByName(alone)


_RAISING: dict[
    nw.Implementation, Callable[[nw.LazyFrame[Any], nw.LazyFrame[Any], Sequence[str]], Any]
] = {
    nw.Implementation.DUCKDB: _duckdb_guard,
    nw.Implementation.PYSPARK: _spark_guard,
    nw.Implementation.PYSPARK_CONNECT: _spark_guard,
}


def _prefix(index: int) -> str:
    return f"__fa_c{index}_"


def diagnostics(checks: Sequence[Check]) -> nw.LazyFrame[Any]:
    """One row: per check its proof's row, or else its message, side by side.

    The columns of check i are prefixed by :func:`_prefix`. On Polars built natively: the
    checks are part of every call, and a native plan costs a fraction of the narwhals one.
    """
    frames = [
        check.proof() if check.proof is not None else message_frame(check) for check in checks
    ]
    if all(f.implementation is nw.Implementation.POLARS for f in frames):
        natives = [
            f.to_native().select(pl.all().name.prefix(_prefix(i))) for i, f in enumerate(frames)
        ]
        return from_polars(pl.concat(natives, how="horizontal"))
    renamed = [f.select(nw.all().name.prefix(_prefix(i))) for i, f in enumerate(frames)]
    combined = renamed[0]
    for frame in renamed[1:]:
        combined = combined.join(frame, how="cross")
    return combined


def raise_first(checks: Sequence[Check], row: dict[str, Any]) -> None:
    """Raise the error of the first failed check, reading the :func:`diagnostics` ``row``.

    A failed proof computes that check's diagnostics (a second query, only then).
    """
    for i, check in enumerate(checks):
        prefix = _prefix(i)
        if check.proof is not None:
            own = {k.removeprefix(prefix): v for k, v in row.items() if k.startswith(prefix)}
            if _proves(check, own):
                continue
            value = message_frame(check).collect().item()
        else:
            value = row[prefix + MESSAGE]
        if value is not None:
            raise InvalidValueError.of_check(value)


def attach(native: pl.LazyFrame, checks: Sequence[Check], sort_by: list[str]) -> pl.LazyFrame:
    """Make the merged checks part of a Polars plan: they raise when the result is computed.

    The one-row diagnostics frame is on the left of a left join so that an empty result still
    carries the diagnostics to the check.
    """
    schema = native.collect_schema()
    combined: pl.LazyFrame = diagnostics(checks).to_native()
    flat = combined.collect_schema().names()
    diag = combined.with_columns(pl.lit(0).alias(_DIAG_KEY))
    joined = diag.join(
        native.with_columns(pl.lit(0).alias(_DIAG_KEY), pl.lit(True).alias(_PRESENT)),
        on=_DIAG_KEY,
        how="left",
    )

    def check_and_strip(frame: pl.DataFrame) -> pl.DataFrame:
        if frame.height:
            raise_first(checks, frame.row(0, named=True))
        out = frame.filter(pl.col(_PRESENT).is_not_null()).drop([*flat, _DIAG_KEY, _PRESENT])
        return out.sort(sort_by, nulls_last=True) if sort_by else out

    return joined.map_batches(check_and_strip, schema=schema)
