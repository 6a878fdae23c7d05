"""The run store: one folder per run, the single source of truth for analysis.

Layout::

    manifest.json                     what was run, how, with which versions, by which launches (written atomically)
    items.parquet                     the items the run was asked to score (so the run needs no annotation files)
    writer.lock, ranks.lock           the writing job's locks (bench/store/lock.py); empty when no job writes
    index.json                        the compacted tables and the chunks they absorbed (the commit of a compaction)
    <table>/compact-<gen>.parquet     a compacted table: every row of the chunks it absorbed, in item order
    <table>/part-<chunk>-<launch>-r<rank>.parquet
                                      the rows of one chunk, written by one rank of one launch
    responses.jsonl                   a remote model's responses as they arrived (bench/store/responses.py)

Tables (schemas: bench/store/schema.py): ``pair`` and ``choice`` score rows, ``failures`` (items that could not be
scored, with the reason) and ``scored`` (the items each chunk covers, with the frame indices and frame notes).

A chunk is the items at fixed positions of the item order (chunk ``c`` holds positions ``c * chunk_size`` to
``(c + 1) * chunk_size - 1``; the chunk size is fixed when the run starts), so a resumed run forms the same chunks,
and the same batches, as an uninterrupted one. Its four files are written under temporary names and renamed in place;
it counts only when all four exist. Chunk names carry the launch and the rank, so writers never collide.

A compaction (when a run finishes, when a writer opens a run with loose chunks, and every :data:`COMPACT_EVERY`
chunks while it runs) writes each table as one file,
then commits ``index.json`` naming them and the chunks they absorbed, then deletes those chunks: a reader reads the
indexed files and the complete chunks the index does not name, so it sees every row exactly once at any moment, and a
writer killed anywhere leaves a folder the next one cleans (only while holding the lock: no live writer's file is
touched).
"""

from __future__ import annotations

import json
import os
import re
import socket
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from bench.config import Manifest
from bench.items import Item
from bench.store.items import items_table, read_items, scored_parts, write_items
from bench.store.lock import RankHold, RunLock
from bench.store.schema import ARROW_SCHEMAS, choice_frame, failure_frame, pair_frame

TABLES = ("pair", "choice", "failures", "scored")
MANIFEST = "manifest.json"
ITEMS = "items.parquet"
INDEX = "index.json"
CHUNK = re.compile(r"^part-(\d+)(?:-([0-9a-f]+)-r(\d+))?\.parquet$")
LIST_COLUMNS = ("options", "logits")
COMPACT_EVERY = 256     # loose chunks (four small files each) a running run gathers before rank 0 compacts it


@dataclass
class Run:
    """A stored run: its folder, manifest and tables (``scored``: which items each chunk covered, on which frames)."""

    path: Path
    manifest: Manifest
    pair: pd.DataFrame
    choice: pd.DataFrame
    failures: pd.DataFrame
    scored: pd.DataFrame | None = None
    _items: list[Item] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def label(self) -> str:
        """The run's short name for tables: the manifest's ``name``, else its folder name."""
        return str(self.manifest.name or Path(str(self.path)).name)

    def items(self) -> list[Item]:
        """The items the run was asked to score: stored in the run folder, or (runs written before items were
        stored) read again from the annotation files its manifest names. Read once; each call returns a new list."""
        if self._items is None:
            stored = Path(self.path) / ITEMS
            self._items = read_items(stored) if stored.is_file() else self.manifest.source.load().items
        return list(self._items)


def chunk_name(chunk: int, launch: str, rank: int) -> str:
    """The file name of chunk ``chunk`` written by rank ``rank`` of launch ``launch`` (the same in every table)."""
    return f"part-{chunk:06d}-{launch}-r{rank}.parquet"


def _write_json_atomic(path: Path, data: dict) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True, default=str))
    os.replace(tmp, path)


def read_index(folder: Path) -> dict:
    """The folder's index (``{}`` before its first compaction)."""
    path = folder / INDEX
    return json.loads(path.read_text()) if path.is_file() else {}


def _loose_chunks(folder: Path, index: dict) -> list[str]:
    """Chunks whose files all exist (in each table folder present; ``pair`` must be) and that no compaction
    absorbed, in chunk order."""
    sets = [{n for n in os.listdir(folder / t) if CHUNK.match(n)} for t in TABLES
            if t == "pair" or (folder / t).is_dir()]
    complete = set.intersection(*sets) - set(index.get("absorbed", ()))
    return sorted(complete, key=lambda n: (int(CHUNK.match(n).group(1)), n))


