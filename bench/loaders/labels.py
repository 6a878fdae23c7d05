"""The ``labels=PATH`` loader option: extra item labels from a CSV joined onto any benchmark's items.

The CSV has an ``item_id`` column (ids exactly as the benchmark's loader names its items) and one column per extra
label, e.g. ``item_id,difficulty``, so ``foilbench metrics RUN --by difficulty`` can break a run down by it. Items
without a row get ``None``; rows naming items that were not loaded (left out by a loader filter such as ViLMA's
validity filter) are counted in the notes; a file none of whose ids was loaded, a missing ``item_id`` column, a
repeated id or a column that would overwrite a label the loader sets is an error.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from bench.items import ItemSet, items_frame
from bench.loaders.common import LoaderError, read_csv_rows

ID = "item_id"


def join_labels(items: ItemSet, path: str | Path) -> ItemSet:
    """``items`` with the label columns of the CSV at ``path`` added to every item (see the module notes)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such labels file (loader option labels=)")
    rows: dict[str, dict[str, str | None]] = {}
    first: dict[str, int] = {}
    for line, row in read_csv_rows(path, (ID,)):
        item_id = row.pop(ID)
        if item_id in rows:
            raise LoaderError(path, f"line {line}", f"duplicate item id {item_id!r} (first at line {first[item_id]})")
        rows[item_id], first[item_id] = {k: v if v != "" else None for k, v in row.items()}, line
    columns = list(next(iter(rows.values())))
    if items.items:
        sample = items.items[0]
        taken = set(items_frame([sample]).columns) - set(sample.labels) | {k for it in items for k in it.labels}
        clash = [c for c in columns if c in taken]
        if clash:
            raise LoaderError(path, "line 1 (header)", f"column(s) {clash} would overwrite what the {items.benchmark} "
                                                       "loader sets; rename them")
    known = items.by_id()
    matched = [i for i in rows if i in known]
    if not matched:
        item_id = next(iter(rows))
        raise LoaderError(path, f"line {first[item_id]}", f"item id {item_id!r} is not an item of {items.source}; "
                                                          f"none of this file's {len(rows)} ids is")
    empty = dict.fromkeys(columns)
    joined = [dataclasses.replace(it, labels={**it.labels, **rows.get(it.item_id, empty)}) for it in items]
    notes = [f"{path.name}: {', '.join(columns)} joined onto {len(matched)} of {len(items)} items"
             + (f"; {len(rows) - len(matched)} rows name items not loaded" if len(matched) < len(rows) else "")]
    return ItemSet(items.benchmark, items.source, joined, items.notes + notes)
