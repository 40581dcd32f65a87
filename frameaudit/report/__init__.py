"""Reports people read: every metric of a family on one frame, with charts, HTML and JSON.

``frameaudit.report.ranking(frame, ...)`` returns a :class:`Report`: the per-group values, every
combo computed from them, the groups (or rankings) furthest from parity, audit gates
(:meth:`Report.check`), charts (Altair), a self-contained HTML file and JSON. Charts and HTML
need the ``report`` extra (``altair``, ``vl-convert-python``); the tables do not.
"""

from __future__ import annotations

from frameaudit.report._clustering import clustering
from frameaudit.report._explain import explain
from frameaudit.report._ranking import ranking
from frameaudit.report._report import Report, json_schema, write_atomically
from frameaudit.report._repro import repro

__all__ = [
    "Report",
    "clustering",
    "explain",
    "json_schema",
    "ranking",
    "repro",
    "write_atomically",
]
