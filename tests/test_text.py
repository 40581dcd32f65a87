"""Values in check messages: formatted inside each engine exactly as Python's ``repr`` does.

The oracle is Python itself: every value, formatted by Polars, DuckDB and Spark through
:func:`frameaudit._engine.text.with_reprs`, must read as ``repr(value)``.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from typing import Any

import duckdb
import narwhals.stable.v2 as nw
import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frameaudit._engine import text

FLOATS = [
    *(1.5, 2.0, -0.25, 0.1, 0.3, 0.1 + 0.2, 0.0, -0.0, 1e15, 1e16, 1e20, 1e22, 1e23, 1e100),
    *(1.5e-05, 1e-05, 0.0001, 0.002, 1e-07, 5e-324, 2.0**-44, 2.2250738585072014e-308),
    *(123456789.123, 12345678.0, 1e7, 9007199254740993.0, 1.7976931348623157e308),
    *(math.nan, math.inf, -math.inf, None),
]
STRINGS = ["a", "it's", 'say "hi"', "both ' and \"", "back\\slash", "new\nline\ttab\r", "", "ü"]
OTHERS = {
    "integer": [1, -5, 0, 2**62, None],
    "boolean": [True, False, None],
    "date": [dt.date(2024, 1, 31), dt.date(1, 2, 3), None],
    "string": [*STRINGS, None],
}


def _polars(frame: pl.DataFrame) -> Any:
    return frame.lazy()


def _duckdb(frame: pl.DataFrame) -> Any:
    return duckdb.from_arrow(frame.to_arrow())


ENGINES: dict[str, Callable[[pl.DataFrame], Any]] = {"polars": _polars, "duckdb": _duckdb}


def _formatted(native: Any, column: str) -> list[str]:
    frame = text.with_reprs(nw.from_native(native)).select(text.repr_of(column))
    return list(frame.collect(backend="polars").to_native().to_series())


def _expected(values: list[Any]) -> list[str]:
    return [repr(v) for v in values]


def _check(make: Callable[[pl.DataFrame], Any]) -> None:
    floats = pl.DataFrame({"value": FLOATS}, schema={"value": pl.Float64})
    assert _formatted(make(floats), "value") == _expected(FLOATS)
    for column, values in OTHERS.items():
        frame = pl.DataFrame({column: values})
        assert _formatted(make(frame), column) == _expected(values), column


@pytest.mark.parametrize("engine", ENGINES)
def test_values_read_as_python_repr(engine: str) -> None:
    _check(ENGINES[engine])


@pytest.mark.spark
def test_values_read_as_python_repr_on_spark(spark_session: Any) -> None:
    _check(lambda frame: spark_session.createDataFrame(frame.to_arrow()))
    # floats from every range of exponents, at every length of their shortest digits
    rng = np.random.default_rng(3)
    drawn = [float(v) for v in rng.standard_normal(300) * 10.0 ** rng.integers(-30, 30, 300)]
    drawn += [float(np.float32(v)) for v in drawn[:50]]
    floats = pl.DataFrame({"value": drawn})
    shown = _formatted(spark_session.createDataFrame(floats.to_arrow()), "value")
    for value, written in zip(drawn, shown, strict=True):
        # Java rounds a 17-digit text from its own digits: the last may differ (documented)
        assert written == repr(value) or (_digits(repr(value)) == 17 and float(written) == value)


def _digits(written: str) -> int:
    """The significant digits of a float's text (none of 17-digit values ends in a zero)."""
    return len(written.split("e", maxsplit=1)[0].replace("-", "").replace(".", "").strip("0"))


def test_float32_columns_show_their_double_value() -> None:
    """A Float32 value shows as Python shows it once read (as a double)."""
    frame = pl.DataFrame({"value": [0.1, 2.5]}, schema={"value": pl.Float32})
    expected = _expected(frame["value"].to_list())
    for make in ENGINES.values():
        assert _formatted(make(frame), "value") == expected


@settings(deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=20))
def test_any_float_reads_as_python_repr(values: list[float]) -> None:
    frame = pl.DataFrame({"value": values}, schema={"value": pl.Float64})
    for make in ENGINES.values():
        assert _formatted(make(frame), "value") == _expected(values)


# what repr shows as it is (printable characters) and the escapes frameaudit writes
_SHOWN = st.characters(exclude_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"))
_TEXT = st.text(alphabet=_SHOWN | st.sampled_from(" \n\r\t'\"\\"), max_size=8)


@settings(deadline=None)
@given(st.lists(_TEXT, min_size=1, max_size=10))
def test_any_text_reads_as_python_repr(values: list[str]) -> None:
    frame = pl.DataFrame({"value": values}, schema={"value": pl.String})
    for make in ENGINES.values():
        assert _formatted(make(frame), "value") == _expected(values)


def _listed(values: list[Any], limit: int) -> tuple[int, str]:
    """What the listing of the values found reads, as Python writes it.

    The distinct non-null values in sorted order (NaN last), the first ``limit``, each as
    quoted text: a string or a date its own text, another value its ``repr``.
    """
    found = sorted(
        {v for v in values if v is not None},
        key=lambda v: (isinstance(v, float) and math.isnan(v), v),
    )
    shown = [repr(str(v) if isinstance(v, (str, dt.date)) else repr(v)) for v in found[:limit]]
    return len(found), ", ".join(shown)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("limit", [3, 100])
def test_the_values_found_are_listed_as_python_writes_them(engine: str, limit: int) -> None:
    """DuckDB lists them in one aggregation, the other engines through narwhals' steps."""
    columns = {"float": [v for v in FLOATS if str(v) != "-0.0"], **OTHERS}
    for column, values in columns.items():
        frame = nw.from_native(ENGINES[engine](pl.DataFrame({column: values})))
        present = frame.filter(~nw.col(column).is_null()).unique()
        for kept in (present, present.filter(nw.col(column).is_null())):
            listing = text.value_listing(kept, column, limit).collect(backend="polars")
            expected = _listed(values, limit) if kept is present else (0, "")
            assert listing.rows() == [expected], column
