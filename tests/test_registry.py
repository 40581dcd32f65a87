"""The metric registry: each entry agrees with its function, its family and the namespaces."""

from __future__ import annotations

import inspect
import math

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
    # a cluster metric names its worst cluster term; a pair metric may name its worst pair
    if metric.kind == "clusters":
        assert metric.worst is not None
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
