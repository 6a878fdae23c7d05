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

    @staticmethod
    def key(clip: Clip, frame_policy, backend: str, size) -> tuple:
        """The cache key of one request."""
        try:
            stat = os.stat(clip.path)
            identity = (stat.st_size, stat.st_mtime_ns)
        except OSError:
            identity = None
        return (clip.path, identity, clip.start, clip.end, clip.unit, clip.fps, frame_policy, backend, size)

    def get_or_decode(self, clip: Clip, frame_policy, backend: str, size, decode: Callable):
        """The cached frames, or ``decode(clip, policy, backend, size)`` stored for next time."""
        key = self.key(clip, frame_policy, backend, size)
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                self.hits += 1
                return self._entries[key]
            self.misses += 1
        frames = decode(clip, frame_policy, backend, size)
        with self._lock:
            if key not in self._entries and frames.nbytes <= self.max_bytes:
                self._entries[key] = frames
                self.bytes += frames.nbytes
                while self.bytes > self.max_bytes:
                    _, old = self._entries.popitem(last=False)
                    self.bytes -= old.nbytes
        return frames

    def __len__(self) -> int:
        return len(self._entries)
