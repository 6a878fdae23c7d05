"""The thread-count block the training builds and the perf measurements use, and the cores the demo's process keeps
off while its build runs, and a generator run ahead of its consumer on a thread."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from bench.devkit.threads import CoresLeft, ahead, torch_threads

ROOT = Path(__file__).resolve().parents[2]


def test_torch_threads_sets_the_count_inside_and_restores_it_after_an_error():
    before = torch.get_num_threads()
    other = 1 if before != 1 else 2
    with pytest.raises(RuntimeError, match="inside"):
        with torch_threads(other):
            assert torch.get_num_threads() == other
            raise RuntimeError("inside")
    assert torch.get_num_threads() == before


CONFINED = """
import os, subprocess, sys, threading
from bench.devkit.threads import CoresLeft
everything = os.sched_getaffinity(0)
cores = CoresLeft(1)
assert cores.confine()
mine = os.sched_getaffinity(0)
seen = []
thread = threading.Thread(target=lambda: seen.append(os.sched_getaffinity(0)))
thread.start(); thread.join()
child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
started = os.sched_getaffinity(child.pid)
cores.give_back()
back, child_back = os.sched_getaffinity(0), os.sched_getaffinity(child.pid)
child.communicate(b"")
cores.give_back()
print(len(everything), len(mine), len(seen[0]), len(started), back == everything, child_back == everything,
      mine < everything)
"""


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs CPU affinity and two CPUs")
def test_a_process_keeps_off_the_cores_it_leaves_threads_and_children_included_until_it_gives_them_back():
    done = subprocess.run([sys.executable, "-c", CONFINED], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    cpus, mine, thread, child, back, child_back, fewer = done.stdout.split()
    assert int(mine) == int(thread) == int(child) == int(cpus) - 1 and fewer == "True"
    assert back == child_back == "True"


def test_a_build_that_ends_before_the_cores_are_left_leaves_nothing_confined():
    cores = CoresLeft(1)
    before = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    cores.give_back()
    assert not cores.confine()
    assert before is None or os.sched_getaffinity(0) == before


def test_ahead_yields_every_item_in_order_made_on_another_thread():
    import threading

    made_on = []

    def items():
        for i in range(50):
            made_on.append(threading.current_thread().name)
            yield i

    assert list(ahead(items(), "maker")) == list(range(50))
    assert set(made_on) == {"maker"}


def test_ahead_raises_the_makers_error_when_its_item_is_due():
    def items():
        yield 1
        yield 2
        raise ValueError("the third item failed")

    got = ahead(items())
    assert [next(got), next(got)] == [1, 2]
    with pytest.raises(ValueError, match="the third item failed"):
        next(got)


def test_ahead_stops_making_when_the_consumer_stops():
    import time

    made = []

    def items():
        for i in range(1000):
            time.sleep(0.002)
            made.append(i)
            yield i

    got = ahead(items())
    assert next(got) == 0
    got.close()
    time.sleep(0.2)
    settled = len(made)
    time.sleep(0.2)
    assert len(made) == settled < 1000


def test_ahead_starts_making_before_the_first_item_is_asked_for():
    import threading

    started = threading.Event()

    def items():
        started.set()
        yield 1

    got = ahead(items())
    assert started.wait(5)  # made while the consumer does other work
    assert list(got) == [1]
