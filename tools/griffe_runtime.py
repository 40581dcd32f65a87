"""A griffe extension: the docstrings whose shared parts are filled in at import.

mkdocstrings reads frameaudit's source without importing it, which keeps attribute docstrings
and tells a module's own objects from its imports. A docstring whose shared parts
(``frameaudit._docs``: the ``weight``/``ci``/``n_boot``/``seed`` entries, an example's frame)
are filled in at import is then seen with its markers. For functions alone this takes the
docstring of the imported function (its ``__doc__``); everything else stays as read from the
source. List it before ``griffe_rst.py:RestMarkup`` in ``mkdocs.yml``, which then converts
those docstrings too.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterator
from typing import Any

import griffe

__all__ = ["RuntimeObjects"]


def _modules(root: griffe.Module) -> Iterator[griffe.Module]:
    """``root`` and its submodules."""
    yield root
    for module in root.modules.values():
        if not module.is_alias:
            yield from _modules(module)


def _take_runtime(module: griffe.Module) -> None:
    """Replace ``module``'s functions' docstrings by the imported functions' (markers filled)."""
    runtime = importlib.import_module(module.path)
    for name, member in list(module.members.items()):
        value = getattr(runtime, name, None)
        if member.is_alias or not member.is_function or not inspect.isfunction(value):
            continue
        if value.__doc__ is not None and member.docstring is not None:
            member.docstring.value = inspect.cleandoc(value.__doc__)


class RuntimeObjects(griffe.Extension):
    """Take the filled-in docstrings of functions from the imported modules."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Once the whole package is loaded, before its docstrings are converted."""
        del kwargs
        for module in _modules(pkg):
            _take_runtime(module)
