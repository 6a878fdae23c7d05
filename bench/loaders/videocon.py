"""VideoCon (Bansal et al., CVPR 2024): the core CSVs and the two downstream sets of ``Hritikbansal/videocon``.

Files are recognised by their header, not their name (copies get renamed):

| header | subset | item |
|---|---|---|
| ``videopath,source,caption,neg_caption,youtube_key,split,misalignment`` | ``llm`` | 1 clip x (caption, contrast) |
| the same plus ``nle`` (``videocon_llm_feedback.csv``) | ``llm_feedback`` | same, explanation kept as ``nle`` |
| ``video_url,caption,neg_caption,nle,hard`` (``videocon_human.csv``) | ``human`` | same; ``hard`` = Human-Hard |
| ``videopath,caption,match`` (``datasets/eval_ssv2_temporal.csv``) | ``ssv2_temporal`` | one item: videos x captions |
| ``videopath,question,answer,option,caption`` (``datasets/eval-nextqa-atphard.csv``) | ``atp_hard`` | 1 clip x 5 |
| ``vid_id,question,answer,s0..s4`` (``datasets/nextqa-atphard-statements.csv``) | ``atp_hard`` | 1 clip x 5 |

SSv2-Temporal is one retrieval item (every video x every caption, truth from ``match``) because its metrics rank all
videos per caption (``src/calc_ssv2.py``). ATP-Hard has one item per question; when both ATP-Hard files are given the
per-option file is used (it has the video folders) and the statements file is checked against it.
``datasets/nextqa-atphard.csv`` (NExT-QA's questions) adds ``type`` (CW, CH, TN, TC, TP...), ``type_group`` (its first
letter: C causal, T temporal, D descriptive) and ``qid`` to the ATP-Hard items, matched on (video, question, answer),
when it is in the folder or beside the single ATP-Hard file given. The downstream files wrap each description in the
entailment prompt of ``src/prepare_data_for_inference.py``; the description is extracted and the prompt kept as a label.

Not loaded, with the reason: ``examples/final_test.csv`` (``videopath,text,caption``, an inference input example) and
headerless score files (``videopath,caption,entailment[,pos,neg]``: the released ``*_scores.csv``, which
``foilbench import videocon`` reads, and ``final_test_scores.csv``, the example's scores, whose videos are placeholders
and match no item). In a folder they are skipped and noted; given alone they
raise :class:`LoaderError`.

Video paths: ``<root>/<videopath>`` (core, SSv2), ``<root>/<last component of video_url>`` (human),
``<root>/<last two components of videopath>`` (ATP-Hard, NExT-QA's ``<folder>/<video>.mp4``), or ``<root>/<vid_id>.mp4``
from the statements file alone (it names no folder).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Callable

from bench.items import Clip, Item, ItemSet
from bench.loaders.common import LoaderError, Repeats, VideoRoot, csv_header, files_in, read_csv_rows
from bench.loaders.options import loader

BENCHMARK = "videocon"
LLM_COLUMNS = ("videopath", "source", "caption", "neg_caption", "youtube_key", "split", "misalignment")
HUMAN_COLUMNS = ("video_url", "caption", "neg_caption", "nle", "hard")
SSV2_COLUMNS = ("videopath", "caption", "match")
ATP_EVAL_COLUMNS = ("videopath", "question", "answer", "option", "caption")
ATP_STATEMENT_COLUMNS = ("vid_id", "question", "answer", "s0", "s1", "s2", "s3", "s4")
ATP_QUESTION_COLUMNS = ("video", "question", "answer", "qid", "type", "a0", "a1", "a2", "a3", "a4")
EXAMPLE_COLUMNS = ("videopath", "text", "caption")  # examples/final_test.csv
# src/misalignment_prompts.py: OBJECT, ACTION, ATTRIBUTE, RELATION, HALLUCINATION, COUNTING, EVENT (order flip).
MISALIGNMENTS = ("object", "action", "attribute", "relation", "hallucination", "counting", "flip", "event")
SOURCES = ("msr-vtt", "vatex", "tempo")
SPLITS = ("train", "val", "test")
# NExT-QA (Xiao et al., CVPR 2021) question types: causal why/how, temporal next/current/previous, descriptive.
NEXTQA_TYPES = ("CW", "CH", "TN", "TC", "TP", "DL", "DB", "DO", "DC")
N_OPTIONS = 5
QUESTIONS_FILE = "nextqa-atphard.csv"
# The description inside the entailment prompt (src/prepare_data_for_inference.py).
PROMPT_DESCRIPTION = re.compile(r'Does this video entail the description: "(?P<text>.*)"\?\s*\nAI:\s*$', re.S)
UNUSABLE = {
    "example": "an inference input example (examples/final_test.csv: videopath,text,caption), not benchmark "
               "annotations",
    "scores": "a score file (no header: videopath,caption,entailment[,pos,neg]); import it as a run with "
              "'foilbench import videocon', it holds no annotations",
    "example_scores": "the scores of the inference example (examples/final_test_scores.csv: its videos are "
                      "placeholders like '<path to ...>'); they match no benchmark item, so there is nothing to load "
                      "or import (the released *_scores.csv of the eval sets import with 'foilbench import videocon')",
}


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def _described(prompt: str, path: Path, where: str) -> str:
    match = PROMPT_DESCRIPTION.search(prompt)
    if not match or not match["text"].strip():
        raise LoaderError(path, where, "caption is not wrapped in VideoCon's entailment prompt "
                                       "('... Does this video entail the description: \"...\"?\\nAI: ')")
    return match["text"]


def _text(row: dict[str, str], field: str, path: Path, where: str) -> str:
    if not row[field].strip():
        raise LoaderError(path, where, f"empty {field!r}; expected a sentence")
    return row[field]


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


def _index(value: str, path: Path, where: str, field: str) -> int:
    if value.strip() not in {str(i) for i in range(N_OPTIONS)}:
        raise LoaderError(path, where, f"{field!r} must be an option index 0..{N_OPTIONS - 1}, got {value!r}")
    return int(value)


def _core(path: Path, root: VideoRoot, split: str | None, subset: str, notes: list[str]) -> list[Item]:
    items = []
    repeats = Repeats()
    dropped: Counter[str] = Counter()
    columns = LLM_COLUMNS + (("nle",) if subset == "llm_feedback" else ())
    for n, (line, row) in enumerate(read_csv_rows(path, columns)):
        where = f"line {line}"
        row_split = _choice(row["split"], SPLITS, path, where, "split")
        labels = {
            "source": _choice(row["source"], SOURCES, path, where, "source"),
            "misalignment": _choice(row["misalignment"], MISALIGNMENTS, path, where, "misalignment"),
            "split": row_split,
            "youtube_key": row["youtube_key"] or None,
            "hard": False,
        }
        if subset == "llm_feedback":
            labels["nle"] = row["nle"]
        texts = (_text(row, "caption", path, where), _text(row, "neg_caption", path, where))
        video, exists = root.resolve(_text(row, "videopath", path, where), path, where, "videopath")
        if split is not None and row_split != split:
            dropped[row_split] += 1
            continue
        repeats.add(tuple(row.values()), f"{path.name} {where}")
        items.append(Item(BENCHMARK, f"{subset}/{n}", subset, (Clip(video, exists=exists),), texts, ((0,),), labels))
    notes += repeats.notes()
    if split is not None:
        left_out = ", ".join(f"{k} {v}" for k, v in sorted(dropped.items())) or "none"
        notes.append(f"{path.name}: split={split!r} kept {len(items)} of {len(items) + sum(dropped.values())} rows "
                     f"(left out: {left_out})")
    return items


def _human(path: Path, root: VideoRoot, split: str | None, subset: str, notes: list[str]) -> list[Item]:
    items = []
    repeats = Repeats()
    for n, (line, row) in enumerate(read_csv_rows(path, HUMAN_COLUMNS)):
        where = f"line {line}"
        name = row["video_url"].strip().rstrip("/").rsplit("/", 1)[-1]
        if not name:
            raise LoaderError(path, where, "empty 'video_url'; expected a link ending in the video's file name")
        video, exists = root.resolve(name, path, where, "video_url")
        repeats.add(tuple(row.values()), f"{path.name} {where}")
        labels = {"source": "activitynet", "misalignment": None, "split": "test", "youtube_key": None,
                  "hard": _bool(row["hard"], path, where, "hard"), "nle": row["nle"], "video_url": row["video_url"]}
        texts = (_text(row, "caption", path, where), _text(row, "neg_caption", path, where))
        items.append(Item(BENCHMARK, f"human/{n}", "human", (Clip(video, exists=exists),), texts, ((0,),), labels))
    notes += repeats.notes()
    return items


def _ssv2(path: Path, root: VideoRoot, split: str | None, subset: str, notes: list[str]) -> list[Item]:
    videos: dict[str, int] = {}
    first_line: dict[str, str] = {}
    texts: dict[str, int] = {}
    prompts: list[str] = []
    positives: dict[tuple[int, int], bool] = {}
    for line, row in read_csv_rows(path, SSV2_COLUMNS):
        where = f"line {line}"
        if row["match"] not in ("0", "1"):
            raise LoaderError(path, where, f"'match' must be 0 or 1, got {row['match']!r}")
        text = _described(row["caption"], path, where)
        v = videos.setdefault(_text(row, "videopath", path, where), len(videos))
        first_line.setdefault(row["videopath"], where)
        if text not in texts:
            texts[text] = len(texts)
            prompts.append(row["caption"])
        key = (v, texts[text])
        if key in positives:
            raise LoaderError(path, where, f"duplicate pair of video {row['videopath']!r} and caption {text!r}")
        positives[key] = row["match"] == "1"
    missing = len(videos) * len(texts) - len(positives)
    if missing:
        raise LoaderError(path, None, f"{missing} (video, caption) pairs are absent: the retrieval set must pair every "
                                      f"one of the {len(videos)} videos with every one of the {len(texts)} captions")
    clips = tuple(Clip(video, exists=exists) for video, exists in
                  (root.resolve(v, path, first_line[v], "videopath") for v in videos))
    truth = tuple(tuple(t for t in range(len(texts)) if positives[(v, t)]) for v in range(len(videos)))
    notes.append(f"{path.name}: {len(videos)} videos x {len(texts)} captions, {sum(map(len, truth))} positives")
    return [Item(BENCHMARK, "ssv2_temporal", "ssv2_temporal", clips, tuple(texts), truth,
                 {"prompts": prompts, "video_names": list(videos)})]


def _atp_eval(path: Path, root: VideoRoot, split: str | None, subset: str, notes: list[str]) -> list[Item]:
    """Each question is a block of 5 consecutive rows with options 0..4, as ``src/eval_atphard.py`` reads them (a
    video may ask the same question twice, so rows are not grouped by video and question)."""
    blocks: list[list[tuple[str, dict]]] = []
    for line, row in read_csv_rows(path, ATP_EVAL_COLUMNS):
        where = f"line {line}"
        option = _index(row["option"], path, where, "option")
        if option == 0:
            blocks.append([])
        elif not blocks or len(blocks[-1]) != option:
            previous = len(blocks[-1]) - 1 if blocks else None
            raise LoaderError(path, where, f"option {option} does not follow option {previous} of the same question; "
                                           f"expected blocks of options 0..{N_OPTIONS - 1}")
        first = blocks[-1][0][1] if blocks[-1] else row
        if any(row[k] != first[k] for k in ("videopath", "question", "answer")):
            raise LoaderError(path, where, "video, question or answer changes inside one question's options")
        blocks[-1].append((where, row))
    items = []
    repeats = Repeats()
    for n, block in enumerate(blocks):
        where, first = block[0]
        repeats.add(tuple(tuple(row.values()) for _, row in block), f"{path.name} {where}")
        if len(block) != N_OPTIONS:
            raise LoaderError(path, where, f"question {first['question']!r} has {len(block)} options, "
                                           f"expected {N_OPTIONS}")
        relative = "/".join(Path(_text(first, "videopath", path, where)).parts[-2:])
        video, exists = root.resolve(relative, path, where, "videopath")
        texts = tuple(_described(row["caption"], path, w) for w, row in block)
        items.append(Item(BENCHMARK, f"atp_hard/{n}", "atp_hard", (Clip(video, exists=exists),), texts,
                          ((_index(first["answer"], path, where, "answer"),),),
                          {"question": first["question"], "video": Path(first["videopath"]).stem}))
    notes += repeats.notes()
    return items


def _atp_statements(path: Path, root: VideoRoot, split: str | None, subset: str, notes: list[str]) -> list[Item]:
    items = []
    repeats = Repeats()
    for n, (line, row) in enumerate(read_csv_rows(path, ATP_STATEMENT_COLUMNS)):
        where = f"line {line}"
        video, exists = root.resolve(f"{_text(row, 'vid_id', path, where).strip()}.mp4", path, where, "vid_id")
        repeats.add(tuple(row.values()), f"{path.name} {where}")
        texts = tuple(_text(row, f"s{i}", path, where) for i in range(N_OPTIONS))
        items.append(Item(BENCHMARK, f"atp_hard/{n}", "atp_hard", (Clip(video, exists=exists),), texts,
                          ((_index(row["answer"], path, where, "answer"),),),
                          {"question": row["question"], "video": row["vid_id"].strip()}))
    notes += repeats.notes()
    return items


def _check_statements(evals: list[Item], statements: list[Item], path: Path) -> None:
    """The statements file must hold the per-option file's questions, in order, with the same answers and options."""
    if len(statements) != len(evals):
        raise LoaderError(path, None, f"{len(statements)} questions, but the per-option file has {len(evals)}; "
                                      "expected the same ATP-Hard questions in both")
    for n, (ev, st) in enumerate(zip(evals, statements)):
        fields = {"video": (ev.labels["video"], st.labels["video"]), "question": (ev.labels["question"],
                  st.labels["question"]), "answer": (ev.truth, st.truth), "statements": (ev.texts, st.texts)}
        for field, (expected, found) in fields.items():
            if expected != found:
                raise LoaderError(path, f"question {n}", f"{field} {found!r} differs from the per-option file's "
                                                         f"{expected!r}")


