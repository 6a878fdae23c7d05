"""Importing released scores and closed models' answers into run stores (the same tables as our own scorers).

Each benchmark's spec names its import formats (``BenchmarkSpec.importers``): ``format -> "module:function"`` with
``function(items, files, **options) -> (pair rows, choice rows, measure)``. :func:`import_run` stores the rows as a run
with the items it scored, exactly like ``foilbench score`` does.

- ``answers`` (every benchmark): a CSV or JSONL of ``item_id, text, answer`` (Yes/No per caption, e.g. a closed
  model's entailment answers); parsed as VELOCITI's ``gemini/closed_model_metrics.py`` does: "Yes" in it and "No"
  not -> Yes, the reverse -> No, anything else unparsed (NaN score, answer kept).
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


def parse_yes_no(answer: str) -> float:
    """1.0 for Yes, 0.0 for No, NaN when the answer is neither or both (VELOCITI's closed-model rule)."""
    yes, no = "Yes" in answer, "No" in answer
    return 1.0 if yes and not no else 0.0 if no and not yes else math.nan


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
            text = int(row["text"])
            if not 0 <= text < len(item.texts):
                raise LoaderError(path, where, f"text {text} is outside the item's {len(item.texts)} texts")
            answer = str(row["answer"])
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
    manifest = Manifest.for_source(source, model=model_name, family=f"import:{fmt}", measure=measure,
                                   name=model_name, options={k: v for k, v in options.items()}, versions=versions(),
                                   imported_from=[str(p.resolve()) for p in paths])
    scored = {r["item_id"] for r in pair} | {r["item_id"] for r in choice}
    manifest.n_items = len(scored)
    writer = RunWriter(out, manifest, items, resume=False)
    writer.write_chunk(sorted(scored), pair, choice, [])
    writer.finish()
    return Path(out)
