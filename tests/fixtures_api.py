"""What the API tests share: ``transformers serve`` on the loopback with a tiny Video-LLM that answers in words, and a
fault-injecting proxy in front of it that counts every request it sees and forwards.

The tiny Qwen2-VL the tests build answers with random tokens; :func:`answering_model` gives a copy whose output layer
knows only "Yes", "No", "A", "B" and the end of the turn, along directions in which its last hidden state varies from
one question to the next, so that it answers some questions Yes, others No, a letter, or nothing: parsed answers and
bad ones, deterministically.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

FAULTS = ("429", "500", "close", "slow", "hold")
"""What the proxy does instead of answering at once: 429 with Retry-After, 500, a connection closed without an
answer, a slow answer (forwarded late, within the client's time-out), a request held past the client's time-out and
dropped."""


def answering_model(tiny: str | Path, out: str | Path) -> Path:
    """A copy of the tiny Qwen2-VL at ``tiny`` whose output layer scores only Yes, No, A, B and the end of the turn,
    each along its own direction of the last hidden state's spread over a few questions (orthogonal to its mean)."""
    import numpy as np
    import torch
    from PIL import Image
    from safetensors.torch import load_file, save_file
    from transformers import AutoModelForImageTextToText, AutoProcessor

    out = Path(out)
    if (out / "config.json").is_file():
        return out
    shutil.copytree(tiny, out)
    processor = AutoProcessor.from_pretrained(tiny)
    model = AutoModelForImageTextToText.from_pretrained(tiny).eval()
    rng = np.random.default_rng(0)
    states = []
    for n in range(10):
        images = [Image.fromarray((rng.random((36, 64, 3)) * 255).astype("uint8")) for _ in range(2)]
        turn = [{"role": "user", "content": [{"type": "image"}, {"type": "image"},
                                             {"type": "text", "text": f"question {n}: is it {n * 7 % 5} Yes or No?"}]}]
        prompt = processor.apply_chat_template(turn, add_generation_prompt=True, tokenize=False)
        with torch.no_grad():
            found = model(**processor(text=[prompt], images=images, return_tensors="pt"), output_hidden_states=True)
        states.append(found.hidden_states[-1][0, -1])
    states = torch.stack(states)
    mean = states.mean(0)
    spread = states - mean
    directions = []
    for row in spread[:4]:  # Gram-Schmidt against the mean and each other
        for base in [mean, *directions]:
            row = row - (row @ base) / (base @ base) * base
        directions.append(row)
    tokenizer = processor.tokenizer
    weights = load_file(out / "model.safetensors")
    head = torch.zeros_like(weights["lm_head.weight"])
    for word, direction in zip(("Yes", "No", "A", "<|im_end|>"), directions):
        token = tokenizer.convert_tokens_to_ids(word) if word.startswith("<") else \
            tokenizer(word, add_special_tokens=False).input_ids[0]
        head[token] = direction / direction.norm() * 40
    head[tokenizer("B", add_special_tokens=False).input_ids[0]] = -head[tokenizer("A", add_special_tokens=False)
                                                                         .input_ids[0]]
    weights["lm_head.weight"] = head
    save_file(weights, out / "model.safetensors", metadata={"format": "pt"})
    return out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def serving(model: str | Path, log: Path, timeout: float = 180):
    """``transformers serve`` on the loopback with ``model`` preloaded (offline); yields its base URL (``.../v1``);
    the server's process group is killed at the end, whatever happens."""
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "transformers.cli.transformers", "serve", "--host",
                                 "127.0.0.1", "--port", str(port), "--device", "cpu", str(model)],
                                stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        deadline = time.time() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as found:
                    if found.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"transformers serve did not start: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


