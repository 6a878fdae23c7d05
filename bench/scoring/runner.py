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
import hashlib
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Iterator, Sequence

from bench.config import Manifest, ScoreConfig, versions
from bench.frames import (Fit, FrameCache, FrameError, FramePolicy, Frames, parse_policy, policy, prefetch,
                          sample_frames, sample_joined)
from bench.frames.controls import control_policy
from bench.items import Item
from bench.paths import data_home
from bench.registry import BenchmarkSpec, spec
from bench.scoring import preflight
from bench.scoring.backends.base import folder_revision
from bench.scoring.distributed import Group, Ranks, rank_device, ranks_of, shard
from bench.scoring.console import progress_bar
from bench.scoring.families import check_fits, check_protocol, infer_family, load_backend
from bench.scoring.hub import locate
from bench.scoring.protocols import Protocol, Scored, make_protocol
from bench.scoring.requests import Ask, VideoRef
from bench.store import ChunkWriter, RunLock, RunWriter, read_run
from bench.store.run import CHUNK, MANIFEST, check_resumable, rank_info
from bench.store.summary import RunSummary, summarize

SEEDED_POLICIES = {"consecutive": "seed", "single": "seed"}


def seeded(frame_policy: FramePolicy, seed: int) -> FramePolicy:
    """``frame_policy`` with ``seed`` for the policies that draw at random (and shuffled frames), unless it names its
    own seed."""
    params = dict(frame_policy.params)
    param = SEEDED_POLICIES.get(frame_policy.name) or ("seed" if params.get("order") == "shuffle" else None)
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
    """Decoding threads: as given, or (None: ``--workers auto``) one per core this process may use, the cores shared
    by the ranks on this machine."""
    if workers:
        return workers
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, (cores or 1) // ranks_here)


def _on_worker(fn):
    """``fn`` with torch's intra-op threads at one in the calling worker thread (the workers are the parallelism;
    the setting is per thread, so the model's own threads are untouched)."""
    import torch

    def run(*args):
        torch.set_num_threads(1)
        return fn(*args)

    return run


@dataclasses.dataclass
class _Chunk:
    number: int
    items: list[Item]
    frames: dict[tuple[str, int], Frames]
    encoded: dict[tuple[str, int], object]
    failures: list[dict]


def _chunks(chunks: Sequence[tuple[int, list[Item]]], frame_policy: FramePolicy, backend: str, size,
            cache: FrameCache, workers: int, encode=None) -> Iterator[_Chunk]:
    """The chunks (number, items) with their clips decoded ahead (and encoded by ``encode``, the backend's, on the
    same worker); items with an unreadable clip become failures."""

    @_on_worker
    def load(clip):
        frames = sample_frames(clip, frame_policy, backend=backend, size=size, cache=cache)
        return frames, (encode(frames.array) if encode is not None else frames.array)

    def requests():
        for _, chunk in chunks:
            for it in chunk:
                for c, clip in enumerate(it.clips):
                    yield (it.item_id, c), (lambda clip=clip: load(clip))

    decoded = prefetch(requests(), workers=workers, queue_size=max(8, 2 * workers))
    for number, items in chunks:
        chunk = _Chunk(number, list(items), {}, {}, [])
        for it in chunk.items:
            for _ in it.clips:
                key, result = next(decoded)
                if isinstance(result, FrameError):
                    chunk.failures.append({"item_id": it.item_id, "stage": "frames", "reason": result.reason})
                else:
                    chunk.frames[key], chunk.encoded[key] = result
        failed = {f["item_id"] for f in chunk.failures}
        chunk.items = [it for it in chunk.items if it.item_id not in failed]
        yield chunk


