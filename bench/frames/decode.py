"""Decoding backends: decord (default) and PyAV, behind one pair of functions.

``probe(path, backend)`` gives (frame count, fps); ``read(path, indices, backend, size)`` gives the frames at those
indices as T x H x W x 3 uint8. Both open and close the file within the call, so no decoder outlives it.

A file that cannot be read raises :class:`FrameError` whose reason says what is wrong, whichever backend failed:
missing, not a regular file (a folder, a FIFO, a device, a link to one: never opened), empty, truncated (an MP4 whose
boxes run past the end of the file, or without its ``moov`` index), not a video container, no video stream, or
corrupt video data at a given frame. Decoder messages are diagnosed with PyAV after a failure, never before.
"""

from __future__ import annotations

import os
import stat
import struct
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


FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
              (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
# Top-level boxes of ISO base media files (MP4, MOV, 3GP...); a file starting with ``ftyp`` is checked box by box.
MP4_INDEX = (b"moov", b"moof")


def check_file(path: str) -> None:
    """Raise :class:`FrameError` for a missing, unreadable, empty or non-regular file (stat only: nothing is
    opened, so a FIFO cannot block)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise FrameError(path, "no such file" + (" (a broken symbolic link)" if os.path.islink(path) else "")) \
            from None
    except (OSError, ValueError) as err:
        raise FrameError(path, f"cannot be read: {getattr(err, 'strerror', None) or err}") from None
    if not stat.S_ISREG(info.st_mode):
        kind = next((name for test, name in FILE_KINDS if test(info.st_mode)), "not a file")
        via = ", through a symbolic link" if os.path.islink(path) else ""
        raise FrameError(path, f"not a regular file ({kind}{via})")
    if info.st_size == 0:
        raise FrameError(path, "empty file (0 bytes)")
    if not os.access(path, os.R_OK):
        raise FrameError(path, "cannot be read: permission denied")


def _mp4_problem(path: str) -> str | None:
    """Truncation or a missing index of an MP4/MOV file, from its top-level boxes; None when they are whole (or the
    file is no MP4)."""
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        if fh.read(8)[4:8] != b"ftyp":
            return None
        offset, seen = 0, set()
        while offset < size:
            fh.seek(offset)
            header = fh.read(16)
            if len(header) < 8:
                return f"truncated: {len(header)} stray bytes after the last whole MP4 box"
            length, kind = struct.unpack(">I4s", header[:8])
            if length == 1 and len(header) == 16:
                length = struct.unpack(">Q", header[8:16])[0]
            elif length == 0:
                length = size - offset
            name = kind.decode("latin-1")
            if length < 8:
                return f"corrupt MP4: the box at byte {offset} ({name!r}) has an impossible size {length}"
            if offset + length > size:
                return (f"truncated: the MP4 box {name!r} at byte {offset} needs {length:,} bytes, "
                        f"the file ends {offset + length - size:,} bytes short")
            seen.add(kind)
            offset += length
    if not seen & set(MP4_INDEX):
        return "truncated or unfinished: the MP4 has no 'moov' index box (written when a recording ends)"
    return None


def _av_reason(err: BaseException) -> str:
    """An FFmpeg error in words, without PyAV's errno and call site."""
    lines = str(err).splitlines()
    return str(getattr(err, "strerror", None) or (lines[0] if lines else type(err).__name__))


def diagnose(path: str) -> str | None:
    """Why the file cannot be decoded, in words, found with PyAV (None when its first frame decodes)."""
    problem = _mp4_problem(path)
    if problem:
        return problem
    try:
        with av.open(path) as container:
            if not container.streams.video:
                kinds = sorted({s.type for s in container.streams})
                return "no video stream" + (f" (only {', '.join(kinds)})" if kinds else " (no streams at all)")
            for _ in container.decode(container.streams.video[0]):
                return None
            return "no decodable video frames"
    except av.error.InvalidDataError:
        return "not a readable video: unknown container format or corrupt data"
    except av.error.FFmpegError as err:
        return f"corrupt video data ({_av_reason(err)})"


def _failure(path: str, backend: str, err: BaseException) -> FrameError:
    """The :class:`FrameError` for a decoder's failure: the diagnosis when there is one, else its first line."""
    reason = diagnose(path)
    if reason is None:
        lines = [line.rsplit(": ", 1)[-1] if line.startswith("[") else line for line in str(err).splitlines()]
        reason = f"{backend} cannot decode it: {next((line for line in lines if line.strip()), type(err).__name__)}"
    return FrameError(path, reason)


def _decord_reader(path: str, size: tuple[int, int] | None):
    import decord

    width, height = size if size else (-1, -1)
    try:
        return decord.VideoReader(path, width=width, height=height, num_threads=1)
    except Exception as err:  # decord raises its own DECORDError for unreadable files
        raise _failure(path, "decord", err) from None


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
    except Exception:  # decord's message is a C++ check; PyAV says which frame is corrupt
        del reader
        _pyav_read(path, indices, size)
        raise FrameError(path, f"decord cannot decode frames {indices[:3]}... (PyAV can: try the pyav backend)") \
            from None


def _pyav_probe(path: str) -> tuple[int, float]:
    try:
        with av.open(path) as container:
            if not container.streams.video:
                raise FrameError(path, diagnose(path) or "no video stream")
            stream = container.streams.video[0]
            fps = float(stream.average_rate or stream.guessed_rate or 0)
            count = stream.frames or sum(1 for _ in container.decode(stream))
    except av.error.FFmpegError as err:
        raise _failure(path, "PyAV", err) from None
    return count, fps


def _pyav_read(path: str, indices: list[int], size: tuple[int, int] | None) -> np.ndarray:
    wanted: dict[int, list[int]] = {}
    for pos, index in enumerate(indices):
        wanted.setdefault(index, []).append(pos)
    out: list[np.ndarray | None] = [None] * len(indices)
    last = max(indices)
    i = -1
    try:
        with av.open(path) as container:
            if not container.streams.video:
                raise FrameError(path, diagnose(path) or "no video stream")
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
    except av.error.FFmpegError as err:
        problem = _mp4_problem(path)
        raise FrameError(path, problem or f"corrupt video data at frame {i + 1} ({_av_reason(err)})") from None
    missing = [indices[p] for p, img in enumerate(out) if img is None]
    if missing:
        problem = _mp4_problem(path)
        raise FrameError(path, problem or f"frames {missing[:5]} are past the last decodable frame ({i}): "
                                          "truncated or corrupt file?")
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
    check_file(path)
    return READERS[backend](path, indices, size)
