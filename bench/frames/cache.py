"""An in-memory LRU cache of decoded frames, bounded by bytes.

Keys hold the file's identity (path, size, modification time), the clip's window, the policy, the backend and the
resize, so a changed file or another policy never hits a stale entry.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Callable

from bench.items import Clip


class FrameCache:
    """Decoded :class:`~bench.frames.sampling.Frames` by key, least recently used dropped past ``max_bytes``."""

    def __init__(self, max_bytes: int = 2 * 1024**3):
        self.max_bytes = max_bytes
        self.bytes = 0
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        self._pending: dict[tuple, threading.Event] = {}

    @staticmethod
    def key(clip: Clip | tuple[Clip, ...], frame_policy, backend: str, size) -> tuple:
        """The cache key of one request (of clips played one after another, for a tuple of clips)."""
        if isinstance(clip, tuple):
            return tuple(FrameCache.key(c, frame_policy, backend, size) for c in clip)
        try:
            stat = os.stat(clip.path)
            identity = (stat.st_size, stat.st_mtime_ns)
        except OSError:
            identity = None
        return (clip.path, identity, clip.start, clip.end, clip.unit, clip.fps, frame_policy, backend, size)

    def get_or_decode(self, clip: Clip | tuple[Clip, ...], frame_policy, backend: str, size, decode: Callable):
        """The cached frames, or ``decode(clip, policy, backend, size)`` stored for next time. A request for a key
        another thread is decoding waits for that decode instead of repeating it."""
        key = self.key(clip, frame_policy, backend, size)
        while True:
            with self._lock:
                if key in self._entries:
                    self._entries.move_to_end(key)
                    self.hits += 1
                    return self._entries[key]
                pending = self._pending.get(key)
                if pending is None:
                    self.misses += 1
                    self._pending[key] = threading.Event()
                    break
            pending.wait()
        try:
            frames = decode(clip, frame_policy, backend, size)
            with self._lock:
                if key not in self._entries and frames.nbytes <= self.max_bytes:
                    self._entries[key] = frames
                    self.bytes += frames.nbytes
                    while self.bytes > self.max_bytes:
                        _, old = self._entries.popitem(last=False)
                        self.bytes -= old.nbytes
            return frames
        finally:
            with self._lock:
                done = self._pending.pop(key, None)
            if done is not None:
                done.set()

    def __len__(self) -> int:
        return len(self._entries)
