"""MVP's answer files: the leaderboard submission JSONL and lmms-eval's logged samples, or plain responses.

Rows of any of three shapes, in JSONL files (a CSV holds the plain shape):

- the leaderboard submission (``mvp_pair_accuracy`` writes it, facebookresearch/minimal_video_pairs
  ``tasks/mvp/utils.py`` L154-172): ``{data_name, row_id, model_answer, task}``, ``row_id`` a ``video_id`` and
  ``model_answer`` the chosen option's text. That file writes ``candidates[int(prediction_idx)]`` (L160), and an
  answer its parser could not read (``prediction_idx`` False) becomes option A (``int(False)`` is 0): such a file
  cannot tell the two apart, and neither can this import;
- lmms-eval's logged samples (``--log_samples``): the ``pair_accuracy`` entry ``mvp_process_results`` returns
  (L74-83), whose ``video_id`` and ``video-llm-prediction`` (the model's text) are read;
- plain ``{video_id, response}`` rows (a closed model's answers).

Responses are parsed as ``extract_pred`` does (L99-113, :func:`parse_answer`); one it cannot read is stored as
unparsed (choice -1), which the metrics count as wrong and keep in the count, as ``mvp_process_results`` does.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Sequence

from bench.importers.common import rows, stored_answer
from bench.items import Item
from bench.loaders.common import LoaderError, read_csv_rows
from bench.loaders.mvp import official_order

# extract_pred L101, applied to the lowercased response with re.IGNORECASE
ANSWER = re.compile(r"(Answer|Assistant)?:?\s*([AB])\b", re.IGNORECASE)


def parse_answer(response: str) -> int | None:
    """The option a response picks, as ``extract_pred`` reads it: every match of :data:`ANSWER` in the lowercased
    text, the second when there are several (L104), its letter as 0 (A) or 1 (B); None when nothing matches."""
    found = ANSWER.findall(response.lower())
    if not found:
        return None
    return "ab".index((found[1] if len(found) > 1 else found[0])[1].lower())


def parse_choice(answer: str, options: Sequence[str], **_: object) -> int:
    """The option of a generated answer (an API model's) as :func:`parse_answer` reads it: its index among the two
    options shown, -1 when it names none."""
    picked = parse_answer(answer)
    return -1 if picked is None or picked >= len(options) else picked


def _answer(row: dict, path: Path, where: str) -> tuple[str, str, str]:
    """(video_id, the answer as given, its kind: "text" of an option or a "response" to parse)."""
    if "row_id" in row and "model_answer" in row:
        return str(row["row_id"]), stored_answer(row["model_answer"]), "text"
    logged = row.get("pair_accuracy")
    if isinstance(logged, dict) and "video_id" in logged and "video-llm-prediction" in logged:
        return str(logged["video_id"]), stored_answer(logged["video-llm-prediction"]), "response"
    if "video_id" in row and "response" in row:
        return str(row["video_id"]), stored_answer(row["response"]), "response"
    raise LoaderError(path, where, "expected a submission row {row_id, model_answer}, an lmms-eval sample with "
                                   "'pair_accuracy' {video_id, video-llm-prediction}, or {video_id, response}")


def _rows(path: Path) -> list[tuple[str, dict]]:
    if path.suffix.lower() == ".jsonl":
        return rows(path, ())
    return [(f"line {n}", r) for n, r in read_csv_rows(path, ("video_id", "response"))]


def import_mvp(items: Sequence[Item], files: Sequence[Path], **_: object) -> tuple[list, list, str]:
    """MVP answer files -> choice rows, one per question (its clip's options in its official order)."""
    questions = {vid: (it, c) for it in items for c, vid in enumerate(it.labels.get("video_ids") or [])}
    choice, seen = [], {}
    for path in map(Path, files):
        for where, row in _rows(path):
            video_id, answer, kind = _answer(row, path, where)
            if video_id not in questions:
                raise LoaderError(path, where, f"video_id {video_id!r} is no question of the MVP files loaded")
            if video_id in seen:
                raise LoaderError(path, where, f"a second answer for {video_id!r} (first: {seen[video_id]})")
            seen[video_id] = f"{path.name} {where}"
            item, clip = questions[video_id]
            options = official_order(item, clip)
            if kind == "text":
                shown = [item.texts[o] for o in options]
                picked = shown.index(answer) if answer in shown else None
            else:
                picked = parse_answer(answer)
            choice.append({"item_id": item.item_id, "axis": "text", "query": clip, "options": options,
                           "logits": [math.nan] * len(options), "choice": -1 if picked is None else options[picked],
                           "answer": answer})
    return [], choice, "answer"