class ChunkVideos:
    """The videos a chunk's requests name: prefetched clips (as the backend encoded them, when it did), and clips
    joined by a black gap decoded on demand; it records the frame indices and notes of every video used, per item."""

    def __init__(self, items: Sequence[Item], decoded: dict[tuple[str, int], Frames], frame_policy: FramePolicy,
                 backend: str, size, encoded: dict[tuple[str, int], object] | None = None):
        self.items = {it.item_id: it for it in items}
        self.decoded = decoded
        self.encoded = encoded or {}
        self.frame_policy = frame_policy
        self.backend = backend
        self.size = size
        self.used: dict[str, dict[str, list[int]]] = {}
        self.notes: dict[str, list[str]] = {}

    @classmethod
    def decode(cls, items: Sequence[Item], frame_policy: FramePolicy, backend: str = "decord",
               size=None) -> ChunkVideos:
        """Every clip of ``items`` decoded now, in this thread (no prefetch, no cache)."""
        decoded = {(it.item_id, c): sample_frames(clip, frame_policy, backend=backend, size=size)
                   for it in items for c, clip in enumerate(it.clips)}
        return cls(items, decoded, frame_policy, backend, size)

    def frames(self, refs: Sequence[VideoRef]) -> dict[VideoRef, object]:
        """The videos of ``refs``: encoded clips, or frame arrays."""
        out = {}
        for ref in dict.fromkeys(refs):
            item_id, clips = ref
            if len(clips) == 1:
                frames = self.decoded[(item_id, clips[0])]
                out[ref] = self.encoded.get((item_id, clips[0]), frames.array)
            else:
                item = self.items[item_id]
                frames = sample_joined([item.clips[c] for c in clips], self.frame_policy, backend=self.backend,
                                       size=self.size)
                out[ref] = frames.array
            self.used.setdefault(item_id, {})["+".join(map(str, clips))] = frames.indices
            self.notes.setdefault(item_id, []).extend(n for n in frames.notes if n not in self.notes[item_id])
        return out


def _is_oom(err: BaseException) -> bool:
    import torch

    return isinstance(err, torch.cuda.OutOfMemoryError) or "out of memory" in str(err).lower()


def _requests(protocol: Protocol, items: Sequence[Item], blind: bool) -> list[tuple]:
    """(request, key) of every request the protocol makes of ``items``; blind runs ask without the video."""
    planned = [pair for it in items for pair in protocol.requests(it)]
    if blind:
        planned = [(dataclasses.replace(r, video=None) if isinstance(r, Ask) else r, k) for r, k in planned]
    return planned


def check_backend(backend, protocol: Protocol, items: Sequence[Item], videos: ChunkVideos | None, blind: bool,
                  batch_size: int) -> str | None:
    """The backend's self-check (:meth:`~bench.scoring.backends.base.Backend.check`) on the first batch: the first
    items whose requests fill ``batch_size`` (at least one item); its line is printed on stderr and returned."""
    chosen: list[Item] = []
    for it in items:
        if chosen and sum(len(protocol.requests(c)) for c in chosen) >= batch_size:
            break
        chosen.append(it)
    requests = [r for r, _ in _requests(protocol, chosen, blind)]
    if not requests:
        return None
    refs = [r.video for r in requests if getattr(r, "video", None) is not None]
    arrays = videos.frames(refs) if videos is not None and refs else {}
    message = backend.check(requests, arrays, batch_size)
    if message:
        print(message, file=sys.stderr)
    return message


def score_items(backend, protocol: Protocol, items: list[Item], videos: ChunkVideos | None, blind: bool,
                batch_size: int) -> tuple[Scored, list[dict], int]:
    """Score ``items``: every request of the protocol in one call of the backend, halving the batch size on
    out-of-memory; when the call fails otherwise, each item alone, so that only the items that fail are failures.

    Returns (rows, failure rows, the batch size that worked).
    """
    planned = _requests(protocol, items, blind)
    requests = [r for r, _ in planned]
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
    blind = frame_policy.name == "none"
    check_backend(backend, protocol, items, videos, blind, batch_size)
    scored, failures, _ = score_items(backend, protocol, items, videos, blind, batch_size)
    if failures:
        raise RuntimeError(f"{len(failures)} item(s) failed, e.g. {failures[0]['item_id']}: {failures[0]['reason']}")
    return scored


def select_items(items: Sequence[Item], limit: int | None, spread: bool = False) -> list[Item]:
    """``limit`` main items with their twins, in file order: the first ones, or (``spread``) every
    ``len / limit``-th, so that a file ordered by subset gives every subset its share (all items when ``limit`` is
    None)."""
    if limit is None:
        return list(items)
    main = [it for it in items if it.role == "main"]
    picked = [main[int(i * len(main) / limit)] for i in range(limit)] if spread and limit < len(main) else main[:limit]
    wanted = {it.item_id for it in picked}
    wanted |= {it.twin_id for it in picked if it.twin_id}
    return [it for it in items if it.item_id in wanted]


def default_out(benchmark: str, protocol: str, model: str) -> Path:
    """``<data home>/runs/<benchmark>-<protocol>-<model name>-<hash>``."""
    digest = hashlib.sha1(model.encode()).hexdigest()[:6]
    return data_home() / "runs" / f"{benchmark}-{protocol}-{Path(model).name}-{digest}"


