"""TempCompass (Liu et al., ACL Findings 2024): the repository's ``questions/<task>.json`` and ``meta_info.json``.

Each task file maps a video id to its temporal aspects (``action``, ``speed``, ``direction``, ``order``,
``attribute_change``), each a list of ``{question, answer}``. ``meta_info.json`` gives each video's fine-grained
aspect per aspect (``eval_dim.<aspect>.type``; ``order`` has none: ``utils/eval_utils.py`` L22 counts it as "order")
and its content categories. The path is the repository (``questions/`` and ``meta_info.json`` in it), its
``questions/`` folder, or one task file; any subset of the four task files is read.

One item per question, id ``<task>/<video>/<aspect>/<n>`` (``n`` counts the aspect's questions from 0), subset = the
aspect; labels ``format`` (the task), ``fine_aspect``, ``video``, ``conflict`` (the video id before its first "_":
an original video and its conflicting ones share it), ``content``, ``question`` (the question's first line, its stem;
for yes/no the whole question) and ``answer`` (as released). Texts and truth per task:

- ``multi-choice``: the options, the question's lines ``A. ...``; true: the answer's letter, its first character
  (``eval_multi-choice.py`` L37-42 compares letters);
- ``yes_no``: one text, the question, true when the answer is "yes";
- ``caption_matching``: the sentences of the lines ``<name>: <sentence>``, their names (``Caption A``, ``Option 1``,
  ``Sentence B``...) as the label ``option_names``; true: the answer, one of the lines (``eval_caption_matching.py``
  L10-16 checks that it is);
- ``captioning``: the ``Information X: {...}`` lines; true: the answer's letter (the consistent information).

The clip of a video is ``<video_root>/<video>.mp4`` (``run_qwen2_vl.py`` L90 reads ``<data>/videos/<video>.mp4``).
"""

from __future__ import annotations

import re
from pathlib import Path

from bench.items import Clip, Item, ItemSet
from bench.loaders.common import LoaderError, VideoRoot, read_json
from bench.loaders.options import loader

BENCHMARK = "tempcompass"
TASKS = ("multi-choice", "yes_no", "caption_matching", "captioning")
ASPECTS = ("action", "speed", "direction", "order", "attribute_change")
# utils/eval_utils.py L15-16: the fine-grained aspects print_result counts ("order" for the order aspect)
FINE_ASPECTS = ("fine-grained action", "coarse-grained action", "object motion", "camera motion", "absolute speed",
                "relative speed", "order", "color & light change", "size & shape change", "combined change",
                "other change")
META = "meta_info.json"
OPTION = re.compile(r"^(?P<space>\s*)(?P<letter>[A-Z])\.(?P<gap>\s*)(?P<text>.*?)\s*$")
INFORMATION = re.compile(r"^Information (?P<letter>[A-Z]): (?P<text>.+)$")


def _task_files(path: Path) -> tuple[list[Path], Path]:
    """The task files to read and where ``meta_info.json`` should be."""
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder (TempCompass)")
    if path.is_file():
        if path.stem not in TASKS or path.suffix != ".json":
            raise LoaderError(path, None, f"not a TempCompass task file; expected one of "
                                          f"{', '.join(t + '.json' for t in TASKS)}")
        folder = path.parent
        files = [path]
    elif path.is_dir():
        folder = path / "questions" if (path / "questions").is_dir() else path
        files = [folder / f"{t}.json" for t in TASKS if (folder / f"{t}.json").is_file()]
        if not files:
            raise LoaderError(path, None, f"no task files here or in questions/; expected any of "
                                          f"{', '.join(t + '.json' for t in TASKS)}")
    else:
        raise LoaderError(path, None, "not a regular file or folder; expected the TempCompass repository, its "
                                      "questions/ folder or a task file")
    meta = next((m for m in (folder / META, folder.parent / META) if m.is_file()), folder.parent / META)
    return files, meta


def _meta(path: Path) -> dict:
    if not path.is_file():
        raise LoaderError(path, None, f"no {META} (the videos' temporal aspects); expected it in the repository "
                                      "beside questions/")
    data = read_json(path)
    if not isinstance(data, dict) or not data:
        raise LoaderError(path, None, "expected an object of videos, each with eval_dim and content")
    return data


def _fine_aspect(meta: dict, meta_path: Path, video: str, aspect: str, where: str) -> str:
    """The fine-grained aspect of ``video``'s ``aspect`` as ``print_result`` finds it (``eval_utils.py`` L22)."""
    entry = meta.get(video)
    if not isinstance(entry, dict) or not isinstance(entry.get("eval_dim"), dict):
        raise LoaderError(meta_path, f"key {video!r}", f"no eval_dim for video {video!r} ({where} asks about it)")
    if aspect == "order":
        return "order"
    dim = entry["eval_dim"].get(aspect)
    kind = dim.get("type") if isinstance(dim, dict) else None
    if kind not in FINE_ASPECTS:
        raise LoaderError(meta_path, f"key {video!r}, field 'eval_dim.{aspect}.type'",
                          f"expected one of {list(FINE_ASPECTS)} ({where} asks about it), got {kind!r}")
    return kind


