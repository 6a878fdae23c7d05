"""ViLMA results JSON ``{key: {"scores": [caption, foil1, ...]}}`` (the format ``bin/eval.py`` reads), main and
proficiency results together, as ``bin/multi_eval.py`` takes both for P+T; ``mode`` similarity | probability |
perplexity (perplexity is negated, as ``bin/eval.py`` L67-68 does, so that higher is better everywhere).

Keys are the annotation files' keys, which repeat across subtests (action replacement and relations share numeric
keys), so each key is resolved within its results file: a file written ``SUBTEST=PATH`` resolves in that subtest (the
annotation file's stem), a plain path in every loaded subtest, and a key found in more than one is an error naming
them. Keys of items the validity filter removed are skipped, as ``bin/eval.py`` skips them; a file none of whose keys
is a loaded item is an error naming a key it tried.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from bench.importers.common import labelled_path
from bench.items import Item
from bench.loaders.common import LoaderError, read_json

MODES = {"similarity": "similarity", "probability": "p_yes", "perplexity": "neg_perplexity"}


def _keys(items: Sequence[Item], proficiency: bool) -> dict[str, dict[str, Item]]:
    """key -> {subtest: item} for main (or proficiency) items."""
    found: dict[str, dict[str, Item]] = {}
    for it in items:
        if (it.role == "proficiency") != proficiency:
            continue
        subtest, _, key = it.item_id.removesuffix("/proficiency").partition("/")
        found.setdefault(key, {})[subtest] = it
    return found


def _read(entry: str | Path, keys: dict[str, dict[str, Item]], subtests: set[str], mode: str,
          scored: dict[str, Path], proficiency: bool = False) -> list[dict]:
    subtest, path = labelled_path(entry)
    if subtest is not None and subtest not in subtests:
        raise ValueError(f"{entry}: no subtest {subtest!r} among the loaded items; "
                         f"subtests: {', '.join(sorted(subtests))}")
    results = read_json(path)
    if not isinstance(results, dict):
        raise LoaderError(path, None, "expected a JSON object {item_id: {\"scores\": [...]}}")
    rows = []
    for key, entry_scores in results.items():
        candidates = keys.get(str(key), {})
        if subtest is not None:
            candidates = {s: it for s, it in candidates.items() if s == subtest}
        if not candidates:
            continue
        if len(candidates) > 1:
            raise LoaderError(path, f"key {key!r}", f"the key is in subtests {', '.join(sorted(candidates))}; name the "
                                                    f"subtest of this file as SUBTEST={path}")
        (item,) = candidates.values()
        if item.item_id in scored:
            raise LoaderError(path, f"key {key!r}", f"item {item.item_id} is already scored by {scored[item.item_id]}")
        scored[item.item_id] = path
        scores = entry_scores.get("scores") if isinstance(entry_scores, dict) else None
        if not isinstance(scores, list) or len(scores) != len(item.texts):
            raise LoaderError(path, f"key {key!r}",
                              f"expected {len(item.texts)} scores (caption first), got {scores!r}")
        for text, value in enumerate(scores):
            value = float(value)
            rows.append({"item_id": item.item_id, "clip": 0, "text": text,
                         "score": -value if mode == "perplexity" else value})
    if results and not rows:
        where = f"subtest {subtest!r}" if subtest is not None else f"the subtests {', '.join(sorted(subtests))}"
        kind = "proficiency" if proficiency else "main"
        raise LoaderError(path, None, f"none of its {len(results)} keys is a {kind} item of {where}, e.g. key "
                                      f"{next(iter(results))!r}: is it the results of another annotation file "
                                      "(or the other test: main vs --proficiency)?")
    return rows


def import_vilma(items: Sequence[Item], files: Sequence[str | Path], mode: str = "similarity",
                 proficiency: Sequence[str | Path] = (), **_: object) -> tuple[list, list, str]:
    """Main results ``files`` and ``proficiency`` results -> pair rows of the main items and of their proficiency
    twins; the item ids are ``<annotation file stem>/<key>`` (``/proficiency`` for twins)."""
    if mode not in MODES:
        raise ValueError(f"mode must be similarity, probability or perplexity, got {mode!r}")
    subtests = {it.item_id.partition("/")[0] for it in items}
    scored: dict[str, Path] = {}
    pair = []
    for entries, is_proficiency in ((files, False), (proficiency, True)):
        keys = _keys(items, is_proficiency)
        for entry in entries:
            pair += _read(entry, keys, subtests, mode, scored, is_proficiency)
    return pair, [], MODES[mode]
