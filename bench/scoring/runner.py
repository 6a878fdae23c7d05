"""The runner: a :class:`~bench.config.ScoreConfig` -> a run folder of per-item scores, resumable.

Items go through in chunks of fixed positions in the item order (so a resumed run forms the same batches as an
uninterrupted one). For each chunk the protocol makes the requests, the runner decodes every clip the requests name
(ahead, on worker threads, each clip once, straight to the size the model's processor wants) and the backend encodes
it there (its processor, pinned memory), joined clips on demand; the backend answers the chunk's requests in batches
across items, and the rows are stored atomically: killing the run loses at most the chunk in flight. The first batch
is also the backend's self-check (:meth:`~bench.scoring.backends.base.Backend.check`). Every run ends with a one-line
summary (scored, failed by reason); a run whose items all fail, or more than ``max_failure_rate`` of them, raises
:class:`TooManyFailures` once it is stored.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import sys
import time
from pathlib import Path
from typing import Iterator, Sequence

from bench.config import Manifest, ScoreConfig, versions
from bench.frames import (Fit, FrameCache, FrameError, FramePolicy, Frames, parse_policy, policy, prefetch,
                          sample_frames, sample_joined)
from bench.items import Item
from bench.paths import data_home
from bench.registry import spec
from bench.scoring.families import check_fits, check_protocol, infer_family, load_backend
from bench.scoring.hub import locate
from bench.scoring.protocols import Protocol, Scored, make_protocol
from bench.scoring.requests import Ask, VideoRef
from bench.store import RunWriter, read_run
from bench.store.summary import RunSummary, summarize

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


def decode_workers(workers: int | None) -> int:
    """Decoding threads: as given, or (None: ``--workers auto``) one per core this process may use."""
    if workers:
        return workers
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, cores or 1)


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
    items: list[Item]
    frames: dict[tuple[str, int], Frames]
    encoded: dict[tuple[str, int], object]
    failures: list[dict]


def _chunks(chunks: Sequence[list[Item]], frame_policy: FramePolicy, backend: str, size, cache: FrameCache,
            workers: int, encode=None) -> Iterator[_Chunk]:
    """The chunks with their clips decoded ahead (and encoded by ``encode``, the backend's, on the same worker);
    items with an unreadable clip become failures."""

    @_on_worker
    def load(clip):
        frames = sample_frames(clip, frame_policy, backend=backend, size=size, cache=cache)
        return frames, (encode(frames.array) if encode is not None else frames.array)

    def requests():
        for chunk in chunks:
            for it in chunk:
                for c, clip in enumerate(it.clips):
                    yield (it.item_id, c), (lambda clip=clip: load(clip))

    decoded = prefetch(requests(), workers=workers, queue_size=max(8, 2 * workers))
    for items in chunks:
        chunk = _Chunk(list(items), {}, {}, [])
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


def score(config: ScoreConfig) -> Path:
    """Score ``config.source`` with ``config.model``; returns the run folder.

    Everything that can be checked is checked before the model loads (family, protocol, prompt, frame policy, batch
    sizes, failure rate). Re-running with the same settings and output folder resumes: stored items are skipped.
    Prints the device at the start and the run's summary at the end; raises :class:`TooManyFailures` (after storing)
    when all items, or more than ``config.max_failure_rate`` of them, failed.
    """
    import torch
    from tqdm.auto import tqdm

    if config.batch_size < 1 or config.chunk_size < 1:
        raise ValueError("batch size and chunk size must be at least 1")
    if config.limit is not None and config.limit < 1:
        raise ValueError(f"--limit must be at least 1, got {config.limit}")
    if not 0.0 <= config.max_failure_rate <= 1.0:
        raise ValueError(f"--max-failure-rate must be between 0 and 1, got {config.max_failure_rate}")
    benchmark = spec(config.source.benchmark)
    model = locate(config.model) if isinstance(config.model, str) else config.model
    if config.family and isinstance(model, str):
        check_fits(model, config.family)
    family = config.family or infer_family(model)
    protocol = make_protocol(check_protocol(family, config.protocol), benchmark, config.prompt)
    frame_policy = seeded(parse_policy(config.frames), config.seed)
    blind = frame_policy.name == "none"
    if blind and protocol.uses_frames and not protocol.blind_ok:
        raise ValueError(f"the {protocol.name} protocol needs frames: a blind run (--frames none) needs a "
                         "question-answering protocol (entail, mc)")
    if not protocol.uses_frames:
        frame_policy = policy("none")
    items = select_items(config.source.load().items, config.limit)
    device = resolve_device(config.device)
    chosen = "" if config.device == device else f" (--device {config.device})"
    print(f"scoring {len(items)} items of {benchmark.title} with {config.model} ({family}, {protocol.name}) "
          f"on {device}{chosen}", file=sys.stderr)
    torch.manual_seed(config.seed)
    options = benchmark.backend_defaults(family, config.options)
    backend = load_backend(family, model, device=device, dtype=config.dtype, **options)
    backend.prepare(protocol.answers)
    size = frame_size(config.size, backend) if protocol.uses_frames else None
    out = Path(config.out) if config.out else default_out(benchmark.name, protocol.name, str(config.model))
    details = backend.describe()
    manifest = Manifest.for_source(
        config.source, model=str(config.model), family=family, protocol=protocol.name, measure=protocol.measure,
        name=config.name or out.name, revision=details.get("revision"), dtype=config.dtype, device=device,
        batch_size=config.batch_size, frame_policy=frame_policy.describe(), frame_backend=config.decoder,
        frame_size=size.describe() if isinstance(size, Fit) else (list(size) if size else None),
        prompt=protocol.describe(), seed=config.seed, limit=config.limit, options=options, details=details,
        versions=versions(), n_items=len(items))
    writer = RunWriter(out, manifest, items, retry_failures=config.retry_failures)
    chunks = [items[i:i + config.chunk_size] for i in range(0, len(items), config.chunk_size)]
    chunks = [todo for chunk in chunks if (todo := [it for it in chunk if it.item_id not in writer.done])]
    cache = FrameCache()
    started = time.perf_counter()
    batch_size = config.batch_size
    bar = tqdm(total=len(items), initial=len(items) - sum(map(len, chunks)), unit="item", disable=not config.progress,
               desc=f"{benchmark.name} {protocol.name} {Path(str(config.model)).name}")
    workers = decode_workers(config.workers)
    for n, chunk in enumerate(_chunks(chunks, frame_policy, config.decoder, size, cache, workers, backend.encode)):
        videos = ChunkVideos(chunk.items, chunk.frames, frame_policy, config.decoder, size, chunk.encoded)
        if n == 0 and chunk.items:
            check_backend(backend, protocol, chunk.items, videos, blind, batch_size)
            writer.manifest.details = backend.describe()
        scored, failed, batch_size = score_items(backend, protocol, chunk.items, videos, blind, batch_size)
        writer.write_chunk([it.item_id for it in chunk.items] + [f["item_id"] for f in chunk.failures],
                           scored.pair, scored.choice, chunk.failures + failed, videos.used, videos.notes)
        bar.update(len(chunk.items) + len(chunk.failures))
    bar.close()
    summary = summarize(read_run(out))
    writer.finish(seconds=round(time.perf_counter() - started, 3), final_batch_size=batch_size, decode_workers=workers,
                  scored=summary.scored, failed=summary.failed)
    print(f"{out.name}: {summary.line()}", file=sys.stderr)
    if summary.failed and (summary.failed == summary.items or summary.failure_rate > config.max_failure_rate):
        raise TooManyFailures(out, summary, config.max_failure_rate)
    return out
