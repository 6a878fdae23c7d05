"""ViLMA (Kesen et al., ICLR 2024): the per-subtest JSON files of ``ilkerkesen/ViLMA`` ``data/``.

Each file is ``{key: record}`` with the true ``caption``, its ``foils`` and a ``proficiency`` sub-problem. Every record
becomes two linked items: the main problem ``"<file stem>/<key>"`` and its proficiency twin
``"<file stem>/<key>/proficiency"``. The official validity filter of ``bin/eval.py`` (``mturk.caption >= 2`` and
``proficiency.human.caption == 1``) is on by default; the notes say how many records it removed per file.

Video paths follow ``vl_bench/data.py::Dataset_v1._read_video``, each under a folder of the video root:
QUVA ``quva/normalized_videos/<video_file>`` (``time_unit`` "pts" = frame indices at 30 fps), Something-Something v2
``something-something-v2/<dataset_idx>.webm``, STAR/Charades ``star/<video_file>.mp4``, and the YouTube sources
(RareAct, VidSitu, COIN, YouCook2) ``youtube/<youtube_id>.mp4``.
"""

from __future__ import annotations

import math
from pathlib import Path

from bench.items import Clip, Item, ItemSet
from bench.loaders.common import LoaderError, VideoRoot, files_in, read_json, require, require_text
from bench.loaders.options import loader
from bench.registry import spec

BENCHMARK = "vilma"
QUVA_FPS = 30.0  # bin/normalize_fps re-encodes QUVA to 30 fps; pts windows index those frames
SOURCES: dict[str, str] = {
    "QUVA": "quva",
    "something-something-v2": "ssv2",
    "star": "star",
    "RareAct": "youtube",
    "VidSitu": "youtube",
    "coin": "youtube",
    "youcook2": "youtube",
}
DEFAULT_DIRS: dict[str, str] = {
    "quva": "quva/normalized_videos",
    "ssv2": "something-something-v2",
    "star": "star",
    "youtube": "youtube",
}


def test_of(stem: str) -> str | None:
    """The paper's test for a subtest file stem, or ``None`` for files that are not a benchmark subtest."""
    for prefix, name in spec(BENCHMARK).labels["tests"]:
        if stem.startswith(prefix):
            return name
    return None


def _video(record: dict, path: Path, where: str, dirs: dict[str, str]) -> tuple[str, str]:
    """The video path under the root, and the field that named it."""
    dataset = record["dataset"]
    source = SOURCES.get(dataset)
    if source is None:
        raise LoaderError(path, where, f"unknown dataset {dataset!r}; expected one of {sorted(SOURCES)}")
    if source == "quva":
        if record.get("normalized") is False:
            raise LoaderError(path, where, "QUVA item is not normalized to 30 fps (normalized=false)")
        field, name = "video_file", require(record, "video_file", str, path, where)
    elif source == "ssv2":
        field, name = "dataset_idx", f"{require(record, 'dataset_idx', (str, int), path, where)}.webm"
    elif source == "star":
        field, name = "video_file", f"{require(record, 'video_file', str, path, where)}.mp4"
    else:
        field, name = "youtube_id", f"{require(record, 'youtube_id', str, path, where)}.mp4"
    return f"{dirs[source]}/{name}", field