def _arrow(folder: Path, table: str, index: dict, chunks: list[str]) -> pa.Table:
    """One table: its compacted file and the loose chunks, as one Arrow table (columns of the current schema)."""
    schema = ARROW_SCHEMAS[table]
    paths = [str(folder / table / name) for name in chunks]
    if index.get("tables", {}).get(table):
        paths.insert(0, str(folder / table / index["tables"][table]))
    paths = [p for p in paths if os.path.isfile(p)]
    if not paths:
        return schema.empty_table()
    return ds.dataset(paths, schema=schema, format="parquet").to_table()


def _pandas(table: pa.Table) -> pd.DataFrame:
    df = table.to_pandas()
    for column in LIST_COLUMNS:
        if column in df:
            df[column] = table.column(column).to_pylist()
    return df


def _tables(folder: Path) -> tuple[dict, list[str], dict[str, pa.Table]]:
    """The index, the loose chunks read and every table of ``folder``; retried when a compaction replaced files
    while they were read."""
    for attempt in range(5):
        index = read_index(folder)
        try:
            chunks = _loose_chunks(folder, index)
            return index, chunks, {t: _arrow(folder, t, index, chunks) for t in TABLES}
        except OSError:
            if attempt == 4:
                raise
    raise AssertionError("unreachable")


def run_folders(paths: Iterable[str | Path]) -> list[Path]:
    """The run folders that ``paths`` name: a run folder is itself; a folder that is no run but holds run folders
    (such as the demo's ``runs/sample-full``) stands for those, in name order; any other path is kept, so that
    :func:`read_run` says what is wrong with it."""
    found: list[Path] = []
    for path in map(Path, paths):
        inside = sorted(p for p in path.iterdir() if (p / MANIFEST).is_file()) if path.is_dir() else []
        found += inside if inside and not (path / MANIFEST).is_file() else [path]
    return found


def read_manifest(folder: str | Path) -> Manifest:
    """The manifest of the run folder ``folder`` (any version's: see :meth:`bench.config.Manifest.from_dict`)."""
    return Manifest.from_dict(json.loads((Path(folder) / MANIFEST).read_text()))


def read_run(path: str | Path) -> Run:
    """A run's manifest and score tables (compacted and complete chunks); a folder without a manifest is a clear
    error."""
    folder = Path(path)
    manifest_path = folder / MANIFEST
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such run folder")
    if not manifest_path.is_file():
        raise FileNotFoundError(f"{folder}: not a run folder (no {MANIFEST})")
    manifest = read_manifest(folder)
    _, _, tables = _tables(folder)
    return Run(folder, manifest, _pandas(tables["pair"]), _pandas(tables["choice"]), _pandas(tables["failures"]),
               _pandas(tables["scored"]))


def _ranges(numbers: Iterable[int]) -> str:
    """``0-3,8,10-11`` for 0, 1, 2, 3, 8, 10, 11."""
    spans: list[list[int]] = []
    for n in sorted(set(numbers)):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


class ChunkWriter:
    """Writes the chunks of one rank of one launch into a prepared run folder (the leader prepared it: tables
    created, folder cleaned); its chunk names cannot collide with another writer's."""

    def __init__(self, path: str | Path, launch: str, rank: int = 0):
        self.path = Path(path)
        self.launch = launch
        self.rank = rank
        self.hold = RankHold(self.path)
        self.written: set[int] = set()

    def write_chunk(self, chunk: int, item_ids: Iterable[str], pair: Iterable[dict], choice: Iterable[dict],
                    failures: Iterable[dict], frame_indices: dict[str, dict[str, list[int]]] | None = None,
                    notes: dict[str, list[str]] | None = None) -> list[str]:
        """Store chunk ``chunk``: its items' score rows, failures, the frame indices used (``{item: {clip: [...]}}``,
        clip keys like ``"0"`` or ``"0+1"`` for joined clips) and the frame notes, all at once. Returns the ids."""
        if chunk in self.written:
            raise ValueError(f"chunk {chunk} was already written by this writer")
        ids = list(item_ids)
        used, notes = frame_indices or {}, notes or {}
        scored = pd.DataFrame({"item_id": ids, "frames": [json.dumps(used.get(i, {})) for i in ids],
                               "notes": [json.dumps(notes.get(i, [])) for i in ids], "chunk": chunk,
                               "launch": self.launch, "rank": self.rank})
        tables = {"pair": pair_frame(pair), "choice": choice_frame(choice), "failures": failure_frame(failures),
                  "scored": scored}
        name = chunk_name(chunk, self.launch, self.rank)
        tmps = {}
        for table, df in tables.items():
            tmp = self.path / table / f".{name}.{uuid.uuid4().hex}.tmp"
            schema = ARROW_SCHEMAS[table]
            pq.write_table(pa.Table.from_pandas(df, schema=schema, preserve_index=False) if len(df)
                           else schema.empty_table(), tmp)
            tmps[table] = tmp
        for table in TABLES:
            os.replace(tmps[table], self.path / table / name)
        self.written.add(chunk)
        return ids

    def close(self) -> None:
        """Let go of the rank's hold on the folder."""
        self.hold.release()


