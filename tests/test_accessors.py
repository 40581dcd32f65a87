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
