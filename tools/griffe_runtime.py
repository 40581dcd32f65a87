"""A griffe extension: the few API objects that exist only at run time, from the imported module.

mkdocstrings reads frameaudit's source without importing it, which keeps attribute docstrings
and tells a module's own objects from its imports. Two kinds of objects are then invisible:

* public functions made by a factory (``cluster_balance = _label_metric_function(...)``), which
  static analysis sees as attributes;
* docstrings whose shared parts are filled in at import (``frameaudit._docs``), which static
  analysis sees with the marker.

For those objects alone this takes the imported one: an attribute whose value is a function
becomes that function as griffe inspects it, and a function's docstring becomes its
``__doc__``. Everything else stays as read from the source. List it before
``griffe_rst.py:RestMarkup`` in ``mkdocs.yml``, which then converts those docstrings too.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import griffe

__all__ = ["RuntimeObjects"]


def _modules(root: griffe.Module) -> Iterator[griffe.Module]:
    """``root`` and its submodules."""
    yield root
    for module in root.modules.values():
        if not module.is_alias:
            yield from _modules(module)


def _take_runtime(module: griffe.Module, loader: griffe.GriffeLoader) -> None:
    """Replace ``module``'s factory-made functions and filled docstrings by the runtime ones."""
    runtime = importlib.import_module(module.path)
    inspected: griffe.Module | None = None
    for name, member in list(module.members.items()):
        value = getattr(runtime, name, None)
        if member.is_alias or not inspect.isfunction(value):
            continue
        if member.is_attribute:
            if inspected is None:
                inspected = griffe.inspect(
                    module.path,
                    filepath=module.filepath if isinstance(module.filepath, Path) else None,
                    docstring_parser=loader.docstring_parser,
                    docstring_options=loader.docstring_options,
                )
            function = inspected.members[name]
            function.lineno, function.endlineno = member.lineno, member.endlineno
            module.set_member(name, function)
        elif member.is_function and value.__doc__ is not None and member.docstring is not None:
            member.docstring.value = inspect.cleandoc(value.__doc__)


class RuntimeObjects(griffe.Extension):
    """Take the factory-made functions and the filled-in docstrings from the imported modules."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        """Once the whole package is loaded, before its docstrings are converted."""
        del kwargs
        for module in _modules(pkg):
            _take_runtime(module, loader)