def _multi_choice(question: str, answer: str, path: Path, where: str, odd: list[str]) -> tuple[list[str], int]:
    texts, letters = [], []
    for line in question.split("\n")[1:]:
        found = OPTION.match(line)
        if not found:
            raise LoaderError(path, where, f"option line {line!r} is not 'X. option'")
        if found["space"] or found["gap"] != " ":
            odd.append(where)
        letters.append(found["letter"])
        texts.append(found["text"])
    if len(texts) < 2 or "".join(letters) != "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:len(letters)]:
        raise LoaderError(path, where, f"expected options A, B, ... one per line after the question, got "
                                       f"{''.join(letters) or 'none'}")
    if answer[:1] not in letters:
        raise LoaderError(path, where, f"answer {answer!r} does not start with an option letter ({''.join(letters)})")
    return texts, letters.index(answer[0])


def _caption_matching(question: str, answer: str, path: Path, where: str) -> tuple[list[str], list[str], int]:
    lines = question.split("\n")[1:]
    if len(lines) < 2 or any(": " not in line for line in lines):
        raise LoaderError(path, where, "expected two or more option lines '<name>: <sentence>' after the question")
    if answer not in lines:
        raise LoaderError(path, where, f"answer {answer!r} is not one of the question's option lines")
    names, texts = zip(*(line.split(": ", 1) for line in lines))
    return list(texts), list(names), lines.index(answer)


def _captioning(question: str, answer: str, path: Path, where: str) -> tuple[list[str], int]:
    found = [m for m in map(INFORMATION.match, question.split("\n")) if m]
    letters = [m["letter"] for m in found]
    if len(found) < 2:
        raise LoaderError(path, where, "expected two or more lines 'Information X: {...}' in the instruction")
    if answer[:1] not in letters:
        raise LoaderError(path, where, f"answer {answer!r} does not start with an information letter "
                                       f"({''.join(letters)})")
    return [m["text"] for m in found], letters.index(answer[0])


def _question(task: str, record: object, path: Path, where: str, odd: list[str]) -> tuple[dict, list[str], tuple]:
    """(labels, texts, truth of the clip) of one question."""
    if not isinstance(record, dict) or set(record) != {"question", "answer"}:
        raise LoaderError(path, where, f"expected an object with question and answer, got {record!r:.120}")
    question, answer = record["question"], record["answer"]
    for name, value in (("question", question), ("answer", answer)):
        if not isinstance(value, str) or not value.strip():
            raise LoaderError(path, where, f"{name!r} must be a non-empty string, got {value!r}")
    labels: dict = {"question": question.split("\n")[0], "answer": answer}
    if task == "multi-choice":
        texts, truth = _multi_choice(question, answer, path, where, odd)
    elif task == "yes_no":
        if answer not in ("yes", "no"):
            raise LoaderError(path, where, f"answer must be 'yes' or 'no' (eval_yes_no.py L46 compares it with "
                                           f"them), got {answer!r}")
        labels["question"] = question
        return labels, [question], (0,) if answer == "yes" else ()
    elif task == "caption_matching":
        texts, labels["option_names"], truth = _caption_matching(question, answer, path, where)
    else:
        texts, truth = _captioning(question, answer, path, where)
    return labels, texts, (truth,)


def _load_task(path: Path, meta: dict, meta_path: Path, roots: VideoRoot, odd: list[str]) -> list[Item]:
    task = path.stem
    data = read_json(path)
    if not isinstance(data, dict) or not data:
        raise LoaderError(path, None, "expected an object of videos, each mapping aspects to lists of questions")
    items = []
    for video, aspects in data.items():
        if not isinstance(aspects, dict):
            raise LoaderError(path, f"key {video!r}", f"expected an object of aspects, got {type(aspects).__name__}")
        content = meta.get(video, {}).get("content") if isinstance(meta.get(video), dict) else None
        clip_path, exists = roots.resolve(f"{video}.mp4", path, f"key {video!r}", "video")
        for aspect, questions in aspects.items():
            place = f"key {video!r}, aspect {aspect!r}"
            if aspect not in ASPECTS:
                raise LoaderError(path, place, f"unknown aspect; expected one of {list(ASPECTS)}")
            if not isinstance(questions, list):
                raise LoaderError(path, place, f"expected a list of questions, got {type(questions).__name__}")
            fine = _fine_aspect(meta, meta_path, video, aspect, f"{path.name} {place}")
            for n, record in enumerate(questions):
                where = f"{place}, question {n}"
                labels, texts, truth = _question(task, record, path, where, odd)
                labels = {"format": task, "fine_aspect": fine, "video": video, "conflict": video.split("_")[0],
                          "content": list(content) if isinstance(content, list) else [], **labels}
                items.append(Item(BENCHMARK, f"{task}/{video}/{aspect}/{n}", aspect, (Clip(clip_path, exists=exists),),
                                  tuple(texts), (truth,), labels))
    return items


@loader
def load(path: str | Path, video_root: str | Path | None = None, *, allow_outside_root: bool = False) -> ItemSet:
    """Load TempCompass from its repository, its ``questions/`` folder or one task file (see the module notes).

    ``allow_outside_root`` accepts video ids that leave the video root (absolute, ``..``).
    """
    path = Path(path)
    files, meta_path = _task_files(path)
    meta = _meta(meta_path)
    roots = VideoRoot(video_root, allow_outside_root)
    items: list[Item] = []
    notes = []
    for file in files:
        odd: list[str] = []
        found = _load_task(file, meta, meta_path, roots, odd)
        items += found
        notes.append(f"{file.name}: {len(found)} questions")
        if odd:
            notes.append(f"{file.name}: {len(odd)} option line(s) spaced irregularly, read as released (first: "
                         f"{odd[0]})")
    return ItemSet(BENCHMARK, str(path), items, notes)
