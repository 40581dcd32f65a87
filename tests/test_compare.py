"""Comparing systems (SPEC §7): each system's values, paired differences, p-values, corrections.

The differences' intervals and p-values are checked against an independent numpy comparison
(tests/reference/compare.py) with frameaudit's counter-based counts and coins; the values
against the metric functions on each system alone; the corrections against their definitions
and scipy.
"""

from __future__ import annotations

import polars as pl
import pytest
import scipy.stats
from reference import compare as reference

import frameaudit as fa
from frameaudit._engine.resample import with_coin_flips, with_poisson_counts
from frameaudit.compare._comparison import adjusted
from frameaudit.exceptions import ColumnNotFoundError, InvalidParameterError

ROLES = {"ranking": "query", "group": "gender", "size": "rows"}


def _systems(*names: str) -> pl.DataFrame:
    """The example log as system ``names[0]``; the others rank each query's items otherwise."""
    log = fa.datasets.ranking_example()
    frames = [log.with_columns(pl.lit(names[0]).alias("system"))]
    for shift, name in enumerate(names[1:], start=1):
        n = pl.len().over("query")
        moved = ((pl.col("rank") - 1 + shift * 3) % n + 1).alias("rank")
        frames.append(log.with_columns(moved, pl.lit(name).alias("system")))
    return pl.concat(frames)


def test_a_row_is_numpys_paired_bootstrap_and_randomisation_test() -> None:
    frame = _systems("A", "B")
    boots, perms, seed, level = 150, 120, 5, 0.9
    result = fa.compare.ranking(
        frame,
        system="system",
        metrics=["exp"],
        ci=level,
        n_boot=boots,
        n_perm=perms,
        seed=seed,
        **ROLES,
    )
    row = result.table.filter(pl.col("combo") == "MinMaxRatio").row(0, named=True)
    queries = frame["query"].n_unique()
    expected = reference.exp_min_max_difference(
        frame.rename({"gender": "group"}),
        "A",
        "B",
        counts=reference.draws(with_poisson_counts, queries, boots, seed),
        coins=reference.draws(with_coin_flips, queries, perms, seed),
        level=level,
    )
    for column, value in expected.items():
        assert row[column] == pytest.approx(value, rel=1e-12), column
    assert (row["metric"], row["group"], row["system"], row["rankings"]) == ("exp", None, "B", 20)


def test_values_are_each_systems_metric_on_its_own_rows() -> None:
    frame = _systems("A", "B", "C")
    result = fa.compare.ranking(
        frame, system="system", metrics=["exp", "ndkl"], n_boot=20, n_perm=20, **ROLES
    )
    table = result.table
    assert (result.baseline, result.systems) == ("A", ("A", "B", "C"))
    assert sorted(set(table["system"])) == ["B", "C"]
    for system in ("A", "B", "C"):
        alone = frame.filter(pl.col("system") == system)
        exp = fa.fair.exp(alone, **ROLES, combo="Variance").item()
        per_group = dict(fa.fair.exp(alone, **ROLES, combo=None).select("gender", "exp").rows())
        # the systems rank the same items: the pooled reference shares are each one's own
        ndkl = fa.fair.ndkl(alone, ranking="query", group="gender").item()
        column = "baseline_value" if system == "A" else "value"
        rows = table if system == "A" else table.filter(pl.col("system") == system)
        variance = rows.filter((pl.col("metric") == "exp") & (pl.col("combo") == "Variance"))
        assert variance[column].to_list() == pytest.approx([exp] * variance.height, rel=1e-12)
        for group, value in per_group.items():
            got = rows.filter((pl.col("metric") == "exp") & (pl.col("group") == group))
            assert got[column].to_list() == pytest.approx([value] * got.height, rel=1e-12)
        got = rows.filter(pl.col("metric") == "ndkl")[column].to_list()
        assert got == pytest.approx([ndkl] * len(got), rel=1e-12)
    differences = table["value"] - table["baseline_value"]
    assert (table["difference"] - differences).abs().max() < 1e-12


