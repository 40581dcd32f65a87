"""The kernels' progress bar (tqdm): counted from worker threads, closed on error, opt-in."""

from __future__ import annotations

import pytest
from conftest import final_bar

from frameaudit._kernels import _shared


def test_steps_from_many_threads_are_all_counted(capsys: pytest.CaptureFixture[str]) -> None:
    threads, steps = 4, 2_000
    with _shared.Progress(threads * steps, "work", enabled=True, unit="items") as bar:

        def work(_: int) -> None:
            for _ in range(steps):
                bar.step()

        _shared.in_parallel(work, threads)
    last, done, total = final_bar(capsys.readouterr().err)
    assert last.startswith("work: 100%|")
    assert done == total == threads * steps
    assert " items/s]" in last


def test_the_bar_is_closed_when_a_worker_raises(capsys: pytest.CaptureFixture[str]) -> None:
    def work(worker: int) -> None:
        bar.step()
        if worker == 1:
            msg = "boom"
            raise RuntimeError(msg)

    with (
        pytest.raises(RuntimeError, match="boom"),
        _shared.Progress(10, "failing", enabled=True) as bar,
    ):
        _shared.in_parallel(work, 2)
    last, done, total = final_bar(capsys.readouterr().err)  # closed: the last state drawn
    assert last.startswith("failing:  20%|")
    assert (done, total) == (2, 10)
    bar.step()  # a late step after closing is ignored, not an error
    assert capsys.readouterr().err == ""


def test_disabled_shows_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with _shared.Progress(3, "quiet", enabled=False) as bar:
        for _ in range(3):
            bar.step()
    assert capsys.readouterr().err == ""
