"""The run store: one folder per run, the single source of truth for analysis.

Layout::

    manifest.json                  what was run, how, with which versions (written atomically)
    items.parquet                  the items the run was asked to score (so the run needs no annotation files)
    pair/part-NNNNN.parquet        pair score rows of chunk N      (schemas: bench/store/schema.py)
    choice/part-NNNNN.parquet      choice score rows of chunk N
    failures/part-NNNNN.parquet    items of chunk N that could not be scored, with the reason
    scored/part-NNNNN.parquet      the item ids chunk N covers, with the frame indices each clip was scored on and
                                   the frame notes (a clip shorter than the policy asks, a window clipped...)

A chunk's four files are written under temporary names and renamed in place; a chunk counts only when all four
exist, so a run killed at any moment resumes without losing or repeating an item (half-written chunks are removed).
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import pandas as pd

from bench.config import Manifest
from bench.items import Item
from bench.store.items import read_items, write_items
from bench.store.schema import CHOICE_COLUMNS, FAILURE_COLUMNS, PAIR_COLUMNS, choice_frame, failure_frame, pair_frame

TABLES = ("pair", "choice", "failures", "scored")
MANIFEST = "manifest.json"
ITEMS = "items.parquet"


@dataclass
class Run:
    """A stored run: its folder, manifest and score tables."""

    path: Path
    manifest: dict
    pair: pd.DataFrame
    choice: pd.DataFrame
    failures: pd.DataFrame
    frames: pd.DataFrame | None = None

    @property
    def label(self) -> str:
        """The run's short name for tables: the manifest's ``name``, else its folder name."""
        return str(self.manifest.get("name") or Path(str(self.path)).name)

    def items(self) -> list[Item]:
        """The items the run was asked to score: stored in the run folder, or (runs written before items were
        stored) read again from the annotation files its manifest names."""
        stored = Path(self.path) / ITEMS
        if stored.is_file():
            return read_items(stored)
        return Manifest.from_dict(self.manifest).source.load().items


def _write_json_atomic(path: Path, data: dict) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True, default=str))
    os.replace(tmp, path)


def _complete_parts(folder: Path) -> list[str]:
    """Names of the chunks whose files all exist (in each table folder present; ``pair`` must be)."""
    sets = [{p.name for p in (folder / t).glob("part-*.parquet")} for t in TABLES
            if t == "pair" or (folder / t).is_dir()]
    return sorted(set.intersection(*sets))


def _concat(folder: Path, table: str, parts: list[str], columns: dict[str, str]) -> pd.DataFrame:
    frames = [pd.read_parquet(folder / table / p) for p in parts if (folder / table / p).is_file()]
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in columns.items()})
    df = pd.concat(frames, ignore_index=True)
    for column in ("options", "logits"):
        if column in df:
            df[column] = [list(v) for v in df[column]]
    return df


def read_run(path: str | Path) -> Run:
    """A run's manifest and complete chunks; a folder without a manifest is a clear error."""
    folder = Path(path)
    manifest_path = folder / MANIFEST
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such run folder")
    if not manifest_path.is_file():
        raise FileNotFoundError(f"{folder}: not a run folder (no {MANIFEST})")
    manifest = json.loads(manifest_path.read_text())
    parts = _complete_parts(folder)
    return Run(folder, manifest, _concat(folder, "pair", parts, PAIR_COLUMNS),
               _concat(folder, "choice", parts, CHOICE_COLUMNS), _concat(folder, "failures", parts, FAILURE_COLUMNS),
               _concat(folder, "scored", parts, {"item_id": "object", "frames": "object", "notes": "object"}))


