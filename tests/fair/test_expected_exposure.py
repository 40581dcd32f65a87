"""Expected exposure (Diaz et al. 2020): equal to expeval's output, to the numpy reference and
to hand-worked cases, on every engine, with its intervals, weights and refusals."""

from __future__ import annotations

import itertools
import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from conftest import to_polars
from reference.trec import expected_exposure as reference
from reference.trec import mean_over_queries

import frameaudit as fa
from frameaudit.datasets import read_qrels, read_trec_run
from frameaudit.exceptions import FrameAuditError

DATA = Path(__file__).parent.parent / "data" / "expeval"
SWITCHES = list(itertools.product(["rbp", "gerr"], [False, True], [False, True], [False, True]))
NAMES = {"difference": "ee_l", "disparity": "ee_d", "relevance": "ee_r"}


def _sampled() -> tuple[pl.DataFrame, pl.DataFrame]:
    run = read_trec_run(DATA / "sampled.run")
    qrels = read_qrels(DATA / "grouped.qrels").rename({"iteration": "grp"})
    return run, qrels


def _expeval() -> pl.DataFrame:
    return pl.read_csv(DATA / "expeval.tsv", separator="\t", schema_overrides={"value": pl.Float64})


def _call(run: Any, qrels: Any, *switches: Any) -> Any:
    model, grouped, complete, norm = switches
    return fa.fair.expected_exposure(
        run,
        judgments=qrels,
        sample="sample",
        by="query",
        model=model,  # type: ignore[arg-type]
        patience=0.7,
        utility=0.3,
        complete=complete,
        normalize=norm,
        group="grp" if grouped else None,
    )


@pytest.mark.parametrize(("model", "grouped", "complete", "norm"), SWITCHES)
def test_every_query_equals_expeval_to_its_six_printed_decimals(
    model: str, grouped: bool, complete: bool, norm: bool
) -> None:
    run, qrels = _sampled()
    ours = _call(run, qrels, model, grouped, complete, norm)
    theirs = _expeval().filter(
        (pl.col("model") == model)
        & (pl.col("group") == int(grouped))
        & (pl.col("complete") == int(complete))
        & (pl.col("normalize") == int(norm))
    )
    assert sorted(ours["query"]) == sorted(set(theirs["query"]))
    retrieved = set(run["query"])
    for metric, query, value in theirs.select("metric", "query", "value").iter_rows():
        mine = ours.filter(pl.col("query") == query)[NAMES[metric]].item()
        if metric == "difference" and query not in retrieved and value == 0.0:
            # expeval's missing query: EE-L is its relevance bound, 0 (a perfect score) for a
            # query of one grade or in group mode; frameaudit's is ‖ε*‖², no exposure's loss
            assert mine > 0
            continue
        assert mine == pytest.approx(value, abs=5e-7), (metric, query)


def test_the_deviations_are_the_loss_of_a_run_that_exposes_nothing() -> None:
    """A missing query's EE-L is ‖ε*‖²: in group mode, that of a run retrieving only unjudged
    items; in individual mode, less that run's own ‖ε‖² (1: one item at position 1)."""
    run, qrels = _sampled()
    judged = qrels.filter(pl.col("query") == "q9")
    empty = pl.DataFrame(
        {"query": ["q9"], "sample": ["0"], "item": ["unjudged"], "rank": [1]},
        schema_overrides={"rank": pl.Int64},
    )
    unjudged_run = pl.concat([run.select(empty.columns), empty])
    for grouped, own in ((False, 1.0), (True, 0.0)):
        missing = _call(run, judged, "rbp", grouped, True, False)["ee_l"].item()
        unjudged = _call(unjudged_run, judged, "rbp", grouped, True, False)["ee_l"].item()
        assert missing == pytest.approx(unjudged - own, rel=1e-15)
        assert missing > 0


