"""Values shown in error messages, formatted inside the engine exactly as Python shows them.

A value check's message is a string expression over its one-row diagnostics frame (see
:mod:`frameaudit._engine.checks`), so that DuckDB and Spark can raise it from inside the
query. The examples it shows must read the same on every engine, and the same as Python's
``repr`` (the text frameaudit has always shown): :func:`with_reprs` adds, next to every
column of such a frame, its values as ``repr`` writes them, and :func:`repr_of` names that
text in a message. Engines disagree on how a float becomes text (``1e-05``, ``1.0E-5``,
``0.00001``), so floats are formatted natively, per engine; everything else is portable:

* integers as their digits; booleans as ``True``/``False``; null as ``None``;
* floats as the shortest text that reads back as the same float (``0.1``, ``2.0``,
  ``1e+16``, ``nan``, ``-inf``);
* strings quoted and escaped as ``repr`` does (backslash, quote, newline, carriage return
  and tab; other control characters are shown as they are);
* dates as ``datetime.date(2024, 1, 31)``; other dtypes as the engine casts them to text.
"""

from __future__ import annotations

from typing import Any

import narwhals.stable.v2 as nw
import polars as pl

__all__ = [
    "duckdb_name",
    "integer",
    "joined",
    "quoted",
    "repr_of",
    "shown",
    "spark_name",
    "value_listing",
    "with_reprs",
]

_REPR = "__fa_repr_"

# Python writes floats in positional notation from 1e-4 up to (not including) 1e16
_LOWEST_POSITIONAL, _HIGHEST_POSITIONAL = -4, 16
_DIGITS = 17  # every float is one of at most 17 significant digits


def repr_of(column: str) -> nw.Expr:
    """The values of ``column`` of a frame passed through :func:`with_reprs`, as ``repr``."""
    return nw.col(_REPR + column)


def shown(column: str) -> nw.Expr:
    """An offending value: its ``repr``, or ``NaN`` when it is NaN or missing.

    The aggregation that picks an example skips NaN, so a missing example means NaN.
    """
    missing = nw.col(column).is_null() | (repr_of(column) == "nan")
    return nw.when(missing).then(nw.lit("NaN")).otherwise(repr_of(column))


def integer(expr: nw.Expr) -> nw.Expr:
    """A count as text (its digits)."""
    return expr.cast(nw.Int64).cast(nw.String)


def joined(*parts: str | nw.Expr) -> nw.Expr:
    """A message from literal text and string expressions.

    A null part is left out: every part the messages show is a value's text (``None`` for a
    null value) or a count, and a message is only read where its check failed. Written so,
    DuckDB's and Spark's SQL for a text holds each part once; with nulls propagating, narwhals
    writes each part a second time for the test (a fifth of the SQL of a check's messages).
    """
    texts = (nw.lit(p) if isinstance(p, str) else p for p in parts)
    return nw.concat_str(*texts, ignore_nulls=True)


def quoted(value: nw.Expr) -> nw.Expr:
    """``repr`` of a string: single quotes unless the text has one and no double quote."""
    escaped = value.str.replace_all("\\", "\\\\", literal=True)
    for char, escape in (("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t")):
        escaped = escaped.str.replace_all(char, escape, literal=True)
    double = value.str.contains("'", literal=True) & ~value.str.contains('"', literal=True)
    single = joined("'", escaped.str.replace_all("'", "\\'", literal=True), "'")
    return nw.when(double).then(joined('"', escaped, '"')).otherwise(single)


def _date(value: nw.Expr) -> nw.Expr:
    parts = (value.dt.year(), value.dt.month(), value.dt.day())
    return joined("datetime.date(", *_separated([integer(p) for p in parts]), ")")


def _separated(parts: list[nw.Expr]) -> list[str | nw.Expr]:
    out: list[str | nw.Expr] = []
    for part in parts:
        out += [", ", part] if out else [part]
    return out


def _portable(value: nw.Expr, dtype: Any) -> nw.Expr:
    """``repr`` of a non-float column, in narwhals (every engine agrees on these)."""
    if isinstance(dtype, (nw.String, nw.Categorical, nw.Enum)):
        return quoted(value.cast(nw.String))
    if isinstance(dtype, nw.Boolean):
        return nw.when(value).then(nw.lit("True")).otherwise(nw.lit("False"))
    if isinstance(dtype, nw.Date):
        return _date(value)
    return value.cast(nw.String)


