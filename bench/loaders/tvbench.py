"""TVBench (Cores et al., 2024): the ten task files ``json/<task>.json`` of the dataset ``FunAILab/TVBench`` (MVBench's
format), videos under ``video/<task>/``.

A task file is a list of ``{video, question, candidates, answer}``; the two tasks the official notebook reads with
a window (``infer.ipynb`` cell 3: Action Sequence and Action Localization, "has start & end") add ``start`` and
``end`` in seconds (``vqa_dataset.py`` L146-151). The path is the dataset folder (``json/`` in it), its ``json/``
folder, or one task file; any subset of the ten task files is read, in the notebook's task order.

One item per question, id ``<task file stem>/<n>`` (``n`` from 0 in the file's order), subset = the task's name as
the notebook writes it ("Action Count"...); texts = the candidates, true: the candidate equal to the answer
(``vqa_dataset.py`` L138); labels ``task``, ``video`` and ``question`` (its ``{question}`` in the prompts). The clip
is ``<video_root>/<task file stem>/<video>`` (``infer.ipynb``: ``/datasets/TVBench/video/<task>``), with the window
for the two windowed tasks. Fields beyond these are kept in the file and counted in the notes.
"""

from __future__ import annotations

from pathlib import Path

from bench.items import Clip, Item, ItemSet
from bench.loaders.common import LoaderError, VideoRoot, read_json
from bench.loaders.options import loader

BENCHMARK = "tvbench"
# infer.ipynb cell 3: task name -> (file, read with a window), in the notebook's order (its results follow it)
TASKS: dict[str, tuple[str, bool]] = {
    "Action Count": ("action_count", False),
    "Object Count": ("object_count", False),
    "Action Sequence": ("action_sequence", True),
    "Object Shuffle": ("object_shuffle", False),
    "Scene Transition": ("scene_transition", False),
    "Action Localization": ("action_localization", True),
    "Action Antonym": ("action_antonym", False),
    "Unexpected Action": ("unexpected_action", False),
    "Egocentric Sequence": ("egocentric_sequence", False),
    "Moving Direction": ("moving_direction", False),
}
NAMES = {stem: name for name, (stem, _) in TASKS.items()}
FIELDS = ("video", "question", "candidates", "answer")
WINDOW = ("start", "end")


def _task_files(path: Path) -> list[Path]:
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder (TVBench)")
    if path.is_file():
        if path.stem not in NAMES or path.suffix != ".json":
            raise LoaderError(path, None, f"not a TVBench task file; expected one of "
                                          f"{', '.join(s + '.json' for s in NAMES)}")
        return [path]
    if not path.is_dir():
        raise LoaderError(path, None, "not a regular file or folder; expected the TVBench folder, its json/ folder or "
                                      "a task file")
    folder = path / "json" if (path / "json").is_dir() else path
    files = [folder / f"{stem}.json" for stem in NAMES if (folder / f"{stem}.json").is_file()]
    if not files:
        raise LoaderError(path, None, f"no task files here or in json/; expected any of "
                                      f"{', '.join(s + '.json' for s in NAMES)}")
    return files


def _seconds(record: dict, key: str, path: Path, where: str) -> float:
    value = record.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
        raise LoaderError(path, where, f"{key!r} must be a number of seconds >= 0 (this task is read with a window, "
                                       f"infer.ipynb cell 3), got {value!r}")
    return float(value)


def _load_task(path: Path, roots: VideoRoot, extra: set[str], repeated: list[str]) -> list[Item]:
    stem = path.stem
    name = NAMES[stem]
    windowed = TASKS[name][1]
    data = read_json(path, row_name="question")
    if not isinstance(data, list) or not data:
        raise LoaderError(path, None, "expected a non-empty JSON list of {video, question, candidates, answer}")
    items = []
    for n, record in enumerate(data):
        where = f"question {n}"
        if not isinstance(record, dict):
            raise LoaderError(path, where, f"expected an object, got {type(record).__name__}")
        missing = [f for f in FIELDS if f not in record]
        if missing:
            raise LoaderError(path, where, f"missing field(s) {missing}; expected {list(FIELDS)}")
        for key in ("video", "question", "answer"):
            if not isinstance(record[key], str) or not record[key].strip():
                raise LoaderError(path, where, f"{key!r} must be a non-empty string, got {record[key]!r}")
        candidates = record["candidates"]
        if not isinstance(candidates, list) or len(candidates) < 2 or \
                any(not isinstance(c, str) or not c.strip() for c in candidates):
            raise LoaderError(path, where, f"'candidates' must be a list of two or more non-empty strings, got "
                                           f"{candidates!r}")
        if record["answer"] not in candidates:
            raise LoaderError(path, where, f"answer {record['answer']!r} is none of the candidates {candidates}")
        if len(set(candidates)) < len(candidates):
            repeated.append(f"{stem} {where}")
        extra.update(set(record) - set(FIELDS) - set(WINDOW))
        start = _seconds(record, "start", path, where) if windowed else None
        end = _seconds(record, "end", path, where) if windowed else None
        if start is not None and end is not None and end < start:
            raise LoaderError(path, where, f"'end' {end} is before 'start' {start}")
        video, exists = roots.resolve(f"{stem}/{record['video']}", path, where, "video")
        truth = max(i for i, c in enumerate(candidates) if c == record["answer"])  # L136-139: the last equal one
        items.append(Item(BENCHMARK, f"{stem}/{n}", name, (Clip(video, start, end, exists=exists),),
                          tuple(candidates), ((truth,),),
                          {"task": stem, "video": record["video"], "question": record["question"]}))
    return items


@loader
def load(path: str | Path, video_root: str | Path | None = None, *, allow_outside_root: bool = False) -> ItemSet:
    """Load TVBench from its folder, its ``json/`` folder or one task file (see the module notes).

    ``allow_outside_root`` accepts video names that leave the video root (absolute, ``..``).
    """
    path = Path(path)
    roots = VideoRoot(video_root, allow_outside_root)
    items: list[Item] = []
    extra: set[str] = set()
    repeated: list[str] = []
    files = _task_files(path)
    for file in files:
        items += _load_task(file, roots, extra, repeated)
    notes = [f"{len(files)} of the {len(TASKS)} task files: {', '.join(f.stem for f in files)}"]
    if extra:
        notes.append(f"fields read by no official code, kept in the files: {', '.join(sorted(extra))}")
    if repeated:
        notes.append(f"{len(repeated)} question(s) list a candidate twice; the last one equal to the answer is true, "
                     f"as vqa_dataset.py L136-139 finds it (first: {repeated[0]})")
    return ItemSet(BENCHMARK, str(path), items, notes)