class RunMismatch(ValueError):
    """A stored run that cannot be resumed: scored with other settings, another model or other items."""


def check_resumable(path: str | Path, manifest: Manifest, items: Sequence[Item], *,
                    unknown: Iterable[str] = ()) -> Manifest | None:
    """Raise :class:`RunMismatch` when the run stored in ``path`` cannot be resumed with ``manifest`` and ``items``:
    its manifest's identity (:meth:`bench.config.Manifest.identity`) or its stored items differ. Identity fields in
    ``unknown`` are not compared (the runner checks before the model loads, when the model's revision may not be
    known yet). Returns the stored manifest, or None when no run is stored there."""
    path = Path(path)
    stored = read_manifest(path) if (path / MANIFEST).is_file() else None
    if stored is not None:
        theirs, ours = stored.identity(), manifest.identity()
        changed = [k for k in ours if k not in set(unknown) and theirs.get(k) != ours[k]]
        if changed:
            raise RunMismatch(f"{path}: the stored run differs in {changed}; it cannot be resumed with these settings "
                              "(choose another --out)")
    if (path / ITEMS).is_file():
        stored_items = pq.read_table(path / ITEMS, columns=["item_id", "clips", "texts", "truth"])
        if scored_parts(stored_items) != scored_parts(items_table(items)):
            raise RunMismatch(f"{path}: the items differ from those the run stored (were the annotation files "
                              "changed?); choose another --out")
    return stored


