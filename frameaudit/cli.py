"""The ``frameaudit`` command line: reports of every metric family, on built-in examples or files.

See :data:`DESCRIPTION` (what ``frameaudit --help`` prints) and :data:`EXIT_STATUS`.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import re
import sys
import textwrap
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import polars as pl

from frameaudit import compare, datasets, explain, report
from frameaudit.compare import Comparison
from frameaudit.exceptions import ColumnNotFoundError, FrameAuditError, InvalidParameterError
from frameaudit.report import Report, _tables, write_atomically
from frameaudit.report._report import read_by

__all__ = ["DESCRIPTION", "EXIT_STATUS", "main"]

DESCRIPTION = """\
Responsible-AI metrics on a data file or a built-in example.

  frameaudit demo [FAMILY]          the report of a family on a built-in example
                                    (ranking, clustering, repro, explain, or all;
                                    compare: two rankers of it compared)
  frameaudit report FAMILY FILE     the report of a Parquet, CSV, Arrow IPC or NDJSON
                                    file, its column names given as options
                                    (frameaudit report FAMILY --help lists them)
  frameaudit compare FAMILY FILE    systems compared on the same units of a file (its
    --system COLUMN                 column naming the system): paired differences,
                                    intervals and p-values (frameaudit compare FAMILY
                                    --help lists the options)
