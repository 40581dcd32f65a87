"""The DataFrame namespaces (``df.fair``): a forwarder to each function of the metric registry.

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

from frameaudit import explain, fair, repro  # noqa: F401 - their definitions fill the registry
from frameaudit._params import strict
from frameaudit._registry import Metric, metrics

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


def _method(metric: Metric) -> Callable[..., Any]:
    """The namespace method of a registered function: the function called on the frame."""
    function = metric.function

    @_forwards(function)
    def method(self: _Namespace, *args: Any, **kwargs: Any) -> Any:
        return function(self._frame, *args, **kwargs)

    method.__name__ = method.__qualname__ = metric.name
    # a call the method does not take is refused in its own terms (no frame to give)
    return strict(method)


def _namespace(name: str, namespace: str, doc: str) -> type[_Namespace]:
    """The class ``name`` with a method per function of the registry reached by ``namespace``."""
    methods = {m.name: _method(m) for m in metrics() if m.namespace == namespace}
    return type(name, (_Namespace,), {"__doc__": doc, "__module__": __name__, **methods})


FairNamespace = _namespace(
    "FairNamespace",
    "fair",
    "``.fair``: fairness metrics; each method is the :mod:`frameaudit.fair` function.",
)
ReproNamespace = _namespace(
    "ReproNamespace",
    "repro",
    "``.repro``: reproducibility metrics; each method is the :mod:`frameaudit.repro` function.",
)
XaiNamespace = _namespace(
    "XaiNamespace",
    "xai",
    """``.xai`` (all frames) and ``.explain`` (eager frames): :mod:`frameaudit.explain`.

    Polars' own ``LazyFrame.explain()`` (the query plan) keeps its name, so lazy code uses
    ``.xai``.
    """,
)


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
