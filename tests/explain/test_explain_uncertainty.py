"""Unit weights and bootstrap intervals of the explanation family (SPEC §5).

Correspondence summaries (``by=``) resample queries. Weights are checked by their defining
identity (an integer weight k is the query repeated k times with fresh ids), against frameaudit
on the repeated data and against the plain reference; intervals against a straightforward numpy
bootstrap (multinomial resampling of the queries, an independent random stream), by their
coverage of a known population value, and for equality across engines and row orders. Order
cohesion has no resampling unit: ``ci=`` is refused there.
"""

from __future__ import annotations

import functools
from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import polars as pl
import pytest
from conftest import Constructor, assert_frame_close, to_polars
from reference import explain as ref

import frameaudit as fa
from frameaudit._engine.resample import with_poisson_counts

Cases = list[tuple[int, int, list[tuple[int, float, int]]]]

WEIGHTS = (0, 1, 2, 3, 1, 2)  # the weight of query q is WEIGHTS[q % 6]
SUMMARY = ["correspondence", "n_queries", "n_undefined", "n_high", "n_medium", "n_low"]


def _weight(query: int) -> int:
    return WEIGHTS[query % len(WEIGHTS)]


def _frame(cases: Cases) -> pl.DataFrame:
    """The neighbour rows with a fold (query mod 3) and the query's weight ``w``."""
    return ref.neighbour_frame(cases).with_columns(
        (pl.col("query") % 3).alias("fold"),
        pl.col("query").map_elements(_weight, return_dtype=pl.Int64).alias("w"),
    )


def _repeated(cases: Cases) -> Cases:
    """Each query repeated by its weight, every copy a query of its own (id 10·query + copy)."""
    return [
        (query * 10 + copy, predicted, neighbours)
        for query, predicted, neighbours in cases
        for copy in range(_weight(query))
    ]


