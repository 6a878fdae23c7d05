"""TempCompass' prediction files as released: ``predictions/<model>/<task>.json``, read with the official answer rules.

A file maps each video to its aspects, each a list of ``{question, answer, prediction}`` (``response`` where there is
no ``prediction``, as ``eval_<task>.py`` L23-24 reads it) in the order of ``questions/<task>.json``; the task is the
file's name. Every question must be the benchmark's (its answer, and its first line, checked). A prediction is read
as the official script reads it after ``.replace('</s>', '').strip()`` (L31 of each), with ``--disable_llm``:

- multi-choice (``eval_multi-choice.py`` L35-42): the whole answer, a bare letter A-D, or a prediction starting with
  ``A.`` / ``A)`` (to D) gives a letter: right when it is the answer's first character;
- yes/no (``eval_yes_no.py`` L10-18, L44-46): a prediction starting with "yes" / "no", in any case, is Yes / No
  ("None of them" reads as No, as there);
- caption matching (``eval_caption_matching.py`` L18-37): a prediction equal to an option line, its sentence (also
  after ``") "``), its name or the name's last word (also without full stops) matches it, the last such rule winning;
  right when what matched is a form of the answer;
- captioning (``eval_captioning.py``): no rule reads a caption; ChatGPT answers a multi-choice question from it.

What the rules read becomes a choice row (multi-choice, caption matching, captioning: the options in the file's
order; the chosen option, -1 when nothing matched, the official rules gave no letter that names an option, or the
task is captioning) or a pair row (yes/no: score 1 / 0, NaN when nothing matched). Offline nothing asks ChatGPT: an
answer the rules cannot match counts 0 and stays in ``n``, as ``--disable_llm`` does; the raw prediction is kept.
"""

from __future__ import annotations

import math
import string
from pathlib import Path
from typing import Sequence

from bench.importers.common import stored_answer
from bench.items import Item
from bench.loaders.common import LoaderError, read_json
from bench.loaders.tempcompass import ASPECTS, INFORMATION, TASKS

LETTERS = ("A", "B", "C", "D")  # eval_multi-choice.py L37-42 reads these four only


def cleaned(prediction: str) -> str:
    """A prediction as every ``eval_<task>.py`` reads it (L31): ``</s>`` removed, then stripped."""
    return prediction.replace("</s>", "").strip()


def read_multi_choice(prediction: str, answer: str) -> str | None:
    """The letter the official rules read from a (cleaned) prediction, or None (``eval_multi-choice.py`` L35-42)."""
    if prediction == answer:
        return answer[0]
    if prediction in LETTERS:
        return prediction
    if any(prediction.startswith(f"{letter}.") for letter in LETTERS):
        return prediction.split(".")[0]
    if any(prediction.startswith(f"{letter})") for letter in LETTERS):
        return prediction.split(")")[0]
    return None


def read_yes_no(prediction: str) -> str | None:
    """"yes", "no" or None (``eval_yes_no.py`` L10-18)."""
    lowered = prediction.lower()
    return "yes" if lowered.startswith("yes") else "no" if lowered.startswith("no") else None


def _forms(line: str) -> tuple[str, str, str, str]:
    """An option line, its sentence, its name and the name's last word, as ``eval_rule`` splits them (L20-22)."""
    name = line.split(": ")[0]
    short = name.replace("Sentence ", "").replace("Option ", "").replace("Caption ", "")
    return line, line.split(": ")[1], name, short


def read_caption_matching(prediction: str, lines: Sequence[str]) -> str | None:
    """What ``eval_rule`` (``eval_caption_matching.py`` L18-35) matches a (cleaned) prediction with among a question's
    option ``lines``: an option line, a sentence or a name; None when nothing matches. Later rules override earlier
    ones, as there."""
    forms = [_forms(line) for line in lines]
    found = None
    for line, _, _, _ in forms:
        if line == prediction:
            found = line
    for _, sentence, _, _ in forms:
        if sentence == prediction or (") " in prediction and sentence == prediction.split(") ")[1]):
            found = sentence
    for name in [f[2] for f in forms] + [f[3] for f in forms]:
        if name in (prediction, prediction.replace(".", "")):
            found = name
    return found


def caption_matching_rating(found: str, answer: str) -> int:
    """``eval_rule``'s rating of what it matched (L37)."""
    return int(found in (answer, answer.split(":")[0], answer.split(": ")[1], answer.split(": ")[0].split()[1]))


def _choice(task: str, prediction: str, answer: str, lines: Sequence[str], target: int) -> int:
    """The option a (cleaned) prediction names among a question's option ``lines`` as the official rules of ``task``
    read it (multi-choice, caption_matching); ``answer``: the true line, the ``target``-th. -1: none, or a letter that
    names no option."""
    if task == "multi-choice":
        letter = read_multi_choice(prediction, answer)
        index = string.ascii_uppercase.find(letter) if letter else -1
        return index if 0 <= index < len(lines) else -1
    found = read_caption_matching(prediction, lines)
    if found is None:
        return -1
    if caption_matching_rating(found, answer):
        return target
    return next((k for k, line in enumerate(lines) if k != target and found in _forms(line)), -1)


