"""The run store: run folders (manifest, stored items, chunked score tables) and the score-table schemas."""

from bench.store.run import Run, RunWriter, read_run

__all__ = ["Run", "RunWriter", "read_run"]
