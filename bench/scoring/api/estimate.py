"""What a run of a remote model costs, known before anything is sent (``--dry-run``), and the token estimate the
``--token-budget`` cap counts.

Requests are the protocol's own (every question of every item, as the run would ask them), less the items a stored
run already holds. Images per request follow the frame policy: read from the video's header when the file is there,
else the policy's fixed count (``uniform:k=8`` is 8; a policy whose count depends on the video's length is unknown
without it). Tokens are estimated with OpenAI's published rules (GPT-4o family): text about one token per 4
characters plus a few per message, and per image 85 tokens at ``detail=low``, else 85 + 170 per 512-pixel tile of the
image scaled to fit 2048 x 2048 and then to a short side of at most 768. Other providers count images their own way
(Gemini and Claude by size as well), so take the image figure as an order of magnitude. Output tokens are an upper
bound: ``max_tokens`` per request.
"""

from __future__ import annotations

import base64
import io
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

from bench.frames import FrameError, FramePolicy
from bench.frames import decode
from bench.frames.decode import Fit
from bench.frames.policies import POLICIES
from bench.frames.sampling import window_frames
from bench.items import Clip, Item

MESSAGE_TOKENS = 7  # a message's own tokens and the reply's priming (OpenAI's cookbook count for one user turn)
FIXED_COUNT = {"uniform": "k", "segment_midpoints": "k", "consecutive": "k"}


def text_tokens(text: str) -> int:
    """About one token per 4 characters (OpenAI's rule of thumb for English)."""
    return math.ceil(len(text) / 4)


def image_tokens(width: int, height: int, detail: str | None = None) -> int:
    """OpenAI's image tokens (GPT-4o family): 85 at ``detail=low``; else 85 + 170 per 512-pixel tile after scaling to
    fit 2048 x 2048 and then to a short side of at most 768."""
    if detail == "low":
        return 85
    scale = min(1.0, 2048 / max(width, height))
    width, height = width * scale, height * scale
    scale = min(1.0, 768 / min(width, height))
    width, height = width * scale, height * scale
    return 85 + 170 * math.ceil(width / 512) * math.ceil(height / 512)


def _jpeg_size(url: str) -> tuple[int, int] | None:
    from PIL import Image

    try:
        return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).size
    except (ValueError, OSError, IndexError):
        return None


def request_tokens(body: dict) -> int:
    """The estimated input tokens of a chat-completions body (its text, and its images at their encoded size)."""
    total = MESSAGE_TOKENS
    for message in body.get("messages", ()):
        content = message.get("content")
        for part in ([{"type": "text", "text": content}] if isinstance(content, str) else content or ()):
            if part.get("type") == "text":
                total += text_tokens(part.get("text", ""))
            elif part.get("type") == "image_url":
                size = _jpeg_size(part["image_url"]["url"])
                total += image_tokens(*size, part["image_url"].get("detail")) if size else 0
    return total


@dataclass
class Cost:
    """What a run would send: requests, images, estimated input tokens (text and images apart; None when the frame
    count cannot be known without the videos) and the output tokens at most; ``items`` asked, ``stored`` already."""

    benchmark: str
    items: int
    stored: int
    requests: int
    images: int | None
    text_tokens: int
    image_tokens: int | None
    output_tokens: int
    images_exact: bool

    @property
    def input_tokens(self) -> int | None:
        """Text and image tokens, when both are known."""
        return None if self.image_tokens is None else self.text_tokens + self.image_tokens

    def line(self, name: str = "") -> str:
        """One console line."""
        head = f"{self.benchmark}{f' {name}' if name else ''}: {self.requests:,} requests"
        head += f" ({self.items - self.stored:,} of {self.items:,} items still to score)"
        if self.images is None:
            return (f"{head}, images per request unknown without the videos; text about {self.text_tokens:,} tokens, "
                    f"at most {self.output_tokens:,} output tokens")
        bound = "" if self.images_exact else "at most "
        return (f"{head}, {bound}{self.images:,} images; about {self.input_tokens:,} input tokens (text "
                f"{self.text_tokens:,}, images {self.image_tokens:,}) and at most {self.output_tokens:,} output tokens")


