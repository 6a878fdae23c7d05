"""Protocols: how a benchmark's items become requests, and how a backend's answers become score-table rows.

- ``similarity``: every clip x text as a :class:`~bench.scoring.requests.Match` -> pair rows (a similarity).
- ``entail``: every clip x text as a Yes/No question (the benchmark's entailment prompt) -> pair rows with
  P(Yes) / (P(Yes) + P(No)) and both logits (VELOCITI ``vidllm_eval.py::entail_score``, VideoCon
  ``entailment_inference.py::get_entail``).
- ``mc``: for every clip, its texts as options in every cyclic order (A/B, or A..E) -> choice rows with the letter
  logits; for two-clip items of a benchmark with a ``video_choice`` prompt (Vinoground's video score), every text
  asked of the clips joined by a black gap, in both orders.
- ``loglik``: every text's log-likelihood (no video; the unimodal baselines) -> pair rows with ``clip = -1``.

Which prompt a protocol uses comes from the benchmark's spec (``BenchmarkSpec.prompts``) unless one is given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from bench.items import Item
from bench.registry import BenchmarkSpec
from bench.scoring import prompts
from bench.scoring.requests import Ask, Likelihood, Match, Request

Key = tuple
"""Where a request's answer goes: (item id, clip, text) for pair rows, (item id, axis, query, options) for choices."""


@dataclass
class Scored:
    """Rows for the pair and choice tables (see :mod:`bench.store.schema`)."""

    pair: list[dict]
    choice: list[dict]


class ScoringProtocol:
    """A scoring protocol: turns items into (request, key) pairs and answers into rows.

    ``request``: the request kind; ``measure``: what the pair scores are (``bench.store.schema.MEASURES``);
    ``uses_frames``: False for text-only protocols; ``blind_ok``: whether it can be asked without frames
    (``--frames none``); ``answers``: the answer words a backend must be able to score.
    """

    name = ""
    request: type = Match
    measure = ""
    uses_frames = True
    blind_ok = False
    answers: tuple[str, ...] = ()

    def requests(self, item: Item) -> list[tuple[Request, Key]]:
        """Every request this protocol makes of ``item``, with the key of its row."""
        raise NotImplementedError

    def rows(self, keys: Sequence[Key], answers: np.ndarray) -> Scored:
        """Rows from the backend's answers, one row of ``answers`` per key."""
        raise NotImplementedError

    def describe(self) -> dict:
        """The prompt (name and template) for the manifest."""
        return {"name": None, "template": None}


class Similarity(ScoringProtocol):
    """Clip x text similarities."""

    name, request, measure = "similarity", Match, "similarity"

    def requests(self, item: Item) -> list[tuple[Request, Key]]:
        return [(Match((item.item_id, (c,)), text), (item.item_id, c, t))
                for c in range(len(item.clips)) for t, text in enumerate(item.texts)]

    def rows(self, keys: Sequence[Key], answers: np.ndarray) -> Scored:
        return Scored([{"item_id": i, "clip": c, "text": t, "score": float(a[0])}
                       for (i, c, t), a in zip(keys, answers)], [])


class Entailment(ScoringProtocol):
    """Yes/No entailment of every clip x text."""

    name, request, measure, blind_ok, answers = "entail", Ask, "p_yes", True, ("Yes", "No")

    def __init__(self, prompt_name: str, template: str):
        self.prompt_name, self.template = prompt_name, template

    def requests(self, item: Item) -> list[tuple[Request, Key]]:
        return [(Ask((item.item_id, (c,)), self.template.format(caption=text), self.answers), (item.item_id, c, t))
                for c in range(len(item.clips)) for t, text in enumerate(item.texts)]

    def rows(self, keys: Sequence[Key], answers: np.ndarray) -> Scored:
        p_yes = 1.0 / (1.0 + np.exp(answers[:, 1] - answers[:, 0])) if len(answers) else []
        return Scored([{"item_id": i, "clip": c, "text": t, "score": float(p), "logit_yes": float(a[0]),
                        "logit_no": float(a[1])} for (i, c, t), p, a in zip(keys, p_yes, answers)], [])

    def describe(self) -> dict:
        return {"name": self.prompt_name, "template": self.template}


