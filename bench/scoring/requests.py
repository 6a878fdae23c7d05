"""Typed requests: what a protocol asks of a model backend, one kind per thing a backend computes.

A request names its video by a :data:`VideoRef` (an item's clip, or clips joined by a black gap); the runner decodes
each referenced video once and hands the backend a mapping from refs to frames. A backend answers a batch of requests
of its kind with one row of numbers per request (:data:`ANSWER_WIDTH` says how many for fixed-width kinds).
"""

from __future__ import annotations

from dataclasses import dataclass

VideoRef = tuple[str, tuple[int, ...]]
"""(item id, clip indices): one clip ``(c,)``, or several clips joined in that order by a black gap."""


@dataclass(frozen=True)
class Match:
    """How well ``text`` describes the video: one similarity (contrastive models, X-CLIP)."""

    video: VideoRef
    text: str


@dataclass(frozen=True)
class Ask:
    """The next-token logits of each of ``answers`` (e.g. "Yes", "No" or "A", "B") after ``question`` about the
    video (Video-LLMs); ``video`` None asks without one (blind runs)."""

    video: VideoRef | None
    question: str
    answers: tuple[str, ...]


@dataclass(frozen=True)
class Likelihood:
    """The log-likelihood of ``text`` under a language model: (sum, mean per token, token count)."""

    text: str


Request = Match | Ask | Likelihood
ANSWER_WIDTH: dict[type, int] = {Match: 1, Likelihood: 3}