def test_the_table_is_the_same_whatever_the_row_order() -> None:
    """Rows come in the order of the partitions, the combos as listed, then the groups."""
    frame = _systems("A", "B").with_columns((pl.col("query") % 2).alias("half"))
    options = {"system": "system", "metrics": ["exp"], "by": "half", "n_boot": 30, "n_perm": 30}
    tables = [
        fa.compare.ranking(frame.sample(fraction=1.0, shuffle=True, seed=s), **options, **ROLES)
        for s in range(3)
    ]
    for table in tables[1:]:
        assert table.table.equals(tables[0].table)
    first = tables[0].table.filter(pl.col("half") == 0)
    assert first["combo"].to_list() == [*fa.fair.COMBOS, None, None]
    assert first["group"].to_list()[-2:] == sorted(frame["gender"].unique().to_list())
    assert tables[0].table["half"].is_sorted()


def test_holm_and_benjamini_hochberg_adjust_every_p_value() -> None:
    p = [0.01, 0.04, 0.03, 0.2, None, 0.005]
    defined = [x for x in p if x is not None]
    holm = adjusted(pl.Series(p), "holm").to_list()
    bh = adjusted(pl.Series(p), "bh").to_list()
    assert holm[4] is None
    assert bh[4] is None
    assert [x for x in holm if x is not None] == pytest.approx(reference.holm(defined))
    # by hand: sorted 0.005, 0.01, 0.03, 0.04, 0.2 -> 5*0.005, 4*0.01, max(3*0.03, .), ...
    assert holm[5] == pytest.approx(0.025)
    assert holm[0] == pytest.approx(0.04)
    assert holm[2] == pytest.approx(0.09)
    assert holm[1] == pytest.approx(0.09)  # 2 * 0.04 = 0.08, but never below the step before
    fdr = scipy.stats.false_discovery_control(defined, method="bh")
    assert [x for x in bh if x is not None] == pytest.approx(list(fdr))
    assert adjusted(pl.Series(p), None).to_list() == p


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"system": "engine"}, ColumnNotFoundError, "system='engine': column 'engine' not found"),
        ({"baseline": "Z"}, InvalidParameterError, "baseline='Z' is not allowed; expected one of"),
        ({"n_perm": 0}, InvalidParameterError, "n_perm=0: expected an integer of at least 1"),
        ({"n_perm": 2.5}, InvalidParameterError, "n_perm=2.5: expected an integer"),
        ({"correction": "bonf"}, InvalidParameterError, "correction='bonf' is not allowed"),
        ({"metrics": ["expu"]}, InvalidParameterError, "metrics='expu' is not allowed"),
    ],
)
def test_bad_input_is_refused(change: dict[str, object], error: type, message: str) -> None:
    arguments = {"system": "system", "n_boot": 5, "n_perm": 5, **ROLES, **change}
    with pytest.raises(error, match=message.replace("(", r"\(")):
        fa.compare.ranking(_systems("A", "B"), **arguments)  # type: ignore[arg-type]


def test_one_system_or_a_missing_one_is_refused() -> None:
    with pytest.raises(InvalidParameterError, match="expected at least two systems to compare"):
        fa.compare.ranking(_systems("A"), system="system", n_boot=5, n_perm=5, **ROLES)
    unnamed = _systems("A", "B").with_columns(
        pl.when(pl.col("query") == 2).then(None).otherwise(pl.col("system")).alias("system")
    )
    with pytest.raises(InvalidParameterError, match="expected every row to name its system"):
        fa.compare.ranking(unnamed, system="system", n_boot=5, n_perm=5, **ROLES)


def test_units_missing_from_a_system_are_named_or_dropped() -> None:
    frame = _systems("A", "B").filter(~((pl.col("system") == "B") & pl.col("query").is_in([3, 7])))
    with pytest.raises(
        InvalidParameterError,
        match=r"found 2 unit\(s\) missing from some system "
        r"\(e.g. \(query=3\), \(query=7\)\)",
    ):
        fa.compare.ranking(frame, system="system", n_boot=5, n_perm=5, **ROLES)
    dropped = fa.compare.ranking(
        frame, system="system", n_boot=5, n_perm=5, on_missing="drop", metrics=["exp"], **ROLES
    )
    assert dropped.dropped == 2
    assert set(dropped.table["rankings"]) == {18}
    kept = frame.filter(~pl.col("query").is_in([3, 7]))
    value = fa.fair.exp(kept.filter(pl.col("system") == "B"), **ROLES).item()
    got = dropped.table.filter(pl.col("combo") == "MinMaxRatio")["value"].item()
    assert got == pytest.approx(value, rel=1e-12)
