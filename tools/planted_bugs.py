"""Plant known bugs in a scratch copy and check that the test suite still catches each.

A faster suite must not lose a failure class: each bug below is one such class (a wrong
formula, a dropped check, an error in one engine's code path only, a wrong interval). For
each, the script copies the committed tree (``git worktree``), applies the one-line change and
runs the tests that should catch it, twice: with ``--constructors=all`` (every frame kind
runs every engine test: the suite as it was before PySpark moved to its conformance cases)
and with the default selection. A bug is caught when pytest fails; the selection narrows the
run to the test directories of the planted layer (a subset that fails means the suite fails).

    python tools/planted_bugs.py            # every bug, both selections
    python tools/planted_bugs.py --only 3   # one bug

It prints a Markdown table and exits 1 if the default selection misses a bug that the full
one catches.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Bug:
    """One planted bug: a unique text of a file replaced, and the tests that should fail."""

    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


BUGS = (
    Bug(
        "wrong position discount (log2(k+2))",
        "frameaudit/_expr.py",
        "(position.cast(ns.Float64) + 1.0).log(base=2)",
        "(position.cast(ns.Float64) + 2.0).log(base=2)",
        ("tests/fair/test_ranking_reference.py", "tests/fair/test_ranking_backends.py"),
    ),
    Bug(
        "dropped check: positions below 1",
        "frameaudit/fair/ranking.py",
        '        validate.in_range(lf, rank, "rank", 1, None),\n',
        "",
        ("tests/fair/test_ranking_errors.py",),
    ),
    Bug(
        "cluster balance takes the larger ratio",
        "frameaudit/fair/clustering.py",
        "        .when(rho_a <= rho_b)\n",
        "        .when(rho_a >= rho_b)\n",
        ("tests/fair/test_clustering_reference.py", "tests/fair/test_clustering_backends.py"),
    ),
    Bug(
        "kappa without the chance term in the denominator",
        "frameaudit/repro/pairwise.py",
        "divided_in(ns, n * agree - chance, n * n - chance)",
        "divided_in(ns, n * agree - chance, n * n)",
        ("tests/repro/test_repro_reference.py", "tests/repro/test_repro_backends.py"),
    ),
    Bug(
        "correspondence distance weight squared, not cubed",
        "frameaudit/explain/correspondence.py",
        "(nw.col(distance).cast(nw.Float64) + 1.0) ** 3",
        "(nw.col(distance).cast(nw.Float64) + 1.0) ** 2",
        ("tests/explain/test_correspondence.py",),
    ),
    Bug(
        "bootstrap draws no unit twice (Poisson counts capped at 1)",
        "frameaudit/_engine/resample.py",
        "ns.col(REPLICATE), _count(ns, 1).alias(COUNT)",
        "ns.col(REPLICATE), ns.lit(1, dtype=ns.Int64).alias(COUNT)",
        ("tests/test_resample.py", "tests/fair/test_ranking_uncertainty.py"),
    ),
    Bug(
        "percentile interval one order statistic off",
        "frameaudit/_engine/resample.py",
        '(h.floor() + 1.0).alias(f"__fa_{end}_at")',
        '(h.floor() + 2.0).alias(f"__fa_{end}_at")',
        ("tests/test_resample.py", "tests/fair/test_ranking_uncertainty.py"),
    ),
    Bug(
        "a weight-0 partition reports its units as missing",
        "frameaudit/_engine/estimate.py",
        "nw.col(self.counted).fill_null(0),",
        "nw.col(self.counted),",
        ("tests/test_robustness.py",),
    ),
    Bug(
        "Spark only: orders counted from 0",
        "frameaudit/_engine/plans.py",
        "    return _ordered_by(ones.cum_sum(), partition, rank).cast(nw.Int64)",
        "    return (_ordered_by(ones.cum_sum(), partition, rank) - 1).cast(nw.Int64)",
        ("tests/fair",),
    ),
    Bug(
        "Spark only: NDKL's running sum includes the row itself",
        "frameaudit/_engine/plans.py",
        "        return rows.with_columns((summed - nw.col(running)).alias(before)), None",
        "        return rows.with_columns(summed.alias(before)), None",
        ("tests/fair",),
    ),
    Bug(
        "Spark only: repeated positions go unnoticed",
        "frameaudit/_engine/plans.py",
        '            repeating = sf.bit_count("__fa_bits") < sf.col("__fa_count")',
        '            repeating = sf.bit_count("__fa_bits") < sf.col("__fa_count") - 1',
        ("tests/test_plans.py", "tests/fair/test_ranking_errors.py"),
    ),
    Bug(
        "Spark and DuckDB: booleans in messages written in lower case",
        "frameaudit/_engine/text.py",
        "CASE WHEN {value} THEN 'True' ELSE 'False' END",
        "CASE WHEN {value} THEN 'true' ELSE 'false' END",
        ("tests/test_text.py",),
    ),
    Bug(
        "Polars lazy only: ranks with a gap taken as the orders",
        "frameaudit/_engine/plans.py",
        "        counted = (position.min() == 1) & (",
        "        counted = (position.min() >= 1) | (",
        ("tests/test_screens.py", "tests/fair"),
    ),
    Bug(
        "DuckDB only: repeated integer positions go unnoticed",
        "frameaudit/_engine/plans.py",
        "    if frame.implementation in _SPARK:\n        return _any_repeat(",
        "    if frame.implementation is nw.Implementation.DUCKDB:\n        return []\n"
        "    if frame.implementation in _SPARK:\n        return _any_repeat(",
        ("tests/test_plans.py", "tests/fair/test_ranking_errors.py"),
    ),
    Bug(
        "a replicate's distinct-item group sizes are the data's",
        "frameaudit/_engine/estimate.py",
        "        return distinct.sized(summed, name)\n",
        "        return self.sized(summed.drop(SINGLE), rows, keys, item=item, name=name)\n",
        ("tests/test_interval_coverage.py",),
    ),
    Bug(
        "the Variance combo divides by the number of groups, not one less",
        "frameaudit/_engine/combos.py",
        'divided_in(ns, c("__fa_dev2sum"), c("__fa_g") - 1.0)',
        'divided_in(ns, c("__fa_dev2sum"), c("__fa_g"))',
        ("tests/fair/test_ranking_combos.py", "tests/repro/test_multiplicity.py"),
    ),
    Bug(
        "an interval's output names are not reserved from the role columns",
        "frameaudit/_engine/estimate.py",
        "        if self.bootstrap is None:\n            return []\n",
        "        if True:\n            return []\n",
        ("tests/test_robustness.py",),
    ),
    Bug(
        "soft groups' fixed sizes count the aligned items instead of summing their weights",
        "frameaudit/fair/ranking.py",
        "counted = nw.col(SHARE).sum() if prep.aligned else nw.len()",
        "counted = nw.len()",
        ("tests/fair/test_ranking_alignment.py",),
    ),
    Bug(
        "a group metric's views give the replicates without the point estimate",
        "frameaudit/_engine/estimate.py",
        "replicates = frame.select(*estimate, REPLICATE, *columns, *also)",
        "replicates = frame.filter(nw.col(REPLICATE) >= 0)"
        ".select(*estimate, REPLICATE, *columns, *also)",
        ("tests/test_resample.py", "tests/report/test_ranking_report.py"),
    ),
    Bug(
        "the clustering report's rows read one metric's undefined replicates",
        "frameaudit/report/_clustering.py",
        'undefined=f"{m.name}_{UNDEFINED}"',
        'undefined=f"{labels[0].name}_{UNDEFINED}"',
        ("tests/report/test_clustering_report.py",),
    ),
    Bug(
        "the merged proof counts no nulls in a role column (Polars' own expressions)",
        "frameaudit/_validate.py",
        "            count=lambda ns: ns.col(column).null_count(),\n",
        "            count=lambda ns: ns.col(column).null_count() * 0,\n",
        ("tests/fair/test_ranking_errors.py",),
    ),
    Bug(
        "order cohesion's proof misses a group that lacks an overall feature",
        "frameaudit/explain/cohesion.py",
        "(ns.col(_DISTINCT) != rows) | (rows != rsize)",
        "(ns.col(_DISTINCT) != rows)",
        ("tests/explain/test_cohesion.py",),
    ),
    Bug(
        "a group absent from a partition of by= gets no row (the grid skipped)",
        "frameaudit/_engine/estimate.py",
        "        if cells is None and self.bootstrap is None and not self.by and self.source",
        "        if cells is None and self.bootstrap is None and self.source",
        ("tests/fair/test_ranking_properties.py", "tests/fair/test_ranking_combos.py"),
    ),
    Bug(
        "a listed group that no row holds has a null size, not 0",
        "frameaudit/fair/ranking.py",
        "    filled = [c for c in summed if c != _SIZE or prep.mapping is None]\n",
        "    filled = [c for c in summed if c != _SIZE]\n",
        ("tests/fair/test_ranking_properties.py", "tests/fair/test_ranking_combos.py"),
    ),
    Bug(
        "DuckDB only: the values found are listed from the largest",
        "frameaudit/_engine/text.py",
        "min_by({shown_sql}, {name}, {limit})",
        "max_by({shown_sql}, {name}, {limit})",
        ("tests/test_text.py", "tests/fair/test_clustering_errors.py"),
    ),
    Bug(
        "DuckDB only: a failed check of a frame given beside the data is left out of the query",
        "frameaudit/_engine/checks.py",
        "if not check.given or _message_now(check) is not None]",
        "if not check.given]",
        ("tests/test_checks_in_query.py", "tests/fair/test_clustering_errors.py"),
    ),
    Bug(
        "DuckDB only: a centroid written into the query adds its coordinate to the point's",
        "frameaudit/_engine/plans.py",
        'f"(({x} - {v!r}) * ({x} - {v!r}))"',
        'f"(({x} + {v!r}) * ({x} - {v!r}))"',
        ("tests/test_plans.py", "tests/fair/test_clustering_backends.py"),
    ),
    Bug(
        "the query's nearest-centroid sums take the other codes' points",
        "frameaudit/_engine/kernels.py",
        "nw.when(nw.col(code) == value).then(nw.col(column)).max()",
        "nw.when(nw.col(code) != value).then(nw.col(column)).max()",
        ("tests/fair/test_clustering_backends.py", "tests/fair/test_clustering_reference.py"),
    ),
    Bug(
        "Cramér's V: a sample both runs get wrong does not return to (y, y)",
        "frameaudit/repro/pairwise.py",
        "        ([base + yc + y], 1, None),",
        "        ([base + yc + y], -1, None),",
        ("tests/repro/test_repro_reference.py", "tests/repro/test_repro_backends.py"),
    ),
    Bug(
        "a bootstrap's fixed-point terms at half their scale",
        "frameaudit/_engine/plans.py",
        "then((value * 2.0**scale).cast(int128))",
        "then((value * 2.0 ** (scale - 1)).cast(int128))",
        ("tests/test_robustness.py", "tests/test_resample.py"),
    ),
    Bug(
        "log1p without its correction for the rounding of 1 + x",
        "frameaudit/_expr.py",
        "    return u.log() - ((u - 1.0) - x) / u",
        "    return u.log()",
        ("tests/fair/test_ndkl_precision.py", "tests/fair/test_ranking_reference.py"),
    ),
)


def _caught(tree: Path, bug: Bug, selection: list[str]) -> tuple[bool, float]:
    """Whether the bug's tests fail in ``tree`` with the extra pytest arguments ``selection``."""
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-n", "2", "-m", "not slow"]
    command += ["-p", "no:cacheprovider", "--no-header", *selection, *bug.tests]
    start = time.perf_counter()
    result = subprocess.run(command, cwd=tree, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    # with -x, pytest-xdist stops at the first failure and exits 2 (interrupted)
    failed = re.search(r"\b\d+ failed\b", result.stdout) is not None
    if result.returncode != 0 and not failed:
        tail = (result.stdout + result.stderr)[-2000:]
        msg = f"{bug.name}: pytest exited {result.returncode} without a failed test\n{tail}"
        raise RuntimeError(msg)
    return failed, seconds


def main() -> int:
    """Plant the chosen bugs one at a time; 1 if the default selection misses one."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--only", type=int, action="append", help="the bugs to plant (1-based)")
    args = parser.parse_args()
    chosen = [(i, b) for i, b in enumerate(BUGS, 1) if not args.only or i in args.only]
    scratch = Path(tempfile.mkdtemp(prefix="frameaudit-bugs-"))
    tree = scratch / "tree"
    subprocess.run(["git", "worktree", "add", "--detach", str(tree)], cwd=ROOT, check=True)
    where = subprocess.run(
        [sys.executable, "-c", "import frameaudit; print(frameaudit.__file__)"],
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    if not where.startswith(str(tree)):
        msg = f"the scratch tree imports frameaudit from {where.strip()}, not from {tree}"
        raise RuntimeError(msg)
    missed = False
    rows = ["| # | planted bug | all kinds | default | default run |", "|---|---|---|---|---|"]
    try:
        for number, bug in chosen:
            target = tree / bug.path
            original = target.read_text()
            if original.count(bug.old) != 1:
                msg = f"{bug.name}: the text to replace is not unique in {bug.path}"
                raise RuntimeError(msg)
            target.write_text(original.replace(bug.old, bug.new))
            try:
                before, _ = _caught(tree, bug, ["--constructors=all"])
                after, seconds = _caught(tree, bug, [])
            finally:
                target.write_text(original)
            missed |= before and not after
            marks = ["caught" if c else "**missed**" for c in (before, after)]
            rows.append(f"| {number} | {bug.name} | {marks[0]} | {marks[1]} | {seconds:.0f} s |")
            print(rows[-1], flush=True)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=True)
        shutil.rmtree(scratch, ignore_errors=True)
    print("\n".join(rows))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
