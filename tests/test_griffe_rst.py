"""tools/griffe_rst.py: the docstrings' reST markup as Markdown, before griffe parses it."""

from __future__ import annotations

import importlib.util
import logging
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import griffe
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _extension() -> ModuleType:
    spec = importlib.util.spec_from_file_location("griffe_rst", ROOT / "tools" / "griffe_rst.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["griffe_rst"] = module
    spec.loader.exec_module(module)
    return module


griffe_rst = _extension()

_MODULE = '''
r"""Tools.

See :func:`helper`, :func:`~pkg.mod.helper`, :class:`Thing <pkg.mod.Thing>`, :mod:`pkg.mod`,
:func:`numpy.argsort`, :class:`ValueError` and :func:`!helper`.
"""


def helper(x):
    r"""Help with :math:`\\frac{a}{b} = |x|` and ``code``.

    Weights :math:`w_i =
    \\mathrm{cw}(y_i)` span lines.

    .. math::
        \\sum_i w_i

    A table:

    =====  ==========================
    name   formula
    =====  ==========================
    one    :math:`|V_g - \\bar V|` and ``a|b``
    two    Σ |x|, wrapped onto
           a second line
    =====  ==========================

    Code follows::

        print(1)

    Parameters
    ----------
    x
        The input, see :meth:`Thing.run`.

    Returns
    -------
    A frame of the input's kind: the ``by`` columns,
    one row per partition.

    Examples
    --------
    >>> helper(":func:`kept`")
    1
    """


class Thing:
    """A thing."""

    def run(self):
        """Run, as :func:`helper` does."""
'''


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> griffe.Module:
    root = tmp_path_factory.mktemp("pkg")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text('"""The package."""\n')
    (root / "pkg" / "mod.py").write_text(_MODULE)
    loaded = griffe.load(
        "pkg",
        search_paths=[root],
        extensions=griffe.load_extensions(griffe_rst.RestMarkup),
        docstring_parser="numpy",
        allow_inspection=False,
    )
    assert isinstance(loaded, griffe.Module)
    return loaded


def _doc(package: griffe.Module, path: str) -> str:
    docstring = package.get_member(path).docstring
    assert docstring is not None
    return str(docstring.value)


def test_roles_become_optional_autorefs_resolved_in_scope(package: griffe.Module) -> None:
    doc = _doc(package, "mod")
    assert '<autoref identifier="pkg.mod.helper" optional>`helper`</autoref>' in doc
    assert '<autoref identifier="pkg.mod.helper" optional>`helper`</autoref>,' in doc  # ~
    assert '<autoref identifier="pkg.mod.Thing" optional>`Thing`</autoref>' in doc
    assert '<autoref identifier="pkg.mod" optional>`pkg.mod`</autoref>' in doc
    # names from outside the loaded packages, and "!", are code only
    assert "`numpy.argsort`, `ValueError` and `helper`." in doc
    assert ":func:" not in doc
    assert ":class:" not in doc
    method = _doc(package, "mod.Thing.run")
    assert '<autoref identifier="pkg.mod.helper" optional>' in method


def test_math_literals_tables_and_literal_blocks(package: griffe.Module) -> None:
    doc = _doc(package, "mod.helper")
    assert r"Help with \(\frac{a}{b} = |x|\) and `code`." in doc
    assert "\\(w_i =\n\\mathrm{cw}(y_i)\\)" in doc  # inline math over two lines
    assert "$$\n\\sum_i w_i\n$$" in doc
    # the table: pipes in math are \vert, in text escaped, in code kept; continuation joined
    assert "| name | formula |\n| --- | --- |" in doc
    assert r"| one | \(\vert{}V_g - \bar V\vert{}\) and `a|b` |" in doc
    assert r"| two | Σ \|x\|, wrapped onto a second line |" in doc
    assert "Code follows:\n\n```\nprint(1)\n```" in doc
    assert '<autoref identifier="pkg.mod.Thing.run" optional>`Thing.run`</autoref>' in doc
    # doctests are left alone
    assert '>>> helper(":func:`kept`")' in doc


def test_prose_returns_become_a_description(package: griffe.Module) -> None:
    docstring = package.get_member("mod.helper").docstring
    assert docstring is not None
    returns = [s for s in docstring.parsed if s.kind is griffe.DocstringSectionKind.returns]
    assert len(returns) == 1
    (value,) = returns[0].value
    description = "A frame of the input's kind: the `by` columns,\none row per partition."
    assert value.description.strip() == description


@pytest.mark.parametrize(
    ("docstring", "message"),
    [
        ("See :func:`missing`.", "cannot resolve the cross-reference 'missing'"),
        ("See :func:`pkg.mod.missing`.", "cannot resolve the cross-reference 'pkg.mod.missing'"),
        ("See :foo:`x`.", "unknown role ':foo:'"),
        (".. note:: careful", "unsupported reST directive '.. note::'"),
    ],
)
def test_broken_markup_in_public_docstrings_warns(
    package: griffe.Module, caplog: pytest.LogCaptureFixture, docstring: str, message: str
) -> None:
    scope: Any = griffe_rst._Scope(package.get_member("mod"), package.modules_collection)
    with caplog.at_level(logging.WARNING):
        griffe_rst.to_markdown(docstring, scope)
    assert message in caplog.text


def test_broken_names_in_private_docstrings_are_code(
    package: griffe.Module, caplog: pytest.LogCaptureFixture
) -> None:
    private = griffe.Function("_private", parent=package.get_member("mod"))
    scope: Any = griffe_rst._Scope(private, package.modules_collection)
    with caplog.at_level(logging.WARNING):
        assert griffe_rst.to_markdown("See :func:`missing`.", scope) == "See `missing`."
    assert not caplog.text


def test_code_block_directive_and_header_less_table() -> None:
    scope: Any = None  # no role to resolve
    doc = textwrap.dedent(
        """\
        .. code-block:: python
            :linenos:

            x = 1

        ==  ==
        a   b
        ==  ==
        """
    )
    out = griffe_rst.to_markdown(doc, scope)
    assert "```python\nx = 1\n```" in out
    assert "|  |  |\n| --- | --- |\n| a | b |" in out
