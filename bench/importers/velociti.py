"""VELOCITI's closed-model CSV (``pos_pred, neg_pred`` per row, in the benchmark file's order, as ``gemini/eval.py``
writes it), read as ``gemini/closed_model_metrics.py`` reads it: only "Yes" and "No" are answers; anything else
("None" when the API answered nothing, "error", "blocked", "idk", empty) is unparsed, and the official scoring drops
the item (``n_dropped``). Multiple-choice answers are read as ``closed_model_metrics.py::mcq`` reads them
(:func:`parse_mcq_answer`)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from bench.importers.common import parse_exact_yes_no, rows, stored_answer
from bench.items import Item
from bench.loaders.common import LoaderError


def import_velociti_closed(items: Sequence[Item], files: Sequence[Path], **_: object) -> tuple[list, list, str]:
    """``pos_pred, neg_pred`` rows in the benchmark file's order -> entailment pair rows."""
    (path,) = files
    predictions = rows(path, ("pos_pred", "neg_pred"))
    if len(predictions) != len(items):
        raise LoaderError(path, None, f"{len(predictions)} prediction rows for {len(items)} items: the file must "
                                      "follow the benchmark file row by row")
    pair = []
    for it, (_, row) in zip(items, predictions):
        for text, column in ((0, "pos_pred"), (1, "neg_pred")):
            answer = stored_answer(row[column])
            pair.append({"item_id": it.item_id, "clip": 0, "text": text, "score": parse_exact_yes_no(answer),
                         "answer": answer})
    return pair, [], "answer"


def parse_mcq_answer(answer: str, options: Sequence[str], **_: object) -> int:
    """The option of a multiple-choice answer as ``gemini/closed_model_metrics.py::mcq`` reads it (L34
    ``ans.split()[0]``): its first word, exactly "A" or "B" (index 0 or 1); -1 for anything else (the official count
    leaves such items out)."""
    words = str(answer).split()
    return ("A", "B").index(words[0]) if words and words[0] in ("A", "B") and len(options) == 2 else -1