def _question_types(path: Path) -> dict[tuple[str, str, int], list[dict]]:
    """NExT-QA's questions keyed by (video, question, answer); each value lists the matching ``type``/``qid``."""
    types: dict[tuple[str, str, int], list[dict]] = {}
    ids: dict[tuple[str, str], str] = {}
    for line, row in read_csv_rows(path, ATP_QUESTION_COLUMNS):
        where = f"line {line}"
        qtype = row["type"].strip()
        if qtype not in NEXTQA_TYPES:
            raise LoaderError(path, where, f"unknown question type {qtype!r}; expected one of {list(NEXTQA_TYPES)}")
        if not row["qid"].strip().isdecimal():
            raise LoaderError(path, where, f"'qid' must be a question number, got {row['qid']!r}")
        video = row["video"].strip()
        key = (video, row["qid"].strip())
        if key in ids:
            raise LoaderError(path, where, f"duplicate question id: video {video} qid {key[1]} (first at {ids[key]})")
        ids[key] = where
        answer = _index(row["answer"], path, where, "answer")
        types.setdefault((video, row["question"], answer), []).append(
            {"type": qtype, "type_group": qtype[0], "qid": int(key[1])})
    return types


def _with_types(items: list[Item], path: Path, notes: list[str]) -> list[Item]:
    lookup = _question_types(path)
    out, unmatched, ambiguous = [], 0, 0
    for it in items:
        if it.subset != "atp_hard":
            out.append(it)
            continue
        found = lookup.get((it.labels["video"], it.labels["question"], it.truth[0][0]), [])
        unmatched += not found
        ambiguous += len(found) > 1
        extra = found[0] if len(found) == 1 else {"type": None, "type_group": None, "qid": None}
        out.append(Item(it.benchmark, it.item_id, it.subset, it.clips, it.texts, it.truth, {**it.labels, **extra},
                        it.role, it.twin_id))
    notes.append(f"{path.name}: question types added ({unmatched} ATP-Hard questions not found, {ambiguous} "
                 "matching several; those have type None)")
    return out