class RunWriter:
    """Appends chunks to a run folder; ``done`` holds the item ids already stored (for resuming).

    A new run stores ``items`` beside its manifest; a stored run is resumed only when its manifest's identity
    (:meth:`bench.config.Manifest.identity`) equals the new one.
    """

    def __init__(self, path: str | Path, manifest: Manifest, items: Sequence[Item], *, resume: bool = True,
                 retry_failures: bool = False):
        self.path = Path(path)
        existing = self.path / MANIFEST
        if existing.is_file():
            old = Manifest.from_dict(json.loads(existing.read_text()))
            if not resume:
                raise FileExistsError(f"{self.path}: a run is already stored here (resume it, or choose another --out)")
            theirs, ours = old.identity(), manifest.identity()
            changed = [k for k in ours if theirs.get(k) != ours[k]]
            if changed:
                raise ValueError(f"{self.path}: the stored run differs in {changed}; it cannot be resumed with these "
                                 "settings (choose another --out)")
            manifest.created = old.created
        for table in TABLES:
            (self.path / table).mkdir(parents=True, exist_ok=True)
        self._clean()
        if retry_failures:
            self._drop_failed_chunks_items()
        if not (self.path / ITEMS).is_file():
            write_items(self.path / ITEMS, items)
        self.manifest = manifest
        self.manifest.extra["status"] = "running"
        self._write_manifest()
        parts = _complete_parts(self.path)
        self.done: set[str] = set()
        for part in parts:
            self.done.update(pd.read_parquet(self.path / "scored" / part)["item_id"])
        self.next_part = 1 + max((int(p[5:10]) for p in parts), default=-1)

    def _write_manifest(self) -> None:
        _write_json_atomic(self.path / MANIFEST, self.manifest.to_dict())

    def _clean(self) -> None:
        """Remove temporary files and the files of chunks that were not completed."""
        complete = set(_complete_parts(self.path))
        for table in TABLES:
            for p in (self.path / table).iterdir():
                if p.name.startswith(".") or (p.name.startswith("part-") and p.name not in complete):
                    p.unlink()
        for p in self.path.glob(".*.tmp"):
            p.unlink()

    def _drop_failed_chunks_items(self) -> None:
        """Make failed items scoreable again: their failure rows and item ids are removed from their chunks."""
        for part in _complete_parts(self.path):
            failures = pd.read_parquet(self.path / "failures" / part)
            if not len(failures):
                continue
            failed = set(failures["item_id"])
            scored = pd.read_parquet(self.path / "scored" / part)
            self._write_part(part, {
                "pair": pd.read_parquet(self.path / "pair" / part),
                "choice": pd.read_parquet(self.path / "choice" / part),
                "failures": failures.iloc[0:0],
                "scored": scored[~scored["item_id"].isin(failed)],
            })

    def _write_part(self, part: str, tables: dict[str, pd.DataFrame]) -> None:
        tmps = {}
        for table, df in tables.items():
            tmp = self.path / table / f".{part}.{uuid.uuid4().hex}.tmp"
            df.to_parquet(tmp, index=False)
            tmps[table] = tmp
        for table in ("scored", "pair", "choice", "failures"):  # "scored" first: a chunk is complete with all four
            os.replace(tmps[table], self.path / table / part)

    def write_chunk(self, item_ids: Iterable[str], pair: Iterable[dict], choice: Iterable[dict],
                    failures: Iterable[dict], frames: dict[str, dict[str, list[int]]] | None = None,
                    notes: dict[str, list[str]] | None = None) -> None:
        """Store one chunk: its items' score rows, failures, the frame indices used (``{item: {clip: [...]}}``,
        clip keys like ``"0"`` or ``"0+1"`` for joined clips) and the frame notes (short clips...), all at once."""
        ids = list(item_ids)
        frames, notes = frames or {}, notes or {}
        part = f"part-{self.next_part:05d}.parquet"
        scored = pd.DataFrame({"item_id": ids, "frames": [json.dumps(frames.get(i, {})) for i in ids],
                               "notes": [json.dumps(notes.get(i, [])) for i in ids]})
        self._write_part(part, {"pair": pair_frame(pair), "choice": choice_frame(choice),
                                "failures": failure_frame(failures), "scored": scored})
        self.next_part += 1
        self.done.update(ids)

    def finish(self, **extra: Any) -> None:
        """Mark the run complete (with any extra manifest entries, e.g. timings)."""
        self.manifest.extra.update(extra, status="complete")
        self._write_manifest()
