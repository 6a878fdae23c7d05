"""TemporalBench's prediction files: ``{"idx": ..., "response": ...}`` lines, as the official inference scripts write
them (mu-cai/TemporalBench ``eval/llava-onevision.py`` L119, ``eval/gpt-4o.py``) into
``outputs/temporalbench_{short,long}_qa/<model>-frame<n>.jsonl``, or lmms-eval's logged samples (``--log_samples``),
whose ``temporalbench_score`` entry holds the question (``item``) and the response (``pred``).

A response is read as ``get_qa_acc.py`` L49 reads it: its first character, case aside, is the letter chosen
(:func:`bench.importers.common.parse_letter`, Vinoground's rule too). A first character that is neither A nor B (or an
empty response, on which ``get_qa_acc.py`` fails) is stored as unparsed (choice -1): wrong and counted, as the official
score counts it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

from bench.importers.common import parse_letter, rows, stored_answer
from bench.items import Item
from bench.loaders.common import LoaderError


def _answer(row: dict, path: Path, where: str) -> tuple[str, str]:
    logged = row.get("temporalbench_score")
    if isinstance(logged, dict) and isinstance(logged.get("item"), dict) and "pred" in logged:
        return str(logged["item"].get("idx")), "" if logged["pred"] is None else str(logged["pred"])
    if "idx" in row and "response" in row:
        return str(row["idx"]), "" if row["response"] is None else str(row["response"])
    raise LoaderError(path, where, "expected {idx, response} (the official prediction files) or an lmms-eval sample "
                                   "with 'temporalbench_score' {item, pred}")


def import_temporalbench(items: Sequence[Item], files: Sequence[Path], **_: object) -> tuple[list, list, str]:
    """Prediction JSONL files -> choice rows in the released option order (A, B)."""
    by_id = {it.item_id: it for it in items}
    choice, seen = [], {}
    for path in map(Path, files):
        if path.suffix.lower() != ".jsonl":
            raise LoaderError(path, None, "expected a JSONL file of {idx, response} lines")
        for where, row in rows(path, ()):
            idx, response = _answer(row, path, where)
            item = by_id.get(idx)
            if item is None:
                raise LoaderError(path, where, f"idx {idx!r} is no question of the TemporalBench files loaded")
            if idx in seen:
                raise LoaderError(path, where, f"a second response for {idx!r} (first: {seen[idx]})")
            seen[idx] = f"{path.name} {where}"
            choice.append({"item_id": idx, "axis": "text", "query": 0, "options": [0, 1], "logits": [math.nan, math.nan],
                           "choice": parse_letter(response, (0, 1)), "answer": stored_answer(response)})
    return [], choice, "answer"
