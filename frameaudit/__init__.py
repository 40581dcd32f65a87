"""frameaudit: responsible-AI metrics inside the DataFrame engines you already use.

Importing frameaudit registers the ``.fair`` namespace on Polars DataFrame, Polars LazyFrame and
pandas DataFrame. The functional API (``frameaudit.fair.exp(frame, ...)``) is the real entry
point and accepts every supported frame kind.
"""

from __future__ import annotations

from frameaudit import datasets, explain, fair, repro
from frameaudit._accessors import register_namespaces
from frameaudit.exceptions import (
    ColumnNotFoundError,
    FrameAuditError,
    InvalidDtypeError,
    InvalidParameterError,
    InvalidValueError,
    UnsupportedBackendError,
)

__all__ = [
    "ColumnNotFoundError",
    "FrameAuditError",
    "InvalidDtypeError",
    "InvalidParameterError",
    "InvalidValueError",
    "UnsupportedBackendError",
    "datasets",
    "explain",
    "fair",
    "repro",
]

__version__ = "0.1.0"

register_namespaces()
