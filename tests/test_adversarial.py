"""Adversarial input to every public function, on every frame kind.

The rule (the issue behind this module): bad or unusual input gets either a frameaudit error
(:class:`frameaudit.FrameAuditError`) whose message names the culprit — the parameter
(``rank=``) and/or the column (``'rank'``) — or a value equal to an independent computation.
Never anything else: no foreign exception (a Polars ``DuplicateError`` or ``PanicException``, a
``KeyError``, a DuckDB or Arrow error, ...), no silently wrong number.

The module is a registry (:data:`SPECS`: per public function a small valid Polars frame, the
valid keyword arguments, which of them are column roles and which are group values) and
mutations generated from it, each applied to every function where it applies, on each frame
kind of ``conftest.CONSTRUCTORS`` (PySpark is left to the backend tests: it is slow):

1. a role parameter of the wrong type (``None``, a list for one name, an int, a dict, ...);
2. one column given to two roles (or twice to one role);
3. role columns renamed to names frameaudit uses inside (``mn``, ``n``, ``__fa_all``, ...),
   to engine defaults (``literal``, ``index``, ``len``) and to the result's own column names;
4. group values (``a=``, ``b=``, ``overall=``) of the wrong type for their column;
5. pandas specifics (duplicated labels, mixed object columns, MultiIndex, int labels);
6. Polars dtypes (Object, Null, List, Categorical, Enum, Decimal, small unsigned integers);
7. errors that must not blame the wrong parameter;
8. DuckDB relations on the caller's own connection, combined with a second frame;
9. ``nearest_cases`` on huge feature values and on id columns of different dtypes;

and a hypothesis part drawing random combinations of them.

The independent computation is, for a renamed or retyped column, the same call on the
original frame (the columns renamed back), for the huge feature values a plain numpy search,
and for DuckDB the Polars result. Every failure message starts with its class — ``FOREIGN``,
``UNNAMED`` (a frameaudit error that does not name the culprit), ``NO ERROR``, ``WRONG VALUE``,
``SPURIOUS`` (an error where only the value is right), ``MISLEADING`` — and the first line of
what was raised. A call that hangs ends its worker with every thread's traceback
(:func:`_no_hang`), which pytest-xdist reports as a crash of that test.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import faulthandler
import functools
import inspect
import itertools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import narwhals.stable.v2 as nw
import numpy as np
import pandas as pd
import polars as pl
import pytest
from conftest import CONSTRUCTORS, to_polars
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import frameaudit as fa
from tests.calls import entries, names

Outcome = pl.DataFrame | BaseException

HANG_SECONDS = 120  # the slowest case takes a few seconds on a loaded machine


@pytest.fixture(autouse=True)
def _no_hang() -> Iterator[None]:
    """No hang: a test still running after HANG_SECONDS dumps the tracebacks and exits."""
    faulthandler.dump_traceback_later(HANG_SECONDS, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


KINDS = tuple(CONSTRUCTORS)  # polars[eager], polars[lazy], pandas, pandas[pyarrow], pyarrow, duckdb
IN_MEMORY = tuple(k for k in KINDS if k != "duckdb")

# --- the registry -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Role:
    """A column-role parameter: ``many`` takes a list of names, ``optional`` takes None.

    ``in_frame=False``: the name is not a column of the input (``group=`` with ``groups=``
    names the mapping's column and the output's).
    """

    many: bool = False
    optional: bool = False
    in_frame: bool = True


@dataclass(frozen=True)
class Spec:
    """One public function and a valid call of it."""

    id: str
    function: Callable[..., Any]
    frames: tuple[pl.DataFrame, ...]  # the positional frames
    kwargs: Mapping[str, Any]
    roles: Mapping[str, Role]
    values: Mapping[str, str] = field(default_factory=dict)  # group value → its role
    sharing: frozenset[frozenset[str]] = frozenset()  # roles that may name one column
    options: tuple[tuple[str, Any], ...] = ()  # (option, a value of the wrong type)
    in_memory_only: bool = False  # the function refuses DuckDB (documented)
    column_checks: bool = True  # the function reads the frame (not an expression builder)
    pairs: bool = True  # one column in two roles is an error (or a declared sharing)

    @property
    def kinds(self) -> tuple[str, ...]:
        return IN_MEMORY if self.in_memory_only else KINDS

    @property
    def frame_roles(self) -> list[str]:
        return [p for p, role in self.roles.items() if role.in_frame and p in self.kwargs]


def _grid(values: np.ndarray, step: float = 1 / 64) -> np.ndarray:
    """Round to multiples of ``step``: exact in float32, Decimal and every engine's parser."""
    return np.round(values / step) * step


def _ranking_frame() -> pl.DataFrame:
    rows = []
    for part, query in itertools.product((0, 1), (0, 1)):
        order = np.random.default_rng(10 * part + query).permutation(6) + 1
        rows += [
            {
                "part": part,
                "query": 2 * part + query,  # ranking ids unique across partitions
                "rank": position,
                "item": int(item),
                "group": "abc"[(item - 1) % 3],
                "relevance": ((3 * item + query) % 9) / 8,
                "ctr": ((item + part) % 5) / 8,
                "binary": int((item + query) % 2),
            }
            for position, item in enumerate(order, start=1)
        ]
    return pl.DataFrame(rows)


