"""The fixed cost of a call: every ranking metric on a frame of 20 rows.

    python benchmarks/bench_calls.py                          # this checkout
    python benchmarks/bench_calls.py --against /tmp/before    # and another, in the same run

On a small frame a call costs what frameaudit does around the engine: binding the roles,
building the plan and its checks, and handing the result back. Each metric is called on an
eager Polars frame of 5 rankings x 4 items (``ranking=`` the ranking, ``group=`` the group):
the CPU time of one call, the best of 5 rounds of 100 calls after 20 warm-up calls, against a
bare Polars ``group_by`` over the same rows (the engine's own floor). ``--against`` takes the
path of another checkout of frameaudit (e.g. ``git worktree add --detach /tmp/before <commit>``)
and measures it in a subprocess, alternating with this one, so that the two columns share the
sitting. Results are printed and written to benchmarks/results/calls.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results" / "calls.md"
HERE = Path(__file__).resolve().parent.parent


def cpu_ms(fn: Callable[[], Any], *, rounds: int = 5, calls: int = 100, warmup: int = 20) -> float:
    """CPU milliseconds of one call: the best of ``rounds`` rounds of ``calls`` calls."""
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.process_time() - start) / calls * 1000)
    return best


def measure() -> dict[str, Any]:
    """Per metric (and the bare pass), CPU ms a call, and where the frameaudit measured lives."""
    # imported here: the subprocess chooses the checkout by its path
    import polars as pl
    from bench_ranking import METRICS, roles_of

    import frameaudit as fa

    frame = pl.DataFrame(
        {
            "ranking": [i // 4 for i in range(20)],
            "rank": [i % 4 + 1 for i in range(20)],
            "group": ["a", "b", "b", "a"] * 5,
            "relevance": [0.1 * (i % 7) for i in range(20)],
            "relevant": [i % 2 for i in range(20)],
            "ctr": [0.05 * (i % 5) for i in range(20)],
        }
    )
    times: dict[str, Any] = {"frameaudit": str(Path(fa.__file__).resolve())}
    for metric in METRICS:
        function, roles = getattr(fa.fair, metric), roles_of(metric)
        times[metric] = cpu_ms(lambda f=function, r=roles: f(frame, **r))  # type: ignore[misc]
    exposure = (1.0 / (pl.col("rank") + 1.0).log(2)).sum()
    times["bare group_by"] = cpu_ms(lambda: frame.group_by("ranking", "group").agg(exposure))
    return times


def measured_at(checkout: Path, call: str = "bench_calls.measure()") -> dict[str, float]:
    """``call`` (by default :func:`measure`) in a subprocess importing frameaudit from ``checkout``.

    ``call`` is a function of a benchmark module, called as ``module.function(...)``, that
    returns its times with the path of the frameaudit it imported under ``"frameaudit"``.
    """
    environment = {**os.environ, "PYTHONPATH": str(checkout)}
    module = call.split(".", maxsplit=1)[0]
    code = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
        f"import json, {module}; print(json.dumps({call}))"
    )
    # run in the checkout: ``python -c`` puts the working directory first on the path
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=environment,
        cwd=checkout,
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    imported = Path(found.pop("frameaudit"))
    if not imported.is_relative_to(checkout.resolve()):
        msg = f"measured the frameaudit at {imported}, not the one in {checkout}"
        raise RuntimeError(msg)
    times: dict[str, float] = found
    return times


def commit_of(checkout: Path) -> str:
    """The short hash of the commit checked out at ``checkout``."""
    done = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def best_at(runs: list[Path], call: str = "bench_calls.measure()") -> dict[Path, dict[str, float]]:
    """Each checkout's best times of ``call`` (:func:`measured_at`) over two alternating passes."""
    best: dict[Path, dict[str, float]] = {}
    for _ in range(2):
        for checkout in runs:
            times = measured_at(checkout, call)
            old = best.get(checkout, times)
            best[checkout] = {k: min(v, old[k]) for k, v in times.items()}
    return best


def table(
    runs: list[Path],
    best: dict[Path, dict[str, float]],
    *,
    script: str,
    rounds: str,
    description: str,
    column: str,
    digits: int = 2,
) -> str:
    """The Markdown of ``best`` (from :func:`best_at`), this checkout's times against the
    other's where ``runs`` holds two, headed by the command that measured them."""
    header, rule, against = f"| {column} | CPU ms a call |", "|---|---:|", ""
    if len(runs) > 1:
        commit = commit_of(runs[1])
        header += f" at {commit} (ms) | this / {commit} |"
        rule += "---:|---:|"
        against = f" --against <a checkout of {commit}>"
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} on 2 cores with `python benchmarks/{script}"
        f"{against}` ({rounds}).",
        "",
        description,
        "",
        header,
        rule,
    ]
    for case, ms in best[runs[0]].items():
        line = f"| {case} | {ms:.{digits}f} |"
        if len(runs) > 1:
            other = best[runs[1]][case]
            line += f" {other:.{digits}f} | {ms / other:.2f} |"
        lines.append(line)
    return "\n".join(lines) + "\n"


def main(call: str = "bench_calls.measure()", results: Path = RESULTS, **described: Any) -> None:
    """Time ``call`` here (and ``--against`` another checkout) and write its :func:`table`.

    ``described``: :func:`table`'s words (this benchmark's by default).
    """
    parser = argparse.ArgumentParser()
    parser.add_argument("--against", type=Path, help="another checkout of frameaudit")
    args = parser.parse_args()
    runs = [HERE, *([args.against.resolve()] if args.against else [])]
    described = described or {
        "script": "bench_calls.py",
        "rounds": "best of 2 x 5 rounds of 100 calls",
        "description": "One call on an eager Polars frame of 20 rows (5 rankings x 4 items): "
        "what frameaudit costs around the engine, against a bare Polars `group_by` over the "
        "same rows.",
        "column": "metric",
    }
    text = table(runs, best_at(runs, call), **described)
    print(text)
    results.parent.mkdir(exist_ok=True)
    results.write_text(text)


if __name__ == "__main__":
    main()