def parse_yes_no(answer: str) -> float:
    """A generated Yes/No answer (an API model's) read as ``eval_yes_no.py`` reads it: 1.0 (yes), 0.0 (no), else
    NaN."""
    said = read_yes_no(cleaned(answer))
    return math.nan if said is None else float(said == "yes")


def parse_choice(answer: str, options: Sequence[str], *, item: Item, order: Sequence[int], **_: object) -> int:
    """A generated answer (an API model's) to a multi-choice or caption-matching question, asked with ``options`` (the
    item's texts in ``order``), read as the official rules read a prediction of the question as shown: its lines
    ``A. <text>`` (multi-choice) or ``<name>: <text>`` (caption matching, names in place); the index of the option
    named, -1 for none."""
    task = item.labels["format"]
    if task == "caption_matching":
        lines = [f"{name}: {text}" for name, text in zip(item.labels["option_names"], options)]
    else:
        lines = [f"{letter}. {text}" for letter, text in zip(string.ascii_uppercase, options)]
    target = list(order).index(item.truth[0][0])
    return _choice(task, cleaned(answer), lines[target], lines, target)


def _record(record: object, path: Path, where: str) -> tuple[str, str, str | None, str]:
    """(question, answer, cleaned prediction or None, raw prediction) of one prediction record."""
    if not isinstance(record, dict) or "question" not in record or "answer" not in record:
        raise LoaderError(path, where, f"expected an object with question, answer and prediction, got {record!r:.120}")
    key = "prediction" if "prediction" in record else "response" if "response" in record else None
    if key is None:
        raise LoaderError(path, where, "no 'prediction' (or 'response') field")
    raw = record[key]
    if raw is not None and not isinstance(raw, str):
        raise LoaderError(path, where, f"{key!r} must be a string or null, got {type(raw).__name__}")
    return str(record["question"]), str(record["answer"]), None if raw is None else cleaned(raw), stored_answer(raw)


def _check(item: Item, task: str, question: str, answer: str, path: Path, where: str) -> None:
    """A prediction record must ask the item's question: its first line (yes/no: all of it) and the answer the
    official script rates against (captioning: its information lines; ``eval_captioning.py`` L113-115 rates against
    the multi-choice question's answer, not the record's, which some released files hold from older questions)."""
    stem = question if task == "yes_no" else question.split("\n")[0]
    if task == "captioning":
        same = [m["text"] for m in map(INFORMATION.match, question.split("\n")) if m] == list(item.texts)
    else:
        same = answer == item.labels["answer"]
    if stem != item.labels["question"] or not same:
        raise LoaderError(path, where, f"not the benchmark's question {item.item_id} (its answer is "
                                       f"{item.labels['answer']!r}); was the file made from other questions/?")


def import_tempcompass(items: Sequence[Item], files: Sequence[Path], **_: object) -> tuple[list, list, str]:
    """Prediction files ``<task>.json`` -> choice rows (multi-choice, caption matching, captioning) and pair rows
    (yes/no), read by the official rules (module notes)."""
    by_id = {it.item_id: it for it in items}
    pair, choice, seen = [], [], set()
    for path in map(Path, files):
        task = path.stem
        if task not in TASKS:
            raise LoaderError(path, None, f"name the file after its task, as released (predictions/<model>/<task>.json"
                                          f"): one of {', '.join(t + '.json' for t in TASKS)}")
        data = read_json(path)
        if not isinstance(data, dict):
            raise LoaderError(path, None, f"expected an object of videos, got {type(data).__name__}")
        for video, aspects in data.items():
            if not isinstance(aspects, dict):
                raise LoaderError(path, f"key {video!r}", "expected an object of aspects")
            for aspect, records in aspects.items():
                if aspect not in ASPECTS or not isinstance(records, list):
                    raise LoaderError(path, f"key {video!r}, aspect {aspect!r}", f"expected a list of predictions "
                                                                                 f"under one of {list(ASPECTS)}")
                for n, record in enumerate(records):
                    where = f"key {video!r}, aspect {aspect!r}, question {n}"
                    item_id = f"{task}/{video}/{aspect}/{n}"
                    item = by_id.get(item_id)
                    if item is None:
                        raise LoaderError(path, where, f"no such question in the loaded TempCompass ({item_id})")
                    if item_id in seen:
                        raise LoaderError(path, where, f"{item_id} is answered twice (two files of one task?)")
                    seen.add(item_id)
                    question, answer, prediction, raw = _record(record, path, where)
                    _check(item, task, question, answer, path, where)
                    if task == "yes_no":
                        score = math.nan if prediction is None else parse_yes_no(prediction)
                        pair.append({"item_id": item_id, "clip": 0, "text": 0, "score": score, "answer": raw})
                    else:
                        chosen = -1 if prediction is None or task == "captioning" else _choice(
                            task, prediction, item.labels["answer"], question.split("\n")[1:], item.truth[0][0])
                        choice.append({"item_id": item_id, "axis": "text", "query": 0,
                                       "options": list(range(len(item.texts))), "logits": [math.nan] * len(item.texts),
                                       "choice": chosen, "answer": raw})
    return pair, choice, "answer"
