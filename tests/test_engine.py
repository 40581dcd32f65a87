from __future__ import annotations

import importlib

import polars as pl
import pytest

import frameaudit as fa
from frameaudit import UnsupportedBackendError


def test_unsupported_frame_kind_names_the_supported_ones() -> None:
    with pytest.raises(UnsupportedBackendError, match=r"polars\.DataFrame.*pandas\.DataFrame"):
        fa.fair.exp([{"rank": 1, "group": "a"}])


def test_registration_survives_reload() -> None:
    importlib.reload(fa)
    df = pl.DataFrame({"rank": [1, 2], "group": ["a", "b"]})
    assert df.fair.exp().columns == ["exp"]


def test_lazy_call_reads_no_data() -> None:
    def boom(_: pl.DataFrame) -> pl.DataFrame:
        raise AssertionError("data was read at call time")

    lf = pl.LazyFrame({"rank": [1, 2], "group": ["a", "b"]}).map_batches(
        boom, schema={"rank": pl.Int64, "group": pl.String}
    )
    result = lf.fair.exp()
    assert isinstance(result, pl.LazyFrame)
    with pytest.raises(AssertionError, match="data was read"):
        result.collect()


def test_caller_frame_is_not_modified() -> None:
    pdf = pl.DataFrame({"rank": [1, 2, 3], "group": ["a", "b", "a"]}).to_pandas()
    before = pdf.copy()
    pdf.fair.exp(combo=None)
    assert pdf.equals(before)
    assert list(pdf.columns) == ["rank", "group"]
