"""The DataFrame namespaces (``df.fair``): one-line forwarders to the functional API.

``__init__`` stores the frame and does nothing else: pandas rebuilds an accessor on every
attribute access, pandas' ``dir()`` breaks if ``__init__`` raises, and Polars swallows
``AttributeError`` messages. No metric logic lives here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import pandas as pd
import polars as pl

from frameaudit import explain, fair, repro

__all__ = ["FairNamespace", "ReproNamespace", "XaiNamespace", "register_namespaces"]


F = TypeVar("F", bound=Callable[..., Any])


def _forwards(function: Callable[..., Any]) -> Callable[[F], F]:
    """Give a forwarding method the signature and docstring of the function it calls.

    ``help(df.fair.exp)``, Jupyter's Shift-Tab and :func:`inspect.signature` then show the
    function's parameters (without the frame, which the namespace supplies) instead of
    ``**kwargs``; the method itself stays a one-line call.
    """
    signature = inspect.signature(function)
    _, *rest = signature.parameters.values()
    own = signature.replace(
        parameters=[inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY), *rest]
    )

    def decorate(method: F) -> F:
        method.__signature__ = own  # type: ignore[attr-defined]
        method.__doc__ = function.__doc__
        return method

    return decorate


class _Namespace:
    """Holds the frame a namespace was reached from."""

    def __init__(self, frame: Any) -> None:
        self._frame = frame


class FairNamespace(_Namespace):
    """``.fair``: fairness metrics; each method is the :mod:`frameaudit.fair` function."""

    @_forwards(fair.exp)
    def exp(self, **kwargs: Any) -> Any:
        """Group exposure: :func:`frameaudit.fair.exp`."""
        return fair.exp(self._frame, **kwargs)

    @_forwards(fair.expu)
    def expu(self, **kwargs: Any) -> Any:
        """Exposure utility: :func:`frameaudit.fair.expu`."""
        return fair.expu(self._frame, **kwargs)

    @_forwards(fair.expru)
    def expru(self, **kwargs: Any) -> Any:
        """Exposure realized utility: :func:`frameaudit.fair.expru`."""
        return fair.expru(self._frame, **kwargs)

    @_forwards(fair.awrf)
    def awrf(self, **kwargs: Any) -> Any:
        """Attention-weighted rank fairness: :func:`frameaudit.fair.awrf`."""
        return fair.awrf(self._frame, **kwargs)

    @_forwards(fair.erbe)
    def erbe(self, **kwargs: Any) -> Any:
        """RBP exposure equality: :func:`frameaudit.fair.erbe`."""
        return fair.erbe(self._frame, **kwargs)

    @_forwards(fair.erbp)
    def erbp(self, **kwargs: Any) -> Any:
        """RBP exposure proportionality: :func:`frameaudit.fair.erbp`."""
        return fair.erbp(self._frame, **kwargs)

    @_forwards(fair.erbr)
    def erbr(self, **kwargs: Any) -> Any:
        """RBP exposure proportional to relevance: :func:`frameaudit.fair.erbr`."""
        return fair.erbr(self._frame, **kwargs)

    @_forwards(fair.arp)
    def arp(self, **kwargs: Any) -> Any:
        """Attribute rank parity: :func:`frameaudit.fair.arp`."""
        return fair.arp(self._frame, **kwargs)

    @_forwards(fair.ndkl)
    def ndkl(self, **kwargs: Any) -> Any:
        """Normalized discounted KL-divergence: :func:`frameaudit.fair.ndkl`."""
        return fair.ndkl(self._frame, **kwargs)

    @_forwards(fair.iaa)
    def iaa(self, **kwargs: Any) -> Any:
        """Inequity of amortized attention: :func:`frameaudit.fair.iaa`."""
        return fair.iaa(self._frame, **kwargs)

    @_forwards(fair.cluster_balance)
    def cluster_balance(self, **kwargs: Any) -> Any:
        """Cluster balance: :func:`frameaudit.fair.cluster_balance`."""
        return fair.cluster_balance(self._frame, **kwargs)

    @_forwards(fair.min_cluster_ratio)
    def min_cluster_ratio(self, **kwargs: Any) -> Any:
        """Minimum cluster ratio: :func:`frameaudit.fair.min_cluster_ratio`."""
        return fair.min_cluster_ratio(self._frame, **kwargs)

    @_forwards(fair.cluster_distribution_tv)
    def cluster_distribution_tv(self, **kwargs: Any) -> Any:
        """Cluster distribution total variation: :func:`frameaudit.fair.cluster_distribution_tv`."""
        return fair.cluster_distribution_tv(self._frame, **kwargs)

    @_forwards(fair.cluster_distribution_kl)
    def cluster_distribution_kl(self, **kwargs: Any) -> Any:
        """Cluster distribution KL divergence: :func:`frameaudit.fair.cluster_distribution_kl`."""
        return fair.cluster_distribution_kl(self._frame, **kwargs)

    @_forwards(fair.social_fairness_ratio)
    def social_fairness_ratio(self, **kwargs: Any) -> Any:
        """Social fairness ratio: :func:`frameaudit.fair.social_fairness_ratio`."""
        return fair.social_fairness_ratio(self._frame, **kwargs)

    @_forwards(fair.silhouette_difference)
    def silhouette_difference(self, **kwargs: Any) -> Any:
        """Silhouette difference: :func:`frameaudit.fair.silhouette_difference`."""
        return fair.silhouette_difference(self._frame, **kwargs)


class ReproNamespace(_Namespace):
    """``.repro``: reproducibility across runs; each method is :mod:`frameaudit.repro`'s."""

    @_forwards(repro.ec_local)
    def ec_local(self, **kwargs: Any) -> Any:
        """Local error consistency: :func:`frameaudit.repro.ec_local`."""
        return repro.ec_local(self._frame, **kwargs)

    @_forwards(repro.ec_global)
    def ec_global(self, **kwargs: Any) -> Any:
        """Global error consistency: :func:`frameaudit.repro.ec_global`."""
        return repro.ec_global(self._frame, **kwargs)

    @_forwards(repro.ea_kappa)
    def ea_kappa(self, **kwargs: Any) -> Any:
        """Kappa-based error agreement: :func:`frameaudit.repro.ea_kappa`."""
        return repro.ea_kappa(self._frame, **kwargs)

    @_forwards(repro.ec_agreement)
    def ec_agreement(self, **kwargs: Any) -> Any:
        """Error agreement: :func:`frameaudit.repro.ec_agreement`."""
        return repro.ec_agreement(self._frame, **kwargs)

    @_forwards(repro.ec_corr)
    def ec_corr(self, **kwargs: Any) -> Any:
        """Error correlation: :func:`frameaudit.repro.ec_corr`."""
        return repro.ec_corr(self._frame, **kwargs)

    @_forwards(repro.pa)
    def pa(self, **kwargs: Any) -> Any:
        """Percent agreement of predictions: :func:`frameaudit.repro.pa`."""
        return repro.pa(self._frame, **kwargs)

    @_forwards(repro.pa_kappa)
    def pa_kappa(self, **kwargs: Any) -> Any:
        """Cohen's kappa of predictions: :func:`frameaudit.repro.pa_kappa`."""
        return repro.pa_kappa(self._frame, **kwargs)

    @_forwards(repro.cramers_v)
    def cramers_v(self, **kwargs: Any) -> Any:
        """Cramér's V of predictions: :func:`frameaudit.repro.cramers_v`."""
        return repro.cramers_v(self._frame, **kwargs)

    @_forwards(repro.summary)
    def summary(self, **kwargs: Any) -> Any:
        """Every pairwise metric: :func:`frameaudit.repro.summary`."""
        return repro.summary(self._frame, **kwargs)

    @_forwards(repro.total_consistency)
    def total_consistency(self, **kwargs: Any) -> Any:
        """Total error consistency: :func:`frameaudit.repro.total_consistency`."""
        return repro.total_consistency(self._frame, **kwargs)

    @_forwards(repro.leave_one_out)
    def leave_one_out(self, **kwargs: Any) -> Any:
        """Leave-one-out error consistency: :func:`frameaudit.repro.leave_one_out`."""
        return repro.leave_one_out(self._frame, **kwargs)

    @_forwards(repro.residual_consistency)
    def residual_consistency(self, **kwargs: Any) -> Any:
        """Residual consistency (regression): :func:`frameaudit.repro.residual_consistency`."""
        return repro.residual_consistency(self._frame, **kwargs)