def _finite(value: object) -> bool:
    """A finite JSON number (not a boolean, not an integer too large for a float)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _window(record: dict, path: Path, where: str) -> tuple[float | None, float | None, str]:
    unit = record.get("time_unit", "sec")
    if unit not in ("sec", "pts"):
        raise LoaderError(path, where, f"time_unit must be 'sec' or 'pts', got {unit!r}")
    bounds = []
    for key in ("start_time", "end_time"):
        value = record.get(key)
        if value is not None and not _finite(value):
            raise LoaderError(path, where, f"field {key!r} must be a finite number or null, got {value!r}")
        if value is not None and value != -1 and value < 0:
            raise LoaderError(path, where, f"field {key!r} must be >= 0 (or -1 for none), got {value!r}")
        bounds.append(None if value is None or value == -1 else float(value))
    start, end = bounds
    if start is not None and end is not None and end < start:
        raise LoaderError(path, where, f"end_time {end} is before start_time {start}")
    return start, end, unit


def _texts(record: dict, path: Path, where: str) -> tuple[str, ...]:
    caption = require_text(record, "caption", path, where)
    foils = require(record, "foils", list, path, where)
    if not foils or not all(isinstance(f, str) and f.strip() for f in foils):
        raise LoaderError(path, where, f"'foils' must be a non-empty list of strings, got {foils!r}")
    return (caption, *foils)


def _votes(record: dict, key: str, path: Path, where: str) -> dict[str, int]:
    votes = require(record, key, dict, path, where)
    for field in ("caption", "foil"):
        if not isinstance(votes.get(field), int):
            raise LoaderError(path, where, f"'{key}.{field}' must be an integer vote count, got {votes.get(field)!r}")
    return votes


def is_valid(record: dict, path: Path, where: str) -> bool:
    """The official validity filter (``bin/eval.py``): ``mturk.caption >= 2 and proficiency.human.caption == 1``."""
    mturk = _votes(record, "mturk", path, where)
    human = _votes(require(record, "proficiency", dict, path, where), "human", path, f"{where}.proficiency")
    return mturk["caption"] >= 2 and human["caption"] == 1


def _load_file(path: Path, roots: VideoRoot, dirs: dict[str, str], valid_only: bool) -> tuple[list[Item], str]:
    stem = path.stem
    test = test_of(stem)
    data = read_json(path)
    if not isinstance(data, dict):
        raise LoaderError(path, None, f"expected a JSON object {{item_id: record}}, got {type(data).__name__}")
    items: list[Item] = []
    dropped = 0
    for key in sorted(data):
        record = data[key]
        where = f"key {key!r}"
        if not isinstance(record, dict):
            raise LoaderError(path, where, f"expected an object, got {type(record).__name__}")
        require(record, "dataset", str, path, where)
        valid = is_valid(record, path, where)
        if valid_only and not valid:
            dropped += 1
            continue
        start, end, unit = _window(record, path, where)
        relative, field = _video(record, path, where, dirs)
        video, exists = roots.resolve(relative, path, where, field)
        clip = Clip(video, start, end, unit, QUVA_FPS if unit == "pts" else None, exists)
        prof = record["proficiency"]
        main_id = f"{stem}/{key}"
        prof_id = f"{main_id}/proficiency"
        labels = {
            "test": test,
            "source": record["dataset"],
            "phenomenon": record.get("linguistic_phenomena"),
            "class": record.get("class"),
            "classes_foil": record.get("classes_foil"),
            "mturk_caption": record["mturk"]["caption"],
            "mturk_foil": record["mturk"]["foil"],
            "valid": valid,
            "time_unit": unit,
        }
        items.append(Item(BENCHMARK, main_id, stem, (clip,), _texts(record, path, where), ((0,),),
                          labels, "main", prof_id))
        prof_labels = {**labels, "class": prof.get("class"), "classes_foil": prof.get("classes_foil"),
                       "proficiency_test": prof.get("proficiency_test")}
        items.append(Item(BENCHMARK, prof_id, stem, (clip,), _texts(prof, path, f"{where}.proficiency"), ((0,),),
                          prof_labels, "proficiency", main_id))
    note = f"{path.name}: {len(data)} records, {dropped} removed by the validity filter" if valid_only else \
        f"{path.name}: {len(data)} records, validity filter off"
    return items, note


@loader
def load(path: str | Path, video_root: str | Path | None = None, *, valid_only: bool = True,
         time_unit: str | None = "pts", quva_dir: str | None = None, ssv2_dir: str | None = None,
         star_dir: str | None = None, youtube_dir: str | None = None, allow_outside_root: bool = False) -> ItemSet:
    """Load ViLMA from one subtest file or a folder of them.

    A folder loads the files whose stem names a subtest of the paper's five tests (the unvalidated digit variants
    and pre-validation pools have no ``mturk`` votes and are not benchmark subtests). Counting comes in two time
    units (``-pts`` and ``-sec`` files of the same items): ``time_unit`` ("pts", the default, or "sec") keeps one
    of them when a folder has both; ``None`` loads both. ``*_dir`` override the per-source folders under ``video_root``.
    ``allow_outside_root`` accepts video paths that leave the video root (absolute, ``..``).
    """
    path = Path(path)
    dirs = dict(DEFAULT_DIRS)
    dirs.update({k: v for k, v in (("quva", quva_dir), ("ssv2", ssv2_dir), ("star", star_dir),
                                   ("youtube", youtube_dir)) if v is not None})
    if time_unit not in (None, "pts", "sec"):
        raise ValueError(f"time_unit must be 'pts', 'sec' or None, got {time_unit!r}")
    files = files_in(path, (".json",), "ViLMA")
    skipped: list[str] = []
    if path.is_dir():
        files = [f for f in files if test_of(f.stem) and "digits" not in f.stem and "Semantic_Role" not in f.stem]
        if time_unit:
            other = "-sec" if time_unit == "pts" else "-pts"
            skipped = [f.name for f in files if f.stem.endswith(other)]
            files = [f for f in files if not f.stem.endswith(other)]
        if not files:
            raise LoaderError(path, None, "no ViLMA subtest files (counting-*, SRL_*, change-state-*, "
                                          "rare-actions-*, relations) in this folder")
    items: list[Item] = []
    notes = [f"skipped {', '.join(skipped)} (time_unit={time_unit!r})"] if skipped else []
    for file in files:
        loaded, note = _load_file(file, VideoRoot(video_root, allow_outside_root), dirs, valid_only)
        items += loaded
        notes.append(note)
    return ItemSet(BENCHMARK, str(path), items, notes)