def _reference(cases: Cases, by: str, **options: Any) -> pl.DataFrame:
    def part(query: int, predicted: int) -> int:
        return predicted if by == "predicted" else (query // 10) % 3

    rows = ref.correspondence_summary(cases, part, **options)
    return pl.DataFrame(rows, schema=[by, *SUMMARY], orient="row")


OPTIONS: dict[str, dict[str, Any]] = {
    "distance": {},
    "unweighted": {"weighted": False},
    "class-weights": {"class_weights": {0: 2.0, 1: 0.0}},
}


@pytest.mark.parametrize("by", ["fold", "predicted"])
@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("seed", range(3))
def test_integer_weight_is_the_query_repeated(by: str, option: str, seed: int) -> None:
    cases = ref.random_neighbours(seed, n_queries=40, max_neighbours=8, n_classes=3)
    options = OPTIONS[option]
    result = fa.explain.correspondence(_frame(cases), by=by, weight="w", **options)
    repeated = _repeated(cases)
    assert_frame_close(result, _reference(repeated, by, **options), rel=1e-12)
    repeated_frame = ref.neighbour_frame(repeated).with_columns(
        ((pl.col("query") // 10) % 3).alias("fold")
    )
    unweighted = fa.explain.correspondence(repeated_frame, by=by, **options)
    assert_frame_close(result, unweighted, rel=1e-12)
    # the weighted counts are sums of weights
    assert result.schema["n_queries"] == pl.Float64
    assert unweighted.schema["n_queries"] == pl.Int64


def test_with_an_interval_the_weighted_summary_is_the_same() -> None:
    cases = ref.random_neighbours(3, n_queries=40, max_neighbours=8, n_classes=3)
    frame = _frame(cases)
    plain = fa.explain.correspondence(frame, by="fold", weight="w")
    result = fa.explain.correspondence(frame, by="fold", weight="w", ci=0.9, n_boot=100)
    assert_frame_close(result.select("fold", *SUMMARY), plain, rel=1e-12)
    defined = (
        fa.explain.correspondence(frame)
        .join(frame.select("query", "fold", "w").unique(), on="query")
        .filter(pl.col("correspondence").is_not_null() & (pl.col("w") > 0))
        .group_by("fold")
        .len()
        .sort("fold")
    )
    assert result["queries"].to_list() == defined["len"].to_list()


def test_weight_zero_leaves_the_query_out_including_its_interval() -> None:
    cases = ref.random_neighbours(5, n_queries=30, max_neighbours=6, n_classes=2)
    frame = _frame(cases)
    kwargs: dict[str, Any] = {"by": "fold", "weight": "w", "ci": 0.9, "n_boot": 300, "seed": 3}
    with_zeros = fa.explain.correspondence(frame, **kwargs)
    without = fa.explain.correspondence(frame.filter(pl.col("w") > 0), **kwargs)
    # the same queries, numbered alike: the same counts in every replicate (the sums may add
    # in another order)
    assert_frame_close(with_zeros, without, rel=1e-12)
    assert with_zeros["n_queries"].sum() == sum(_weight(q) for q, _, _ in cases)


def test_fractional_weights_weigh_the_mean_and_the_counts() -> None:
    frame = pl.DataFrame(
        {
            "query": [0, 1, 1, 2],
            "fold": ["a"] * 4,
            "distance": [0.0, 0.0, 0.0, None],
            "label": [1, 0, 0, None],
            "predicted": [1, 1, 1, 1],
            "w": [0.5, 1.5, 1.5, 2.0],
        }
    )
    # query 0: correspondence 1 (high), query 1: 0 (low), query 2: no neighbours (undefined)
    result = fa.explain.correspondence(frame, by="fold", weight="w")
    assert result.row(0) == ("a", pytest.approx(0.5 / 2.0), 4.0, 2.0, 0.5, 0.0, 1.5)


# ---------------------------------------------------------------------------------------------
# Intervals against an independent numpy bootstrap


def _per_query(cases: Cases) -> tuple[np.ndarray, np.ndarray]:
    """Per query: its correspondence (0 where undefined) and whether it is defined."""
    values = [ref.correspondence(neighbours, predicted) for _, predicted, neighbours in cases]
    defined = np.array([v is not None for v in values], dtype=float)
    return np.array([0.0 if v is None else v for v in values]), defined


@pytest.mark.parametrize("weighted_units", [False, True])
def test_interval_matches_a_numpy_bootstrap(weighted_units: bool) -> None:
    cases = ref.random_neighbours(11, n_queries=150, max_neighbours=10, n_classes=2)
    frame = _frame(cases).with_columns(pl.lit("all").alias("part"))
    level, n_boot = 0.9, 2000
    weight = "w" if weighted_units else None
    result = fa.explain.correspondence(
        frame, by="part", weight=weight, ci=level, n_boot=n_boot, seed=4
    )
    values, defined = _per_query(cases)
    units = np.array([_weight(q) if weighted_units else 1 for q, _, _ in cases], dtype=float)
    rng = np.random.default_rng(0)
    counts = rng.multinomial(150, np.full(150, 1 / 150), size=n_boot) * units
    replicates = (counts @ (values * defined)) / (counts @ defined)
    tail = (1 - level) / 2
    low, high = np.quantile(replicates, [tail, 1 - tail])
    # Monte-Carlo error of a 5% quantile of 2,000 draws: about 0.05 of the interval's width
    tolerance = 0.15 * (high - low)
    assert result["correspondence_lo"].item() == pytest.approx(low, abs=tolerance)
    assert result["correspondence_hi"].item() == pytest.approx(high, abs=tolerance)
    assert result["queries"].item() == int((defined * (units > 0)).sum())
    assert result["undefined_replicates"].item() == 0


@pytest.mark.slow
def test_ninety_percent_intervals_cover_the_population_value_ninety_percent_of_the_time() -> None:
    """400 samples of 60 queries; each query's 4 neighbours match its prediction with p = 0.7.

    Unweighted, a query's correspondence is the matching share, so the population mean
    correspondence is 0.7.
    """
    rng = np.random.default_rng(2026)
    samples, queries, neighbours = 400, 60, 4
    matches = rng.random((samples, queries, neighbours)) < 0.7
    frame = pl.DataFrame(
        {
            "sample": np.repeat(np.arange(samples), queries * neighbours),
            "query": np.tile(np.repeat(np.arange(queries), neighbours), samples),
            "label": matches.ravel().astype(np.int64),
            "predicted": np.ones(samples * queries * neighbours, dtype=np.int64),
        }
    )
    result = fa.explain.correspondence(
        frame, by="sample", weighted=False, ci=0.9, n_boot=500, seed=1
    )
    covered = ((result["correspondence_lo"] <= 0.7) & (result["correspondence_hi"] >= 0.7)).mean()
    # the binomial standard error of the coverage over 400 samples is 0.015
    assert 0.85 <= covered <= 0.95, covered


# ---------------------------------------------------------------------------------------------
# Reproducible everywhere


_ENGINE_CASES: dict[str, dict[str, Any]] = {
    "by-fold": {"by": "fold"},
    "by-predicted-unweighted": {"by": "predicted", "weighted": False},
    "weighted-units": {"by": "fold", "weight": "w"},
}


@functools.cache
def _same_seed_case(case: str) -> tuple[pl.DataFrame, dict[str, Any], pl.DataFrame]:
    """The frame, ``case``'s keywords with an interval and its Polars result."""
    frame = _frame(ref.random_neighbours(3, n_queries=30, max_neighbours=6, n_classes=3))
    kwargs = {"ci": 0.8, "n_boot": 200, "seed": 7, **_ENGINE_CASES[case]}
    return frame, kwargs, fa.explain.correspondence(frame, **kwargs)


@pytest.mark.spark(cases=["weighted-units"])
@pytest.mark.parametrize("case", list(_ENGINE_CASES))
def test_same_seed_same_interval_on_every_engine(constructor: Constructor, case: str) -> None:
    frame, kwargs, polars = _same_seed_case(case)
    native = fa.explain.correspondence(constructor(frame), **kwargs)
    assert_frame_close(to_polars(native), polars)


@pytest.mark.parametrize("case", list(_ENGINE_CASES))
def test_same_seed_same_interval_in_any_row_order(case: str) -> None:
    frame, kwargs, polars = _same_seed_case(case)
    assert polars["correspondence_lo"].null_count() == 0
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=1)
    assert_frame_close(fa.explain.correspondence(shuffled, **kwargs), polars)


def test_lazy_call_stays_lazy_and_streams() -> None:
    frame = _frame(ref.random_neighbours(3, n_queries=30, max_neighbours=6, n_classes=3))
    lazy = fa.explain.correspondence(frame.lazy(), by="fold", ci=0.9, n_boot=100)
    assert isinstance(lazy, pl.LazyFrame)
    eager = fa.explain.correspondence(frame, by="fold", ci=0.9, n_boot=100)
    assert_frame_close(lazy.collect(engine="streaming"), eager)


def test_the_output_columns_and_seeds() -> None:
    frame = _frame(ref.random_neighbours(3, n_queries=60, max_neighbours=6, n_classes=3))
    first = fa.explain.correspondence(frame, by="fold", ci=0.9, n_boot=200, seed=1)
    assert first.columns == [
        "fold",
        "correspondence",
        "correspondence_lo",
        "correspondence_hi",
        *SUMMARY[1:],
        "queries",
        "undefined_replicates",
    ]
    second = fa.explain.correspondence(frame, by="fold", ci=0.9, n_boot=200, seed=2)
    # the same point estimate (up to the order of a parallel sum), another interval
    assert first["correspondence"].to_list() == pytest.approx(second["correspondence"].to_list())
    assert first["correspondence_lo"].to_list() != second["correspondence_lo"].to_list()
    assert (first["correspondence_lo"] <= first["correspondence"]).all()
    assert (first["correspondence"] <= first["correspondence_hi"]).all()


# ---------------------------------------------------------------------------------------------
# Few queries and undefined replicates


def test_few_defined_queries_and_undefined_replicates() -> None:
    """Fold a: query 0 has no neighbours, query 1 has; fold b: only an undefined query.

    Fold c: queries 3 and 4, both defined. The units are numbered in (fold, query) order:
    (a, 0) 0, (a, 1) 1, (b, 2) 2, (c, 3) 3, (c, 4) 4. A replicate of fold a is undefined where
    unit 1 is drawn 0 times; of fold c where units 3 and 4 both are.
    """
    frame = pl.DataFrame(
        {
            "query": [0, 1, 1, 2, 3, 3, 4],
            "fold": ["a", "a", "a", "b", "c", "c", "c"],
            "distance": [None, 0.1, 0.2, None, 0.0, 0.5, 0.3],
            "label": [None, 1, 0, None, 1, 1, 0],
            "predicted": [1, 1, 1, 1, 1, 1, 1],
        }
    )
    n_boot, seed = 300, 5
    result = fa.explain.correspondence(frame, by="fold", ci=0.9, n_boot=n_boot, seed=seed)
    pairs = {"unit": [u for u in range(5) for _ in range(n_boot)], "rep": list(range(n_boot)) * 5}
    units = nw.from_native(pl.LazyFrame(pairs))
    draws = with_poisson_counts(units, "unit", "rep", seed, "k").collect().to_native()
    counts = draws["k"].to_numpy().reshape(5, n_boot)
    a_undefined = int((counts[1] == 0).sum())
    c_undefined = int(((counts[3] == 0) & (counts[4] == 0)).sum())
    assert 0.3 * n_boot < a_undefined < 0.45 * n_boot  # about e^-1 of the replicates
    assert 0 < c_undefined < 0.25 * n_boot  # about e^-2
    assert result["queries"].to_list() == [1, 0, 2]
    assert result["n_undefined"].to_list() == [1, 1, 0]
    assert result["undefined_replicates"].to_list() == [a_undefined, n_boot, c_undefined]
    # fewer than two queries behind the mean: no interval (fold b has no mean at all)
    assert result["correspondence"].is_null().to_list() == [False, True, False]
    assert result["correspondence_lo"].is_null().to_list() == [True, True, False]
    assert result["correspondence_hi"].is_null().to_list() == [True, True, False]


# ---------------------------------------------------------------------------------------------
# Bad input

FRAME = pl.DataFrame(
    {
        "query": [1, 1, 2, 2],
        "fold": ["a", "a", "a", "a"],
        "distance": [0.1, 0.2, 0.3, 0.4],
        "label": [1, 0, 1, 1],
        "predicted": [1, 1, 0, 0],
        "w": [1.0, 1.0, 2.0, 2.0],
        "name": ["x", "x", "y", "y"],
    }
)
BY = {"by": "fold"}


@pytest.mark.spark(cases=["expected one value within"])
@pytest.mark.parametrize(
    ("frame", "kwargs", "error", "match"),
    [
        (FRAME, {**BY, "ci": 1.0}, fa.InvalidParameterError, r"ci=1.0: expected a number in"),
        (FRAME, {**BY, "ci": 0}, fa.InvalidParameterError, r"ci=0: expected a number in"),
        (
            FRAME,
            {**BY, "ci": 0.9, "n_boot": 1},
            fa.InvalidParameterError,
            r"n_boot=1: expected an integer in \[2, 100000\]",
        ),
        (FRAME, {**BY, "ci": 0.9, "n_boot": 10.5}, fa.InvalidParameterError, r"n_boot=10.5"),
        (FRAME, {**BY, "seed": -1}, fa.InvalidParameterError, r"seed=-1: expected an integer"),
        (FRAME, {**BY, "seed": 0.5}, fa.InvalidParameterError, r"seed=0.5"),
        (
            FRAME,
            {"ci": 0.95},
            fa.InvalidParameterError,
            r"ci=0.95: intervals resample the queries of a summary; give by=",
        ),
        (
            FRAME,
            {"weight": "w"},
            fa.InvalidParameterError,
            r"weight='w': unit weights weigh the queries of a summary; give by=",
        ),
        (FRAME, {**BY, "weight": "missing"}, fa.ColumnNotFoundError, r"weight='missing'"),
        (FRAME, {**BY, "weight": "name"}, fa.InvalidDtypeError, r"weight='name': expected"),
        (
            FRAME.with_columns(w=pl.Series([1.0, 1.0, -2.0, -2.0])),
            {**BY, "weight": "w"},
            fa.InvalidValueError,
            r"weight='w': expected values in \[0, inf\], found 2 outside it",
        ),
        (
            FRAME.with_columns(w=pl.Series([1.0, 1.0, None, None])),
            {**BY, "weight": "w"},
            fa.InvalidValueError,
            r"weight='w': column 'w' holds 2 null",
        ),
        (
            FRAME.with_columns(w=pl.Series([1.0, 1.0, float("inf"), float("inf")])),
            {**BY, "weight": "w", "ci": 0.9},
            fa.InvalidValueError,
            r"weight='w': expected finite numbers",
        ),
        (
            FRAME.with_columns(w=pl.Series([1.0, 2.0, 1.0, 1.0])),
            {**BY, "weight": "w"},
            fa.InvalidValueError,
            r"weight='w': expected one value within each query, found 1 query\(s\) with "
            r"several \(e\.g\. fold='a', query=1\)",
        ),
    ],
)
def test_bad_uncertainty_input_is_refused(
    constructor: Constructor, frame: pl.DataFrame, kwargs: dict[str, Any], error: type, match: str
) -> None:
    with pytest.raises(error, match=match):
        to_polars(fa.explain.correspondence(constructor(frame), **kwargs))


IMPORTANCES = pl.DataFrame(
    {
        "group": ["g1"] * 3 + ["all"] * 3,
        "feature": ["f1", "f2", "f3"] * 2,
        "importance": [0.4, 0.35, 0.25, 0.5, 0.4, 0.1],
    }
)


@pytest.mark.parametrize(
    ("metric", "options"),
    [
        ("position_parity", {}),
        ("rank_alignment", {}),
        ("rank_alignment", {"method": "alpha_jaccard"}),
    ],
)
@pytest.mark.parametrize("ci", [0.95, 1.5])
def test_order_cohesion_has_no_resampling_unit(
    constructor: Constructor, metric: str, options: dict[str, Any], ci: float
) -> None:
    function = getattr(fa.explain, metric)
    with pytest.raises(
        fa.InvalidParameterError, match=rf"ci={ci}: order cohesion has no resampling unit"
    ):
        function(constructor(IMPORTANCES), overall="all", ci=ci, **options)
    # ci=None is the default, and the metric runs
    result = to_polars(function(constructor(IMPORTANCES), overall="all", ci=None, **options))
    assert result.height == 1


def test_dask_summarises_but_refuses_an_interval() -> None:
    dd = pytest.importorskip("dask.dataframe")
    frame = _frame(ref.random_neighbours(3, n_queries=30, max_neighbours=6, n_classes=3))
    native = dd.from_pandas(frame.to_pandas(), npartitions=2)
    summary = fa.explain.correspondence(native, by="fold", weight="w").compute()
    assert_frame_close(
        to_polars(summary.reset_index(drop=True)),
        fa.explain.correspondence(frame, by="fold", weight="w"),
    )
    with pytest.raises(fa.UnsupportedBackendError, match=r"correspondence with ci= is not supp"):
        fa.explain.correspondence(native, by="fold", ci=0.9)
