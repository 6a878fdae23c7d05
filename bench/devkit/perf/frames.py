"""``foilbench perf frames``: our frame pipeline against a naive loop, and the cache's second pass."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from bench.frames import FrameCache, policy, prefetch, sample_frames
from bench.items import Clip
from bench.videoio import write_video

# (width, height, seconds) of the generated videos, at 30 fps
SHAPES = ((160, 120, 4), (320, 240, 6), (640, 360, 3))


def _videos(folder: Path, copies: int) -> list[str]:
    rng = np.random.default_rng(0)
    paths = []
    for width, height, seconds in SHAPES:
        frames = rng.integers(0, 255, (seconds * 30, height // 8, width // 8, 3), dtype=np.uint8)
        frames = frames.repeat(8, axis=1).repeat(8, axis=2)
        for c in range(copies):
            paths.append(str(write_video(folder / f"{width}x{height}_{c}.mp4", frames, 30)))
    return paths


def naive(paths: list[str], k: int) -> int:
    """Open the file and seek for every frame, one video after another (what per-request harnesses do)."""
    import decord

    decoded = 0
    for path in paths:
        count = len(decord.VideoReader(path))
        for index in np.linspace(0, count - 1, k).round().astype(int):
            reader = decord.VideoReader(path)
            reader.seek_accurate(int(index))
            reader.next().asnumpy()
            decoded += 1
            del reader
    return decoded


def ours(paths: list[str], k: int, cache: FrameCache, workers: int) -> int:
    """One batched read per video through the cache, decoded ahead on worker threads."""
    frame_policy = policy("uniform", k=k)
    requests = ((p, lambda p=p: sample_frames(Clip(p), frame_policy, cache=cache)) for p in paths)
    return sum(len(frames.indices) for _, frames in prefetch(requests, workers=workers))


def _timed(fn, *args) -> tuple[int, float]:
    start = time.perf_counter()
    n = fn(*args)
    return n, time.perf_counter() - start


def measure(frame_count: int = 16, copies: int = 3, workers: int = 2) -> None:
    """Generate the videos, time both pipelines and print frames per second and the ratios."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = _videos(Path(tmp), copies)
        print(f"{len(paths)} videos ({', '.join(f'{w}x{h} {s}s' for w, h, s in SHAPES)} at 30 fps), "
              f"{frame_count} frames each, {workers} workers")
        n_naive, t_naive = _timed(naive, paths, frame_count)
        cache = FrameCache()
        n_ours, t_ours = _timed(ours, paths, frame_count, cache, workers)
        n_again, t_again = _timed(ours, paths, frame_count, cache, workers)
    print(f"naive (open + seek per frame): {n_naive / t_naive:9.1f} frames/s")
    print(f"ours (batched, prefetched):    {n_ours / t_ours:9.1f} frames/s   ratio {t_naive / t_ours:6.2f}x")
    print(f"ours, second pass (cache):     {n_again / t_again:9.1f} frames/s   ratio {t_ours / t_again:6.1f}x "
          f"over the first pass ({cache.hits} hits)")
