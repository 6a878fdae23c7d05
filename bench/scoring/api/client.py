"""Sending chat-completions requests: the standard library's HTTP client, retries with backoff on 429 / 5xx / time-outs
/ dropped connections (honouring ``Retry-After`` and ``retry-after-ms``), and hard caps on what a launch sends.

The key is read from the environment variable the endpoint names when the client is made, goes only into the
``Authorization`` header, and is cut out of every message the client writes (:func:`redact`). Requests to the
loopback never go through a proxy; others follow the usual ``HTTPS_PROXY`` / ``NO_PROXY`` settings.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import os
import random
import re
import socket
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from bench.config import Endpoint

RETRIED = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
"""HTTP statuses worth another try: time-outs, rate limits, overload and server errors."""
BACKOFF = 1.0        # seconds before the first retry without Retry-After, doubled each time
MAX_BACKOFF = 60.0
MAX_WAIT = 600.0     # the longest Retry-After honoured
LOOPBACK = ("127.0.0.1", "localhost", "::1")
KEY_SHAPES = re.compile(r"\b(?:sk|sk-ant|sk-proj|AIza|hf|gsk|xai)[-_][A-Za-z0-9_*\-]{8,}|\bAIza[A-Za-z0-9_\-]{20,}")


class ApiError(RuntimeError):
    """A request that failed for good (not retried, or out of retries); its message holds no key."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class RequestCapReached(KeyboardInterrupt):
    """A cap of the launch (``--max-requests``, ``--token-budget``) reached: the run stops as an interrupt stops it
    (every answer received is stored; running again resumes)."""


def redact(text: str, key: str | None) -> str:
    """``text`` without ``key`` and without anything shaped like an API key (an error message quoting a key)."""
    if key:
        text = text.replace(key, "[key]")
    return KEY_SHAPES.sub("[key]", text)


def chat_url(base: str) -> str:
    """The chat-completions URL of an OpenAI-compatible base URL (``.../v1``), or the URL itself when it is one."""
    base = base.rstrip("/")
    return base if base.endswith("/chat/completions") else base + "/chat/completions"


@dataclass
class Budget:
    """What a launch may still send: requests (every attempt counts) and estimated tokens; thread-safe."""

    max_requests: int | None = None
    max_tokens: int | None = None
    requests: int = 0
    tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def take(self, tokens: int) -> None:
        """Count one request of ``tokens`` estimated tokens, or raise :class:`RequestCapReached` before it is sent."""
        with self._lock:
            if self.max_requests is not None and self.requests >= self.max_requests:
                raise RequestCapReached(f"--max-requests {self.max_requests} reached")
            if self.max_tokens is not None and self.tokens + tokens > self.max_tokens:
                raise RequestCapReached(f"--token-budget {self.max_tokens} reached (about {self.tokens:,} estimated "
                                        "tokens sent)")
            self.requests += 1
            self.tokens += tokens


@dataclass
class Answered:
    """A response: the JSON the server returned, how many attempts it took and the faults met on the way."""

    data: dict
    attempts: int
    faults: list[str]
    seconds: float


def retry_after(headers) -> float | None:
    """Seconds a server asks to wait (``retry-after-ms``, or ``Retry-After`` as seconds or an HTTP date), capped at
    :data:`MAX_WAIT`; None when it asks nothing readable."""
    if headers is None:
        return None
    found = headers.get("retry-after-ms")
    try:
        if found is not None:
            return min(MAX_WAIT, max(0.0, float(found) / 1000))
        found = headers.get("retry-after")
        if found is None:
            return None
        return min(MAX_WAIT, max(0.0, float(found)))
    except ValueError:
        when = email.utils.parsedate_to_datetime(found) if found else None
        return min(MAX_WAIT, max(0.0, when.timestamp() - time.time())) if when else None


def _message(status: int, payload: bytes) -> str:
    """The server's own words on an error (OpenAI's ``error.message``, else the start of the body)."""
    text = payload.decode("utf-8", "replace")
    try:
        found = json.loads(text)
        error = found.get("error", found) if isinstance(found, dict) else found
        text = error.get("message", error.get("detail", text)) if isinstance(error, dict) else str(error)
    except ValueError:
        pass
    return " ".join(str(text).split())[:300]


class Client:
    """One endpoint: :meth:`post` sends a request body until it is answered, retrying what is worth retrying."""

    def __init__(self, endpoint: Endpoint, budget: Budget | None = None):
        self.endpoint = endpoint
        self.url = chat_url(endpoint.url)
        self.key = os.environ.get(endpoint.key_env) or None
        self.budget = budget or Budget(endpoint.max_requests, endpoint.token_budget)
        loopback = (urlsplit(self.url).hostname or "") in LOOPBACK
        self._opener = urllib.request.build_opener(*([urllib.request.ProxyHandler({})] if loopback else []))

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "foilbench"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        return headers

    def _once(self, payload: bytes) -> tuple[int, object, bytes]:
        """One attempt: (status, headers, body)."""
        request = urllib.request.Request(self.url, data=payload, headers=self._headers(), method="POST")
        try:
            with self._opener.open(request, timeout=self.endpoint.timeout) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as err:
            with err:
                return err.code, err.headers, err.read()

    def post(self, payload: bytes, tokens: int = 0) -> Answered:
        """Send ``payload`` (an encoded body of about ``tokens`` estimated tokens) until it is answered: retried on the
        statuses of :data:`RETRIED`, time-outs, dropped connections and cut-off bodies, waiting as the server asks
        (``Retry-After``) or backing off; :class:`ApiError` for any other status or when retries run out,
        :class:`RequestCapReached` before a request a cap forbids."""
        faults: list[str] = []
        started = time.perf_counter()
        for attempt in range(self.endpoint.retries + 1):
            self.budget.take(tokens)
            wait = None
            try:
                status, headers, body = self._once(payload)
            except (TimeoutError, socket.timeout) as err:
                fault = f"time-out ({type(err).__name__})"
            except (ConnectionError, http.client.HTTPException, urllib.error.URLError, OSError) as err:
                reason = getattr(err, "reason", err)
                if isinstance(reason, (TimeoutError, socket.timeout)):
                    fault = "time-out"
                else:
                    fault = f"connection failed ({type(reason).__name__})"
            else:
                if status == 200:
                    try:
                        data = json.loads(body)
                    except ValueError:
                        fault = "a cut-off or unreadable body"
                    else:
                        if isinstance(data, dict) and data.get("choices"):
                            return Answered(data, attempt + 1, faults, time.perf_counter() - started)
                        fault = "a body without choices"
                elif status in RETRIED:
                    fault = f"HTTP {status}"
                    wait = retry_after(headers)
                else:
                    raise ApiError(redact(f"HTTP {status} from {self.url}: {_message(status, body)}", self.key),
                                   status)
            faults.append(fault)
            if attempt < self.endpoint.retries:
                time.sleep(wait if wait is not None else min(MAX_BACKOFF, BACKOFF * 2 ** attempt)
                           * random.uniform(0.5, 1.0))
        raise ApiError(redact(f"no answer from {self.url} after {len(faults)} attempts ({', '.join(faults)})",
                              self.key))