def _random_case(seed: int) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], dict[str, int]]:
    rng = random.Random(seed)
    run, qrels, groups = [], [], {}
    for q in range(15):
        docs = [f"d{q}_{i}" for i in range(rng.randint(1, 9))]
        for d in docs:
            groups[d] = rng.randint(0, 2)
        judged = rng.sample(docs, rng.randint(1, len(docs)))
        qrels += [(f"q{q}", d, rng.choice([0, 0, 1, 2, 3])) for d in judged]
        if q % 6 == 5:
            continue
        for s in range(rng.randint(1, 4)):
            for k, d in enumerate(rng.sample(docs, rng.randint(1, len(docs))), 1):
                run.append((f"q{q}", s, d, k + (k > 3)))  # positions need not be contiguous
    return run, qrels, groups


def _frames(
    run: list[tuple[Any, ...]], qrels: list[tuple[Any, ...]], groups: dict[str, int]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    r = pl.DataFrame(run, schema=["query", "sample", "item", "rank"], orient="row")
    j = pl.DataFrame(qrels, schema=["query", "item", "relevance"], orient="row")
    return r, j.with_columns(grp=pl.col("item").replace_strict(groups))


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize(("model", "grouped", "complete", "norm"), SWITCHES)
def test_every_query_equals_the_reference(
    seed: int, model: str, grouped: bool, complete: bool, norm: bool
) -> None:
    run, qrels, groups = _random_case(seed)
    r, j = _frames(run, qrels, groups)
    ours = _call(r, j, model, grouped, complete, norm)
    membership = {d: {g: 1.0} for d, g in groups.items()} if grouped else None
    theirs = reference(
        run,
        qrels,
        model=model,
        patience=0.7,
        utility=0.3,
        complete=complete,
        normalize=norm,
        membership=membership,
    )
    assert sorted(ours["query"]) == sorted(theirs)
    for query, *values in ours.iter_rows():
        assert values == pytest.approx(list(theirs[query]), rel=1e-12, abs=1e-14), query


def test_the_partition_is_the_mean_over_its_judged_queries(constructor: Any) -> None:
    run, qrels, groups = _random_case(3)
    r, j = _frames(run, qrels, groups)
    systems = pl.concat([r.with_columns(system=pl.lit(name)) for name in ("a", "b")])
    systems = systems.filter((pl.col("system") == "a") | (pl.col("rank") <= 2))
    result = to_polars(
        fa.fair.expected_exposure(
            constructor(systems), judgments=constructor(j), sample="sample", by="system"
        )
    )
    for system in ("a", "b"):
        rows = [x for x in run if system == "a" or x[3] <= 2]
        expected = mean_over_queries(reference(rows, qrels))
        got = result.filter(pl.col("system") == system).select("ee_l", "ee_d", "ee_r").row(0)
        assert got == pytest.approx(expected, rel=1e-12)


@pytest.mark.spark
def test_group_mode_on_every_engine(constructor: Any) -> None:
    run, qrels, groups = _random_case(4)
    r, j = _frames(run, qrels, groups)
    result = to_polars(
        fa.fair.expected_exposure(
            constructor(r),
            judgments=constructor(j),
            sample="sample",
            group="grp",
            model="gerr",
            normalize=True,
        )
    )
    membership = {d: {g: 1.0} for d, g in groups.items()}
    expected = mean_over_queries(
        reference(run, qrels, model="gerr", normalize=True, membership=membership)
    )
    assert result.row(0) == pytest.approx(expected, rel=1e-12)


def test_a_hand_worked_query() -> None:
    """RBP, p = 1/2: targets 1 (grade 2 alone at position 0) and 3/8 (grade 1 at positions 1
    and 2: (1/2 + 1/4)/2); the two samples give d1 and d2 (1 + 1/2)/2 = 3/4, d3 and d4 1/8."""
    run = pl.DataFrame(
        {
            "query": ["q"] * 6,
            "sample": [0, 0, 0, 1, 1, 1],
            "item": ["d1", "d2", "d3", "d2", "d1", "d4"],
            "rank": [1, 2, 3, 1, 2, 3],
        }
    )
    qrels = pl.DataFrame({"query": ["q"] * 3, "item": ["d1", "d2", "d4"], "relevance": [2, 1, 1]})
    result = fa.fair.expected_exposure(run, judgments=qrels, sample="sample")
    eps = {"d1": 0.75, "d2": 0.75, "d3": 0.125, "d4": 0.125}
    target = {"d1": 1.0, "d2": 0.375, "d3": 0.0, "d4": 0.375}
    loss = sum((eps[d] - target[d]) ** 2 for d in eps)
    disparity = sum(e * e for e in eps.values())
    relevance = sum(eps[d] * target[d] for d in eps)
    assert result.row(0) == (loss, disparity, relevance)
    # group mode: d1 alone in g, d2 and d4 in h
    grouped = fa.fair.expected_exposure(
        run, judgments=qrels.with_columns(g=pl.Series(["g", "h", "h"])), sample="sample", group="g"
    )
    exposed, wanted = {"g": 0.75, "h": 0.875}, {"g": 1.0, "h": 0.75}
    assert grouped.row(0) == pytest.approx(
        (
            sum((exposed[x] - wanted[x]) ** 2 for x in "gh"),
            sum(v * v for v in exposed.values()),
            sum(exposed[x] * wanted[x] for x in "gh"),
        ),
        rel=1e-15,
    )


def test_an_integer_weight_repeats_the_query() -> None:
    run, qrels, groups = _random_case(5)
    r, j = _frames(run, qrels, groups)
    weights = {q: (i % 3) for i, q in enumerate(sorted({x[0] for x in qrels}))}
    weighted = fa.fair.expected_exposure(
        r,
        judgments=j.with_columns(w=pl.col("query").replace_strict(weights)),
        sample="sample",
        weight="w",
    )
    per_query = reference(run, qrels)
    expected = mean_over_queries(per_query, {q: float(weights[q]) for q in per_query})
    assert weighted.row(0) == pytest.approx(expected, rel=1e-12)


def test_the_interval_is_over_queries_and_holds_the_estimate() -> None:
    run, qrels, groups = _random_case(6)
    r, j = _frames(run, qrels, groups)
    result = fa.fair.expected_exposure(r, judgments=j, sample="sample", ci=0.9, n_boot=200)
    assert result.columns == [
        "ee_l",
        "ee_l_lo",
        "ee_l_hi",
        "ee_d",
        "ee_d_lo",
        "ee_d_hi",
        "ee_r",
        "ee_r_lo",
        "ee_r_hi",
        "queries",
        "ee_l_undefined_replicates",
        "ee_d_undefined_replicates",
        "ee_r_undefined_replicates",
    ]
    row = result.row(0, named=True)
    assert row["queries"] == len({x[0] for x in qrels if x[2] > 0})
    for c in ("ee_l", "ee_d", "ee_r"):
        assert row[f"{c}_lo"] < row[c] < row[f"{c}_hi"]
    # the percentile interval of the mean of the per-query values, by numpy with the same
    # spread: within a few standard errors of the normal interval
    values = np.array(list(reference(run, qrels).values()))
    se = values.std(ddof=1, axis=0) / math.sqrt(len(values))
    for i, c in enumerate(("ee_l", "ee_d", "ee_r")):
        width = row[f"{c}_hi"] - row[f"{c}_lo"]
        assert width == pytest.approx(2 * 1.645 * se[i], rel=0.35)


def test_a_lazy_call_reads_nothing(tmp_path: Path) -> None:
    run, qrels, groups = _random_case(7)
    r, j = _frames(run, qrels, groups)
    r.write_parquet(tmp_path / "run.parquet")
    j.write_parquet(tmp_path / "qrels.parquet")
    lazy = fa.fair.expected_exposure(
        pl.scan_parquet(tmp_path / "run.parquet"),
        judgments=pl.scan_parquet(tmp_path / "qrels.parquet"),
        sample="sample",
    )
    assert isinstance(lazy, pl.LazyFrame)
    (tmp_path / "run.parquet").unlink()
    with pytest.raises(FileNotFoundError):
        lazy.collect()


BAD = [
    (
        lambda r, j: (r, j.drop("item")),
        {},
        "item='item'",
    ),
    (
        lambda r, j: (r, j.with_columns(relevance=pl.col("relevance") - 1)),
        {},
        r"relevance='relevance': expected values in \[0, inf\], found",
    ),
    (
        lambda r, j: (r, j.with_columns(relevance=pl.lit(None, dtype=pl.Int64))),
        {},
        "null",
    ),
    (
        lambda r, j: (r, pl.concat([j, j.head(1)])),
        {},
        r"judgments=: 1 duplicated combination\(s\) of \(query, item\)",
    ),
    (
        lambda r, j: (pl.concat([r, r.head(1).with_columns(rank=pl.lit(9, dtype=pl.Int64))]), j),
        {},
        "item",
    ),
    (
        lambda r, j: (r, j.with_columns(relevance=pl.lit(0))),
        {},
        "no judgment with a grade above 0",
    ),
    (
        lambda r, j: (r, j.with_columns(pl.col("query").cast(pl.Categorical).to_physical())),
        {},
        "dtype",
    ),
    (lambda r, j: (r, j), {"patience": 1.0}, r"patience=1.0: expected a number in \(0.0, 1.0\)"),
    (lambda r, j: (r, j), {"patience": 0}, r"patience=0: expected a number in \(0.0, 1.0\)"),
    (lambda r, j: (r, j), {"utility": 1.5}, r"utility=1.5: expected a number in \[0.0, 1.0\]"),
    (lambda r, j: (r, j), {"model": "dcg"}, "model='dcg'"),
    (lambda r, _: (r, "qrels.txt"), {}, "judgments='qrels.txt': expected a frame"),
]


@pytest.mark.parametrize(("mutate", "options", "message"), BAD)
def test_bad_input_gets_a_clear_error(
    constructor: Any, mutate: Any, options: dict[str, Any], message: str
) -> None:
    run, qrels, groups = _random_case(8)
    r, j = mutate(*_frames(run, qrels, groups))
    j = constructor(j) if isinstance(j, pl.DataFrame) else j
    with pytest.raises(FrameAuditError, match=message):
        to_polars(
            fa.fair.expected_exposure(constructor(r), judgments=j, sample="sample", **options)
        )


def _alignment(items: list[str], seed: int, levels: str) -> dict[str, dict[str, float]]:
    """Soft weights over ``levels`` for about two thirds of ``items`` (the rest unaligned)."""
    rng = random.Random(seed)
    weights = {}
    for d in items:
        if rng.random() < 1 / 3:
            continue
        chosen = rng.sample(levels, rng.randint(1, len(levels)))
        raw = [rng.randint(1, 4) for _ in chosen]
        weights[d] = {g: w / sum(raw) for g, w in zip(chosen, raw, strict=True)}
    return weights


def _alignment_frame(weights: dict[str, dict[str, float]], column: str) -> pl.DataFrame:
    rows = [(d, g, w) for d, cells in weights.items() for g, w in cells.items()]
    return pl.DataFrame(rows, schema=["item", column, "weight"], orient="row")


def _completed(
    weights: dict[str, dict[str, float]], items: list[str], levels: str, unaligned: str
) -> dict[str, dict[str, float]]:
    filler = {"unknown": 1.0} if unaligned == "unknown" else dict.fromkeys(levels, 1 / len(levels))
    return {d: weights.get(d, filler) for d in items}


@pytest.mark.parametrize("unaligned", ["unknown", "uniform"])
@pytest.mark.parametrize(("model", "complete"), [("rbp", False), ("gerr", True)])
def test_soft_and_intersectional_alignments_equal_the_reference(
    constructor: Any, unaligned: str, model: str, complete: bool
) -> None:
    run, qrels, groups = _random_case(9)
    r, j = _frames(run, qrels, groups)
    items = sorted(groups)
    gender, region = _alignment(items, 1, "fm"), _alignment(items, 2, "nsew")
    one = _completed(gender, items, "fm", unaligned)
    two = _completed(region, items, "nsew", unaligned)
    cells = {
        d: {(a, b): x * y for a, x in one[d].items() for b, y in two[d].items()} for d in items
    }
    for alignment, group, membership in (
        (_alignment_frame(gender, "gender"), "gender", one),
        (
            [_alignment_frame(gender, "gender"), _alignment_frame(region, "region")],
            ["gender", "region"],
            cells,
        ),
    ):
        aligned = alignment if isinstance(alignment, list) else [alignment]
        result = to_polars(
            fa.fair.expected_exposure(
                constructor(r),
                judgments=constructor(j),
                sample="sample",
                by="query",
                alignment=[constructor(a) for a in aligned],
                group=group,
                unaligned=unaligned,  # type: ignore[arg-type]
                model=model,  # type: ignore[arg-type]
                complete=complete,
            )
        )
        expected = reference(run, qrels, model=model, complete=complete, membership=membership)
        for query, *values in result.iter_rows():
            assert values == pytest.approx(list(expected[query]), rel=1e-12, abs=1e-15)


def test_a_hard_alignment_is_the_group_column() -> None:
    run, qrels, groups = _random_case(10)
    r, j = _frames(run, qrels, groups)
    hard = pl.DataFrame({"item": list(groups), "grp": list(groups.values()), "weight": 1.0})
    by_column = fa.fair.expected_exposure(r, judgments=j, sample="sample", group="grp")
    by_alignment = fa.fair.expected_exposure(
        r,
        judgments=j.drop("grp"),
        sample="sample",
        group="grp",
        alignment=hard,
        unaligned="uniform",
    )
    by_mapping = fa.fair.expected_exposure(
        r, judgments=j.drop("grp"), sample="sample", group="grp", groups=groups
    )
    assert by_alignment.row(0) == pytest.approx(by_column.row(0), rel=1e-14)
    assert by_mapping.row(0) == pytest.approx(by_column.row(0), rel=1e-14)


BAD_ALIGNMENTS = [
    (lambda a: a.with_columns(weight=pl.col("weight") * 0.9), "alignment=: the weights of"),
    (lambda a: a.with_columns(weight=pl.col("weight") * 2), "alignment weight"),
    (
        lambda a: pl.concat([a, a.head(1)]),
        r"alignment=: 1 duplicated combination\(s\) of \(item, gender\)",
    ),
    (lambda a: a.drop("weight"), "weight"),
    (lambda a: a.with_columns(gender=pl.lit(None, dtype=pl.String)), "null"),
]


@pytest.mark.parametrize(("mutate", "message"), BAD_ALIGNMENTS)
def test_a_bad_alignment_is_named(constructor: Any, mutate: Any, message: str) -> None:
    run, qrels, groups = _random_case(11)
    r, j = _frames(run, qrels, groups)
    weights = {d: {"f": 0.25, "m": 0.75} for d in groups}
    alignment = mutate(_alignment_frame(weights, "gender"))
    with pytest.raises(FrameAuditError, match=message):
        to_polars(
            fa.fair.expected_exposure(
                constructor(r),
                judgments=constructor(j),
                sample="sample",
                alignment=constructor(alignment),
                group="gender",
            )
        )


def test_unknown_needs_a_text_group_column() -> None:
    run, qrels, groups = _random_case(12)
    r, j = _frames(run, qrels, groups)
    alignment = pl.DataFrame({"item": ["d0_0"], "code": [1], "weight": [1.0]})
    with pytest.raises(FrameAuditError, match="unaligned='unknown': the alignment's group column"):
        fa.fair.expected_exposure(r, judgments=j, alignment=alignment, group="code")
    uniform = fa.fair.expected_exposure(
        r, judgments=j, sample="sample", alignment=alignment, group="code", unaligned="uniform"
    )
    assert uniform.height == 1


def test_a_partition_the_judgments_hold_keys_them() -> None:
    """by= a market that the judgments hold too: each market on its own judged queries (a
    query missing from a market's run counts there, not in the other markets)."""
    run, qrels, groups = _random_case(13)
    r, j = _frames(run, qrels, groups)
    market = pl.col("query").str.slice(1).cast(pl.Int64) % 2
    ours = fa.fair.expected_exposure(
        r.with_columns(market=market),
        judgments=j.with_columns(market=market),
        sample="sample",
        by="market",
    )
    for m, *values in ours.iter_rows():
        mine = [x for x in qrels if int(x[0][1:]) % 2 == m]
        expected = mean_over_queries(reference([x for x in run if int(x[0][1:]) % 2 == m], mine))
        assert values == pytest.approx(list(expected), rel=1e-12)
    # a system column the judgments lack: every system on every judged query
    crossed = fa.fair.expected_exposure(
        r.with_columns(system=market), judgments=j, sample="sample", by="system"
    )
    for system, *values in crossed.iter_rows():
        rows = [x for x in run if int(x[0][1:]) % 2 == system]
        assert values == pytest.approx(list(mean_over_queries(reference(rows, qrels))), rel=1e-12)


@pytest.mark.parametrize(("grouped", "complete"), [(False, False), (True, False), (False, True)])
def test_trecs_log_model_equals_the_reference(
    constructor: Any, grouped: bool, complete: bool
) -> None:
    """model="log": TREC's 1/log2(max(k, 2)) per position; a grade's target the mean over its
    ideal positions (the track's per-item target); a missing query exposes nothing."""
    run, qrels, groups = _random_case(14)
    r, j = _frames(run, qrels, groups)
    ours = to_polars(
        fa.fair.expected_exposure(
            constructor(r),
            judgments=constructor(j),
            sample="sample",
            by="query",
            model="log",
            complete=complete,
            group="grp" if grouped else None,
        )
    )
    membership = {d: {g: 1.0} for d, g in groups.items()} if grouped else None
    expected = reference(run, qrels, model="log", complete=complete, membership=membership)
    assert sorted(ours["query"]) == sorted(expected)
    for query, *values in ours.iter_rows():
        assert values == pytest.approx(list(expected[query]), rel=1e-12, abs=1e-15), query


def test_trecs_log_model_hand_worked() -> None:
    """One sample ranks d2, d1; d1 (grade 2) and d2 (grade 1) hold ideal positions 1 and 2,
    both weighing 1 under 1/log2(max(k, 2)): targets 1 and 1, exposures 1 and 1."""
    run = pl.DataFrame({"query": ["q", "q"], "item": ["d2", "d1"], "rank": [1, 2]})
    qrels = pl.DataFrame(
        {"query": ["q", "q", "q"], "item": ["d1", "d2", "d3"], "relevance": [2, 1, 1]}
    )
    # d3 holds ideal position 3: 1/log2 3; grade 1's two items share (1 + 1/log2 3)/2
    t1 = (1.0 + 1.0 / np.log2(3)) / 2
    result = fa.fair.expected_exposure(run, judgments=qrels, model="log").row(0)
    assert result == pytest.approx(
        ((1 - 1.0) ** 2 + (1 - t1) ** 2 + t1**2, 2.0, 1.0 + t1), rel=1e-15
    )
    with pytest.raises(fa.FrameAuditError, match="normalize=True: expeval's bounds"):
        fa.fair.expected_exposure(run, judgments=qrels, model="log", normalize=True)
