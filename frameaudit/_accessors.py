"""The DataFrame namespaces (``df.fair``): one-line forwarders to the functional API.

``__init__`` stores the frame and does nothing else: pandas rebuilds an accessor on every
attribute access, pandas' ``dir()`` breaks if ``__init__`` raises, and Polars swallows
``AttributeError`` messages. No metric logic lives here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import polars as pl

from frameaudit import explain, fair

__all__ = ["FairNamespace", "XaiNamespace", "register_namespaces"]


class _Namespace:
    """Holds the frame a namespace was reached from."""

    def __init__(self, frame: Any) -> None:
        self._frame = frame


class FairNamespace(_Namespace):
    """``.fair``: fairness metrics. Each method is :mod:`frameaudit.fair`'s function of that name."""

    def exp(self, **kwargs: Any) -> Any:
        """Group exposure: :func:`frameaudit.fair.exp`."""
        return fair.exp(self._frame, **kwargs)

    def expu(self, **kwargs: Any) -> Any:
        """Exposure utility: :func:`frameaudit.fair.expu`."""
        return fair.expu(self._frame, **kwargs)

    def expru(self, **kwargs: Any) -> Any:
        """Exposure realized utility: :func:`frameaudit.fair.expru`."""
        return fair.expru(self._frame, **kwargs)

    def awrf(self, **kwargs: Any) -> Any:
        """Attention-weighted rank fairness: :func:`frameaudit.fair.awrf`."""
        return fair.awrf(self._frame, **kwargs)

    def erbe(self, **kwargs: Any) -> Any:
        """RBP exposure equality: :func:`frameaudit.fair.erbe`."""
        return fair.erbe(self._frame, **kwargs)

    def erbp(self, **kwargs: Any) -> Any:
        """RBP exposure proportionality: :func:`frameaudit.fair.erbp`."""
        return fair.erbp(self._frame, **kwargs)

    def erbr(self, **kwargs: Any) -> Any:
        """RBP exposure proportional to relevance: :func:`frameaudit.fair.erbr`."""
        return fair.erbr(self._frame, **kwargs)

    def arp(self, **kwargs: Any) -> Any:
        """Attribute rank parity: :func:`frameaudit.fair.arp`."""
        return fair.arp(self._frame, **kwargs)

    def ndkl(self, **kwargs: Any) -> Any:
        """Normalized discounted KL-divergence: :func:`frameaudit.fair.ndkl`."""
        return fair.ndkl(self._frame, **kwargs)

    def iaa(self, **kwargs: Any) -> Any:
        """Inequity of amortized attention: :func:`frameaudit.fair.iaa`."""
        return fair.iaa(self._frame, **kwargs)


class XaiNamespace(_Namespace):
    """``.xai`` (all frames) and ``.explain`` (eager frames): :mod:`frameaudit.explain`.

    Polars' own ``LazyFrame.explain()`` (the query plan) keeps its name, so lazy code uses ``.xai``.
    """

    def position_parity(self, **kwargs: Any) -> Any:
        """Position parity: :func:`frameaudit.explain.position_parity`."""
        return explain.position_parity(self._frame, **kwargs)

    def rank_alignment(self, **kwargs: Any) -> Any:
        """Rank alignment: :func:`frameaudit.explain.rank_alignment`."""
        return explain.rank_alignment(self._frame, **kwargs)

    def correspondence(self, **kwargs: Any) -> Any:
        """Case-based correspondence: :func:`frameaudit.explain.correspondence`."""
        return explain.correspondence(self._frame, **kwargs)

    def nearest_cases(self, queries: Any, **kwargs: Any) -> Any:
        """Find the nearest cases of ``queries`` here: :func:`frameaudit.explain.nearest_cases`."""
        return explain.nearest_cases(self._frame, queries, **kwargs)


# (name, class, targets): "polars", "lazy" and "pandas" stand for pl.DataFrame, pl.LazyFrame
# and pd.DataFrame. Polars' own LazyFrame.explain() keeps `.explain` off lazy frames.
NAMESPACES: list[tuple[str, type[_Namespace], tuple[str, ...]]] = [
    ("fair", FairNamespace, ("polars", "lazy", "pandas")),
    ("xai", XaiNamespace, ("polars", "lazy", "pandas")),
    ("explain", XaiNamespace, ("polars", "pandas")),
]


def _registered(owner: type, name: str, cls: type[_Namespace]) -> bool:
    """Whether ``owner.name`` is already a namespace of this class (re-import, reload)."""
    existing = owner.__dict__.get(name)
    if existing is None:
        return False
    namespace = getattr(existing, "_ns", None) or getattr(existing, "_accessor", None)
    return getattr(namespace, "__qualname__", None) == cls.__qualname__


def register_namespaces() -> None:
    """Register every namespace once; safe to call again (re-import, ``importlib.reload``)."""
    registrars: dict[str, tuple[type, Callable[[str], Callable[[type], Any]]]] = {
        "polars": (pl.DataFrame, pl.api.register_dataframe_namespace),
        "lazy": (pl.LazyFrame, pl.api.register_lazyframe_namespace),
        "pandas": (pd.DataFrame, pd.api.extensions.register_dataframe_accessor),
    }
    for name, cls, targets in NAMESPACES:
        for target in targets:
            owner, register = registrars[target]
            if not _registered(owner, name, cls):
                register(name)(cls)