class TooManyFailures(RuntimeError):
    """A stored run whose items all failed, or more than the allowed share of them."""

    def __init__(self, out: Path, summary: RunSummary, max_rate: float):
        self.out, self.summary, self.max_rate = out, summary, max_rate
        what = "all" if summary.failed == summary.items else f"{summary.failure_rate:.1%} (more than {max_rate:.1%})"
        super().__init__(f"{what} of the {summary.items} items failed; the run is stored in {out}")


def frame_size(size, backend) -> Fit | tuple[int, int] | None:
    """What to decode frames to: ``auto``: the size the backend's processor resizes to (when known); ``full``:
    the video's own size (the processor resizes); or a (width, height)."""
    if size == "auto":
        return backend.frame_fit()
    if size in (None, "full"):
        return None
    return tuple(size)


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
    model: object
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
    if config.spread and config.limit is None:
        raise ValueError("--spread needs --limit N (it spreads N items over the file)")
    if not 0.0 <= config.max_failure_rate <= 1.0:
        raise ValueError(f"--max-failure-rate must be between 0 and 1, got {config.max_failure_rate}")
    benchmark = spec(config.source.benchmark)
    frame_policy = seeded(parse_policy(config.frames), config.seed)
    blind = frame_policy.name == "none"
    family = config.family
    if family:  # what can be checked without the model is checked before it is located
        protocol = _checked_protocol(family, config, benchmark, blind)
    model = locate(config.model) if isinstance(config.model, str) else config.model
    if family and isinstance(model, str):
        check_fits(model, family)
    if not family:
        family = infer_family(model)
        protocol = _checked_protocol(family, config, benchmark, blind)
    if config.control:
        if not protocol.uses_frames:
            raise ValueError(f"the {protocol.name} protocol reads no frames: the {config.control} control does not "
                             "apply")
        frame_policy = seeded(control_policy(config.control, frame_policy, protocol.blind_ok), config.seed)
        blind = frame_policy.name == "none"
    if not protocol.uses_frames:
        frame_policy = policy("none")
    items = select_items(config.source.load().items, config.limit, config.spread)
    out = Path(config.out) if config.out else default_out(benchmark.name, protocol.name, str(config.model))
    return _Plan(benchmark, model, family, protocol, frame_policy, blind, items, out)


def _checked_protocol(family: str, config: ScoreConfig, benchmark: BenchmarkSpec, blind: bool) -> Protocol:
    """The run's protocol for ``family``; a blind run (no frames) of a protocol that needs them is refused."""
    protocol = make_protocol(check_protocol(family, config.protocol), benchmark, config.prompt)
    if blind and protocol.uses_frames and not protocol.blind_ok:
        raise ValueError(f"the {protocol.name} protocol needs frames: a blind run (--frames none) needs a "
                         "question-answering protocol (entail, mc)")
    return protocol


def score(config: ScoreConfig, frames: FrameCache | None = None) -> Path:
    """Score ``config.source`` with ``config.model``; returns the run folder. ``frames``: a cache of decoded clips
    to share with other runs (runs asking the same clips with the same frame policy and size decode them once);
    default: one for this run.

    Everything that can be checked is checked before the model loads (model, family, protocol, prompt, frame policy,
    batch sizes, failure rate, the run folder's lock). Re-running with the same settings and output folder resumes:
    stored items are skipped. Under torchrun every rank scores its shard of the chunks into the same run folder.
    Prints the device at the start and the run's summary at the end; raises :class:`TooManyFailures` (after storing)
    when all items, or more than ``config.max_failure_rate`` of them, failed.
    """
    ranks = ranks_of()
    with Group(ranks) as group:
        prepared, complete = group.from_leader(lambda: _prepare(config, ranks), share=lambda p: p[2])
        plan, lock, _ = prepared or (_plan(config), None, complete)
        try:
            if complete:
                return _finished(config, plan.out, ranks)
            return _score(config, plan, ranks, group, lock, frames if frames is not None else FrameCache())
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


