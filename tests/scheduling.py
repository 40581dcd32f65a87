"""pytest-xdist's ``--dist loadgroup``, at a cost linear in the number of tests.

The suite runs with ``--dist loadgroup`` (the PySpark tests share one worker's JVM, the
documentation tests one build of the site). xdist's scheduler for it keeps every finished
test in the worker's workload and counts the whole workload again each time a test ends
(pytest-dev/pytest-xdist#279, open since 2018), and finds each test it sends by a search of
the collection: both quadratic in the number of tests. On this suite's 20,000 tests that was
the controller's largest cost, and a worker waits for the controller before its next test
(20,000 trivial tests: 47 core-seconds with ``loadgroup``, 28 with ``load``).

:class:`Scheduler` is the same schedule (the same work units, in the same order, sent on the
same condition) with a finished unit dropped from its worker's workload and the collection
indexed once.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from xdist.remote import Producer
from xdist.scheduler import LoadGroupScheduling
from xdist.workermanage import WorkerController


class Scheduler(LoadGroupScheduling):
    """``--dist loadgroup`` (see the module's docstring for what differs: the cost only)."""

    def __init__(self, config: pytest.Config, log: Producer | None = None) -> None:
        super().__init__(config, log)
        self._positions: dict[WorkerController, dict[str, int]] = {}

    def add_node_collection(self, node: WorkerController, collection: Sequence[str]) -> None:
        super().add_node_collection(node, collection)
        if node in self.registered_collections:
            self._positions[node] = {nodeid: i for i, nodeid in enumerate(collection)}

    def mark_test_complete(
        self,
        node: WorkerController,
        item_index: int,
        duration: float = 0,  # noqa: ARG002 (xdist's signature)
    ) -> None:
        nodeid = self.registered_collections[node][item_index]
        scope = self._split_scope(nodeid)
        workload = self.assigned_work[node]
        workload[scope][nodeid] = True
        if all(workload[scope].values()):
            # finished: nothing reads it again (a crashed worker's pending work is the
            # unfinished units of its workload)
            del workload[scope]
        self._reschedule(node)

    def _assign_work_unit(self, node: WorkerController) -> None:
        scope, work_unit = self.workqueue.popitem(last=False)
        self.assigned_work.setdefault(node, {})[scope] = work_unit
        positions = self._positions[node]
        node.send_runtest_some([positions[n] for n, done in work_unit.items() if not done])