"""
EXIT_STATUS = """\
exit status (report and compare):
  0  the report or comparison was made and every --require rule passes
  1  a --require rule failed (each verdict is printed on standard error)
  2  a usage or data error (a bad option, an unreadable file, an unwritable --output)
  3  no --require rule failed but one is inconclusive: its interval (a report's with
     --ci, a comparison's difference) straddles the threshold, or its value is undefined
"""

_READERS: dict[str, Callable[[Path], pl.LazyFrame]] = {
    ".parquet": pl.scan_parquet,
    ".pq": pl.scan_parquet,
    ".csv": pl.scan_csv,
    ".arrow": pl.scan_ipc,
    ".ipc": pl.scan_ipc,
    ".feather": pl.scan_ipc,
    ".ndjson": pl.scan_ndjson,
    ".jsonl": pl.scan_ndjson,
    ".run": lambda path: datasets.read_trec_run(path).lazy(),
    ".qrels": lambda path: datasets.read_qrels(path).lazy(),
}
# the report families whose options are exactly their column roles (default: the role's name)
_PLAIN_ROLES = {
    "repro": ("run", "sample", "target", "prediction"),
    "correspondence": ("query", "distance", "label", "predicted"),
    "cohesion": ("group", "feature", "importance"),
}


# --- the demo: the built-in examples --------------------------------------------------------------


def _ranking_demo(seed: int) -> tuple[str, Report]:
    intro = (
        "frameaudit demo: a search log of 20 queries x 30 results, intersectional groups "
        "(gender x age), generated with phi = 0.6: young women, the smallest group, are pushed "
        "towards the top."
    )
    log = datasets.ranking_example(seed=seed)
    result = report.ranking(
        log,
        group=["gender", "age"],
        ranking="query",
        item="item",
        relevance="relevance",
        ctr="ctr",
        relevant="relevant",
        # the relevance grades as judgments: the expected-exposure rows
        judgments=log.select("query", "item", "relevance").unique(),
        ci=0.95,
        n_boot=1000,
        seed=seed,
    )
    return intro, result


def _clustering_demo(seed: int) -> tuple[str, Report]:
    intro = (
        "Clustering fairness: a segmentation of 2,000 customers into 4 clusters; group a (30%) "
        "falls into the clusters unevenly (0.4, 0.3, 0.2, 0.1), group b evenly."
    )
    points = datasets.clustering_example(seed=seed)
    return intro, report.clustering(points, a="a", b="b", features=["x", "y"])


def _repro_demo(seed: int) -> tuple[str, Report]:
    intro = (
        "Reproducibility: 5 training runs predicting the same 1,000 samples; a fifth of the "
        "samples are hard and most runs get them wrong."
    )
    return intro, report.repro(datasets.runs_example(seed=seed))


def _explain_demo(seed: int) -> tuple[str, Report]:
    train, queries = datasets.cases_example(seed=seed)
    cases = explain.nearest_cases(
        train, queries, features=["f1", "f2"], label="label", k=7, carry="predicted"
    )
    intro = (
        "Case-based explanations: 200 test cases, their 7 nearest of 500 training cases, and a "
        "weaker model's predictions (it ignores one of the two features); in the importances "
        "example, group g1 follows the overall ranking and g2 reverses it."
    )
    importances = datasets.importance_example(seed=seed)
    return intro, report.explain(cases, importances, overall="overall")


def _compare_demo(seed: int) -> tuple[str, Comparison]:
    intro = (
        "Comparing systems: the same 20 queries ranked by the current ranker and by a "
        "fairness re-ranker that moves the over-exposed young women down a little. Is the "
        "re-ranker fairer, or is the difference noise? Paired over the queries; the gate asks "
        "that it be no less fair on the evidence."
    )
    comparison = compare.ranking(
        datasets.rankers_example(seed=seed),
        system="ranker",
        baseline="current",
        ranking="query",
        item="item",
        group=["gender", "age"],
        metrics=["exp", "ndkl"],
        seed=seed,
    )
    return intro, comparison.gate({"exp:MinMaxRatio": (">=", 0.0), "ndkl": ("<=", 0.0)})


_DEMOS: dict[str, Callable[[int], tuple[str, Report | Comparison]]] = {
    "ranking": _ranking_demo,
    "clustering": _clustering_demo,
    "repro": _repro_demo,
    "explain": _explain_demo,
    "compare": _compare_demo,
}


# --- the report: a file -------------------------------------------------------------------------


def _read(path: str, columns: dict[str, str]) -> pl.DataFrame:
    """The ``columns`` (name → option that named it) of a data file, checked against its schema."""
    file = Path(path)
    reader = _READERS.get(file.suffix.lower())
    if reader is None:
        msg = f"FILE={path!r}: expected a file ending in {', '.join(_READERS)}"
        raise InvalidParameterError(msg)
    if not file.is_file():
        msg = f"FILE={path!r}: no such file"
        raise InvalidParameterError(msg)
    try:
        lazy = reader(file)
        names = lazy.collect_schema().names()
        for column, option in columns.items():
            if column not in names:
                raise ColumnNotFoundError.build(
                    column, parameter=option, available=names, frame=path
                )
        frame = lazy.select(list(columns)).collect()
    except (pl.exceptions.PolarsError, OSError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        hint = ""
        if "utf-8" in first.lower() or "utf8" in first.lower():
            hint = "; the file is not UTF-8: re-encode it (e.g. iconv -f latin1 -t utf-8)"
        kind = file.suffix.lower().lstrip(".")
        msg = f"FILE={path!r}: cannot be read as {kind}: {first}{hint}"
        raise InvalidParameterError(msg) from None
    if not frame.height:
        # a CSV of a header alone reads its columns as text: their dtypes would be the error
        msg = f"FILE={path!r}: holds no rows (a header alone?); expected at least one row"
        raise InvalidParameterError(msg)
    return frame


def _typed(frame: pl.DataFrame, column: str, option: str, text: str) -> Any:
    """A value given on the command line, as a value of ``column``'s dtype."""
    dtype = frame.schema[column]
    booleans = {"true": True, "1": True, "false": False, "0": False}
    try:
        if dtype.is_integer():
            return int(text)
        if dtype.is_float():
            return float(text)
        if dtype == pl.Boolean:
            return booleans[text.lower()]
    except (ValueError, KeyError):
        msg = f"{option}={text!r}: expected a value of column {column!r} ({dtype})"
        raise InvalidParameterError(msg) from None
    return text


def _report(args: argparse.Namespace) -> Report:
    """Read the file(s) the arguments name and build the family's report."""
    family = args.family
    boot = {"ci": args.ci, "n_boot": args.n_boot, "seed": args.seed}
    if family == "explain":
        return _explain_report(args, boot)
    if args.ci is not None and family == "ranking" and args.ranking is None:
        msg = f"--ci={args.ci}: intervals resample the rankings; give --ranking"
        raise InvalidParameterError(msg)
    if args.ci is not None and family == "clustering" and args.point is None:
        msg = f"--ci={args.ci}: intervals resample the points; give --point"
        raise InvalidParameterError(msg)
    frame, arguments = _inputs(args, {})
    if family == "ranking" and args.reference is not None:
        reference = args.reference
        if reference not in ("largest", "best"):
            reference = _group_value(frame, args.group, reference, "--reference")
        arguments["reference"] = reference
    return getattr(report, family)(frame, **arguments, **boot)  # type: ignore[no-any-return]


def _compare(args: argparse.Namespace) -> Comparison:
    """Read the file the arguments name and compare its systems."""
    family = args.family
    unit = {"ranking": ("--ranking", "rankings"), "clustering": ("--point", "points")}
    if family in unit and getattr(args, unit[family][0][2:]) is None:
        option, units = unit[family]
        msg = f"{option}: a comparison pairs the systems' {units}; give the column naming them"
        raise InvalidParameterError(msg)
    if getattr(args, "reference", None) is not None:
        msg = "--reference: a report's option; a comparison sets each system against the baseline"
        raise InvalidParameterError(msg)
    if getattr(args, "judgments", None) is not None:
        msg = "--judgments: a report's option; compare expected exposure with fa.fair's by="
        raise InvalidParameterError(msg)
    frame, arguments = _inputs(args, {"--system": [args.system]})
    baseline = args.baseline
    if baseline is not None:
        baseline = _typed(frame, args.system, "--baseline", baseline)
    options = {
        "system": args.system,
        "baseline": baseline,
        "ci": args.ci,
        "n_boot": args.n_boot,
        "n_perm": args.n_perm,
        "seed": args.seed,
        "correction": None if args.correction == "none" else args.correction,
        "on_missing": args.on_missing,
    }
    if args.metrics is not None:
        options["metrics"] = args.metrics
    return getattr(compare, family)(frame, **arguments, **options)  # type: ignore[no-any-return]


def _inputs(
    args: argparse.Namespace, extra: dict[str, list[str | None]]
) -> tuple[pl.DataFrame, dict[str, Any]]:
    """The family's file (its role columns and ``extra``'s) and the builder's roles and options.

    The explanation family's here is the cases file (a comparison's).
    """
    family = args.family
    if family == "ranking":
        named = {
            "--rank": [args.rank],
            "--group": args.group,
            "--ranking": [args.ranking],
            "--item": [args.item],
            "--relevance": [args.relevance],
            "--ctr": [args.ctr],
            "--relevant": [args.relevant],
            "--by": args.by,
            "--weight": [args.weight],
            "--sample": [args.sample],
        }
        log = _read(args.file, _columns(named | extra))
        roles = {"rank": args.rank, "group": args.group, "ranking": args.ranking, "item": args.item}
        columns = {"relevance": args.relevance, "ctr": args.ctr, "relevant": args.relevant}
        options = {
            "universe": _universe(log, args.group, args.universe),
            "size": args.size,
            "target": _target(log, args.group, args.target),
            "by": args.by,
            "weight": args.weight,
            "p": args.p,
            "decay": args.decay,
        }
        if args.judgments is not None:
            options |= {"judgments": _judgments(args), "sample": args.sample}
        return log, {**roles, **columns, **options}
    if family == "clustering":
        named = {
            "--cluster": [args.cluster],
            "--group": [args.group],
            "--features": args.features,
            "--point": [args.point],
        }
        points = _read(args.file, _columns(named | extra))
        a = _typed(points, args.group, "--a", args.a)
        b = _typed(points, args.group, "--b", args.b)
        roles = {"cluster": args.cluster, "group": args.group, "point": args.point}
        return points, {**roles, "a": a, "b": b, "features": args.features}
    plain = _PLAIN_ROLES["repro" if family == "repro" else "correspondence"]
    roles = {r: getattr(args, r) for r in plain}
    named = {f"--{r}": [c] for r, c in roles.items()}
    # the repro report's multiplicity section: per group (--group), with a score (--score)
    section = {r: getattr(args, r, None) for r in ("group", "score") if family == "repro"}
    named |= {f"--{r}": [c] for r, c in section.items() if c is not None}
    roles |= {r: c for r, c in section.items() if c is not None}
    return _read(args.file, _columns(named | extra)), roles


def _judgments(args: argparse.Namespace) -> pl.DataFrame:
    """``--judgments FILE``: the query, item and relevance columns (and the groups, if held).

    The query and item columns are named as in the log (``--ranking``, ``--item``); a TREC
    qrels file (``.qrels``) names them ``query`` and ``item``.
    """
    if args.ranking is None or args.item is None:
        msg = "--judgments: expected exposure needs --ranking (the query column) and --item"
        raise InvalidParameterError(msg)
    reader = _READERS.get(Path(args.judgments).suffix.lower())
    held: list[str] = []
    if reader is not None and Path(args.judgments).is_file():
        try:
            held = reader(Path(args.judgments)).collect_schema().names()
        except (pl.exceptions.PolarsError, OSError, FrameAuditError):
            held = []  # read again below, for the error naming the file
    groups = args.group if set(args.group) <= set(held) else []
    named = {args.ranking: "--ranking", args.item: "--item", "relevance": "--judgments"}
    return _read(args.judgments, named | dict.fromkeys(groups, "--group"))


def _group_value(log: pl.DataFrame, groups: list[str], text: str, option: str) -> Any:
    """One group given on the command line: values of the group columns joined by '/'."""
    parts = text.split("/") if len(groups) > 1 else [text]
    if len(parts) != len(groups):
        msg = (
            f"{option}={text!r}: expected one value per group column ({', '.join(groups)}), "
            "joined by '/'"
        )
        raise InvalidParameterError(msg)
    values = tuple(_typed(log, g, option, part) for g, part in zip(groups, parts, strict=True))
    return values if len(values) > 1 else values[0]


def _universe(log: pl.DataFrame, groups: list[str], text: str | None) -> list[Any] | None:
    """``--universe a,b``: the groups the combos compare."""
    if text is None:
        return None
    return [_group_value(log, groups, name.strip(), "--universe") for name in text.split(",")]


def _target(log: pl.DataFrame, groups: list[str], text: str | None) -> dict[Any, float] | None:
    """``--target f=0.5,m=0.5``: NDKL's desired distribution."""
    if text is None:
        return None
    shares: dict[Any, float] = {}
    for pair in text.split(","):
        name, equals, share = pair.partition("=")
        try:
            value = float(share)
        except ValueError:
            value = math.nan
        if not equals or math.isnan(value):
            msg = f"--target={text!r}: expected GROUP=SHARE pairs separated by commas"
            raise InvalidParameterError(msg)
        shares[_group_value(log, groups, name.strip(), "--target")] = value
    return shares


def _explain_report(args: argparse.Namespace, boot: dict[str, Any]) -> Report:
    """The explanation report of a cases file, an importances file, or both."""
    if args.file is None and args.importances is None:
        msg = "FILE: expected a cases file, --importances FILE, or both"
        raise InvalidParameterError(msg)
    case_roles = {r: getattr(args, r) for r in ("query", "distance", "label", "predicted")}
    cohesion_roles = {r: getattr(args, r) for r in ("group", "feature", "importance")}
    cases = importances = None
    if args.file is not None:
        cases = _read(args.file, _columns({f"--{r}": [c] for r, c in case_roles.items()}))
    overall = None
    if args.importances is not None:
        named = {f"--{r}": [c] for r, c in cohesion_roles.items()}
        importances = _read(args.importances, _columns(named))
        if args.overall is None:
            msg = "--overall: expected the group value whose rows hold the overall ranking"
            raise InvalidParameterError(msg)
        overall = _typed(importances, args.group, "--overall", args.overall)
    return report.explain(
        cases, importances, **case_roles, **cohesion_roles, overall=overall, **boot
    )


_REQUIREMENT = re.compile(r"^\s*(?P<name>[^<>=\s]+)\s*(?P<op>>=|<=|>|<)\s*(?P<value>\S+)\s*$")
_BAND = re.compile(r"^\s*(?P<name>[^<>=\s]+)\s+within\s+(?P<low>[^,\s]+)\s*,\s*(?P<high>\S+)\s*$")


def _requirement(text: str) -> tuple[str, tuple[str, Any]]:
    """``METRIC:COMBO>=VALUE`` (or ``<=``, ``>``, ``<``), or ``METRIC:ratio within LOW,HIGH``."""
    band = _BAND.match(text)
    if band is not None:
        ends = [_number(band["low"]), _number(band["high"])]
        if None not in ends:
            return band["name"], ("within", tuple(ends))
    match = _REQUIREMENT.match(text)
    value = None if match is None else _number(match["value"])
    if match is None or value is None:
        msg = (
            f"--require={text!r}: expected METRIC:COMBO>=VALUE or METRIC<=VALUE "
            "(or > or <) with a number, e.g. exp:MinMaxRatio>=0.8, or a band, e.g. "
            "'exp:ratio within 0.8,1.25'"
        )
        raise argparse.ArgumentTypeError(msg)
    return match["name"], (match["op"], value)


def _number(text: str) -> float | None:
    """``text`` as a number; None where it is none (or NaN)."""
    try:
        value = float(text)
    except ValueError:
        return None
    return None if math.isnan(value) else value


def _formatted(result: Report | Comparison, form: str) -> str:
    """The report as text, JSON, HTML or Markdown, ending with a newline."""
    text = {
        "json": result.to_json,
        "html": result.to_html,
        "markdown": result.to_markdown,
    }.get(form, result.__str__)()
    return text if text.endswith("\n") else text + "\n"


def _emit(text: str, output: str | None) -> None:
    """``text`` to ``output`` (whole or not at all) or to standard output."""
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        write_atomically(output, text)


def _writable(output: str | None) -> None:
    """Refuse, before any work, an ``--output`` that cannot be written."""
    if output is None:
        return
    path = Path(output)
    if path.is_dir():
        msg = f"--output={output!r}: is a folder; give a file path"
        raise InvalidParameterError(msg)
    folder = path.parent if str(path.parent) else Path()
    if not folder.is_dir():
        msg = f"--output={output!r}: the folder {str(folder)!r} does not exist"
        raise InvalidParameterError(msg)
    if not os.access(folder, os.W_OK):
        msg = f"--output={output!r}: the folder {str(folder)!r} is not writable"
        raise InvalidParameterError(msg)


_STATUS = {"pass": 0, "fail": 1, "inconclusive": 3}
_SAID = {"pass": "passed", "fail": "FAILED", "inconclusive": "INCONCLUSIVE"}


def _gate(
    result: Report | Comparison, requirements: list[tuple[str, tuple[str, Any]]]
) -> tuple[Report | Comparison, int]:
    """The report (or comparison) with its gate and its outcome's exit status.

    Each verdict is printed on standard error, with its partition and, for a comparison, its
    system.
    """
    if not requirements:
        return result, 0
    gated: Report | Comparison = result.gate(dict(requirements))
    assert gated.verdicts is not None
    assert gated.outcome is not None
    # a comparison's rule names its group; a report's ratio rule reads every group's
    columns = gated.verdicts.columns
    by = [*gated.by, "system" if "system" in columns else "group"]
    for row in gated.verdicts.iter_rows(named=True):
        where = "".join(f" [{c}={row[c]!r}]" for c in by if row[c] is not None)
        note = f" ({row['note']})" if row["note"] else ""
        print(
            f"frameaudit: {_SAID[row['outcome']]}: {row['requirement']}{where} = "
            f"{read_by(row)}, required {row['rule']}{note}",
            file=sys.stderr,
        )
    return gated, _STATUS[gated.outcome]


def _columns(named: dict[str, list[str | None]]) -> dict[str, str]:
    """Column name → the option that named it, for the options that were given."""
    return {c: option for option, columns in named.items() for c in columns or [] if c}


def _names(text: str) -> list[str]:
    """Column names separated by commas."""
    return [name.strip() for name in text.split(",")]


def _output_options(parser: argparse.ArgumentParser) -> None:
    """The options every report shares: its format and destination."""
    parser.add_argument(
        "--format",
        choices=["text", "json", "html", "markdown"],
        default="text",
        help="text for a terminal, JSON (plain types, see the documented schema), one "
        "self-contained HTML page with charts, or Markdown for a pull request or model card "
        "(default: text); every format records the audit (rules, verdicts, parameters, "
        "input, versions, time)",
    )
    parser.add_argument(
        "--output",
        metavar="PATH",
        help="write the report to PATH, whole or not at all (default: standard output)",
    )


def _gate_options(parser: argparse.ArgumentParser, unit: str, needs: str) -> None:
    """The options of intervals and audit gates."""
    parser.add_argument(
        "--ci",
        type=float,
        metavar="LEVEL",
        help=f"add bootstrap intervals at this level, e.g. 0.95, resampling the {unit}"
        f"{needs} (default: no intervals)",
    )
    parser.add_argument(
        "--n-boot", type=int, default=1000, help="bootstrap replicates with --ci (default 1000)"
    )
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    _require_option(
        parser,
        "an audit gate such as exp:MinMaxRatio>=0.8 or ndkl<=0.2 (repeatable); with "
        "--ci a rule reads the interval (name .value, .lo or .hi after the metric to read one "
        "number): exit 1 when any fails, 3 when none fails but one is inconclusive, 2 for an "
        "unknown metric or combo (default: no gate)",
    )


def _require_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    """``--require RULE``, repeatable: the audit gate."""
    parser.add_argument(
        "--require",
        type=_requirement,
        action="append",
        default=[],
        metavar="RULE",
        help=help_text,
    )


_EXITS = (
    "0 when it ran and every --require passes, 1 when one fails, 3 when none fails but one is "
    "inconclusive, 2 for a usage or data error."
)
_COMMANDS = {
    "report": (
        "run a metric family on a data file and print a report",
        "Run a metric family on a Parquet, CSV, Arrow IPC or NDJSON file. The options name the "
        "file's columns; their defaults are frameaudit's role names.",
    ),
    "compare": (
        "compare systems evaluated on the same units of a data file",
        "Compare the systems of a Parquet, CSV, Arrow IPC or NDJSON file that holds every "
        "system's rows, --system naming the column that tells them apart: for each metric, "
        "each system's value, its difference from the baseline system with a paired bootstrap "
        "interval, and a paired randomisation test's p-value, adjusted for the number of "
        "differences.",
    ),
}


def _file_parsers(commands: Any) -> None:
    """``report`` and ``compare``: a file's family, its roles and options."""
    for name, (summary, description) in _COMMANDS.items():
        command = commands.add_parser(
            name, help=summary, description=f"{description} Exit status: {_EXITS}"
        )
        _family_parsers(command, name)


def _family_parsers(command: argparse.ArgumentParser, name: str) -> None:
    """The families of ``report`` or ``compare``: their files, roles and options."""
    families = command.add_subparsers(dest="family", required=True, metavar="FAMILY")

    def family(family: str, rows: str, units: str, needs: str = "") -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = families.add_parser(family, help=rows)
        if family != "explain" or name == "compare":
            layout = rows.partition(": ")[2]  # "one row per ..."
            parser.add_argument("file", metavar="FILE", help=f"the data file, {layout}")
        _output_options(parser)
        if name == "compare":
            _compare_options(parser, units)
        else:
            _gate_options(parser, units, needs)
        return parser

    ranking = family(
        "ranking", "fair ranking: one row per ranked item", "rankings", " (needs --ranking)"
    )
    _ranking_options(ranking)
    clustering = family(
        "clustering", "clustering fairness: one row per point", "points", " (needs --point)"
    )
    _clustering_options(clustering)
    repro_ = family("repro", "reproducibility: one row per (run, sample)", "samples")
    for role in _PLAIN_ROLES["repro"]:
        repro_.add_argument(f"--{role}", default=role, help=f"{role} column (default: {role})")
    if name != "compare":
        repro_.add_argument(
            "--group",
            help="protected-group column, the same in every run of a sample: the multiplicity "
            "metrics per group (churn, flips, ambiguity, discrepancy, self-consistency)",
        )
        repro_.add_argument("--score", help="score column in [0, 1]: adds the score range")
    if name == "compare":
        cases = family(
            "explain", "case-based correspondence: one row per (query, neighbour)", "queries"
        )
        for role in _PLAIN_ROLES["correspondence"]:
            cases.add_argument(f"--{role}", default=role, help=f"{role} column (default: {role})")
        return
    explain_ = family(
        "explain",
        "case-based correspondence (one row per query and neighbour) and explanation cohesion "
        "(one row per group and feature)",
        "queries",
    )
    _explain_options(explain_)


def _compare_options(parser: argparse.ArgumentParser, units: str) -> None:
    """The options of a comparison: the systems, the intervals, the test and the gates."""
    parser.add_argument("--system", required=True, help="the column naming each row's system")
    parser.add_argument(
        "--baseline",
        help="the system the others are compared with (default: the first in sort order)",
    )
    parser.add_argument(
        "--metrics",
        type=_names,
        help="the metrics to compare, separated by commas (default: every metric of the "
        "family the columns allow)",
    )
    parser.add_argument(
        "--ci",
        type=float,
        default=0.95,
        metavar="LEVEL",
        help=f"the level of the paired bootstrap intervals over the {units} (default 0.95)",
    )
    parser.add_argument(
        "--n-boot", type=int, default=1000, help="bootstrap replicates (default 1000)"
    )
    parser.add_argument(
        "--n-perm",
        type=int,
        default=1000,
        help="permutations of the randomisation test (default 1000)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the draws (default 0)")
    parser.add_argument(
        "--correction",
        choices=["holm", "bh", "none"],
        default="holm",
        help="the p-values' adjustment for the number of differences: Holm (the chance of any "
        "false finding), Benjamini-Hochberg (the share of false findings) or none "
        "(default: holm)",
    )
    parser.add_argument(
        "--on-missing",
        choices=["error", "drop"],
        default="error",
        help=f"{units} some system lacks: an error naming a few, or left out (default: error)",
    )
    _require_option(
        parser,
        "an audit gate on each system's row (repeatable): exp:MinMaxRatio>=0 reads the "
        "difference's interval (pass when all of it holds, fail when none does, inconclusive "
        "when it straddles the bound); name one number after the row to read it, e.g. "
        "exp:MinMaxRatio.p_adjusted<0.05 or ndkl.value<=0.2 (.difference, .lo, .hi, .value, "
        ".baseline_value, .p_value, .p_adjusted); a per-group row is exp:GROUP. Exit 1 when "
        "any fails, 3 when none fails but one is inconclusive (default: no gate)",
    )


def _ranking_options(ranking: argparse.ArgumentParser) -> None:
    """The fair-ranking report's column roles and options."""
    ranking.add_argument("--rank", default="rank", help="1-based position column (default: rank)")
    ranking.add_argument(
        "--group",
        type=_names,
        default=["group"],
        help="group column, or columns separated by commas for intersectional groups "
        "(default: group)",
    )
    ranking.add_argument(
        "--ranking", help="column identifying the rankings (default: all rows are one ranking)"
    )
    ranking.add_argument(
        "--item", help="item id column; group sizes then count distinct items (default: rows)"
    )
    ranking.add_argument(
        "--relevance", help="relevance in [0, 1]; adds EXPU and IAA (default: left out)"
    )
    ranking.add_argument(
        "--ctr",
        help="click-through rate in [0, 1]; with --relevance adds EXPRU (default: left out)",
    )
    ranking.add_argument(
        "--relevant", help="binary relevance, 0 or 1; adds ERBR (default: left out)"
    )
    ranking.add_argument(
        "--universe",
        metavar="GROUPS",
        help="the groups the combos compare, separated by commas (intersectional groups as "
        "f/young); a listed group the data lacks reads as absent, never as parity (default: "
        "every group of the file)",
    )
    ranking.add_argument(
        "--size",
        choices=["items", "rows"],
        help="what a group size counts: distinct items (needs --item) or rows (default: items "
        "with --item; with several rankings and no --item, give --size rows)",
    )
    ranking.add_argument(
        "--target",
        metavar="SHARES",
        help="NDKL's desired distribution as GROUP=SHARE pairs separated by commas, shares "
        "summing to 1 (default: the groups' shares in the file)",
    )
    ranking.add_argument(
        "--by",
        type=_names,
        help="column(s) separated by commas: one report section per partition, e.g. a market",
    )
    ranking.add_argument(
        "--weight", help="the rankings' unit weights, e.g. a query's traffic (default: none)"
    )
    ranking.add_argument(
        "--reference",
        metavar="GROUP",
        help="report only: the reference group each group is set against, largest, best or "
        "a group (f/young for several group columns), for rules such as "
        "'exp:ratio within 0.8,1.25' (default: none)",
    )
    ranking.add_argument(
        "--judgments",
        metavar="FILE",
        help="report only: graded judgments, a TREC qrels file (.qrels) or a data file with "
        "the --ranking and --item columns and 'relevance'; adds EE-L, EE-D and EE-R, per group "
        "where the file holds the --group column(s) (needs --ranking and --item)",
    )
    ranking.add_argument(
        "--sample",
        help="with --judgments: the column numbering a query's sampled rankings (a stochastic "
        "ranker's run, e.g. a TREC run file's second field 'sample')",
    )
    ranking.add_argument("--p", type=float, default=0.5, help="AWRF's p in (0, 1] (default 0.5)")
    ranking.add_argument(
        "--decay", type=float, default=0.5, help="ERBE/ERBP/ERBR's decay in [0, 1) (default 0.5)"
    )


def _clustering_options(clustering: argparse.ArgumentParser) -> None:
    """The clustering report's column roles and compared groups."""
    clustering.add_argument(
        "--cluster", default="cluster", help="cluster label column (default: cluster)"
    )
    clustering.add_argument(
        "--group", default="group", help="protected attribute column (default: group)"
    )
    clustering.add_argument("--a", required=True, help="the first compared group value")
    clustering.add_argument("--b", required=True, help="the second compared group value")
    clustering.add_argument(
        "--features",
        type=_names,
        help="numeric feature columns separated by commas; adds the distance metrics "
        "(default: left out)",
    )
    clustering.add_argument("--point", help="point id column, for --ci (default: none)")


def _explain_options(explain_: argparse.ArgumentParser) -> None:
    """The explanation report's files and column roles."""
    explain_.add_argument(
        "file",
        metavar="FILE",
        nargs="?",
        help="the cases file: one row per (query, neighbour) (default: none, with --importances)",
    )
    explain_.add_argument(
        "--importances",
        metavar="FILE",
        help="the importances file: one row per (group, feature) (default: none)",
    )
    for role in ("query", "distance", "label", "predicted", "group", "feature", "importance"):
        explain_.add_argument(f"--{role}", default=role, help=f"{role} column (default: {role})")
    explain_.add_argument(
        "--overall",
        help="with --importances: the group value whose rows hold the overall ranking",
    )


def _installed_version() -> str:
    """The version of the installed frameaudit distribution (its metadata, not the source)."""
    try:
        return metadata.version("frameaudit")
    except metadata.PackageNotFoundError:
        return "(not installed: no package metadata; pip install -e .)"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``frameaudit`` command.

    Returns 0 (done, every gate holds), 1 (a gate failed) or 2 (a usage or data error).
    """
    parser = argparse.ArgumentParser(
        prog="frameaudit",
        description=DESCRIPTION,
        epilog=EXIT_STATUS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_installed_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo", help="run the metrics on a built-in example and print a report"
    )
    demo.add_argument(
        "family",
        nargs="?",
        default="ranking",
        choices=[*_DEMOS, "all"],
        help="the metric family to show (default: ranking)",
    )
    demo.add_argument("--seed", type=int, default=0, help="seed of the example data (default 0)")
    _output_options(demo)
    _file_parsers(commands)
    args = parser.parse_args(argv)
    shown = _tables.SHOW_PROGRESS.set(sys.stderr.isatty())  # a log or a pipe gets no bar
    try:
        return _command(args)
    finally:
        _tables.SHOW_PROGRESS.reset(shown)


def _command(args: argparse.Namespace) -> int:
    """The command ``args`` name: a file's report or comparison, or a demo."""
    if args.command in ("report", "compare"):
        return _file_command(args)
    families = list(_DEMOS) if args.family == "all" else [args.family]
    if args.format == "text":
        demos = (_DEMOS[family](args.seed) for family in families)
        shown = [f"{textwrap.fill(intro, 96)}\n\n{result}" for intro, result in demos]
        text = "\n\n\n".join(shown)
        if args.family == "ranking":
            text += (
                "\n\nThe other families: frameaudit demo clustering | repro | explain | all"
                "\nTwo rankers compared (is the new one fairer?): frameaudit demo compare"
            )
        return _written("demo", lambda: _emit(text + "\n", args.output))
    if len(families) > 1:
        print(f"frameaudit demo: error: --format {args.format} shows one family", file=sys.stderr)
        return 2
    made = _DEMOS[families[0]](args.seed)[1]
    return _written("demo", lambda: _emit(_formatted(made, args.format), args.output))


def _file_command(args: argparse.Namespace) -> int:
    """``frameaudit report`` or ``compare``: the result, its gate, written; the exit status."""
    command = args.command
    try:
        _writable(args.output)
        result: Report | Comparison = _report(args) if command == "report" else _compare(args)
        result = dataclasses.replace(result, record=_with_file(result.record, args))
        gated, status = _gate(result, args.require)
        text = _formatted(gated, args.format)
    except FrameAuditError as error:
        print(f"frameaudit {command}: error: {_hinted(error, args)}", file=sys.stderr)
        return 2
    written = _written(command, lambda: _emit(text, args.output))
    return written or status


def _written(command: str, write: Callable[[], None]) -> int:
    """Run ``write``; 0, or 2 with one error line where the output cannot be written."""
    try:
        write()
    except OSError as error:  # a full disk, a size limit, a closed standard output
        if isinstance(error, BrokenPipeError):
            # the reader went away: no more output (Python's own flush at exit would fail)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        where = error.filename or "standard output"
        reason = error.strerror or type(error).__name__
        print(f"frameaudit {command}: error: cannot write {where}: {reason}", file=sys.stderr)
        return 2
    return 0


def _with_file(record: Mapping[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """The audit record with the files the report was read from."""
    source = dict(record.get("source", {}))
    files = [f for f in (getattr(args, "file", None), getattr(args, "importances", None)) if f]
    source = {"files": [str(Path(f).resolve()) for f in files], **source}
    source["filters"] = []  # the command reads every row of the file
    return {**record, "source": source}


def _hinted(error: FrameAuditError, args: argparse.Namespace) -> str:
    """The error, with the option a user most likely forgot."""
    text = str(error)
    unnamed = getattr(args, "family", None) == "ranking" and getattr(args, "ranking", 0) is None
    if unnamed and "ranking(s) repeat a value" in text:
        text += (
            "; the file seems to hold several rankings: name the column identifying them "
            "with --ranking"
        )
    return text


if __name__ == "__main__":
    raise SystemExit(main())
