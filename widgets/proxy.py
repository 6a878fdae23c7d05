"""Light, browser-playable proxies of clips, served by token from a local HTTP server (never embedded in the notebook).

A proxy is an H.264 MP4 of the clip's window, at most ``MAX_SECONDS`` long and ``MAX_HEIGHT`` pixels high, made on
demand by streaming decode -> scale -> encode with PyAV (memory bounded by a few frames, whatever the clip's resolution
or length) and cached on disk by (file, size, modification time, window).

The server runs in its own process (so a busy kernel never stalls a video) and guarantees:

- it listens on 127.0.0.1 only and answers only requests whose ``Host`` is ``127.0.0.1:PORT`` or ``localhost:PORT``
  (403 otherwise: a page on another name that resolves to 127.0.0.1, as in DNS rebinding, gets nothing);
- it serves only the files this kernel registered, each at ``/<token>`` with an unguessable random token; any other
  path is 404 (no listings, no other file of the proxy folder, no ``..``: paths are never mapped to files);
- a registered file is opened without following symlinks and must be a regular file (404 otherwise);
- only GET and HEAD (405 for the other standard methods, 501 for unknown ones), single byte ranges (206, 416 when
  unsatisfiable; a malformed ``Range`` is ignored), no ``Access-Control-Allow-Origin`` header, no logging, and no
  traceback for any request;
- it exits when the kernel does (end of its stdin).

Run as a script (``python proxy.py``) it is that server: it prints ``port N``, then reads JSON registrations
``{"token": ..., "path": ...}`` one per line from stdin and answers each with ``ok`` or ``error: <reason>``.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import re
import secrets
import stat
import subprocess
import sys
import threading
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

# Third-party modules are imported inside the functions that need them: run as a script, this file is the server and
# sees only the standard library.
if TYPE_CHECKING:
    import av

    from bench.items import Clip

MAX_SECONDS = 30.0
MAX_HEIGHT = 240
DECODE_THREADS = 4
TOKEN_PATH = re.compile(r"/([A-Za-z0-9_-]{22,64})")
RANGE = re.compile(r"bytes=(\d{0,18})-(\d{0,18})")
TYPES = {".mp4": "video/mp4", ".webm": "video/webm"}


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


def byte_range(header: str | None, size: int) -> tuple[int, int] | None:
    """The (first, last) bytes a ``Range`` header asks of a file of ``size`` bytes; ``None`` for the whole file
    (no header, or one that is malformed or asks for several ranges: such headers are ignored).

    Raises ``ValueError`` when the range cannot be satisfied (it starts past the end).
    """
    found = RANGE.fullmatch(header.strip()) if header else None
    if found is None or found.group(1) == found.group(2) == "":
        return None
    first, last = found.groups()
    if first == "":
        if int(last) == 0 or size == 0:
            raise ValueError("empty suffix range")
        return max(0, size - int(last)), size - 1
    if last and int(last) < int(first):
        return None
    if int(first) >= size:
        raise ValueError("range starts past the end")
    return int(first), min(int(last), size - 1) if last else size - 1


class _Handler(http.server.BaseHTTPRequestHandler):
    """GET and HEAD of registered files by token (see the module's docstring for what it refuses)."""

    server: _TokenServer
    server_version = "foilbench-proxy"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    default_request_version = "HTTP/1.0"  # no HTTP/0.9: every answer, even to garbage, has a status line
    timeout = 60

    def log_message(self, format: str, *args) -> None:
        pass

    def version_string(self) -> str:
        return self.server_version

    def do_GET(self) -> None:
        self._serve(body=True)

    def do_HEAD(self) -> None:
        self._serve(body=False)

    def _not_allowed(self) -> None:
        self.send_response(405)
        self.send_header("Allow", "GET, HEAD")
        self.send_header("Content-Length", "0")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_CONNECT = do_TRACE = _not_allowed

    def _host_allowed(self) -> bool:
        hosts = self.headers.get_all("Host") or []
        port = self.server.server_address[1]
        return len(hosts) == 1 and hosts[0].lower() in (f"127.0.0.1:{port}", f"localhost:{port}")

    def _open(self) -> tuple[int, str] | None:
        """A read-only descriptor of the registered regular file the request names and its path, else ``None``."""
        found = TOKEN_PATH.fullmatch(self.path)
        path = self.server.files.get(found.group(1)) if found else None
        if path is None:
            return None
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        return fd, path

    def _serve(self, body: bool) -> None:
        if not self._host_allowed():
            self.send_error(403, "this server answers only to 127.0.0.1 and localhost")
            return
        opened = self._open()
        if opened is None:
            self.send_error(404)
            return
        fd, path = opened
        with os.fdopen(fd, "rb") as file:
            size = os.fstat(fd).st_size
            try:
                wanted = byte_range(self.headers.get("Range"), size)
            except ValueError:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            first, last = wanted if wanted else (0, size - 1)
            self.send_response(206 if wanted else 200)
            self.send_header("Content-Type", TYPES.get(Path(path).suffix.lower(), "application/octet-stream"))
            self.send_header("Content-Length", str(last - first + 1))
            self.send_header("Accept-Ranges", "bytes")
            if wanted:
                self.send_header("Content-Range", f"bytes {first}-{last}/{size}")
            self.send_header("Cache-Control", "private, max-age=3600")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            if body and last >= first:
                self.connection.sendfile(file, first, last - first + 1)


class _TokenServer(http.server.ThreadingHTTPServer):
    """The HTTP server with its table of registered files (token -> path)."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.files: dict[str, str] = {}

    def handle_error(self, request, client_address) -> None:
        error = sys.exc_info()[1]
        if not isinstance(error, OSError):  # a client that went away is not worth a line
            print(f"foilbench proxy server: {type(error).__name__}: {error}", file=sys.stderr)


def register_line(files: dict[str, str], line: str) -> str:
    """Register one ``{"token": ..., "path": ...}`` line in ``files``; the answer to send back."""
    try:
        entry = json.loads(line)
        token, path = entry["token"], entry["path"]
        if not isinstance(token, str) or not TOKEN_PATH.fullmatch("/" + token):
            return "error: a token is 22 to 64 URL-safe characters"
        if not isinstance(path, str) or not os.path.isabs(path) or not stat.S_ISREG(os.lstat(path).st_mode):
            return f"error: not an absolute path of a regular file (symlinks refused): {path}"
    except (ValueError, KeyError, TypeError, OSError) as err:
        return f"error: {type(err).__name__}: {err}"
    files[token] = path
    return "ok"


def main() -> None:
    """Serve until stdin ends (the kernel exited or stopped the server); the process then exits, connections and all."""
    server = _TokenServer()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"port {server.server_address[1]}", flush=True)
    for line in sys.stdin:
        print(register_line(server.files, line), flush=True)


class RefusedFile(ValueError):
    """The server would not register a file (not an absolute path of a regular file, or the server has exited)."""


class ProxyServer:
    """The kernel's handle on a proxy server process (127.0.0.1, a free port): ``url(path)`` registers a file under a
    fresh token and gives its URL; the process ends with the kernel or with :meth:`stop`."""

    _instance: ProxyServer | None = None

    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-I", "-S", __file__], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, start_new_session=True)
        first = self.process.stdout.readline()
        if not first.startswith("port "):
            self.process.kill()
            raise RuntimeError(f"the proxy server did not start (it said {first!r})")
        self.port = int(first.split()[1])
        self.tokens: dict[Path, str] = {}
        self.lock = threading.Lock()

    @classmethod
    def shared(cls) -> ProxyServer:
        """The kernel's server (started on first use, and again if its process died)."""
        if cls._instance is None or cls._instance.process.poll() is not None:
            cls._instance = cls()
        return cls._instance

    def url(self, path: Path) -> str:
        """The URL of ``path`` (an existing regular file, not a symlink), registered on first use."""
        path = Path(os.path.abspath(path))
        with self.lock:
            if path not in self.tokens:
                token = secrets.token_urlsafe(24)
                self.process.stdin.write(json.dumps({"token": token, "path": str(path)}) + "\n")
                self.process.stdin.flush()
                answer = self.process.stdout.readline().strip()
                if answer != "ok":
                    raise RefusedFile(f"the proxy server refused {path}: {answer or 'it has exited'}")
                self.tokens[path] = token
        return f"http://127.0.0.1:{self.port}/{self.tokens[path]}"

    def stop(self) -> None:
        """Stop serving (the process exits once its stdin is closed)."""
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process.stdout.close()
        if ProxyServer._instance is self:
            ProxyServer._instance = None


if __name__ == "__main__":
    main()
