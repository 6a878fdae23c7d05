"""The runner: (benchmark, model) -> a run folder of per-item scores, resumable, with frames decoded ahead.

Items go to the adapter in chunks; the frames of the next items are decoded on worker threads while the model works,
each clip once (every text of a clip reuses it). A chunk is stored atomically once scored, so killing the run loses
at most the chunk in flight and a restart resumes after the last stored chunk.
"""

from __future__ import annotations

import hashlib
import platform
import subprocess
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Iterator, Sequence

from bench import __version__
from bench.frames import FrameCache, FrameError, FramePolicy, Frames, policy, prefetch, sample_frames, sample_joined
from bench.items import Item
from bench.paths import PROJECT_ROOT, data_home
from bench.runstore import RunWriter

DEFAULT_POLICY = policy("uniform", k=8)


def versions() -> dict[str, str | None]:
    """Versions of the project and of the libraries that decide the scores."""
    found: dict[str, str | None] = {"foilbench": __version__, "python": platform.python_version()}
    for package in ("torch", "transformers", "decord", "av", "numpy"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = None
    try:
        found["git_commit"] = subprocess.run(["git", "rev-parse", "HEAD"], cwd=PROJECT_ROOT, capture_output=True,
                                             text=True, timeout=10).stdout.strip() or None
    except OSError:
        found["git_commit"] = None
    return found


class ChunkFrames:
    """The :class:`~bench.frames.FrameSource` of one chunk: prefetched clip frames, joined clips on demand."""

    def __init__(self, decoded: dict[tuple[str, int], Frames], frame_policy: FramePolicy, backend: str,
                 size: tuple[int, int] | None):
        self.decoded = decoded
        self.frame_policy = frame_policy
        self.backend = backend
        self.size = size
        self.used: dict[str, dict[str, list[int]]] = {}

    def clip(self, item: Item, index: int) -> Frames:
        frames = self.decoded[(item.item_id, index)]
        self.used.setdefault(item.item_id, {})[str(index)] = frames.indices
        return frames

    def joined(self, item: Item, order: tuple[int, ...]) -> Frames:
        frames = sample_joined([item.clips[i] for i in order], self.frame_policy, backend=self.backend,
                               size=self.size)
        self.used.setdefault(item.item_id, {})["+".join(map(str, order))] = frames.indices
        return frames


class DirectFrames:
    """A :class:`~bench.frames.FrameSource` that decodes on every request (no prefetch, no cache): for notebooks,
    tests and the naive baseline of ``perf score``."""

    def __init__(self, frame_policy: FramePolicy, backend: str = "decord"):
        self.frame_policy = frame_policy
        self.backend = backend

    def clip(self, item: Item, index: int) -> Frames:
        return sample_frames(item.clips[index], self.frame_policy, backend=self.backend)

    def joined(self, item: Item, order: tuple[int, ...]) -> Frames:
        return sample_joined([item.clips[i] for i in order], self.frame_policy, backend=self.backend)


@dataclass
class _Chunk:
    items: list[Item]
    frames: dict[tuple[str, int], Frames]
    failures: list[dict]


def _chunks(items: Sequence[Item], size: int, frame_policy: FramePolicy, uses_frames: bool, backend: str,
            resize: tuple[int, int] | None, cache: FrameCache, workers: int) -> Iterator[_Chunk]:
    """Items in chunks with their decoded frames; items with an unreadable clip become failures."""
    blind = policy("none")

    def requests():
        for it in items:
            for c, clip in enumerate(it.clips):
                use = frame_policy if uses_frames else blind
                yield (it.item_id, c), (lambda clip=clip, use=use: sample_frames(clip, use, backend=backend,
                                                                                 size=resize, cache=cache))

    decoded = prefetch(requests(), workers=workers, queue_size=max(8, 2 * workers))
    for start in range(0, len(items), size):
        chunk = _Chunk(list(items[start:start + size]), {}, [])
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


def _is_oom(err: BaseException) -> bool:
    import torch

    return isinstance(err, torch.cuda.OutOfMemoryError) or "out of memory" in str(err).lower()


def score_chunk(adapter, items: list[Item], frames: ChunkFrames, batch_size: int):
    """Score a chunk, halving the batch size on out-of-memory; items that still fail become failures.

    Returns (scored rows, failure rows, the batch size that worked).
    """
    from bench.scoring.adapters.base import Scored

    while True:
        try:
            return adapter.score(items, frames, batch_size), [], batch_size
        except Exception as err:  # noqa: BLE001 - model errors are recorded per item, never end the run
            if _is_oom(err) and batch_size > 1:
                import torch

                torch.cuda.empty_cache() if torch.cuda.is_available() else None
                batch_size = max(1, batch_size // 2)
                continue
            if len(items) == 1:
                return Scored(), [{"item_id": items[0].item_id, "stage": "model",
                                   "reason": f"{type(err).__name__}: {err}"}], batch_size
            merged, failures = Scored(), []
            for it in items:
                scored, failed, batch_size = score_chunk(adapter, [it], frames, batch_size)
                merged.pair += scored.pair
                merged.choice += scored.choice
                failures += failed
            return merged, failures, batch_size


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


def default_out(benchmark: str, adapter: str, model: str) -> Path:
    """``<data home>/runs/<benchmark>-<adapter>-<model name>-<hash>``."""
    digest = hashlib.sha1(model.encode()).hexdigest()[:6]
    return data_home() / "runs" / f"{benchmark}-{adapter}-{Path(model).name}-{digest}"


def score(benchmark: str, data_path: str | Path, model: str, adapter: str, *, video_root: str | Path | None = None,
          frame_policy: FramePolicy | None = None, prompt: str | None = None, batch_size: int = 8,
          device: str = "cpu", dtype: str = "auto", out: str | Path | None = None, limit: int | None = None,
          seed: int = 0, loader_options: dict | None = None, chunk_size: int = 32, workers: int = 2,
          backend: str = "decord", size: tuple[int, int] | None = None, name: str | None = None,
          retry_failures: bool = False, progress: bool = True, adapter_options: dict | None = None) -> Path:
    """Score ``benchmark`` (loaded from ``data_path``) with ``model`` through ``adapter``; returns the run folder.

    Re-running with the same settings and ``out`` resumes: stored items are skipped.
    """
    import torch
    from tqdm.auto import tqdm

    from bench.loaders import load
    from bench.scoring.adapters import adapter_class

    scorer_class = adapter_class(adapter)
    if batch_size < 1 or chunk_size < 1:
        raise ValueError("batch size and chunk size must be at least 1")
    frame_policy = frame_policy or DEFAULT_POLICY
    loader_options = dict(loader_options or {})
    items = select_items(load(benchmark, data_path, video_root=video_root, **loader_options).items, limit)
    torch.manual_seed(seed)
    scorer = scorer_class(model, device=device, dtype=dtype, prompt=prompt, benchmark=benchmark,
                               **(adapter_options or {}))
    out = Path(out) if out else default_out(benchmark, adapter, model)
    description = scorer.describe()
    manifest = {
        "benchmark": benchmark, "data_path": str(Path(data_path).resolve()),
        "video_root": str(Path(video_root).resolve()) if video_root else None, "loader_options": loader_options,
        "adapter": adapter, "model": model, "revision": description.get("revision"),
        "measure": scorer.measure, "dtype": dtype, "device": device, "batch_size": batch_size,
        "frame_policy": frame_policy.describe() if scorer.uses_frames else policy("none").describe(),
        "frame_backend": backend, "frame_size": list(size) if size else None,
        "prompt": description.get("prompt", {"name": None, "template": None}), "seed": seed, "limit": limit,
        "options": adapter_options or {}, "adapter_details": description, "versions": versions(),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"), "name": name or out.name,
        "n_items": len(items),
    }
    writer = RunWriter(out, manifest, retry_failures=retry_failures)
    todo = [it for it in items if it.item_id not in writer.done]
    cache = FrameCache()
    started = time.perf_counter()
    bar = tqdm(total=len(items), initial=len(items) - len(todo), desc=f"{benchmark} x {Path(model).name}",
               unit="item", disable=not progress)
    for chunk in _chunks(todo, chunk_size, frame_policy, scorer.uses_frames, backend, size, cache, workers):
        source = ChunkFrames(chunk.frames, frame_policy, backend, size)
        scored, failed, batch_size = score_chunk(scorer, chunk.items, source, batch_size)
        writer.write_chunk([it.item_id for it in chunk.items] + [f["item_id"] for f in chunk.failures],
                           scored.pair, scored.choice, chunk.failures + failed, source.used)
        bar.update(len(chunk.items) + len(chunk.failures))
    bar.close()
    writer.finish(seconds=round(time.perf_counter() - started, 3), final_batch_size=batch_size)
    return out
