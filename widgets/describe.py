"""An item's texts, scores and answers put in words for the viewer: names of texts and clips, scores to four
significant digits, and multiple-choice answers as "chose B (foil) in order A=caption, B=foil"."""

from __future__ import annotations

import math
from typing import Sequence

import pandas as pd

from bench.items import Item

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
UNITS = {"similarity": "similarity", "p_yes": "P(Yes)", "loglik_sum": "log-likelihood",
         "neg_perplexity": "negated perplexity", "letter_logits": "letter logit", "answer": "answer"}


def number(value: float, signed: bool = False) -> str:
    """``value`` to 4 significant digits (``+`` shown when ``signed``); "–" for NaN or None."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:+#.4g}" if signed else f"{value:#.4g}"


def _numbered(names: Sequence[str]) -> list[str]:
    """Repeated names numbered in order ("foil", "foil" -> "foil 1", "foil 2"); unique ones kept."""
    total = {n: names.count(n) for n in names}
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(f"{n} {seen[n]}" if total[n] > 1 else n)
    return out


def caption_names(item: Item, clip: int) -> list[str]:
    """The item's texts named from ``clip``'s side: "caption" (true of it) or "foil", numbered when several."""
    return _numbered(["caption" if t in item.truth[clip] else "foil" for t in range(len(item.texts))])


def text_names(item: Item) -> list[str]:
    """The item's texts named once for all: one clip, as :func:`caption_names`; several clips, "text 0", "text 1"..."""
    if len(item.clips) == 1:
        return caption_names(item, 0)
    return [f"text {t}" for t in range(len(item.texts))]


def video_names(item: Item, text: int) -> list[str]:
    """The item's clips named from ``text``'s side: "its video" (it is true of it) or "other video", numbered when
    several."""
    return _numbered(["its video" if text in row else "other video" for row in item.truth])


def score_lines(item: Item, pair: pd.DataFrame, prefix: str = "") -> list[str]:
    """The item's pair scores, one line per clip (text-only scorers: one line), each text named and scored."""
    names = text_names(item)
    lines = []
    for clip, rows in pair[pair["item_id"] == item.item_id].groupby("clip", sort=True):
        scores = " · ".join(f"{names[int(r.text)]} {number(r.score)}" for r in rows.sort_values("text").itertuples())
        where = "text only: " if clip < 0 else f"clip {clip}: " if len(item.clips) > 1 else ""
        lines.append(f"{prefix}{where}{scores}")
    return lines


def choice_phrase(item: Item, axis: str, query: int, options: Sequence[int], chosen: int,
                  logits: Sequence[float] = (), answer: str = "") -> str:
    """One multiple-choice question in words, e.g. "chose B (foil) in order A=caption, B=foil · logits A 0.1200,
    B 0.3400"; questions about a clip of several, or about a text (which video), say which."""
    options = [int(o) for o in options]
    if axis == "text":
        names = caption_names(item, query)
        where = f"clip {query}: " if len(item.clips) > 1 else ""
    else:
        names = video_names(item, query)
        where = f"{text_names(item)[query]}, which video: "
    order = ", ".join(f"{LETTERS[k]}={names[o]}" for k, o in enumerate(options))
    if chosen in options:
        picked = f"chose {LETTERS[options.index(chosen)]} ({names[chosen]})"
    else:
        picked = "no answer understood" + (f" ({answer!r})" if answer else "")
    values = [float(v) for v in logits]
    shown = "" if len(values) != len(options) or any(math.isnan(v) for v in values) else (
        " · logits " + ", ".join(f"{LETTERS[k]} {number(v)}" for k, v in enumerate(values)))
    return f"{where}{picked} in order {order}{shown}"


def choice_lines(item: Item, choice: pd.DataFrame, prefix: str = "") -> list[str]:
    """Every multiple-choice question asked about the item, in words (:func:`choice_phrase`)."""
    rows = choice[choice["item_id"] == item.item_id]
    return [prefix + choice_phrase(item, r.axis, int(r.query), r.options, int(r.choice), r.logits, r.answer)
            for r in rows.itertuples()]
