"""Comparisons validated as statistics: p-values under a true null, coverage, width and power.

    python benchmarks/bench_calibration.py            # 1,000 audits a row (about 15 minutes)
    python benchmarks/bench_calibration.py --quick    # small smoke run

For each kind of comparison in ``tests/reference/paired_populations.py`` (two systems
evaluated on the same units, drawn from a known population), one ``frameaudit.compare`` call
over many simulated audits (``by="audit"``) measures:

* under a true null (the systems exchangeable within each unit): how often p < 0.05 (target
  4-6%), and how often Holm's adjustment over every row of an audit rejects one (the
  family-wise error, target at most 5%; ``n_perm=1000``);
* with a known change: how often the 95% interval of the difference covers the population
  difference (the mean over 2,000 audits; target 93-97%), and its mean width over the
  difference's true 95% spread (target 0.8-1.3x; ``n_boot=1000``);
* the power of the test (p < 0.05) for EXP's MinMaxRatio by number of queries and size of
  the change.

The tables are printed and written to benchmarks/results/calibration.md (the "Comparing
systems" page shows them).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))

from reference.paired_populations import PAIRED, coverage, null_rejection, power, rankers

RESULTS = Path(__file__).parent / "results" / "calibration.md"
POWER_KIND = "EXP MinMaxRatio (a ratio of sums)"
POWER_UNITS = (10, 30, 100, 300)
POWER_CHANGES = (0.05, 0.1, 0.25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    args = parser.parse_args()
    audits, truth, replicates, power_audits = (
        (100, 200, 200, 50) if args.quick else (1000, 2000, 1000, 200)
    )
    command = "`python benchmarks/bench_calibration.py`"
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} with {command}: {audits:,} simulated audits a "
        f"row, `n_perm={replicates}` and `n_boot={replicates}`.",
        "",
        "Under a true null (target: p < 0.05 in 4-6% of audits; Holm's family-wise error at "
        "most 5%):",
        "",
        "| comparison | unit | units | rows an audit | p < 0.05 | Holm rejects any |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for kind in PAIRED.values():
        start = time.perf_counter()
        rejected, family, rows = null_rejection(kind, audits=audits, n_perm=replicates)
        line = (
            f"| {kind.name} | {kind.unit} | {kind.units} | {rows} | {rejected:.1%} | {family:.1%} |"
        )
        lines.append(line)
        print(line, f"({time.perf_counter() - start:.0f} s)", flush=True)
    lines += [
        "",
        f"With a known change (target: the 95% interval covers the population difference, the "
        f"mean over {truth:,} audits, in 93-97% of audits; mean width 0.8-1.3x the true 95% "
        "spread):",
        "",
        "| comparison | group | population difference | true 95% spread | coverage "
        "| width / true spread |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for kind in PAIRED.values():
        start = time.perf_counter()
        results = coverage(kind, truth_audits=truth, audits=audits, n_boot=replicates)
        for result in results:
            line = (
                f"| {kind.name} | {result.key or '—'} | {result.truth:.4g} | {result.spread:.3g} "
                f"| {result.coverage:.1%} | {result.width:.2f} |"
            )
            lines.append(line)
            print(line, f"({time.perf_counter() - start:.0f} s)", flush=True)
    kind = PAIRED[POWER_KIND]
    lines += [
        "",
        f"Power: how often p < 0.05 for {POWER_KIND}, {power_audits} audits of queries of "
        "10 items a cell, `n_perm=200`; ranker A pushes group a down by 0.3, ranker B by 0.3 "
        "minus the change:",
        "",
        "| queries | " + " | ".join(f"change {change}" for change in POWER_CHANGES) + " |",
        "|---:|" + "---:|" * len(POWER_CHANGES),
    ]
    for units in POWER_UNITS:
        shares = [
            power(
                kind,
                units=units,
                audits=power_audits,
                n_perm=200,
                generate=rankers(10, change=change),
            )
            for change in POWER_CHANGES
        ]
        lines.append(f"| {units} | " + " | ".join(f"{share:.0%}" for share in shares) + " |")
        print(lines[-1], flush=True)
    if not args.quick:
        RESULTS.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
