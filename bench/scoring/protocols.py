"""Protocols: how a benchmark's items become requests, and how a backend's answers become score-table rows.

- ``similarity``: every clip x text as a :class:`~bench.scoring.requests.Match` -> pair rows (a similarity).
- ``entail``: every clip x text as a Yes/No question (the benchmark's entailment prompt) -> pair rows with
  P(Yes) / (P(Yes) + P(No)) and both logits (VELOCITI ``vidllm_eval.py::entail_score``, VideoCon
  ``entailment_inference.py::get_entail``).
- ``mc``: for every clip, its texts as options in every cyclic order (A/B, or A..E) -> choice rows with the letter
  logits; for two-clip items of a benchmark with a ``video_choice`` prompt (Vinoground's video score), every text
  asked of the clips joined by a black gap, in both orders.
- ``loglik``: every text's log-likelihood (no video; the unimodal baselines) -> pair rows with ``clip = -1``.

Which prompt a protocol uses comes from the benchmark's spec (``BenchmarkSpec.prompts``) unless one is given. A
benchmark whose items come in several question formats (``BenchmarkSpec.formats``, the item label ``format``) names
the protocols, and their prompts, per format: a protocol asks only the items of the formats that list it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from bench.items import Item
from bench.registry import BenchmarkSpec
from bench.scoring import prompts
from bench.scoring.requests import Ask, Likelihood, Match, Request

FORMAT = "format"  # the item label naming its question format (BenchmarkSpec.formats)
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
    (``--frames none``); ``answers``: the answer words a backend must be able to score; ``formats``: the item
    formats it asks (None: every item).
    """

    name = ""
    request: type = Match
    measure = ""
    uses_frames = True
    blind_ok = False
    answers: tuple[str, ...] = ()
    formats: frozenset[str] | None = None

    def asks(self, item: Item) -> bool:
        """Whether this protocol asks ``item`` anything (a benchmark's ``formats`` may leave items out)."""
        return self.formats is None or item.labels.get(FORMAT) in self.formats

    def requests(self, item: Item) -> list[tuple[Request, Key]]:
        """Every request this protocol makes of ``item``, with the key of its row."""
        raise NotImplementedError

    def check(self, items: Sequence[Item]) -> None:
        """A one-line error for items this protocol cannot ask (checked before a model loads)."""

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


class Asking(ScoringProtocol):
    """A protocol that asks questions: its prompt (name and template), and per item format the prompt of that format
    (``by_format``: format -> (name, template))."""

    def __init__(self, prompt_name: str, template: str, by_format: Mapping[str, tuple[str, str]] | None = None):
        self.prompt_name, self.template = prompt_name, template
        self.by_format = dict(by_format or {})

    def prompt_of(self, item: Item) -> tuple[str, str]:
        """(name, template) of the prompt ``item`` is asked with."""
        return self.by_format.get(item.labels.get(FORMAT), (self.prompt_name, self.template))

    def check(self, items: Sequence[Item]) -> None:
        """A one-line error when an item lacks a label its prompt names (``{question}``...) or cannot be shown as the
        prompt shows options."""
        for item in items:
            name, template = self.prompt_of(item)
            prompts.label_values(template, item.labels, f"{item.benchmark} item {item.item_id!r}", name)

    def describe(self) -> dict:
        found = {"name": self.prompt_name, "template": self.template}
        if self.by_format:
            found["by_format"] = {f: {"name": n, "template": t} for f, (n, t) in self.by_format.items()}
            names = {f: self.by_format.get(f, (self.prompt_name,))[0] for f in sorted(self.formats or self.by_format)}
            if len(set(names.values())) > 1:
                found["name"] = "; ".join(f"{f}: {n}" for f, n in names.items())
        return found


class Entailment(Asking):
    """Yes/No entailment of every clip x text."""

    name, request, measure, blind_ok, answers = "entail", Ask, "p_yes", True, ("Yes", "No")

    def requests(self, item: Item) -> list[tuple[Request, Key]]:
        template = self.prompt_of(item)[1]
        return [(Ask((item.item_id, (c,)), prompts.render_entail(template, text, item.labels), self.answers),
                 (item.item_id, c, t)) for c in range(len(item.clips)) for t, text in enumerate(item.texts)]

    def rows(self, keys: Sequence[Key], answers: np.ndarray) -> Scored:
        p_yes = 1.0 / (1.0 + np.exp(answers[:, 1] - answers[:, 0])) if len(answers) else []
        return Scored([{"item_id": i, "clip": c, "text": t, "score": float(p), "logit_yes": float(a[0]),
                        "logit_no": float(a[1])} for (i, c, t), p, a in zip(keys, p_yes, answers)], [])


