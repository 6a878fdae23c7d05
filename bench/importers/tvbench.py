"""TVBench's results file as the official notebook saves it (``infer.ipynb`` cell 11): ``{"acc_dict": {task: [right,
asked]}, "res_list": [{"pred": ..., "gt": ...}]}``, the answers in the order the questions were asked.

The questions are matched by position, as the notebook asked them: task by task in ``acc_dict``'s order (the order it
met them, its ``data_list`` order), each task's questions in its file's order; every ``gt`` must be the question's
answer as ``vqa_dataset.py::qa_template`` writes it (``(B) <answer>``, L136-141), every task of ``acc_dict`` a task of
the loaded data with as many questions, and ``acc_dict``'s counts what ``check_ans`` gives on ``res_list``.

An answer is right when ``check_ans`` (``vqa_dataset.py`` L163-178) accepts it: the first space-separated word of the
lower-cased answer, full stops removed, is a substring of the true option's ``(b)``, or contains it. So "(b)", "b",
"(b" and "b)" name option B, and an answer whose first word is empty, "(" or ")" is accepted for any question (the
notebook prepends "(" to every answer, so an empty reply counts right): such answers are stored as the true option,
as the official count has them. A rejected answer is stored as the option its first word names ("(c)", "c", "c.",
"(c"), else as unparsed (-1): it counts 0 and stays in ``n``.
"""

from __future__ import annotations

import math
import re
import string
from pathlib import Path
from typing import Sequence

from bench.items import Item
from bench.loaders.common import LoaderError, read_json
from bench.loaders.tvbench import TASKS

OPTION_WORD = re.compile(r"^\(?(?P<letter>[a-z])\)?$")


def check_ans(pred: str, gt: str) -> bool:
    """Whether the official notebook counts ``pred`` right for the answer ``gt`` (``vqa_dataset.py`` L163-178)."""
    pred_option = pred.lower().split(" ")[0]
    gt_option = gt.lower().split(" ")[0]
    return pred_option.replace(".", "") in gt_option or gt_option in pred_option


def _gt(truth: int, options: Sequence[str]) -> str:
    """``(<letter>) <answer>``, as ``qa_template`` writes the true option of a question (L136-141)."""
    return f"({string.ascii_uppercase[truth]}) {options[truth]}"


def gt_of(item: Item) -> str:
    """The ``gt`` the notebook writes for an item."""
    return _gt(item.truth[0][0], item.texts)


def named_option(pred: str, n: int) -> int:
    """The option the first word of ``pred`` names ("(c)", "c", "c.", "(c"), or -1."""
    found = OPTION_WORD.match(pred.lower().split(" ")[0].replace(".", ""))
    index = string.ascii_lowercase.index(found["letter"]) if found else -1
    return index if index < n else -1


def read_option(pred: str, truth: int, options: Sequence[str]) -> int:
    """The option an answer counts as, for a question showing ``options`` whose ``truth``-th is true: that one when
    ``check_ans`` accepts the answer, else the option its first word names (:func:`named_option`), -1 for none."""
    if check_ans(pred, _gt(truth, options)):
        return truth
    named = named_option(pred, len(options))
    return named if named != truth else -1


def parse_choice(answer: str, options: Sequence[str], *, item: Item, order: Sequence[int], **_: object) -> int:
    """A generated answer (an API model's) read as the official notebook reads one (:func:`read_option`), the
    question's options shown in ``order``."""
    return read_option(answer, list(order).index(item.truth[0][0]), options)


def _results(path: Path) -> tuple[dict, list]:
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("acc_dict"), dict) or \
            not isinstance(data.get("res_list"), list):
        raise LoaderError(path, None, "expected the official notebook's results: an object with acc_dict (task -> "
                                      "[right, asked]) and res_list ([{pred, gt}])")
    return data["acc_dict"], data["res_list"]


def import_tvbench(items: Sequence[Item], files: Sequence[Path], **_: object) -> tuple[list, list, str]:
    """The notebook's results files -> choice rows (options in the file's order), read by ``check_ans``."""
    by_task: dict[str, list[Item]] = {}
    for it in items:
        by_task.setdefault(it.subset, []).append(it)
    choice, seen = [], set()
    for path in map(Path, files):
        acc_dict, res_list = _results(path)
        position = 0
        for task, counts in acc_dict.items():
            where = f"acc_dict[{task!r}]"
            if task not in TASKS:
                raise LoaderError(path, where, f"unknown task; expected one of {list(TASKS)}")
            if not isinstance(counts, list) or len(counts) != 2 or not all(isinstance(c, int) for c in counts):
                raise LoaderError(path, where, f"expected [right, asked], got {counts!r}")
            questions = by_task.get(task, [])
            if counts[1] != len(questions):
                raise LoaderError(path, where, f"{counts[1]} questions asked; the loaded data has {len(questions)} "
                                               f"of {task}")
            if task in seen:
                raise LoaderError(path, where, f"{task} is answered twice")
            seen.add(task)
            right = 0
            for item, entry in zip(questions, res_list[position:position + counts[1]]):
                place = f"res_list[{position}]"
                position += 1
                if not isinstance(entry, dict) or not isinstance(entry.get("pred"), str) or \
                        not isinstance(entry.get("gt"), str):
                    raise LoaderError(path, place, f"expected {{pred, gt}} strings, got {entry!r:.120}")
                if entry["gt"] != gt_of(item):
                    raise LoaderError(path, place, f"gt {entry['gt']!r} is not {item.item_id}'s answer "
                                                   f"{gt_of(item)!r}: the file answers other questions, or in "
                                                   "another order")
                chosen = read_option(entry["pred"], item.truth[0][0], item.texts)
                right += chosen == item.truth[0][0]
                choice.append({"item_id": item.item_id, "axis": "text", "query": 0,
                               "options": list(range(len(item.texts))), "logits": [math.nan] * len(item.texts),
                               "choice": chosen, "answer": entry["pred"]})
            if position > len(res_list):
                raise LoaderError(path, "res_list", f"{len(res_list)} answers; acc_dict asks {position}")
            if right != counts[0]:
                raise LoaderError(path, where, f"acc_dict counts {counts[0]} right; check_ans accepts {right} of "
                                               "res_list's answers")
        if position != len(res_list):
            raise LoaderError(path, "res_list", f"{len(res_list)} answers; acc_dict accounts for {position}")
    return [], choice, "answer"