def clip_frames(clip: Clip, frame_policy: FramePolicy, backend: str = "decord") -> tuple[int | None, bool]:
    """How many frames the policy takes from ``clip``: from the video's header when it is there (exact), else the
    policy's fixed count (at most; None when it depends on the video)."""
    params = dict(frame_policy.params)
    if frame_policy.name == "none":
        return 0, True
    if os.path.isfile(clip.path):
        try:
            count, fps = decode.probe(clip.path, backend)
            first, length, _ = window_frames(clip, count, fps)
            return len(POLICIES[frame_policy.name].select(first, length, fps, params, clip.path)[0]), True
        except FrameError:
            return None, False
    if frame_policy.name in FIXED_COUNT:
        return int(params[FIXED_COUNT[frame_policy.name]]), False
    if frame_policy.name == "single":
        return int(params.get("repeat", 1)), True
    return None, False


def clip_size(clip: Clip, fit: Fit, backend: str = "decord") -> tuple[int, int]:
    """The size frames of ``clip`` are sent at: ``fit``'s target for the video's own size, or, when the video is not
    there to tell (or is already smaller), the largest the fit allows."""
    if os.path.isfile(clip.path):
        try:
            found = decode.output_size(clip.path, fit, 1, backend)
        except FrameError:
            found = None
        if found:
            return found
    return (fit.width, fit.height) if fit.kind == "exact" else (fit.edge, fit.edge)


def cost(benchmark: str, items: Sequence[Item], planned: Sequence[tuple], frame_policy: FramePolicy, fit: Fit,
         detail: str | None, max_tokens: int, stored: set[str], backend: str = "decord") -> Cost:
    """The :class:`Cost` of the ``planned`` (request, key) pairs of ``items`` (those of ``stored`` items left out)."""
    by_id = {it.item_id: it for it in items}
    frames: dict[tuple, tuple[int | None, bool]] = {}
    requests = images = text = pictures = 0
    unknown, exact = False, True
    for request, key in planned:
        if key[0] in stored:
            continue
        requests += 1
        text += MESSAGE_TOKENS + text_tokens(request.question)
        if request.video is None:
            continue
        item_id, clips = request.video
        if request.video not in frames:
            counts = [clip_frames(by_id[item_id].clips[c], frame_policy, backend) for c in clips]
            if any(n is None for n, _ in counts):
                frames[request.video] = (None, False)
            elif len(clips) > 1 and frame_policy.name in FIXED_COUNT:  # joined clips: the policy's count, once
                frames[request.video] = (int(dict(frame_policy.params)[FIXED_COUNT[frame_policy.name]]), False)
            else:
                frames[request.video] = (sum(n for n, _ in counts), all(e for _, e in counts))
        count, known = frames[request.video]
        if count is None:
            unknown = True
            continue
        exact &= known
        images += count
        pictures += count * image_tokens(*clip_size(by_id[item_id].clips[clips[0]], fit, backend), detail)
    return Cost(benchmark, len({it.item_id for it in items if it.role == "main"}),
                len({i for i in stored if i in by_id and by_id[i].role == "main"}), requests,
                None if unknown else images, text, None if unknown else pictures, requests * max_tokens, exact)


def run_cost(config, load=None) -> Cost:
    """The :class:`Cost` of the run ``config`` (a :class:`~bench.config.ScoreConfig` of the api family) before
    anything is sent: its plan checked as the run checks it, its requests, less what its run folder already holds."""
    from bench.config import DataSource
    from bench.scoring.api.messages import AskSettings
    from bench.scoring.chunks import planned_requests
    from bench.scoring.plan import make_plan
    from bench.scoring.preflight import stored_state
    from bench.store import read_run

    plan = make_plan(config, load or DataSource.load)
    if plan.family != "api":
        raise ValueError(f"{config.model} is no API model (family {plan.family}): a dry run sends nothing anyway")
    settings = AskSettings.of(plan.benchmark.backend_defaults(plan.family, config.options))
    stored: set[str] = set()
    if stored_state(plan.out, plan.items, config.retry_failures).done:
        run = read_run(plan.out)
        stored = set(run.scored["item_id"]) if run.scored is not None else set()
        if config.retry_failures:
            stored -= set(run.failures["item_id"])
    planned = planned_requests(plan.protocol, plan.items, plan.blind)
    mode = settings.answers if settings.answers != "auto" else "text"
    if isinstance(config.size, tuple):
        fit = Fit("exact", width=config.size[0], height=config.size[1])
    else:  # auto: the size sent; full: the video's own, which OpenAI scales to fit 2048 x 2048
        fit = Fit("longest_edge", edge=settings.image_size if config.size == "auto" else 2048)
    return cost(plan.benchmark.name, plan.items, planned, plan.frame_policy, fit, settings.detail,
                settings.tokens_for(mode), stored, config.decoder)
