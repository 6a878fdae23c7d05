"""MVP, Minimal Video Pairs (Krojer et al. 2025): the Parquet files of HF ``facebook/minimal_video_pairs``.

The dataset has one configuration per subset (``human_object_interactions``, ``robot_object_interactions``,
``intuitive_physics``, ``temporal_reasoning``; ``tasks/mvp/mvp.yaml`` of facebookresearch/minimal_video_pairs) and two
splits each, ``full`` and ``mini`` (the balanced ``mvp_mini``), stored as ``<subset>/<split>-00000-of-00001.parquet``.
Each row is one question about one video: ``video_id, video_path, question, answer, candidates, source``;
``candidates`` is a Python list literal of the two options (``tasks/mvp/utils.py`` ``get_candidates`` reads it with
``ast.literal_eval``; a list is taken as it is) and ``answer`` one of them.

The two rows of a minimal pair share ``video_id`` up to its last ``_`` part (``compute_metrics`` groups them by
``"_".join(video_id.split("_")[:-1])`` and unpacks exactly two), their question and their options, and (as released)
have opposite answers. Each pair is one item ``<subset>/<pair id>`` of 2 clips x the 2 options, clip ``c`` true of
its own answer; the subset is the configuration. Videos are ``<video_root>/<video_path>`` (``mvp_doc_to_visual``
reads them under ``videos/``). Labels: ``question``, ``source``, ``video_ids`` (per clip), ``orders`` (per clip, the
option order of its own row: the order its official question shows them in) and ``split``.

``path`` is the dataset's folder (every subset folder found there), one subset's folder, or one Parquet file (its
subset is the name of its folder).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from bench.items import Clip, Item, ItemSet
from bench.loaders.common import LoaderError, VideoRoot, check_strings, require_text
from bench.loaders.options import loader

BENCHMARK = "mvp"
SUBSETS = ("human_object_interactions", "robot_object_interactions", "intuitive_physics", "temporal_reasoning")
SPLITS = ("full", "mini")
COLUMNS = ("video_id", "video_path", "question", "answer", "candidates")
OPTIONAL = ("source",)


def pair_id(video_id: str) -> str:
    """The pair a question belongs to: its ``video_id`` without the last ``_`` part (``compute_metrics``)."""
    return "_".join(video_id.split("_")[:-1])


def official_order(item: Item, clip: int) -> list[int]:
    """The option order clip ``clip``'s official question shows (its row's candidates), as indices of the item's
    texts."""
    orders = item.labels.get("orders")
    return list(orders[clip]) if orders else list(range(len(item.texts)))


def _rows(path: Path) -> list[dict]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not path.is_file():
        raise LoaderError(path, None, "no such file" if not path.exists() else "not a regular file")
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as err:
        raise LoaderError(path, None, f"not a readable Parquet file ({' '.join(str(err).split())[:200]})") from None
    missing = [c for c in COLUMNS if c not in table.column_names]
    if missing:
        raise LoaderError(path, None, f"missing column(s) {missing}; expected {list(COLUMNS + OPTIONAL)}, found "
                                      f"{table.column_names}")
    rows = table.to_pylist()
    if not rows:
        raise LoaderError(path, None, "the file has no rows")
    return rows


def _candidates(value: object, path: Path, where: str) -> list[str]:
    """The options of a row: a Python list literal (as released) or a list, of exactly two non-empty strings."""
    found = value
    if isinstance(value, str):
        try:
            found = ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise LoaderError(path, where, f"'candidates' {value[:80]!r} is not a Python list literal") from None
    if not isinstance(found, (list, tuple)) or not all(isinstance(c, str) and c.strip() for c in found):
        raise LoaderError(path, where, f"'candidates' must be a list of non-empty strings, got {str(value)[:80]!r}")
    if len(found) != 2:
        raise LoaderError(path, where, f"'candidates' has {len(found)} options; MVP's questions have two, A and B "
                                       "(tasks/mvp/utils.py mvp_doc_to_text shows cands[0] and cands[1])")
    if found[0] == found[1]:
        raise LoaderError(path, where, f"'candidates' repeats the option {found[0]!r}")
    return list(found)


def _question(record: dict, path: Path, where: str) -> dict:
    for key in ("video_id", "video_path", "question"):
        require_text(record, key, path, where)
    source = record.get("source")
    if source is not None and not isinstance(source, str):
        raise LoaderError(path, where, f"'source' must be a string, got {source!r}")
    check_strings(record, path, where)
    candidates = _candidates(record["candidates"], path, where)
    answer = str(record["answer"])
    if answer not in candidates:
        raise LoaderError(path, where, f"'answer' {answer!r} is none of the candidates {candidates} (the official "
                                       "scoring finds it with candidates.index)")
    return {**record, "candidates": candidates, "answer": answer, "where": where}


def _split_of(file: Path) -> str:
    found = file.name.split("-", 1)[0]
    if found not in SPLITS:
        raise LoaderError(file, None, f"cannot tell the split from the file name: expected {' or '.join(SPLITS)}-"
                                      "NNNNN-of-NNNNN.parquet")
    return found


def _subset_files(folder: Path, split: str) -> list[Path]:
    found = sorted(p for p in folder.glob(f"{split}-*.parquet") if p.is_file())
    if not found:
        raise LoaderError(folder, None, f"no {split}-*.parquet file in this subset folder (splits: "
                                        f"{', '.join(SPLITS)})")
    return found


def _files(path: Path, split: str | None) -> list[tuple[str, str, Path]]:
    """``(subset, split, file)`` of every file to read."""
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder (MVP)")
    if path.is_file():
        if path.parent.name not in SUBSETS:
            raise LoaderError(path, None, f"cannot tell the subset: a file's folder names it, one of {list(SUBSETS)} "
                                          "(the dataset's layout)")
        own = _split_of(path)
        if split is not None and split != own:
            raise LoaderError(path, None, f"this is a {own} file; the option asks for split={split}")
        return [(path.parent.name, own, path)]
    if not path.is_dir():
        raise LoaderError(path, None, "not a regular file or folder; expected the dataset's folder or a subset's")
    split = split or "full"
    if path.name in SUBSETS:
        return [(path.name, split, f) for f in _subset_files(path, split)]
    subsets = [s for s in SUBSETS if (path / s).is_dir()]
    if not subsets:
        raise LoaderError(path, None, f"no MVP subset folder here; expected some of {list(SUBSETS)}, each with its "
                                      f"{'/'.join(SPLITS)}-*.parquet files")
    return [(s, split, f) for s in subsets for f in _subset_files(path / s, split)]


def _pair_item(subset: str, split: str, pid: str, rows: list[dict], path: Path, roots: VideoRoot) -> Item:
    first, second = rows
    where = f"{first['where']} and {second['where']}"
    if first["question"] != second["question"]:
        raise LoaderError(path, where, f"the two questions of pair {pid!r} differ ({first['question'][:60]!r} and "
                                       f"{second['question'][:60]!r}); a minimal pair asks one question")
    if sorted(first["candidates"]) != sorted(second["candidates"]):
        raise LoaderError(path, where, f"the two rows of pair {pid!r} offer different options ({first['candidates']} "
                                       f"and {second['candidates']})")
    texts = tuple(first["candidates"])
    clips = []
    for row in rows:
        video, exists = roots.resolve(row["video_path"], path, row["where"], "video_path")
        clips.append(Clip(video, exists=exists))
    labels = {"question": first["question"], "source": first.get("source"),
              "video_ids": [r["video_id"] for r in rows],
              "orders": [[texts.index(c) for c in r["candidates"]] for r in rows], "split": split}
    return Item(BENCHMARK, f"{subset}/{pid}", subset, tuple(clips), texts,
                tuple((texts.index(r["answer"]),) for r in rows), labels)


def _read(subset: str, split: str, path: Path, roots: VideoRoot, seen: dict[str, str]) -> tuple[list[Item], int]:
    pairs: dict[str, list[dict]] = defaultdict(list)
    for n, record in enumerate(_rows(path), start=1):
        row = _question(record, path, f"row {n}")
        if row["video_id"] in seen:
            raise LoaderError(path, row["where"], f"duplicate video_id {row['video_id']!r} (first at "
                                                  f"{seen[row['video_id']]})")
        seen[row["video_id"]] = f"{path.name} {row['where']}"
        pairs[pair_id(row["video_id"])].append(row)
    items, same = [], 0
    for pid, rows in pairs.items():
        if len(rows) != 2:
            listed = ", ".join(f"{r['video_id']!r} ({r['where']})" for r in rows)
            raise LoaderError(path, rows[0]["where"], f"pair {pid!r} has {len(rows)} question(s): {listed}; the "
                                                      "official scoring (tasks/mvp/utils.py compute_metrics) pairs "
                                                      "exactly two rows whose video_id differs in its last '_' part")
        item = _pair_item(subset, split, pid, rows, path, roots)
        same += item.truth[0] == item.truth[1]
        items.append(item)
    return items, same


@loader
def load(path: str | Path, video_root: str | Path | None = None, *, split: str | None = None,
         allow_outside_root: bool = False) -> ItemSet:
    """Load MVP from the dataset's folder, a subset's folder or one Parquet file (see the module notes).

    ``split``: ``full`` (the default for folders) or ``mini``; a file is read as its own split. ``allow_outside_root``
    accepts video paths that leave the video root (absolute, ``..``).
    """
    if split is not None and split not in SPLITS:
        raise ValueError(f"the mvp loader's option 'split' must be one of {', '.join(SPLITS)}, got {split!r}")
    path = Path(path)
    roots = VideoRoot(video_root, allow_outside_root)
    items: list[Item] = []
    seen: dict[str, str] = {}
    same = 0
    files = _files(path, split)
    for subset, own, file in files:
        found, alike = _read(subset, own, file, roots, seen)
        items += found
        same += alike
    notes = [f"split {files[0][1]}: {len(items)} pairs ({2 * len(items)} questions) from {len(files)} file(s)"]
    read = list(dict.fromkeys(s for s, _, _ in files))
    if path.is_dir() and path.name not in SUBSETS and len(read) < len(SUBSETS):
        notes.append(f"subsets not found here: {', '.join(s for s in SUBSETS if s not in read)}")
    if same:
        notes.append(f"{same} pair(s) whose two videos have the same answer (not a minimal pair; kept as released)")
    return ItemSet(BENCHMARK, str(path), items, notes)
