"""The suite's scheduler sends the work pytest-xdist's ``loadgroup`` sends (tests/scheduling.py).

Both schedulers are driven through the same run: two workers, a collection with two groups
and single tests, and at each step a worker drawn at random (seeded) finishing its oldest
test. What each worker is sent and when the workers are told to stop must be the same,
every test must run once and a group on one worker. With a worker crashing: the same up to
the crash and the same test blamed; then every test not yet run runs once (what is sent when
differs: ``loadgroup`` puts the crashed worker's finished units back in the queue and spends
turns sending them empty, where ours no longer holds them).
"""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest
from scheduling import Scheduler
from xdist.scheduler import LoadGroupScheduling


class _Worker:
    """What a scheduler sees of a worker: it records what it is sent."""

    def __init__(self, name: str) -> None:
        self.gateway = SimpleNamespace(id=name)
        self.shutting_down = False
        self.sent: list[int] = []
        self.log: list[Any] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent += indices
        if indices:  # after a crash, loadgroup sends the crashed worker's finished units empty
            self.log.append(("some", tuple(indices)))

    def send_runtest_all(self) -> None:  # pragma: no cover (not loadgroup's)
        self.log.append("all")

    def shutdown(self) -> None:
        self.shutting_down = True
        self.log.append("shutdown")


def _collection(seed: int) -> list[str]:
    """Single tests and two groups (``@spark``, ``@site``) interleaved, as the suite's are."""
    rng = random.Random(seed)
    names = []
    for i in range(300):
        group = rng.choice(["", "", "", "", "@spark", "@site"])
        names.append(f"tests/test_m{i % 7}.py::test_{i}[{rng.randint(0, 9)}]{group}")
    return names


def _config() -> Any:
    option = SimpleNamespace(loadscopereorder=True)
    values = {"tx": ["2*popen"], "dist": "loadgroup"}
    return SimpleNamespace(option=option, getvalue=values.__getitem__)


class _Quiet:
    """A log that writes nothing (xdist's default prints every decision)."""

    def __getattr__(self, name: str) -> _Quiet:
        return self

    def __call__(self, *args: object) -> None:
        pass


def _run(kind: type[LoadGroupScheduling], seed: int, crash_after: int | None) -> dict[str, Any]:
    """Drive ``kind`` through a run: what each worker was sent (and before the crash), which
    tests ran, and what the crash returned."""
    collection = _collection(seed)
    scheduler = kind(_config(), _Quiet())
    workers = [_Worker("gw0"), _Worker("gw1")]
    for worker in workers:
        scheduler.add_node(worker)
    for worker in workers:
        scheduler.add_node_collection(worker, collection)
    scheduler.schedule()
    done = {w.gateway.id: 0 for w in workers}
    ran: list[int] = []
    crashed: Any = None
    before: Any = None
    rng = random.Random(seed)
    while live := [w for w in workers if done[w.gateway.id] < len(w.sent)]:
        worker = rng.choice(live)
        if len(ran) == crash_after and crashed is None:
            before = {w.gateway.id: list(w.log) for w in workers}
            crashed = scheduler.remove_node(worker)
            workers.remove(worker)
            spare = _Worker("gw2")
            workers.append(spare)
            done["gw2"] = 0
            scheduler.add_node(spare)
            scheduler.add_node_collection(spare, collection)
            scheduler.schedule()
            continue
        index = worker.sent[done[worker.gateway.id]]
        scheduler.mark_test_complete(worker, index)
        ran.append(index)
        done[worker.gateway.id] += 1
    return {
        "logs": {w.gateway.id: w.log for w in workers},
        "before": before,
        "crashed": crashed,
        "ran": sorted(ran),
        "finished": scheduler.tests_finished,
        "groups": {  # the workers (the crashed one left out) that were sent a group's tests
            group: {
                w.gateway.id
                for w in workers
                for entry in w.log
                if entry != "shutdown"
                for i in entry[1]
                if collection[i].endswith(group)
            }
            for group in ("@spark", "@site")
        },
    }


@pytest.mark.parametrize("seed", range(4))
def test_the_suite_scheduler_sends_what_loadgroup_sends(seed: int) -> None:
    ours = _run(Scheduler, seed, None)
    assert ours == _run(LoadGroupScheduling, seed, None)
    assert ours["finished"]
    assert ours["ran"] == list(range(300))  # every test once
    assert all(len(workers) == 1 for workers in ours["groups"].values())  # a group on one worker


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("crash_after", [5, 120])
def test_after_a_crash_the_rest_runs_once(seed: int, crash_after: int) -> None:
    """Up to the crash the same, and the crash blamed on the same test; then every test that
    had not run runs once, a group still on one worker (what is sent when differs: loadgroup
    spends turns on its empty units)."""
    ours = _run(Scheduler, seed, crash_after)
    theirs = _run(LoadGroupScheduling, seed, crash_after)
    assert ours["before"] == theirs["before"]
    assert ours["crashed"] == theirs["crashed"] is not None
    assert all(len(workers) <= 1 for workers in ours["groups"].values())
    assert ours["finished"]
    assert ours["ran"] == list(range(300))
