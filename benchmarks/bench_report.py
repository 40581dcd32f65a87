"""The ranking report's cost against the metric calls it shows.

    python benchmarks/bench_report.py            # 10,000 rankings x 100 items (1M rows)
    python benchmarks/bench_report.py --quick    # small smoke run

``fa.report.ranking`` runs each group metric once per group (``combo=None``), combines the
per-group values under the seven combos with ``fa.fair.combine``, runs NDKL (mean and per
ranking) and IAA, and counts each group's rows per position bucket for its chart. Its cost is
compared with the sum of the metric calls it shows (target: at most about 2x), without and with
intervals (``ci=0.95, n_boot=200``). Results are printed and written to
benchmarks/results/report.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bench_ranking import best_of, tidy_data  # the same timing and data as the ranking benchmark

import frameaudit as fa

RESULTS = Path(__file__).parent / "results" / "report.md"
ROLES: dict[str, Any] = {"rank": "rank", "group": "group", "ranking": "ranking", "item": "item"}
COLUMNS = {"relevance": "relevance", "ctr": "ctr", "relevant": "relevant"}


def metric_calls(log: Any, boot: dict[str, Any]) -> None:
    """The calls whose results the report shows, each made once."""
    for name, options in fa.report.GROUP_METRICS.items():
        given = {**COLUMNS, "p": 0.5, "decay": 0.5}
        extra = {option: given[source] for option, source in options.items()}
        metric = getattr(fa.fair, name)
        metric(log, **ROLES, **extra, combo=None, **boot)
        if boot:
            metric(log, **ROLES, **extra, **boot)
    fa.fair.ndkl(log, **ROLES, **boot)
    fa.fair.ndkl(log, **ROLES, by="ranking")
    fa.fair.iaa(log, rank="rank", ranking="ranking", item="item", relevance="relevance", **boot)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rankings, repeats = (500, 1) if args.quick else (10_000, 3)
    log = tidy_data(rankings, 100)
    lines = [
        "# Ranking report: cost against the metric calls it shows",
        "",
        f"{log.height:,} rows ({rankings:,} rankings x 100 items), best of {repeats}"
        f"{'; --quick' if args.quick else ''}.",
        "",
        "| intervals | metric calls (s) | report (s) | report / calls |",
        "|---|---|---|---|",
    ]
    for label, boot in (("none", {}), ("ci=0.95, n_boot=200", {"ci": 0.95, "n_boot": 200})):
        calls = best_of(lambda boot=boot: metric_calls(log, boot), repeats)
        report = best_of(
            lambda boot=boot: fa.report.ranking(log, **ROLES, **COLUMNS, **boot), repeats
        )
        lines.append(f"| {label} | {calls:.2f} | {report:.2f} | {report / calls:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.write_text(text)


if __name__ == "__main__":
    main()
