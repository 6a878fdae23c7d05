"""Items as a table, and back: a run stores the items it scored (``items.parquet``), so it can be analysed where the
annotation files are not (a run copied to another machine). Videos are looked up only when a widget plays them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterable

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from bench.items import Clip, Item

ITEM_COLUMNS = ("benchmark", "item_id", "subset", "role", "twin_id", "clips", "texts", "truth", "labels")


def _clip_record(clip: Clip) -> dict:
    return {"path": clip.path, "start": clip.start, "end": clip.end, "unit": clip.unit, "fps": clip.fps,
            "exists": clip.exists}


def items_table(items: Iterable[Item]) -> pd.DataFrame:
    """One row per item; clips, truth and labels as JSON text, texts as a list."""
    rows = [{"benchmark": it.benchmark, "item_id": it.item_id, "subset": it.subset, "role": it.role,
             "twin_id": it.twin_id, "clips": json.dumps([_clip_record(c) for c in it.clips]),
             "texts": list(it.texts), "truth": json.dumps([list(t) for t in it.truth]),
             "labels": json.dumps(dict(it.labels), sort_keys=True, default=_plain)} for it in items]
    return pd.DataFrame(rows, columns=list(ITEM_COLUMNS))


def scored_parts(table: pd.DataFrame | pa.Table) -> list[tuple]:
    """What decides each item's scores, from an :func:`items_table` (or the stored file's table): its id, clips (not
    whether their videos exist), texts and truth; a run is resumed only on items equal in these."""
    if isinstance(table, pa.Table):
        table = table.to_pandas()
    return [(item_id, [{k: v for k, v in c.items() if k != "exists"} for c in json.loads(clips)], list(texts), truth)
            for item_id, clips, texts, truth in zip(table["item_id"], table["clips"], table["texts"], table["truth"])]


def _plain(value):
    """JSON for label values numpy or pandas produced (numbers, arrays)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"label value {value!r} cannot be stored")


def items_from_table(table: pd.DataFrame | pa.Table) -> list[Item]:
    """The items of :func:`items_table` again, equal to the originals. Repeated clip, truth and label records
    (several items on one video, the same truth everywhere) are decoded once."""
    if isinstance(table, pd.DataFrame):
        table = pa.Table.from_pandas(table, preserve_index=False)
    columns = {name: table.column(name).to_pylist() for name in ITEM_COLUMNS}
    clips = _decoded(lambda text: tuple(Clip(**c) for c in json.loads(text)))
    truth = _decoded(lambda text: tuple(tuple(t) for t in json.loads(text)))
    labels = _decoded(json.loads)
    return [Item(benchmark, item_id, subset, clips(c), tuple(texts), truth(t), labels=dict(labels(lab)), role=role,
                 twin_id=twin_id)
            for benchmark, item_id, subset, role, twin_id, c, texts, t, lab in
            zip(*(columns[name] for name in ITEM_COLUMNS))]


def _decoded(decode: Callable[[str], Any]) -> Callable[[str], Any]:
    """``decode`` remembering its results (for immutable results, and label dicts copied by the caller)."""
    memo: dict[str, Any] = {}

    def once(text: str) -> Any:
        found = memo.get(text)
        if found is None:
            found = memo[text] = decode(text)
        return found
    return once


def write_items(path: Path, items: Iterable[Item]) -> None:
    """Write ``items`` to a Parquet file (through a temporary name, so a reader never sees half a file)."""
    tmp = path.with_name(f".{path.name}.tmp")
    items_table(items).to_parquet(tmp, index=False)
    tmp.replace(path)


def read_items(path: Path) -> list[Item]:
    """The items of a file written by :func:`write_items`."""
    return items_from_table(pq.read_table(path))
