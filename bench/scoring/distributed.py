"""Scoring on many ranks: the launch a process belongs to (``torchrun``, ``accelerate launch``, or ``srun`` running
torchrun on every node), the device of each rank, and the sharding of a run's chunks.

The ranks exchange only small control messages (the run's state from rank 0, a barrier at the end) over a ``gloo``
process group; models never synchronise, each rank scores its own shard on its own device.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Callable, Mapping, Sequence, TypeVar

from bench.items import Item

T = TypeVar("T")
# Ranks that finish their shard first wait at the final barrier for the slowest one; a dead rank ends the job through
# the launcher, so the barrier only has to outlast honest imbalance.
BARRIER_TIMEOUT = timedelta(hours=24)


@dataclass(frozen=True)
class Ranks:
    """Where this process stands in its launch (a single process is rank 0 of 1)."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    local_world_size: int = 1

    @property
    def leader(self) -> bool:
        """Rank 0: it locks, prepares and compacts the run folder, and alone logs and shows progress."""
        return self.rank == 0

    @property
    def many(self) -> bool:
        """Whether the launch has more than one rank."""
        return self.world_size > 1


def ranks_of(env: Mapping[str, str] = os.environ) -> Ranks:
    """The ranks torchrun (and ``accelerate launch``, which runs it) set in the environment."""
    try:
        values = {k: int(env[k]) for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE") if env.get(k)}
    except ValueError:
        raise ValueError("RANK, WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE must be integers (as torchrun sets them)")
    world = values.get("WORLD_SIZE", 1)
    ranks = Ranks(values.get("RANK", 0), world, values.get("LOCAL_RANK", 0), values.get("LOCAL_WORLD_SIZE", world))
    if not 0 <= ranks.rank < world or not 0 <= ranks.local_rank < ranks.local_world_size:
        raise ValueError(f"RANK={ranks.rank} and LOCAL_RANK={ranks.local_rank} do not fit WORLD_SIZE={world} and "
                         f"LOCAL_WORLD_SIZE={ranks.local_world_size}")
    return ranks


def rank_device(device: str, ranks: Ranks) -> str:
    """The device of this rank: a bare ``cuda`` becomes ``cuda:LOCAL_RANK`` in a launch of many ranks."""
    if ranks.many and device == "cuda":
        return f"cuda:{ranks.local_rank}"
    return device


class Group:
    """The launch's process group (``gloo``), created when the launch has many ranks and none exists yet; a
    single process needs none and every call is local."""

    def __init__(self, ranks: Ranks):
        self.ranks = ranks
        self.created = False

    def __enter__(self) -> Group:
        if self.ranks.many:
            import torch.distributed as dist

            if not dist.is_initialized():
                dist.init_process_group("gloo", timeout=BARRIER_TIMEOUT)
                self.created = True
        return self

    def __exit__(self, *exc) -> None:
        if self.created:
            import torch.distributed as dist

            dist.destroy_process_group()

    def broadcast(self, value: Any) -> Any:
        """Rank 0's ``value`` on every rank."""
        if not self.ranks.many:
            return value
        import torch.distributed as dist

        box = [value if self.ranks.leader else None]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def gather(self, value: Any) -> list[Any]:
        """Every rank's ``value``, in rank order, on every rank."""
        if not self.ranks.many:
            return [value]
        import torch.distributed as dist

        found: list[Any] = [None] * self.ranks.world_size
        dist.all_gather_object(found, value)
        return found

    def barrier(self) -> None:
        """Wait until every rank is here."""
        if self.ranks.many:
            import torch.distributed as dist

            dist.barrier()

    def from_leader(self, work: Callable[[], T], share: Callable[[T], Any]) -> tuple[T | None, Any]:
        """Run ``work`` on rank 0 and give every rank ``share(result)``; when ``work`` fails, rank 0 raises the error
        and the other ranks exit quietly with the same kind of exit code (rank 0 printed the one line)."""
        if self.ranks.leader:
            try:
                result = work()
            except BaseException as err:
                self.broadcast(_Failed(2 if isinstance(err, (ValueError, OSError)) else 1))
                raise
            return result, self.broadcast(share(result))
        shared = self.broadcast(None)
        if isinstance(shared, _Failed):
            raise SystemExit(shared.exit_code)
        return None, shared


@dataclass(frozen=True)
class _Failed:
    exit_code: int


def work_of(item: Item) -> int:
    """The work an item asks for: texts x clips (at least 1)."""
    return max(1, len(item.texts) * len(item.clips))


def shard(chunks: Sequence[tuple[int, Sequence[Item]]], world_size: int) -> list[list[int]]:
    """The chunk numbers of each rank: chunks in order, each to the rank with the least work so far (the lowest on
    ties). Deterministic, balanced by work within one chunk, and it spreads every part of the item order (whose
    subsets may differ in cost) over all ranks."""
    load = [0] * world_size
    shards: list[list[int]] = [[] for _ in range(world_size)]
    for number, items in chunks:
        rank = min(range(world_size), key=lambda r: (load[r], r))
        shards[rank].append(number)
        load[rank] += sum(map(work_of, items))
    return shards
