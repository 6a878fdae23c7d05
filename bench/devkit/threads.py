"""torch's intra-op thread count set for a block and restored after (training builds, perf measurements), the CPUs
the demo's own process keeps off while a build runs beside it, and a generator run ahead of its consumer on a thread."""

from __future__ import annotations

import contextlib
import os
import queue
import threading
from typing import Iterator, TypeVar

import torch

T = TypeVar("T")


@contextlib.contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """torch's intra-op threads at ``count`` inside the block, restored after."""
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def leave_cores(count: int) -> set[int] | None:
    """Confine every thread of this process (and the threads and processes it starts from now on) to all but
    ``count`` of its CPUs, so that a process beside it (the demo's build) has ``count`` cores that this one never
    takes, whatever threads it runs; the CPUs it had, for :func:`give_back` (None: nothing confined, where the platform
    sets no affinity or no CPU would be left)."""
    if count < 1 or not hasattr(os, "sched_setaffinity"):
        return None
    had = os.sched_getaffinity(0)
    if len(had) <= count:
        return None
    _confine(os.getpid(), set(sorted(had)[count:]))
    return had


def give_back(cpus: set[int]) -> None:
    """Every thread of this process and of the processes it started (:func:`leave_cores`) on ``cpus`` again."""
    import psutil

    _confine(os.getpid(), cpus)
    for child in psutil.Process().children(recursive=True):
        _confine(child.pid, cpus)


def _confine(pid: int, cpus: set[int]) -> None:
    """Every thread of process ``pid`` on ``cpus`` (a thread's affinity is its own; new threads take their parent
    thread's)."""
    try:
        threads = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        threads = [pid]
    for tid in threads:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.sched_setaffinity(tid, cpus)


class CoresLeft:
    """:func:`leave_cores` until :meth:`give_back`, which may come from another thread, before or after
    :meth:`confine` (a build that ends at once leaves nothing confined)."""

    def __init__(self, count: int):
        self.count = count
        self._lock = threading.Lock()
        self._had: set[int] | None = None
        self._back = False

    def confine(self) -> bool:
        """Leave ``count`` cores to the process beside this one (unless given back already); whether any were."""
        with self._lock:
            if not self._back and self._had is None:
                self._had = leave_cores(self.count)
            return self._had is not None and not self._back

    def give_back(self) -> None:
        """Every CPU to this process and the processes it started again (once; nothing when none was left)."""
        with self._lock:
            if not self._back and self._had is not None:
                give_back(self._had)
            self._back = True


def ahead(items: Iterator[T], name: str = "ahead") -> Iterator[T]:
    """``items`` in order, each made on a thread of its own, started now, as far ahead of the consumer as it gets (work
    that leaves the GIL, such as torch's kernels, goes on beside it). An error raised making an item is raised here
    when that item is due; when the consumer stops early, the thread stops at its next item."""
    made: queue.SimpleQueue = queue.SimpleQueue()
    stop = threading.Event()

    def make() -> None:
        try:
            for item in items:
                if stop.is_set():
                    return
                made.put((item, None))
        except BaseException as error:  # handed to the consumer, raised there
            made.put((_DONE, error))
            return
        made.put((_DONE, None))

    threading.Thread(target=make, name=name, daemon=True).start()
    return _handed(made, stop)


_DONE = object()  # what :func:`ahead`'s thread puts after its last item


def _handed(made: queue.SimpleQueue, stop: threading.Event) -> Iterator:
    """What :func:`ahead`'s thread made, in order, until it is done; its thread told to stop when this ends."""
    try:
        while True:
            item, error = made.get()
            if error is not None:
                raise error
            if item is _DONE:
                return
            yield item
    finally:
        stop.set()