def _clustering_frame() -> pl.DataFrame:
    rng = np.random.default_rng(5)
    n = 40
    label = np.arange(n) % 3
    centres = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
    x = _grid(centres[label] + rng.normal(scale=0.8, size=(n, 2)))
    return pl.DataFrame(
        {
            "part": np.arange(n) // 20,
            "cluster": [f"c{c}" for c in label],
            "group": ["abc"[(i + i // 3) % 3] for i in range(n)],
            "x0": x[:, 0],
            "x1": x[:, 1],
        }
    )


def _repro_frame() -> pl.DataFrame:
    rng = np.random.default_rng(3)
    rows = [
        {"part": part, "run": run, "sample": sample, "target": sample % 3}
        for part, run, sample in itertools.product((0, 1), (1, 2, 3), range(6))
    ]
    frame = pl.DataFrame(rows)
    n = frame.height
    prediction = np.where(rng.random(n) < 0.5, frame["target"].to_numpy(), rng.integers(0, 3, n))
    return frame.with_columns(
        pl.Series("prediction", prediction),
        (pl.col("sample") / 8 + 0.5).alias("value"),
        pl.Series("guess", _grid(rng.normal(0.6, 0.4, n), 1 / 8)),
        (pl.col("sample") % 2).alias("grp"),  # a group: the same in every run of a sample
    )


def _cohesion_frame() -> pl.DataFrame:
    rng = np.random.default_rng(11)
    rows = []
    for part, group in itertools.product((0, 1), ("all", "g1", "g2")):
        magnitudes = rng.permutation(np.arange(1, 6)) / 8
        signs = rng.choice([-1.0, 1.0], size=5)
        rows += [
            {"part": part, "group": group, "feature": f"f{j}", "importance": float(s * m)}
            for j, (s, m) in enumerate(zip(signs, magnitudes, strict=True))
        ]
    return pl.DataFrame(rows)


def _correspondence_frame() -> pl.DataFrame:
    rng = np.random.default_rng(2)
    rows = [
        {
            "query": q,
            "distance": int(rng.integers(1, 17)) / 8,
            "label": int(rng.integers(0, 3)),
            "predicted": q % 3,
            "fold": q % 2,
        }
        for q in range(8)
        for _ in range(3)
    ]
    return pl.DataFrame(rows)


def _nearest_frames(scale: float = 1.0) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(4)
    train_x, query_x = _grid(rng.normal(size=(12, 3))), _grid(rng.normal(size=(4, 3)))
    names = ["x0", "x1", "x2"]
    train = pl.DataFrame(train_x * scale, schema=names).with_columns(
        pl.Series("label", np.arange(12) % 3), pl.Series("id", np.arange(12) + 1000)
    )
    queries = pl.DataFrame(query_x * scale, schema=names).with_columns(
        pl.Series("id", np.arange(4) + 5000), pl.Series("predicted", np.arange(4) % 3)
    )
    return train, queries


def _euclidean(frame: Any, *, x: Any, y: Any) -> Any:
    """euclidean_distance builds an expression; the caller applies it to a frame."""
    return nw.from_native(frame).select(fa.explain.euclidean_distance(x, y)).to_native()


def _expected_exposure(run: Any, judgments: Any, **kwargs: Any) -> Any:
    """expected_exposure takes its judgments by keyword; here both frames are positional."""
    return fa.fair.expected_exposure(run, judgments=judgments, **kwargs)


def _ndcg_judged(run: Any, judgments: Any, **kwargs: Any) -> Any:
    """nDCG with the ideal from judgments (by keyword there; positional here)."""
    return fa.fair.ndcg(run, judgments=judgments, **kwargs)


RANKING = _ranking_frame()
RUN = RANKING.select("part", "query", "rank", "item", sample=pl.col("rank") % 2)
JUDGMENTS = RANKING.select("query", "item", "group", grade=(pl.col("relevance") * 4).round())
CLUSTERING = _clustering_frame()
REPRO = _repro_frame()
COHESION = _cohesion_frame()
CORRESPONDENCE = _correspondence_frame()
TRAIN, QUERIES = _nearest_frames()
MAPPING = {item: "abc"[(item - 1) % 3] for item in range(1, 7)}  # item → group
EUCLID = pl.DataFrame(
    {"a1": [0.0, 1.5, -2.0, 3.25], "a2": [1.0, 2.0, 0.5, -1.0], "b1": [1.0, 0.0, 0.5, 3.0]}
).with_columns((pl.col("a1") - 0.75).alias("b2"))

PER_GROUP = pl.DataFrame(  # what exp(..., combo=None, by="part") returns
    {
        "part": [0, 0, 0, 1, 1, 1],
        "group": ["a", "b", "c"] * 2,
        "exp": [0.5, 0.25, 0.75, 1.0, 0.125, 0.375],
    }
)
RANK_ROLES = {
    "rank": Role(),
    "group": Role(many=True),
    "ranking": Role(many=True, optional=True),
    "item": Role(optional=True),
    "by": Role(many=True, optional=True),
}
RANK_KWARGS = {"rank": "rank", "group": "group", "ranking": "query", "item": "item", "by": "part"}
PARTITIONS = frozenset({frozenset({"by", "ranking"})})  # SPEC: by and ranking may share
# a list of combos is valid (one row per combo); an empty one, a repeat or a non-combo is not
COMBO_OPTIONS = (
    ("combo", 1),
    ("combo", []),
    ("combo", ["MinMaxRatio", "MinMaxRatio"]),
    ("combo", ["MinMaxRatio", 1]),
)
EE_ROLES = {
    "rank": Role(),
    "item": Role(),
    "ranking": Role(many=True),
    "sample": Role(optional=True),
    "relevance": Role(),
    "by": Role(many=True, optional=True),
}
EE_KWARGS = {
    "rank": "rank",
    "item": "item",
    "ranking": "query",
    "sample": "sample",
    "relevance": "grade",
    "by": "part",
}
EE_OPTIONS = (
    ("model", 1),
    ("patience", "0.5"),
    ("utility", None),
    ("complete", "yes"),
    ("normalize", 1),
    ("unaligned", "none"),
    ("alignment", [1]),
)
CLUSTER_ROLES = {"cluster": Role(), "group": Role(), "by": Role(many=True, optional=True)}
CLUSTER_KWARGS = {"cluster": "cluster", "group": "group", "a": "a", "b": "b", "by": "part"}
AB = {"a": "group", "b": "group"}
REPRO_ROLES = {
    "run": Role(),
    "sample": Role(),
    "target": Role(),
    "prediction": Role(),
    "by": Role(many=True, optional=True),
}
REPRO_KWARGS = {
    "run": "run",
    "sample": "sample",
    "target": "target",
    "prediction": "prediction",
    "by": "part",
}
COHESION_ROLES = {
    "group": Role(),
    "feature": Role(),
    "importance": Role(),
    "by": Role(many=True, optional=True),
}
COHESION_KWARGS = {
    "group": "group",
    "feature": "feature",
    "importance": "importance",
    "overall": "all",
    "by": "part",
}
COHESION_OPTIONS = (("k", "3"), ("per_group", "no"))
CORRESPONDENCE_ROLES = {
    "query": Role(many=True),
    "distance": Role(),
    "label": Role(),
    "predicted": Role(),
    "by": Role(many=True, optional=True),
}
CORRESPONDENCE_KWARGS = {
    "query": "query",
    "distance": "distance",
    "label": "label",
    "predicted": "predicted",
    "class_weights": {0: 2.0, 1: 0.5},
}
CORRESPONDENCE_OPTIONS = (
    ("class_weights", [2.0, 0.5]),
    ("class_weights", 2.0),
    ("weighted", "no"),
)


def _ranking_specs() -> list[Spec]:
    def spec(name: str, *, extra: Mapping[str, str] | None = None, **more: Any) -> Spec:
        extra = extra or {}
        roles = dict(RANK_ROLES) | {p: Role() for p in extra}
        return Spec(
            name,
            getattr(fa.fair, name.split("[", maxsplit=1)[0]),
            (RANKING,),
            {**RANK_KWARGS, **extra, **more.pop("kwargs", {})},
            roles,
            sharing=PARTITIONS,
            options=more.pop("options", COMBO_OPTIONS),
        )

    plain = [spec(m.name) for m in entries("ranking", "group", relevance=False)]
    iaa_roles = {p: r for p, r in RANK_ROLES.items() if p != "group"} | {"relevance": Role()}
    return [
        *plain,
        spec("expu", extra={"relevance": "relevance"}),
        spec("expru", extra={"relevance": "relevance", "ctr": "ctr"}),
        spec("erbr", extra={"relevance": "binary"}),
        spec("ndkl", options=()),
        spec(
            "awrf_js",
            kwargs={"target": {"a": 0.25, "b": 0.25, "c": 0.5}},
            options=(("discount", "trec"), ("patience", 1.0), ("target", [0.5])),
        ),
        Spec(
            "iaa",
            fa.fair.iaa,
            (RANKING,),
            {p: c for p, c in RANK_KWARGS.items() if p != "group"} | {"relevance": "relevance"},
            iaa_roles,
            sharing=PARTITIONS,
        ),
        Spec(
            "ndcg",
            fa.fair.ndcg,
            (RANKING,),
            {p: c for p, c in RANK_KWARGS.items() if p != "group"} | {"relevance": "relevance"},
            iaa_roles,
            sharing=PARTITIONS,
            options=(("k", 0), ("k", 2.5), ("gain", "log"), ("discount", "rbp")),
        ),
        Spec(
            "ndcg[judgments]",
            _ndcg_judged,
            (RANKING, JUDGMENTS),
            {p: c for p, c in RANK_KWARGS.items() if p != "group"} | {"relevance": "grade"},
            iaa_roles,
            sharing=PARTITIONS,
        ),
        spec("exp[per_group]", kwargs={"combo": None}),
        Spec(
            "combine",
            fa.fair.combine,
            (PER_GROUP,),
            {"metric": "exp", "by": "part"},
            {"metric": Role(), "by": Role(many=True, optional=True)},
            options=(("combo", 1), ("combo", None)),
        ),
        Spec(
            "expected_exposure",
            _expected_exposure,
            (RUN, JUDGMENTS),
            EE_KWARGS,
            EE_ROLES,
            sharing=PARTITIONS,
            options=EE_OPTIONS,
        ),
        Spec(
            "expected_exposure[group]",
            _expected_exposure,
            (RUN, JUDGMENTS),
            {**EE_KWARGS, "group": "group", "model": "gerr", "normalize": True},
            {**EE_ROLES, "group": Role(many=True, optional=True)},
            sharing=PARTITIONS,
            options=EE_OPTIONS,
        ),
        Spec(
            "exp[groups]",
            fa.fair.exp,
            (RANKING.drop("group"),),
            {**RANK_KWARGS, "group": "grp", "groups": MAPPING},
            {**RANK_ROLES, "group": Role(in_frame=False), "item": Role()},
            sharing=PARTITIONS,
            options=(("groups", [1, 2]),),
        ),
    ]


def _clustering_specs() -> list[Spec]:
    label = [
        Spec(
            name,
            getattr(fa.fair, name),
            (CLUSTERING,),
            CLUSTER_KWARGS,
            CLUSTER_ROLES,
            AB,
            options=(("per_cluster", "no"),),
        )
        for name in names("clustering", "clusters")
    ]
    distance_roles = {**CLUSTER_ROLES, "features": Role(many=True)}
    distance_kwargs = {**CLUSTER_KWARGS, "features": ["x0", "x1"]}
    return [
        *label,
        dataclasses.replace(
            label[0],
            id="cluster_balance[per_cluster]",
            kwargs={**CLUSTER_KWARGS, "per_cluster": True},
        ),
        Spec(
            "social_fairness_ratio",
            fa.fair.social_fairness_ratio,
            (CLUSTERING,),
            distance_kwargs,
            distance_roles,
            AB,
            options=(("centroids", [[0.0, 0.0]]),),
        ),
        Spec(
            "silhouette_difference",
            fa.fair.silhouette_difference,
            (CLUSTERING,),
            distance_kwargs,
            distance_roles,
            AB,
            options=(("sample", "10"), ("progress", "no")),
            in_memory_only=True,
        ),
    ]


def _repro_specs() -> list[Spec]:
    empty_union = (("empty_union", None), ("empty_union", "0"))
    pairwise = [
        Spec(
            name,
            getattr(fa.repro, name),
            (REPRO,),
            REPRO_KWARGS,
            REPRO_ROLES,
            options=(("pairwise", "no"), *(empty_union if name == "ec_local" else ())),
        )
        for name in fa.repro.METRICS
    ]
    return [
        *pairwise,
        dataclasses.replace(
            pairwise[0], id="ec_local[pairwise]", kwargs={**REPRO_KWARGS, "pairwise": True}
        ),
        *(
            Spec(name, getattr(fa.repro, name), (REPRO,), REPRO_KWARGS, REPRO_ROLES, options=opts)
            for name, opts in (
                ("summary", (("pairwise", "no"), *empty_union)),
                ("total_consistency", empty_union),
                ("leave_one_out", empty_union),
            )
        ),
        Spec(
            "residual_consistency",
            fa.repro.residual_consistency,
            (REPRO,),
            {**REPRO_KWARGS, "target": "value", "prediction": "guess"},
            REPRO_ROLES,
            options=(("pairwise", "no"), ("method", None)),
        ),
        *_multiplicity_specs(),
    ]


def _multiplicity_specs() -> list[Spec]:
    """The multiplicity metrics, from the registry: the label roles each takes, a score (with
    no declared range: the frame's values reach 1.125), per group."""
    specs = []
    for m in fa.metrics("repro", "table"):
        if not m.function.__module__.endswith(".multiplicity"):
            continue
        parameters = inspect.signature(m.function).parameters
        roles = {
            "run": Role(),
            "sample": Role(),
            "group": Role(many=True, optional=True),
            "by": Role(many=True, optional=True),
        }
        kwargs: dict[str, Any] = {"run": "run", "sample": "sample", "group": "grp", "by": "part"}
        for label in ("target", "prediction"):
            if label in parameters:
                roles[label] = Role(optional=parameters[label].default is None)
                kwargs[label] = label
        if "score" in parameters:
            roles["score"] = Role()
            kwargs |= {"score": "value", "bounds": None}
        options = (("combo", 3), *((("threshold", "0.5"),) if "threshold" in parameters else ()))
        specs.append(
            Spec(
                m.name,
                m.function,
                (REPRO,),
                kwargs,
                roles,
                sharing=frozenset({frozenset({"sample", "group"})}),
                options=options,
            )
        )
    return specs


def _explain_specs() -> list[Spec]:
    cohesion = [
        Spec(
            name,
            getattr(fa.explain, name),
            (COHESION,),
            COHESION_KWARGS,
            COHESION_ROLES,
            {"overall": "group"},
            options=COHESION_OPTIONS,
        )
        for name in ("position_parity", "rank_alignment")
    ]
    correspondence = Spec(
        "correspondence",
        fa.explain.correspondence,
        (CORRESPONDENCE,),
        CORRESPONDENCE_KWARGS,
        CORRESPONDENCE_ROLES,
        sharing=frozenset({frozenset({"by", "query"}), frozenset({"by", "predicted"})}),
        options=CORRESPONDENCE_OPTIONS,
    )
    return [
        *cohesion,
        dataclasses.replace(
            cohesion[0],
            id="position_parity[per_group]",
            kwargs={**COHESION_KWARGS, "per_group": True},
        ),
        correspondence,
        dataclasses.replace(
            correspondence, id="correspondence[by]", kwargs={**CORRESPONDENCE_KWARGS, "by": "fold"}
        ),
        Spec(
            "nearest_cases",
            fa.explain.nearest_cases,
            (TRAIN, QUERIES),
            {
                "features": ["x0", "x1", "x2"],
                "label": "label",
                "k": 3,
                "id": "id",
                "carry": "predicted",
            },
            {
                "features": Role(many=True),
                "label": Role(),
                "id": Role(optional=True),
                "carry": Role(many=True, optional=True),
            },
            options=(("k", "3"), ("k", 2.0), ("standardize", "no"), ("exclude_self", "no")),
            in_memory_only=True,
            # carry= copies a column of the queries onto their neighbour rows: a feature or
            # the id may be copied too
            sharing=frozenset({frozenset({"carry", "features"}), frozenset({"carry", "id"})}),
        ),
        Spec(
            "euclidean_distance",
            _euclidean,
            (EUCLID,),
            {"x": ["a1", "a2"], "y": ["b1", "b2"]},
            {"x": Role(many=True), "y": Role(many=True)},
            column_checks=False,
            pairs=False,
        ),
    ]


SPECS: dict[str, Spec] = {
    s.id: s for s in (*_ranking_specs(), *_clustering_specs(), *_repro_specs(), *_explain_specs())
}


def test_registry_covers_every_public_function() -> None:
    public = {
        name
        for module in (fa.fair, fa.repro, fa.explain)
        for name in module.__all__
        if inspect.isfunction(getattr(module, name))
    }
    covered = {s.id.split("[")[0] for s in SPECS.values()}
    assert public - covered == set()


# --- calling and judging ----------------------------------------------------------------------

REASONS = ("reserved", "output", "result", "internal", "clash", "conflict")


def _attempt(thunk: Callable[[], Any]) -> Outcome:
    """The result as an eager Polars frame, or whatever was raised (Polars panics included)."""
    try:
        return to_polars(thunk())
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # a Rust panic is a BaseException
        return error


def _call(spec: Spec, kind: str, kwargs: Mapping[str, Any], frames: Sequence[Any] = ()) -> Outcome:
    natives = [CONSTRUCTORS[kind](f) for f in (frames or spec.frames)]
    return _attempt(lambda: spec.function(*natives, **kwargs))


def _call_native(spec: Spec, natives: Sequence[Any], kwargs: Mapping[str, Any]) -> Outcome:
    return _attempt(lambda: spec.function(*natives, **kwargs))


@functools.cache
def _baseline(spec_id: str) -> pl.DataFrame:
    """The valid call on Polars: the independent computation the mutations are held to."""
    spec = SPECS[spec_id]
    return to_polars(spec.function(*spec.frames, **spec.kwargs))


def _expected(
    spec: Spec, kwargs: Mapping[str, Any], frames: Sequence[pl.DataFrame] = ()
) -> pl.DataFrame:
    return to_polars(spec.function(*(frames or spec.frames), **kwargs))


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0][:300] if lines else ""


def _describe(error: BaseException) -> str:
    return f"{type(error).__module__}.{type(error).__qualname__}: {_first_line(error)}"


def _names_parameter(message: str, parameter: str) -> bool:
    """``rank=...`` (the house style), or ``groups: ...`` for a parameter that is a frame."""
    return re.search(rf"(?<![\w.]){re.escape(parameter)}[=:]", message) is not None


def _names_column(message: str, column: object) -> bool:
    return f"'{column}'" in message or f'"{column}"' in message


def _error_problem(
    outcome: Outcome,
    *,
    parameters: Sequence[str] = (),
    columns: Sequence[object] = (),
    every: bool = False,
    reason: bool = False,
    forbidden: Sequence[str] = (),
) -> str | None:
    """None when ``outcome`` is a FrameAuditError naming a culprit, else what is wrong."""
    culprits = [f"{p}=" for p in parameters] + [repr(str(c)) for c in columns]
    wanted = f"{'all' if every else 'one'} of {', '.join(culprits)}"
    if isinstance(outcome, pl.DataFrame):
        return f"NO ERROR: a value where a FrameAuditError naming {wanted} was expected\n{outcome}"
    if not isinstance(outcome, fa.FrameAuditError):
        return f"FOREIGN {_describe(outcome)}"
    message = str(outcome)
    hits = [_names_parameter(message, p) for p in parameters]
    hits += [_names_column(message, c) for c in columns]
    named = all(hits) if every else any(hits)
    if not named or (reason and not any(r in message.lower() for r in REASONS)):
        why = " and saying why (reserved / output column)" if reason else ""
        return f"UNNAMED {_describe(outcome)}\n  (expected to name {wanted}{why})"
    for pattern in forbidden:
        if re.search(pattern, message):
            return f"MISLEADING {_describe(outcome)}\n  (must not match {pattern!r})"
    return None


def _normal(frame: pl.DataFrame) -> pl.DataFrame:
    casts = {
        c: pl.String if isinstance(d, (pl.Categorical, pl.Enum)) else pl.Float64
        for c, d in frame.schema.items()
        if isinstance(d, (pl.Categorical, pl.Enum, pl.Decimal))
    }
    frame = frame.with_columns(pl.col(c).cast(d) for c, d in casts.items())
    return frame.sort(frame.columns, nulls_last=True) if frame.width else frame


def _value_problem(
    outcome: Outcome, expected: pl.DataFrame, back: Mapping[str, str] | None = None
) -> str | None:
    """None when ``outcome`` equals ``expected`` (after renaming columns ``back``)."""
    if isinstance(outcome, BaseException):
        spurious = isinstance(outcome, fa.FrameAuditError)
        return f"{'SPURIOUS' if spurious else 'FOREIGN'} {_describe(outcome)}"
    rename = {
        new: old
        for old, new in (back or {}).items()
        if new in outcome.columns and old in expected.columns and old not in outcome.columns
    }
    actual = outcome.rename(rename)
    if actual.columns != expected.columns:
        return f"WRONG VALUE: columns {actual.columns}, expected {expected.columns}"
    try:
        assert_frame_equal(
            _normal(actual),
            _normal(expected),
            check_dtypes=False,
            check_exact=False,
            rel_tol=1e-9,
            abs_tol=1e-12,
        )
    except AssertionError as difference:
        return f"WRONG VALUE: {_first_line(difference)}\n{actual}\nexpected\n{expected}"
    return None


def _value_or_error(
    outcome: Outcome,
    expected: pl.DataFrame,
    *,
    back: Mapping[str, str] | None = None,
    parameters: Sequence[str] = (),
    columns: Sequence[object] = (),
    reason: bool = False,
) -> str | None:
    """The rule itself: the independent value, or a frameaudit error naming a culprit."""
    if isinstance(outcome, fa.FrameAuditError):
        return _error_problem(outcome, parameters=parameters, columns=columns, reason=reason)
    return _value_problem(outcome, expected, back)


def _check(problem: str | None) -> None:
    if problem is not None:
        pytest.fail(problem, pytrace=False)


def _names(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _first_column(spec: Spec, parameter: str) -> str:
    return _names(spec.kwargs[parameter])[0]


def _frames_with(
    spec: Spec, column: str, change: Callable[[pl.DataFrame], pl.DataFrame]
) -> list[pl.DataFrame]:
    """The positional frames, ``change`` applied to those holding ``column``."""
    return [change(f) if column in f.columns else f for f in spec.frames]


def _with_column(spec: Spec, parameter: str, value: Any) -> dict[str, Any]:
    """The valid kwargs with the first column of ``parameter`` replaced by ``value``."""
    names = spec.kwargs[parameter]
    if isinstance(names, str):
        return {**spec.kwargs, parameter: value}
    return {**spec.kwargs, parameter: [value, *list(names)[1:]]}


def _frame_columns(spec: Spec) -> set[str]:
    return {c for f in spec.frames for c in f.columns}


def _params(spec_ids: Sequence[str], make: Callable[[Spec], Any]) -> list[Any]:
    return [p for sid in spec_ids for p in make(SPECS[sid])]


ALL_SPECS = list(SPECS)
READERS = [s for s in SPECS if SPECS[s].column_checks]  # functions that read the frame

# --- 1. role parameters of the wrong type -----------------------------------------------------


def _wrong_types(spec: Spec) -> list[Any]:
    cases = []
    for parameter, role in spec.roles.items():
        column = _first_column(spec, parameter) if parameter in spec.kwargs else "group"
        bad: list[tuple[str, Any]] = [("int", 1), ("dict", {column: 1})]
        if not role.optional:
            bad.append(("None", None))
        if role.many:
            bad += [("empty-list", []), ("list-with-int", [column, 1]), ("nested", [[column]])]
        else:
            bad += [("list", [column]), ("tuple", (column,))]
        cases += [(parameter, label, value) for label, value in bad]
    cases += [(option, f"option-{type(value).__name__}", value) for option, value in spec.options]
    return [
        pytest.param(spec.id, parameter, value, kind, id=f"{spec.id}-{parameter}={label}-{kind}")
        for i, (parameter, label, value) in enumerate(cases)
        for kind in _rotating_kinds(spec, i)
    ]


def _rotating_kinds(spec: Spec, i: int) -> list[str]:
    """Polars and, in turn, one other kind: every role meets every kind over its bad values.

    (A parameter's type is checked before the frame is read; all kinds for every value would
    multiply the run time by three for no new path.)
    """
    return [spec.kinds[0], spec.kinds[1 + i % (len(spec.kinds) - 1)]]


@pytest.mark.parametrize(
    ("spec_id", "parameter", "value", "kind"), _params(ALL_SPECS, _wrong_types)
)
def test_parameter_of_the_wrong_type(spec_id: str, parameter: str, value: Any, kind: str) -> None:
    spec = SPECS[spec_id]
    outcome = _call(spec, kind, {**spec.kwargs, parameter: value})
    _check(_error_problem(outcome, parameters=[parameter]))


def _tuples(spec: Spec) -> list[Any]:
    many = [p for p, role in spec.roles.items() if role.many and p in spec.kwargs]
    return [
        pytest.param(spec.id, p, kind, id=f"{spec.id}-{p}-{kind}")
        for i, p in enumerate(many)
        for kind in _rotating_kinds(spec, i + len(spec.id))
    ]


@pytest.mark.parametrize(("spec_id", "parameter", "kind"), _params(ALL_SPECS, _tuples))
def test_role_names_as_a_tuple(spec_id: str, parameter: str, kind: str) -> None:
    """A tuple of names is a sequence of names: the same value as the list (or a named error)."""
    spec = SPECS[spec_id]
    outcome = _call(spec, kind, {**spec.kwargs, parameter: tuple(_names(spec.kwargs[parameter]))})
    _check(_value_or_error(outcome, _baseline(spec_id), parameters=[parameter]))


# --- 2. one column, two roles -----------------------------------------------------------------


def _role_pairs(spec: Spec) -> list[Any]:
    if not spec.pairs:
        return []
    roles = list(spec.roles)

    def kinds(i: int, first: str, second: str) -> list[str]:
        """Every kind where the call computes a value (a declared sharing) or meets a second
        frame (a role of the mapping); else Polars and one other kind in turn: two roles of
        the frame naming one column are refused by ``bind`` before the frame is converted."""
        computed = frozenset({first, second}) in spec.sharing
        if computed or not spec.roles[second].in_frame:
            return list(spec.kinds)
        return _rotating_kinds(spec, i)

    pairs = [
        (first, second)
        for i, first in enumerate(roles)
        for second in roles[i + 1 :]
        if first in spec.frame_roles
    ]
    cases = [
        pytest.param(spec.id, first, second, kind, id=f"{spec.id}-{second}={first}-{kind}")
        for i, (first, second) in enumerate(pairs)
        for kind in kinds(i, first, second)
    ]
    cases += [
        pytest.param(spec.id, p, p, kind, id=f"{spec.id}-{p}-twice-{kind}")
        for i, (p, role) in enumerate(spec.roles.items())
        if role.many and p in spec.frame_roles
        for kind in _rotating_kinds(spec, i)
    ]
    return cases


@pytest.mark.parametrize(("spec_id", "first", "second", "kind"), _params(ALL_SPECS, _role_pairs))
def test_one_column_two_roles(spec_id: str, first: str, second: str, kind: str) -> None:
    spec = SPECS[spec_id]
    column = _first_column(spec, first)
    if first == second:  # the same column listed twice in one role
        outcome = _call(spec, kind, {**spec.kwargs, first: [column, *_names(spec.kwargs[first])]})
        _check(_error_problem(outcome, parameters=[first]))
        return
    kwargs = {**spec.kwargs, second: column}
    outcome = _call(spec, kind, kwargs)
    if {first, second} == {"sample", "group"} and first == "group":
        # the group column as the sample: each run then predicts a "sample" several times
        _check(_error_problem(outcome, parameters=["sample"]))
        return
    if frozenset({first, second}) in spec.sharing:
        _check(_value_problem(outcome, _shared_expected(spec, kwargs, first, second)))
        return
    if not spec.roles[second].in_frame:
        # group= with groups= names the mapping's column: a clash with the frame's column
        _check(_error_problem(outcome, parameters=[second], columns=[column], every=True))
        return
    _check(_error_problem(outcome, parameters=[first, second], every=True))


def _shared_expected(
    spec: Spec, kwargs: Mapping[str, Any], first: str, second: str
) -> pl.DataFrame:
    """The value of a declared sharing, computed without it."""
    if spec.function is fa.explain.correspondence:
        return _correspondence_summary(kwargs["by"])
    if spec.function is fa.explain.nearest_cases:
        column = kwargs["carry"]
        found = _expected(spec, {k: v for k, v in kwargs.items() if k != "carry"})
        copied = QUERIES.select(pl.col(kwargs["id"]).alias("query"), pl.col(column))
        return found.join(copied, on="query", how="left", maintain_order="left")
    if {first, second} == {"sample", "group"}:
        # a group per sample: the value with the groups in a copy of the sample column
        copied = spec.frames[0].with_columns(pl.col(kwargs["sample"]).alias("__copy"))
        found = _expected(spec, {**kwargs, "group": "__copy"}, [copied])
        return found.rename({"__copy": kwargs["sample"]})
    # by and ranking: the partition kept, the ranking role left out (each partition is then
    # one ranking, as it was)
    dropped = first if second == "by" else second
    return _expected(spec, {k: v for k, v in kwargs.items() if k != dropped})


def _correspondence_summary(by: str) -> pl.DataFrame:
    """correspondence(by=...) from the per-query values: the documented summary columns."""
    per_query = _baseline("correspondence")
    keys = CORRESPONDENCE.select("query", pl.col(by).alias("__key")).unique()
    band = pl.col("band")
    return (
        per_query.join(keys, on="query")
        .group_by("__key")
        .agg(
            pl.col("correspondence").mean(),
            pl.len().cast(pl.Int64).alias("n_queries"),
            pl.col("correspondence").null_count().cast(pl.Int64).alias("n_undefined"),
            *((band == b).sum().cast(pl.Int64).alias(f"n_{b}") for b in ("high", "medium", "low")),
        )
        .rename({"__key": by})
        .sort(by)
    )


# --- 3. column names that clash with internal or output names ---------------------------------

# frameaudit's own intermediate names (grep frameaudit/ for alias/col literals), output names of
# other metrics, and the engines' defaults (Polars' `literal` and `len`, pandas' `index`)
PLAIN = (
    "mn",
    "mx",
    "g",
    "n",
    "n_a",
    "n_b",
    "n_cluster",
    "mean",
    "std",
    "metric",
    "run_a",
    "run_b",
    "band",
    "literal",
    "index",
    "len",
    "bad",
    "rows",
    "e",
    "example",
    "value",
    "sumsq",
    "changed",
    "ordered",
    "rho_a",
    "share_b",
)
# the engines' defaults first: on the other kinds these meet the conversion paths
CORE = ("index", "__index_level_0__", "literal", "len", "n", "metric", "g", "mn", "value")
RESERVED = ("__fa_all", "__fa_g", "__fa_n", "__fa_x0", "__fa_run", "__fa_num")


@functools.cache
def _result_columns(spec_id: str) -> tuple[str, ...]:
    """The valid call's result columns; none if it fails (its tests then fail, not collection)."""
    try:
        return tuple(_baseline(spec_id).columns)
    except Exception:
        return ()


def _outputs(spec: Spec) -> list[str]:
    """The result's own columns (not named after a role)."""
    used = {c for p in spec.frame_roles for c in _names(spec.kwargs[p])}
    return [c for c in _result_columns(spec.id) if c not in used]


def _shown(spec: Spec) -> list[str]:
    """Roles whose (first) column is a column of the result."""
    columns = _result_columns(spec.id)
    return [p for p in spec.frame_roles if _first_column(spec, p) in columns]


def _renamed_call(spec: Spec, kind: str, renames: Mapping[str, str]) -> tuple[Outcome, dict]:
    """Rename the first column of each role (role → new name); the outcome and column map."""
    columns = {_first_column(spec, p): new for p, new in renames.items()}
    frames = [f.rename({c: n for c, n in columns.items() if c in f.columns}) for f in spec.frames]
    kwargs = dict(spec.kwargs)
    for p, new in renames.items():
        kwargs = {**kwargs, p: _with_column(spec, p, new)[p]}
    return _call(spec, kind, kwargs, frames), columns


def _rename_problem(spec: Spec, kind: str, renames: Mapping[str, str]) -> str | None:
    outcome, columns = _renamed_call(spec, kind, renames)
    return _value_or_error(
        outcome, _baseline(spec.id), back=columns, columns=list(renames.values()), reason=True
    )


def _latin(spec: Spec) -> list[Any]:
    """Every (role, name) pair in len(names) calls: call j gives role i name (i + j) mod len.

    A role whose column is in the result does not take the result's own names here (that
    clash is legitimately an error and would hide the rest); the single renames test it.
    """
    taken = _frame_columns(spec)
    outputs = _outputs(spec)
    shown = _shown(spec)
    roles = spec.frame_roles
    # every name on Polars and DuckDB; the other in-memory kinds (Polars' plans behind another
    # door) share a core set, each call on one door in turn, so that every door meets the
    # names its conversion could add (a pandas index) on some role
    doors = [k for k in spec.kinds if k not in ("polars[eager]", "duckdb")]
    runs = [(k, [k]) for k in spec.kinds if k in ("polars[eager]", "duckdb")]
    runs += [("doors", doors)] if doors else []
    cases = []
    for pool_of, kinds in runs:
        pool = [*PLAIN, *outputs] if pool_of == "polars[eager]" else [*CORE, *outputs[:3], *PLAIN]
        names = [n for n in dict.fromkeys(pool) if n not in taken]
        if pool_of != "polars[eager]":
            names = names[: max(6, len(roles) + 1, len(kinds))]
        for j in range(len(names)):
            kind = kinds[j % len(kinds)]
            renames = {
                p: names[(i + j) % len(names)]
                for i, p in enumerate(roles)
                if not (p in shown and names[(i + j) % len(names)] in outputs)
            }
            label = ",".join(f"{p}>{n}" for p, n in renames.items())
            cases.append(pytest.param(spec.id, kind, renames, id=f"{spec.id}-{kind}-{label}"))
    return cases


@pytest.mark.parametrize(("spec_id", "kind", "renames"), _params(ALL_SPECS, _latin))
def test_clashing_column_names(spec_id: str, kind: str, renames: dict[str, str]) -> None:
    spec = SPECS[spec_id]
    problem = _rename_problem(spec, kind, renames)
    if problem is None or kind not in ("polars[eager]", "duckdb"):
        _check(problem)
        return
    # pin the failure down to the single renames that fail on their own (on Polars and DuckDB:
    # pandas and pyarrow input runs Polars' plan)
    culprits = [
        f"  {p}>{n}: {single.splitlines()[0]}"
        for p, n in renames.items()
        if (single := _rename_problem(spec, kind, {p: n})) is not None
    ]
    pytest.fail("\n".join([problem, "single renames that fail:", *culprits]), pytrace=False)


def _single_renames(spec: Spec) -> list[Any]:
    cases = []
    taken = _frame_columns(spec)
    for k, kind in enumerate(spec.kinds):
        for i, p in enumerate(spec.frame_roles):
            names = RESERVED if kind == "polars[eager]" else [RESERVED[(i + k) % len(RESERVED)]]
            if p in _shown(spec) and kind in ("polars[eager]", "polars[lazy]", "duckdb"):
                names = [*names, *(o for o in _outputs(spec) if o not in taken)]
            cases += [
                pytest.param(spec.id, kind, p, n, id=f"{spec.id}-{kind}-{p}>{n}") for n in names
            ]
    return cases


@pytest.mark.parametrize(
    ("spec_id", "kind", "parameter", "name"), _params(ALL_SPECS, _single_renames)
)
def test_reserved_and_output_names(spec_id: str, kind: str, parameter: str, name: str) -> None:
    _check(_rename_problem(SPECS[spec_id], kind, {parameter: name}))


# --- 4. group values of the wrong type --------------------------------------------------------


def _recode(spec: Spec, how: str) -> tuple[list[pl.DataFrame], dict[str, Any], dict[str, Any]]:
    """The frames with the group-value column as ints or dates; kwargs; the code of each value."""
    role = next(iter(spec.values.values()))
    column = spec.kwargs[role]
    found = sorted({v for f in spec.frames if column in f.columns for v in f[column]})
    if how == "int":
        codes: dict[str, Any] = {v: i for i, v in enumerate(found)}
    else:
        codes = {v: dt.date(2020, 1, 1) + dt.timedelta(days=i) for i, v in enumerate(found)}
    frames = _frames_with(
        spec, column, lambda f: f.with_columns(pl.col(column).replace_strict(codes))
    )
    kwargs = {**spec.kwargs, **{p: codes[spec.kwargs[p]] for p in spec.values}}
    return frames, kwargs, codes


def _bad_values(spec: Spec) -> list[Any]:
    cases = []
    for i, p in enumerate(spec.values):
        valid = spec.kwargs[p]
        bad: list[tuple[str, str, Any]] = [("str", "int", 1), ("str", "None", None)]
        if i == 0:
            bad += [("str", "bool", True), ("str", "list", [valid]), ("str", "bytes", b"a")]
            bad += [("int", "str", "0"), ("int", "bool", True), ("date", "str", "2020-01-01")]
            bad += [("int", "float", 0.5)]
        cases += [
            pytest.param(spec.id, p, how, value, kind, id=f"{spec.id}-{p}={label}-on-{how}-{kind}")
            for how, label, value in bad
            for kind in spec.kinds
        ]
    return cases


@pytest.mark.parametrize(
    ("spec_id", "parameter", "how", "value", "kind"), _params(ALL_SPECS, _bad_values)
)
def test_group_value_of_the_wrong_type(
    spec_id: str, parameter: str, how: str, value: Any, kind: str
) -> None:
    spec = SPECS[spec_id]
    frames, kwargs = list(spec.frames), dict(spec.kwargs)
    if how != "str":
        frames, kwargs, _ = _recode(spec, how)
    outcome = _call(spec, kind, {**kwargs, parameter: value}, frames)
    _check(_error_problem(outcome, parameters=[parameter]))


def _numpy_values(spec: Spec) -> list[Any]:
    return [
        pytest.param(spec.id, how, kind, id=f"{spec.id}-{how}-{kind}")
        for how in ("int", "date")
        if spec.values
        for kind in spec.kinds
    ]


@pytest.mark.parametrize(("spec_id", "how", "kind"), _params(ALL_SPECS, _numpy_values))
def test_group_values_as_numpy_scalars(spec_id: str, how: str, kind: str) -> None:
    """np.int64 / np.datetime64 group values on int / date columns: the value of the plain call."""
    spec = SPECS[spec_id]
    frames, kwargs, _ = _recode(spec, how)
    expected = _attempt(lambda: spec.function(*frames, **kwargs))
    if isinstance(expected, BaseException):  # the plain Python values already fail
        _check(_value_problem(expected, pl.DataFrame()))
    assert isinstance(expected, pl.DataFrame)
    scalars = {
        p: np.int64(kwargs[p]) if how == "int" else np.datetime64(kwargs[p], "D")
        for p in spec.values
    }
    outcome = _call(spec, kind, {**kwargs, **scalars}, frames)
    _check(_value_or_error(outcome, expected, parameters=list(spec.values)))


# --- 5. pandas specifics ----------------------------------------------------------------------


def _pandas(frame: pl.DataFrame, kind: str) -> pd.DataFrame:
    return frame.to_pandas(use_pyarrow_extension_array=kind == "pandas[pyarrow]")


def _pandas_roles(spec: Spec, kinds: Sequence[str]) -> list[Any]:
    return [
        pytest.param(spec.id, p, kind, id=f"{spec.id}-{p}-{kind}")
        for p in spec.frame_roles
        for kind in kinds
    ]


def _pandas_frames(
    spec: Spec, kind: str, column: str, change: Callable[[pd.DataFrame], pd.DataFrame]
) -> list[pd.DataFrame]:
    return [
        change(_pandas(f, kind)) if column in f.columns else _pandas(f, kind) for f in spec.frames
    ]


@pytest.mark.parametrize(
    ("spec_id", "parameter", "kind"),
    _params(READERS, lambda s: _pandas_roles(s, ("pandas", "pandas[pyarrow]"))),
)
def test_pandas_duplicated_column_label(spec_id: str, parameter: str, kind: str) -> None:
    spec = SPECS[spec_id]
    column = _first_column(spec, parameter)

    def duplicate(df: pd.DataFrame) -> pd.DataFrame:
        other = df[[column]].iloc[::-1].reset_index(drop=True)
        return pd.concat([df, other], axis=1)

    outcome = _call_native(spec, _pandas_frames(spec, kind, column, duplicate), spec.kwargs)
    _check(_error_problem(outcome, parameters=[parameter], columns=[column]))


@pytest.mark.parametrize(
    ("spec_id", "parameter", "kind"), _params(READERS, lambda s: _pandas_roles(s, ("pandas",)))
)
def test_pandas_mixed_object_column(spec_id: str, parameter: str, kind: str) -> None:
    spec = SPECS[spec_id]
    column = _first_column(spec, parameter)

    def mix(df: pd.DataFrame) -> pd.DataFrame:
        values = df[column].tolist()
        mixed = [
            (1 if isinstance(v, str) else str(v)) if i % 2 else v for i, v in enumerate(values)
        ]
        return df.assign(**{column: pd.Series(mixed, dtype=object, index=df.index)})

    outcome = _call_native(spec, _pandas_frames(spec, kind, column, mix), spec.kwargs)
    _check(_error_problem(outcome, parameters=[parameter], columns=[column]))


def _per_spec(kinds: Sequence[str]) -> Callable[[Spec], list[Any]]:
    return lambda spec: [pytest.param(spec.id, k, id=f"{spec.id}-{k}") for k in kinds]


@pytest.mark.parametrize(
    ("spec_id", "kind"), _params(READERS, _per_spec(("pandas", "pandas[pyarrow]")))
)
def test_pandas_multiindex_columns(spec_id: str, kind: str) -> None:
    spec = SPECS[spec_id]
    natives = []
    for frame in spec.frames:
        df = _pandas(frame, kind)
        df.columns = pd.MultiIndex.from_tuples([(c, "x") for c in df.columns])
        natives.append(df)
    outcome = _call_native(spec, natives, spec.kwargs)
    roles = spec.frame_roles
    _check(
        _error_problem(outcome, parameters=roles, columns=[_first_column(spec, p) for p in roles])
    )


@pytest.mark.parametrize(
    ("spec_id", "kind"), _params(READERS, _per_spec(("pandas", "pandas[pyarrow]")))
)
def test_pandas_int_label_on_another_column(spec_id: str, kind: str) -> None:
    """A column the metric does not read has an int label: the value is unchanged."""
    spec = SPECS[spec_id]
    natives = [
        _pandas(f, kind).assign(**{"tmp": 0}).rename(columns={"tmp": 99}) for f in spec.frames
    ]
    _check(_value_problem(_call_native(spec, natives, spec.kwargs), _baseline(spec_id)))


@pytest.mark.parametrize(
    ("spec_id", "parameter", "kind"),
    _params(READERS, lambda s: _pandas_roles(s, ("pandas", "pandas[pyarrow]"))),
)
def test_pandas_int_label_on_a_role_column(spec_id: str, parameter: str, kind: str) -> None:
    """The role column is labelled 7 and named "7": the value, or an error naming '7'."""
    spec = SPECS[spec_id]
    column = _first_column(spec, parameter)
    frames = _pandas_frames(spec, kind, column, lambda df: df.rename(columns={column: 7}))
    outcome = _call_native(spec, frames, _with_column(spec, parameter, "7"))
    _check(_value_or_error(outcome, _baseline(spec_id), back={column: "7"}, columns=["7"]))


# --- 6. Polars dtypes -------------------------------------------------------------------------


def _object(column: str, height: int) -> pl.Series:
    return pl.Series(column, [object() for _ in range(height)], dtype=pl.Object)


ERROR_DTYPES: dict[str, tuple[Callable[[pl.DataFrame, str], pl.DataFrame], tuple[str, ...]]] = {
    "Object": (
        lambda f, c: f.with_columns(_object(c, f.height)),
        ("polars[eager]", "polars[lazy]"),
    ),
    "Null": (
        lambda f, c: f.with_columns(pl.lit(None).alias(c)),
        ("polars[eager]", "polars[lazy]", "pandas", "duckdb"),
    ),
    "List": (
        lambda f, c: f.with_columns(pl.concat_list(c).alias(c)),
        ("polars[eager]", "polars[lazy]"),
    ),
}


def _on_duckdb(spec: Spec, roles: Sequence[str], salt: str) -> set[str]:
    """Two of the roles (in turn across specs): DuckDB costs 50-1000 ms a call."""
    start = sum(map(ord, spec.id + salt)) % max(len(roles), 1)
    return set((list(roles) * 2)[start : start + 2])


def _error_dtypes(spec: Spec) -> list[Any]:
    return [
        pytest.param(spec.id, p, dtype, kind, id=f"{spec.id}-{p}-{dtype}-{kind}")
        for dtype, (_, kinds) in ERROR_DTYPES.items()
        for p in spec.frame_roles
        for kind in kinds
        if kind in spec.kinds
        and (kind != "duckdb" or p in _on_duckdb(spec, spec.frame_roles, dtype))
    ]


@pytest.mark.parametrize(("spec_id", "parameter", "dtype", "kind"), _params(READERS, _error_dtypes))
def test_role_column_of_an_unusable_dtype(
    spec_id: str, parameter: str, dtype: str, kind: str
) -> None:
    spec = SPECS[spec_id]
    column = _first_column(spec, parameter)
    change, _ = ERROR_DTYPES[dtype]
    frames = _frames_with(spec, column, lambda f: change(f, column))
    if dtype == "Object":  # Object columns cannot go through Arrow: hand them over as they are
        natives = [f.lazy() if kind == "polars[lazy]" else f for f in frames]
        outcome = _call_native(spec, natives, spec.kwargs)
    else:
        outcome = _call(spec, kind, spec.kwargs, frames)
    if dtype == "List" and isinstance(outcome, pl.DataFrame):
        # one-element lists partition like their elements: that value is also right
        lists = [c for c, d in outcome.schema.items() if isinstance(d, pl.List)]
        outcome = outcome.with_columns(pl.col(lists).list.first())
        _check(_value_problem(outcome, _baseline(spec_id)))
        return
    if dtype == "Null" and kind == "pandas" and parameter == "carry":
        # pandas has no null dtype: an all-None object column arrives as text, and carry=
        # copies it as it is (nulls are not an error in a copied column)
        expected = _baseline(spec_id).with_columns(pl.lit(None, pl.String).alias(column))
        _check(_value_problem(outcome, expected))
        return
    _check(_error_problem(outcome, parameters=[parameter], columns=[column]))


def _smallest_unsigned(series: pl.Series) -> pl.DataType:
    return pl.UInt8() if series.max() < 256 else pl.UInt16()  # type: ignore[operator]


VALUE_DTYPES: dict[str, tuple[Callable[[pl.Series], pl.DataType | None], tuple[str, ...]]] = {
    "Categorical": (lambda s: pl.Categorical() if s.dtype == pl.String else None, KINDS),
    "Enum": (
        lambda s: pl.Enum(sorted(set(s))) if s.dtype == pl.String else None,
        ("polars[eager]", "polars[lazy]"),  # elsewhere an Enum arrives as a Categorical
    ),
    "Decimal": (lambda s: pl.Decimal(18, 6) if s.dtype.is_float() else None, KINDS),
    "unsigned": (
        lambda s: _smallest_unsigned(s) if s.dtype.is_integer() and s.min() >= 0 else None,
        ("polars[eager]", "polars[lazy]", "duckdb"),
    ),
}


def _column_series(spec: Spec, column: str) -> pl.Series:
    return pl.concat([f[column] for f in spec.frames if column in f.columns])


def _slow_on_duckdb(spec: Spec, dtype: str) -> bool:
    """A second of DuckDB per call: these specs try one unusual dtype there, not all."""
    return spec.id in ("summary", "leave_one_out", "cramers_v") and dtype != "unsigned"


def _value_dtypes(spec: Spec) -> list[Any]:
    cases = []
    for dtype, (make, kinds) in VALUE_DTYPES.items():
        roles = [
            p
            for p in spec.frame_roles
            if make(_column_series(spec, _first_column(spec, p))) is not None
        ]
        duckdb_roles = set() if _slow_on_duckdb(spec, dtype) else _on_duckdb(spec, roles, dtype)
        cases += [
            pytest.param(spec.id, p, dtype, kind, id=f"{spec.id}-{p}-{dtype}-{kind}")
            for p in roles
            for kind in kinds
            if kind in spec.kinds and (kind != "duckdb" or p in duckdb_roles)
        ]
    return cases


@pytest.mark.parametrize(("spec_id", "parameter", "dtype", "kind"), _params(READERS, _value_dtypes))
def test_role_column_of_an_unusual_dtype(
    spec_id: str, parameter: str, dtype: str, kind: str
) -> None:
    """Categorical, Enum, Decimal, UInt8: the value of the plain dtype (or a named error)."""
    spec = SPECS[spec_id]
    column = _first_column(spec, parameter)
    target = VALUE_DTYPES[dtype][0](_column_series(spec, column))
    frames = _frames_with(spec, column, lambda f: f.with_columns(pl.col(column).cast(target)))
    outcome = _call(spec, kind, spec.kwargs, frames)
    _check(_value_or_error(outcome, _baseline(spec_id), parameters=[parameter], columns=[column]))


# --- 7. errors that blame the right parameter -------------------------------------------------

REPRO_FUNCTIONS = [
    s
    for s in SPECS
    if SPECS[s].function.__module__.startswith("frameaudit.repro")
    and "prediction" in SPECS[s].kwargs
]


@pytest.mark.parametrize("spec_id", REPRO_FUNCTIONS)
@pytest.mark.parametrize("kind", ["polars[eager]", "duckdb"])
def test_run_given_the_prediction_column(spec_id: str, kind: str) -> None:
    spec = SPECS[spec_id]
    outcome = _call(spec, kind, {**spec.kwargs, "run": spec.kwargs["prediction"]})
    problem = _error_problem(
        outcome, parameters=["run", "prediction"], every=True, forbidden=[r"(?<![\w.])sample="]
    )
    _check(problem)


@pytest.mark.parametrize("kind", IN_MEMORY)
@pytest.mark.parametrize("features", [None, [], "", ["x0", None]], ids=repr)
def test_nearest_cases_without_features(kind: str, features: Any) -> None:
    spec = SPECS["nearest_cases"]
    outcome = _call(spec, kind, {**spec.kwargs, "features": features})
    _check(_error_problem(outcome, parameters=["features"], forbidden=[r"1 <= k <="]))


# --- 8. DuckDB relations on the caller's own connection ---------------------------------------

GROUP_METRICS = ["exp", "expu", "arp", "ndkl"]  # a sum, a ratio of sums, pairs, prefixes
SECOND_FRAME_KINDS = ["dict", "polars", "pandas", "same-connection", "default-connection"]


def _relation(con: duckdb.DuckDBPyConnection, frame: pl.DataFrame) -> Any:
    return con.from_arrow(frame.to_arrow())


def _second(frame: pl.DataFrame, how: str, con: duckdb.DuckDBPyConnection) -> Any:
    if how == "polars":
        return frame
    if how == "pandas":
        return frame.to_pandas()
    if how == "same-connection":
        return _relation(con, frame)
    return duckdb.from_arrow(frame.to_arrow())  # another connection than the data's


def _judge_second(outcome: Outcome, expected: pl.DataFrame, how: str, parameter: str) -> None:
    if how == "default-connection":  # across connections: the value or an error naming it
        _check(_value_or_error(outcome, expected, parameters=[parameter]))
    else:
        _check(_value_problem(outcome, expected))


@pytest.mark.parametrize("how", SECOND_FRAME_KINDS)
@pytest.mark.parametrize("metric", GROUP_METRICS)
def test_duckdb_connection_with_a_group_mapping(metric: str, how: str) -> None:
    spec = SPECS[metric]
    data = RANKING.drop("group")
    kwargs = {**spec.kwargs, "group": "grp"}
    expected = _expected(spec, {**kwargs, "groups": MAPPING}, [data])
    con = duckdb.connect()
    mapping_frame = pl.DataFrame({"item": list(MAPPING), "grp": list(MAPPING.values())})
    groups = MAPPING if how == "dict" else _second(mapping_frame, how, con)
    outcome = _attempt(lambda: spec.function(_relation(con, data), **kwargs, groups=groups))
    _judge_second(outcome, expected, how, "groups")


@pytest.mark.parametrize("how", SECOND_FRAME_KINDS[1:])
@pytest.mark.parametrize("metric", ["position_parity", "rank_alignment"])
def test_duckdb_connection_with_an_overall_frame(metric: str, how: str) -> None:
    spec = SPECS[metric]
    groups = COHESION.filter(pl.col("group") != "all")
    overall = COHESION.filter(pl.col("group") == "all").drop("group")
    kwargs = {k: v for k, v in spec.kwargs.items() if k != "overall"}
    expected = _baseline(metric)
    con = duckdb.connect()
    second = _second(overall, how, con)
    outcome = _attempt(lambda: spec.function(_relation(con, groups), **kwargs, overall=second))
    _judge_second(outcome, expected, how, "overall")


@pytest.mark.parametrize("how", SECOND_FRAME_KINDS[1:])
def test_duckdb_connection_with_centroids(how: str) -> None:
    spec = SPECS["social_fairness_ratio"]
    centroids = CLUSTERING.group_by("part", "cluster").agg(pl.col("x0", "x1").mean() + 0.25)
    expected = _expected(spec, {**spec.kwargs, "centroids": centroids})
    con = duckdb.connect()
    second = _second(centroids, how, con)
    outcome = _attempt(
        lambda: spec.function(_relation(con, CLUSTERING), **spec.kwargs, centroids=second)
    )
    _judge_second(outcome, expected, how, "centroids")


# --- 9. nearest_cases: huge values, id dtypes -------------------------------------------------


def _knn(train: np.ndarray, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Brute force on O(1) coordinates: (indices, distances), ties to the lower row."""
    difference = queries[:, None, :] - train[None, :, :]
    distances = np.sqrt((difference**2).sum(axis=2))
    order = np.lexsort((np.broadcast_to(np.arange(len(train)), distances.shape), distances))
    indices = order[:, :k]
    return indices, np.take_along_axis(distances, indices, axis=1)


def _standardized(train: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scale = train.std(axis=0)
    scale[scale == 0] = 1.0
    mean = train.mean(axis=0)
    return (train - mean) / scale, (queries - mean) / scale


@pytest.mark.parametrize("kind", IN_MEMORY)
@pytest.mark.parametrize("standardize", [False, True])
@pytest.mark.parametrize("scale", [1e200, 1e300, -1e300, 1e-300])
def test_nearest_cases_huge_and_tiny_values(kind: str, standardize: bool, scale: float) -> None:
    """Distances are scale-equivariant (and standardised distances scale-free): numpy on O(1)."""
    features = ["x0", "x1", "x2"]
    train, queries = _nearest_frames()
    x_train, x_queries = train.select(features).to_numpy(), queries.select(features).to_numpy()
    if standardize:
        x_train, x_queries = _standardized(x_train, x_queries)
    indices, distances = _knn(x_train, x_queries, 3)
    expected = pl.DataFrame(
        {
            "query": np.repeat(queries["id"].to_numpy(), 3),
            "rank": np.tile(np.arange(1, 4), len(queries)),
            "case": train["id"].to_numpy()[indices.ravel()],
            "distance": distances.ravel() * (1.0 if standardize else abs(scale)),
            "label": train["label"].to_numpy()[indices.ravel()],
        }
    )
    big_train, big_queries = _nearest_frames(scale)
    outcome = _attempt(
        lambda: fa.explain.nearest_cases(
            CONSTRUCTORS[kind](big_train),
            CONSTRUCTORS[kind](big_queries),
            features=features,
            k=3,
            id="id",
            standardize=standardize,
        )
    )
    _check(_value_or_error(outcome, expected, parameters=["features"]))


ID_DTYPES = {"Int32": pl.Int32, "UInt64": pl.UInt64, "Float64": pl.Float64, "String": pl.String}


@pytest.mark.parametrize("kind", ["polars[eager]", "polars[lazy]", "pandas", "pyarrow"])
@pytest.mark.parametrize("exclude_self", [False, True])
@pytest.mark.parametrize("dtype", list(ID_DTYPES))
def test_nearest_cases_id_columns_of_different_dtypes(
    dtype: str, exclude_self: bool, kind: str
) -> None:
    train = TRAIN
    queries = TRAIN.head(5).select("x0", "x1", "x2", "id", pl.col("label").alias("predicted"))
    options = {"features": ["x0", "x1", "x2"], "k": 3, "id": "id", "carry": "predicted"}
    expected = fa.explain.nearest_cases(train, queries, exclude_self=exclude_self, **options)
    cast = queries.with_columns(pl.col("id").cast(ID_DTYPES[dtype]))
    expected = expected.with_columns(pl.col("query").cast(ID_DTYPES[dtype]))
    outcome = _attempt(
        lambda: fa.explain.nearest_cases(
            CONSTRUCTORS[kind](train),
            CONSTRUCTORS[kind](cast),
            exclude_self=exclude_self,
            **options,
        )
    )
    if exclude_self and dtype == "String":
        # "1000" is not 1000: excluding nothing would silently keep each query's own row
        _check(_error_problem(outcome, parameters=["id"]))
        return
    if isinstance(outcome, pl.DataFrame):
        outcome = outcome.with_columns(pl.col("query").cast(ID_DTYPES[dtype]))
    _check(_value_or_error(outcome, expected, parameters=["id"]))


# --- random combinations (hypothesis) ---------------------------------------------------------

RANDOM_SPECS = ["exp", "cluster_balance", "ec_local", "correspondence", "position_parity"]
MISSING = "no_such_column"


@dataclass
class Scenario:
    """A drawn call: frames, kwargs, what must be named if it fails, how to rename back."""

    kind: str
    frames: list[pl.DataFrame]
    kwargs: dict[str, Any]
    bad: list[str]  # parameters that make the call invalid
    renamed: dict[str, str]  # original column → new name (clash names)
    back: dict[str, str]  # baseline column → the column used instead (renamed back after)


def _wrong_value(draw: st.DrawFn, role: Role, column: str) -> Any:
    choices: list[Any] = [1, {column: 1}]
    if not role.optional:
        choices.append(None)
    choices.append([] if role.many else [column])
    return draw(st.sampled_from(choices))


@st.composite
def _scenarios(draw: st.DrawFn, spec: Spec) -> Scenario:
    kind = draw(st.sampled_from(spec.kinds))
    roles = spec.frame_roles
    # decoys: an exact copy of every role column under another name
    frames = [f.with_columns(pl.all().name.prefix("alt_")) for f in spec.frames]
    how = {
        p: draw(st.sampled_from(["own"] * 3 + ["copy"] * 2 + ["other", "missing", "wrong"]))
        for p in roles
    }
    kwargs, bad = dict(spec.kwargs), []
    owners = [p for p in roles if how[p] == "own"]
    for p in roles:
        column = _first_column(spec, p)
        partners = [q for q in owners if q != p and frozenset({p, q}) not in spec.sharing]
        if how[p] == "copy":
            kwargs[p] = _with_column(spec, p, f"alt_{column}")[p]
        elif how[p] == "other" and partners:
            partner = draw(st.sampled_from(partners))
            kwargs[p] = _first_column(spec, partner)
            bad += [p, partner]
        elif how[p] == "missing":
            kwargs[p] = _with_column(spec, p, MISSING)[p]
            bad.append(p)
        elif how[p] == "wrong":
            kwargs[p] = _wrong_value(draw, spec.roles[p], column)
            bad.append(p)
    named = [c for p in roles if isinstance(kwargs[p], (str, list)) for c in _names(kwargs[p])]
    used = sorted({c for c in named if isinstance(c, str) and any(c in f.columns for f in frames)})
    taken = {c for f in frames for c in f.columns}
    pool = [n for n in (*PLAIN, *RESERVED, *_outputs(spec)) if n not in taken]
    chosen = draw(st.lists(st.sampled_from(used), unique=True, max_size=3)) if used else []
    names = draw(
        st.lists(st.sampled_from(pool), unique=True, min_size=len(chosen), max_size=len(chosen))
    )
    renamed = dict(zip(chosen, names, strict=True))
    frames = [f.rename({c: n for c, n in renamed.items() if c in f.columns}) for f in frames]
    for p in roles:
        if isinstance(kwargs[p], str):
            kwargs[p] = renamed.get(kwargs[p], kwargs[p])
        elif isinstance(kwargs[p], list):
            kwargs[p] = [renamed.get(c, c) if isinstance(c, str) else c for c in kwargs[p]]
    back = {
        _first_column(spec, p): _names(kwargs[p])[0]
        for p in roles
        if p not in bad and _names(kwargs[p])[0] != _first_column(spec, p)
    }
    return Scenario(kind, frames, kwargs, sorted(set(bad)), renamed, back)


@pytest.mark.parametrize("spec_id", RANDOM_SPECS)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_random_combinations(spec_id: str, data: st.DataObject) -> None:
    spec = SPECS[spec_id]
    scenario = data.draw(_scenarios(spec))
    outcome = _call(spec, scenario.kind, scenario.kwargs, scenario.frames)
    clashes = list(scenario.renamed.values())
    if scenario.bad:
        problem = _error_problem(outcome, parameters=scenario.bad, columns=clashes)
    else:
        problem = _value_or_error(
            outcome, _baseline(spec_id), back=scenario.back, columns=clashes, reason=True
        )
    _check(problem)