READERS: dict[str, tuple[tuple[str, ...], Callable[..., list[Item]]]] = {
    "llm_feedback": (LLM_COLUMNS + ("nle",), _core),
    "llm": (LLM_COLUMNS, _core),
    "human": (HUMAN_COLUMNS, _human),
    "ssv2_temporal": (SSV2_COLUMNS, _ssv2),
    "atp_hard_eval": (ATP_EVAL_COLUMNS, _atp_eval),
    "atp_hard_statements": (ATP_STATEMENT_COLUMNS, _atp_statements),
}


def recognise(path: Path) -> str | None:
    """Which VideoCon file a CSV is, from its first record: a key of :data:`READERS`, ``"atp_hard_questions"``,
    ``"example"``, ``"scores"`` (a headerless score file), ``"example_scores"`` (one of the inference example, whose
    videos are placeholders), or None."""
    first = csv_header(path)
    header = set(first)
    for kind, (columns, _) in READERS.items():
        if set(columns) <= header:
            return kind
    if set(ATP_QUESTION_COLUMNS) <= header:
        return "atp_hard_questions"
    if set(EXAMPLE_COLUMNS) <= header:
        return "example"
    if len(first) in (3, 5) and PROMPT_DESCRIPTION.search(first[1]) and all(_is_number(v) for v in first[2:]):
        return "example_scores" if first[0].startswith("<path to") else "scores"
    return None


