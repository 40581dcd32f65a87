"""Every metric called from several threads at once finishes, with the single-thread result.

A deadlock cannot be caught inside the process that has it, so each family runs in a
subprocess: this module run as a script (``python tests/test_concurrency.py FAMILY``). The
subprocess computes every call once on one thread, then makes the same calls again from
``THREADS`` threads at once, alternating the in-memory frame kinds, while other threads keep
calling ``DataFrame.to_pandas`` and ``polars.from_pandas``: Polars calls that hold the GIL
while they wait for Polars' thread pool, the trigger of the deadlock frameaudit used to have
when it ran Python (kernels, a plan's input) on that pool. A subprocess that hangs dumps every
thread's stack (``faulthandler``) and exits; the test fails with those stacks.
"""

from __future__ import annotations

import faulthandler
import inspect
import math
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import frameaudit as fa
from frameaudit import datasets
from tests.calls import arguments

THREADS = 4
MIN_CALLS = 40
# Generous: a healthy family takes a few seconds; only a hang comes near this.
WATCHDOG_SECONDS = 120

# (name, input frames, the call on those frames converted to one kind)
Case = tuple[str, tuple[pl.DataFrame, ...], Callable[..., Any]]

KINDS: dict[str, Callable[[pl.DataFrame], Any]] = {
    "polars": lambda df: df,
    "pandas": lambda df: df.to_pandas(),
    "pandas[pyarrow]": lambda df: df.to_pandas(use_pyarrow_extension_array=True),
    "pyarrow": lambda df: df.to_arrow(),
}


def _ranking() -> list[Case]:
    df = datasets.biased_rankings([0.4, 0.6], 100, phi=0.4, num_rankings=5, seed=0)
    rng = np.random.default_rng(0)
    df = df.with_columns(
        pl.Series("relevance", rng.random(df.height)),
        pl.Series("ctr", rng.random(df.height)),
        pl.Series("relevant", rng.integers(0, 2, df.height)),
    )
    roles = {"ranking": "ranking", "item": "item"}
    options: dict[str, dict[str, Any]] = {
        m.name: arguments(m, p=0.3, decay=0.7) for m in fa.metrics("ranking", "group", "single")
    }
    options["ndkl"] |= {"by": "ranking"}
    return [
        (name, (df,), lambda f, name=name, o=o: getattr(fa.fair, name)(f, **roles, **o))
        for name, o in options.items()
    ]


def _clustering() -> list[Case]:
    df = datasets.clustering_example().sample(1_000, seed=0)
    features = {"features": ["x", "y"]}
    return [
        (m.name, (df,), lambda f, m=m: m.function(f, a="a", b="b", **arguments(m, features)))
        for m in fa.metrics("clustering")
    ]


def _repro() -> list[Case]:
    df = datasets.runs_example().filter(pl.col("sample") < 200)
    df = df.with_columns((pl.col("sample") / 200).alias("score"))  # the score range's scores
    functions = [n for n in fa.repro.__all__ if inspect.isfunction(getattr(fa.repro, n))]
    scored = {"score": "score"}
    return [
        (name, (df,), lambda f, name=name: getattr(fa.repro, name)(f, **arguments(name, scored)))
        for name in functions
    ]


def _explain() -> list[Case]:
    rng = np.random.default_rng(0)
    features = ["f1", "f2"]
    train = pl.DataFrame(rng.normal(size=(2_000, 2)), schema=features).with_columns(
        label=(pl.col("f1") + pl.col("f2") > 0).cast(pl.Int64)
    )
    queries = pl.DataFrame(rng.normal(size=(300, 2)), schema=features).with_columns(
        predicted=(pl.col("f1") > 0).cast(pl.Int64)
    )
    neighbours = fa.explain.nearest_cases(train, queries, features=features, carry="predicted")
    importances = datasets.importance_example()
    return [
        (
            "nearest_cases",
            (train, queries),
            lambda t, q: fa.explain.nearest_cases(t, q, features=features, carry="predicted"),
        ),
        ("correspondence", (neighbours,), fa.explain.correspondence),
        (
            "position_parity",
            (importances,),
            lambda f: fa.explain.position_parity(f, overall="overall", k=5),
        ),
        (
            "rank_alignment",
            (importances,),
            lambda f: fa.explain.rank_alignment(f, overall="overall", k=5),
        ),
    ]


FAMILIES: dict[str, Callable[[], list[Case]]] = {
    "ranking": _ranking,
    "clustering": _clustering,
    "repro": _repro,
    "explain": _explain,
}


def _as_polars(result: Any) -> pl.DataFrame:
    polars_frame: pl.DataFrame = nw.from_native(result, eager_only=True).to_polars()
    return polars_frame


def run_family(family: str) -> None:
    """The scenario of one family; prints how many threaded calls matched."""
    faulthandler.dump_traceback_later(WATCHDOG_SECONDS, exit=True)
    cases = {name: (frames, call) for name, frames, call in FAMILIES[family]()}
    inputs = {
        (name, kind): tuple(convert(frame) for frame in frames)
        for name, (frames, _) in cases.items()
        for kind, convert in KINDS.items()
    }
    expected = {job: _as_polars(cases[job[0]][1](*frames)) for job, frames in inputs.items()}
    jobs = list(inputs) * math.ceil(MIN_CALLS / len(inputs))

    # the trigger: Polars calls that hold the GIL while they wait for Polars' thread pool
    trigger = max((frames[0] for frames, _ in cases.values()), key=lambda f: f.height)
    trigger_pandas = trigger.to_pandas()
    stop = threading.Event()

    def convert_in_a_loop() -> None:
        while not stop.is_set():
            trigger.to_pandas()
            pl.from_pandas(trigger_pandas)

    def call(job: tuple[str, str]) -> pl.DataFrame:
        return _as_polars(cases[job[0]][1](*inputs[job]))

    converters = [threading.Thread(target=convert_in_a_loop) for _ in range(2)]
    for thread in converters:
        thread.start()
    try:
        with ThreadPoolExecutor(THREADS) as pool:
            results = list(pool.map(call, jobs))
    finally:
        stop.set()
        for thread in converters:
            thread.join()
    for job, result in zip(jobs, results, strict=True):
        assert_frame_equal(result, expected[job], check_exact=False)
    faulthandler.cancel_dump_traceback_later()
    print(f"{len(jobs)} calls of {len(cases)} functions matched")


@pytest.mark.parametrize("family", FAMILIES)
def test_concurrent_calls_finish_with_the_single_thread_result(family: str) -> None:
    # Polars' pool as small as on a 2-core machine, where the deadlock needed few calls
    env = {**os.environ, "POLARS_MAX_THREADS": "2"}
    command = [sys.executable, "-W", "error", __file__, family]
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=WATCHDOG_SECONDS + 60,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired as hung:
        pytest.fail(f"{family}: hung and dumped no stacks; stderr:\n{hung.stderr!r}")
    assert done.returncode == 0, f"{family}: exit {done.returncode}; stderr:\n{done.stderr}"
    cases = FAMILIES[family]()
    calls = len(cases) * len(KINDS) * math.ceil(MIN_CALLS / (len(cases) * len(KINDS)))
    assert f"{calls} calls of {len(cases)} functions matched" in done.stdout


if __name__ == "__main__":
    run_family(sys.argv[1])
