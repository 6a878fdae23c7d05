"""Vinoground (Zhang, Cai, Lee 2024): ``vinoground.csv`` and the text- and video-score JSONs of HF
``HanSolo9682/Vinoground``.

``vinoground.csv`` has one row per counterfactual pair: ``index, major, minor, pos_vid, pos_start, pos_end, pos_cap,
neg_vid, neg_start, neg_end, neg_cap`` (``minor`` is ``;``-separated and may be empty). Each pair is a 2 x 2 item
with id ``str(index)`` and subset = major: clips ``vinoground_videos/<i>_pos.mp4`` and ``<i>_neg.mp4`` (already cut;
the YouTube ids and offsets are labels), texts (pos_cap, neg_cap), the diagonal true.

``vinoground_textscore.json`` and ``vinoground_videoscore.json`` are lists of ``{idx, video_name, question, GT}``
ordered ``0_pos, 0_neg, 1_pos, ...`` (``get_score_all.py`` pairs entries 2i, 2i+1 with row i). They are read from
beside the CSV, or from ``vinoground_videos/`` / ``vinoground_videos_concated/`` there or under the video root (where
lmms-eval finds them inside the unzipped archives). Their questions, answers and resolved videos ride along as labels
``{text,video}_{pos,neg}_{question,gt,video}``; the concatenated videos of the video score resolve under
``<root>/vinoground_videos_concated/``. Consistency with the CSV: every entry must name a pair of the CSV and every
pair needs both entries; a text-score entry must name its own clip; entries out of the official order and text-score
questions whose GT option is not the caption of the entry's video are counted in the notes.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from bench.items import Clip, Item, ItemSet
from bench.loaders.common import LoaderError, VideoRoot, read_csv_rows, read_json
from bench.loaders.options import loader

BENCHMARK = "vinoground"
COLUMNS = ("index", "major", "minor", "pos_vid", "pos_start", "pos_end", "pos_cap", "neg_vid", "neg_start",
           "neg_end", "neg_cap")
MAJORS = ("object", "action", "viewpoint")
MINORS = ("interaction", "cyclical", "spatial", "contextual")
SIDES = ("pos", "neg")
SCORE_FILES = {"text": "vinoground_textscore.json", "video": "vinoground_videoscore.json"}
VIDEO_FOLDERS = {"text": "vinoground_videos", "video": "vinoground_videos_concated"}
ENTRY_FIELDS = ("idx", "video_name", "question", "GT")
IDX = re.compile(r"^(?P<pair>\d+)_(?P<side>pos|neg)$")
# The options of a text-score question, one per line: "A. <caption>" (lmms-eval's Vinoground prompt).
OPTION_LINE = re.compile(r"^(?P<letter>[AB])\.\s*(?P<text>.*?)\s*$", re.M)


def _number(value: str, path: Path, where: str, field: str) -> float | None:
    if value.strip() == "":
        return None
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number < 0:
        raise LoaderError(path, where, f"{field!r} must be a finite number of seconds >= 0, got {value!r}")
    return number


def _window(row: dict[str, str], side: str, path: Path, where: str) -> tuple[float | None, float | None]:
    start = _number(row[f"{side}_start"], path, where, f"{side}_start")
    end = _number(row[f"{side}_end"], path, where, f"{side}_end")
    if start is not None and end is not None and end < start:
        raise LoaderError(path, where, f"'{side}_end' {end} is before '{side}_start' {start}")
    return start, end


def _same(a: str, b: str) -> bool:
    """Captions equal up to case, spacing and a final full stop."""
    return " ".join(a.lower().rstrip(". ").split()) == " ".join(b.lower().rstrip(". ").split())


def _score_entries(path: Path, pairs: set[int]) -> list[dict]:
    data = read_json(path, row_name="entry")
    if not isinstance(data, list):
        raise LoaderError(path, None, f"expected a JSON list of {{{', '.join(ENTRY_FIELDS)}}}, "
                                      f"got {type(data).__name__}")
    if not data:
        raise LoaderError(path, None, "the list is empty; expected two questions per pair of vinoground.csv")
    seen: set[str] = set()
    for i, entry in enumerate(data):
        where = f"entry {i}"
        if not isinstance(entry, dict):
            raise LoaderError(path, where, f"expected an object, got {type(entry).__name__}")
        missing = [f for f in ENTRY_FIELDS if f not in entry]
        if missing:
            raise LoaderError(path, where, f"missing field(s) {missing}")
        for field in ("video_name", "question"):
            if not isinstance(entry[field], str) or not entry[field].strip():
                raise LoaderError(path, where, f"{field!r} must be a non-empty string, got {entry[field]!r}")
        match = IDX.match(str(entry["idx"]))
        if not match:
            raise LoaderError(path, where, f"'idx' must look like '<pair>_pos' or '<pair>_neg', got {entry['idx']!r}")
        if int(match["pair"]) not in pairs:
            raise LoaderError(path, where, f"'idx' {entry['idx']!r} names pair {match['pair']}, "
                                           "which vinoground.csv does not have")
        if entry["GT"] not in ("A", "B"):
            raise LoaderError(path, where, f"'GT' must be 'A' or 'B', got {entry['GT']!r}")
        if entry["idx"] in seen:
            raise LoaderError(path, where, f"duplicate idx {entry['idx']!r}")
        seen.add(entry["idx"])
    return data


def _csv_path(path: Path) -> Path:
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder (Vinoground)")
    if path.is_dir():
        path = path / "vinoground.csv"
        if not path.is_file():
            raise LoaderError(path.parent, None, "no vinoground.csv in this folder")
    elif not path.is_file():
        raise LoaderError(path, None, "not a regular file or folder; expected vinoground.csv or its folder")
    elif path.suffix.lower() == ".json":
        raise LoaderError(path, None, "give vinoground.csv or its folder; the score JSONs are read from beside it")
    return path


def _find(folders: list[Path], name: str) -> Path | None:
    """A score JSON beside the CSV, or inside the unzipped video folders where lmms-eval reads it."""
    for folder in folders:
        for candidate in (folder / name, *(folder / sub / name for sub in VIDEO_FOLDERS.values())):
            if candidate.is_file():
                return candidate
    return None


def _read_rows(csv_path: Path) -> list[tuple[str, int, dict[str, str]]]:
    rows = []
    seen: dict[int, str] = {}
    for line, row in read_csv_rows(csv_path, COLUMNS):
        where = f"line {line}"
        if not row["index"].strip().isdecimal():
            raise LoaderError(csv_path, where, f"'index' must be a pair number, got {row['index']!r}")
        index = int(row["index"])
        if index in seen:
            raise LoaderError(csv_path, where, f"duplicate index {index} (first at {seen[index]})")
        seen[index] = where
        rows.append((where, index, row))
    return rows


def _labels(row: dict[str, str], path: Path, where: str) -> dict:
    major = row["major"].strip()
    if major not in MAJORS:
        raise LoaderError(path, where, f"unknown major category {major!r}; expected one of {list(MAJORS)}")
    minor = [m.strip() for m in row["minor"].split(";") if m.strip()]
    unknown = [m for m in minor if m not in MINORS]
    if unknown:
        raise LoaderError(path, where, f"unknown minor categor(y/ies) {unknown}; expected some of {list(MINORS)}")
    labels: dict = {"major": major, "minor": minor}
    for side in SIDES:
        if not row[f"{side}_cap"].strip():
            raise LoaderError(path, where, f"empty '{side}_cap'; expected a caption")
        labels[f"{side}_vid"] = row[f"{side}_vid"].strip()
        labels[f"{side}_start"], labels[f"{side}_end"] = _window(row, side, path, where)
    return labels


def _video_path(roots: VideoRoot, axis: str, name: str, path: Path, where: str) -> tuple[str, bool | None]:
    """A score entry's video relative to the root: as named, or inside the axis's folder when named bare."""
    relative = name if "/" in name else f"{VIDEO_FOLDERS[axis]}/{name}"
    return roots.resolve(relative, path, where, "video_name")


def _attach(axis: str, path: Path, entries: list[dict], by_index: dict[int, tuple[str, dict, dict]],
            roots: VideoRoot, notes: list[str]) -> None:
    """Put one score file's questions on the pairs' labels, checking them against the CSV."""
    keyed = {entry["idx"]: (i, entry) for i, entry in enumerate(entries)}
    official = [f"{index}_{side}" for index in by_index for side in SIDES]
    wrong_gt, missing_videos = [], set()
    for index, (_, row, labels) in by_index.items():
        for s, side in enumerate(SIDES):
            idx = f"{index}_{side}"
            if idx not in keyed:
                raise LoaderError(path, None, f"no question for {idx!r} (pair {index} of vinoground.csv); expected "
                                              "one for each side of every pair")
            i, entry = keyed[idx]
            video, exists = _video_path(roots, axis, entry["video_name"], path, f"entry {i}")
            if axis == "text":
                if Path(entry["video_name"]).stem != idx:
                    raise LoaderError(path, f"entry {i}", f"'video_name' {entry['video_name']!r} is not the clip of "
                                                          f"{idx!r}; expected {VIDEO_FOLDERS[axis]}/{idx}.mp4")
                options = {m["letter"]: m["text"] for m in OPTION_LINE.finditer(entry["question"])}
                if entry["GT"] in options and not _same(options[entry["GT"]], row[f"{side}_cap"]):
                    wrong_gt.append(idx)
            if exists is False:
                missing_videos.add(video)
            labels[f"{axis}_{side}_question"] = entry["question"]
            labels[f"{axis}_{side}_gt"] = entry["GT"]
            labels[f"{axis}_{side}_video"] = video
    found = f"{path.name}: {len(entries)} questions"
    if [entry["idx"] for entry in entries] != official:
        found += " (not in the official order 0_pos, 0_neg, 1_pos... of the CSV rows: get_score_all.py pairs " \
                 "entries by position, this loader by idx)"
    notes.append(found)
    if wrong_gt:
        notes.append(f"{path.name}: {len(wrong_gt)} questions whose GT option is not the caption of their video "
                     f"(first: {wrong_gt[0]})")
    if missing_videos and axis == "video":
        notes.append(f"{path.name}: {len(missing_videos)} concatenated videos missing under the video root")


@loader
def load(path: str | Path, video_root: str | Path | None = None, *, allow_outside_root: bool = False) -> ItemSet:
    """Load Vinoground from ``vinoground.csv`` or its folder, with the score JSONs found beside it or in the video
    folders (see the module notes); any number of pairs. ``allow_outside_root`` accepts score-file video names that
    leave the video root (absolute, ``..``)."""
    csv_path = _csv_path(Path(path))
    roots = VideoRoot(video_root, allow_outside_root)
    by_index: dict[int, tuple[str, dict, dict]] = {}
    for where, index, row in _read_rows(csv_path):
        by_index[index] = (where, row, _labels(row, csv_path, where))
    notes = []
    folders = [csv_path.parent] + ([Path(video_root)] if video_root is not None else [])
    for axis, name in SCORE_FILES.items():
        found = _find(folders, name)
        if found is None:
            notes.append(f"{name} not found beside {csv_path.name} or in the video folders: no official {axis}-score "
                         "questions")
            continue
        _attach(axis, found, _score_entries(found, set(by_index)), by_index, roots, notes)
    items = []
    for index, (where, row, labels) in by_index.items():
        clips = tuple(Clip(video, exists=exists) for video, exists in
                      (roots.resolve(f"{VIDEO_FOLDERS['text']}/{index}_{side}.mp4", csv_path, where, "index")
                       for side in SIDES))
        items.append(Item(BENCHMARK, str(index), labels["major"], clips, (row["pos_cap"], row["neg_cap"]),
                          ((0,), (1,)), labels))
    return ItemSet(BENCHMARK, str(csv_path), items, notes)
