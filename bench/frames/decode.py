"""Decoding backends: decord (default) and PyAV, behind one pair of functions.

``probe(path, backend)`` gives (frame count, fps); ``read(path, indices, backend, size)`` gives the frames at those
indices as T x H x W x 3 uint8, decoded straight to ``size``: a (width, height), or a :class:`Fit` (the size a model's
processor would resize each frame to, computed from the video's own size), so the processor's resize has nothing left
to do and no full-resolution frame is kept. Both open and close the file within the call, so no decoder outlives it;
what a probe learns (count, fps, frame size) is remembered per file identity, so reading at a :class:`Fit` opens the
file once more, not twice.

A file that cannot be read raises :class:`FrameError` whose reason says what is wrong, whichever backend failed:
missing, not a regular file (a folder, a FIFO, a device, a link to one: never opened), empty, truncated (an MP4 whose
boxes run past the end of the file, or without its ``moov`` index), not a video container, no video stream, or
corrupt video data at a given frame. Decoder messages are diagnosed with PyAV after a failure, never before.
"""

from __future__ import annotations

import os
import stat
import struct
import threading
from collections import OrderedDict
from dataclasses import asdict, dataclass
from typing import Callable, Union

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


@dataclass(frozen=True)
class Fit:
    """The frame size a processor resizes to, as a rule of the source size (and, for Qwen2-VL's per-frame cap, of
    the number of frames), so that a decoder can decode straight to it.

    ``kind``: ``exact`` (``width`` x ``height``), ``shortest_edge`` (the short side to ``edge``, the long side scaled
    as transformers' ``get_resize_output_image_size`` does), ``longest_edge`` (the long side to at most ``edge``, the
    aspect kept, never enlarged: the images sent to an API), ``qwen2_vl`` (transformers' Qwen2-VL ``smart_resize``
    with ``factor``, ``min_pixels``, ``max_pixels``; with ``video_tokens`` > 0 also the reference per-frame cap of
    ``cap_pixels_per_frame``, ``temporal`` frames per patch). Hashable: it keys the frame cache.
    """

    kind: str
    width: int = 0
    height: int = 0
    edge: int = 0
    factor: int = 0
    min_pixels: int = 0
    max_pixels: int = 0
    video_tokens: int = 0
    temporal: int = 1

    def target(self, width: int, height: int, frames: int = 1) -> tuple[int, int]:
        """(width, height) for a source frame of ``width`` x ``height`` in a clip of ``frames`` frames."""
        if self.kind == "exact":
            return self.width, self.height
        if self.kind == "longest_edge":
            scale = min(1.0, self.edge / max(width, height))
            return max(1, int(round(width * scale))), max(1, int(round(height * scale)))
        if self.kind == "shortest_edge":
            from transformers.image_transforms import get_resize_output_image_size

            dummy = np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), (height, width, 1), (0, 0, 0))
            new_height, new_width = get_resize_output_image_size(dummy, size=self.edge, default_to_square=False,
                                                                 input_data_format="channels_last")
            return int(new_width), int(new_height)
        if self.kind == "qwen2_vl":
            from transformers.models.qwen2_vl.image_processing_qwen2_vl import smart_resize

            max_pixels = self.max_pixels
            if self.video_tokens:
                budget = int(self.video_tokens * self.factor * self.factor * 0.9)
                max_pixels = max(min(max_pixels, budget * self.temporal // max(1, frames)),
                                 int(self.min_pixels * 1.05))
            new_height, new_width = smart_resize(height, width, factor=self.factor, min_pixels=self.min_pixels,
                                                 max_pixels=max_pixels)
            return int(new_width), int(new_height)
        raise ValueError(f"unknown fit kind {self.kind!r}")

    def describe(self) -> dict:
        """The rule as plain data for manifests (unused fields left out)."""
        return {k: v for k, v in asdict(self).items() if v or k == "kind"}


Size = Union[tuple[int, int], Fit, None]
_PROBED: OrderedDict[tuple, tuple] = OrderedDict()
_PROBED_LOCK = threading.Lock()
PROBE_MEMORY = 4096


def _key(path: str, what: object) -> tuple:
    stat = os.stat(path)
    return path, stat.st_size, stat.st_mtime_ns, what


def _recalled(path: str, what: object):
    """What was remembered about this file identity (path, size, modification time) and ``what``; None if nothing."""
    key = _key(path, what)
    with _PROBED_LOCK:
        if key in _PROBED:
            _PROBED.move_to_end(key)
            return _PROBED[key]
    return None


def _remember(path: str, what: object, found) -> None:
    with _PROBED_LOCK:
        _PROBED[_key(path, what)] = found
        while len(_PROBED) > PROBE_MEMORY:
            _PROBED.popitem(last=False)


def _remembered(path: str, what: str, find: Callable[[str], tuple]) -> tuple:
    """``find(path)``, computed once per file identity (path, size, modification time) and ``what``."""
    found = _recalled(path, what)
    if found is None:
        found = find(path)
        _remember(path, what, found)
    return found


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
    """Frames through decord; decoded to ``size`` by PyAV where decord's scaler rejects that size (it fails its own
    size check at some small sizes: 8, 16, 24, 48 and 72 px wide among them). A file whose scaling decord rejected
    once goes to PyAV directly at that size afterwards."""
    rejected = ("decord rejects", size)
    if size is not None and _recalled(path, rejected):
        return _pyav_read(path, indices, size)
    reader = _decord_reader(path, size)
    try:
        return reader.get_batch(indices).asnumpy()
    except Exception:  # decord's message is a C++ check; PyAV says which frame is corrupt
        del reader
        scaled = _pyav_read(path, indices, size)
        if size is not None and _decord_decodes(path, indices):
            _remember(path, rejected, True)
            return scaled
        raise FrameError(path, f"decord cannot decode frames {indices[:3]}... (PyAV can: try the pyav backend)") \
            from None


def _decord_decodes(path: str, indices: list[int]) -> bool:
    """Whether decord decodes these frames at the video's own size (then only its scaler failed)."""
    try:
        _decord_reader(path, None).get_batch(indices)
    except Exception:
        return False
    return True


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


def _frame_size(path: str) -> tuple[int, int]:
    """(width, height) of the video stream, from the container's header (no frame decoded)."""
    try:
        with av.open(path) as container:
            context = container.streams.video[0].codec_context
            return int(context.width), int(context.height)
    except (av.error.FFmpegError, IndexError) as err:
        raise FrameError(path, f"PyAV cannot read its video stream's frame size: {err}") from None


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
    count, fps = _remembered(path, backend, PROBES[backend])
    if count <= 0 or fps <= 0:
        raise FrameError(path, f"no decodable video frames (count={count}, fps={fps})")
    return count, fps


def output_size(path: str, size: Size, frames: int, backend: str = "decord") -> tuple[int, int] | None:
    """The (width, height) ``read`` decodes ``path`` to: ``size`` itself, or a :class:`Fit`'s target for the video's
    own frame size (None: the video's own size)."""
    if not isinstance(size, Fit):
        return size
    check_file(path)
    width, height = _remembered(path, "size", _frame_size)
    if width <= 0 or height <= 0:
        raise FrameError(path, f"no frame size in its video stream ({width}x{height})")
    if max(width, height) / min(width, height) > 200:
        raise FrameError(path, f"frame size {width}x{height}: aspect ratio over 200")
    target = size.target(width, height, frames)
    return None if target == (width, height) else target


def read(path: str, indices: list[int], backend: str = "decord", size: Size = None) -> np.ndarray:
    """The frames at ``indices`` (T x H x W x 3 uint8), decoded to ``size``: a (width, height), or a :class:`Fit`
    of the video's frame size and the number of frames."""
    check_file(path)
    return READERS[backend](path, indices, output_size(path, size, len(indices), backend))