class FaultProxy:
    """A loopback HTTP proxy in front of ``upstream`` (a base URL; None: nothing behind it, every request is
    answered 502) that, with a ``rate`` above 0, gives the first try of the first requests to arrive one fault of
    :data:`FAULTS` each, in turn (so every kind is met), and replaces a share ``rate`` of the first and second tries of
    the others (by their body's hash, the run's request key) with a fault of :data:`FAULTS`, waits ``delay`` seconds before forwarding every request, and
    counts: ``connections`` accepted, ``seen`` and ``forwarded`` per key, the ``faults`` done, the ``auth`` headers
    met. ``unauthorized``: answer every request 401 quoting the key it carried, as some providers do."""

    def __init__(self, upstream: str | None, rate: float = 0.0, delay: float = 0.0, slow: float = 1.0,
                 hold: float = 4.0, unauthorized: bool = False):
        self.upstream = urlsplit(upstream) if upstream else None
        self.rate, self.delay, self.slow, self.hold, self.unauthorized = rate, delay, slow, hold, unauthorized
        self.seen: Counter = Counter()
        self.order: dict[str, int] = {}  # each request key's place in the order of first arrivals
        self.forwarded: Counter = Counter()
        self.faults: list[tuple[str, str, float]] = []
        self.arrivals: list[tuple[str, float]] = []
        self.auth: set[str] = set()
        self.connections = 0
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def setup(self):
                super().setup()
                with proxy.lock:
                    proxy.connections += 1

            def do_POST(self):
                try:
                    proxy.handle(self)
                except (BrokenPipeError, ConnectionResetError):  # the client is gone (killed, or it gave up)
                    self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def fault_for(self, key: str, attempt: int) -> str | None:
        """The fault a request's ``attempt``-th arrival gets: the first tries of the first keys to arrive one kind
        each, then only the first two tries of the keys a share ``rate`` picks."""
        place = self.order.setdefault(key, len(self.order))
        if self.rate > 0 and place < len(FAULTS):
            return FAULTS[place] if attempt == 0 else None
        draw = int(key[:8], 16) / 16**8
        if attempt >= 2 or draw >= self.rate:
            return None
        return FAULTS[(int(key[8:12], 16) + attempt) % len(FAULTS)]

    def _reply(self, handler, status: int, body: dict, headers: dict | None = None) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        for name, value in {"Content-Type": "application/json", "Content-Length": str(len(data)),
                            **(headers or {})}.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)

    def handle(self, handler) -> None:
        body = handler.rfile.read(int(handler.headers.get("Content-Length", 0)))
        key = hashlib.sha256(body).hexdigest()
        with self.lock:
            attempt = self.seen[key]
            self.seen[key] += 1
            self.arrivals.append((key, time.monotonic()))
            if handler.headers.get("Authorization"):
                self.auth.add(handler.headers["Authorization"])
            fault = self.fault_for(key, attempt)
            if fault:
                self.faults.append((key, fault, time.monotonic()))
        if self.unauthorized:
            given = handler.headers.get("Authorization", "").removeprefix("Bearer ")
            return self._reply(handler, 401, {"error": {"message": f"Incorrect API key provided: {given}.",
                                                        "code": "invalid_api_key"}})
        if fault == "429":
            return self._reply(handler, 429, {"error": {"message": "Rate limit reached"}}, {"Retry-After": "1"})
        if fault == "500":
            return self._reply(handler, 500, {"error": {"message": "The server had an error"}})
        if fault == "close":
            handler.close_connection = True
            return None
        if fault == "hold":
            time.sleep(self.hold)
            handler.close_connection = True
            return None
        time.sleep(self.delay + (self.slow if fault == "slow" else 0.0))
        if self.upstream is None:
            return self._reply(handler, 502, {"error": {"message": "no upstream"}})
        connection = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port, timeout=300)
        try:
            with self.lock:
                self.forwarded[key] += 1
            connection.request("POST", handler.path, body, {"Content-Type": "application/json"})
            answer = connection.getresponse()
            data = answer.read()
        finally:
            connection.close()
        handler.send_response(answer.status)
        handler.send_header("Content-Type", answer.getheader("Content-Type", "application/json"))
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
        return None

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