def with_reprs(frame: nw.LazyFrame[Any]) -> nw.LazyFrame[Any]:
    """``frame`` with, for every column, its values as Python's ``repr`` shows them.

    Meant for the one-row diagnostics frames of value checks: the floats take one native
    step, seventeen candidate texts on Spark; no Python function runs in the plan.
    """
    schema = frame.collect_schema()
    floats = [name for name, dtype in schema.items() if dtype.is_float()]
    implementation = frame.implementation
    if implementation in (nw.Implementation.PYSPARK, nw.Implementation.DUCKDB):
        # one SQL select: narwhals' expressions for the same texts cost a few thousand calls
        # into the JVM per metric call on Spark, and on DuckDB a fifth of a small call's time
        spark = implementation is nw.Implementation.PYSPARK
        quote = spark_name if spark else duckdb_name
        others = {
            name: f"CASE WHEN {quote(name)} IS NULL THEN 'None' "
            f"ELSE {_sql_portable(quote(name), dtype)} END"
            for name, dtype in schema.items()
            if name not in floats
        }
        native = frame.to_native()
        if spark:
            selected = [f"{sql} AS {spark_name(_REPR + name)}" for name, sql in others.items()]
            spark_texts: nw.LazyFrame[Any] = nw.from_native(native.selectExpr("*", *selected))
            return _with_float_reprs(spark_texts, floats) if floats else spark_texts
        import duckdb  # noqa: PLC0415 (an optional engine)

        others |= {name: _duckdb_float(duckdb_name(name)) for name in floats}
        columns = [duckdb.SQLExpression(sql).alias(_REPR + name) for name, sql in others.items()]
        formatted: nw.LazyFrame[Any] = nw.from_native(
            native.select(duckdb.StarExpression(), *columns)
        )
        return formatted
    texts = [
        nw.when(nw.col(name).is_null())
        .then(nw.lit("None"))
        .otherwise(_portable(nw.col(name), dtype))
        .alias(_REPR + name)
        for name, dtype in schema.items()
        if name not in floats
    ]
    with_texts = frame.with_columns(*texts) if texts else frame
    return _with_float_reprs(with_texts, floats) if floats else with_texts


def _duckdb_float(value: str) -> str:
    """``repr`` of a float as DuckDB SQL.

    DuckDB writes a DOUBLE as Python does (shortest round trip, same notation), but for the
    sign of a NaN.
    """
    return (
        f"CASE WHEN isnan({value}) THEN 'nan' ELSE "
        f"COALESCE(CAST(CAST({value} AS DOUBLE) AS VARCHAR), 'None') END"
    )


def value_listing(values: nw.LazyFrame[Any], column: str, limit: int) -> nw.LazyFrame[Any]:
    """One row: how many rows ``values`` has, and the first ``limit`` of them as text.

    ``values`` holds the distinct non-null values of ``column``. ``__fa_found_total`` is their
    number (Int64); ``__fa_found`` the first ``limit`` in sorted order, joined by ", " ("" for
    none), each as text quoted as ``repr`` quotes a string: a text or a date its own text,
    another value the text Python writes for it. On DuckDB, which builds every check's
    diagnostics with the call, one aggregation (``min_by`` keeps the first ``limit``; the
    narwhals steps took 30 of the 80 ms of building cluster_distribution_tv there); elsewhere
    the first values are numbered by how many of them are smaller or equal (no window: Dask).
    """
    dtype = values.collect_schema()[column]
    plain = isinstance(dtype, (nw.String, nw.Categorical, nw.Enum, nw.Date))
    if values.implementation is nw.Implementation.DUCKDB:
        name = duckdb_name(column)
        if plain:  # a date too is shown as its text
            shown_sql = _sql_portable(name, nw.String())
        else:  # the text of the value as Python writes it, quoted
            written = _duckdb_float(name) if dtype.is_float() else _sql_portable(name, dtype)
            shown_sql = _sql_portable(written, nw.String())
        listed = (
            f"CAST(count(*) AS BIGINT) AS __fa_found_total, "
            f"coalesce(array_to_string(min_by({shown_sql}, {name}, {limit}), ', '), '') "
            "AS __fa_found"
        )
        aggregated: nw.LazyFrame[Any] = nw.from_native(values.to_native().aggregate(listed))
        return aggregated
    total = values.select(nw.len().cast(nw.Int64).alias("__fa_found_total"))
    head = values.sort(column).head(limit)
    pairs = head.join(head.select(nw.col(column).alias("__fa_other")), how="cross")
    ranked = (
        pairs.filter(nw.col("__fa_other") <= nw.col(column))
        .group_by(column)
        .agg(nw.len().alias("__fa_rank"))
    )
    first = with_reprs(ranked)
    value = quoted(nw.col(column).cast(nw.String) if plain else repr_of(column))
    slots = first.with_columns(
        *(
            nw.when(nw.col("__fa_rank") == j).then(value).alias(f"__fa_v{j}")
            for j in range(1, limit + 1)
        )
    )
    listing = slots.select(*(nw.col(f"__fa_v{j}").max() for j in range(1, limit + 1)))
    listed_text = listing.select(
        nw.concat_str(
            *(f"__fa_v{j}" for j in range(1, limit + 1)), separator=", ", ignore_nulls=True
        ).alias("__fa_found")
    )
    return total.join(listed_text, how="cross")


