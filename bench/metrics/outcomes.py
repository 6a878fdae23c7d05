"""Per-item outcomes from the pair and choice tables: the first step of every metric.

Every benchmark module turns (items, pair table, choice table) into an *outcomes* frame, one row per item and metric:

    item_id  str    the item (ViLMA: the main item; its proficiency twin is folded in)
    subset   str    the item's subset (test / subtest / aspect / category)
    metric   str    the metric's name, e.g. "T", "StrictVLE", "group"
    value    float  1.0 correct / 0.0 wrong for success metrics, fractional credit under the ``expected`` tie policy;
                    a number in [0, 1] for others (average precision)
    strict   float  the value under the ``strict`` tie policy (shown beside the policy asked for)
    expected float  the value under the ``expected`` tie policy: a tie counts as a fair coin's share (1/k); what
                    every test against chance counts, whatever the policy asked for
    chance   float  what a random scorer gets on this item (see :mod:`bench.metrics.chance`)
    status   str    "ok"; "nan" (a needed score is NaN); "missing" (a needed score or the whole item is absent);
                    "unparsed" (an answer that could not be parsed). Anything but "ok" is a failure (value 0).
    tie      bool   a tie decided the outcome (its strict and expected values differ)
    dropped  bool   left out of the denominator under this policy (the benchmark's released code skips it, e.g.
                    VELOCITI's unparsed closed-model answers); counted, never hidden

Ties follow the policy each module's ``outcomes`` takes (:mod:`bench.metrics.ties`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Callable, Iterable, NamedTuple, Sequence

import numpy as np
import pandas as pd

from bench.items import Item
from bench.metrics.ties import Decision, both, choice_decision
from bench.store.schema import pair_frame

OUTCOME_COLUMNS = ["item_id", "subset", "metric", "value", "strict", "expected", "chance", "status", "tie",
                   "dropped"]
STATUSES = ("ok", "nan", "missing", "unparsed")
TEXT_ONLY_CLIP = -1


class ScoreIndex:
    """Pair-table scores looked up by ``(item_id, clip, text)``.

    Rows of text-only scorers (``clip == -1``) stand for every clip of their item. Duplicate rows are an error: a
    score table must say one thing per pair.
    """

    def __init__(self, pair: pd.DataFrame):
        keys = ["item_id", "clip", "text"]
        missing = [c for c in keys + ["score"] if c not in pair.columns]
        if missing:
            raise ValueError(f"pair table lacks column(s) {missing}")
        dup = pair.duplicated(keys, keep=False)
        if dup.any():
            first = pair.loc[dup, keys].iloc[0].tolist()
            raise ValueError(f"pair table has {int(dup.sum())} rows for repeated (item_id, clip, text) keys, "
                             f"e.g. {first}")
        clips = pair["clip"].to_numpy(dtype=np.int64)
        texts = pair["text"].to_numpy(dtype=np.int64)
        scores = pair["score"].to_numpy(dtype=float)
        answered = (pair["answer"].fillna("").astype(str) != "").to_numpy() if "answer" in pair.columns else \
            np.zeros(len(pair), dtype=bool)
        self._by_item = {
            item_id: (clips[rows], texts[rows], scores[rows], answered[rows])
            for item_id, rows in pair.groupby("item_id", sort=False).indices.items()
        }

    def matrix(self, item: Item) -> tuple[np.ndarray, np.ndarray]:
        """``(scores, present)``: clips x texts arrays; absent pairs are NaN in ``scores`` and False in ``present``."""
        shape = (len(item.clips), len(item.texts))
        scores = np.full(shape, np.nan)
        present = np.zeros(shape, dtype=bool)
        if item.item_id not in self._by_item:
            return scores, present
        clips, texts, values, _ = self._by_item[item.item_id]
        bad = (clips < TEXT_ONLY_CLIP) | (clips >= shape[0]) | (texts < 0) | (texts >= shape[1])
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"pair table row for item {item.item_id!r} points at clip {clips[i]}, text {texts[i]}, "
                             f"outside its {shape[0]} clip(s) x {shape[1]} text(s)")
        text_only = clips == TEXT_ONLY_CLIP
        scores[:, texts[text_only]] = values[text_only]
        present[:, texts[text_only]] = True
        seen = ~text_only
        scores[clips[seen], texts[seen]] = values[seen]
        present[clips[seen], texts[seen]] = True
        return scores, present

    def unparsed(self, item: Item) -> np.ndarray:
        """Clips x texts: True where an imported answer was given but could not be parsed (NaN score, answer kept)."""
        mask = np.zeros((len(item.clips), len(item.texts)), dtype=bool)
        if item.item_id not in self._by_item:
            return mask
        clips, texts, values, answered = self._by_item[item.item_id]
        bad = answered & np.isnan(values)
        for c, t in zip(clips[bad], texts[bad]):
            if c == TEXT_ONLY_CLIP:
                mask[:, t] = True
            else:
                mask[c, t] = True
        return mask


def cells_status(scores: np.ndarray, present: np.ndarray, unparsed: np.ndarray | None = None) -> str:
    """The status of a set of needed cells: "missing" beats "unparsed" beats "nan" beats "ok"."""
    if not np.all(present):
        return "missing"
    if unparsed is not None and np.any(unparsed):
        return "unparsed"
    if np.any(np.isnan(scores)):
        return "nan"
    return "ok"


def worst_status(*statuses: str) -> str:
    """The worst of several statuses ("missing" > "unparsed" > "nan" > "ok")."""
    order = ("ok", "nan", "unparsed", "missing")
    return max(statuses, key=order.index)


def beats_all(scores: np.ndarray, winners: Sequence[int], losers: Sequence[int]) -> bool:
    """True when every ``winners`` score is strictly above every ``losers`` score (NaN and ties fail; the
    ``strict`` rule of :func:`bench.metrics.ties.all_above`)."""
    win, lose = scores[list(winners)], scores[list(losers)]
    if np.any(np.isnan(win)) or np.any(np.isnan(lose)):
        return False
    return bool(win.min() > lose.max()) if len(lose) else True


def false_texts(item: Item, clip: int) -> list[int]:
    """The texts not true of ``clip`` (its foils)."""
    return [t for t in range(len(item.texts)) if t not in item.truth[clip]]


class Asked(NamedTuple):
    """One multiple-choice question as asked: option indices in letter order, the letter logits, the choice."""

    options: list[int]
    choice: int
    logits: list[float]


class ChoiceIndex:
    """Choice-table questions grouped by ``(item_id, axis, query)``: each a list of :class:`Asked`."""

    def __init__(self, choice: pd.DataFrame | None):
        self._rows: dict[tuple[str, str, int], list[Asked]] = defaultdict(list)
        if choice is None:
            return
        for item_id, axis, query, options, chosen, logits in zip(
                choice["item_id"], choice["axis"], choice["query"], choice["options"], choice["choice"],
                choice["logits"] if "logits" in choice.columns else [[]] * len(choice)):
            self._rows[(item_id, axis, int(query))].append(
                Asked([int(o) for o in options], int(chosen), [math.nan if x is None else float(x) for x in logits]))

    def asked(self, item_id: str, axis: str, query: int) -> list[Asked]:
        """Every time this question was asked, in table order."""
        return self._rows.get((item_id, axis, query), [])


def answers_status(asked: list[Asked]) -> str:
    """The status of a question: "missing" when nothing was asked, "unparsed" when an answer is -1, else "ok"."""
    if not asked:
        return "missing"
    if any(a.choice == -1 for a in asked):
        return "unparsed"
    return "ok"


def all_orders(asked: list[Asked], target: int, ties: str, official: str = "first") -> Decision:
    """Right only when ``target`` is chosen in every order asked: the product of each answer's credit."""
    if not asked:
        return Decision.plain(False)
    return both(*(choice_decision(a.options, a.logits, a.choice, target, ties, official) for a in asked))


