"""What is sent: the frames of the run's frame policy as JPEG images (or as one video) in a single user turn before the
question, in the OpenAI chat-completions format, and the content hash that keys each request in the run's responses.

Settings that change what is asked (:class:`AskSettings`) are backend options (``-b KEY=VALUE``), so the manifest
records them and a run is resumed only with the same ones.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
from dataclasses import asdict, dataclass, fields
from typing import Any, Sequence

import numpy as np

from bench.frames import Frames

ANSWER_MODES = ("auto", "logprobs", "text")
SEND_MODES = ("images", "video")
DETAILS = ("low", "high", "auto")
TEXT_MAX_TOKENS = 32
MP4_TICKS = 1000
"""Ticks a second of the MP4 sent (``send=video``): its frames' times are kept to the millisecond."""


@dataclass(frozen=True)
class AskSettings:
    """How a remote model is asked.

    ``answers``: ``logprobs`` (the answer tokens' log-probabilities, one generated token), ``text`` (the answer text,
    read by the paper's parser) or ``auto`` (logprobs when the endpoint returns them; decided by one short request
    before the run). ``image_size``: the long side of each frame sent, in pixels (never enlarged); ``jpeg_quality``;
    ``detail``: OpenAI's image ``detail`` (low, high, auto; not sent when unset). ``send``: ``images`` (one image per
    frame) or ``video`` (the frames as one MP4 ``video_url`` for servers that take video, such as vLLM and SGLang:
    each frame at its true time in the clip, or ``video_fps`` frames a second when that is set). ``max_tokens``
    (default 1 with logprobs, :data:`TEXT_MAX_TOKENS` for text), ``temperature`` (0: greedy, as the papers ask),
    ``top_logprobs`` (how many alternatives the answer position returns).
    """

    answers: str = "auto"
    image_size: int = 512
    jpeg_quality: int = 90
    detail: str | None = None
    send: str = "images"
    video_fps: float | None = None
    max_tokens: int | None = None
    temperature: float = 0.0
    top_logprobs: int = 20

    @classmethod
    def of(cls, options: dict[str, Any]) -> AskSettings:
        """Settings from backend options; an unknown option or a bad value is a one-line error."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ValueError(f"unknown backend option(s) {unknown} for the api family; it takes {sorted(known)}")
        settings = cls(**options)
        settings.check()
        return settings

    def check(self) -> None:
        """A one-line :class:`ValueError` for a value out of its range."""
        if self.answers not in ANSWER_MODES:
            raise ValueError(f"answers must be one of {', '.join(ANSWER_MODES)}, got {self.answers!r}")
        if self.send not in SEND_MODES:
            raise ValueError(f"send must be one of {', '.join(SEND_MODES)}, got {self.send!r}")
        if self.detail is not None and self.detail not in DETAILS:
            raise ValueError(f"detail must be one of {', '.join(DETAILS)}, got {self.detail!r}")
        for name, low, high in (("image_size", 16, 8192), ("jpeg_quality", 1, 100), ("top_logprobs", 1, 20)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(f"{name} must be an integer from {low} to {high}, got {value!r}")
        if self.max_tokens is not None and (not isinstance(self.max_tokens, int) or self.max_tokens < 1):
            raise ValueError(f"max_tokens must be a positive integer, got {self.max_tokens!r}")
        if self.video_fps is not None and (isinstance(self.video_fps, bool) or
                                           not isinstance(self.video_fps, (int, float)) or not self.video_fps > 0):
            raise ValueError(f"video_fps must be a number > 0, got {self.video_fps!r}")

    def tokens_for(self, mode: str) -> int:
        """The ``max_tokens`` a request asks for when answers are read as ``mode`` (logprobs or text)."""
        return self.max_tokens or (1 if mode == "logprobs" else TEXT_MAX_TOKENS)

    def describe(self) -> dict[str, Any]:
        """The settings as plain data."""
        return asdict(self)


def jpeg(frame: np.ndarray, quality: int) -> bytes:
    """One H x W x 3 uint8 frame as JPEG bytes (the same bytes for the same frame and quality)."""
    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(frame)).save(out, format="JPEG", quality=quality)
    return out.getvalue()


def mp4(frames: np.ndarray, times: Sequence[float]) -> bytes:
    """Frames as an MP4, frame ``i`` shown from ``times[i]`` seconds (the first at 0; each frame one picture, no frame
    dropped): H.264, or MPEG-4 part 2 where PyAV's FFmpeg has no H.264 encoder."""
    from fractions import Fraction

    import av

    tick = Fraction(1, MP4_TICKS)
    pts = []
    for t in times:  # strictly increasing, as a container needs: a frame taken twice shows for one tick
        pts.append(max(int(round((t - times[0]) * MP4_TICKS)), pts[-1] + 1 if pts else 0))
    rate = Fraction(len(pts) - 1, pts[-1]) * MP4_TICKS if len(pts) > 1 else Fraction(1)
    out = io.BytesIO()
    height, width = frames.shape[1] // 2 * 2, frames.shape[2] // 2 * 2  # yuv420p needs even sides
    with av.open(out, mode="w", format="mp4") as container:
        codec = "libx264" if "libx264" in av.codecs_available else "mpeg4"
        stream = container.add_stream(codec, rate=rate.limit_denominator(MP4_TICKS))
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.codec_context.time_base = tick
        for frame, at in zip(frames, pts):
            picture = av.VideoFrame.from_ndarray(np.ascontiguousarray(frame[:height, :width]), format="rgb24")
            picture.pts, picture.time_base = at, tick
            container.mux(stream.encode(picture))
        container.mux(stream.encode())
    return out.getvalue()


