"""The built documentation, as a browser shows it: formulas typeset, no reST markup left.

The site is built once; headless Chromium opens pages from disk (no server, no network) and
dumps the DOM after the scripts ran. A page passes when every formula pymdownx.arithmatex marked
was typeset by the bundled KaTeX, no raw LaTeX or Sphinx markup is visible, the browser logged
no console message, and the page loads no script or stylesheet from the network.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

CHROMIUM = next(
    (path for name in ("chromium", "chromium-browser") if (path := shutil.which(name))), None
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed and could not be (.ci/run installs Debian's 'chromium' "
    "with apt-get when it runs as root)",
)

# What raw markup looks like in a page's visible text: LaTeX that KaTeX did not typeset, Sphinx
# roles, reST inline literals, directives and simple-table borders.
RAW_MARKUP = re.compile(
    r"\\\(|\\\[|\$\$|\\(?:frac|sum|math\w*|min|max|lVert)\b"
    r"|:(?:py:)?(?:func|class|meth|mod|data|attr|exc|obj|math):`|``|\.\. \w+::|={5,}"
)


class _Page(HTMLParser):
    """The visible text of a page, its formulas and the resources it loads."""

    _VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link"})
    _VOID |= frozenset({"meta", "source", "track", "wbr", "path", "rect", "circle", "use"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, list[str]]] = []
        self.text: list[str] = []
        self.formulas = 0  # elements arithmatex marked
        self.typeset = 0  # of them, those holding KaTeX's output
        self.errors = 0  # KaTeX parse errors
        self.resources: list[str] = []  # scripts and stylesheets
        self.dom = ""  # the page as the browser left it

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        if tag == "script" and attributes.get("src"):
            self.resources.append(attributes["src"] or "")
        if tag == "link" and attributes.get("rel") == "stylesheet":
            self.resources.append(attributes.get("href") or "")
        if tag in self._VOID:
            return
        if "arithmatex" in classes:
            self.formulas += 1
        if "katex" in classes and self._inside("arithmatex") and not self._inside("katex"):
            self.typeset += 1
        if "katex-error" in classes:
            self.errors += 1
        self.stack.append((tag, classes))

    def handle_endtag(self, tag: str) -> None:
        while self.stack and self.stack.pop()[0] != tag:
            pass

    def handle_data(self, data: str) -> None:
        hidden = {"script", "style", "pre", "title"}
        if not self._inside("katex") and not any(tag in hidden for tag, _ in self.stack):
            self.text.append(data)

    def _inside(self, cls: str) -> bool:
        return any(cls in classes for _, classes in self.stack)


def _browse(page: Path, profile: Path) -> tuple[_Page, list[str]]:
    """The page's DOM after its scripts ran, and the browser's console messages."""
    assert CHROMIUM is not None
    result = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--user-data-dir={profile}",  # one profile per run: parallel runs do not share
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=10000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
    parsed = _Page()
    parsed.dom = result.stdout
    parsed.feed(result.stdout)
    return parsed, console


@pytest.mark.parametrize(
    ("page", "min_formulas"),
    [
        ("ranking/index.html", 20),  # Markdown formulas: tables and prose
        ("api/index.html", 40),  # docstrings: :math:, .. math::, formula tables
        ("clustering/index.html", 5),
    ],
)
def test_formulas_are_typeset_and_no_markup_is_raw(
    site: Path, tmp_path: Path, page: str, min_formulas: int
) -> None:
    parsed, console = _browse(site / page, tmp_path / "profile")
    assert console == []
    assert parsed.formulas >= min_formulas
    assert parsed.typeset == parsed.formulas  # every formula went through KaTeX
    assert parsed.errors == 0
    text = "".join(parsed.text)
    raw = [text[max(0, m.start() - 60) : m.end() + 60] for m in RAW_MARKUP.finditer(text)]
    assert raw == []


def test_the_api_reference_links_sphinx_roles(site: Path) -> None:
    api = (site / "api" / "index.html").read_text()
    # :func:`combine` in frameaudit.fair.ranking's docstring: a link to the function
    assert re.search(
        r'<a class="autorefs autorefs-internal"[^>]*href="#frameaudit\.fair\.ranking\.combine"'
        r"[^>]*><code>combine</code></a>",
        api,
    )
    # the docstrings' simple tables are tables
    assert "<th>combo</th>" in api
    assert "<th>formula over the G per-group values</th>" in api


@pytest.mark.parametrize("page", ["index.html", "ranking/index.html", "api/index.html"])
def test_pages_load_nothing_from_the_network(site: Path, page: str) -> None:
    parsed = _Page()
    parsed.feed((site / page).read_text())
    assert any("katex.min.js" in src for src in parsed.resources)
    for resource in parsed.resources:
        assert not re.match(r"(?:https?:)?//", resource), resource
        assert (site / page).parent.joinpath(resource.split("?")[0]).resolve().is_file()
    # the fonts KaTeX's stylesheet asks for first (woff2) are bundled
    css = (site / "javascripts" / "katex" / "katex.min.css").read_text()
    fonts = re.findall(r"url\((fonts/[^)]+\.woff2)\)", css)
    assert len(fonts) == 20
    assert all((site / "javascripts" / "katex" / font).is_file() for font in fonts)


def test_the_home_page_shows_the_demo_report_drawn_by_the_code(site: Path, tmp_path: Path) -> None:
    import polars as pl

    import frameaudit as fa

    parsed, console = _browse(site / "index.html", tmp_path / "profile")
    assert console == []
    assert re.search(r'<img[^>]+src="assets/demo-exp\.svg"', parsed.dom)
    chart = (site / "assets" / "demo-exp.svg").read_text()
    assert chart.startswith("<svg")
    # the chart's points are the demo's per-group EXP, as the metric function gives it
    exp = fa.fair.exp(
        fa.datasets.ranking_example(),
        group=["gender", "age"],
        ranking="query",
        item="item",
        combo=None,
    )
    points = dict(re.findall(r"group: ([a-z]+/[a-z]+); exp: ([-\d.e]+); n: \d+", chart))
    expected = exp.select(pl.format("{}/{}", "gender", "age"), "exp").rows()
    assert len(points) == len(expected) == 4
    for group, value in expected:
        assert float(points[group]) == pytest.approx(value, rel=1e-9)
    report, console = _browse(site / "demo-report.html", tmp_path / "report-profile")
    assert console == []
    assert "Fair-ranking report by gender × age" in "".join(report.text)
    assert report.resources == []


@pytest.mark.parametrize(
    ("page", "charts"),
    [
        # the phi sweep, and the ranking report's: six group metrics (relevance given, no
        # ctr or binary relevance), positions and NDKL
        ("notebooks/fair_ranking/index.html", 9),
        # the clustering (2 + 0 per-group), repro (2) and explain (3) reports' charts
        ("notebooks/beyond_ranking/index.html", 7),
        # the repro report's multiplicity chart: five metrics' panels per group
        ("notebooks/arbitrariness/index.html", 1),
    ],
)
def test_the_notebooks_are_pages_with_their_charts(
    site: Path, tmp_path: Path, page: str, charts: int
) -> None:
    parsed, console = _browse(site / page, tmp_path / "profile")
    assert console == []
    assert not any(re.match(r"(?:https?:)?//", resource) for resource in parsed.resources)
    drawn = re.findall(r"<svg[^>]*>.*?</svg>", parsed.dom, re.S)
    with_marks = [svg for svg in drawn if 'role="graphics-symbol"' in svg]
    assert len(with_marks) >= charts
    assert "Traceback" not in parsed.dom
