"""HTTP probes against the running proxy server: only registered files, by token, on a loopback Host, with ranges."""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from widgets.proxy import ProxyServer, RefusedFile, byte_range

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def server():
    started = ProxyServer()
    yield started
    started.stop()


@pytest.fixture()
def folder(tmp_path):
    """A proxy folder with one registered-to-be video, one other file and a symlink out of it."""
    (tmp_path / "a.mp4").write_bytes(bytes(range(256)) * 40)
    (tmp_path / "other.mp4").write_bytes(b"not registered")
    (tmp_path / "passwd.mp4").symlink_to("/etc/passwd")
    return tmp_path


def request(server: ProxyServer, method: str, target: str, headers: dict | None = None,
            host: str | None = "default") -> tuple[int, dict, bytes]:
    """(status, headers with lower-case names, body) of one request sent exactly as given (no Host unless asked)."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        connection.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
        if host is not None:
            connection.putheader("Host", f"127.0.0.1:{server.port}" if host == "default" else host)
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def raw(server: ProxyServer, data: bytes) -> bytes:
    """The server's whole answer to ``data`` sent on a fresh connection."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_serves_a_registered_file_by_an_unguessable_token(server, folder):
    url = server.url(folder / "a.mp4")
    token = url.rsplit("/", 1)[1]
    assert url == f"http://127.0.0.1:{server.port}/{token}" and len(token) >= 32
    assert server.url(folder / "a.mp4") == url  # registered once, the same URL after
    other = ProxyServer()
    try:
        assert other.url(folder / "a.mp4") != url  # tokens are random, per server
        assert request(other, "GET", f"/{token}")[0] == 404  # and a server knows only its own
    finally:
        other.stop()
    status, headers, body = request(server, "GET", f"/{token}")
    assert status == 200 and body == (folder / "a.mp4").read_bytes()
    assert headers["content-type"] == "video/mp4" and headers["accept-ranges"] == "bytes"
    status, headers, body = request(server, "GET", f"/{token}", host=f"localhost:{server.port}")
    assert status == 200 and len(body) == (folder / "a.mp4").stat().st_size


def test_nothing_but_registered_tokens(server, folder):
    token = server.url(folder / "a.mp4").rsplit("/", 1)[1]
    refused = ["/", "/a.mp4", "/other.mp4", "/passwd.mp4", f"/{token}/", f"/{token}?x=1", f"/{token}/../other.mp4",
               "/../../../../etc/passwd", "/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/..%2f..%2f..%2fetc%2fpasswd",
               f"/{token}%00", "/%00", "/a.mp4%00.mp4", "//etc/passwd", "/" + "A" * 43,
               f"http://127.0.0.1:{server.port}/a.mp4"]
    for target in refused:
        status, _, body = request(server, "GET", target)
        assert status == 404, target
        assert b"a.mp4" not in body and b"other" not in body and b"root:" not in body, target


def test_symlinks_are_never_followed(server, folder):
    with pytest.raises(RefusedFile, match="symlinks refused"):
        server.url(folder / "passwd.mp4")
    token = server.url(folder / "a.mp4").rsplit("/", 1)[1]
    (folder / "a.mp4").unlink()
    (folder / "a.mp4").symlink_to("/etc/passwd")  # a registered file swapped for a link after registration
    status, _, body = request(server, "GET", f"/{token}")
    assert status == 404 and b"root:" not in body
    for path in (folder, Path("relative.mp4"), folder / "missing.mp4"):
        with pytest.raises(RefusedFile):
            server.url(path)


def test_only_a_loopback_host_header(server, folder):
    token = server.url(folder / "a.mp4").rsplit("/", 1)[1]
    for host in ("evil.example", f"evil.example:{server.port}", f"127.0.0.1:{server.port + 1}", "127.0.0.1",
                 f"localhost.evil.example:{server.port}", f"[::1]:{server.port}", ""):
        status, _, body = request(server, "GET", f"/{token}", host=host)
        assert status == 403 and body != (folder / "a.mp4").read_bytes(), host
    assert request(server, "GET", f"/{token}", host=None)[0] == 403
    hosts = f"Host: 127.0.0.1:{server.port}\r\nHost: evil.example\r\n"
    twice = raw(server, f"GET /{token} HTTP/1.1\r\n{hosts}\r\n".encode())
    assert twice.startswith(b"HTTP/1.1 403")


def test_no_cors_headers(server, folder):
    token = server.url(folder / "a.mp4").rsplit("/", 1)[1]
    status, headers, _ = request(server, "GET", f"/{token}", {"Origin": "http://evil.example"})
    assert status == 200 and not any(name.startswith("access-control-") for name in headers)
    status, headers, _ = request(server, "OPTIONS", f"/{token}", {"Origin": "http://evil.example",
                                                                  "Access-Control-Request-Method": "GET"})
    assert status == 405 and not any(name.startswith("access-control-") for name in headers)