def spark_name(name: str) -> str:
    """A column name as a Spark SQL identifier: in backticks, its own backticks doubled."""
    return "`" + name.replace("`", "``") + "`"


def _sql_portable(value: str, dtype: Any) -> str:
    """:func:`_portable` as Spark or DuckDB SQL over the non-null ``value``.

    Characters by their codes: a backslash in a SQL string literal is an escape or not
    depending on the session's settings.
    """
    if isinstance(dtype, (nw.String, nw.Categorical, nw.Enum)):
        value = f"CAST({value} AS STRING)"
        escaped = f"replace({value}, chr(92), concat(chr(92), chr(92)))"
        for char, letter in ((10, "n"), (13, "r"), (9, "t")):
            escaped = f"replace({escaped}, chr({char}), concat(chr(92), '{letter}'))"
        single = f"replace({escaped}, chr(39), concat(chr(92), chr(39)))"
        return (
            f"CASE WHEN instr({value}, chr(39)) > 0 AND instr({value}, chr(34)) = 0 "
            f"THEN concat(chr(34), {escaped}, chr(34)) "
            f"ELSE concat(chr(39), {single}, chr(39)) END"
        )
    if isinstance(dtype, nw.Boolean):
        return f"CASE WHEN {value} THEN 'True' ELSE 'False' END"
    if isinstance(dtype, nw.Date):
        parts = ", ', ', ".join(
            f"CAST({part}({value}) AS STRING)" for part in ("year", "month", "day")
        )
        return f"concat('datetime.date(', {parts}, ')')"
    return f"CAST({value} AS STRING)"


def _with_float_reprs(frame: nw.LazyFrame[Any], floats: list[str]) -> nw.LazyFrame[Any]:
    implementation = frame.implementation
    native = frame.to_native()
    if implementation is nw.Implementation.POLARS:
        formatted = native.with_columns(
            _polars_float(pl.col(name).cast(pl.Float64)).alias(_REPR + name) for name in floats
        )
    elif implementation is nw.Implementation.PYSPARK:
        from pyspark.sql import functions as sf  # noqa: PLC0415 (an optional engine)

        formatted = native
        for name in floats:
            for step, sql in _spark_float(f"CAST(`{name}` AS DOUBLE)"):
                formatted = formatted.withColumn(step, sf.expr(sql))
            formatted = formatted.withColumnRenamed(_SPARK_TEXT, _REPR + name).drop(*_SPARK_STEPS)
    else:
        return frame.with_columns(
            nw.col(name).cast(nw.Float64).cast(nw.String).fill_null("None").alias(_REPR + name)
            for name in floats
        )
    result: nw.LazyFrame[Any] = nw.from_native(formatted)
    return result


