"""The docs' Python examples, run: what an example prints and what its page shows after it."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import polars as pl

DOCS = Path(__file__).resolve().parents[1] / "docs"


def printed_and_shown(page: str, section: str | None = None) -> tuple[str, str]:
    """What the first example of ``page`` (or of its ``## section``) prints, and what the page
    shows in the text block after it.

    The example may set Polars' display options: they are restored afterwards for the other
    tests.
    """
    text = (DOCS / page).read_text()
    if section is not None:
        text = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```python\n(.*?)```\n\n```text\n(.*?)```", text, re.S)
    assert found is not None, f"{page}: no Python example followed by its output"
    code, shown = found.groups()
    printed = io.StringIO()
    with pl.Config(), contextlib.redirect_stdout(printed):
        exec(compile(code, page, "exec"), {})
    return printed.getvalue(), shown
