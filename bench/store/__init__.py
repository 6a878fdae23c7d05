"""The run store: run folders (manifest, stored items, chunked and compacted score tables, the writer lock) and the
score-table schemas."""

from bench.store.lock import RunLock, RunLockedError
from bench.store.run import ChunkWriter, Run, RunMismatch, RunWriter, read_manifest, read_run, run_folders

__all__ = ["ChunkWriter", "Run", "RunLock", "RunLockedError", "RunMismatch", "RunWriter", "read_manifest", "read_run",
           "run_folders"]