class RunWriter:
    """The leader's writer: locks the run folder, checks that a stored run may be resumed, cleans and compacts what
    an earlier writer left, records the launch, writes its own chunks and, at :meth:`finish`, compacts the run.

    ``done`` holds the item ids already stored; ``absorbed`` the chunks its compactions absorbed. A new run stores
    ``items`` beside its manifest; a stored run is resumed only when its manifest's identity
    (:meth:`bench.config.Manifest.identity`) equals the new one and its items are the same
    (:func:`~bench.store.items.scored_parts`), with the chunk size it started with. ``lock`` is an
    already held :class:`~bench.store.lock.RunLock` (taken early, before a model loads), else one is taken here.
    ``notes`` say what was taken over or kept.
    """

    def __init__(self, path: str | Path, manifest: Manifest, items: Sequence[Item], *, resume: bool = True,
                 retry_failures: bool = False, chunk_size: int = 32, ranks: Sequence[dict] | None = None,
                 lock: RunLock | None = None):
        self.path = Path(path)
        self.lock = lock or RunLock.acquire(self.path)
        self.notes = [self.lock.note] if self.lock.note else []
        self.chunks: ChunkWriter | None = None
        self.absorbed: list[str] = []
        try:
            self._open(manifest, items, resume, retry_failures, chunk_size, list(ranks or [{}]))
        except BaseException:
            self.close()
            raise

    def _open(self, manifest: Manifest, items: Sequence[Item], resume: bool, retry_failures: bool, chunk_size: int,
              ranks: list[dict]) -> None:
        launches: list[dict] = []
        if not resume and (self.path / MANIFEST).is_file():
            raise FileExistsError(f"{self.path}: a run is already stored here (resume it, or choose another --out)")
        stored = check_resumable(self.path, manifest, items)
        if stored is not None:
            manifest.created = stored.created
            launches = list(stored.extra.get("launches", []))
            kept = stored.extra.get("chunk_size")
            if kept and kept != chunk_size:
                self.notes.append(f"{self.path}: keeping the run's chunk size {kept} (asked {chunk_size}), so that "
                                  "its chunks stay where they are")
                chunk_size = kept
        self.chunk_size = chunk_size
        self.order = [it.item_id for it in items]
        for table in TABLES:
            (self.path / table).mkdir(parents=True, exist_ok=True)
        if not (self.path / ITEMS).is_file():
            write_items(self.path / ITEMS, items)
        self._clean()
        scored = self.compact(drop_failed=retry_failures)
        self.done: set[str] = set(scored.column("item_id").to_pylist())
        self.launch = uuid.uuid4().hex[:8]
        launches.append({"id": self.launch, "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                         "world_size": len(ranks), "ranks": ranks})
        self.manifest = manifest
        self.manifest.extra.update(status="running", chunk_size=chunk_size, world_size=len(ranks), launches=launches)
        self._write_manifest()
        self.chunks = ChunkWriter(self.path, self.launch, 0)

    def _write_manifest(self) -> None:
        _write_json_atomic(self.path / MANIFEST, self.manifest.to_dict())

    def _clean(self) -> None:
        """Remove temporary files, chunks that were not completed or were already absorbed by a compaction, and
        compacted files the index does not name (a compaction killed before its commit)."""
        index = read_index(self.path)
        complete = set(_loose_chunks(self.path, index))
        compacted = set(index.get("tables", {}).values())
        for table in TABLES:
            for name in os.listdir(self.path / table):
                stale = (name.startswith(".") or (CHUNK.match(name) and name not in complete)
                         or (name.startswith("compact-") and name not in compacted))
                if stale:
                    (self.path / table / name).unlink()
        for p in self.path.glob(".*.tmp"):
            p.unlink()

    def compact(self, drop_failed: bool = False) -> pa.Table:
        """Merge the compacted tables and the loose chunks into one file per table, in item order; with
        ``drop_failed`` the failed items are removed (so that they are scored again). Returns the ``scored``
        table. Safe while other ranks write: only the complete chunks it read are absorbed."""
        index, chunks, tables = _tables(self.path)
        if not chunks and not drop_failed:
            return tables["scored"]
        if drop_failed:
            failed = tables["failures"].column("item_id")
            tables = {t: tab.filter(pc.invert(pc.is_in(tab.column("item_id"), value_set=failed)))
                      for t, tab in tables.items()}
        order = pa.array(self.order, pa.string())
        for table, tab in tables.items():
            position = pc.fill_null(pc.index_in(tab.column("item_id"), value_set=order), len(self.order))
            tables[table] = tab.take(np.argsort(position.to_numpy(zero_copy_only=False), kind="stable"))
        generation = uuid.uuid4().hex[:8]
        names = {}
        for table, tab in tables.items():
            name = f"compact-{generation}.parquet"
            tmp = self.path / table / f".{name}.tmp"
            pq.write_table(tab, tmp)
            os.replace(tmp, self.path / table / name)
            names[table] = name
        _write_json_atomic(self.path / INDEX, {"generation": generation, "tables": names, "absorbed": chunks,
                                               "rows": {t: tab.num_rows for t, tab in tables.items()}})
        self.absorbed += chunks
        for table in TABLES:
            for name in chunks:
                (self.path / table / name).unlink(missing_ok=True)
            old = index.get("tables", {}).get(table)
            if old and old != names[table]:
                (self.path / table / old).unlink(missing_ok=True)
        return tables["scored"]

    def compact_if_many(self) -> None:
        """Compact when :data:`COMPACT_EVERY` loose chunks have gathered (a long run stays quick to read and to
        resume)."""
        if sum(1 for n in os.listdir(self.path / "scored") if CHUNK.match(n)) >= COMPACT_EVERY:
            self.compact()

    def chunk_of(self, item_id: str) -> int:
        """The chunk an item belongs to (its position in the item order divided by the chunk size)."""
        if item_id not in self.order:
            raise ValueError(f"{item_id!r} is not among the run's items")
        return self.order.index(item_id) // self.chunk_size

    def write_chunk(self, item_ids: Iterable[str], pair: Iterable[dict], choice: Iterable[dict],
                    failures: Iterable[dict], frame_indices: dict[str, dict[str, list[int]]] | None = None,
                    notes: dict[str, list[str]] | None = None, *, chunk: int | None = None) -> None:
        """Store one chunk (see :meth:`ChunkWriter.write_chunk`); ``chunk`` defaults to the chunk of its first
        item."""
        ids = list(item_ids)
        if chunk is None:
            chunk = self.chunk_of(ids[0]) if ids else 0
        self.done.update(self.chunks.write_chunk(chunk, ids, pair, choice, failures, frame_indices, notes))

    def finish(self, expected: Iterable[str] | None = None, **extra: Any) -> None:
        """Compact the run, record which rank of which launch scored each chunk, mark the run complete (with any
        extra manifest entries, e.g. timings; "incomplete" when an ``expected`` item is not stored) and release the
        lock."""
        scored = self.compact()
        self.done = set(scored.column("item_id").to_pylist())
        if expected is not None and not self.done.issuperset(expected):
            extra.setdefault("status", "incomplete")
        by_launch: dict[str, dict[int, list[int]]] = {}
        for launch, rank, chunk in zip(*(scored.column(c).to_pylist() for c in ("launch", "rank", "chunk"))):
            if launch is not None:
                by_launch.setdefault(launch, {}).setdefault(rank, []).append(chunk)
        for entry in self.manifest.extra["launches"]:
            found = by_launch.get(entry["id"], {})
            entry["chunks"] = {str(rank): _ranges(found[rank]) for rank in sorted(found)}
        self.manifest.extra.update({"status": "complete", **extra})
        self._write_manifest()
        self.close()

    def close(self) -> None:
        """Release the lock and the rank hold (idempotent; the kernel also does it when the process dies)."""
        if self.chunks is not None:
            self.chunks.close()
        self.lock.release()


def rank_info(device: str | None = None) -> dict:
    """What the manifest records about one rank: its host and device."""
    return {"host": socket.gethostname(), "device": device}
