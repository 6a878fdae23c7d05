"""VELOCITI (Saravanan et al., CVPR 2025).

Two released shapes:

- the current release (Hugging Face ``katha-ai-iiith/VELOCITI``, split ``test``): rows
  ``video_id, test_name, event, pos, neg, in_subset`` exported as JSON (a list of rows), JSONL, CSV or Parquet;
- the v1 subset CSVs of branch ``velociti_v1`` (``gemini/gemini_data/<test>.csv``): ``cap1, cap2, ev, gt, video_id``,
  with ``gt`` naming the positive caption and the test in the file name; v1 test names map to the current ones.

Every item is one clip x (pos, neg) with pos true. Videos are ``<video_root>/<video_id without extension>.mp4``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from bench.items import Clip, Item, ItemSet
from bench.loaders.common import (LoaderError, Repeats, VideoRoot, check_strings, csv_header, files_in, read_csv_rows,
                                  read_json, read_jsonl)
from bench.loaders.options import loader

BENCHMARK = "velociti"
TESTS = ("action_adv", "action_bind", "action_manner", "agent_bind", "agent_random", "chrono", "control", "coref")
V1_NAMES = {"agent_iden": "agent_random", "action_mod": "action_manner", "sequence": "chrono"}
COLUMNS = ("video_id", "test_name", "event", "pos", "neg", "in_subset")
V1_COLUMNS = ("cap1", "cap2", "ev", "gt", "video_id")
SUFFIXES = (".json", ".jsonl", ".csv", ".parquet")


def _bool(value: Any, path: Path, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0"):
        return value.strip().lower() in ("true", "1")
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise LoaderError(path, where, f"'in_subset' must be a boolean, got {value!r}")


def _event(value: Any, path: Path, where: str) -> str:
    """Events as one string: ``Ev3`` or a JSON list / tuple string for multi-event tests, kept as released."""
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) and v.strip() for v in value):
        return json.dumps(list(value))
    raise LoaderError(path, where, f"field 'event' must be an event name ('Ev3') or a list of them, got {value!r}")


def _rows(path: Path) -> Iterator[tuple[str, dict]]:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        for line, row in read_csv_rows(path, COLUMNS):
            yield f"line {line}", row
    elif suffix == ".jsonl":
        for line, row in read_jsonl(path):
            yield f"line {line}", row
    elif suffix == ".json":
        data = read_json(path)
        if not isinstance(data, list):
            raise LoaderError(path, None, f"expected a JSON list of rows with {list(COLUMNS)}, "
                                          f"got {type(data).__name__}")
        if not data:
            raise LoaderError(path, None, "the file has no rows")
        for i, row in enumerate(data):
            if not isinstance(row, dict):
                raise LoaderError(path, f"row {i}", f"expected an object, got {type(row).__name__}")
            yield f"row {i}", row
    else:
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
        except Exception as err:
            raise LoaderError(path, None, f"not a readable Parquet file: {err}") from None
        missing = [c for c in COLUMNS if c not in table.column_names]
        if missing:
            raise LoaderError(path, None, f"missing column(s) {missing}; found {table.column_names}")
        if table.num_rows == 0:
            raise LoaderError(path, None, "the file has no rows")
        for i, row in enumerate(table.to_pylist()):
            check_strings(row, path, f"row {i}")
            yield f"row {i}", row


def _text(row: dict, key: str, path: Path, where: str) -> str:
    value = row.get(key)
    if key not in row:
        raise LoaderError(path, where, f"missing field {key!r}")
    if not isinstance(value, str) or not value.strip():
        raise LoaderError(path, where, f"field {key!r} must be a non-empty string, got {value!r}")
    return value


class _Ids:
    """Item ids ``<test>/<video>/<event>/<n>``, n counting the rows of one (test, video, event).

    Rows carry no ids of their own; an exact repeat of a row (one is in the released v1 ``action_bind.csv``) is kept,
    as the official metrics count it, and reported in the notes (:class:`~bench.loaders.common.Repeats`).
    """

    def __init__(self) -> None:
        self.rows: dict[tuple, int] = {}
        self.repeats = Repeats()

    def add(self, key: tuple, captions: tuple[str, str], origin: str) -> str:
        self.repeats.add((key, captions), origin)
        self.rows[key] = self.rows.get(key, -1) + 1
        return "/".join(key) + f"/{self.rows[key]}"


def _item(roots: VideoRoot, path: Path, where: str, video_id: str, test: str, event: str, pos: str, neg: str,
          labels: dict, seen: _Ids) -> Item:
    if test not in TESTS:
        raise LoaderError(path, where, f"unknown test_name {test!r}; expected one of {list(TESTS)}")
    video_id = video_id.split(".")[0]  # VELOCITI data.py strips an extension the same way
    if not video_id.strip():
        raise LoaderError(path, where, "field 'video_id' has no name before its first '.'")
    item_id = seen.add((test, video_id, event), (pos, neg), f"{path.name} {where}")
    video, exists = roots.resolve(f"{video_id}.mp4", path, where, "video_id")
    return Item(BENCHMARK, item_id, test, (Clip(video, exists=exists),), (pos, neg), ((0,),),
                {"video_id": video_id, "event": event, **labels})


def _load_current(path: Path, roots: VideoRoot, seen: _Ids) -> list[Item]:
    items = []
    for where, row in _rows(path):
        missing = [c for c in COLUMNS if c not in row]
        if missing:
            raise LoaderError(path, where, f"missing field(s) {missing}; expected {list(COLUMNS)}")
        video_id = _text(row, "video_id", path, where)
        items.append(_item(roots, path, where, video_id, _text(row, "test_name", path, where),
                           _event(row["event"], path, where), _text(row, "pos", path, where),
                           _text(row, "neg", path, where),
                           {"in_subset": _bool(row["in_subset"], path, where)}, seen))
    return items


def _load_v1(path: Path, roots: VideoRoot, seen: _Ids) -> list[Item]:
    name = path.stem
    test = V1_NAMES.get(name, name)
    if test not in TESTS:
        raise LoaderError(path, None, f"the file name {path.name!r} names no VELOCITI test; expected one of "
                                      f"{sorted(set(TESTS) | set(V1_NAMES))}")
    items = []
    for line, row in read_csv_rows(path, V1_COLUMNS):
        where = f"line {line}"
        if row["gt"] not in ("cap1", "cap2"):
            raise LoaderError(path, where, f"'gt' must be 'cap1' or 'cap2', got {row['gt']!r}")
        cap1, cap2 = _text(row, "cap1", path, where), _text(row, "cap2", path, where)
        pos, neg = (cap1, cap2) if row["gt"] == "cap1" else (cap2, cap1)
        items.append(_item(roots, path, where, _text(row, "video_id", path, where), test, row["ev"], pos, neg,
                           {"in_subset": True, "v1_name": name, "v1_gt": row["gt"]}, seen))
    return items


def _is_v1(path: Path) -> bool:
    return path.suffix.lower() == ".csv" and set(V1_COLUMNS) <= set(csv_header(path))


@loader
def load(path: str | Path, video_root: str | Path | None = None, *, subset_only: bool = False,
         allow_outside_root: bool = False) -> ItemSet:
    """Load VELOCITI from a file or folder of the current release's exports or of the v1 subset CSVs.

    ``subset_only`` keeps the "VELOCITI Subset" rows (``in_subset``; every v1 subset row is one).
    ``allow_outside_root`` accepts video ids that leave the video root (absolute, ``..``).
    """
    path = Path(path)
    roots = VideoRoot(video_root, allow_outside_root)
    items: list[Item] = []
    seen = _Ids()
    notes = []
    for file in files_in(path, SUFFIXES, "VELOCITI"):
        v1 = _is_v1(file)
        loaded = _load_v1(file, roots, seen) if v1 else _load_current(file, roots, seen)
        notes.append(f"{file.name}: {len(loaded)} rows ({'v1 subset' if v1 else 'current release'})")
        items += loaded
    notes += seen.repeats.notes()
    if subset_only:
        before = len(items)
        items = [it for it in items if it.labels["in_subset"]]
        notes.append(f"subset_only: kept {len(items)} of {before} rows")
    return ItemSet(BENCHMARK, str(path), items, notes)
