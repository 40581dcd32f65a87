"""A Comparison read, gated, charted and exported (SPEC §7): on a table written by hand.

The verdicts are worked from the rule and the numbers in the table; the exports are read back
(JSON), parsed (HTML: one inline SVG per chart, nothing loaded) and compared line by line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest
from report.report_checks import browse, self_contained

import frameaudit as fa
from frameaudit.exceptions import InvalidParameterError

ROWS = [
    # metric, combo, group, value, baseline, difference, lo, hi, p, p_adjusted
    ("exp", "MinMaxRatio", None, 0.9, 0.8, 0.1, 0.02, 0.18, 0.01, 0.03),
    ("exp", None, "f", 0.3, 0.33, -0.03, -0.07, 0.01, 0.2, 0.4),
    ("exp", None, "m", 0.32, 0.28, 0.04, 0.01, 0.07, 0.02, 0.05),
    ("ndkl", None, None, 0.2, 0.25, -0.05, -0.09, -0.01, None, None),
]


def _comparison(**change: object) -> fa.compare.Comparison:
    table = pl.DataFrame(
        [
            {
                "metric": m,
                "combo": c,
                "group": g,
                "system": "B",
                "value": v,
                "baseline_value": b,
                "difference": d,
                "difference_lo": lo,
                "difference_hi": hi,
                "p_value": p,
                "rankings": 40,
                "p_adjusted": q,
            }
            for m, c, g, v, b, d, lo, hi, p, q in ROWS
        ]
    )
    fields: dict[str, object] = {
        "family": "ranking",
        "table": table,
        "baseline": "A",
        "systems": ("A", "B"),
        "parameters": {"ci": 0.9, "correction": "holm", "n_boot": 100},
        "record": {"source": {"kind": "polars.DataFrame", "rows": 800}, "created": "now"},
    }
    return fa.compare.Comparison(**{**fields, **change})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("requirement", "rule", "reading", "value", "outcome"),
    [
        ("exp:MinMaxRatio", (">=", 0.0), "difference", 0.1, "pass"),  # [0.02, 0.18] >= 0
        ("exp:MinMaxRatio", (">=", 0.05), "difference", 0.1, "inconclusive"),  # straddles
        ("exp:MinMaxRatio", ("<", 0.0), "difference", 0.1, "fail"),  # all of it >= 0
        ("exp:MinMaxRatio.lo", (">=", 0.05), "lo", 0.1, "fail"),  # 0.02
        ("exp:MinMaxRatio.difference", (">=", 0.05), "difference", 0.1, "pass"),
        ("exp:MinMaxRatio.p_adjusted", ("<", 0.05), "p_adjusted", 0.03, "pass"),
        ("exp:MinMaxRatio.value", (">=", 0.95), "value", 0.9, "fail"),
        ("exp:f", (">=", -0.1), "difference", -0.03, "pass"),  # [-0.07, 0.01]
        ("exp:m.p_value", ("<", 0.05), "p_value", 0.02, "pass"),
        ("ndkl", ("<=", 0.0), "difference", -0.05, "pass"),  # [-0.09, -0.01]
        ("ndkl.p_value", ("<", 0.05), "p_value", None, "inconclusive"),  # untested
    ],
)
def test_a_rule_reads_the_difference_interval_or_one_number(
    requirement: str, rule: tuple[str, float], reading: str, value: float | None, outcome: str
) -> None:
    (verdict,) = _comparison().check({requirement: rule}).iter_rows(named=True)
    assert (verdict["reading"], verdict["outcome"], verdict["system"]) == (reading, outcome, "B")
    if value is None:
        assert verdict["value"] is None
    else:
        assert verdict["value"] == pytest.approx(value)
    assert verdict["passed"] == (outcome == "pass")


def test_the_gate_decides_the_outcome_and_the_headline() -> None:
    comparison = _comparison()
    assert comparison.outcome is None
    # by hand: p_adjusted < 0.05 in 1 of the 3 tested rows; the strongest is EXP MinMaxRatio
    assert comparison.headline == (
        "1 of 3 differences from A are significant at 5% after Holm's correction; the "
        "strongest: EXP MinMaxRatio, B − A = +0.1 (90% interval 0.02 to 0.18, p_adjusted 0.03)."
    )
    passed = comparison.gate({"exp:MinMaxRatio": (">=", 0.0)})
    assert passed.outcome == "pass"
    assert passed.headline.startswith("Audit passed: all 1 rule(s) hold. 1 of 3")
    undecided = comparison.gate({"exp:MinMaxRatio": (">=", 0.0), "exp:f": (">=", 0.0)})
    assert undecided.outcome == "inconclusive"
    assert undecided.headline.startswith(
        "Audit INCONCLUSIVE: none of 2 rule(s) failed, 1 undecided; exp:f for system='B' = "
        "-0.03 [-0.07, 0.01], required >= 0."
    )
    failed = undecided.gate({"ndkl": (">=", 0.0), "exp:f": (">=", 0.0)})
    assert failed.outcome == "fail"
    assert failed.headline.startswith("Audit FAILED: 1 of 2 rule(s) failed; ndkl for system='B'")
    assert not comparison.passed({"ndkl": (">=", 0.0)})


@pytest.mark.parametrize(
    ("requirements", "message"),
    [
        ({"expu:MinMaxRatio": (">=", 0)}, "requirement metric='expu' is not allowed"),
        ({"exp:LTwo": (">=", 0)}, "requirement='exp:LTwo' is not allowed; expected one of"),
        ({"exp": (">=", 0)}, "requirement='exp' is not allowed"),
        ({"exp:f.width": (">=", 0)}, "the number read='width' is not allowed"),
        ({"exp:f": ("=>", 0)}, "operator='=>' is not allowed"),
        ({"exp:f": (">=", "zero")}, "expected a number as threshold, got 'zero'"),
    ],
)
def test_a_rule_on_nothing_the_table_holds_is_refused(
    requirements: dict[str, tuple[str, object]], message: str
) -> None:
    with pytest.raises(InvalidParameterError, match=re.escape(message)):
        _comparison().check(requirements)  # type: ignore[arg-type]


def test_json_holds_the_outcome_and_reads_back() -> None:
    gated = _comparison().gate({"exp:MinMaxRatio": (">=", 0.0), "exp:f": (">=", 0.0)})
    data = json.loads(gated.to_json())
    assert (data["kind"], data["outcome"], data["passed"]) == ("comparison", "inconclusive", False)
    assert data["record"]["source"]["rows"] == 800
    back = fa.compare.Comparison.from_json(gated.to_json())
    assert back.table.equals(gated.table)
    assert back.verdicts is not None
    assert back.verdicts.equals(gated.verdicts)
    assert back.to_json() == gated.to_json()


def test_html_markdown_and_text_show_the_gate_the_table_and_the_record(tmp_path: Path) -> None:
    gated = _comparison().gate({"exp:MinMaxRatio": (">=", 0.0)})
    page = self_contained(gated, tmp_path)  # type: ignore[arg-type]
    assert "fa-pass" in page
    charts = re.findall(r"<figure data-chart='([^']+)'><svg", page)
    assert charts == ["exp_groups", "exp_combos", "ndkl"]
    assert "Audit record" in page
    markdown = gated.to_markdown()
    row = "| exp | MinMaxRatio | — | B | 0.9 | 0.8 | 0.1 | 0.02 | 0.18 | 0.01 | 40 | 0.03 |"
    assert row in markdown.splitlines()
    text = str(gated)
    assert "Audit passed" in text
    assert "Audit record" not in text  # in the files
    lines = [line.split() for line in text.splitlines()]
    assert ["ndkl", "—", "—", "B", "-0.05", "-0.09", "-0.01", "—"] in lines


def test_the_charts_draw_every_difference_in_a_browser(tmp_path: Path) -> None:
    _, charts, symbols = browse(_comparison(), tmp_path)  # type: ignore[arg-type]
    assert charts == ["exp_groups", "exp_combos", "ndkl"]
    assert symbols >= len(ROWS) * 2  # a point and a whisker per row, and the zero lines


def test_a_failed_write_keeps_the_previous_file(tmp_path: Path) -> None:
    path = tmp_path / "comparison.json"
    comparison = _comparison()
    comparison.to_json(path)
    before = path.read_text()
    broken = _comparison(parameters={"ci": 0.9, "odd": object()})
    with pytest.raises(TypeError, match="cannot be written as JSON"):
        broken.to_json(path)
    assert path.read_text() == before


def test_a_family_without_combos_or_groups_shows_no_such_column() -> None:
    single = _comparison().table.filter(pl.col("metric") == "ndkl")
    markdown = _comparison(table=single).to_markdown()
    head = "| metric | system | value | baseline_value | difference | difference_lo |"
    assert any(line.startswith(head) for line in markdown.splitlines())
    assert "combo" not in str(_comparison(table=single))


def test_the_headline_says_when_the_permutations_cannot_reach_five_percent() -> None:
    # by hand: Holm multiplies the smallest p-value, 1 / (1 + 40), by the 4 tested rows
    nothing = _comparison().table.with_columns(pl.lit(0.3).alias("p_adjusted"))
    coarse = _comparison(table=nothing, parameters={"ci": 0.9, "correction": "holm", "n_perm": 40})
    assert coarse.headline == (
        "0 of 4 differences from A are significant at 5% after Holm's correction. With "
        "n_perm=40, the smallest Holm's p_adjusted over 4 rows is 0.0976: no row can reach 5%; "
        "ask for n_perm=80 or more (or fewer metrics)."
    )
    fine = _comparison(table=nothing, parameters={"ci": 0.9, "correction": "holm", "n_perm": 80})
    assert fine.headline.endswith("after Holm's correction.")
