"""Light, browser-playable proxies of clips, served from a local HTTP server (never embedded in the notebook).

A proxy is an H.264 MP4 of the clip's window, at most ``MAX_SECONDS`` long and ``MAX_HEIGHT`` pixels high, made on
demand by streaming decode -> scale -> encode with PyAV (memory bounded by a few frames, whatever the clip's resolution
or length) and cached on disk by (file, size, modification time, window).
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import os
import threading
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    import av

from bench.items import Clip

MAX_SECONDS = 30.0
MAX_HEIGHT = 240
DECODE_THREADS = 4


def cache_dir() -> Path:
    """Where proxies are kept: ``$FOILBENCH_HOME/proxies``."""
    from bench.paths import data_home

    return data_home() / "proxies"


def proxy_path(clip: Clip, folder: Path) -> Path:
    """The cache file of a clip's proxy."""
    info = os.stat(clip.path)
    key = f"{clip.path}|{info.st_size}|{info.st_mtime_ns}|{clip.start}|{clip.end}|{clip.unit}|{clip.fps}"
    return folder / f"{hashlib.sha1(key.encode()).hexdigest()[:20]}.mp4"


def proxy_size(width: int, height: int) -> tuple[int, int]:
    """The proxy's (width, height): at most ``MAX_HEIGHT`` high, the aspect ratio kept, both even (for yuv420p)."""
    if height > MAX_HEIGHT:
        width, height = round(width * MAX_HEIGHT / height), MAX_HEIGHT
    return max(2, width // 2 * 2), max(2, height // 2 * 2)


def window_stream(container: av.container.InputContainer, first: int, length: int,
                  fps: float) -> Iterator[av.VideoFrame]:
    """The decoded frames ``first`` .. ``first + length - 1`` of the container's first video stream, one at a time
    (after seeking to the keyframe before ``first``; a frame's index is its presentation time times ``fps``)."""
    stream = container.streams.video[0]
    stream.thread_type = "AUTO"
    stream.thread_count = min(DECODE_THREADS, os.cpu_count() or 1)
    origin = float(stream.start_time * stream.time_base) if stream.start_time is not None and stream.time_base else 0.0
    if first and stream.time_base:
        container.seek(int((origin + (first - 0.5) / fps) / stream.time_base), stream=stream)
    index = -1
    for frame in container.decode(stream):
        index = round((frame.time - origin) * fps) if frame.time is not None else index + 1
        if index >= first + length:
            break
        if index >= first:
            yield frame


def encode_proxy(frames: Iterator[av.VideoFrame], out: Path, size: tuple[int, int], fps: float) -> int:
    """Scale and encode ``frames`` one by one to an H.264 MP4 at ``out`` (written to a temporary name, then renamed;
    the index at the front, so a browser can start playing at once); the number of frames written."""
    import av

    rate = Fraction(fps).limit_denominator(1001)
    tmp = out.with_name(f"{out.stem}.{os.getpid()}.{threading.get_ident()}.part{out.suffix}")
    written = 0
    try:
        with av.open(str(tmp), mode="w", options={"movflags": "+faststart"}) as container:
            stream = container.add_stream("libx264", rate=rate)
            stream.width, stream.height = size
            stream.pix_fmt = "yuv420p"
            stream.options = {"crf": "23", "preset": "veryfast", "g": str(max(1, round(fps)))}
            for frame in frames:
                small = frame.reformat(width=size[0], height=size[1], format="yuv420p")
                small.pts, small.time_base = written, 1 / rate
                container.mux(stream.encode(small))
                written += 1
            container.mux(stream.encode())
        if written:
            tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return written


def make_proxy(clip: Clip, folder: Path | None = None) -> tuple[Path, float]:
    """The clip's proxy (made if missing) and the second of the source file it starts at.

    Raises :class:`bench.frames.FrameError` when the clip cannot be read.
    """
    import av

    from bench.frames import decode
    from bench.frames.sampling import window_frames

    folder = folder or cache_dir()
    decode.check_file(clip.path)
    count, fps = decode.probe(clip.path)
    first, length, _ = window_frames(clip, count, fps)
    length = min(length, int(MAX_SECONDS * fps))
    out = proxy_path(clip, folder)
    if not out.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        try:
            with av.open(clip.path) as container:
                video = container.streams.video[0]
                size = proxy_size(video.codec_context.width, video.codec_context.height)
                written = encode_proxy(window_stream(container, first, length, fps), out, size, fps)
        except (av.error.FFmpegError, IndexError) as err:
            raise decode.FrameError(clip.path, f"PyAV could not make a proxy: {err}") from None
        if not written:
            raise decode.FrameError(clip.path, f"no frame decoded in the window (frames {first} to {first + length})")
    return out, first / fps


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass

    def end_headers(self) -> None:
        self.send_header("Access-Control-Allow-Origin", "*")
        super().end_headers()


class ProxyServer:
    """A local file server for the proxy folder (one per kernel, on 127.0.0.1, a free port)."""

    _instance: ProxyServer | None = None

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        handler = functools.partial(_Quiet, directory=str(folder))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @classmethod
    def shared(cls, folder: Path | None = None) -> ProxyServer:
        """The kernel's server (started on first use)."""
        if cls._instance is None:
            cls._instance = cls(folder or cache_dir())
        return cls._instance

    def url(self, path: Path) -> str:
        """The URL of a file in the served folder."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/{path.relative_to(self.folder)}"

    def stop(self) -> None:
        """Stop serving."""
        self.httpd.shutdown()
        self.httpd.server_close()
        if ProxyServer._instance is self:
            ProxyServer._instance = None