def _unrecognised(path: Path) -> str:
    shown = [h if len(h) <= 40 else h[:37] + "..." for h in csv_header(path)]
    return f"not a VideoCon annotation file: header {shown} matches none of the released formats"


def _kinds(path: Path, notes: list[str]) -> dict[Path, str]:
    """The loadable files given (a file, or a folder's CSVs) with their kind; the others noted or refused."""
    files = files_in(path, (".csv",), "VideoCon")
    kinds: dict[Path, str] = {}
    for f in files:
        kind = recognise(f)
        if kind is None or kind in UNUSABLE:
            problem = UNUSABLE.get(kind) or _unrecognised(f)
            if path.is_file():
                raise LoaderError(f, "line 1", problem)
            notes.append(f"skipped {f.name}: {problem}")
            continue
        kinds[f] = kind
    if path.is_file():
        kind = kinds[path]
        beside = path.parent / QUESTIONS_FILE
        if kind == "atp_hard_questions":
            raise LoaderError(path, None, "NExT-QA's questions with short answers only; ATP-Hard items come from "
                                          "eval-nextqa-atphard.csv or nextqa-atphard-statements.csv (this file, beside "
                                          "them, adds question types)")
        if kind.startswith("atp_hard") and beside.is_file() and recognise(beside) == "atp_hard_questions":
            kinds[beside] = "atp_hard_questions"
    seen: dict[str, Path] = {}
    for f, kind in kinds.items():
        if kind in seen:
            raise LoaderError(path, None, f"{seen[kind].name} and {f.name} are both {kind} files; item ids would "
                                          "clash: load them one at a time")
        seen[kind] = f
    return kinds