class MultipleChoice(ScoringProtocol):
    """Letter logits for every question in every cyclic order of its options."""

    name, request, measure, blind_ok, answers = "mc", Ask, "letter_logits", True, ("A", "B")

    def __init__(self, prompt_name: str, template: str, video_template: str | None):
        self.prompt_name, self.template, self.video_template = prompt_name, template, video_template

    def requests(self, item: Item) -> list[tuple[Request, Key]]:
        out: list[tuple[Request, Key]] = []
        n = len(item.texts)
        letters = tuple(prompts.letters(n))
        for c in range(len(item.clips)):
            for shift in range(n):
                options = [(shift + k) % n for k in range(n)]
                question = prompts.render_choice(self.template, [item.texts[o] for o in options], self.prompt_name)
                out.append((Ask((item.item_id, (c,)), question, letters), (item.item_id, "text", c, options)))
        if self.video_template and len(item.clips) == 2:
            for order in ((0, 1), (1, 0)):
                for t, caption in enumerate(item.texts):
                    out.append((Ask((item.item_id, order), self.video_template.format(caption=caption), ("A", "B")),
                                (item.item_id, "video", t, list(order))))
        return out

    def rows(self, keys: Sequence[Key], answers: np.ndarray) -> Scored:
        rows = []
        for (item_id, axis, query, options), logits in zip(keys, answers):
            logits = logits[:len(options)]
            rows.append({"item_id": item_id, "axis": axis, "query": query, "options": options,
                         "logits": [float(x) for x in logits], "choice": int(options[int(np.argmax(logits))])})
        return Scored([], rows)

    def describe(self) -> dict:
        return {"name": self.prompt_name, "template": self.template, "video_template": self.video_template}


class LogLikelihood(ScoringProtocol):
    """Each text's log-likelihood, without the video."""

    name, request, measure, uses_frames = "loglik", Likelihood, "loglik_sum", False

    def requests(self, item: Item) -> list[tuple[Request, Key]]:
        return [(Likelihood(text), (item.item_id, -1, t)) for t, text in enumerate(item.texts)]

    def rows(self, keys: Sequence[Key], answers: np.ndarray) -> Scored:
        return Scored([{"item_id": i, "clip": c, "text": t, "score": float(a[0]), "loglik_mean": float(a[1]),
                        "n_tokens": float(a[2])} for (i, c, t), a in zip(keys, answers)], [])


PROTOCOLS: dict[str, type[ScoringProtocol]] = {p.name: p for p in (Similarity, Entailment, MultipleChoice,
                                                                   LogLikelihood)}


def make_protocol(name: str, benchmark: BenchmarkSpec, prompt: str | None = None, *,
                  closed: bool = False) -> ScoringProtocol:
    """The protocol ``name`` for ``benchmark``, with ``prompt`` (a prompt name or template) or the benchmark's own
    (``closed``: the one its paper asked closed models, where it names one: ``closed_entail``...).

    Unknown names, and prompts given to protocols that take none, are one-line errors.
    """
    if name not in PROTOCOLS:
        raise ValueError(f"unknown protocol {name!r}; choose one of {', '.join(PROTOCOLS)}")
    own = {k: benchmark.prompts.get(prompts.CLOSED + k if closed else k) or benchmark.prompts.get(k)
           for k in ("entail", "choice", "video_choice")}
    if name == "entail":
        return Entailment(*prompts.resolve(prompt, own["entail"], "entail"))
    if name == "mc":
        video = own["video_choice"]
        return MultipleChoice(*prompts.resolve(prompt, own["choice"], "choice"),
                              prompts.PROMPTS[video] if video else None)
    if prompt is not None:
        raise ValueError(f"the {name} protocol asks no question, so it takes no --prompt")
    return PROTOCOLS[name]()
