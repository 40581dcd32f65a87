"""A griffe extension that turns the reST markup of numpydoc docstrings into Markdown.

frameaudit's docstrings are numpydoc, written in reStructuredText for Sphinx; mkdocstrings
renders docstrings as Markdown, where that markup shows raw. Before a docstring is parsed,
this rewrites it:

* Sphinx roles (``:func:``, ``:class:``, ``:meth:``, ``:mod:``, ``:data:``, ``:attr:``,
  ``:exc:``, ``:obj:``, with or without the ``py:`` domain) become links when the site
  documents the target and code otherwise. The target is looked up as Sphinx does: in the
  docstring's scope, then as a full path; ``~`` shows its last part, ``title <target>`` the
  title. A target inside the loaded packages that does not exist is a warning in a public
  object's docstring, so ``mkdocs build --strict`` fails on it (private docstrings are not
  on the site); names from elsewhere (builtins, numpy) become code.
* ``:math:`...``` becomes inline math and ``.. math::`` display math (pymdownx.arithmatex).
* Inline literals (````x````) become code spans; simple tables become Markdown tables;
  ``::`` literal blocks and ``.. code-block::`` become fenced code.
* A Returns (Yields, Receives) section written as prose becomes the description of a value
  without name or type: numpydoc would read each of its lines as a type.

Doctest examples (``>>>`` to the next blank line) and fenced code are left as they are.
Enable it in ``mkdocs.yml`` under the python handler's ``extensions``.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import griffe

__all__ = ["RestMarkup", "to_markdown"]

_logger = griffe.get_logger("griffe_rst")

_XREF_ROLES = frozenset({"func", "class", "meth", "mod", "data", "attr", "exc", "obj", "const"})
# a role, or an inline literal; literals first, so a role written inside one stays literal
_INLINE = re.compile(r"``(?P<literal>.+?)``|:(?:py:)?(?P<role>[a-z]+):`(?P<target>[^`]+)`", re.S)
_EXPLICIT_TITLE = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^<>]+)>$", re.S)
_BORDER = re.compile(r"^(?P<indent> *)=+(?: +=+)+ *$")
_DIRECTIVE = re.compile(r"^(?P<indent> *)\.\. (?P<name>[\w:-]+)::(?: +(?P<argument>.*))?$")
_DOCTEST = re.compile(r"^ *>>>")
_FENCE = re.compile(r"^ *(```|~~~)")


@dataclass(frozen=True)
class _Scope:
    """Where a docstring's names are looked up: its object, in its loader's modules."""

    owner: griffe.Object
    modules: griffe.ModulesCollection


def to_markdown(docstring: str, scope: _Scope) -> str:
    """The docstring with its reST markup rewritten as Markdown."""
    lines = _prose_returns(docstring.splitlines())
    out: list[str] = []
    text: list[str] = []  # prose waiting for its inline markup

    def flush() -> None:
        if text:
            out.extend(_inline("\n".join(text), scope).split("\n"))
            text.clear()

    for kind, block in _blocks(lines):
        if kind == "text":
            text.extend(block)
            continue
        flush()
        if kind == "verbatim":
            out.extend(block)
        elif kind == "table":
            out.extend(_table(block, scope))
        else:
            out.extend(_directive(kind, block))
    flush()
    return "\n".join(out)


# --- sections -----------------------------------------------------------------------------------

_VALUE_SECTIONS = frozenset({"Returns", "Yields", "Receives"})


def _is_underline(line: str) -> bool:
    return len(line.strip()) >= 3 and set(line.strip()) == {"-"}


def _prose_returns(lines: list[str]) -> list[str]:
    """A Returns section written as prose, as the description of an untyped value.

    numpydoc reads each unindented line of a Returns section as a type, so prose there shows
    as a column of types; griffe reads a lone ``:`` as "no name, no type" (the signature's
    annotation is shown), with the indented prose as its description.
    """
    out: list[str] = []
    i = 0
    while i < len(lines):
        out.append(lines[i])
        if (
            lines[i].strip() in _VALUE_SECTIONS
            and i + 1 < len(lines)
            and _is_underline(lines[i + 1])
        ):
            out.append(lines[i + 1])
            start = i + 2
            end = next(
                (j for j in range(start, len(lines) - 1) if _is_underline(lines[j + 1])),
                len(lines),
            )
            body = [line for line in lines[start:end] if line.strip()]
            prose = len(body) > 1 or any(x.rstrip().endswith(".") or "``" in x for x in body)
            if body and prose and all(_indent(line) == _indent(lines[i]) for line in body):
                while end > start and not lines[end - 1].strip():
                    end -= 1  # the blank lines before the next section stay outside
                out.append(" " * _indent(lines[i]) + ":")
                out.extend(f"    {line}" if line.strip() else "" for line in lines[start:end])
            else:
                out.extend(lines[start:end])
            i = end
        else:
            i += 1
    return out


# --- blocks -------------------------------------------------------------------------------------


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _body(lines: list[str], start: int, parent: int) -> int:
    """The end of the indented body that starts at ``start`` (blank lines inside included)."""
    end = start
    for i in range(start, len(lines)):
        if lines[i].strip():
            if _indent(lines[i]) <= parent:
                break
            end = i + 1
    return end


def _table_end(lines: list[str], start: int) -> int | None:
    """The line after a simple table whose top border is ``lines[start]``, or None if none."""
    border = lines[start].rstrip()
    borders = [i for i in range(start + 1, len(lines)) if lines[i].rstrip() == border][:2]
    if not borders:
        return None
    after = borders[0] + 1
    # two borders: a table without a header, unless a third one closes a header + body
    if len(borders) == 1 or after == len(lines) or not lines[after].strip():
        return after
    return borders[1] + 1


def _blocks(lines: list[str]) -> Iterator[tuple[str, list[str]]]:
    """Split the docstring into prose, verbatim blocks, simple tables and directives."""
    i = 0
    while i < len(lines):
        line = lines[i]
        starts_paragraph = i == 0 or not lines[i - 1].strip()
        if _DOCTEST.match(line):
            end = next((j for j in range(i, len(lines)) if not lines[j].strip()), len(lines))
            yield "verbatim", lines[i:end]
            i = end
        elif fence := _FENCE.match(line):
            marker = fence.group(1)
            end = next(
                (j + 1 for j in range(i + 1, len(lines)) if lines[j].strip().startswith(marker)),
                len(lines),
            )
            yield "verbatim", lines[i:end]
            i = end
        elif starts_paragraph and _BORDER.match(line) and (table_end := _table_end(lines, i)):
            yield "table", lines[i:table_end]
            i = table_end
        elif directive := _DIRECTIVE.match(line):
            end = _body(lines, i + 1, _indent(line))
            yield directive.group("name"), lines[i:end]
            i = end
        elif line.rstrip().endswith("::") and (i + 1 == len(lines) or not lines[i + 1].strip()):
            end = _body(lines, i + 1, _indent(line))
            if end == i + 1:  # no indented block follows: an ordinary paragraph
                yield "text", [line]
                i += 1
                continue
            prose = line.rstrip()[:-2]
            prose = prose.rstrip() if prose.endswith(" ") or not prose.strip() else prose + ":"
            if prose.strip():
                yield "text", [prose]
            yield "literal", lines[i:end]
            i = end
        else:
            yield "text", [line]
            i += 1


def _dedented(lines: list[str]) -> list[str]:
    """The lines without their common indentation, and without blank lines around them."""
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    margin = min((_indent(line) for line in lines if line.strip()), default=0)
    return [line[margin:].rstrip() for line in lines]


def _directive(name: str, block: list[str]) -> list[str]:
    """Display math or a fenced code block, indented like the directive."""
    head = block[0]
    indent = " " * _indent(head)
    body = _dedented(block[1:])
    if name == "literal":  # the body of a ``::`` literal block
        return ["", f"{indent}```", *(indent + line for line in body), f"{indent}```", ""]
    directive = _DIRECTIVE.match(head)
    argument = ((directive and directive.group("argument")) or "").strip()
    if name == "math":
        # each paragraph of the body is one equation, as in Sphinx
        equations: list[list[str]] = [[argument]] if argument else []
        current: list[str] = []
        for line in [*body, ""]:
            if line.strip():
                current.append(line)
            elif current:
                equations.append(current)
                current = []
        out = [""]
        for equation in equations:
            out += [f"{indent}$$", *(indent + line for line in equation), f"{indent}$$", ""]
        return out
    if name in {"code-block", "code", "sourcecode"}:
        options = [line for line in body if line.startswith(":")]
        code = _dedented(body[len(options) :])
        return ["", f"{indent}```{argument}", *(indent + line for line in code), f"{indent}```", ""]
    _logger.warning("unsupported reST directive '.. %s::' left as it is", name)
    return block


# --- simple tables ------------------------------------------------------------------------------


def _rows(lines: list[str], starts: list[int]) -> list[list[str]]:
    """The rows of a simple table's lines, cut at the columns' starts."""
    rows: list[list[str]] = []
    for line in lines:
        if not line.strip():
            continue
        cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
        if rows and not cells[0]:  # a blank first column continues the row above
            rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], cells, strict=True)]
        else:
            rows.append(cells)
    return rows


def _table(block: list[str], scope: _Scope) -> list[str]:
    """A reST simple table as a Markdown table (the cells' markup rewritten too)."""
    border = block[0].rstrip()
    indent = " " * _indent(border)
    starts = [m.start() for m in re.finditer(r"=+", border)]
    inner = [i for i in range(1, len(block) - 1) if block[i].rstrip() == border]
    if inner:  # a border under the first rows: they are the header
        columns = zip(*_rows(block[1 : inner[0]], starts), strict=True)
        header = [" ".join(cells) for cells in columns] or [""] * len(starts)
        body = _rows(block[inner[0] + 1 : -1], starts)
    else:
        header, body = [""] * len(starts), _rows(block[1:-1], starts)

    def row(cells: list[str]) -> str:
        return indent + "| " + " | ".join(_inline(c, scope, in_table=True) for c in cells) + " |"

    return ["", row(header), indent + "|" + " --- |" * len(starts), *map(row, body), ""]


# --- inline markup ------------------------------------------------------------------------------


def _code(text: str) -> str:
    """A Markdown code span holding ``text``."""
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _inline(text: str, scope: _Scope, *, in_table: bool = False) -> str:
    """Roles, math and inline literals of a piece of prose, in Markdown."""
    out: list[str] = []
    position = 0
    for match in _INLINE.finditer(text):
        plain = text[position : match.start()]
        out.append(plain.replace("|", r"\|") if in_table else plain)
        position = match.end()
        if match.group("literal") is not None:
            out.append(_code(match.group("literal")))
        elif match.group("role") == "math":
            math = match.group("target")
            if in_table:  # a bare | would split the cell
                math = math.replace(r"\|", r"\Vert{}").replace("|", r"\vert{}")
            out.append(rf"\({math}\)")
        elif match.group("role") in _XREF_ROLES:
            out.append(_reference(match.group("target"), scope))
        else:
            _logger.warning(
                "%s: unknown role ':%s:' shown as code", scope.owner.path, match.group("role")
            )
            out.append(_code(match.group("target")))
    rest = text[position:]
    out.append(rest.replace("|", r"\|") if in_table else rest)
    return "".join(out)


def _reference(target: str, scope: _Scope) -> str:
    """A cross-reference role as an optional autoref: a link if the site documents it."""
    title = None
    if explicit := _EXPLICIT_TITLE.match(target):
        title, target = explicit.group("title"), explicit.group("target")
    target = " ".join(target.split())
    plain = target.startswith("!")
    target = target.lstrip("!")
    if target.startswith("~"):
        target = target[1:]
        title = title or target.rsplit(".", 1)[-1]
    target = target.lstrip(".")
    title = title or target
    path = _resolve(target, scope)
    if path is None or plain:
        return _code(title)
    return f'<autoref identifier="{path}" optional>{_code(title)}</autoref>'


def _lookup(path: str, modules: griffe.ModulesCollection) -> Any:
    """The object at ``path`` (aliases followed), or None."""
    try:
        found = modules.get_member(path)
        return found.final_target if found.is_alias else found
    except (KeyError, ValueError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None


def _resolve(target: str, scope: _Scope) -> str | None:
    """The full path of a role's target, or None for a name from outside the loaded packages."""
    head, _, rest = target.partition(".")
    candidates = []
    try:
        resolved = scope.owner.resolve(head)
        candidates.append(f"{resolved}.{rest}" if rest else resolved)
    except griffe.NameResolutionError:
        pass
    candidates.append(target)
    for candidate in candidates:
        found = _lookup(candidate, scope.modules)
        if found is not None:
            return str(found.path)
    top = candidates[0].split(".", 1)[0]
    if top in scope.modules.members or (not rest and not hasattr(builtins, head)):
        # the site documents the public API: a broken name there fails a strict build
        log = _logger.debug if _private(scope.owner.path) else _logger.warning
        log("%s: cannot resolve the cross-reference '%s'", scope.owner.path, target)
    return None


def _private(path: str) -> bool:
    """Whether ``path`` lies in a private module or object (one part starts with ``_``)."""
    return any(part.startswith("_") and not part.endswith("__") for part in path.split("."))


# --- the extension ------------------------------------------------------------------------------


def _objects(root: griffe.Object) -> Iterator[griffe.Object]:
    """``root`` and every object defined under it (aliases are documented where defined)."""
    yield root
    for member in root.members.values():
        if not isinstance(member, griffe.Alias):
            yield from _objects(member)


class RestMarkup(griffe.Extension):
    """Rewrite every docstring of a loaded package from reST markup to Markdown."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        """Rewrite the docstrings once the whole package is loaded (names then resolve)."""
        del kwargs
        for obj in _objects(pkg):
            if obj.docstring is not None:
                scope = _Scope(obj, loader.modules_collection)
                obj.docstring.value = to_markdown(obj.docstring.value, scope)
