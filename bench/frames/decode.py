"""Decoding backends: decord (default) and PyAV, behind one pair of functions.

``probe(path, backend)`` gives (frame count, fps); ``read(path, indices, backend, size)`` gives the frames at those
indices as T x H x W x 3 uint8. Both open and close the file within the call, so no decoder outlives it.
"""

from __future__ import annotations

import os
from typing import Callable

import av  # PyAV's FFmpeg must load before decord's bundled one (else PyAV's libvpx encoder breaks)
import numpy as np

BACKENDS = ("decord", "pyav")


class FrameError(Exception):
    """A video that could not be read; ``reason`` says why."""

    def __init__(self, path: str, reason: str):
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


def check_file(path: str) -> None:
    """Raise :class:`FrameError` for a missing or empty file."""
    if not os.path.exists(path):
        raise FrameError(path, "no such file")
    if os.path.getsize(path) == 0:
        raise FrameError(path, "empty file (0 bytes)")


def _decord_reader(path: str, size: tuple[int, int] | None):
    import decord

    width, height = size if size else (-1, -1)
    try:
        return decord.VideoReader(path, width=width, height=height, num_threads=1)
    except Exception as err:  # decord raises its own DECORDError for unreadable files
        raise FrameError(path, f"decord cannot open it: {str(err).splitlines()[0]}") from None


def _decord_probe(path: str) -> tuple[int, float]:
    reader = _decord_reader(path, None)
    try:
        return len(reader), float(reader.get_avg_fps())
    finally:
        del reader


def _decord_read(path: str, indices: list[int], size: tuple[int, int] | None) -> np.ndarray:
    reader = _decord_reader(path, size)
    try:
        return reader.get_batch(indices).asnumpy()
    except Exception as err:
        raise FrameError(path, f"decord failed to decode frames {indices[:3]}...: {str(err).splitlines()[0]}") from None
    finally:
        del reader


def _pyav_probe(path: str) -> tuple[int, float]:
    try:
        with av.open(path) as container:
            stream = container.streams.video[0]
            fps = float(stream.average_rate or stream.guessed_rate or 0)
            count = stream.frames or sum(1 for _ in container.decode(stream))
    except (av.error.FFmpegError, IndexError) as err:
        raise FrameError(path, f"PyAV cannot read it: {err}") from None
    return count, fps


def _pyav_read(path: str, indices: list[int], size: tuple[int, int] | None) -> np.ndarray:
    wanted: dict[int, list[int]] = {}
    for pos, index in enumerate(indices):
        wanted.setdefault(index, []).append(pos)
    out: list[np.ndarray | None] = [None] * len(indices)
    last = max(indices)
    try:
        with av.open(path) as container:
            stream = container.streams.video[0]
            for i, frame in enumerate(container.decode(stream)):
                if i in wanted:
                    if size:
                        frame = frame.reformat(width=size[0], height=size[1])
                    image = frame.to_ndarray(format="rgb24")
                    for pos in wanted[i]:
                        out[pos] = image
                if i >= last:
                    break
    except (av.error.FFmpegError, IndexError) as err:
        raise FrameError(path, f"PyAV failed to decode: {err}") from None
    missing = [indices[p] for p, img in enumerate(out) if img is None]
    if missing:
        raise FrameError(path, f"frames {missing[:5]} are past the last decodable frame")
    return np.stack(out)  # type: ignore[arg-type]


PROBES: dict[str, Callable[[str], tuple[int, float]]] = {"decord": _decord_probe, "pyav": _pyav_probe}
READERS: dict[str, Callable[[str, list[int], tuple[int, int] | None], np.ndarray]] = {
    "decord": _decord_read,
    "pyav": _pyav_read,
}


def probe(path: str, backend: str = "decord") -> tuple[int, float]:
    """(frame count, fps) of a video."""
    check_file(path)
    count, fps = PROBES[backend](path)
    if count <= 0 or fps <= 0:
        raise FrameError(path, f"no decodable video frames (count={count}, fps={fps})")
    return count, fps


def read(path: str, indices: list[int], backend: str = "decord", size: tuple[int, int] | None = None) -> np.ndarray:
    """The frames at ``indices`` (T x H x W x 3 uint8), resized to ``size`` = (width, height) when given."""
    return READERS[backend](path, indices, size)
