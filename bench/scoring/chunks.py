"""Scoring chunks of items: their clips decoded ahead on worker threads (and encoded there by the backend), the videos
a chunk's requests name, the backend's self-check on the first batch, and the scoring of items with out-of-memory
halving and per-item failures."""

from __future__ import annotations

import dataclasses
import sys
from typing import Iterator, Sequence

from bench.frames import Fit, FrameCache, FrameError, FramePolicy, Frames, prefetch, sample_frames, sample_joined
from bench.items import Item
from bench.scoring.devices import is_oom, on_worker
from bench.scoring.protocols import Scored, ScoringProtocol
from bench.scoring.requests import Ask, VideoRef


@dataclasses.dataclass
class Chunk:
    number: int
    items: list[Item]
    decoded: dict[tuple[str, int], Frames]
    encoded: dict[tuple[str, int], object]
    failures: list[dict]


def decoded_chunks(chunks: Sequence[tuple[int, list[Item]]], frame_policy: FramePolicy, backend: str, size,
            cache: FrameCache, workers: int, encode=None) -> Iterator[Chunk]:
    """The chunks (number, items) with their clips decoded ahead (and encoded by ``encode``, the backend's, on the
    same worker); items with an unreadable clip become failures."""

    @on_worker
    def load(clip):
        frames = sample_frames(clip, frame_policy, backend=backend, size=size, cache=cache)
        return frames, (encode(frames) if encode is not None else frames)

    def requests():
        for _, chunk in chunks:
            for it in chunk:
                for c, clip in enumerate(it.clips):
                    yield (it.item_id, c), (lambda clip=clip: load(clip))

    decoded = prefetch(requests(), workers=workers, queue_size=max(8, 2 * workers))
    for number, items in chunks:
        chunk = Chunk(number, list(items), {}, {}, [])
        for it in chunk.items:
            for _ in it.clips:
                key, result = next(decoded)
                if isinstance(result, FrameError):
                    chunk.failures.append({"item_id": it.item_id, "stage": "frames", "reason": result.reason})
                else:
                    chunk.decoded[key], chunk.encoded[key] = result
        failed = {f["item_id"] for f in chunk.failures}
        chunk.items = [it for it in chunk.items if it.item_id not in failed]
        yield chunk


class ChunkVideos:
    """The videos a chunk's requests name: prefetched clips (as the backend encoded them, when it did), and clips
    joined by a black gap decoded on demand (through ``cache`` when given, so that the runs after the first one asking
    them find them decoded), each with its frames' true times (:class:`~bench.frames.Frames`); it records the frame
    indices and notes of every video used, per item."""

    def __init__(self, items: Sequence[Item], decoded: dict[tuple[str, int], Frames], frame_policy: FramePolicy,
                 backend: str, size, encoded: dict[tuple[str, int], object] | None = None,
                 cache: FrameCache | None = None):
        self.items = {it.item_id: it for it in items}
        self.cache = cache  # where joined clips are kept for the next request (another run) asking them
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

    def videos(self, refs: Sequence[VideoRef]) -> dict[VideoRef, object]:
        """The videos of ``refs``: encoded clips, or their :class:`~bench.frames.Frames`."""
        out = {}
        for ref in dict.fromkeys(refs):
            item_id, clips = ref
            if len(clips) == 1:
                frames = self.decoded[(item_id, clips[0])]
                out[ref] = self.encoded.get((item_id, clips[0]), frames)
            else:
                item = self.items[item_id]
                frames = sample_joined([item.clips[c] for c in clips], self.frame_policy, backend=self.backend,
                                       size=self.size, cache=self.cache)
                out[ref] = frames
            self.used.setdefault(item_id, {})["+".join(map(str, clips))] = frames.indices
            self.notes.setdefault(item_id, []).extend(n for n in frames.notes if n not in self.notes[item_id])
        return out


def planned_requests(protocol: ScoringProtocol, items: Sequence[Item], blind: bool) -> list[tuple]:
    """(request, key) of every request the protocol makes of ``items``; blind runs ask without the video."""
    planned = [pair for it in items for pair in protocol.requests(it)]
    if blind:
        planned = [(dataclasses.replace(r, video=None) if isinstance(r, Ask) else r, k) for r, k in planned]
    return planned


def check_backend(backend, protocol: ScoringProtocol, items: Sequence[Item], videos: ChunkVideos | None, blind: bool,
                  batch_size: int) -> str | None:
    """The backend's self-check (:meth:`~bench.scoring.backends.base.Backend.check`) on the first batch: the first
    items whose requests fill ``batch_size`` (at least one item); its line is printed on stderr and returned."""
    chosen: list[Item] = []
    for it in items:
        if chosen and sum(len(protocol.requests(c)) for c in chosen) >= batch_size:
            break
        chosen.append(it)
    requests = [r for r, _ in planned_requests(protocol, chosen, blind)]
    if not requests:
        return None
    refs = [r.video for r in requests if getattr(r, "video", None) is not None]
    found = videos.videos(refs) if videos is not None and refs else {}
    message = backend.check(requests, found, batch_size)
    if message:
        print(message, file=sys.stderr)
    return message


def score_items(backend, protocol: ScoringProtocol, items: list[Item], videos: ChunkVideos | None, blind: bool,
                batch_size: int) -> tuple[Scored, list[dict], int]:
    """Score ``items``: every request of the protocol in one call of the backend, halving the batch size on
    out-of-memory; when the call fails otherwise, each item alone, so that only the items that fail are failures.

    Returns (rows, failure rows, the batch size that worked).
    """
    planned = planned_requests(protocol, items, blind)
    requests = [r for r, _ in planned]
    while True:
        try:
            refs = [r.video for r in requests if getattr(r, "video", None) is not None]
            found = videos.videos(refs) if videos is not None and refs else {}
            answers = backend.answer(requests, found, batch_size)
            return protocol.rows([k for _, k in planned], answers), [], batch_size
        except Exception as err:  # noqa: BLE001 - model errors are recorded per item, never end the run
            if is_oom(err) and batch_size > 1:
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


def answer_items(backend, protocol: ScoringProtocol, items: Sequence[Item], frame_policy: FramePolicy,
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


def frame_size(size, backend) -> Fit | tuple[int, int] | None:
    """What to decode frames to: ``auto``: the size the backend's processor resizes to (when known); ``full``:
    the video's own size (the processor resizes); or a (width, height)."""
    if size == "auto":
        return backend.frame_fit()
    if size in (None, "full"):
        return None
    return tuple(size)
