"""TREC run and qrels files read as tidy frames (SPEC §6), and their bad lines named.

Expected rows are the files' fields, written here by hand.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

import frameaudit as fa
from frameaudit.exceptions import InvalidParameterError


def test_a_run_file_is_one_row_per_retrieved_item(tmp_path: Path) -> None:
    path = tmp_path / "a.run"
    # a tab, runs of spaces, a blank line and a trailing newline: all whitespace separates
    path.write_text(
        "101 Q0 doc-7\t1  12.5 bm25\n\n101 Q0 doc-3 2 11 bm25\n  102 Q0 7 1 -0.5 bm25  \n"
    )
    run = fa.datasets.read_trec_run(path)
    assert run.schema == pl.Schema(
        {
            "query": pl.String,
            "sample": pl.String,
            "item": pl.String,
            "rank": pl.Int64,
            "score": pl.Float64,
            "run": pl.String,
        }
    )
    assert run.rows() == [
        ("101", "Q0", "doc-7", 1, 12.5, "bm25"),
        ("101", "Q0", "doc-3", 2, 11.0, "bm25"),
        ("102", "Q0", "7", 1, -0.5, "bm25"),
    ]


def test_a_qrels_file_is_one_row_per_judged_item(tmp_path: Path) -> None:
    path = tmp_path / "a.qrels"
    path.write_text("101 0 doc-7 2\n101 0 doc-3 0\n102 0 7 -2\n")
    qrels = fa.datasets.read_qrels(path)
    assert qrels.columns == ["query", "iteration", "item", "relevance"]
    assert qrels.rows() == [
        ("101", "0", "doc-7", 2),
        ("101", "0", "doc-3", 0),
        ("102", "0", "7", -2),
    ]


def test_the_bundled_example_holds_two_sampled_rankings_a_query() -> None:
    run_path, qrels_path = fa.datasets.trec_example()
    run, qrels = fa.datasets.read_trec_run(run_path), fa.datasets.read_qrels(qrels_path)
    samples = run.group_by("query").agg(pl.col("sample").n_unique()).sort("query")
    assert samples.rows() == [("q1", 2), ("q2", 2)]
    # one judged item is never retrieved: an incomplete run, as the metrics must handle
    unretrieved = qrels.join(run, on=["query", "item"], how="anti")
    assert unretrieved.select("query", "item").rows() == [("q2", "d7")]
    ranks = run.group_by("query", "sample").agg(pl.col("rank").sort()).sort("query", "sample")
    assert all(r == list(range(1, len(r) + 1)) for r in ranks["rank"].to_list())


@pytest.mark.parametrize(
    ("reader", "text", "message"),
    [
        (
            "read_trec_run",
            "101 Q0 d1 1 2.0 run\n101 Q0 d2 2 1.0\n",
            "expected 6 fields a line (query, sample, item, rank, score, run), found 5 on "
            "line 2: '101 Q0 d2 2 1.0'",
        ),
        (
            "read_trec_run",
            "101 Q0 d1 first 2.0 run\n",
            "expected an integer as rank, found 'first' on line 1",
        ),
        ("read_trec_run", "101 Q0 d1 1 high run\n", "expected a number as score, found 'high'"),
        (
            "read_qrels",
            "101 0 d1 2 extra\n",
            "expected 4 fields a line (query, iteration, item, relevance), found 5 on line 1",
        ),
        ("read_qrels", "101 0 d1 0.5\n", "expected an integer as relevance, found '0.5'"),
    ],
)
def test_a_malformed_line_is_named(tmp_path: Path, reader: str, text: str, message: str) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(InvalidParameterError, match=re.escape(message)):
        getattr(fa.datasets, reader)(path)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "none.run"
    with pytest.raises(InvalidParameterError, match="expected a TREC run file, found no such file"):
        fa.datasets.read_trec_run(missing)
    empty = tmp_path / "empty.qrels"
    empty.write_text("")
    assert fa.datasets.read_qrels(empty).height == 0
