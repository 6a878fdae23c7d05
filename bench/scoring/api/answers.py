"""Responses into score-table rows, both ways (the manifest's ``measure`` says which):

- **logprobs** (``p_yes`` / ``letter_logits``, as a local Video-LLM's): each answer word's log-probability at the
  answer position, the log-sum of the returned top alternatives whose text is that word once stripped of spaces
  ("Yes", " Yes"; case kept, as the local backend's token must decode to the word); a word not among them gets -inf
  (no probability mass the server showed). Yes/No rows hold ``logit_yes`` / ``logit_no`` and P(Yes)/(P(Yes)+P(No));
  choice rows hold the letters' log-probabilities. An answer with none of its words among the alternatives is a bad
  answer (NaN score, or choice -1). The generated text is kept in ``answer``.
- **text** (``answer``): the generated text read by the benchmark's own parser (``BenchmarkSpec.answer_parser``: the
  reader ``foilbench import`` uses, given the item and the order its options were shown in), stored as an import
  stores it (:func:`bench.importers.common.stored_answer`), so that the run's numbers are those of an import of the
  same answers. No text, and refusals (``message.refusal``, or ``finish_reason`` ``content_filter``), are no answer,
  whatever a reader would make of it: stored as "None", as VELOCITI's ``gemini/eval.py`` marks one, and unparsed;
  what the server said is kept in the run's ``responses.jsonl``.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence

import numpy as np

from bench.importers.common import stored_answer
from bench.items import Item
from bench.registry import ANSWER_PARSERS, BenchmarkSpec, resolve
from bench.scoring import prompts
from bench.scoring.protocols import Key, Scored, ScoringProtocol
from bench.scoring.requests import Ask

NO_ANSWER = "None"


def reply_of(data: dict) -> dict:
    """What a chat-completions response says, as the run keeps it: text, refusal, finish reason, the answer position's
    top log-probabilities (``[[token, logprob], ...]``), usage, model id, system fingerprint, response id."""
    choice = (data.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    content = message.get("content")
    if isinstance(content, list):  # content given as parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    positions = ((choice.get("logprobs") or {}).get("content")) or []
    top = [[str(t.get("token", "")), float(t["logprob"])] for t in (positions[0].get("top_logprobs") or [])
           if isinstance(t, dict) and t.get("logprob") is not None] if positions else []
    if positions and not top and positions[0].get("logprob") is not None:
        top = [[str(positions[0].get("token", "")), float(positions[0]["logprob"])]]
    return {"text": content or "", "refusal": message.get("refusal") or None,
            "finish_reason": choice.get("finish_reason"), "top_logprobs": top, "logprobs": bool(positions),
            "usage": data.get("usage") or {}, "model": data.get("model"),
            "system_fingerprint": data.get("system_fingerprint"), "response_id": data.get("id")}


def refused(reply: dict) -> bool:
    """Whether the server refused to answer (a ``refusal`` message, or a content filter stopped it)."""
    return bool(reply.get("refusal")) or reply.get("finish_reason") == "content_filter"


def answer_text(reply: dict) -> str:
    """The answer as the run stores it: the text, or "None" when there is none or the server refused."""
    return NO_ANSWER if refused(reply) else stored_answer(reply.get("text", ""))


def answer_logprobs(reply: dict, words: Sequence[str]) -> list[float]:
    """Each word's log-probability at the answer position: the log-sum of the top alternatives that are the word once
    stripped of spaces; -inf for a word not among them."""
    found = []
    for word in words:
        values = [lp for token, lp in reply.get("top_logprobs", ()) if token.strip() == word]
        found.append(float(np.logaddexp.reduce(values)) if values else -math.inf)
    return found


def said(reply: dict) -> bool:
    """Whether a reply holds an answer: some text, and no refusal."""
    return not refused(reply) and bool(str(reply.get("text", "")).strip())


def kind_of(reply: dict, parsed: bool) -> str:
    """The kind of a response for the console: ``answered``, ``refusal``, ``empty`` or ``unparsed``."""
    if refused(reply):
        return "refusal"
    if not str(reply.get("text", "")).strip() and not reply.get("top_logprobs"):
        return "empty"
    return "answered" if parsed else "unparsed"


KIND_WORDS = {"entail": "Yes/No", "choice": "multiple-choice", "video_choice": "video-choice"}


def asked_kinds(protocol: ScoringProtocol) -> list[str]:
    """The question kinds (``BenchmarkSpec.answer_parsers``' keys) a question-answering protocol asks."""
    if protocol.name == "entail":
        return ["entail"]
    return ["choice"] + (["video_choice"] if getattr(protocol, "video_template", None) else [])


def unread(benchmark: BenchmarkSpec, protocol: ScoringProtocol) -> str | None:
    """One line saying which answers ``protocol`` asks of ``benchmark`` that no reader of the benchmark reads as text
    (None when every kind has one)."""
    missing = [KIND_WORDS[k] for k in asked_kinds(protocol) if benchmark.answer_parser(k) is None]
    if not missing:
        return None
    return (f"{benchmark.title} has no reader of {' or '.join(missing)} answers given as text (its papers and code "
            f"read none)")


def check_readers(benchmark: BenchmarkSpec, protocol: ScoringProtocol, answers: str) -> None:
    """Before anything is sent: a one-line error when answers are to be read as text (``answers``: the run's
    ``answers`` setting) and the benchmark has no reader of them; with ``auto``, a note saying the run needs
    log-probabilities."""
    line = unread(benchmark, protocol)
    if line is None or answers == "logprobs":
        return
    if answers == "text":
        raise ValueError(f"{line}: ask with -b answers=logprobs (an endpoint that returns them), or another protocol")
    print(f"note: {line}: this run scores only if the endpoint returns logprobs", file=sys.stderr)


class AnsweredProtocol(ScoringProtocol):
    """A question-answering protocol (entail, mc) answered by a remote model: the same requests and prompts, its
    rows made from responses as ``mode`` says (logprobs or text; see the module). ``parser(kind)`` gives the
    benchmark's reader of a ``kind`` answer (default: :data:`bench.registry.ANSWER_PARSERS`; the backend refuses text
    answers a benchmark has no reader of: :func:`unread`). ``kinds`` counts the responses read, by :func:`kind_of`."""

    def __init__(self, inner: ScoringProtocol, mode: str, parser: Callable[[str], Callable] | None = None):
        if inner.request is not Ask:
            raise ValueError(f"an API model answers questions; the {inner.name} protocol asks none")
        self.inner, self.mode = inner, mode
        self.name, self.request, self.uses_frames = inner.name, inner.request, inner.uses_frames
        self.blind_ok, self.answers, self.formats = inner.blind_ok, inner.answers, inner.formats
        self.measure = "answer" if mode == "text" else inner.measure
        self.parser = parser or (lambda kind: resolve(ANSWER_PARSERS[kind]))
        self.kinds: dict[str, int] = {}
        self._items: dict[str, Item] = {}

    def requests(self, item: Item):
        self._items[item.item_id] = item
        return self.inner.requests(item)

    def describe(self) -> dict:
        return self.inner.describe()

    def _count(self, reply: dict, parsed: bool) -> None:
        kind = kind_of(reply, parsed)
        self.kinds[kind] = self.kinds.get(kind, 0) + 1

    def _words(self, item_id: str, axis: str, options: Sequence[int]) -> tuple[str, ...]:
        """The answer words of a choice: the option letters, or the last words of the item's option names."""
        if axis != "text":
            return tuple(prompts.letters(len(options)))
        return prompts.answer_words(len(options), self._items[item_id].labels.get(prompts.OPTION_NAMES))

    def rows(self, keys: Sequence[Key], answers: np.ndarray) -> Scored:
        """Rows from the responses (one per key, as :func:`reply_of` gives them). A reply with no text (empty, or a
        refusal) is no answer: unparsed, whatever a reader would make of "None"."""
        if self.mode == "logprobs":
            return self._logprob_rows(keys, answers)
        if self.inner.name == "entail":
            parse = self.parser("entail")
            pair = []
            for (item_id, clip, text), reply in zip(keys, answers):
                stored = answer_text(reply)
                score = parse(stored) if said(reply) else math.nan
                self._count(reply, not math.isnan(score))
                pair.append({"item_id": item_id, "clip": clip, "text": text, "score": score, "answer": stored})
            return Scored(pair, [])
        choice = []
        for (item_id, axis, query, options), reply in zip(keys, answers):
            stored = answer_text(reply)
            item = self._items[item_id]
            shown = [item.texts[o] for o in options] if axis == "text" else [str(o) for o in options]
            parse = self.parser("choice" if axis == "text" else "video_choice")
            index = parse(stored, shown, item=item, order=list(options)) if said(reply) else -1
            self._count(reply, index >= 0)
            choice.append({"item_id": item_id, "axis": axis, "query": query, "options": list(options),
                           "logits": [math.nan] * len(options), "choice": options[index] if index >= 0 else -1,
                           "answer": stored})
        return Scored([], choice)

    def _logprob_rows(self, keys: Sequence[Key], answers: np.ndarray) -> Scored:
        entail = self.inner.name == "entail"
        words = [list(self.answers) if entail else self._words(k[0], k[1], k[3]) for k in keys]
        width = max(map(len, words), default=0)
        logits = np.full((len(keys), width), -math.inf)
        for row, (reply, found) in enumerate(zip(answers, words)):
            logits[row, :len(found)] = answer_logprobs(reply, found)
        with np.errstate(over="ignore", invalid="ignore"):
            scored = self.inner.rows(keys, logits)
        for row, reply, values, found in zip(scored.pair or scored.choice, answers, logits, words):
            row["answer"] = answer_text(reply)
            seen = bool(np.isfinite(values[:len(found)]).any())
            self._count(reply, seen)
            if not seen and "choice" in row:
                row["logits"], row["choice"] = [math.nan] * len(row["options"]), -1
        return scored