def outcome(item_id: str, subset: str, metric: str, correct: bool | float | Decision, chance: float, status: str,
            *, dropped: bool = False) -> dict:
    """One outcomes row; anything but an "ok" status is recorded as a failure (value 0).

    ``correct`` is a success (bool or credit) or a :class:`~bench.metrics.ties.Decision` (credit under the policy,
    strict and expected credits, tie flag); ``dropped`` leaves the row out of the denominator of the policy asked for.
    """
    if status not in STATUSES:
        raise ValueError(f"status must be one of {STATUSES}, got {status!r}")
    decision = correct if isinstance(correct, Decision) else Decision.plain(correct)
    ok = status == "ok"
    return {"item_id": item_id, "subset": subset, "metric": metric, "value": decision.value if ok else 0.0,
            "strict": decision.strict if ok else 0.0, "expected": decision.expected if ok else 0.0,
            "chance": float(chance), "status": status,
            "tie": bool(decision.tie and ok), "dropped": bool(dropped)}


def outcomes_frame(rows: Iterable[dict]) -> pd.DataFrame:
    """An outcomes frame from rows built by :func:`outcome`."""
    df = pd.DataFrame(list(rows), columns=OUTCOME_COLUMNS)
    return df.astype({"value": float, "strict": float, "expected": float, "chance": float, "tie": bool,
                      "dropped": bool})


RowsOf = Callable[[Item, object], list[dict]]


def per_item(items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None,
             pair_rows: RowsOf | None, choice_rows: RowsOf | None) -> pd.DataFrame:
    """The outcomes of the main items: ``pair_rows(item, ScoreIndex)`` when the pair table has rows (or no table has
    any), ``choice_rows(item, ChoiceIndex)`` when the choice table has rows; a benchmark without one kind of rows
    passes None for it."""
    has_pair = pair is not None and len(pair) > 0
    has_choice = choice is not None and len(choice) > 0
    index = ScoreIndex(pair if has_pair else pair_frame([]))
    choices = ChoiceIndex(choice if has_choice else None)
    rows: list[dict] = []
    for it in items:
        if it.role != "main":
            continue
        if pair_rows is not None and (has_pair or not has_choice or choice_rows is None):
            rows += pair_rows(it, index)
        if choice_rows is not None and has_choice:
            rows += choice_rows(it, choices)
    return outcomes_frame(rows)
