"""Docstring fragments written once (frameaudit._docs) and the functions made by factories."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import frameaudit as fa
from frameaudit import explain, fair, repro
from frameaudit._docs import fill, shared_docs, uncertainty_parameters

FRAGMENT = uncertainty_parameters("unit", weights="Column of unit weights", interval="over units")


def _public_functions() -> list[Any]:
    return [
        getattr(module, name)
        for module in (fair, repro, explain)
        for name in module.__all__
        if inspect.isfunction(getattr(module, name))
    ]


@pytest.mark.parametrize("function", _public_functions(), ids=lambda f: f.__name__)
def test_no_marker_is_left(function: Any) -> None:
    assert "<<" not in (function.__doc__ or "")


@pytest.mark.parametrize(
    "function",
    [fair.cluster_balance, fair.cluster_distribution_kl, repro.ec_global, repro.cramers_v],
    ids=lambda f: f.__name__,
)
def test_factory_functions_look_written_by_hand(function: Any) -> None:
    """Name, qualified name, module, signature and constraints as a ``def`` would have them."""
    name = function.__name__
    assert function.__qualname__ == name
    assert function.__module__ in {"frameaudit.fair.clustering", "frameaudit.repro.pairwise"}
    assert getattr(fa.fair if "fair" in function.__module__ else fa.repro, name) is function
    parameters = inspect.signature(function).parameters
    assert next(iter(parameters)) == "frame"
    assert {"weight", "ci", "n_boot", "seed"} <= set(parameters)
    assert "ci" in function.__parameter_constraints__
    assert f"fa.{function.__module__.split('.')[1]}.{name}(" in (function.__doc__ or "")


def test_fill_indents_and_wraps_entries_like_the_docstrings() -> None:
    doc = "Title.\n\n    Parameters\n    ----------\n    weight, ci, n_boot, seed\n        <<u>>\n"
    filled = fill(doc, u=FRAGMENT)
    assert "    weight\n        Column of unit weights: an integer weight k" in filled
    assert "    n_boot\n        Number of bootstrap replicates (at least 2).\n" in filled
    assert max(len(line) for line in filled.splitlines()) <= 93


def test_a_marker_without_its_fragment_fails() -> None:
    with pytest.raises(KeyError, match="<<other>> has no fragment"):
        fill("Title.\n\n    <<other>>\n", u=FRAGMENT)


def test_a_names_line_that_is_not_the_fragments_entries_fails() -> None:
    with pytest.raises(KeyError, match="stands for weight, ci, n_boot, seed, not weight, ci"):
        fill("Title.\n\n    weight, ci\n        <<u>>\n", u=FRAGMENT)


def test_a_fragment_without_its_marker_fails_on_a_decorated_function() -> None:
    with pytest.raises(KeyError, match="has no marker <<u>>"):

        @shared_docs(u=FRAGMENT)
        def function() -> None:
            """No marker here."""
