"""Importing released scores and closed models' answers into run stores (the same tables as our own scorers).

Each benchmark's spec names its import formats (``BenchmarkSpec.importers``): ``format -> "module:function"`` with
``function(items, files, **options) -> (pair rows, choice rows, measure)``. :func:`import_run` stores the rows as a run
with the items it scored, exactly like ``foilbench score`` does.

- ``answers`` (every benchmark): a CSV or JSONL of ``item_id, text, answer`` (Yes/No per caption, e.g. a closed
  model's entailment answers). ``text`` is the index of the text among the item's texts (0 = the first, the caption
  where the benchmark lists it first) or the text itself, matched exactly. Answers are read as VELOCITI's
  ``gemini/eval.py`` reads a model's response: "Yes" in it and "No" not -> Yes, the reverse -> No; no answer (empty,
  ``None``, ``null``, ``NaN``: what ``eval.py`` writes when the API answers nothing) and anything else are unparsed
  (NaN score, answer kept; an empty one stored as "None"), never "No".

A run imported this way is the items its files answer (a ViLMA item with its proficiency twin): the benchmark's
other items are not part of it and never count as failures (the manifest records how many: ``not_answered``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

from bench.config import DataSource, Manifest, versions
from bench.items import Item
from bench.loaders.common import LoaderError, read_csv_rows, read_jsonl
from bench.registry import names, resolve, spec
from bench.store import RunWriter
from bench.store.run import MANIFEST


NO_ANSWER = frozenset({"", "none", "null", "nan"})


def parse_yes_no(answer: str) -> float:
    """A model's response: 1.0 for Yes, 0.0 for No (``gemini/eval.py``: "Yes" in it and "No" not, or the reverse),
    NaN when it is neither or both, or no answer at all (:data:`NO_ANSWER`: ``None`` holds "No" but is no answer)."""
    if str(answer).strip().lower() in NO_ANSWER:
        return math.nan
    yes, no = "Yes" in answer, "No" in answer
    return 1.0 if yes and not no else 0.0 if no and not yes else math.nan


def parse_letter(answer: str, options: Sequence[str], **_: object) -> int:
    """The option a response names by its first character, case-insensitive (Vinoground ``get_score_all.py``:
    ``response[:len(GT)].lower() == GT.lower()``; TemporalBench ``get_qa_acc.py`` L49 the same): its index in letter
    order, -1 when it names none."""
    letter = str(answer)[:1].upper()
    return "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:len(options)].find(letter) if letter.strip() else -1


def parse_vitatecs_option(answer: str, options: Sequence[str], **_: object) -> int:
    """The option of a two-option answer as lmms-eval's VITATECS task reads it (``tasks/vitatecs/utils.py::
    vitatecs_process_results``): the one option whose text (lower-cased, without its final ".") the lower-cased answer
    contains, else the answer "A" / "B", or one starting with "A." / "A)" / "(A)"; -1 otherwise, where lmms-eval asks a
    GPT-3.5 judge (not run here). lmms-eval compares the text after "(A)" with the letter, which never matches; the
    letter inside is read here."""
    text = str(answer)
    found = [t.removesuffix(".").lower() in text.lower() for t in options]
    if sum(found) == 1:
        return found.index(True)
    for letter, index in (("A", 0), ("B", 1)):
        if text == letter or text.startswith((f"{letter}.", f"{letter})", f"({letter})")):
            return index
    return -1


def stored_answer(value: object) -> str:
    """An answer as the run stores it: its text, or "None" (``gemini/eval.py``'s mark) when there is none, so that it
    counts as an unparsed answer, not as a missing score."""
    text = "" if value is None else str(value)
    return "None" if not text.strip() else text


def parse_exact_yes_no(answer: str) -> float:
    """An answer already parsed by ``gemini/eval.py`` (``pos_pred`` / ``neg_pred``): 1.0 for exactly "Yes", 0.0 for
    exactly "No", NaN for anything else ("error", "None", "blocked", "idk", empty), as
    ``gemini/closed_model_metrics.py`` keeps only answers equal to "Yes" or "No"."""
    return {"Yes": 1.0, "No": 0.0}.get(str(answer), math.nan)


def text_index(item: Item, value: object, path: Path, where: str) -> int:
    """The text an answers row names: an index into the item's texts, or one of its texts verbatim."""
    text = str(value)
    if text.strip().lstrip("-").isdigit():
        index = int(text)
        if not 0 <= index < len(item.texts):
            raise LoaderError(path, where, f"text {index} is outside the item's {len(item.texts)} texts")
        return index
    found = [t for t, candidate in enumerate(item.texts) if candidate == text]
    if len(found) != 1:
        what = "is none of" if not found else f"matches {len(found)} of"
        raise LoaderError(path, where, f"text {text[:80]!r} {what} item {item.item_id!r}'s texts; the text column "
                                       f"holds the text's index (0 to {len(item.texts) - 1}, 0 = the first) or the "
                                       "text itself, exactly")
    return found[0]


def rows(path: Path, columns: Sequence[str]) -> list[tuple[str, dict]]:
    """``(where, row)`` of a CSV or JSONL file, checked to have ``columns``."""
    if path.suffix.lower() == ".jsonl":
        found = [(f"line {n}", r) for n, r in read_jsonl(path)]
        for where, row in found:
            missing = [c for c in columns if c not in row]
            if missing:
                raise LoaderError(path, where, f"missing field(s) {missing}")
        return found
    return [(f"line {n}", r) for n, r in read_csv_rows(path, columns)]


def import_answers(items: Sequence[Item], files: Sequence[Path], **_: object) -> tuple[list, list, str]:
    """``item_id, text, answer`` rows -> entailment pair rows (score 1 / 0 / NaN)."""
    by_id = {it.item_id: it for it in items}
    pair = []
    for path in files:
        for where, row in rows(path, ("item_id", "text", "answer")):
            item = by_id.get(str(row["item_id"]))
            if item is None:
                raise LoaderError(path, where, f"unknown item_id {row['item_id']!r}")
            text = text_index(item, row["text"], path, where)
            answer = stored_answer(row["answer"])
            pair.append({"item_id": item.item_id, "clip": 0, "text": text, "score": parse_yes_no(answer),
                         "answer": answer})
    return pair, [], "answer"


def labelled_path(entry: str | Path) -> tuple[str | None, Path]:
    """``(label, path)`` of a file given as ``PATH`` or ``LABEL=PATH`` (an existing file named with "=" wins)."""
    text = str(entry)
    if Path(text).is_file() or "=" not in text:
        return None, Path(text)
    label, _, path = text.partition("=")
    return label, Path(path)


def formats() -> dict[str, list[str]]:
    """Every import format with the benchmarks that accept it."""
    found: dict[str, list[str]] = {}
    for name in names():
        for fmt in spec(name).importers:
            found.setdefault(fmt, []).append(name)
    return found


def import_run(fmt: str, files: Sequence[str | Path], source: DataSource, out: str | Path, model_name: str,
               *, extra_files: Sequence[str | Path] = (), **options: object) -> Path:
    """Import ``files`` of format ``fmt`` as a run of ``model_name`` on ``source``; returns the run folder.

    ``extra_files`` are files an option names (ViLMA's proficiency results), checked and recorded like ``files``.
    A folder that already holds a run is an error: every file of one run is imported by one call.
    """
    benchmark = spec(source.benchmark)
    if fmt not in benchmark.importers:
        raise ValueError(f"{benchmark.title} imports {', '.join(sorted(benchmark.importers))}, not {fmt!r}")
    paths = [labelled_path(f)[1] for f in (*files, *extra_files)]
    for p in paths:
        if not p.is_file():
            raise FileNotFoundError(f"{p}: no such file")
    if (Path(out) / MANIFEST).is_file():
        raise FileExistsError(f"{out}: a run is already stored here; import every file of a run in one command "
                              "(ViLMA: main results and --proficiency together) or choose another --out")
    items = source.load().items
    given = [Path(f) if labelled_path(f)[0] is None else str(f) for f in files]  # "LABEL=PATH" stays a string
    pair, choice, measure = resolve(benchmark.importers[fmt])(items, given, **options)
    answered = answered_items(items, {r["item_id"] for r in pair} | {r["item_id"] for r in choice})
    if not answered:
        raise ValueError(f"{', '.join(map(str, paths))}: no answer matches an item of the {len(items)} loaded from "
                         f"{source.data_path}: nothing to import")
    main = sum(it.role == "main" for it in items)
    manifest = Manifest.for_source(source, model=model_name, family=f"import:{fmt}", measure=measure,
                                   name=model_name, options={k: v for k, v in options.items()}, versions=versions(),
                                   imported_from=[str(p.resolve()) for p in paths],
                                   extra={"benchmark_items": main,
                                          "not_answered": main - sum(it.role == "main" for it in answered)})
    manifest.n_items = len(answered)
    writer = RunWriter(out, manifest, answered, resume=False)
    writer.write_chunk([it.item_id for it in answered], pair, choice, [])
    writer.finish()
    return Path(out)


def answered_items(items: Sequence[Item], ids: set[str]) -> list[Item]:
    """The items the imported rows answer, in the benchmark's order: each item with a row, and its twin (ViLMA's main
    item and its proficiency test belong together)."""
    return [it for it in items if it.item_id in ids or (it.twin_id is not None and it.twin_id in ids)]


def import_lines(run) -> list[str]:
    """What an imported run (``bench.store.Run``) holds, for the import command: the items answered and not
    answered, and the answers that could not be read."""
    m = run.manifest
    main = sum(it.role == "main" for it in run.items())
    left = m.extra.get("not_answered")
    lines = [f"{main} of the benchmark's {m.extra.get('benchmark_items', main)} items answered"
             + (f"; {left} not answered: not part of this run, not counted" if left else "")]
    if m.measure == "answer" and len(run.pair):
        unread = run.pair[run.pair["score"].isna()]
        if len(unread):
            lines.append(f"{len(unread)} answer(s) read as neither Yes nor No (e.g. {str(unread['answer'].iloc[0])!r}"
                         "): kept as unparsed; metrics counts them and drops their items where the benchmark's "
                         "official script does")
    if m.measure == "answer" and len(run.choice):
        unread = run.choice[run.choice["choice"] == -1]
        if len(unread):
            lines.append(f"{len(unread)} answer(s) read as no option (e.g. {str(unread['answer'].iloc[0])[:80]!r}): "
                         "kept as unparsed; metrics counts them as wrong, or drops them where the benchmark's "
                         "official script does")
    return lines
