"""analysis.parallel: --jobs forks workers that compute part k in process k mod jobs; the
results come back in the order of the parts, errors reach the parent, no process outlives
the run."""

import multiprocessing
import os
import signal

import pytest

from tinyadder.analysis.parallel import each_share, run_shares, shares


def square_and_pid(part):
    return part * part, os.getpid()


@pytest.mark.parametrize("jobs", [1, 2, 3, 5])
def test_the_results_are_in_the_order_of_the_parts_for_any_jobs(jobs):
    got = run_shares(square_and_pid, list(range(7)), jobs)
    assert [value for value, _ in got] == [k * k for k in range(7)]
    pids = [pid for _, pid in got]
    if jobs == 1:
        assert set(pids) == {os.getpid()}
    else:  # part k in process k mod jobs, none in this one
        assert os.getpid() not in pids
        assert all(pids[k] == pids[k % jobs] for k in range(7))
        assert len(set(pids)) == min(jobs, 7)
    assert multiprocessing.active_children() == []


def test_shares_deal_the_items_round_robin():
    assert shares(list(range(7)), 3) == [[0, 3, 6], [1, 4], [2, 5]]
    assert shares([1], 4) == [[1]]


def fail_on_three(part):
    if part == 3:
        raise ValueError(f"part {part} is bad")
    return part


def test_a_workers_exception_is_raised_in_the_parent_after_the_parts_before_it():
    got = []
    with pytest.raises(ValueError, match="part 3 is bad"):
        for value in each_share(fail_on_three, list(range(6)), 2):
            got.append(value)
    assert got == [0, 1, 2]
    assert multiprocessing.active_children() == []


def die_on_two(part):
    if part == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return part


def test_a_worker_that_dies_is_a_clear_error_not_a_hang():
    with pytest.raises(RuntimeError, match=r"worker process \d+ ended \(exit status -9\) "
                                           r"before its part 2 was done"):
        run_shares(die_on_two, list(range(4)), 2)
    assert multiprocessing.active_children() == []


def test_stopping_early_ends_the_workers():
    results = each_share(square_and_pid, list(range(50)), 2)
    assert next(results)[0] == 0
    results.close()
    assert multiprocessing.active_children() == []
