"""The one role binding (frameaudit._roles.bind), on its own and through the metric families."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import frameaudit as fa
from frameaudit._roles import Role, bind

FRAME = pl.DataFrame(
    {"rank": [1, 2, 1], "group": ["a", "b", "a"], "query": [1, 1, 2], "score": [0.5, 1.0, 0.2]}
)


def test_bind_keeps_only_the_bound_columns_in_role_order() -> None:
    bound = bind(
        FRAME,
        [
            Role("rank", "rank", dtype="integer"),
            Role("group", ["group"], many=True),
            Role("by", None, many=True, optional=True),
        ],
        outputs=["exp"],
    )
    assert bound.columns == {"rank": ["rank"], "group": ["group"], "by": []}
    assert bound.source.frame.collect_schema().names() == ["rank", "group"]


@pytest.mark.parametrize(
    ("roles", "sharing", "match"),
    [
        ([Role("rank", None)], (), r"rank=None: expected a column name \(str\)$"),
        ([Role("by", None, many=True)], (), r"by=None: expected a column name \(str\) or a list"),
        (
            [Role("rank", ["rank"])],
            (),
            r"rank=\['rank'\]: expected one column name \(str\), got list",
        ),
        ([Role("rank", 3)], (), r"rank=3: expected one column name \(str\), got int"),
        ([Role("by", {"a": 1}, many=True)], (), r"by=\{'a': 1\}: expected a column name"),
        ([Role("by", [], many=True)], (), r"by=\[\]: expected a column name"),
        (
            [Role("features", ["score", "score"], many=True)],
            (),
            r"features=\['score', 'score'\]: column 'score' is listed more than once",
        ),
        (
            [Role("cluster", "query"), Role("by", "query", many=True)],
            (),
            r"column 'query' is given both as cluster= and as by=; a column can play only one role",
        ),
        (
            [Role("by", "__fa_all", many=True)],
            (),
            r"by='__fa_all': column names starting with '__fa_' are reserved",
        ),
        (
            [Role("by", "query", many=True)],
            (),
            r"by='query': 'query' is an output column of this metric; rename the column first",
        ),
        (
            [Role("rank", "score", dtype="integer")],
            (),
            r"rank='score': expected a column of integer",
        ),
    ],
)
def test_bind_refuses_with_the_parameter_named(roles: list[Role], sharing: Any, match: str) -> None:
    outputs = ["query"] if "output column" in match else ["exp"]
    with pytest.raises(fa.FrameAuditError, match=match):
        bind(FRAME, roles, sharing=sharing, outputs=outputs)


def test_roles_named_as_sharing_may_share_a_column() -> None:
    roles = [Role("ranking", "query", many=True), Role("by", "query", many=True)]
    with pytest.raises(fa.InvalidParameterError, match="given both as ranking= and as by="):
        bind(FRAME, roles)
    bound = bind(FRAME, roles, sharing=[frozenset(("by", "ranking"))])
    assert bound.columns == {"ranking": ["query"], "by": ["query"]}
    assert bound.source.frame.collect_schema().names() == ["query"]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (
            lambda df: fa.fair.exp(df, group=None),
            r"group=None: expected a column name",
        ),
        (
            lambda df: fa.fair.cluster_balance(
                df, cluster="cluster", group="group", a="a", b="b", by="group"
            ),
            "column 'group' is given both as group= and as by=",
        ),
        (
            lambda df: fa.fair.cluster_balance(df, cluster=None, group="group", a="a", b="b"),
            r"cluster=None: expected a column name",
        ),
        (
            lambda df: fa.fair.social_fairness_ratio(
                df, group="group", a="a", b="b", features=None
            ),
            r"features=None: expected a column name",
        ),
        (
            lambda df: fa.fair.cluster_balance(
                df.rename({"query": "n_a"}),
                cluster="cluster",
                group="group",
                a="a",
                b="b",
                by="n_a",
                per_cluster=True,
            ),
            r"by='n_a': 'n_a' is an output column of this metric",
        ),
        (
            lambda df: fa.fair.exp(df.rename({"query": "__fa_all"}), by="__fa_all"),
            r"by='__fa_all': column names starting with '__fa_' are reserved",
        ),
        (
            # with groups= the group name is the mapping's column, not the frame's
            lambda df: fa.fair.exp(
                df.with_columns(item=pl.Series([1, 2, 1])),
                item="item",
                group="__fa_g",
                groups={1: "a", 2: "b"},
            ),
            r"group='__fa_g': column names starting with '__fa_' are reserved",
        ),
    ],
)
def test_families_bind_their_roles(call: Any, match: str) -> None:
    df = FRAME.with_columns(pl.Series("cluster", [0, 1, 1]), pl.Series("x", [0.0, 1.0, 2.0]))
    with pytest.raises(fa.InvalidParameterError, match=match):
        call(df)
