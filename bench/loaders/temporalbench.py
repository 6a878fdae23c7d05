"""TemporalBench (Cai et al. 2024): the QA files of HF ``microsoft/TemporalBench``.

``temporalbench_short_qa.json`` and ``temporalbench_long_qa.json`` are lists of binary questions
``{idx, video_name, question, GT, dataset, category}`` (mu-cai/TemporalBench ``get_qa_acc.py`` reads these fields;
the README's example names the source ``source_dataset``, which is read when ``dataset`` is absent). ``question`` is
the whole prompt the official scripts send (``eval/llava-onevision.py`` L72, lmms-eval ``temporalbench_doc_to_text``):
``Which caption best describes this video?\\nA. <caption>\\nB. <caption>\\nAnswer with the option's letter from the
given choices directly.``; ``GT`` is the true caption's letter. ``temporalbench_short_caption.json`` (captioning) is
not read.

Each question is one item (id ``idx``) of 1 clip x its two captions, in the order shown (A, B; verbatim, spaces
included, so that the official question is rendered back exactly), the ``GT`` one true. The subset is the file's
length, ``short`` or ``long`` (``get_qa_acc.py`` tells them apart by ``'short' in`` the file name, as here). Labels:
``dataset``, ``category`` (short questions; None for long ones), ``video_name`` (the questions of one video are
scored together by Multiple Binary Accuracy), ``question`` and ``gt``. Videos are ``<video_root>/<video_name>``
(``short_video/...``, ``long_video/...`` as unzipped).

``path`` is one QA file or the dataset's folder (both QA files found there).
"""

from __future__ import annotations

import re
from pathlib import Path

from bench.items import Clip, Item, ItemSet
from bench.loaders.common import LoaderError, VideoRoot, read_json, require_text
from bench.loaders.options import loader

BENCHMARK = "temporalbench"
QA_FILES = ("temporalbench_short_qa.json", "temporalbench_long_qa.json")
LENGTHS = ("short", "long")
FIELDS = ("idx", "video_name", "question", "GT")
# get_qa_acc.py's category_mapping, in its print order
CATEGORIES = ("Action Order", "Action Frequency", "Action Type", "Motion Magnitude", "Motion Direction/Orientation",
              "Action Effector", "Event Order", "Others")
HEAD = "Which caption best describes this video?"
TAIL = "Answer with the option's letter from the given choices directly."
QUESTION = re.compile(r"\A(?P<head>.*?)\nA\. (?P<a>.*?)\nB\. (?P<b>.*?)\n(?P<tail>[^\n]*)\Z", re.S)


def length_of(path: Path) -> str:
    """``short`` or ``long`` from a QA file's name, as ``get_qa_acc.py`` tells them apart."""
    found = [length for length in LENGTHS if length in path.name]
    if len(found) != 1:
        raise LoaderError(path, None, "cannot tell short from long questions: the file name says neither (expected "
                                      f"{' or '.join(QA_FILES)})")
    return found[0]


def _dataset(entry: dict, path: Path, where: str) -> tuple[str, bool]:
    """The source dataset (``dataset``, else the README's ``source_dataset``) and whether the fallback was used."""
    if "dataset" in entry:
        return require_text(entry, "dataset", path, where), False
    if "source_dataset" in entry:
        return require_text(entry, "source_dataset", path, where), True
    raise LoaderError(path, where, "missing field 'dataset' (get_qa_acc.py scores per dataset)")


def _options(question: str, path: Path, where: str) -> tuple[str, str, bool]:
    """The two captions of a question and whether its wording around them is the official one."""
    found = QUESTION.match(question)
    if not found or not found["a"].strip() or not found["b"].strip():
        raise LoaderError(path, where, "'question' does not show two captions as lines 'A. ...' and 'B. ...' "
                                       "followed by a last line")
    if found["a"] == found["b"]:
        raise LoaderError(path, where, "the two captions of 'question' are the same")
    return found["a"], found["b"], found["head"] == HEAD and found["tail"] == TAIL


def _read(path: Path, roots: VideoRoot, seen: dict[str, str], notes: list[str]) -> list[Item]:
    length = length_of(path)
    data = read_json(path, row_name="entry")
    if not isinstance(data, list) or not data:
        raise LoaderError(path, None, "expected a non-empty JSON list of questions {idx, video_name, question, GT, "
                                      "dataset, category}")
    items, reworded, fallback, unknown = [], 0, 0, set()
    for i, entry in enumerate(data):
        where = f"entry {i}"
        if not isinstance(entry, dict):
            raise LoaderError(path, where, f"expected an object, got {type(entry).__name__}")
        missing = [f for f in FIELDS if f not in entry]
        if missing:
            raise LoaderError(path, where, f"missing field(s) {missing}")
        idx, name = require_text(entry, "idx", path, where), require_text(entry, "video_name", path, where)
        if idx in seen:
            raise LoaderError(path, where, f"duplicate idx {idx!r} (first at {seen[idx]})")
        seen[idx] = f"{path.name} {where}"
        if entry["GT"] not in ("A", "B"):
            raise LoaderError(path, where, f"'GT' must be 'A' or 'B', got {entry['GT']!r}")
        a, b, official = _options(require_text(entry, "question", path, where), path, where)
        reworded += not official
        dataset, used = _dataset(entry, path, where)
        fallback += used
        category = entry.get("category")
        if category not in (None, "") and not isinstance(category, str):
            raise LoaderError(path, where, f"'category' must be a string, got {category!r}")
        category = category or None
        if category is not None and category not in CATEGORIES:
            unknown.add(category)
        video, exists = roots.resolve(name, path, where, "video_name")
        labels = {"dataset": dataset, "category": category, "video_name": name, "question": entry["question"],
                  "gt": entry["GT"]}
        items.append(Item(BENCHMARK, idx, length, (Clip(video, exists=exists),), (a, b),
                          (("AB".index(entry["GT"]),),), labels))
    videos = len({it.labels["video_name"] for it in items})
    notes.append(f"{path.name}: {len(items)} {length} questions about {videos} videos")
    if reworded:
        notes.append(f"{path.name}: {reworded} question(s) worded otherwise than {HEAD!r} ... {TAIL!r}")
    if fallback:
        notes.append(f"{path.name}: {fallback} question(s) name their source 'source_dataset' (the README's "
                     "spelling) instead of 'dataset'")
    if unknown:
        notes.append(f"{path.name}: categories outside get_qa_acc.py's eight: {sorted(unknown)}")
    return items


def _files(path: Path) -> list[Path]:
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder (TemporalBench)")
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise LoaderError(path, None, "not a regular file or folder; expected a QA file or the dataset's folder")
    found = [path / name for name in QA_FILES if (path / name).is_file()]
    if not found:
        raise LoaderError(path, None, f"no {' or '.join(QA_FILES)} in this folder")
    return found


@loader
def load(path: str | Path, video_root: str | Path | None = None, *, allow_outside_root: bool = False) -> ItemSet:
    """Load TemporalBench's binary questions from a QA file or the dataset's folder (see the module notes).

    ``allow_outside_root`` accepts video names that leave the video root (absolute, ``..``).
    """
    path = Path(path)
    roots = VideoRoot(video_root, allow_outside_root)
    items: list[Item] = []
    seen: dict[str, str] = {}
    notes: list[str] = []
    for file in _files(path):
        items += _read(file, roots, seen, notes)
    return ItemSet(BENCHMARK, str(path), items, notes)
