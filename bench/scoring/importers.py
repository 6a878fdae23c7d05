"""Importing released scores and closed models' answers into run stores (the same tables as our own scorers).

Formats (``IMPORTERS``):

- ``answers``: a CSV or JSONL of ``item_id, text, answer`` (Yes/No per caption, e.g. a closed model's entailment
  answers); parsed as VELOCITI's ``gemini/closed_model_metrics.py`` does: "Yes" in it and "No" not -> Yes, the
  reverse -> No, anything else unparsed (NaN score, answer kept).
- ``velociti-closed``: VELOCITI's closed-model CSV (``pos_pred, neg_pred`` per row, in the benchmark file's order).
- ``vinoground``: ``textscore-response.jsonl`` / ``videoscore-response.jsonl`` lines ``{"idx": "0_pos", "response":
  "A"}`` (``get_score_all.py``: an answer is its first character); pass either or both files.
- ``vilma``: ViLMA results JSON ``{key: {"scores": [caption, foil1, ...]}}`` for one annotation file, main or
  proficiency, with ``--mode similarity|probability|perplexity`` (perplexity is negated, as ``bin/eval.py`` does).
- ``videocon``: VideoCon's released score CSVs (no header: ``videopath, caption, entailment, pos, neg``; the last
  two columns are ignored, as the repository says), matched to items by video and description.
"""

from __future__ import annotations

import csv
import math
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Sequence

from bench.items import Item
from bench.loaders.common import LoaderError, read_csv_rows, read_json, read_jsonl
from bench.loaders.videocon import PROMPT_DESCRIPTION
from bench.runstore import RunWriter
from bench.scoring.run import versions


def parse_yes_no(answer: str) -> float:
    """1.0 for Yes, 0.0 for No, NaN when the answer is neither or both (VELOCITI's closed-model rule)."""
    yes, no = "Yes" in answer, "No" in answer
    return 1.0 if yes and not no else 0.0 if no and not yes else math.nan


def _rows(path: Path, columns: Sequence[str]) -> list[tuple[str, dict]]:
    if path.suffix.lower() == ".jsonl":
        rows = [(f"line {n}", r) for n, r in read_jsonl(path)]
        for where, row in rows:
            missing = [c for c in columns if c not in row]
            if missing:
                raise LoaderError(path, where, f"missing field(s) {missing}")
        return rows
    return [(f"line {n}", r) for n, r in read_csv_rows(path, columns)]


def import_answers(items: Sequence[Item], files: Sequence[Path], **_: object) -> tuple[list, list, str]:
    """``item_id, text, answer`` rows -> entailment pair rows (score 1 / 0 / NaN)."""
    by_id = {it.item_id: it for it in items}
    pair = []
    for path in files:
        for where, row in _rows(path, ("item_id", "text", "answer")):
            item = by_id.get(str(row["item_id"]))
            if item is None:
                raise LoaderError(path, where, f"unknown item_id {row['item_id']!r}")
            text = int(row["text"])
            if not 0 <= text < len(item.texts):
                raise LoaderError(path, where, f"text {text} is outside the item's {len(item.texts)} texts")
            answer = str(row["answer"])
            pair.append({"item_id": item.item_id, "clip": 0, "text": text, "score": parse_yes_no(answer),
                         "answer": answer})
    return pair, [], "answer"


def import_velociti_closed(items: Sequence[Item], files: Sequence[Path], **_: object) -> tuple[list, list, str]:
    """``pos_pred, neg_pred`` rows in the benchmark file's order -> entailment pair rows."""
    (path,) = files
    rows = _rows(path, ("pos_pred", "neg_pred"))
    if len(rows) != len(items):
        raise LoaderError(path, None, f"{len(rows)} prediction rows for {len(items)} items: the file must follow "
                                      "the benchmark file row by row")
    pair = []
    for it, (_, row) in zip(items, rows):
        for text, column in ((0, "pos_pred"), (1, "neg_pred")):
            pair.append({"item_id": it.item_id, "clip": 0, "text": text, "score": parse_yes_no(str(row[column])),
                         "answer": str(row[column])})
    return pair, [], "answer"