@loader
def load(path: str | Path, video_root: str | Path | None = None, *, split: str | None = None,
         allow_outside_root: bool = False) -> ItemSet:
    """Load VideoCon from one CSV or a folder of them.

    ``split`` ("train", "val", "test") keeps only those rows of the LLM-generated core files (``llm``,
    ``llm_feedback``); the human and downstream sets are evaluation sets and are always kept. Which file was read
    as what, and what was skipped, is in the notes; so are rows that repeat an earlier row exactly (kept as
    released: the official scripts score every row). ``allow_outside_root`` accepts video paths that leave the
    video root (absolute, ``..``).
    """
    if split is not None and split not in SPLITS:
        raise ValueError(f"split must be one of {list(SPLITS)} or None, got {split!r}")
    path = Path(path)
    notes: list[str] = []
    kinds = _kinds(path, notes)
    by_kind = {kind: f for f, kind in kinds.items()}
    loaded: dict[str, list[Item]] = {}
    for kind, f in by_kind.items():
        if kind in READERS:
            subset = "atp_hard" if kind.startswith("atp_hard") else kind
            loaded[kind] = READERS[kind][1](f, VideoRoot(video_root, allow_outside_root), split, subset, notes)
            notes.append(f"{f.name}: read as {kind}, items: {len(loaded[kind])}")
    if "atp_hard_eval" in loaded and "atp_hard_statements" in loaded:
        _check_statements(loaded["atp_hard_eval"], loaded.pop("atp_hard_statements"), by_kind["atp_hard_statements"])
        notes.append(f"{by_kind['atp_hard_statements'].name}: agrees with {by_kind['atp_hard_eval'].name}, whose "
                     "items (with video folders) are kept")
    items = [it for part in loaded.values() for it in part]
    if "atp_hard_questions" in by_kind:
        if not any(it.subset == "atp_hard" for it in items):
            notes.append(f"{by_kind['atp_hard_questions'].name}: NExT-QA questions unused (no ATP-Hard file)")
        else:
            items = _with_types(items, by_kind["atp_hard_questions"], notes)
    if not items:
        raise LoaderError(path, None, "no VideoCon items in " + (", ".join(f.name for f in kinds) or "any file")
                          + ("; " + "; ".join(notes) if notes else ""))
    return ItemSet(BENCHMARK, str(path), items, notes)
