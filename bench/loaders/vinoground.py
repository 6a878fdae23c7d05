"""Vinoground (Zhang, Cai, Lee 2024): ``vinoground.csv`` with the text- and video-score JSONs (HF ``HanSolo9682/Vinoground``).

``vinoground.csv`` has one row per counterfactual pair: ``index, major, minor, pos_vid, pos_start, pos_end, pos_cap,
neg_vid, neg_start, neg_end, neg_cap`` (``minor`` is ``;``-separated and may be empty). Each pair is a 2 x 2 item:
clips ``vinoground_videos/<i>_pos.mp4`` and ``<i>_neg.mp4`` (already cut; the YouTube ids and offsets are labels),
texts (pos_cap, neg_cap), the diagonal true. ``vinoground_textscore.json`` and ``vinoground_videoscore.json`` are
lists of ``{idx, video_name, question, GT}`` ordered ``0_pos, 0_neg, 1_pos, ...`` (``get_score_all.py`` pairs
entries 2i, 2i+1 with row i); their questions and answers ride along as labels, and the concatenated videos of the
video score are named by ``vinoground_videoscore.json``.
"""

from __future__ import annotations

import re
from pathlib import Path

from bench.items import Clip, Item, ItemSet, resolve_video
from bench.loaders.common import LoaderError, read_csv_rows, read_json

BENCHMARK = "vinoground"
COLUMNS = ("index", "major", "minor", "pos_vid", "pos_start", "pos_end", "pos_cap", "neg_vid", "neg_start",
           "neg_end", "neg_cap")
MAJORS = ("object", "action", "viewpoint")
MINORS = ("interaction", "cyclical", "spatial", "contextual")
SCORE_FILES = {"text": "vinoground_textscore.json", "video": "vinoground_videoscore.json"}
ENTRY_FIELDS = ("idx", "video_name", "question", "GT")
IDX = re.compile(r"^(?P<pair>\d+)_(?P<side>pos|neg)$")


def _number(value: str, path: Path, where: str, field: str) -> float | None:
    if value.strip() == "":
        return None
    try:
        return float(value)
    except ValueError:
        raise LoaderError(path, where, f"{field!r} must be a number of seconds, got {value!r}") from None


def _score_entries(path: Path, pairs: set[int]) -> dict[str, dict]:
    data = read_json(path)
    if not isinstance(data, list):
        raise LoaderError(path, None, f"expected a JSON list of {{{', '.join(ENTRY_FIELDS)}}}, got {type(data).__name__}")
    entries: dict[str, dict] = {}
    for i, entry in enumerate(data):
        where = f"entry {i}"
        if not isinstance(entry, dict):
            raise LoaderError(path, where, f"expected an object, got {type(entry).__name__}")
        missing = [f for f in ENTRY_FIELDS if f not in entry]
        if missing:
            raise LoaderError(path, where, f"missing field(s) {missing}")
        match = IDX.match(str(entry["idx"]))
        if not match:
            raise LoaderError(path, where, f"'idx' must look like '<pair>_pos' or '<pair>_neg', got {entry['idx']!r}")
        if int(match["pair"]) not in pairs:
            raise LoaderError(path, where, f"'idx' {entry['idx']!r} names pair {match['pair']}, "
                                           "which vinoground.csv does not have")
        if entry["GT"] not in ("A", "B"):
            raise LoaderError(path, where, f"'GT' must be 'A' or 'B', got {entry['GT']!r}")
        if entry["idx"] in entries:
            raise LoaderError(path, where, f"duplicate idx {entry['idx']!r}")
        entries[entry["idx"]] = entry
    return entries


def _csv_path(path: Path) -> Path:
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder (Vinoground)")
    if path.is_dir():
        path = path / "vinoground.csv"
        if not path.is_file():
            raise LoaderError(path.parent, None, "no vinoground.csv in this folder")
    return path


def _find(folder: Path, name: str) -> Path | None:
    """A score JSON beside the CSV, or inside the unzipped video folders where lmms-eval reads it."""
    for candidate in (folder / name, folder / "vinoground_videos" / name, folder / "vinoground_videos_concated" / name):
        if candidate.is_file():
            return candidate
    return None


def load(path: str | Path, video_root: str | Path | None = None) -> ItemSet:
    """Load Vinoground from ``vinoground.csv`` or its folder (the score JSONs are read when they sit beside it)."""
    csv_path = _csv_path(Path(path))
    rows = []
    for line, row in read_csv_rows(csv_path, COLUMNS):
        where = f"line {line}"
        if not row["index"].strip().isdigit():
            raise LoaderError(csv_path, where, f"'index' must be a pair number, got {row['index']!r}")
        major = row["major"].strip()
        if major not in MAJORS:
            raise LoaderError(csv_path, where, f"unknown major category {major!r}; expected one of {list(MAJORS)}")
        minor = [m.strip() for m in row["minor"].split(";") if m.strip()]
        unknown = [m for m in minor if m not in MINORS]
        if unknown:
            raise LoaderError(csv_path, where, f"unknown minor categor(y/ies) {unknown}; expected some of {list(MINORS)}")
        rows.append((where, int(row["index"]), major, minor, row))
    seen: dict[int, str] = {}
    for where, index, *_ in rows:
        if index in seen:
            raise LoaderError(csv_path, where, f"duplicate index {index} (first at {seen[index]})")
        seen[index] = where
    scores = {}
    notes = []
    for axis, name in SCORE_FILES.items():
        found = _find(csv_path.parent, name)
        if found is None:
            notes.append(f"{name} not found beside {csv_path.name}: no official {axis}-score questions")
            continue
        scores[axis] = _score_entries(found, set(seen))
        notes.append(f"{found.name}: {len(scores[axis])} questions")
    items = []
    for where, index, major, minor, row in rows:
        clips = []
        for side in ("pos", "neg"):
            video, exists = resolve_video(video_root, f"vinoground_videos/{index}_{side}.mp4")
            clips.append(Clip(video, exists=exists))
        labels = {
            "major": major,
            "minor": minor,
            "pos_vid": row["pos_vid"],
            "pos_start": _number(row["pos_start"], csv_path, where, "pos_start"),
            "pos_end": _number(row["pos_end"], csv_path, where, "pos_end"),
            "neg_vid": row["neg_vid"],
            "neg_start": _number(row["neg_start"], csv_path, where, "neg_start"),
            "neg_end": _number(row["neg_end"], csv_path, where, "neg_end"),
        }
        for axis, entries in scores.items():
            for side in ("pos", "neg"):
                entry = entries.get(f"{index}_{side}")
                if entry is None:
                    raise LoaderError(SCORE_FILES[axis], None, f"no question for '{index}_{side}' (pair {index} of "
                                                               "vinoground.csv)")
                labels[f"{axis}_{side}_question"] = entry["question"]
                labels[f"{axis}_{side}_gt"] = entry["GT"]
                labels[f"{axis}_{side}_video"] = entry["video_name"]
        items.append(Item(BENCHMARK, str(index), major, tuple(clips), (row["pos_cap"], row["neg_cap"]),
                          ((0,), (1,)), labels))
    return ItemSet(BENCHMARK, str(csv_path), items, notes)