class XaiNamespace(_Namespace):
    """``.xai`` (all frames) and ``.explain`` (eager frames): :mod:`frameaudit.explain`.

    Polars' own ``LazyFrame.explain()`` (the query plan) keeps its name, so lazy code uses ``.xai``.
    """

    @_forwards(explain.position_parity)
    def position_parity(self, **kwargs: Any) -> Any:
        """Position parity: :func:`frameaudit.explain.position_parity`."""
        return explain.position_parity(self._frame, **kwargs)

    @_forwards(explain.rank_alignment)
    def rank_alignment(self, **kwargs: Any) -> Any:
        """Rank alignment: :func:`frameaudit.explain.rank_alignment`."""
        return explain.rank_alignment(self._frame, **kwargs)

    @_forwards(explain.correspondence)
    def correspondence(self, **kwargs: Any) -> Any:
        """Case-based correspondence: :func:`frameaudit.explain.correspondence`."""
        return explain.correspondence(self._frame, **kwargs)

    @_forwards(explain.nearest_cases)
    def nearest_cases(self, queries: Any, **kwargs: Any) -> Any:
        """Find the nearest cases of ``queries`` here: :func:`frameaudit.explain.nearest_cases`."""
        return explain.nearest_cases(self._frame, queries, **kwargs)


# (name, class, targets): "polars", "lazy" and "pandas" stand for pl.DataFrame, pl.LazyFrame
# and pd.DataFrame. Polars' own LazyFrame.explain() keeps `.explain` off lazy frames.
NAMESPACES: list[tuple[str, type[_Namespace], tuple[str, ...]]] = [
    ("fair", FairNamespace, ("polars", "lazy", "pandas")),
    ("repro", ReproNamespace, ("polars", "lazy", "pandas")),
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
