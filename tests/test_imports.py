"""The package's import rules, read from the source: what each module may import.

* The metric definitions (the families, the checks they declare, the roles and parameters)
  speak narwhals only: no polars, numpy, pyarrow or pandas import anywhere in them, not inside
  a function, not under ``TYPE_CHECKING``. Everything that knows a frame library lives in the
  engine package (``frameaudit/_engine/``) or the kernels. (Narwhals' ``no_imports_test``
  checks the same of a running process; here every import statement counts, run or not.)
* Imports go one way, down the layers below: no cycle, the engine never uses a definition,
  and no family uses another.
* No module takes another module's private (``_``-prefixed) names.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import frameaudit

PACKAGE = Path(frameaudit.__file__).parent

FRAME_LIBRARIES = ("polars", "numpy", "pyarrow", "pandas")

NARWHALS_ONLY = (
    "frameaudit.fair",
    "frameaudit.repro",
    "frameaudit.explain",
    "frameaudit._validate",
    "frameaudit._roles",
    "frameaudit._params",
    "frameaudit._registry",
    "frameaudit._expr",
    "frameaudit._combos",
    "frameaudit._docs",
)

# Lowest first. A module may import from the layers below its own, and from its own layer only
# inside the same entry (a package's modules use each other); the longest entry names a module.
LAYERS = (
    ("frameaudit.exceptions", "frameaudit._docs"),
    ("frameaudit._kernels",),
    ("frameaudit._expr", "frameaudit._combos"),
    ("frameaudit._engine.text", "frameaudit._engine.native"),
    ("frameaudit._engine.checks", "frameaudit._engine.plans"),
    ("frameaudit._engine.convert",),
    ("frameaudit._engine.resample", "frameaudit._engine.combos"),
    ("frameaudit._engine.estimate",),
    ("frameaudit._engine.kernels",),
    ("frameaudit._engine",),
    ("frameaudit._validate", "frameaudit._params"),
    ("frameaudit._roles", "frameaudit._registry"),
    ("frameaudit.fair", "frameaudit.repro", "frameaudit.explain"),
    ("frameaudit",),  # the faces: accessors, report, compat, cli, datasets, the package itself
)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _is_module(name: str) -> bool:
    return name in MODULES


def _within(name: str, entry: str) -> bool:
    return name == entry or name.startswith(f"{entry}.")


def _imports(module: str) -> Iterator[tuple[int, str, str | None]]:
    """Every import in ``module``: (line, imported module, imported name or None)."""
    tree = ast.parse(MODULES[module].read_text(), filename=str(MODULES[module]))
    package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, None
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                yield node.lineno, base, alias.name


def _imported_modules(module: str) -> Iterator[tuple[int, str]]:
    """The frameaudit modules ``module`` imports (a submodule named in ``from ... import``)."""
    for line, base, name in _imports(module):
        if not _within(base, "frameaudit"):
            continue
        submodule = f"{base}.{name}"
        yield line, submodule if name is not None and _is_module(submodule) else base


def _layer(module: str) -> tuple[int, str]:
    """The layer of ``module`` and the entry that places it there."""
    entries = [
        (len(e), i, e) for i, layer in enumerate(LAYERS) for e in layer if _within(module, e)
    ]
    _, index, entry = max(entries)
    return index, entry


@pytest.mark.parametrize(
    "module", [m for m in MODULES if any(_within(m, e) for e in NARWHALS_ONLY)]
)
def test_definitions_speak_narwhals_only(module: str) -> None:
    found = [
        f"line {line}: {base}{'' if name is None else f' ({name})'}"
        for line, base, name in _imports(module)
        if base.split(".")[0] in FRAME_LIBRARIES
    ]
    assert not found, f"{module} imports a frame library: {found}; the engine package owns them"


def test_the_narwhals_only_modules_exist() -> None:
    for entry in NARWHALS_ONLY:
        assert _is_module(entry), entry


@pytest.mark.parametrize("module", list(MODULES))
def test_imports_go_down_the_layers(module: str) -> None:
    layer, entry = _layer(module)
    wrong = []
    for line, imported in _imported_modules(module):
        other_layer, other_entry = _layer(imported)
        if other_layer > layer or (other_layer == layer and other_entry != entry):
            wrong.append(f"line {line}: {imported}")
    assert not wrong, f"{module} (layer {layer}, {entry}) imports from above or beside: {wrong}"


@pytest.mark.parametrize("module", list(MODULES))
def test_no_private_names_of_other_modules(module: str) -> None:
    modules: dict[str, str] = {}  # the local name of each imported frameaudit module
    taken = []
    for line, base, name in _imports(module):
        if not _within(base, "frameaudit") or name is None:
            continue
        if _is_module(f"{base}.{name}"):
            modules[name] = f"{base}.{name}"
        elif name.startswith("_"):
            taken.append(f"line {line}: {base}.{name}")
    tree = ast.parse(MODULES[module].read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            modules.update(
                {a.asname: modules[a.name] for a in node.names if a.asname and a.name in modules}
            )
    taken += [
        f"line {node.lineno}: {modules[node.value.id]}.{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in modules
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
    ]
    assert not taken, f"{module} uses private names of other modules: {taken}"


def test_no_import_cycle() -> None:
    """No module imports, through any chain, one that imports it: every import statement
    counts, including those inside functions and under ``TYPE_CHECKING``."""
    graph = {m: {i for _, i in _imported_modules(m) if i != m and i in MODULES} for m in MODULES}
    state: dict[str, str] = {}  # "open" while its imports are followed, then "done"
    cycles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                cycles.append([*path[path.index(imported) :], imported])
            elif imported not in state:
                visit(imported, [*path, imported])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


FAMILIES = ("frameaudit.fair", "frameaudit.repro", "frameaudit.explain")
ENGINE_NAMES = 8
"""The most names a family module takes from the engine package: the boundary (the
estimation, the finish) and the plan steps; the proofs and fast paths stay below it."""


@pytest.mark.parametrize("module", [m for m in MODULES if any(_within(m, f) for f in FAMILIES)])
def test_a_family_takes_few_names_from_the_engine(module: str) -> None:
    names = sorted(
        {name or base for _, base, name in _imports(module) if _within(base, "frameaudit._engine")}
    )
    assert len(names) <= ENGINE_NAMES, f"{module} imports {len(names)} engine names: {names}"
    # an error's text is written through the check layer (validate.message), the same on
    # every engine, never assembled from the engine's text pieces in a family
    assert "text" not in names, f"{module} writes text with the engine's text module"
