"""Every documented install command, on a fresh venv: what a new user types must work.

The base install (``pip install -e .``) runs the demo and writes HTML (its charts need the
``report`` extra: the page says so in one line, and the command succeeds); the docs extra
(``pip install -e ".[docs]"``) builds the site. Slow (they download and install packages), but
part of the default run, as CI must check them; deselect locally with ``-m "not installs"``.
"""

from __future__ import annotations

import html as html_module
import os
import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.installs


def _fresh(tmp_path: Path, extra: str = "") -> Path:
    """A new venv with frameaudit installed from this checkout; its bin folder."""
    venv.create(tmp_path / "venv", with_pip=True)
    bin_dir = tmp_path / "venv" / ("Scripts" if os.name == "nt" else "bin")
    target = f"{ROOT}[{extra}]" if extra else str(ROOT)
    subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "install", "--quiet", "-e", target],
        check=True,
        capture_output=True,
        text=True,
    )
    return bin_dir


def _run(bin_dir: Path, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    environment.pop("PYTHONPATH", None)
    return subprocess.run(
        [str(bin_dir / argv[0]), *argv[1:]],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )


def test_the_base_install_runs_the_demo_and_writes_html(tmp_path: Path) -> None:
    bin_dir = _fresh(tmp_path)
    demo = _run(bin_dir, "frameaudit", "demo", cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    assert "Fair-ranking report" in demo.stdout
    page = tmp_path / "demo.html"
    html = _run(
        bin_dir, "frameaudit", "demo", "--format", "html", "--output", str(page), cwd=tmp_path
    )
    assert html.returncode == 0, html.stderr
    text = page.read_text()
    note = "No charts: charts need the report extra: pip install 'frameaudit[report]'"
    assert html_module.escape(note) in text
    assert "<h2>Worst first</h2>" in text
    probe = _run(bin_dir, "python", "-c", "import altair", cwd=tmp_path)
    assert probe.returncode != 0  # the base install really has no charts


def test_the_docs_extra_builds_the_site(tmp_path: Path) -> None:
    bin_dir = _fresh(tmp_path, "docs")
    site = tmp_path / "site"
    build = _run(bin_dir, "mkdocs", "build", "--strict", "--site-dir", str(site), cwd=ROOT)
    assert build.returncode == 0, build.stderr[-3000:]
    assert (site / "index.html").is_file()
    assert (site / "notebooks" / "fair_ranking" / "index.html").is_file()
