"""Write ``tests/data/trec_task2/``: a small seeded run and what the TREC task-2 code prints.

The TREC Fair Ranking track's expected-exposure code is not on the package registry; this
script draws a run, relevance judgments, soft alignments and target distributions, writes them
as tidy CSV files, and runs the track's own metric code on them:

* 2022: ``wptrec.metrics.EELMetric`` (``fair-trec/trec2022-fair-public``), two fairness
  dimensions (their intersection), only relevant pages' exposure, rankings scaled to 20;
* 2021: ``metrics.Task2Metric`` (``fair-trec/trec2021-fair-public``), one dimension, every
  retrieved page's exposure (a page without an alignment counts for no group), scaled to 50.

``python tools/trec_task2_fixture.py TREC2021_CHECKOUT TREC2022_CHECKOUT`` (the checkouts'
commits are in the data's README).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

OUT = Path(__file__).parent.parent / "tests" / "data" / "trec_task2"
GEO = ["africa", "asia", "europe"]
GENDER = ["female", "male"]
PAGES = list(range(100, 116))
UNALIGNED_2021 = 115
"""A page with no 2021 alignment: the track's code gives it to no group."""


def draw(seed: int = 7) -> dict[str, pd.DataFrame]:
    """The run, judgments, the two dimensions' alignments and the targets of both years."""
    rng = np.random.default_rng(seed)
    rows = []
    relevant = []
    for query in range(1, 7):
        pool = rng.choice(PAGES[:12] if query != 5 else PAGES[:10], size=9, replace=False)
        for sample in range(1, (4 if query != 6 else 2)):
            length = int(rng.integers(4, 8))
            order = rng.permutation(pool)[:length]
            rows += [(query, sample, int(page), k + 1) for k, page in enumerate(order)]
        # query 5's relevant pages are never retrieved: no exposure
        judged = rng.choice(PAGES[10:14] if query == 5 else pool, size=3, replace=False)
        relevant += [(query, int(page), 1) for page in judged]
    geo = rng.dirichlet(np.ones(len(GEO)) * 0.7, size=len(PAGES))
    gender = np.zeros((len(PAGES), len(GENDER)))
    gender[np.arange(len(PAGES)), rng.integers(0, 2, size=len(PAGES))] = 1.0
    gender[::5] = [0.5, 0.5]  # a few pages of both

    def tidy(weights: np.ndarray, levels: list[str], name: str) -> pd.DataFrame:
        rows = [
            (page, level, w)
            for page, row in zip(PAGES, weights, strict=True)
            for level, w in zip(levels, row, strict=True)
        ]
        return pd.DataFrame(rows, columns=["item", name, "weight"])

    cells = [(g, s) for g in GEO for s in GENDER]
    shares22 = rng.dirichlet(np.ones(len(cells)), size=6)
    shares21 = rng.dirichlet(np.ones(len(GEO)), size=6)
    return {
        "run": pd.DataFrame(rows, columns=["query", "sample", "item", "rank"]),
        "qrels": pd.DataFrame(relevant, columns=["query", "item", "relevance"]),
        "geo": tidy(geo, GEO, "geo"),
        "gender": tidy(gender, GENDER, "gender"),
        "target2022": pd.DataFrame(
            [(q + 1, g, s, shares22[q, i]) for q in range(6) for i, (g, s) in enumerate(cells)],
            columns=["query", "geo", "gender", "share"],
        ),
        "target2021": pd.DataFrame(
            [(q + 1, g, shares21[q, i]) for q in range(6) for i, g in enumerate(GEO)],
            columns=["query", "geo", "share"],
        ),
    }


def _wide(tidy: pd.DataFrame, name: str, levels: list[str]) -> pd.DataFrame:
    wide = tidy.pivot(index="item", columns=name, values="weight")[levels]
    wide.index.name = "page"
    wide.columns.name = name
    return wide


def task2_2022(data: dict[str, pd.DataFrame], checkout: Path) -> pd.DataFrame:
    """EELMetric per query, as the 2022 evaluation notebook applies it."""
    sys.path.insert(0, str(checkout))
    from wptrec.dimension import FairDim  # noqa: PLC0415 (the checkout is on the path now)
    from wptrec.metrics import EELMetric  # noqa: PLC0415

    dimensions = []
    for name, levels in (("geo", GEO), ("gender", GENDER)):
        wide = _wide(data[name], name, levels)
        wide.name = name  # type: ignore[attr-defined]  # FairDim reads the frame's name
        array = xr.DataArray(
            wide.values, coords={"page": wide.index, name: levels}, dims=["page", name]
        )
        dimensions.append(FairDim(wide, array))
    target = data["target2022"]
    queries = sorted(target["query"].unique())
    shares = (
        target.set_index(["query", "geo", "gender"])["share"]
        .to_xarray()
        .sel(geo=GEO, gender=GENDER)
        .values
    )
    targets = xr.DataArray(
        shares,
        coords={"topic_id": queries, "geo": GEO, "gender": GENDER},
        dims=["topic_id", "geo", "gender"],
    )
    qrels = data["qrels"].rename(columns={"query": "topic_id", "item": "page_id"})
    metric = EELMetric(qrels.set_index("topic_id"), dimensions, targets, target_len=20)
    run = data["run"].sort_values(["query", "sample", "rank"])
    run = run.rename(columns={"query": "topic_id", "sample": "seq_no", "item": "page_id"})
    values: pd.DataFrame = run.groupby("topic_id")[["seq_no", "page_id"]].apply(metric)
    return values


def task2_2021(data: dict[str, pd.DataFrame], checkout: Path) -> pd.DataFrame:
    """Task2Metric per query, as the 2021 evaluation notebook applies it."""
    sys.path.insert(0, str(checkout))
    from metrics import Task2Metric  # noqa: PLC0415

    align = _wide(data["geo"], "geo", GEO).drop(index=UNALIGNED_2021)
    targets = data["target2021"].pivot(index="query", columns="geo", values="share")[GEO]
    qrels = data["qrels"].set_index("query")
    metric = Task2Metric(qrels, align, None, targets)
    run = data["run"].sort_values(["query", "sample", "rank"])
    run = run.rename(columns={"sample": "seq_no", "item": "page_id"})
    values: pd.DataFrame = run.groupby("query")[["seq_no", "page_id"]].apply(metric)
    return values


def main() -> None:
    """Draw the data, run both years' code on it and write the files."""
    trec2021, trec2022 = (Path(a) for a in sys.argv[1:3])
    data = draw()
    OUT.mkdir(parents=True, exist_ok=True)
    for name, frame in data.items():
        frame.to_csv(OUT / f"{name}.csv", index=False)
    printed = {"2022": task2_2022(data, trec2022), "2021": task2_2021(data, trec2021)}
    for year, values in printed.items():
        table = values.rename_axis("query").reset_index()
        table.to_csv(OUT / f"trec{year}.csv", index=False, float_format="%.17g")


if __name__ == "__main__":
    main()