class MultipleChoice(Asking):
    """Answer logits (the option letters, or the last words of the item's option names) for every question in every
    cyclic order of its options."""

    name, request, measure, blind_ok, answers = "mc", Ask, "letter_logits", True, ("A", "B")

    def __init__(self, prompt_name: str, template: str, video_template: str | None,
                 by_format: Mapping[str, tuple[str, str]] | None = None):
        super().__init__(prompt_name, template, by_format)
        self.video_template = video_template

    def requests(self, item: Item) -> list[tuple[Request, Key]]:
        out: list[tuple[Request, Key]] = []
        n = len(item.texts)
        name, template = self.prompt_of(item)
        named = item.labels.get(prompts.OPTION_NAMES)
        letters = prompts.answer_words(n, named)
        for c in range(len(item.clips)):
            for shift in range(n):
                options = [(shift + k) % n for k in range(n)]
                asked = prompts.render_choice(template, [item.texts[o] for o in options], name, item.labels,
                                              option_names=named)
                out.append((Ask((item.item_id, (c,)), asked, letters), (item.item_id, "text", c, options)))
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

    def check(self, items: Sequence[Item]) -> None:
        """As :meth:`Asking.check`, and a one-line error for an item a two-option prompt cannot show, or whose
        option names are not one per text."""
        super().check(items)
        for item in items:
            name, template = self.prompt_of(item)
            named = item.labels.get(prompts.OPTION_NAMES)
            if not prompts.takes(template, len(item.texts)):
                raise ValueError(f"the prompt {name!r} shows two options; {item.benchmark} item {item.item_id!r} has "
                                 f"{len(item.texts)} (a prompt with {{options}} shows any number)")
            if named is not None and len(named) != len(item.texts):
                raise ValueError(f"{item.benchmark} item {item.item_id!r} names {len(named)} options for its "
                                 f"{len(item.texts)} texts")

    def describe(self) -> dict:
        return {**super().describe(), "video_template": self.video_template}


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


KINDS = {"entail": "entail", "mc": "choice"}  # protocol -> the kind of prompt it asks (BenchmarkSpec.prompts)


def _by_format(name: str, benchmark: BenchmarkSpec, prompt: str | None,
               default: str | None) -> dict[str, tuple[str, str]]:
    """The prompt of each item format that names its own for protocol ``name`` (none when ``prompt`` is given: it is
    asked of every format); ``default``: the benchmark's prompt of the protocol's kind."""
    if prompt is not None:
        return {}
    kind = KINDS[name]
    return {f: prompts.resolve(asked[name], default, kind)
            for f, asked in benchmark.formats.items() if asked.get(name)}


def make_protocol(name: str, benchmark: BenchmarkSpec, prompt: str | None = None, *,
                  closed: bool = False) -> ScoringProtocol:
    """The protocol ``name`` for ``benchmark``, with ``prompt`` (a prompt name or template) or the benchmark's own
    (per item format, where the benchmark names formats; ``closed``: the one its paper asked closed models, where it
    names one: ``closed_entail``...).

    Unknown names, prompts given to protocols that take none, and a protocol the benchmark asks of none of its item
    formats are one-line errors.
    """
    if name not in PROTOCOLS:
        raise ValueError(f"unknown protocol {name!r}; choose one of {', '.join(PROTOCOLS)}")
    own = {k: benchmark.prompts.get(prompts.CLOSED + k if closed else k) or benchmark.prompts.get(k)
           for k in ("entail", "choice", "video_choice")}
    made: ScoringProtocol
    if name == "entail":
        made = Entailment(*prompts.resolve(prompt, own["entail"], "entail"),
                          _by_format(name, benchmark, prompt, own["entail"]))
    elif name == "mc":
        video = prompts.PROMPTS[own["video_choice"]] if own["video_choice"] else None
        made = MultipleChoice(*prompts.resolve(prompt, own["choice"], "choice"), video,
                              _by_format(name, benchmark, prompt, own["choice"]))
    elif prompt is not None:
        raise ValueError(f"the {name} protocol asks no question, so it takes no --prompt")
    else:
        made = PROTOCOLS[name]()
    if benchmark.formats:
        made.formats = frozenset(f for f, asked in benchmark.formats.items() if name in asked)
        if not made.formats:
            raise ValueError(f"{benchmark.title} asks none of its question formats ({', '.join(benchmark.formats)}) "
                             f"with the {name} protocol")
    return made
