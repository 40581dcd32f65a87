"""The namespaces are one-line forwarders that carry their functions' signatures."""

from __future__ import annotations

import inspect
from typing import Any

import polars as pl
import pytest

import frameaudit as fa
from frameaudit import _accessors

FRAMES: dict[str, Any] = {
    "polars": pl.DataFrame({"x": [1]}),
    "lazy": pl.LazyFrame({"x": [1]}),
    "pandas": pl.DataFrame({"x": [1]}).to_pandas(),
}
MODULES = {"fair": fa.fair, "repro": fa.repro, "xai": fa.explain, "explain": fa.explain}
CASES = [
    (namespace, target, method)
    for namespace, cls, targets in _accessors.NAMESPACES
    for target in targets
    for method in vars(cls)
    if not method.startswith("_")
]


def test_every_public_function_has_its_method() -> None:
    for namespace, cls, _ in _accessors.NAMESPACES:
        module = MODULES[namespace]
        public = {n for n in module.__all__ if inspect.isfunction(getattr(module, n))}
        forwarded = {n for n in vars(cls) if not n.startswith("_")}
        # combine works on per-group results, euclidean_distance is an expression: no frame
        assert forwarded == public - {"combine", "euclidean_distance"}, namespace


@pytest.mark.parametrize(("namespace", "target", "method"), CASES)
def test_method_signature_is_the_functions_without_the_frame(
    namespace: str, target: str, method: str
) -> None:
    function = getattr(MODULES[namespace], method)
    expected = inspect.signature(function)
    _, *rest = expected.parameters.values()
    bound = getattr(getattr(FRAMES[target], namespace), method)
    assert inspect.signature(bound) == expected.replace(parameters=rest)
    assert bound.__doc__ == function.__doc__


@pytest.mark.parametrize(("namespace", "target", "method"), CASES)
def test_a_call_the_method_does_not_take_is_refused_in_its_own_terms(
    namespace: str, target: str, method: str
) -> None:
    """The namespace supplies the frame: the error lists the method's parameters only, and
    counts the positional arguments the caller gave."""
    bound = getattr(getattr(FRAMES[target], namespace), method)
    parameters = inspect.signature(bound).parameters.values()
    named = [p.name for p in parameters]
    positional = [p.name for p in parameters if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    with pytest.raises(fa.InvalidCallError) as raised:
        bound(zzz=1)
    assert str(raised.value) == (
        f"zzz=: {method}() has no parameter 'zzz'; expected one of: {', '.join(named)}"
    )
    takes = (
        f"takes {len(positional)} positional argument(s) ({', '.join(positional)})"
        if positional
        else "takes no positional argument"
    )
    with pytest.raises(fa.InvalidCallError) as raised:
        bound(*[object()] * (len(positional) + 1))
    assert str(raised.value).startswith(f"{method}() {takes}, found {len(positional) + 1}")
