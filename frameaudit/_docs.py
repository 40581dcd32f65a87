r"""Docstring text shared by the metric families, written once.

A docstring marks where a shared fragment goes with ``<<name>>`` alone on a line. Where the
fragment is parameter entries, the line before the marker names them, as numpydoc writes
parameters described together (so linters and readers see them documented), e.g. at the end
of a Parameters section::

    weight, ci, n_boot, seed
        <<uncertainty>>

:func:`fill` (or the decorator :func:`shared_docs`) replaces the marker (and that line) with
the fragment, indented as the docstring is and wrapped as its hand-written paragraphs are.
The marker cannot be mistaken for the docstrings' math (``\frac{a}{b}``) or formatting. A
marker without its fragment, a names line that differs from the fragment's entries and (with
:func:`shared_docs`) a fragment without its marker fail at import.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["fill", "shared_docs", "uncertainty_parameters"]

F = TypeVar("F", bound=Callable[..., Any])

# a marker line, after the line naming the parameter entries it stands for (if it does)
_MARKER = re.compile(
    r"^(?:(?P<indent> *)(?P<names>\w+(?:, \w+)*)\n)?(?P<marker_indent> *)<<(?P<name>[a-z_]+)>>$",
    re.MULTILINE,
)
# the width the docstrings' paragraphs are wrapped to (in ``__doc__``: the source's 4-space
# function-body indent is part of it), so a filled docstring reads as one written by hand
_WIDTH = 93


def uncertainty_parameters(
    unit: str,
    *,
    weights: str,
    interval: str,
    summary: str = "value",
    repeated: str = "",
) -> str:
    """The ``weight``, ``ci``, ``n_boot`` and ``seed`` entries of a metric resampling ``unit``.

    Parameters
    ----------
    unit
        The resampling (and weighting) unit, singular: "ranking", "point", "sample", "query".
    weights
        What the weight column is and what becomes a weighted sum: the text before the
        colon of ": an integer weight k gives the value of the ... repeated k times".
    interval
        What the interval is over, after "a percentile bootstrap interval", e.g. "over the
        rankings (``ranking=`` required)".
    summary
        What a unit repeated k times repeats: its "value", or its "summary".
    repeated
        A note after "repeated k times", e.g. "(with fresh ids)".

    Returns
    -------
    Numpydoc parameter entries, a description on one indented line each (:func:`fill` wraps
    them).
    """
    times = f"repeated k times {repeated}" if repeated else "repeated k times"
    return (
        f"weight\n    {weights}: an integer weight k gives the {summary} of the {unit} {times}, "
        f"0 leaves the {unit} out.\n"
        f"ci\n    Confidence level in (0, 1) of a percentile bootstrap interval {interval}, "
        "e.g. 0.95. None: no interval.\n"
        "n_boot\n    Number of bootstrap replicates (at least 2).\n"
        f"seed\n    Seed of the replicates' Poisson(1) {unit} counts, in [0, 2^31 − 2]: the same "
        "seed gives the same interval on every engine and in any row order."
    )


def _indented(fragment: str, indent: str) -> str:
    """``fragment``'s lines under ``indent``; its indented lines (descriptions) wrapped."""
    lines = []
    for line in fragment.splitlines():
        if line.startswith(" "):
            prefix = indent + line[: len(line) - len(line.lstrip())]
            lines.append(
                textwrap.fill(
                    line.strip(),
                    width=_WIDTH,
                    initial_indent=prefix,
                    subsequent_indent=prefix,
                    break_long_words=False,
                    break_on_hyphens=False,
                )
            )
        else:
            lines.append(indent + line if line else line)
    return "\n".join(lines)


def fill(doc: str, **fragments: str) -> str:
    """``doc`` with each ``<<name>>`` marker replaced by ``fragments[name]``.

    A marker with no fragment, or a names line before it that is not the fragment's entries,
    raises ``KeyError``; a fragment may go unused (a docstring that says "Parameters as for
    ...").
    """

    def replace(marker: re.Match[str]) -> str:
        name, names = marker.group("name"), marker.group("names")
        if name not in fragments:
            msg = f"docstring marker <<{name}>> has no fragment; given: {sorted(fragments)}"
            raise KeyError(msg)
        fragment = fragments[name]
        if names is None:
            return _indented(fragment, marker.group("marker_indent"))
        entries = ", ".join(line for line in fragment.splitlines() if line[:1].isalpha())
        if names != entries:
            msg = f"docstring marker <<{name}>> stands for {entries}, not {names}"
            raise KeyError(msg)
        return _indented(fragment, marker.group("indent"))

    return _MARKER.sub(replace, doc)


def shared_docs(**fragments: str) -> Callable[[F], F]:
    """Decorator: fill the function's docstring markers; each fragment must have its marker."""

    def decorate(function: F) -> F:
        doc = function.__doc__ or ""
        found = {marker.group("name") for marker in _MARKER.finditer(doc)}
        if missing := sorted(set(fragments) - found):
            msg = f"{function.__name__}'s docstring has no marker <<{missing[0]}>>"
            raise KeyError(msg)
        function.__doc__ = fill(doc, **fragments)
        return function

    return decorate