def _polars_float(value: pl.Expr) -> pl.Expr:
    """Polars writing a Float64 as Python's ``repr`` does (no Python function in the plan).

    Polars writes the same shortest digits, but positionally down to 1e-5 (``0.000015``, where
    Python writes ``1.5e-05``), with an unpadded negative exponent (``1e-7``) and ``NaN``.
    """
    written = value.cast(pl.String)
    fraction = written.str.strip_chars_start("-").str.slice(2)  # the digits after "0."
    digits = fraction.str.strip_chars_start("0")
    exponent = fraction.str.len_chars() - digits.str.len_chars() + 1
    rest = pl.when(digits.str.len_chars() > 1).then(pl.concat_str(pl.lit("."), digits.str.slice(1)))
    small = pl.concat_str(
        pl.when(value < 0).then(pl.lit("-")).otherwise(pl.lit("")),
        digits.str.slice(0, 1),
        rest.otherwise(pl.lit("")),
        pl.lit("e-"),
        exponent.cast(pl.String).str.zfill(2),
    )
    positional = ~written.str.contains("e", literal=True)
    return (
        pl.when(value.is_null())
        .then(pl.lit("None"))
        .when(value.is_nan())
        .then(pl.lit("nan"))
        .when(positional & (value != 0) & (value.abs() < 10.0**_LOWEST_POSITIONAL))
        .then(small)
        .otherwise(written.str.replace(r"e-(\d)$", "e-0${1}"))
    )


def duckdb_name(name: str) -> str:
    """A column name as a DuckDB SQL identifier: in double quotes, its own doubled."""
    return '"' + name.replace('"', '""') + '"'


_SPARK_SHORTEST, _SPARK_MANTISSA, _SPARK_EXPONENT, _SPARK_TEXT = (
    "__fa_shortest",
    "__fa_mantissa",
    "__fa_exponent",
    "__fa_text",
)
_SPARK_STEPS = (_SPARK_SHORTEST, _SPARK_MANTISSA, _SPARK_EXPONENT)


def _spark_float(value: str) -> list[tuple[str, str]]:
    """Spark SQL steps (column, expression) writing the DOUBLE ``value`` as ``repr`` does.

    Java writes doubles in its own notation (``1.0E-5``), with more digits than needed on
    some (``9.999999999999999E22`` for 1e23): the shortest of the texts with 1 to 17
    significant digits that reads back as the value gives Python's digits, laid out then in
    Python's notation (positional from 1e-4 up to 1e16, else ``1.5e-05``). Java rounds those
    texts from its own digits, so a value that needs all 17 digits may end one digit off
    Python's (both read back as the value).
    """
    size = f"ABS({value})"
    candidates = ", ".join(
        f"CASE WHEN TRY_CAST(format_string('%.{p}e', {size}) AS DOUBLE) = {size} "
        f"THEN format_string('%.{p}e', {size}) END"
        for p in range(_DIGITS)
    )
    mantissa, exponent = _SPARK_MANTISSA, _SPARK_EXPONENT
    digits = f"replace({mantissa}, '.', '')"
    scientific = (
        f"concat({mantissa}, 'e', IF({exponent} < 0, '-', '+'), "
        f"IF(ABS({exponent}) < 10, '0', ''), CAST(ABS({exponent}) AS STRING))"
    )
    positional = (
        f"CASE WHEN {exponent} < 0 THEN concat('0.', repeat('0', -{exponent} - 1), {digits}) "
        f"WHEN length({digits}) <= {exponent} + 1 "
        f"THEN concat({digits}, repeat('0', {exponent} + 1 - length({digits})), '.0') "
        f"ELSE concat(substring({digits}, 1, {exponent} + 1), '.', "
        f"substring({digits}, {exponent} + 2)) END"
    )
    layout = (
        f"CASE WHEN {exponent} < {_LOWEST_POSITIONAL} OR {exponent} >= {_HIGHEST_POSITIONAL} "
        f"THEN {scientific} ELSE {positional} END"
    )
    text = (
        f"CASE WHEN {value} IS NULL THEN 'None' WHEN isnan({value}) THEN 'nan' "
        f"WHEN {value} = double('inf') THEN 'inf' WHEN {value} = double('-inf') THEN '-inf' "
        f"WHEN {value} = 0 THEN CAST({value} AS STRING) "
        f"ELSE concat(IF({value} < 0, '-', ''), {layout}) END"
    )
    return [
        (_SPARK_SHORTEST, f"COALESCE({candidates})"),
        (mantissa, f"substring_index({_SPARK_SHORTEST}, 'e', 1)"),
        (exponent, f"TRY_CAST(substring_index({_SPARK_SHORTEST}, 'e', -1) AS INT)"),
        (_SPARK_TEXT, text),
    ]
