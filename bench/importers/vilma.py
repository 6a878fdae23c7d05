"""ViLMA results JSON ``{key: {"scores": [caption, foil1, ...]}}`` for one annotation file, main or proficiency, with
``mode`` similarity | probability | perplexity (perplexity is negated, as ``bin/eval.py`` does)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from bench.items import Item
from bench.loaders.common import LoaderError, read_json


def import_vilma(items: Sequence[Item], files: Sequence[Path], mode: str = "similarity",
                 proficiency: bool = False, **_: object) -> tuple[list, list, str]:
    """ViLMA results JSON -> pair rows; the item ids are ``<annotation file stem>/<key>``."""
    if mode not in ("similarity", "probability", "perplexity"):
        raise ValueError(f"mode must be similarity, probability or perplexity, got {mode!r}")
    keys: dict[str, Item] = {}
    for it in items:
        if (it.role == "proficiency") == proficiency:
            keys[it.item_id.removesuffix("/proficiency").split("/", 1)[1]] = it
    pair = []
    for path in files:
        results = read_json(path)
        if not isinstance(results, dict):
            raise LoaderError(path, None, "expected a JSON object {item_id: {\"scores\": [...]}}")
        for key, entry in results.items():
            item = keys.get(key)
            if item is None:
                continue  # results of items the validity filter removed, as bin/eval.py skips them
            scores = entry.get("scores") if isinstance(entry, dict) else None
            if not isinstance(scores, list) or len(scores) != len(item.texts):
                raise LoaderError(path, f"key {key!r}", f"expected {len(item.texts)} scores (caption first), "
                                                        f"got {scores!r}")
            for text, value in enumerate(scores):
                value = float(value)
                pair.append({"item_id": item.item_id, "clip": 0, "text": text,
                             "score": -value if mode == "perplexity" else value})
    measure = {"similarity": "similarity", "probability": "p_yes", "perplexity": "neg_perplexity"}[mode]
    return pair, [], measure
