"""The metric registry: each entry agrees with its function, its family and the namespaces."""

from __future__ import annotations

import ast
import inspect
import math
from pathlib import Path

import pandas as pd
import polars as pl
import pytest

import frameaudit as fa
from frameaudit._registry import FAMILIES, KINDS, Metric, registered

ENTRIES = fa.metrics()
PACKAGES = {"ranking": fa.fair, "clustering": fa.fair, "repro": fa.repro, "explain": fa.explain}
# the parameters every ranking group metric shares with the report, passed to each as they are
SHARED_RANKING = {"frame", "rank", "group", "ranking", "item", "groups", "universe", "by"}
SHARED_RANKING |= {"weight", "ci", "n_boot", "seed", "combo"}


def test_every_family_has_entries_in_definition_order() -> None:
    assert {m.family for m in ENTRIES} == set(FAMILIES)
    assert len({m.name for m in ENTRIES}) == len(ENTRIES)
    # the order is the order of the definitions within a module
    for family in FAMILIES:
        by_module: dict[str, list[int]] = {}
        for m in fa.metrics(family):
            line = inspect.getsourcelines(inspect.unwrap(m.function))[1]
            by_module.setdefault(m.function.__module__, []).append(line)
        assert all(lines == sorted(lines) for lines in by_module.values())


@pytest.mark.parametrize("metric", ENTRIES, ids=lambda m: m.name)
def test_an_entry_describes_its_function(metric: Metric) -> None:
    package = PACKAGES[metric.family]
    assert getattr(package, metric.name) is metric.function
    assert metric.name in package.__all__
    assert metric.kind in KINDS
    parameters = inspect.signature(metric.function).parameters
    assert set(metric.roles) <= set(parameters)
    assert set(metric.options) <= set(parameters)
    if metric.unit is not None:
        assert "ci" in parameters
    if metric.range is not None:
        low, high, _, _ = metric.bounds
        assert low < high
    # a group metric's best value and range are its combo's; a table has none
    stated = metric.best is not None and metric.range is not None
    assert stated == (metric.kind not in ("group", "table"))
    # a cluster metric names its worst cluster term; a pair metric may name its worst pair; a
    # table with per-group values (the multiplicity metrics) its worst group's
    if metric.kind == "clusters":
        assert metric.worst is not None
    elif metric.kind == "table":
        assert metric.worst is None or "group" in parameters
    elif metric.kind != "pairs":
        assert metric.worst is None


@pytest.mark.parametrize("metric", fa.metrics("ranking", "group"), ids=lambda m: m.name)
def test_the_ranking_report_passes_each_group_metric_its_options(metric: Metric) -> None:
    """Every parameter a group metric shares with the report beyond the common roles is declared."""
    report = set(inspect.signature(fa.report.ranking).parameters)
    own = set(inspect.signature(metric.function).parameters) - SHARED_RANKING
    assert own & report <= set(metric.roles) | set(metric.options)
    assert set(metric.roles.values()) | set(metric.options) <= report


def test_the_namespaces_are_the_registry() -> None:
    frame = pl.DataFrame({"x": [1]})
    for namespace in ("fair", "repro", "xai"):
        listed = {m.name for m in ENTRIES if m.namespace == namespace}
        for owner in (frame, frame.lazy(), pd.DataFrame({"x": [1]})):
            reached = getattr(owner, namespace)
            public = {name for name in dir(reached) if not name.startswith("_")}
            assert public == listed
            for metric in ENTRIES:
                if metric.namespace == namespace:
                    assert getattr(reached, metric.name).__doc__ == metric.function.__doc__


def test_the_bounds_read_the_range() -> None:
    assert fa.fair.COMBO_BEST["MaxMinRatio"][1] == "[1, inf]"
    entry = next(m for m in ENTRIES if m.name == "ndkl")
    assert entry.bounds == (0.0, math.inf, True, False)
    assert next(m for m in ENTRIES if m.name == "expru").needs == "relevance= and ctr="
    assert next(m for m in ENTRIES if m.name == "erbr").needs == "relevant= (binary relevance)"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"family": "sorting", "kind": "single"}, "unknown family 'sorting'"),
        ({"family": "ranking", "kind": "single", "range": "0..1"}, "is not an interval"),
    ],
)
def test_a_malformed_entry_is_refused(arguments: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        registered(**arguments)  # type: ignore[arg-type]


def _peer(node: ast.expr) -> bool:
    """Whether ``node`` is a peer library's function (``hai.cluster_dist_l1``), or a tuple
    led by one: what pairs a metric with its counterpart in a comparison."""
    if isinstance(node, ast.Tuple) and node.elts:
        node = node.elts[0]
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id != "fa"


# the entries of each family's kinds (of three or more): a list that holds one of them whole
# must grow with the family, so it is the registry's to give
KIND_SETS = [
    names
    for family in FAMILIES
    for kind in KINDS
    if len(names := {m.name for m in fa.metrics(family, kind)}) >= 3  # type: ignore[arg-type]
]
_MANY = 6  # a list of more names than this is a list of the registry's too


def _literal_lists(path: Path, defined_here: set[str]) -> list[str]:
    """The literal collections in ``path`` that list metrics the registry lists, with names
    not defined in it: a whole kind of a family, or six or more. A collection is a list,
    tuple or set of names or of tuples led by one, or a dict's keys. A few chosen examples
    (``exp``, ``arp`` and ``ndkl``: a sum, pairs, prefixes) are a test's own choice. Allowed
    too: a metric paired with a peer's function (what a comparison with the peer means),
    and the ``name in (...)`` tests of an independent reference (its own definitions)."""
    names = {m.name for m in ENTRIES} - defined_here
    tree = ast.parse(path.read_text())
    allowed: set[int] = set()
    if "reference" in path.parts:
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                allowed.update(id(c) for c in node.comparators)
    found = []
    for node in ast.walk(tree):
        if id(node) in allowed:
            continue
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            elements = [e for e in node.elts if not (isinstance(e, ast.Tuple) and _paired(e))]
        elif isinstance(node, ast.Dict):
            elements = [k for k, v in zip(node.keys, node.values, strict=True) if not _peer(v)]
        else:
            continue
        spelled = {_spelled(e) for e in elements if e is not None} & names
        if any(kind <= spelled for kind in KIND_SETS) or len(spelled) >= _MANY:
            found.append(f"{path.name}:{node.lineno}: {sorted(spelled)}")
    return found


def _paired(pair: ast.Tuple) -> bool:
    return any(map(_peer, pair.elts[1:]))


def _spelled(element: ast.expr) -> str | None:
    """The name ``element`` spells: a string, an attribute, or the first of a tuple."""
    if isinstance(element, ast.Tuple | ast.List) and element.elts:
        element = element.elts[0]
    if isinstance(element, ast.Constant) and isinstance(element.value, str):
        return element.value
    return element.attr if isinstance(element, ast.Attribute) else None


def test_no_list_of_metric_names_outside_the_definitions() -> None:
    """The registry is the one list: a test or a package module that needs several metrics
    reads ``fa.metrics`` (through ``tests/calls.py``), never a list of its own."""
    root = Path(__file__).parent.parent
    defined: dict[Path, set[str]] = {}
    for m in ENTRIES:
        module = Path(inspect.getfile(inspect.unwrap(m.function))).resolve()
        defined.setdefault(module, set()).add(m.name)
    found = []
    for path in sorted(
        [*root.joinpath("frameaudit").rglob("*.py"), *root.joinpath("tests").rglob("*.py")]
    ):
        found += _literal_lists(path, defined.get(path.resolve(), set()))
    assert found == []
