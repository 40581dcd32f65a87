"""mkdocs hooks: the home page's demo report, made by frameaudit as it stands at every build.

``frameaudit demo``'s fair-ranking report is added to the site as ``demo-report.html`` (the
self-contained page :meth:`frameaudit.report.Report.to_html` writes) and its EXP chart as
``assets/demo-exp.svg``, which the home page shows. Nothing is committed: every build draws
them from the code, so the numbers on the home page are the code's.
"""

from __future__ import annotations

from typing import Any

from mkdocs.structure.files import File, Files


def on_files(files: Files, config: Any) -> Files:
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
    return files
