"""One generic test over every public function: declared option constraints, same wording.

Every keyword-only parameter of a public metric function is either a column role (checked by
the role binding, tests/test_roles.py) or an option with a declared constraint. Each declared
constraint is tried with values that do not fit it; the call must raise InvalidParameterError
naming the parameter before any data is read (the frame passed is not even a frame).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import pytest

import frameaudit as fa
from frameaudit import _params

# parameters that name columns, frames or mappings of the data (bound by frameaudit._roles)
ROLES = {
    *("rank", "group", "ranking", "item", "groups", "universe", "by", "relevance", "ctr"),
    *("cluster", "features", "centroids", "a", "b", "point"),
    # repro's target column; NDKL's target= distribution (a mapping, a frame or "ranking")
    *("run", "target", "prediction"),
    *("query", "distance", "label", "predicted", "class_weights", "id", "carry"),
    *("feature", "importance", "overall", "metric", "weight"),
    # the graded judgments and the soft groups' alignments: frames of the data
    *("judgments", "alignment"),
    # the multiplicity metrics' score column, and run ids of the data (the pairs of runs)
    *("score", "order", "reference"),
}


def _public() -> list[tuple[str, Callable[..., Any]]]:
    functions = []
    for module in (fa.fair, fa.repro, fa.explain):
        for name in module.__all__:
            function = getattr(module, name)
            if inspect.isfunction(function) and name != "euclidean_distance":
                functions.append((f"{module.__name__}.{name}", function))
    return functions


PUBLIC = _public()


def _options(function: Callable[..., Any]) -> set[str]:
    parameters = inspect.signature(function).parameters.values()
    return {p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY}


@pytest.mark.parametrize(("name", "function"), PUBLIC, ids=[n for n, _ in PUBLIC])
def test_every_option_is_declared(name: str, function: Callable[..., Any]) -> None:
    declared = getattr(function, "__parameter_constraints__", None)
    assert declared is not None, f"{name} declares no parameter constraints"
    undeclared = _options(function) - set(declared) - ROLES
    # repro's sample= is a column role; silhouette_difference's sample= is a declared option
    undeclared -= {"sample"} if "sample" not in declared else set()
    assert not undeclared, f"{name}: options without a declared constraint: {sorted(undeclared)}"


CASES = [
    (name, function, parameter, value)
    for name, function in PUBLIC
    for parameter, constraint in getattr(function, "__parameter_constraints__", {}).items()
    for value in constraint.invalid()
]


@pytest.mark.parametrize(
    ("name", "function", "parameter", "value"),
    CASES,
    ids=[f"{n}-{p}={v!r}" for n, _, p, v in CASES],
)
def test_invalid_option_raises_naming_the_parameter(
    name: str, function: Callable[..., Any], parameter: str, value: Any
) -> None:
    parameters = inspect.signature(function).parameters.values()
    positional = [p for p in parameters if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    not_a_frame = [object()] * len(positional)
    # the other required arguments (judgments=, metric=, ...): anything, as they are not read
    required = {
        p.name: object()
        for p in parameters
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty
    }
    with pytest.raises(fa.InvalidParameterError) as raised:
        function(*not_a_frame, **{**required, parameter: value})
    assert str(raised.value).startswith(f"{parameter}={value!r}"), name


@pytest.mark.parametrize(
    ("constraint", "value", "message"),
    [
        (_params.Real(0.0, 1.0, low_open=True), 0.0, r"p=0.0: expected a number in (0.0, 1.0]"),
        (_params.Real(0.0, 1.0), math.nan, "p=nan: expected a number in [0.0, 1.0]"),
        (_params.Real(0.0, 1.0), "1", "p='1': expected a number in [0.0, 1.0], got str"),
        (_params.Integer(1), 0, "p=0: expected a positive integer"),
        (_params.Integer(2), True, "p=True: expected an integer in [2, inf]"),
        (_params.Integer(0, 9), 10, "p=10: expected an integer in [0, 9]"),
        (_params.Choice(("x", 1)), True, "p=True is not allowed; expected one of: x, 1"),
        (_params.Choice(("topk", "alpha")), "tpk", "did you mean 'topk'?"),
        (_params.Flag(), 1, "p=1: expected True or False"),
        (_params.Optional(_params.Flag()), "yes", "p='yes': expected True, False or None"),
        (
            _params.Optional(_params.Choice(("a",))),
            "b",
            "p='b' is not allowed; expected one of: a, None",
        ),
    ],
)
def test_constraint_wording(constraint: _params.Constraint, value: Any, message: str) -> None:
    with pytest.raises(fa.InvalidParameterError) as raised:
        constraint.check("p", value)
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("constraint", "value"),
    [
        (_params.Real(0.0, 1.0, low_open=True), 1),
        (_params.Integer(0, 2**64 - 1), 2**64 - 1),
        (_params.Choice(("null", 0, 1)), 0),
        (_params.Flag(), False),
        (_params.Optional(_params.Integer(1)), None),
    ],
)
def test_constraint_accepts(constraint: _params.Constraint, value: Any) -> None:
    constraint.check("p", value)


def _every_public() -> list[tuple[str, Callable[..., Any]]]:
    import frameaudit.compare
    import frameaudit.report

    modules = (fa.fair, fa.repro, fa.explain, frameaudit.compare, frameaudit.report, fa.datasets)
    return [
        (f"{module.__name__}.{name}", getattr(module, name))
        for module in modules
        for name in module.__all__
        if inspect.isfunction(getattr(module, name))
    ]


EVERY = _every_public()


@pytest.mark.parametrize(("name", "function"), EVERY, ids=[n for n, _ in EVERY])
def test_a_call_the_signature_does_not_take_is_a_frameaudit_error(
    name: str, function: Callable[..., Any]
) -> None:
    """A misspelt option, options by position and a missing argument: a frameaudit error
    (and a TypeError, as Python's own) naming the parameter, before any data is read."""
    parameters = list(inspect.signature(function).parameters.values())
    title = f"{function.__name__}()"
    positional = [p for p in parameters if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    named = [p.name for p in parameters]
    not_a_frame = [object()] * len(positional)
    errors: list[fa.InvalidCallError] = []

    def refused(*args: Any, **kwargs: Any) -> str:
        with pytest.raises(fa.InvalidCallError) as raised:
            function(*args, **kwargs)
        errors.append(raised.value)
        return str(raised.value)

    # the longest parameter, one letter short: the message lists them all and suggests it
    if named:
        longest = max(named, key=len)
        typo = longest[:-1]
        assert refused(*not_a_frame, **{typo: 1}) == (
            f"{typo}=: {title} has no parameter {typo!r}; expected one of: "
            f"{', '.join(named)}; did you mean {longest!r}?"
        ), name
    # a name like none of them: no suggestion
    assert refused(*not_a_frame, zzz=1).endswith(f"expected one of: {', '.join(named)}"), name
    # one positional argument too many: the options are to be given by name
    message = refused(*not_a_frame, object())
    takes = (
        f"takes {len(positional)} positional argument(s) ({', '.join(p.name for p in positional)})"
        if positional
        else "takes no positional argument"
    )
    assert message.startswith(f"{title} {takes}, found {len(positional) + 1}"), name
    # a positional parameter given by name as well
    if positional:
        first = positional[0].name
        assert refused(*not_a_frame, **{first: object()}) == (
            f"{first}=: {title} was given {first} twice, by position and by name"
        ), name
    # every required parameter left out in turn (the others given)
    required = [p.name for p in parameters if p.default is inspect.Parameter.empty]
    for left_out in required:
        given = {n: object() for n in required if n != left_out}
        assert refused(**given) == f"{left_out}=: {title} needs {left_out}, found none given"
    assert all(isinstance(e, TypeError) for e in errors), name
