"""Vinoground's ``textscore-response.jsonl`` / ``videoscore-response.jsonl`` (lines ``{"idx": "0_pos", "response":
"A"}``; ``get_score_all.py``: an answer is its first character); either or both files."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

from bench.importers.common import parse_letter, rows
from bench.items import Item
from bench.loaders.common import LoaderError


def import_vinoground(items: Sequence[Item], files: Sequence[Path], **_: object) -> tuple[list, list, str]:
    """Vinoground response JSONL files -> choice rows (text score: options = texts; video score: options = clips)."""
    by_index = {it.item_id: it for it in items}
    choice = []
    for path in files:
        axis = "video" if "videoscore" in path.name else "text" if "textscore" in path.name else None
        if axis is None:
            raise LoaderError(path, None, "name the file textscore-response.jsonl or videoscore-response.jsonl")
        for where, row in rows(path, ("idx", "response")):
            pair_index, _, side = str(row["idx"]).partition("_")
            item = by_index.get(pair_index)
            if item is None or side not in ("pos", "neg"):
                raise LoaderError(path, where, f"idx {row['idx']!r} names no pair of the benchmark")
            query = 0 if side == "pos" else 1
            gt = item.labels.get(f"{axis}_{side}_gt")
            # the official question puts the true option under GT: for query q, option A is q when GT is "A"
            options = [query, 1 - query] if gt in (None, "A") else [1 - query, query]
            letter = parse_letter(str(row["response"]), options)
            chosen = options[letter] if letter >= 0 else -1
            choice.append({"item_id": item.item_id, "axis": axis, "query": query, "options": options,
                           "logits": [math.nan, math.nan], "choice": chosen, "answer": str(row["response"])})
    return [], choice, "answer"
