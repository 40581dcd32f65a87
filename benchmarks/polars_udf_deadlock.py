"""Polars deadlock reproducer, with no frameaudit: a Python UDF on the thread pool vs to_pandas.

Not a benchmark: a self-contained script for a Polars bug report. Run it with
``python benchmarks/polars_udf_deadlock.py``. It starts the scenario in a subprocess with
Polars' pool at two threads and reports whether that subprocess finished within 60 seconds;
a hung subprocess dumps every thread's Python stack before it is ended (exit status 1).

The scenario: four threads, half of them collecting a plan with a Python UDF
(``LazyFrame.map_batches``) together with a second plan (``polars.collect_all`` on the
in-memory engine runs the plans on Polars' thread pool, the UDF included), the other half
calling ``DataFrame.to_pandas()``. ``to_pandas`` converts its record batches on the pool
while it holds the GIL; the pool's threads, inside UDFs, wait for the GIL; nothing moves.
Seen with Polars 2.1.0 on Python 3.11 within a few hundred calls on every run.

frameaudit hits this only when a frameaudit LazyFrame result (whose kernels and value
checks are such UDFs) is collected while another thread converts a frame (docs/concepts.md,
"Threads").
"""

from __future__ import annotations

import faulthandler
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import polars as pl

CALLS = 400
TIMEOUT_SECONDS = 60


def scenario() -> None:
    """Run the calls; dump the stacks and exit with status 1 if they hang."""
    faulthandler.dump_traceback_later(TIMEOUT_SECONDS, exit=True)
    rng = np.random.default_rng(0)
    df = pl.DataFrame({"x": rng.normal(size=2000), "g": rng.choice(["a", "b"], 2000)})

    def udf(batch: pl.DataFrame) -> pl.DataFrame:
        x = batch["x"].to_numpy()
        return pl.DataFrame({"s": [float(np.outer(x, x).sum())]})

    plans = [df.lazy().map_batches(udf, schema={"s": pl.Float64}), df.lazy().select(pl.len())]

    def task(i: int) -> None:
        if i % 2:
            pl.collect_all(plans, engine="in-memory")
        else:
            df.to_pandas()

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(task, range(CALLS)))
    faulthandler.cancel_dump_traceback_later()


def main() -> int:
    """Run the scenario in a subprocess; 0 if it finished, 1 if it hung."""
    env = {**os.environ, "POLARS_MAX_THREADS": "2"}
    print(f"polars {pl.__version__}, python {sys.version.split()[0]}: {CALLS} calls ...")
    try:
        done = subprocess.run(
            [sys.executable, __file__, "--scenario"],
            capture_output=True,
            text=True,
            env=env,
            timeout=TIMEOUT_SECONDS + 30,
            check=False,
        )
    except subprocess.TimeoutExpired:
        print("deadlocked (and the stack dump did not come)")
        return 1
    if done.returncode == 0:
        print("finished: no deadlock this time")
        return 0
    print(f"deadlocked: no progress in {TIMEOUT_SECONDS} s; the threads' stacks:\n")
    print(done.stderr)
    return 1


if __name__ == "__main__":
    if sys.argv[1:] == ["--scenario"]:
        scenario()
    else:
        sys.exit(main())
