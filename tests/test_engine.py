from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import pandas as pd
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import frameaudit as fa
from frameaudit import FrameAuditError, InvalidDtypeError, UnsupportedBackendError, _engine
from frameaudit.datasets import biased_rankings


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


# Reusable plans (``reuses_plans``): a call on an in-memory frame keeps its finished plan and
# the next frame of the same shape runs it. The oracle is the undecorated function
# (``__wrapped__``), which builds a fresh plan every call.


def _rankings(seed: int) -> pl.DataFrame:
    df = biased_rankings([0.4, 0.6], 30, phi=0.4, num_rankings=4, seed=seed)
    rng = np.random.default_rng(seed)
    return df.with_columns(pl.Series("relevance", rng.random(df.height)))


def _clusters(seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    n = 400
    return pl.DataFrame(
        {
            "cluster": rng.integers(0, 5, n),
            "group": rng.choice(["x", "y", "z"], n),
            "f1": rng.normal(size=n),
            "f2": rng.normal(size=n),
        }
    )


def _runs(seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    runs, samples = 4, 50
    target = rng.integers(0, 3, samples)
    return pl.DataFrame(
        {
            "run": np.repeat(np.arange(runs), samples),
            "sample": np.tile(np.arange(samples), runs),
            "target": np.tile(target, runs),
            "prediction": rng.integers(0, 3, runs * samples),
        }
    )


def _neighbours(seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    queries, k = 40, 5
    return pl.DataFrame(
        {
            "query": np.repeat(np.arange(queries), k),
            "distance": rng.random(queries * k),
            "label": rng.integers(0, 2, queries * k),
            "predicted": np.repeat(rng.integers(0, 2, queries), k),
        }
    )


def _importances(seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    features = [f"f{i}" for i in range(12)]
    groups = ["all", "g1", "g2"]
    return pl.DataFrame(
        {
            "group": np.repeat(groups, len(features)),
            "feature": features * len(groups),
            "importance": rng.random(len(features) * len(groups)),
        }
    )


REUSE_CASES: list[tuple[Callable[..., Any], Callable[[int], pl.DataFrame], dict[str, Any]]] = [
    (fa.fair.exp, _rankings, {"ranking": "ranking", "item": "item"}),
    (fa.fair.awrf, _rankings, {"ranking": "ranking", "p": 0.5, "combo": None}),
    (fa.fair.ndkl, _rankings, {"ranking": "ranking", "item": "item", "by": "ranking"}),
    (fa.fair.iaa, _rankings, {"ranking": "ranking"}),
    (fa.fair.cluster_distribution_tv, _clusters, {"a": "x", "b": "y"}),
    (fa.fair.cluster_balance, _clusters, {"a": "x", "b": "y", "per_cluster": True}),
    (fa.fair.social_fairness_ratio, _clusters, {"a": "x", "b": "y", "features": ["f1", "f2"]}),
    (fa.repro.ec_local, _runs, {}),
    (fa.repro.total_consistency, _runs, {}),
    (fa.explain.correspondence, _neighbours, {"class_weights": {0: 2.0}}),
    (fa.explain.position_parity, _importances, {"overall": "all"}),
    (fa.explain.rank_alignment, _importances, {"overall": "all", "k": 8}),
]
IN_MEMORY: dict[str, Callable[[pl.DataFrame], Any]] = {
    "polars": lambda df: df,
    "pandas": lambda df: df.to_pandas(),
    "pyarrow": lambda df: df.to_arrow(),
}


def _as_polars(result: Any) -> pl.DataFrame:
    return nw.from_native(result, eager_only=True).to_polars()


@pytest.fixture
def no_kept_plans() -> Iterator[None]:
    _engine._thread_templates().clear()
    yield
    _engine._thread_templates().clear()


@pytest.mark.usefixtures("no_kept_plans")
@pytest.mark.parametrize("kind", IN_MEMORY)
@pytest.mark.parametrize(
    ("function", "data", "options"), REUSE_CASES, ids=[c[0].__name__ for c in REUSE_CASES]
)
def test_reused_plan_gives_the_result_of_a_fresh_plan(
    function: Callable[..., Any],
    data: Callable[[int], pl.DataFrame],
    options: dict[str, Any],
    kind: str,
) -> None:
    convert = IN_MEMORY[kind]
    first = _as_polars(function(convert(data(0)), **options))
    kept = list(_engine._thread_templates().values())
    assert len(kept) == 1  # the plan was kept ...
    for seed in (1, 2):
        frame = convert(data(seed))
        reused = _as_polars(function(frame, **options))
        fresh = _as_polars(function.__wrapped__(frame, **options))  # type: ignore[attr-defined]
        assert_frame_equal(reused, fresh)
        assert not reused.equals(first)  # a stale result could not pass
    assert list(_engine._thread_templates().values()) == kept  # ... and reused
    assert kept[0].slot.data is None  # the caller's data is not held after the call


def _duplicate_item(df: pl.DataFrame) -> pl.DataFrame:
    return df.with_columns(
        pl.when((pl.col("ranking") == 2) & (pl.col("rank") == 3))
        .then(pl.col("item").filter((pl.col("ranking") == 2) & (pl.col("rank") == 1)).first())
        .otherwise(pl.col("item"))
        .alias("item")
    )


BAD_RANKINGS: list[tuple[str, Callable[[pl.DataFrame], pl.DataFrame]]] = [
    ("duplicate item", _duplicate_item),
    ("rank below 1", lambda df: df.with_columns(pl.col("rank") - 1)),
    (
        "null group",
        lambda df: df.with_columns(
            pl.when(pl.col("rank") == 2).then(None).otherwise(pl.col("group")).alias("group")
        ),
    ),
    ("relevance above 1", lambda df: df.with_columns(pl.col("relevance") + 1.0)),
]


@pytest.mark.usefixtures("no_kept_plans")
@pytest.mark.parametrize("bad", [b[1] for b in BAD_RANKINGS], ids=[b[0] for b in BAD_RANKINGS])
def test_reused_plan_raises_what_a_fresh_plan_raises(
    bad: Callable[[pl.DataFrame], pl.DataFrame],
) -> None:
    options = {"ranking": "ranking", "item": "item"}
    fa.fair.expu(_rankings(0), **options)
    assert len(_engine._thread_templates()) == 1
    frame = bad(_rankings(1))
    with pytest.raises(FrameAuditError) as fresh:
        fa.fair.expu.__wrapped__(frame, **options)  # type: ignore[attr-defined]
    with pytest.raises(FrameAuditError) as reused:
        fa.fair.expu(frame, **options)
    assert type(reused.value) is type(fresh.value)
    assert str(reused.value) == str(fresh.value)
    assert next(iter(_engine._thread_templates().values())).slot.data is None


@pytest.mark.usefixtures("no_kept_plans")
def test_plan_shaped_by_data_is_not_kept() -> None:
    @_engine.reuses_plans
    def largest(frame: Any) -> Any:
        source = _engine.to_engine(frame, {"x": "x"})
        peeked = source.frame.select(nw.col("x").max()).collect().item()
        return _engine.from_engine(source.frame.select(nw.lit(peeked).alias("m")), source)

    assert largest(pl.DataFrame({"x": [1]})).item() == 1
    assert largest(pl.DataFrame({"x": [5]})).item() == 5
    assert not _engine._thread_templates()


@pytest.mark.usefixtures("no_kept_plans")
def test_frames_given_as_parameters_are_not_keyed() -> None:
    df = _rankings(0)
    mapping = df.select("item", "group").unique()
    fa.fair.exp(df.drop("group"), ranking="ranking", item="item", groups=mapping)
    assert not _engine._thread_templates()


@pytest.mark.usefixtures("no_kept_plans")
def test_same_pandas_dtypes_converting_differently_build_afresh() -> None:
    # object columns convert by content: integer positions the first time, floats the second
    def frame(ranks: list[float]) -> pd.DataFrame:
        return pd.DataFrame({"rank": pd.Series(ranks, dtype=object), "group": list("abab")})

    fa.fair.exp(frame([1, 2, 3, 4]))
    with pytest.raises(InvalidDtypeError, match="rank"):
        fa.fair.exp(frame([1.0, 2.0, 3.0, 4.0]))


def test_each_thread_runs_its_own_plans() -> None:
    options = {"ranking": "ranking", "item": "item", "by": "ranking"}
    frames = [_rankings(seed) for seed in range(8)]
    expected = [fa.fair.ndkl.__wrapped__(f, **options) for f in frames]  # type: ignore[attr-defined]

    def work(index: int) -> bool:
        return all(
            fa.fair.ndkl(frames[(index + i) % 8], **options).equals(expected[(index + i) % 8])
            for i in range(8)
        )

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, range(8)))


def test_every_metric_function_reuses_plans() -> None:
    public = [
        *(getattr(fa.fair, n) for n in fa.fair.__all__ if n not in ("COMBOS", "Combo")),
        *(getattr(fa.repro, n) for n in fa.repro.__all__ if callable(getattr(fa.repro, n))),
        fa.explain.correspondence,
        fa.explain.position_parity,
        fa.explain.rank_alignment,
    ]
    functions = [f for f in public if inspect.isfunction(f)]
    assert len(functions) >= 28
    for function in functions:
        assert hasattr(function, "__wrapped__"), function.__name__
