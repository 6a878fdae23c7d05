"""The runner: a :class:`~bench.config.ScoreConfig` -> a run folder of per-item scores, resumable.

Items go through in chunks of fixed positions in the item order (so a resumed run forms the same batches as an
uninterrupted one). For each chunk the protocol makes the requests, the runner decodes every clip the requests name
(ahead, on worker threads, each clip once, straight to the size the model's processor wants) and the backend encodes
it there (its processor, pinned memory), joined clips on demand; the backend answers the chunk's requests in batches
across items, and the rows are stored atomically: killing the run loses at most the chunk in flight. The first batch
is also the backend's self-check (:meth:`~bench.scoring.backends.base.Backend.check`). Every run ends with a one-line
summary (scored, failed by reason); a run whose items all fail, or more than ``max_failure_rate`` of them, raises
:class:`TooManyFailures` once it is stored.

The backend forgets its caches at every chunk, so a chunk's scores depend on its items alone: a resumed run, or one
sharded over any number of ranks, forms the same batches as an uninterrupted one and, on the same device and thread
count, the same scores bit for bit. Under ``torchrun`` (or ``accelerate launch``) every rank loads the model on its own
device and scores its shard of the chunks (:mod:`bench.scoring.distributed`); rank 0 locks and prepares the run
folder, shows the progress of all ranks, and compacts the run once every rank is done.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

from bench.config import ScoreConfig, versions
from bench.frames import Fit
from bench.scoring import preflight
from bench.scoring.chunks import ChunkVideos, check_backend, decoded_chunks, frame_size, score_items
from bench.scoring.devices import decode_workers, resolve_device, silence_rank
from bench.scoring.distributed import Group, Ranks, rank_device, ranks_of, shard
from bench.scoring.plan import Plan, check_stored, fixed_chunks, make_plan, run_manifest
from bench.scoring.console import progress_bar
from bench.scoring.progress import RunProgress
from bench.scoring.shared import Shared
from bench.store import ChunkWriter, RunLock, RunWriter, read_run
from bench.store.run import rank_info
from bench.store.summary import RunSummary, summarize


class TooManyFailures(RuntimeError):
    """A stored run whose items all failed, or more than the allowed share of them."""

    def __init__(self, out: Path, summary: RunSummary, max_rate: float):
        self.out, self.summary, self.max_rate = out, summary, max_rate
        what = "all" if summary.failed == summary.items else f"{summary.failure_rate:.1%} (more than {max_rate:.1%})"
        super().__init__(f"{what} of the {summary.items} items failed; the run is stored in {out}")


def score(config: ScoreConfig, shared: Shared | None = None) -> Path:
    """Score ``config.source`` with ``config.model``; returns the run folder. ``shared``: what runs scored one after
    another share (:class:`~bench.scoring.shared.Shared`: each clip decoded once per frame policy and size, each
    model loaded once, each benchmark file read once); default: nothing shared.

    Everything that can be checked is checked before the model loads (model, family, protocol, prompt, frame policy,
    batch sizes, failure rate, the run folder's lock). Re-running with the same settings and output folder resumes:
    stored items are skipped. Under torchrun every rank scores its shard of the chunks into the same run folder.
    Prints the device at the start and the run's summary at the end; raises :class:`TooManyFailures` (after storing)
    when all items, or more than ``config.max_failure_rate`` of them, failed.
    """
    ranks = ranks_of()
    with Group(ranks) as group:
        shared = shared if shared is not None else Shared()
        prepared, complete = group.from_leader(lambda: _prepare(config, ranks, shared), share=lambda p: p[2])
        plan, lock, _ = prepared or (make_plan(config, shared.load), None, complete)
        try:
            if complete:
                return _finished(config, plan.out, ranks)
            return _score(config, plan, ranks, group, lock, shared)
        finally:
            if lock is not None:
                lock.release()


def _finished(config: ScoreConfig, out: Path, ranks: Ranks) -> Path:
    """A run found complete before any model loaded: its summary line again, and :class:`TooManyFailures` as when
    it was scored."""
    summary = summarize(read_run(out))
    if ranks.leader:
        print(f"{out.name}: {summary.line()}", file=sys.stderr)
    if summary.failed and (summary.failed == summary.items or summary.failure_rate > config.max_failure_rate):
        raise TooManyFailures(out, summary, config.max_failure_rate)
    return out


def _prepare(config: ScoreConfig, ranks: Ranks, shared: Shared) -> tuple[Plan, RunLock, bool]:
    """Rank 0's checks and its lock on the run folder, before any rank loads a model (the other ranks check after
    rank 0 succeeded, so that a mistake is reported once). A stored run that cannot be resumed with these settings
    is refused here, as far as that can be told without the model (:func:`check_stored`). Says which videos are
    missing and how much is already scored (:mod:`bench.scoring.preflight`); True when the run is already complete
    (then no model is loaded)."""
    plan = make_plan(config, shared.load)
    lock = RunLock.acquire(plan.out, world_size=ranks.world_size)
    try:
        check_stored(config, plan)
        stored = preflight.stored_state(plan.out, plan.items, config.retry_failures)
        notes = [plan.note, stored.line(plan.out)]
        if plan.protocol.uses_frames and not plan.blind and not stored.complete:
            notes.append(preflight.missing_videos(plan.items, config.source.video_root))
    except BaseException:
        lock.release()
        raise
    for note in filter(None, notes):
        print(note, file=sys.stderr)
    return plan, lock, stored.complete


def _score(config: ScoreConfig, plan: Plan, ranks: Ranks, group: Group, lock: RunLock | None,
           shared: Shared) -> Path:
    import torch

    benchmark, protocol, frame_policy, items, out = (plan.benchmark, plan.protocol, plan.frame_policy, plan.items,
                                                     plan.out)
    if not ranks.leader:
        silence_rank()
    device = rank_device(resolve_device(config.device), ranks)
    if ranks.many and device.startswith("cuda"):
        torch.cuda.set_device(device)
    if ranks.leader:
        on = f"{ranks.world_size} ranks ({device.split(':')[0]})" if ranks.many else device
        on = config.endpoint.url if config.endpoint else on
        chosen = "" if config.endpoint or config.device in (device, device.split(":")[0]) else \
            f" (--device {config.device})"
        print(f"scoring {len(items)} items of {benchmark.title} with {config.model} ({plan.family}, {protocol.name}) "
              f"on {on}{chosen}", file=sys.stderr)
    torch.manual_seed(config.seed)
    options = benchmark.backend_defaults(plan.family, config.options)
    remote = {"endpoint": dataclasses.asdict(config.endpoint)} if config.endpoint else {}
    backend = shared.models.get(plan.model, plan.family, device, config.dtype, {**options, **remote}).backend
    backend.prepare(protocol.answers)
    protocol = backend.answering(protocol, benchmark, out)
    plan = dataclasses.replace(plan, protocol=protocol)
    size = frame_size(config.size, backend) if protocol.uses_frames else None
    details = backend.describe()
    infos = group.gather(rank_info(device))
    manifest = run_manifest(config, plan, revision=details.get("revision"), details=details, device=device,
                         frame_size=size.describe() if isinstance(size, Fit) else (list(size) if size else None),
                         library_versions=versions())
    writer, state = group.from_leader(
        lambda: RunWriter(out, manifest, items, retry_failures=config.retry_failures, chunk_size=config.chunk_size,
                          ranks=infos, lock=lock),
        share=lambda w: {"launch": w.launch, "chunk_size": w.chunk_size, "done": w.done})
    chunk_writer = writer.chunks if writer else ChunkWriter(out, state["launch"], ranks.rank)
    workers = decode_workers(config.workers, ranks.local_world_size)
    try:
        for note in writer.notes if writer else []:
            print(note, file=sys.stderr)
        todo = fixed_chunks(items, state["chunk_size"], state["done"])
        mine = set(shard(todo, ranks.world_size)[ranks.rank])
        started = time.perf_counter()
        batch_size = config.batch_size
        bar = progress_bar(total=len(items), initial=len(items) - sum(len(c) for _, c in todo), unit="item",
                           disable=not (config.progress and ranks.leader),
                           desc=f"{benchmark.name} {protocol.name} {Path(str(config.model)).name}")
        shown = RunProgress(bar, writer, state["launch"], {c: len(its) for c, its in todo}, ranks.many)
        checked = False
        try:
            for chunk in decoded_chunks([c for c in todo if c[0] in mine], frame_policy, config.decoder, size,
                                        shared.frames, workers, backend.encode):
                videos = ChunkVideos(chunk.items, chunk.decoded, frame_policy, config.decoder, size, chunk.encoded,
                                     shared.frames)
                backend.reset()
                if not checked and chunk.items:
                    check_backend(backend, protocol, chunk.items, videos, plan.blind, batch_size)
                    checked = True
                    if writer:
                        writer.manifest.details = backend.describe()
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
            summary = summarize(read_run(out))
            writer.manifest.details = backend.describe()
            writer.finish(seconds=round(time.perf_counter() - started, 3), final_batch_size=batch_size,
                          expected=[it.item_id for it in items], decode_workers=workers, scored=summary.scored,
                          failed=summary.failed)
    finally:
        chunk_writer.close()
        if writer:
            writer.close()
    if writer:
        print(f"{out.name}: {summary.line()}", file=sys.stderr)
        if summary.failed and (summary.failed == summary.items or summary.failure_rate > config.max_failure_rate):
            raise TooManyFailures(out, summary, config.max_failure_rate)
    return out