def frame_times(frames: Frames, fps: float | None = None) -> list[float]:
    """The time each of ``frames`` is shown at in the MP4 sent: its true time in the clip (in time order, whatever
    order the frames are fed in, as :meth:`~bench.frames.Frames.video_metadata` gives them), or ``fps`` frames a
    second when that is set."""
    if fps is not None:
        return [n / fps for n in range(len(frames.array))]
    metadata = frames.video_metadata()
    return [i / metadata["fps"] for i in metadata["frames_indices"]]


def data_url(kind: str, payload: bytes) -> str:
    """``data:<kind>;base64,...``."""
    return f"data:{kind};base64,{base64.b64encode(payload).decode('ascii')}"


def visual_parts(frames: Frames | None, settings: AskSettings) -> list[dict]:
    """The content parts that carry a clip's frames: one ``image_url`` per frame, or one ``video_url`` (none for no
    frames: a blind run)."""
    if frames is None or not len(frames.array):
        return []
    if settings.send == "video":
        video = mp4(frames.array, frame_times(frames, settings.video_fps))
        return [{"type": "video_url", "video_url": {"url": data_url("video/mp4", video)}}]
    parts = []
    for frame in frames.array:
        image = {"url": data_url("image/jpeg", jpeg(frame, settings.jpeg_quality))}
        if settings.detail:
            image["detail"] = settings.detail
        parts.append({"type": "image_url", "image_url": image})
    return parts


def chat_body(model: str, question: str, visuals: Sequence[dict], settings: AskSettings, mode: str) -> dict:
    """A chat-completions request: the visuals then the question in one user turn; with ``mode`` logprobs, the answer
    position's top log-probabilities asked for."""
    body: dict[str, Any] = {"model": model,
                            "messages": [{"role": "user", "content": [*visuals, {"type": "text", "text": question}]}],
                            "max_tokens": settings.tokens_for(mode), "temperature": settings.temperature}
    if mode == "logprobs":
        body.update(logprobs=True, top_logprobs=settings.top_logprobs)
    return body


def encoded(body: dict) -> bytes:
    """The request body as sent (compact JSON, keys in order: the same bytes for the same request)."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def request_key(body: dict) -> str:
    """The content hash that keys a request in the run's responses (the same request, the same key)."""
    return hashlib.sha256(encoded(body)).hexdigest()
