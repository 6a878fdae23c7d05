"""VideoCon (Bansal et al., CVPR 2024): the core CSVs and the two downstream sets of ``Hritikbansal/videocon``.

Files are recognised by their header (names vary between copies):

| header | subset | item |
|---|---|---|
| ``videopath,source,caption,neg_caption,youtube_key,split,misalignment`` | ``llm`` | 1 clip x (caption, contrast) |
| the same plus ``nle`` (``videocon_llm_feedback.csv``) | ``llm_feedback`` | same, explanation kept as ``nle`` |
| ``video_url,caption,neg_caption,nle,hard`` (``videocon_human.csv``) | ``human`` | same; ``hard`` = Human-Hard |
| ``videopath,caption,match`` (``datasets/eval_ssv2_temporal.csv``) | ``ssv2_temporal`` | one retrieval item |
| ``videopath,question,answer,option,caption`` (``datasets/eval-nextqa-atphard.csv``) | ``atp_hard`` | 1 clip x 5 |
| ``vid_id,question,answer,s0..s4`` (``datasets/nextqa-atphard-statements.csv``) | ``atp_hard`` | 1 clip x 5 |

``datasets/nextqa-atphard.csv`` (the NExT-QA questions) adds the question ``type`` (CW, CH, TN, TC, TP) and ``qid`` to
the ATP-Hard items when it sits beside them. The downstream files wrap each description in the entailment prompt of
``src/prepare_data_for_inference.py``; the description is extracted and the prompt kept as a label.

Video paths: ``<root>/<videopath>`` (core, SSv2), ``<root>/<last component of video_url>`` (human),
``<root>/<last two components of videopath>`` (ATP-Hard, NExT-QA's ``<folder>/<video>.mp4``), or ``<root>/<vid_id>.mp4``
from the statements file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from bench.items import Clip, Item, ItemSet, resolve_video
from bench.loaders.common import LoaderError, files_in, read_csv_rows

BENCHMARK = "videocon"
LLM_COLUMNS = ("videopath", "source", "caption", "neg_caption", "youtube_key", "split", "misalignment")
HUMAN_COLUMNS = ("video_url", "caption", "neg_caption", "nle", "hard")
SSV2_COLUMNS = ("videopath", "caption", "match")
ATP_EVAL_COLUMNS = ("videopath", "question", "answer", "option", "caption")
ATP_STATEMENT_COLUMNS = ("vid_id", "question", "answer", "s0", "s1", "s2", "s3", "s4")
ATP_QUESTION_COLUMNS = ("video", "question", "answer", "qid", "type", "a0", "a1", "a2", "a3", "a4")
EXAMPLE_COLUMNS = (("videopath", "text", "caption"), ("videopath", "caption", "entailment"))
# src/misalignment_prompts.py: OBJECT, ACTION, ATTRIBUTE, RELATION, HALLUCINATION, COUNTING, EVENT (order flip).
MISALIGNMENTS = ("object", "action", "attribute", "relation", "hallucination", "counting", "flip", "event")
SOURCES = ("msr-vtt", "vatex", "tempo")
SPLITS = ("train", "val", "test")
N_OPTIONS = 5
# The description inside the entailment prompt (src/prepare_data_for_inference.py).
PROMPT_DESCRIPTION = re.compile(r'Does this video entail the description: "(?P<text>.*)"\?\s*\nAI:\s*$', re.S)


def _header(path: Path) -> list[str]:
    import csv

    with path.open(encoding="utf-8", newline="") as fh:
        return next(csv.reader(fh), [])


def _described(prompt: str, path: Path, where: str) -> str:
    match = PROMPT_DESCRIPTION.search(prompt)
    if not match:
        raise LoaderError(path, where, "caption is not wrapped in VideoCon's entailment prompt "
                                       "('... Does this video entail the description: \"...\"?\\nAI: ')")
    return match["text"]


def _bool(value: str, path: Path, where: str, field: str) -> bool:
    lowered = value.strip().lower()
    if lowered not in ("true", "false", "1", "0"):
        raise LoaderError(path, where, f"{field!r} must be True/False, got {value!r}")
    return lowered in ("true", "1")


def _choice(value: str, allowed: tuple[str, ...], path: Path, where: str, field: str) -> str:
    lowered = value.strip().lower()
    if lowered not in allowed:
        raise LoaderError(path, where, f"unknown {field} {value!r}; expected one of {list(allowed)}")
    return lowered


def _core(path: Path, root, split: str | None, subset: str) -> list[Item]:
    items = []
    columns = LLM_COLUMNS + (("nle",) if subset == "llm_feedback" else ())
    for n, (line, row) in enumerate(read_csv_rows(path, columns)):
        where = f"line {line}"
        row_split = _choice(row["split"], SPLITS, path, where, "split")
        if split is not None and row_split != split:
            continue
        labels = {
            "source": _choice(row["source"], SOURCES, path, where, "source"),
            "misalignment": _choice(row["misalignment"], MISALIGNMENTS, path, where, "misalignment"),
            "split": row_split,
            "youtube_key": row["youtube_key"] or None,
            "hard": False,
        }
        if subset == "llm_feedback":
            labels["nle"] = row["nle"]
        video, exists = resolve_video(root, row["videopath"])
        items.append(Item(BENCHMARK, f"{subset}/{n}", subset, (Clip(video, exists=exists),),
                          (row["caption"], row["neg_caption"]), ((0,),), labels))
    return items


def _human(path: Path, root, split: str | None, subset: str) -> list[Item]:
    items = []
    for n, (line, row) in enumerate(read_csv_rows(path, HUMAN_COLUMNS)):
        where = f"line {line}"
        name = row["video_url"].rstrip("/").rsplit("/", 1)[-1]
        if not name:
            raise LoaderError(path, where, "empty 'video_url'")
        video, exists = resolve_video(root, name)
        labels = {"source": "activitynet", "misalignment": None, "split": "test", "youtube_key": None,
                  "hard": _bool(row["hard"], path, where, "hard"), "nle": row["nle"], "video_url": row["video_url"]}
        items.append(Item(BENCHMARK, f"human/{n}", "human", (Clip(video, exists=exists),),
                          (row["caption"], row["neg_caption"]), ((0,),), labels))
    return items


def _ssv2(path: Path, root, split: str | None, subset: str) -> list[Item]:
    videos: dict[str, int] = {}
    texts: dict[str, int] = {}
    prompts: list[str] = []
    positives: dict[tuple[int, int], bool] = {}
    for line, row in read_csv_rows(path, SSV2_COLUMNS):
        where = f"line {line}"
        if row["match"] not in ("0", "1"):
            raise LoaderError(path, where, f"'match' must be 0 or 1, got {row['match']!r}")
        text = _described(row["caption"], path, where)
        v = videos.setdefault(row["videopath"], len(videos))
        if text not in texts:
            texts[text] = len(texts)
            prompts.append(row["caption"])
        key = (v, texts[text])
        if key in positives:
            raise LoaderError(path, where, f"duplicate pair of video {row['videopath']!r} and caption {text!r}")
        positives[key] = row["match"] == "1"
    missing = len(videos) * len(texts) - len(positives)
    if missing:
        raise LoaderError(path, None, f"{missing} (video, caption) pairs are absent: the retrieval set must pair "
                                      f"every one of the {len(videos)} videos with every one of the {len(texts)} captions")
    clips = tuple(Clip(video, exists=exists) for video, exists in (resolve_video(root, v) for v in videos))
    truth = tuple(tuple(t for t in range(len(texts)) if positives[(v, t)]) for v in range(len(videos)))
    return [Item(BENCHMARK, "ssv2_temporal", "ssv2_temporal", clips, tuple(texts), truth,
                 {"prompts": prompts, "video_names": list(videos)})]


def _answer(value: str, path: Path, where: str) -> int:
    if value not in {str(i) for i in range(N_OPTIONS)}:
        raise LoaderError(path, where, f"'answer' must be an option index 0..{N_OPTIONS - 1}, got {value!r}")
    return int(value)


def _atp_eval(path: Path, root, split: str | None, subset: str) -> list[Item]:
    """Each question is a block of 5 consecutive rows with options 0..4, as ``src/eval_atphard.py`` reads them (a
    video may ask the same question twice, so rows are not grouped by video and question)."""
    blocks: list[list[tuple[str, dict]]] = []
    for line, row in read_csv_rows(path, ATP_EVAL_COLUMNS):
        where = f"line {line}"
        option = _answer(row["option"], path, where)
        if option == 0:
            blocks.append([])
        elif not blocks or len(blocks[-1]) != option:
            raise LoaderError(path, where, f"option {option} does not follow option {len(blocks[-1]) - 1 if blocks else None}"
                                           f" of the same question; expected blocks of options 0..{N_OPTIONS - 1}")
        first = blocks[-1][0][1] if blocks[-1] else row
        if (row["videopath"], row["question"], row["answer"]) != (first["videopath"], first["question"], first["answer"]):
            raise LoaderError(path, where, "video, question or answer changes inside one question's options")
        blocks[-1].append((where, row))
    items = []
    for n, block in enumerate(blocks):
        where, first = block[0]
        if len(block) != N_OPTIONS:
            raise LoaderError(path, where, f"question {first['question']!r} has {len(block)} options, expected {N_OPTIONS}")
        relative = "/".join(Path(first["videopath"]).parts[-2:])
        video, exists = resolve_video(root, relative)
        texts = tuple(_described(row["caption"], path, w) for w, row in block)
        items.append(Item(BENCHMARK, f"atp_hard/{n}", "atp_hard", (Clip(video, exists=exists),), texts,
                          ((_answer(first["answer"], path, where),),),
                          {"question": first["question"], "video": Path(first["videopath"]).stem}))
    return items


def _atp_statements(path: Path, root, split: str | None, subset: str) -> list[Item]:
    items = []
    for n, (line, row) in enumerate(read_csv_rows(path, ATP_STATEMENT_COLUMNS)):
        where = f"line {line}"
        video, exists = resolve_video(root, f"{row['vid_id']}.mp4")
        texts = tuple(row[f"s{i}"] for i in range(N_OPTIONS))
        items.append(Item(BENCHMARK, f"atp_hard/{n}", "atp_hard", (Clip(video, exists=exists),), texts,
                          ((_answer(row["answer"], path, where),),), {"question": row["question"],
                                                                       "video": row["vid_id"]}))
    return items


def _question_types(path: Path) -> dict[tuple[str, str], dict]:
    types = {}
    for line, row in read_csv_rows(path, ATP_QUESTION_COLUMNS):
        if not row["type"]:
            raise LoaderError(path, f"line {line}", "empty question 'type'")
        types[(row["video"], row["question"])] = {"type": row["type"], "qid": row["qid"]}
    return types


READERS: dict[str, tuple[tuple[str, ...], Callable[..., list[Item]]]] = {
    "llm_feedback": (LLM_COLUMNS + ("nle",), _core),
    "llm": (LLM_COLUMNS, _core),
    "human": (HUMAN_COLUMNS, _human),
    "ssv2_temporal": (SSV2_COLUMNS, _ssv2),
    "atp_hard_eval": (ATP_EVAL_COLUMNS, _atp_eval),
    "atp_hard_statements": (ATP_STATEMENT_COLUMNS, _atp_statements),
}


def recognise(path: Path) -> str | None:
    """Which VideoCon file a CSV is, from its header: a key of :data:`READERS`, ``"atp_hard_questions"``, or None."""
    header = set(_header(path))
    for kind, (columns, _) in READERS.items():
        if set(columns) <= header:
            return kind
    if set(ATP_QUESTION_COLUMNS) <= header:
        return "atp_hard_questions"
    return None


def load(path: str | Path, video_root: str | Path | None = None, *, split: str | None = None) -> ItemSet:
    """Load VideoCon from one CSV or a folder of them; ``split`` ("train", "val", "test") filters the core rows."""
    if split is not None and split not in SPLITS:
        raise ValueError(f"split must be one of {list(SPLITS)} or None, got {split!r}")
    path = Path(path)
    files = files_in(path, (".csv",), "VideoCon")
    kinds = {f: recognise(f) for f in files}
    notes = []
    for f, kind in kinds.items():
        if kind is None:
            if any(set(c) <= set(_header(f)) for c in EXAMPLE_COLUMNS):
                problem = "an inference input/output example (examples/), not benchmark annotations"
            else:
                shown = [h if len(h) <= 40 else h[:37] + "..." for h in _header(f)]
                problem = f"not a VideoCon annotation file: header {shown} matches none of the released formats"
            if path.is_file():
                raise LoaderError(f, "line 1 (header)", problem)
            notes.append(f"skipped {f.name}: {problem}")
    if "atp_hard_eval" in kinds.values():
        for f, kind in kinds.items():
            if kind == "atp_hard_statements":
                kinds[f] = None
                notes.append(f"skipped {f.name}: the per-option file eval-nextqa-atphard.csv holds the same "
                             "statements with the video paths")
    items: list[Item] = []
    for f, kind in kinds.items():
        if kind is None or kind == "atp_hard_questions":
            continue
        subset = "atp_hard" if kind.startswith("atp_hard") else kind
        loaded = READERS[kind][1](f, video_root, split, subset)
        notes.append(f"{f.name}: {kind}, {len(loaded)} items")
        items += loaded
    types = [f for f, kind in kinds.items() if kind == "atp_hard_questions"]
    if types:
        lookup = _question_types(types[0])
        items = [_with_type(it, lookup) if it.subset == "atp_hard" else it for it in items]
        untyped = sum(1 for it in items if it.subset == "atp_hard" and it.labels["type"] is None)
        notes.append(f"{types[0].name}: question types added ({untyped} ATP-Hard items without a match)")
    if not items:
        raise LoaderError(path, None, "no VideoCon items: only " + ", ".join(f.name for f in files))
    return ItemSet(BENCHMARK, str(path), items, notes)


def _with_type(item: Item, lookup: dict[tuple[str, str], dict]) -> Item:
    found = lookup.get((item.labels["video"], item.labels["question"]), {"type": None, "qid": None})
    return Item(item.benchmark, item.item_id, item.subset, item.clips, item.texts, item.truth,
                {**item.labels, **found}, item.role, item.twin_id)