def _prepare(config: ScoreConfig, ranks: Ranks) -> tuple[_Plan, RunLock, bool]:
    """Rank 0's checks and its lock on the run folder, before any rank loads a model (the other ranks check after
    rank 0 succeeded, so that a mistake is reported once). A stored run that cannot be resumed with these settings
    is refused here, as far as that can be told without the model (:func:`_check_stored`). Says which videos are
    missing and how much is already scored (:mod:`bench.scoring.preflight`); True when the run is already complete
    (then no model is loaded)."""
    plan = _plan(config)
    lock = RunLock.acquire(plan.out, world_size=ranks.world_size)
    try:
        _check_stored(config, plan)
        stored = preflight.stored_state(plan.out, plan.items, config.retry_failures)
        notes = [stored.line(plan.out)]
        if plan.protocol.uses_frames and not plan.blind and not stored.complete:
            notes.append(preflight.missing_videos(plan.items, config.source.video_root))
    except BaseException:
        lock.release()
        raise
    for note in filter(None, notes):
        print(note, file=sys.stderr)
    return plan, lock, stored.complete


def check_stored_run(config: ScoreConfig) -> None:
    """Raise :class:`~bench.store.RunMismatch` when ``config.out`` holds a run scored with other settings (as far as
    that can be told before the model loads); nothing when it holds none."""
    _check_stored(config, _plan(config))


def _check_stored(config: ScoreConfig, plan: _Plan) -> None:
    """Raise :class:`~bench.store.RunMismatch` when the run stored in ``plan.out`` differs in a setting known before
    the model loads, or in its items. The frame size is known only from the model's processor, and so is the
    revision, except for a model in a local folder when the stored run's revision is that folder's digest."""
    stored = plan.out / MANIFEST
    if not stored.is_file():
        return
    revision = folder_revision(plan.model) if isinstance(plan.model, str) else None
    stored_revision = str(json.loads(stored.read_text()).get("revision") or "")
    unknown = ["frame_size"] + ([] if revision and stored_revision.startswith("files:") else ["revision"])
    check_resumable(plan.out, _manifest(config, plan, revision=revision), plan.items, unknown=unknown)


def _manifest(config: ScoreConfig, plan: _Plan, *, revision: str | None, frame_size: object = None,
              details: dict | None = None, device: str | None = None,
              library_versions: dict[str, str | None] | None = None) -> Manifest:
    """The manifest of the run ``plan`` of ``config`` (what the loaded model adds, and :func:`versions` for the
    manifest that is stored, are passed in; the check before loading needs neither)."""
    return Manifest.for_source(
        config.source, model=str(config.model), family=plan.family, protocol=plan.protocol.name,
        measure=plan.protocol.measure, name=config.name or plan.out.name, revision=revision, dtype=config.dtype,
        device=device, batch_size=config.batch_size, frame_policy=plan.frame_policy.describe(),
        frame_backend=config.decoder, frame_size=frame_size, prompt=plan.protocol.describe(), seed=config.seed,
        control=config.control,
        limit=config.limit, spread=config.spread, options=plan.benchmark.backend_defaults(plan.family, config.options),
        details=details or {}, versions=library_versions or {}, n_items=len(plan.items))


def _score(config: ScoreConfig, plan: _Plan, ranks: Ranks, group: Group, lock: RunLock | None,
           cache: FrameCache) -> Path:
    import torch

    benchmark, protocol, frame_policy, items, out = (plan.benchmark, plan.protocol, plan.frame_policy, plan.items,
                                                     plan.out)
    if not ranks.leader:
        _quiet()
    device = rank_device(resolve_device(config.device), ranks)
    if ranks.many and device.startswith("cuda"):
        torch.cuda.set_device(device)
    if ranks.leader:
        on = f"{ranks.world_size} ranks ({device.split(':')[0]})" if ranks.many else device
        chosen = "" if config.device in (device, device.split(":")[0]) else f" (--device {config.device})"
        print(f"scoring {len(items)} items of {benchmark.title} with {config.model} ({plan.family}, {protocol.name}) "
              f"on {on}{chosen}", file=sys.stderr)
    torch.manual_seed(config.seed)
    options = benchmark.backend_defaults(plan.family, config.options)
    backend = load_backend(plan.family, plan.model, device=device, dtype=config.dtype, **options)
    backend.prepare(protocol.answers)
    size = frame_size(config.size, backend) if protocol.uses_frames else None
    details = backend.describe()
    infos = group.gather(rank_info(device))
    manifest = _manifest(config, plan, revision=details.get("revision"), details=details, device=device,
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
        shown = _Progress(bar, writer, state["launch"], {c: len(its) for c, its in todo}, ranks.many)
        checked = False
        try:
            for chunk in _chunks([c for c in todo if c[0] in mine], frame_policy, config.decoder, size, cache, workers,
                                 backend.encode):
                videos = ChunkVideos(chunk.items, chunk.frames, frame_policy, config.decoder, size, chunk.encoded)
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
