"""Shared fixtures: one test body runs on every supported frame kind.

``constructor`` turns a canonical Polars DataFrame into each frame kind (rows shuffled, so no
test can rely on input order); ``to_polars`` turns any result back into an eager Polars frame
for comparison; ``site`` is the documentation site, built once; ``final_bar`` reads a
progress bar.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import narwhals.stable.v2 as nw
import polars as pl
import pytest
from hypothesis import settings
from venvs import environment, fresh

from frameaudit.exceptions import frameaudit_errors

Constructor = Callable[[pl.DataFrame], Any]

# Property tests draw the same examples on every machine and every run: a green run here is a
# green run in CI. No example database either (it would replay this machine's past failures).
# `HYPOTHESIS_PROFILE=explore` draws fresh random examples, to hunt for new failing cases.
settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))


def _shuffled(df: pl.DataFrame) -> pl.DataFrame:
    return df.sample(fraction=1.0, shuffle=True, seed=7) if df.height else df


def _polars_eager(df: pl.DataFrame) -> Any:
    return _shuffled(df)


def _polars_lazy(df: pl.DataFrame) -> Any:
    return _shuffled(df).lazy()


def _pandas(df: pl.DataFrame) -> Any:
    return _shuffled(df).to_pandas()


def _pandas_arrow(df: pl.DataFrame) -> Any:
    return _shuffled(df).to_pandas(use_pyarrow_extension_array=True)


def _pyarrow(df: pl.DataFrame) -> Any:
    return _shuffled(df).to_arrow()


def _duckdb(df: pl.DataFrame) -> Any:
    import duckdb

    table = _shuffled(df).to_arrow()
    return duckdb.from_arrow(table)


def own_connection(constructor: Constructor) -> Constructor:
    """``constructor``; for DuckDB, a relation on a connection of its own, not DuckDB's default.

    A relation of another connection is the harder case (a step written on the default
    connection cannot read it); a connection costs about 30 ms, so the tests that build whole
    reports take it, not every DuckDB case.
    """
    if constructor is not _duckdb:
        return constructor

    def on_its_own(df: pl.DataFrame) -> Any:
        import duckdb

        return duckdb.connect().from_arrow(_shuffled(df).to_arrow())

    return on_its_own


CONSTRUCTORS: dict[str, Constructor] = {
    "polars[eager]": _polars_eager,
    "polars[lazy]": _polars_lazy,
    "pandas": _pandas,
    "pandas[pyarrow]": _pandas_arrow,
    "pyarrow": _pyarrow,
    "duckdb": _duckdb,
}


@pytest.fixture(scope="session")
def spark_session() -> Iterator[Any]:
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[1]")
        .appName("frameaudit-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        # one session serves a worker's whole run; the default 1 GiB heap ran out in a hash
        # aggregation late in a full run (the bootstrap tests' plans are large)
        .config("spark.driver.memory", "3g")
        # narwhals' plans are large and each is run once on a few rows: compiling them (whole-
        # stage codegen, and each expression's generated code: the factory mode) and
        # re-planning them at run time (adaptive execution) cost more than they save here.
        # Interpreted expressions are what codegen falls back to; 10 Spark tests took 120-129 s
        # with them, against 145-150 s compiled
        .config("spark.sql.codegen.wholeStage", "false")
        .config("spark.sql.codegen.factoryMode", "NO_CODEGEN")
        .config("spark.sql.adaptive.enabled", "false")
        # PySpark records the Python call site of every column expression for its own error
        # messages, four round trips to the JVM each (docs/scale.md): off, a bootstrap's plan
        # builds in two thirds of the time (ec_local with ci=: 4.5 s against 6.7 s). The
        # errors the tests read are frameaudit's, raised in the query.
        .config("spark.python.sql.dataFrameDebugging.enabled", "false")
        # the JVM's default collector runs threads of its own beside the tests, on 2 cores
        # taken from the other worker; the serial one does the same work on the thread that
        # allocates (the PySpark tests alone: 226-245 core-seconds against 260-301). Its JIT
        # compiler spent a third of the JVM's CPU (-XX:+CITime: 104-111 s of the PySpark
        # tests' 324-335 core-seconds), most of it C2 optimising methods each run uses for a
        # few queries: three times the calls before C2 compiles a method, 75-83 s and 276-317
        # core-seconds (two alternating pairs)
        .config(
            "spark.driver.extraJavaOptions",
            "-XX:+UseSerialGC -XX:Tier4InvocationThreshold=15000 "
            "-XX:Tier4MinInvocationThreshold=2000 -XX:Tier4CompileThreshold=45000",
        )
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The documentation site, built once (``mkdocs build --strict``: a warning fails it).

    Where the run holds the docs extra's install test (CI's does), by a fresh venv with that
    extra, as the README documents it: the one build is that test's and the documentation
    tests' (a second build cost a minute). Else by this environment. The interpreter that
    built it is in the file ``built-by`` beside the site.
    """
    folder = tmp_path_factory.mktemp("site")
    python = Path(sys.executable)
    variables = None
    if any(
        item.get_closest_marker("installs") and "site" in getattr(item, "fixturenames", ())
        for item in request.session.items
    ):
        bin_dir = fresh(folder, "docs")
        python = bin_dir / "python"
        variables = environment(bin_dir)
    out = folder / "site"
    result = subprocess.run(
        [str(python), "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        check=False,
        env=variables,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    (folder / "built-by").write_text(str(python))
    return out


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` (the suite's), at a cost linear in the number of tests."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from scheduling import Scheduler  # xdist's classes: imported only where it runs

    return Scheduler(config, log)


SPARK = "pyspark"
KINDS: list[str] = list(CONSTRUCTORS)
"""The frame kinds the ``constructor`` fixture runs on (``--constructors``; set at start-up)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--constructors",
        default=None,
        help=(
            "comma-separated frame kinds for the tests that run on every kind, e.g. "
            f"'polars[eager],duckdb' ({', '.join([*CONSTRUCTORS, SPARK])}, or 'all'). Default: "
            "every in-process kind; PySpark's conformance cases are in tests/test_spark.py"
        ),
    )


def pytest_configure(config: pytest.Config) -> None:
    chosen = config.getoption("--constructors")
    if chosen is None:
        return
    known = [*CONSTRUCTORS, SPARK]
    names = known if chosen == "all" else [c.strip() for c in chosen.split(",") if c.strip()]
    unknown = [c for c in names if c not in known]
    if unknown or not names:
        msg = f"--constructors={chosen!r}: expected some of {', '.join(known)}, or 'all'"
        raise pytest.UsageError(msg)
    KINDS[:] = names


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``constructor`` runs on the chosen kinds; a test marked ``spark`` on PySpark too.

    PySpark is slow to plan (seconds a query, a minute for a bootstrap): by default it runs
    the conformance cases only, the tests marked ``@pytest.mark.spark`` (with ``cases=``, only
    the parameter sets whose id contains one of them). ``--constructors`` overrides it all.
    """
    if "constructor" not in metafunc.fixturenames:
        return
    kinds = list(KINDS)
    chosen = metafunc.config.getoption("--constructors") is not None
    if not chosen and metafunc.definition.get_closest_marker("spark") is not None:
        kinds.append(SPARK)
    params = [pytest.param(k, marks=pytest.mark.spark) if k == SPARK else k for k in kinds]
    metafunc.parametrize("constructor", params, indirect=True)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out the PySpark cases that a ``spark(cases=...)`` marker does not name.

    With ``-n``, the PySpark tests go to one worker (``--dist loadgroup``: one JVM to start
    and warm up, not one per worker), and so do the tests of the documentation site (built
    once); the fresh-venv installs start first.
    """
    chosen = config.getoption("--constructors") is not None
    kept, dropped = [], []
    for item in items:
        marker = item.get_closest_marker("spark")
        callspec = getattr(item, "callspec", None)
        cases = marker.kwargs.get("cases") if marker is not None else None
        on_spark = callspec is not None and callspec.params.get("constructor") == SPARK
        fixtures = getattr(item, "fixturenames", ())
        if on_spark or "spark_session" in fixtures:
            item.add_marker(pytest.mark.xdist_group(SPARK))
        elif "site" in fixtures:
            item.add_marker(pytest.mark.xdist_group("site"))
        if (
            not chosen
            and on_spark
            and cases is not None
            and not any(c in callspec.id for c in cases)
        ):
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    # the longest single tests first, so that no worker starts one while the other runs out
    # of work (the groups go first anyway, the largest first)
    items[:] = sorted(kept, key=lambda item: item.get_closest_marker("installs") is None)


def spark_frame(session: Any, df: pl.DataFrame) -> Any:
    """``df`` (rows shuffled) as a PySpark DataFrame of ``session``."""
    return session.createDataFrame(_shuffled(df).to_arrow())


@pytest.fixture
def constructor(request: pytest.FixtureRequest) -> Constructor:
    """Each chosen frame kind (``--constructors``; PySpark behind the ``spark`` marker)."""
    name: str = request.param
    if name == SPARK:
        session = request.getfixturevalue("spark_session")
        return lambda df: spark_frame(session, df)
    return CONSTRUCTORS[name]


def to_polars(result: Any) -> pl.DataFrame:
    """Any frame frameaudit returns, as an eager Polars DataFrame.

    Bad values found inside a DuckDB or Spark query raise the frameaudit error, as on Polars.
    """
    if isinstance(result, pl.DataFrame):
        return result
    if isinstance(result, pl.LazyFrame):
        return result.collect()
    wrapped = nw.from_native(result)
    if isinstance(wrapped, nw.LazyFrame):
        with frameaudit_errors():
            return wrapped.collect(backend="polars").to_native()
    return pl.from_arrow(wrapped.to_arrow())  # type: ignore[return-value]


def assert_frame_close(
    actual: pl.DataFrame, expected: pl.DataFrame, *, rel: float = 1e-9, abs_: float = 1e-12
) -> None:
    """Equal columns and key values; float columns within a tolerance (nulls must match)."""
    from polars.testing import assert_frame_equal

    assert actual.columns == expected.columns, (actual.columns, expected.columns)
    assert_frame_equal(
        actual,
        expected,
        check_dtypes=False,
        check_exact=False,
        rel_tol=rel,
        abs_tol=abs_,
    )


def final_bar(err: str) -> tuple[str, int, int]:
    """The last state a closed tqdm bar drew on stderr, and its done and total counts.

    tqdm redraws its line after a carriage return and ends it with a newline when closed.
    """
    assert err.endswith("\n"), f"the bar was not closed: {err!r}"
    final = err.rstrip("\n").rsplit("\r", 1)[-1]
    counts = re.search(r"\| (\d+)/(\d+) \[", final)
    assert counts, final
    return final, int(counts[1]), int(counts[2])