def import_vinoground(items: Sequence[Item], files: Sequence[Path], **_: object) -> tuple[list, list, str]:
    """Vinoground response JSONL files -> choice rows (text score: options = texts; video score: options = clips)."""
    by_index = {it.item_id: it for it in items}
    choice = []
    for path in files:
        axis = "video" if "videoscore" in path.name else "text" if "textscore" in path.name else None
        if axis is None:
            raise LoaderError(path, None, "name the file textscore-response.jsonl or videoscore-response.jsonl")
        for where, row in _rows(path, ("idx", "response")):
            pair_index, _, side = str(row["idx"]).partition("_")
            item = by_index.get(pair_index)
            if item is None or side not in ("pos", "neg"):
                raise LoaderError(path, where, f"idx {row['idx']!r} names no pair of the benchmark")
            query = 0 if side == "pos" else 1
            gt = item.labels.get(f"{axis}_{side}_gt")
            # the official question puts the true option under GT: for query q, option A is q when GT is "A"
            options = [query, 1 - query] if gt in (None, "A") else [1 - query, query]
            letter = str(row["response"])[:1].upper()
            chosen = options["AB".index(letter)] if letter in ("A", "B") else -1
            choice.append({"item_id": item.item_id, "axis": axis, "query": query, "options": options,
                           "logits": [math.nan, math.nan], "choice": chosen, "answer": str(row["response"])})
    return [], choice, "answer"


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


def import_videocon(items: Sequence[Item], files: Sequence[Path], **_: object) -> tuple[list, list, str]:
    """VideoCon score CSVs (no header) -> entailment pair rows, matched by video and description."""
    targets: dict[tuple[str, str], list[tuple[str, int, int]]] = {}
    for it in items:
        for c, clip in enumerate(it.clips):
            video = "/".join(Path(clip.path).parts[-2:])
            for t, text in enumerate(it.texts):
                targets.setdefault((video, text), []).append((it.item_id, c, t))
    pair = []
    for path in files:
        with path.open(encoding="utf-8", newline="") as fh:
            for n, row in enumerate(csv.reader(fh), start=1):
                if len(row) < 3:
                    raise LoaderError(path, f"row {n}", f"expected videopath, caption, entailment[, pos, neg], got {row!r}")
                videopath, caption, value = row[:3]
                match = PROMPT_DESCRIPTION.search(caption)
                key = ("/".join(Path(videopath).parts[-2:]), match["text"] if match else caption)
                if not targets.get(key):
                    raise LoaderError(path, f"row {n}", f"no item has video {key[0]!r} with text {key[1]!r}")
                item_id, clip, text = targets[key].pop(0)
                pair.append({"item_id": item_id, "clip": clip, "text": text, "score": float(value)})
    return pair, [], "p_yes"


IMPORTERS: dict[str, Callable[..., tuple[list, list, str]]] = {
    "answers": import_answers,
    "velociti-closed": import_velociti_closed,
    "vinoground": import_vinoground,
    "vilma": import_vilma,
    "videocon": import_videocon,
}


def import_run(fmt: str, files: Sequence[str | Path], benchmark: str, data_path: str | Path, out: str | Path,
               model_name: str, video_root: str | Path | None = None, loader_options: dict | None = None,
               **options: object) -> Path:
    """Import ``files`` of format ``fmt`` as a run of ``model_name`` on ``benchmark``; returns the run folder."""
    from bench.loaders import load

    if fmt not in IMPORTERS:
        raise ValueError(f"unknown import format {fmt!r}; choose one of {sorted(IMPORTERS)}")
    paths = [Path(f) for f in files]
    for p in paths:
        if not p.is_file():
            raise FileNotFoundError(f"{p}: no such file")
    loader_options = dict(loader_options or {})
    items = load(benchmark, data_path, video_root=video_root, **loader_options).items
    pair, choice, measure = IMPORTERS[fmt](items, paths, **options)
    manifest = {
        "benchmark": benchmark, "data_path": str(Path(data_path).resolve()),
        "video_root": str(Path(video_root).resolve()) if video_root else None, "loader_options": loader_options,
        "adapter": f"import:{fmt}", "model": model_name, "revision": None, "measure": measure, "dtype": None,
        "device": None, "batch_size": None, "frame_policy": None, "prompt": {"name": None, "template": None},
        "seed": None, "options": {k: v for k, v in options.items()}, "versions": versions(),
        "imported_from": [str(p.resolve()) for p in paths], "name": model_name,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    writer = RunWriter(out, manifest, resume=False)
    scored = {r["item_id"] for r in pair} | {r["item_id"] for r in choice}
    writer.write_chunk(sorted(scored), pair, choice, [])
    writer.finish(n_items=len(scored))
    return Path(out)
