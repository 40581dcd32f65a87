"""frameaudit: responsible-AI metrics inside the DataFrame engines you already use.

Importing frameaudit registers its namespaces: ``.fair`` (fair ranking and clustering
fairness), ``.repro`` (reproducibility across runs) and ``.xai`` (explanations) on Polars
DataFrame, Polars LazyFrame and pandas DataFrame, and ``.explain`` (the same as ``.xai``) on
Polars DataFrame and pandas DataFrame — Polars' own ``LazyFrame.explain()`` keeps its name. The
functional API (``frameaudit.fair.exp(frame, ...)``, :mod:`frameaudit.repro`,
:mod:`frameaudit.explain`) is the real entry point and accepts every supported frame kind.
:func:`metrics` lists every function of the families with what the reports need to know of it
(its kind, resampling unit, best value and range).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from frameaudit import datasets, explain, fair, repro
from frameaudit._accessors import register_namespaces
from frameaudit._registry import Metric, metrics
from frameaudit.exceptions import (
    ColumnNotFoundError,
    FrameAuditError,
    InvalidCallError,
    InvalidDtypeError,
    InvalidParameterError,
    InvalidValueError,
    UnsupportedBackendError,
)

if TYPE_CHECKING:
    from frameaudit import compare, report

__all__ = [
    "ColumnNotFoundError",
    "FrameAuditError",
    "InvalidCallError",
    "InvalidDtypeError",
    "InvalidParameterError",
    "InvalidValueError",
    "Metric",
    "UnsupportedBackendError",
    "compare",
    "datasets",
    "explain",
    "fair",
    "metrics",
    "report",
    "repro",
]

__version__ = "0.1.0"

register_namespaces()


def __getattr__(name: str) -> Any:
    # the reports and comparisons are imported on first use: ``import frameaudit`` stays light
    if name in ("report", "compare"):
        return importlib.import_module(f"frameaudit.{name}")
    msg = f"module 'frameaudit' has no attribute {name!r}"
    raise AttributeError(msg)
