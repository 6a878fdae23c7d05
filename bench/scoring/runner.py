"""The runner: a :class:`~bench.config.ScoreConfig` -> a run folder of per-item scores, resumable.

Items go through in chunks of fixed positions in the item order, and the backend forgets its caches at every chunk,
so a chunk's scores depend on its items alone: a resumed run, or one sharded over any number of ranks, forms the
same batches as an uninterrupted one and, on the same device and thread count, the same scores bit for bit. For each chunk the protocol makes the requests, the runner decodes every clip the requests name
(ahead, on worker threads, each clip once) and joined clips on demand, the backend answers the chunk's requests in
batches across items, and the rows are stored atomically: killing the run loses at most the chunk in flight.

Under ``torchrun`` (or ``accelerate launch``) every rank loads the model on its own device and scores its shard of
the chunks (:mod:`bench.scoring.distributed`); rank 0 locks and prepares the run folder, shows the progress of all
ranks, and compacts the run once every rank is done.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import sys
import threading
import time
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from bench.config import Manifest, ScoreConfig, versions
from bench.frames import (FrameCache, FrameError, FramePolicy, Frames, parse_policy, policy, prefetch, sample_frames,
                          sample_joined)
from bench.items import Item
from bench.paths import data_home
from bench.registry import BenchmarkSpec, spec
from bench.scoring.distributed import Group, Ranks, rank_device, ranks_of, shard
from bench.scoring.families import check_protocol, infer_family, load_backend
from bench.scoring.protocols import Protocol, Scored, make_protocol
from bench.scoring.requests import Ask, VideoRef
from bench.store import ChunkWriter, RunLock, RunWriter
from bench.store.run import CHUNK, rank_info

SEEDED_POLICIES = {"consecutive": "seed", "single": "seed"}


def seeded(frame_policy: FramePolicy, seed: int) -> FramePolicy:
    """``frame_policy`` with ``seed`` for the policies that draw at random, unless it names its own seed."""
    param = SEEDED_POLICIES.get(frame_policy.name)
    params = dict(frame_policy.params)
    if param is None or param in params:
        return frame_policy
    return policy(frame_policy.name, **params, **{param: seed})


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
    """Decoding threads: as given, or (None) one per core (shared by the ranks on this machine) up to 16."""
    return workers if workers else max(1, min(16, (os.cpu_count() or 1) // ranks_here))


@dataclasses.dataclass
class _Chunk:
    number: int
    items: list[Item]
    frames: dict[tuple[str, int], Frames]
    failures: list[dict]


def _chunks(chunks: Sequence[tuple[int, list[Item]]], frame_policy: FramePolicy, backend: str,
            size: tuple[int, int] | None, cache: FrameCache, workers: int) -> Iterator[_Chunk]:
    """The chunks (number, items) with their clips decoded ahead; items with an unreadable clip become failures."""

    def requests():
        for _, chunk in chunks:
            for it in chunk:
                for c, clip in enumerate(it.clips):
                    yield (it.item_id, c), (lambda clip=clip: sample_frames(clip, frame_policy, backend=backend,
                                                                            size=size, cache=cache))

    decoded = prefetch(requests(), workers=workers, queue_size=max(8, 2 * workers))
    for number, items in chunks:
        chunk = _Chunk(number, list(items), {}, [])
        for it in chunk.items:
            for _ in it.clips:
                key, result = next(decoded)
                if isinstance(result, FrameError):
                    chunk.failures.append({"item_id": it.item_id, "stage": "frames", "reason": result.reason})
                else:
                    chunk.frames[key] = result
        failed = {f["item_id"] for f in chunk.failures}
        chunk.items = [it for it in chunk.items if it.item_id not in failed]
        yield chunk


class ChunkVideos:
    """The frames a chunk's requests name: prefetched clips, and clips joined by a black gap decoded on demand; it
    records the frame indices and notes of every video used, per item."""

    def __init__(self, items: Sequence[Item], decoded: dict[tuple[str, int], Frames], frame_policy: FramePolicy,
                 backend: str, size: tuple[int, int] | None):
        self.items = {it.item_id: it for it in items}
        self.decoded = decoded
        self.frame_policy = frame_policy
        self.backend = backend
        self.size = size
        self.used: dict[str, dict[str, list[int]]] = {}
        self.notes: dict[str, list[str]] = {}

    @classmethod
    def decode(cls, items: Sequence[Item], frame_policy: FramePolicy, backend: str = "decord",
               size: tuple[int, int] | None = None) -> ChunkVideos:
        """Every clip of ``items`` decoded now, in this thread (no prefetch, no cache)."""
        decoded = {(it.item_id, c): sample_frames(clip, frame_policy, backend=backend, size=size)
                   for it in items for c, clip in enumerate(it.clips)}
        return cls(items, decoded, frame_policy, backend, size)

    def frames(self, refs: Sequence[VideoRef]) -> dict[VideoRef, np.ndarray]:
        """The frame arrays of ``refs``."""
        out = {}
        for ref in dict.fromkeys(refs):
            item_id, clips = ref
            if len(clips) == 1:
                frames = self.decoded[(item_id, clips[0])]
            else:
                item = self.items[item_id]
                frames = sample_joined([item.clips[c] for c in clips], self.frame_policy, backend=self.backend,
                                       size=self.size)
            self.used.setdefault(item_id, {})["+".join(map(str, clips))] = frames.indices
            self.notes.setdefault(item_id, []).extend(n for n in frames.notes if n not in self.notes[item_id])
            out[ref] = frames.array
        return out


def _is_oom(err: BaseException) -> bool:
    import torch

    return isinstance(err, torch.cuda.OutOfMemoryError) or "out of memory" in str(err).lower()


def score_items(backend, protocol: Protocol, items: list[Item], videos: ChunkVideos | None, blind: bool,
                batch_size: int) -> tuple[Scored, list[dict], int]:
    """Score ``items``: every request of the protocol in one call of the backend, halving the batch size on
    out-of-memory; when the call fails otherwise, each item alone, so that only the items that fail are failures.

    Returns (rows, failure rows, the batch size that worked).
    """
    planned = [pair for it in items for pair in protocol.requests(it)]
    requests = [r for r, _ in planned]
    if blind:
        requests = [dataclasses.replace(r, video=None) if isinstance(r, Ask) else r for r in requests]
    while True:
        try:
            refs = [r.video for r in requests if getattr(r, "video", None) is not None]
            arrays = videos.frames(refs) if videos is not None and refs else {}
            answers = backend.answer(requests, arrays, batch_size)
            return protocol.rows([k for _, k in planned], answers), [], batch_size
        except Exception as err:  # noqa: BLE001 - model errors are recorded per item, never end the run
            if _is_oom(err) and batch_size > 1:
                import torch

                torch.cuda.empty_cache() if torch.cuda.is_available() else None
                batch_size = max(1, batch_size // 2)
                continue
            if len(items) == 1:
                return Scored([], []), [{"item_id": items[0].item_id, "stage": "model",
                                         "reason": f"{type(err).__name__}: {err}"}], batch_size
            merged, failures = Scored([], []), []
            for it in items:
                scored, failed, batch_size = score_items(backend, protocol, [it], videos, blind, batch_size)
                merged.pair += scored.pair
                merged.choice += scored.choice
                failures += failed
            return merged, failures, batch_size


def answer_items(backend, protocol: Protocol, items: Sequence[Item], frame_policy: FramePolicy,
                 batch_size: int = 8) -> Scored:
    """The rows of ``items`` scored in memory, without a run folder (notebooks, tests); a failure raises."""
    items = list(items)
    videos = ChunkVideos.decode(items, frame_policy) if protocol.uses_frames else None
    scored, failures, _ = score_items(backend, protocol, items, videos, frame_policy.name == "none", batch_size)
    if failures:
        raise RuntimeError(f"{len(failures)} item(s) failed, e.g. {failures[0]['item_id']}: {failures[0]['reason']}")
    return scored


def select_items(items: Sequence[Item], limit: int | None) -> list[Item]:
    """The first ``limit`` main items with their twins (all items when ``limit`` is None)."""
    if limit is None:
        return list(items)
    by_id = {it.item_id: it for it in items}
    chosen: list[Item] = []
    for it in items:
        if it.role != "main":
            continue
        if sum(1 for c in chosen if c.role == "main") >= limit:
            break
        chosen.append(it)
        if it.twin_id in by_id:
            chosen.append(by_id[it.twin_id])
    return chosen


def default_out(benchmark: str, protocol: str, model: str) -> Path:
    """``<data home>/runs/<benchmark>-<protocol>-<model name>-<hash>``."""
    digest = hashlib.sha1(model.encode()).hexdigest()[:6]
    return data_home() / "runs" / f"{benchmark}-{protocol}-{Path(model).name}-{digest}"


def fixed_chunks(items: Sequence[Item], chunk_size: int, done: set[str]) -> list[tuple[int, list[Item]]]:
    """The chunks still to score: (number, items not yet stored) of the chunks at fixed positions of the item
    order (chunk ``c`` holds positions ``c * chunk_size`` to ``(c + 1) * chunk_size - 1``)."""
    chunks = ((c, [it for it in items[c * chunk_size:(c + 1) * chunk_size] if it.item_id not in done])
              for c in range((len(items) + chunk_size - 1) // chunk_size))
    return [(c, todo) for c, todo in chunks if todo]


class _Progress:
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


def _quiet() -> None:
    """Ranks other than 0 print no library warnings (every rank would print the same)."""
    import warnings

    import transformers

    warnings.filterwarnings("ignore")
    transformers.logging.set_verbosity_error()


@dataclasses.dataclass
class _Plan:
    """What every rank checks before loading a model."""

    benchmark: BenchmarkSpec
    family: str
    protocol: Protocol
    frame_policy: FramePolicy
    blind: bool
    items: list[Item]
    out: Path


def _plan(config: ScoreConfig) -> _Plan:
    if config.batch_size < 1 or config.chunk_size < 1:
        raise ValueError("batch size and chunk size must be at least 1")
    if config.limit is not None and config.limit < 1:
        raise ValueError(f"--limit must be at least 1, got {config.limit}")
    benchmark = spec(config.source.benchmark)
    family = config.family or infer_family(config.model)
    protocol = make_protocol(check_protocol(family, config.protocol), benchmark, config.prompt)
    frame_policy = seeded(parse_policy(config.frames), config.seed)
    blind = frame_policy.name == "none"
    if blind and protocol.uses_frames and not protocol.blind_ok:
        raise ValueError(f"the {protocol.name} protocol needs frames: a blind run (--frames none) needs a "
                         "question-answering protocol (entail, mc)")
    if not protocol.uses_frames:
        frame_policy = policy("none")
    items = select_items(config.source.load().items, config.limit)
    out = Path(config.out) if config.out else default_out(benchmark.name, protocol.name, config.model)
    return _Plan(benchmark, family, protocol, frame_policy, blind, items, out)


def score(config: ScoreConfig) -> Path:
    """Score ``config.source`` with ``config.model``; returns the run folder.

    Everything that can be checked is checked before the model loads (family, protocol, prompt, frame policy, batch
    sizes, the run folder's lock). Re-running with the same settings and output folder resumes: stored items are
    skipped. Under torchrun every rank scores its shard of the chunks into the same run folder.
    """
    ranks = ranks_of()
    with Group(ranks) as group:
        prepared, _ = group.from_leader(lambda: _prepare(config, ranks), share=lambda _: True)
        plan, lock = prepared or (_plan(config), None)
        try:
            return _score(config, plan, ranks, group, lock)
        finally:
            if lock is not None:
                lock.release()


def _prepare(config: ScoreConfig, ranks: Ranks) -> tuple[_Plan, RunLock]:
    """Rank 0's checks and its lock on the run folder, before any rank loads a model (the other ranks check after
    rank 0 succeeded, so that a mistake is reported once)."""
    plan = _plan(config)
    return plan, RunLock.acquire(plan.out, world_size=ranks.world_size)


def _score(config: ScoreConfig, plan: _Plan, ranks: Ranks, group: Group, lock: RunLock | None) -> Path:
    import torch
    from tqdm.auto import tqdm

    benchmark, protocol, frame_policy, items, out = (plan.benchmark, plan.protocol, plan.frame_policy, plan.items,
                                                     plan.out)
    if not ranks.leader:
        _quiet()
    device = rank_device(resolve_device(config.device), ranks)
    if ranks.many and device.startswith("cuda"):
        torch.cuda.set_device(device)
    progress = config.progress and ranks.leader
    if progress:
        on = f"{ranks.world_size} ranks ({device.split(':')[0]})" if ranks.many else device
        print(f"scoring {len(items)} items of {benchmark.title} with {config.model} ({plan.family}, {protocol.name}) "
              f"on {on}", file=sys.stderr)
    torch.manual_seed(config.seed)
    options = benchmark.backend_defaults(plan.family, config.options)
    backend = load_backend(plan.family, config.model, device=device, dtype=config.dtype, **options)
    backend.prepare(protocol.answers)
    details = backend.describe()
    infos = group.gather(rank_info(device))
    manifest = Manifest.for_source(
        config.source, model=config.model, family=plan.family, protocol=protocol.name, measure=protocol.measure,
        name=config.name or out.name, revision=details.get("revision"), dtype=config.dtype, device=device,
        batch_size=config.batch_size, frame_policy=frame_policy.describe(), frame_backend=config.decoder,
        frame_size=list(config.size) if config.size else None, prompt=protocol.describe(), seed=config.seed,
        limit=config.limit, options=options, details=details, versions=versions(), n_items=len(items))
    writer, state = group.from_leader(
        lambda: RunWriter(out, manifest, items, retry_failures=config.retry_failures, chunk_size=config.chunk_size,
                          ranks=infos, lock=lock),
        share=lambda w: {"launch": w.launch, "chunk_size": w.chunk_size, "done": w.done})
    chunk_writer = writer.chunks if writer else ChunkWriter(out, state["launch"], ranks.rank)
    try:
        for note in writer.notes if writer else []:
            print(note, file=sys.stderr)
        todo = fixed_chunks(items, state["chunk_size"], state["done"])
        mine = set(shard(todo, ranks.world_size)[ranks.rank])
        started = time.perf_counter()
        batch_size = config.batch_size
        bar = tqdm(total=len(items), initial=len(items) - sum(len(c) for _, c in todo), unit="item",
                   disable=not progress, desc=f"{benchmark.name} {protocol.name} {Path(config.model).name}")
        shown = _Progress(bar, writer, state["launch"], {c: len(its) for c, its in todo}, ranks.many)
        try:
            for chunk in _chunks([c for c in todo if c[0] in mine], frame_policy, config.decoder, config.size,
                                 FrameCache(), decode_workers(config.workers, ranks.local_world_size)):
                videos = ChunkVideos(chunk.items, chunk.frames, frame_policy, config.decoder, config.size)
                backend.reset()
                scored, failed, batch_size = score_items(backend, protocol, chunk.items, videos, plan.blind,
                                                         batch_size)
                chunk_writer.write_chunk(chunk.number, [it.item_id for it in chunk.items] +
                                         [f["item_id"] for f in chunk.failures], scored.pair, scored.choice,
                                         chunk.failures + failed, videos.used, videos.notes)
                shown.chunk_done(len(chunk.items) + len(chunk.failures))
                if writer:
                    writer.compact_if_many()
            group.barrier()
        finally:
            shown.close()
        if writer:
            writer.finish(seconds=round(time.perf_counter() - started, 3), final_batch_size=batch_size,
                          expected=[it.item_id for it in items])
    finally:
        chunk_writer.close()
        if writer:
            writer.close()
    return out
