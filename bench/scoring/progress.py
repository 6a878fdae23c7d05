"""The one progress bar of a run, on rank 0: its own chunks, or every chunk the launch's ranks have stored."""

from __future__ import annotations

import os
import threading

from bench.store import RunWriter
from bench.store.run import CHUNK


class RunProgress:
    """The one progress bar, on rank 0: its own chunks, or, in a launch of many ranks, every chunk this launch has
    stored (rank 0 counts the chunk files on a thread)."""

    def __init__(self, bar, writer: RunWriter | None, launch: str, sizes: dict[int, int], many: bool):
        self.bar, self.writer, self.launch, self.sizes = bar, writer, launch, sizes
        self.initial = bar.n
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True) if many and writer else None
        if self.thread:
            self.thread.start()

    def _stored(self) -> int:
        names = {*os.listdir(self.writer.path / "scored"), *list(self.writer.absorbed)}
        found = (CHUNK.match(n) for n in names)
        return sum(self.sizes.get(int(m.group(1)), 0) for m in found if m and m.group(2) == self.launch)

    def _poll(self) -> None:
        while not self.stop.wait(1.0):
            self.bar.n = self.initial + self._stored()
            self.bar.refresh()

    def chunk_done(self, n: int) -> None:
        """Rank 0 stored a chunk of ``n`` items."""
        if self.thread is None:
            self.bar.update(n)

    def close(self) -> None:
        """Stop counting, after a last count."""
        self.stop.set()
        if self.thread:
            self.thread.join()
            self.bar.n = self.initial + self._stored()
            self.bar.refresh()
        self.bar.close()
