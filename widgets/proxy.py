"""Light, browser-playable proxies of clips, served from a local HTTP server (never embedded in the notebook).

A proxy is an H.264 MP4 of the clip's window, at most ``MAX_SECONDS`` long and ``MAX_HEIGHT`` pixels high, made on
demand with PyAV and cached on disk by (file, size, modification time, window).
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import os
import threading
from pathlib import Path

import numpy as np

from bench.items import Clip

MAX_SECONDS = 30.0
MAX_HEIGHT = 240


def cache_dir() -> Path:
    """Where proxies are kept: ``$FOILBENCH_HOME/proxies``."""
    from bench.paths import data_home

    return data_home() / "proxies"


def proxy_path(clip: Clip, folder: Path) -> Path:
    """The cache file of a clip's proxy."""
    stat = os.stat(clip.path)
    key = f"{clip.path}|{stat.st_size}|{stat.st_mtime_ns}|{clip.start}|{clip.end}|{clip.unit}|{clip.fps}"
    return folder / f"{hashlib.sha1(key.encode()).hexdigest()[:20]}.mp4"


def make_proxy(clip: Clip, folder: Path | None = None) -> tuple[Path, float]:
    """The clip's proxy (made if missing) and the second of the source file it starts at.

    Raises :class:`bench.frames.FrameError` when the clip cannot be read.
    """
    from bench.frames import decode
    from bench.frames.sampling import window_frames
    from bench.videoio import write_video

    folder = folder or cache_dir()
    decode.check_file(clip.path)
    count, fps = decode.probe(clip.path)
    first, length, _ = window_frames(clip, count, fps)
    length = min(length, int(MAX_SECONDS * fps))
    out = proxy_path(clip, folder)
    if not out.is_file():
        frames = decode.read(clip.path, list(range(first, first + length)))
        height, width = frames.shape[1:3]
        if height > MAX_HEIGHT:
            scale = MAX_HEIGHT / height
            size = (int(width * scale) // 2 * 2, MAX_HEIGHT)
            frames = decode.read(clip.path, list(range(first, first + length)), size=size)
        frames = frames[:, : frames.shape[1] // 2 * 2, : frames.shape[2] // 2 * 2]
        write_video(out, np.ascontiguousarray(frames), fps)
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
