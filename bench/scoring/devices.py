"""Where a run computes: the device it takes, the threads that decode its frames, out-of-memory, and quiet ranks."""

from __future__ import annotations

import os


def resolve_device(device: str) -> str:
    """``auto``: CUDA when available, else Apple's MPS, else the CPU; any other name as given."""
    if device != "auto":
        return device
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def decode_workers(workers: int | None, ranks_here: int = 1) -> int:
    """Decoding threads: as given, or (None: ``--workers auto``) one per core this process may use, the cores shared
    by the ranks on this machine."""
    if workers:
        return workers
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, (cores or 1) // ranks_here)


def on_worker(fn):
    """``fn`` with torch's intra-op threads at one in the calling worker thread (the workers are the parallelism;
    the setting is per thread, so the model's own threads are untouched)."""
    import torch

    def run(*args):
        torch.set_num_threads(1)
        return fn(*args)

    return run


def is_oom(err: BaseException) -> bool:
    import torch

    return isinstance(err, torch.cuda.OutOfMemoryError) or "out of memory" in str(err).lower()


def silence_rank() -> None:
    """Ranks other than 0 print no library warnings (every rank would print the same)."""
    import warnings

    import transformers

    warnings.filterwarnings("ignore")
    transformers.logging.set_verbosity_error()
