"""mkdocs hooks: pages drawn by frameaudit as it stands, at every build of the site.

* ``frameaudit demo``'s fair-ranking report as ``demo-report.html`` (the self-contained page
  :meth:`frameaudit.report.Report.to_html` writes) and its EXP chart as
  ``assets/demo-exp.svg``, which the home page shows;
* the performance page's overview chart (``assets/performance-targets.svg``): every speed-up
  in ``benchmarks/results/`` over its target, read from the tables the benchmarks wrote;
* the notebooks in ``notebooks/``, executed and turned into pages (``notebooks/<name>.md``):
  their tables as HTML, their reports with their charts, and every Altair chart as inline SVG
  (Altair's ``svg`` renderer, through vl-convert), so the pages load nothing from a CDN.

Nothing of it is committed: the numbers and charts on these pages are the code's.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ("fair_ranking", "beyond_ranking", "arbitrariness")
# run first in every notebook: charts as static SVG (no script from a CDN)
_SVG_CHARTS = 'import altair\naltair.renderers.enable("svg")'


def on_files(files: Files, config: Any) -> Files:
    """Add the generated pages and images to the site's files."""
    import vl_convert  # noqa: PLC0415 - only when the site is built

    import frameaudit as fa  # noqa: PLC0415

    log = fa.datasets.ranking_example()
    report = fa.report.ranking(
        log,
        group=["gender", "age"],
        ranking="query",
        item="item",
        relevance="relevance",
        ci=0.95,
        n_boot=1000,
        seed=0,
    )
    files.append(File.generated(config, "demo-report.html", content=report.to_html()))
    chart = vl_convert.vegalite_to_svg(report.charts()["exp"].to_dict())
    files.append(File.generated(config, "assets/demo-exp.svg", content=chart))
    overview = vl_convert.vegalite_to_svg(_targets_chart().to_dict())
    files.append(File.generated(config, "assets/performance-targets.svg", content=overview))
    for name in NOTEBOOKS:
        page = _notebook_page(ROOT / "notebooks" / f"{name}.ipynb")
        files.append(File.generated(config, f"notebooks/{name}.md", content=page))
    return files


def _notebook_page(path: Path) -> str:
    """The notebook, executed, as a Markdown page: cells in order, each with its outputs."""
    import nbclient  # noqa: PLC0415

    nbformat: Any = importlib.import_module("nbformat")  # untyped

    notebook = nbformat.read(path, as_version=4)
    notebook.cells.insert(0, nbformat.v4.new_code_cell(_SVG_CHARTS))
    client = nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": path.parent}}
    )
    client.execute()
    parts = [
        f"<!-- executed from notebooks/{path.name} when the site was built -->",
        f"*This page is the notebook `notebooks/{path.name}`, run when the site was built.*",
    ]
    for cell in notebook.cells[1:]:
        if cell.cell_type == "markdown":
            parts.append(cell.source)
            continue
        parts.append(f"```python\n{cell.source}\n```")
        parts.extend(_output(output) for output in cell.outputs)
    return "\n\n".join(part for part in parts if part) + "\n"


def _output(output: Any) -> str:
    """One cell output as Markdown: an SVG chart or HTML as is, text in a code block."""
    if output.output_type == "stream":
        return f"```text\n{output.text.rstrip()}\n```"
    if output.output_type == "error":
        msg = f"a notebook cell failed: {output.ename}: {output.evalue}"
        raise RuntimeError(msg)
    data = output.get("data", {})
    if "image/svg+xml" in data:
        return f'<div class="fa-output">\n{_one_line(data["image/svg+xml"])}\n</div>'
    if "text/html" in data:
        return f'<div class="fa-output">\n{_one_line(data["text/html"])}\n</div>'
    if "text/plain" in data:
        return f"```text\n{data['text/plain'].rstrip()}\n```"
    return ""


def _one_line(markup: str) -> str:
    """HTML without blank lines, so that Markdown keeps it as one raw block."""
    return "\n".join(line for line in markup.splitlines() if line.strip())


def _tables(text: str) -> list[list[dict[str, str]]]:
    """The Markdown tables of a results file, as rows of cells by column name."""
    tables: list[list[dict[str, str]]] = []
    lines = text.splitlines()
    for i, line in enumerate(lines[:-1]):
        if (
            line.startswith("|")
            and re.match(r"^\|[-:| ]+\|$", lines[i + 1])
            and (i == 0 or not lines[i - 1].startswith("|"))
        ):
            header = [cell.strip() for cell in line.strip("|").split("|")]
            rows = []
            for row in lines[i + 2 :]:
                if not row.startswith("|"):
                    break
                rows.append(
                    dict(zip(header, (c.strip() for c in row.strip("|").split("|")), strict=False))
                )
            tables.append(rows)
    return tables


def _number(text: str) -> float | None:
    match = re.search(r"[-\d.,]+", text.replace(",", ""))
    try:
        return float(match.group()) if match else None
    except ValueError:
        return None


def _targets_chart() -> Any:
    """Each benchmark's speed-up over the reference divided by its target (1 = just met)."""
    import altair as alt  # noqa: PLC0415
    import polars as pl  # noqa: PLC0415

    rows = []
    for family in ("ranking", "clustering", "explain"):
        text = (ROOT / "benchmarks" / "results" / f"{family}.md").read_text()
        for table in _tables(text):
            for row in table:
                speed = next((v for k, v in row.items() if k.startswith("speed-up")), None)
                target = row.get("target") or next(
                    (k for k in row if k.startswith("speed-up (target")), None
                )
                if speed is None or target is None:
                    continue
                wanted = _number(target.split("≥")[-1])
                value = _number(speed)
                if not wanted or value is None:
                    continue
                case = row.get("case") or " ".join(
                    row[k] for k in ("metric", "size", "size (rankings x items)") if k in row
                )
                rows.append({"family": family, "case": case, "of_target": value / wanted})
    data = pl.DataFrame(rows)
    bars = (
        alt.Chart(data)
        .mark_point(filled=True, size=70)
        .encode(
            x=alt.X(
                "of_target:Q",
                scale=alt.Scale(type="log"),
                title="speed-up over the reference ÷ its target (log scale; ≥ 1: met)",
            ),
            y=alt.Y("case:N", sort=None, title=None, axis=alt.Axis(labelLimit=420)),
            color=alt.Color(
                "family:N",
                scale=alt.Scale(
                    domain=["ranking", "clustering", "explain"],
                    range=["#0072B2", "#E69F00", "#009E73"],
                ),
            ),
            tooltip=["family", "case", alt.Tooltip("of_target:Q", format=".2f")],
        )
    )
    rule = (
        alt.Chart(pl.DataFrame({"x": [1.0]}))
        .mark_rule(color="#D55E00", strokeDash=[5, 3])
        .encode(x="x:Q")
    )
    return alt.layer(bars, rule).properties(
        width=520,
        height=14 * data.height,
        title=alt.Title(
            "Every speed-up against its target",
            subtitle="Met: the point on or right of the dashed line. The tables below give the "
            "seconds, the floors and the notes.",
        ),
    )