def test_ranges_and_head(server, folder):
    data = (folder / "a.mp4").read_bytes()
    size = len(data)
    token = server.url(folder / "a.mp4").rsplit("/", 1)[1]
    for header, first, last in [("bytes=0-0", 0, 0), ("bytes=100-199", 100, 199), ("bytes=5000-", 5000, size - 1),
                                ("bytes=-300", size - 300, size - 1), ("bytes=9000-99999999", 9000, size - 1),
                                ("bytes=-999999", 0, size - 1)]:
        status, headers, body = request(server, "GET", f"/{token}", {"Range": header})
        assert status == 206, header
        assert body == data[first:last + 1], header
        assert headers["content-range"] == f"bytes {first}-{last}/{size}", header
        assert int(headers["content-length"]) == last - first + 1, header
    for header in ("bytes=10240-", f"bytes={size}-{size + 5}", "bytes=-0"):
        status, headers, body = request(server, "GET", f"/{token}", {"Range": header})
        assert (status, headers["content-range"], body) == (416, f"bytes */{size}", b""), header
    for header in ("bytes=abc", "bytes=5-2", "items=0-10", "bytes=0-1,4-5", "bytes=-", "bytes=" + "9" * 5000):
        status, _, body = request(server, "GET", f"/{token}", {"Range": header})
        assert (status, body) == (200, data), header  # malformed or multiple ranges: ignored
    status, headers, body = request(server, "HEAD", f"/{token}")
    assert (status, body, int(headers["content-length"])) == (200, b"", size)
    status, headers, body = request(server, "HEAD", f"/{token}", {"Range": "bytes=10-19"})
    assert (status, body, headers["content-range"]) == (206, b"", f"bytes 10-19/{size}")


def test_byte_range_parsing():
    assert byte_range(None, 10) is None and byte_range("bytes=2-4", 10) == (2, 4)
    assert byte_range("bytes=-3", 10) == (7, 9)
    assert byte_range("bytes=8-", 10) == (8, 9) and byte_range(" bytes=0-99 ", 10) == (0, 9)
    for unsatisfiable in ("bytes=10-", "bytes=-0", "bytes=12-20"):
        with pytest.raises(ValueError):
            byte_range(unsatisfiable, 10)
    with pytest.raises(ValueError):
        byte_range("bytes=-5", 0)


def test_odd_requests_get_a_status_and_no_traceback(server, folder, capfd):
    token = server.url(folder / "a.mp4").rsplit("/", 1)[1]
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        status, headers, _ = request(server, method, f"/{token}")
        assert status == 405 and headers["allow"] == "GET, HEAD", method
    assert request(server, "BREW", f"/{token}")[0] == 501
    assert request(server, "GET", "/" + "a" * 70_000)[0] == 414
    assert request(server, "GET", f"/{token}", {"X-Long": "x" * 70_000})[0] == 431
    assert raw(server, b"GARBAGE\r\n\r\n").startswith(b"HTTP/1.1 400")
    assert raw(server, b"GET /%00 HTTP/9.9\r\n\r\n").startswith(b"HTTP/1.1 505")
    assert raw(server, b"\x00\xff\xfe binary \r\n\r\n").startswith(b"HTTP/1.1 400")
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:  # a client leaving mid-transfer
        sock.sendall(f"GET /{token} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
        sock.recv(10)
    two = raw(server, (f"GET /{token} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n"
                       f"GET /nope HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nConnection: close\r\n\r\n").encode())
    assert two.startswith(b"HTTP/1.1 200") and b"HTTP/1.1 404" in two  # keep-alive still answers in order
    time.sleep(0.2)
    captured = capfd.readouterr()
    assert captured.out == "" and captured.err == ""


def test_the_server_ends_with_its_kernel(tmp_path):
    kernel = subprocess.run(  # proxy.py needs only the standard library (it is also the server's script)
        [sys.executable, "-I", "-S", "-c", "import sys; sys.path.insert(0, 'widgets'); import proxy; "
         "print(proxy.ProxyServer.shared().port)"], cwd=REPO, capture_output=True, text=True, timeout=60, check=True)
    port = int(kernel.stdout)
    deadline = time.time() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            break
        assert time.time() < deadline, "the proxy server outlived the process that started it"
        time.sleep(0.1)


def test_stop_and_restart(folder):
    first = ProxyServer.shared()
    url = first.url(folder / "a.mp4")
    first.stop()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", first.port), timeout=2).close()
    second = ProxyServer.shared()
    try:
        assert second is not first and second.url(folder / "a.mp4") != url
        second.process.kill()
        second.process.wait()
        third = ProxyServer.shared()  # a dead server is replaced on next use
        assert third is not second
        assert request(third, "GET", "/" + third.url(folder / "a.mp4").rsplit("/", 1)[1])[0] == 200
    finally:
        ProxyServer.shared().stop()
    assert os.path.exists(folder / "a.mp4")
