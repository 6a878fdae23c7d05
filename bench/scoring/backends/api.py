"""Remote models (family ``api``): GPT, Gemini, Claude, or an open model served by vLLM or SGLang, asked through an
OpenAI-compatible chat-completions endpoint the same questions, in the same prompts (the closed-model prompt where the
paper has one), on the same frames as a local Video-LLM.

Each clip's frames are JPEG-encoded on the decode workers (:meth:`ApiBackend.encode`, at most ``image_size`` pixels
on the long side: :meth:`ApiBackend.frame_fit`); each :class:`~bench.scoring.requests.Ask` becomes one request, sent
``concurrency`` at a time. Every response is appended to the run's ``responses.jsonl`` the moment it arrives
(:class:`~bench.store.responses.ResponseLog`), keyed by the request's content hash, and a request whose response is
stored there is never sent again: a kill loses at most the requests in flight, and a resumed run sends only what is
missing. A request that fails for good fails its item (recorded with the reason); it is not sent again in the same
launch.

Before the run, one short text-only request checks the endpoint, the key and the model (a clear error at once rather
than a run of failures) and, with ``answers=auto``, whether the endpoint returns ``logprobs``: then the scores are the
answer tokens' probabilities, else the text is read by the paper's parser (:mod:`bench.scoring.api.answers`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from bench.config import Endpoint
from bench.frames import Frames
from bench.frames.decode import Fit
from bench.scoring.api.answers import AnsweredProtocol, reply_of, unread
from bench.scoring.api.client import ApiError, Client
from bench.scoring.api.estimate import request_tokens
from bench.scoring.api.messages import AskSettings, chat_body, encoded, request_key, visual_parts
from bench.scoring.backends.base import Backend, Videos
from bench.scoring.protocols import ScoringProtocol
from bench.scoring.requests import Ask, Request
from bench.store.responses import ResponseLog, usage_totals

CHECK_QUESTION = "Is the sky blue on a clear day? Answer with either Yes or No."


class ApiBackend(Backend):
    """A model behind ``endpoint`` (the :class:`~bench.config.Endpoint` settings, as a dict); the backend options are
    :class:`~bench.scoring.api.messages.AskSettings`."""

    vision = ""

    def __init__(self, model: str, *, device: str = "cpu", dtype: str = "auto", endpoint: dict | None = None,
                 **options: Any):
        super().__init__(model, device=device, dtype=dtype)
        if endpoint is None:
            raise ValueError("the api family needs an endpoint: --endpoint URL (e.g. https://api.openai.com/v1)")
        self.endpoint = Endpoint(**endpoint)
        self.endpoint.check()
        self.settings = AskSettings.of(options)
        self.client = Client(self.endpoint)
        self.revision = None
        self.mode = self.settings.answers if self.settings.answers != "auto" else None
        self.check_result: dict[str, Any] = {}
        self.log: ResponseLog | None = None
        self.protocol: AnsweredProtocol | None = None
        self._failed: dict[str, str] = {}
        self._memory: dict[str, dict] = {}

    def frame_fit(self) -> Fit | None:
        """Frames are decoded straight to the size sent: the long side at most ``image_size`` pixels."""
        return Fit("longest_edge", edge=self.settings.image_size)

    def encode(self, frames: Frames) -> list[dict]:
        """A clip's frames as the content parts that carry them (JPEG images, or one MP4 with the frames' true
        times), on a decode worker."""
        return visual_parts(frames, self.settings)

    def prepare(self, answers: Sequence[str]) -> None:
        """Check the endpoint, the key and the model with one short text-only request (and, with ``answers=auto``,
        whether it returns ``logprobs``); a one-line error when it cannot be used."""
        if self.check_result:
            return
        mode, found = self.mode or "logprobs", None
        try:
            found = self._check(mode)
        except ApiError as err:
            if self.mode is not None or err.status not in (400, 422):  # else: logprobs refused, asked again below
                raise ValueError(self._check_error(err)) from None
        if self.mode is None and (found is None or not found["logprobs"]):
            mode = "text"
            if found is None:
                try:
                    found = self._check(mode)
                except ApiError as err:
                    raise ValueError(self._check_error(err)) from None
        self.mode = mode
        self.check_result = {"answers": mode, "model": found["model"], "text": found["text"][:40],
                             "logprobs_returned": found["logprobs"],
                             "time": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        if self.client.key is None:
            print(f"note: ${self.endpoint.key_env} is not set: requests to {self.client.url} carry no key",
                  file=sys.stderr)

    def _check(self, mode: str) -> dict:
        body = chat_body(self.model_id, CHECK_QUESTION, [], self.settings, mode)
        return reply_of(self.client.post(encoded(body), request_tokens(body)).data)

    def _check_error(self, err: ApiError) -> str:
        hint = {401: f"is ${self.endpoint.key_env} the key of this endpoint?",
                403: f"does the key in ${self.endpoint.key_env} give access to {self.model_id!r}?",
                404: f"is {self.endpoint.url} an OpenAI-compatible base URL (ending in /v1) serving {self.model_id!r}?"}
        return f"the endpoint check failed: {err}" + (f"; {hint[err.status]}" if err.status in hint else "")

    def answering(self, protocol: ScoringProtocol, benchmark=None, folder: str | Path | None = None):
        """The protocol as this model answers it (:class:`~bench.scoring.api.answers.AnsweredProtocol`, with the
        benchmark's answer parsers), its responses kept in ``folder``'s ``responses.jsonl`` (in memory only without
        one: a probe). Answers to be read as text that the benchmark has no reader of are a one-line error, before a
        question is sent."""
        if self.mode is None:
            raise RuntimeError("prepare() decides how answers are read; call it first")
        unreadable = unread(benchmark, protocol) if benchmark is not None and self.mode == "text" else None
        if unreadable:
            raise ValueError(f"{unreadable}, and {self.endpoint.url} returns no logprobs: ask another protocol, or an "
                             "endpoint that returns them")
        parser = benchmark.answer_parser if benchmark is not None else None
        self.protocol = AnsweredProtocol(protocol, self.mode, parser)
        self.log = ResponseLog(folder) if folder is not None else None
        self._failed, self._memory = {}, {}
        return self.protocol

    def _stored(self, key: str) -> dict | None:
        return self.log.get(key) if self.log is not None else self._memory.get(key)

    def _keep(self, record: dict) -> None:
        if self.log is not None:
            self.log.add(record)
        else:
            self._memory[record["key"]] = record

    def _ask(self, key: str, payload: bytes, tokens: int, request: Ask) -> dict:
        """Send one request and keep its response at once."""
        try:
            answered = self.client.post(payload, tokens)
        except ApiError as err:
            self._failed[key] = str(err)
            raise
        record = {"key": key, "item_id": request.video[0] if request.video else None,
                  "video": list(request.video[1]) if request.video else None, "question": request.question,
                  **reply_of(answered.data), "attempts": answered.attempts, "faults": answered.faults,
                  "seconds": round(answered.seconds, 3), "time": datetime.now(timezone.utc).isoformat()}
        self._keep(record)
        return record

    def answer(self, requests: Sequence[Request], videos: Videos, batch_size: int) -> np.ndarray:
        """The response to each request (stored ones from the run's responses, the others sent ``concurrency`` at a
        time and stored as they arrive), as an object array; :class:`~bench.scoring.api.client.ApiError` (after the
        requests in flight are answered and stored) when one fails for good."""
        parts = {ref: self.encode(v) if isinstance(v, Frames) else v for ref, v in videos.items()}  # joined clips
        bodies = [chat_body(self.model_id, request.question, parts.get(request.video, []) if request.video else [],
                            self.settings, self.mode) for request in requests]
        keys = [request_key(b) for b in bodies]
        out = np.empty(len(requests), dtype=object)
        todo: dict[str, int] = {}
        for n, key in enumerate(keys):
            if key in self._failed:
                raise ApiError(self._failed[key])
            found = self._stored(key)
            if found is not None:
                out[n] = found
            else:
                todo.setdefault(key, n)
        if todo:
            self._send(todo, bodies, requests, keys, out)
        return out

    def _send(self, todo: dict[str, int], bodies: list[dict], requests: Sequence[Request], keys: list[str],
              out: np.ndarray) -> None:
        with ThreadPoolExecutor(self.endpoint.concurrency, thread_name_prefix="api") as pool:
            futures = [pool.submit(self._ask, key, encoded(bodies[n]), request_tokens(bodies[n]), requests[n])
                       for key, n in todo.items()]
            try:
                wait(futures, return_when=FIRST_EXCEPTION)
            finally:  # once one failed (or an interrupt came) nothing more starts; what is in flight is kept
                for future in futures:
                    future.cancel()
            wait(futures)
            for future in futures:
                if not future.cancelled() and future.exception() is not None:
                    raise future.exception()
        answered = {key: self._stored(key) for key in todo}
        for n, key in enumerate(keys):
            if out[n] is None:
                out[n] = answered[key]

    def describe(self) -> dict:
        """Manifest entries: the model name, the endpoint (its URL and the name of its key's variable, never the
        key), the settings, the check before the run, and what the run's responses add up to."""
        records = self.log.records() if self.log is not None else list(self._memory.values())
        return {"model": self.model_id, "revision": None, "model_class": "api", **self.endpoint.redacted(),
                "answers": self.mode, "settings": self.settings.describe(), "check": dict(self.check_result),
                "responses": usage_totals(records),
                "answers_this_launch": dict(self.protocol.kinds) if self.protocol else {},
                "requests_this_launch": self.client.budget.requests,
                "described": datetime.now(timezone.utc).isoformat(timespec="seconds")}
