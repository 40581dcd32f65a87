"""One binding of column roles for every metric family.

A metric names the columns it reads through role parameters (``rank=``, ``group=``, ``by=``,
...). :func:`bind` checks them all in one place, before any data is touched:

* each role is a column name (or, where the role takes several, a non-empty list of distinct
  names), never ``None`` unless the role is optional, never another type;
* no column is named like frameaudit's internal columns (the reserved prefix ``__fa_``) or
  like a column the result adds (a ``by`` column named ``exp`` would give the result two);
* a column plays one role (roles that may share columns, such as ``by`` and ``ranking``, which
  both partition, are named as such);
* the columns exist (with a did-you-mean hint) and have the dtype the role needs.

It brings the frame into the engine (:func:`frameaudit._engine.to_engine`) with only the bound
columns; only the schema is read.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from frameaudit import _validate as validate
from frameaudit._engine import Source, to_engine
from frameaudit.exceptions import InvalidParameterError

__all__ = [
    "RESERVED_PREFIX",
    "Bound",
    "Names",
    "Role",
    "bind",
    "column_names",
    "owners",
    "refuse_outputs",
]

Names = str | Sequence[str]
"""A role parameter that takes one column name or several (``group=["gender", "age"]``)."""

RESERVED_PREFIX = "__fa_"
"""Internal columns start with this; a user column that does is refused with a clear error."""


@dataclass(frozen=True)
class Role:
    """A column-role parameter: its name, the value the caller gave and what it accepts.

    ``many``: a name or a non-empty list of names (else exactly one name). ``optional``: None
    means "not given". ``dtype``: the dtype kind the columns need: "integer", "numeric", or
    "key" (the default: values that can be grouped, joined and sorted — numbers, text,
    categories, booleans, dates and times; not lists, structs, objects or all-null columns);
    None when the family checks the dtype itself.
    """

    parameter: str
    value: Any
    many: bool = False
    optional: bool = False
    dtype: Literal["integer", "numeric", "key"] | None = "key"


@dataclass(frozen=True)
class Bound:
    """The caller's frame in the engine, and the columns bound to each role."""

    source: Source
    columns: dict[str, list[str]]


def column_names(role: Role) -> list[str]:
    """The column names a role parameter gives, after checking their form."""
    value, parameter = role.value, role.parameter
    if value is None:
        if role.optional:
            return []
        expected = "a column name (str) or a list of them" if role.many else "a column name (str)"
        msg = f"{parameter}=None: expected {expected}"
        raise InvalidParameterError(msg)
    if not role.many and not isinstance(value, str):
        msg = f"{parameter}={value!r}: expected one column name (str), got {type(value).__name__}"
        raise InvalidParameterError(msg)
    names = [value] if isinstance(value, str) else validate.as_names(value, parameter)
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        msg = f"{parameter}={value!r}: column {repeated[0]!r} is listed more than once"
        raise InvalidParameterError(msg)
    for name in names:
        if not name:
            msg = (
                f"{parameter}='': a column named with the empty string cannot play a role; "
                "rename the column"
            )
            raise InvalidParameterError(msg)
        if name.startswith(RESERVED_PREFIX):
            msg = (
                f"{parameter}={name!r}: column names starting with {RESERVED_PREFIX!r} are "
                "reserved for frameaudit's internal columns; rename the column"
            )
            raise InvalidParameterError(msg)
    return names


def refuse_outputs(
    parameter: str, names: Collection[str], outputs: Collection[str], of: str = "this metric"
) -> None:
    """Refuse a role's columns ``names`` named like a column that ``of`` adds (``outputs``)."""
    for name in names:
        if name in outputs:
            msg = (
                f"{parameter}={name!r}: {name!r} is an output column of {of}; "
                "rename the column first"
            )
            raise InvalidParameterError(msg)


def owners(
    columns: Mapping[str, Sequence[str]],
    *,
    sharing: Collection[frozenset[str]] = (),
    outputs: Collection[str] = (),
) -> dict[str, str]:
    """Each column and the first role that names it, after refusing a column in two roles.

    ``columns`` maps each role parameter to its column names (checked by
    :func:`column_names`); ``sharing`` and ``outputs`` as for :func:`bind`.
    """
    owner: dict[str, str] = {}
    for parameter, names in columns.items():
        refuse_outputs(parameter, names, outputs)
        for name in names:
            first = owner.setdefault(name, parameter)
            if first != parameter and frozenset((first, parameter)) not in sharing:
                msg = (
                    f"column {name!r} is given both as {first}= and as {parameter}=; "
                    "a column can play only one role"
                )
                raise InvalidParameterError(msg)
    return owner


def bind(
    frame: Any,
    roles: Sequence[Role],
    *,
    sharing: Collection[frozenset[str]] = (),
    outputs: Collection[str] = (),
    frame_name: str = "frame",
) -> Bound:
    """Check the role parameters, then bring ``frame`` into the engine with their columns.

    ``sharing`` lists the sets of roles that may name the same column (e.g. ``by`` and
    ``ranking``); ``outputs`` the columns the result (or a step on the way to it) adds, which
    no role's column may be named like.
    """
    columns = {role.parameter: column_names(role) for role in roles}
    owner = owners(columns, sharing=sharing, outputs=outputs)
    # each column once, named after the first role that binds it (for error messages)
    source = to_engine(frame, owner, frame_name=frame_name)
    typed = [(role, role.dtype) for role in roles if role.dtype is not None]
    if typed:
        schema = source.frame.collect_schema()
        for role, dtype in typed:
            for name in columns[role.parameter]:
                validate.require_dtype(schema, name, role.parameter, dtype)
    return Bound(source, columns)
