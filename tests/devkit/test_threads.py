"""The thread-count block the training builds and the perf measurements use, and the cores the demo's process keeps
off while its build runs."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from bench.devkit.threads import CoresLeft, torch_threads

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
