"""The run store: one folder per run, the single source of truth for analysis.

Layout::

    manifest.json                  what was run, how, with which versions (written atomically)
    pair/part-NNNNN.parquet        pair score rows of chunk N      (schemas: bench/scoretables.py)
    choice/part-NNNNN.parquet      choice score rows of chunk N
    failures/part-NNNNN.parquet    items of chunk N that could not be scored, with the reason
    items/part-NNNNN.parquet       the item ids chunk N covers, with the frame indices each clip was scored on

A chunk's four files are written under temporary names and renamed in place; a chunk counts only when all four
exist, so a run killed at any moment resumes without losing or repeating an item (half-written chunks are removed).
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from bench.items import ItemSet
from bench.scoretables import CHOICE_COLUMNS, FAILURE_COLUMNS, PAIR_COLUMNS, choice_frame, failure_frame, pair_frame

TABLES = ("pair", "choice", "failures", "items")
MANIFEST = "manifest.json"
# Manifest entries that must agree for a run to be resumed with the same scores.
IDENTITY = ("benchmark", "data_path", "video_root", "loader_options", "adapter", "model", "revision", "measure",
            "dtype", "frame_policy", "prompt", "seed", "options")


@dataclass
class Run:
    """A stored run: its folder, manifest and score tables."""

    path: Path
    manifest: dict
    pair: pd.DataFrame
    choice: pd.DataFrame
    failures: pd.DataFrame
    frames: pd.DataFrame | None = None


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
    if not manifest_path.is_file():
        raise FileNotFoundError(f"{folder}: not a run folder (no {MANIFEST})")
    manifest = json.loads(manifest_path.read_text())
    parts = _complete_parts(folder)
    return Run(folder, manifest, _concat(folder, "pair", parts, PAIR_COLUMNS),
               _concat(folder, "choice", parts, CHOICE_COLUMNS), _concat(folder, "failures", parts, FAILURE_COLUMNS),
               _concat(folder, "items", parts, {"item_id": "object", "frames": "object"}))


def load_items(run: Run) -> ItemSet:
    """The items the run scored, reloaded from its data path with its loader options."""
    from bench.loaders import load

    m = run.manifest
    return load(m["benchmark"], m["data_path"], video_root=m.get("video_root"), **(m.get("loader_options") or {}))


class RunWriter:
    """Appends chunks to a run folder; ``done`` holds the item ids already stored (for resuming)."""

    def __init__(self, path: str | Path, manifest: dict[str, Any], *, resume: bool = True,
                 retry_failures: bool = False):
        self.path = Path(path)
        existing = self.path / MANIFEST
        if existing.is_file():
            old = json.loads(existing.read_text())
            if not resume:
                raise FileExistsError(f"{self.path}: a run is already stored here (resume it, or choose another --out)")
            changed = [k for k in IDENTITY if json.dumps(old.get(k), sort_keys=True, default=str)
                       != json.dumps(manifest.get(k), sort_keys=True, default=str)]
            if changed:
                raise ValueError(f"{self.path}: the stored run differs in {changed}; it cannot be resumed with these "
                                 "settings (choose another --out)")
            manifest = {**old, **{k: v for k, v in manifest.items() if k not in ("created",)}}
        for table in TABLES:
            (self.path / table).mkdir(parents=True, exist_ok=True)
        self._clean()
        if retry_failures:
            self._drop_failed_chunks_items()
        self.manifest = {**manifest, "status": "running"}
        _write_json_atomic(existing, self.manifest)
        parts = _complete_parts(self.path)
        self.done: set[str] = set()
        for part in parts:
            self.done.update(pd.read_parquet(self.path / "items" / part)["item_id"])
        self.next_part = 1 + max((int(p[5:10]) for p in parts), default=-1)

    def _clean(self) -> None:
        """Remove temporary files and the files of chunks that were not completed."""
        complete = set(_complete_parts(self.path))
        for table in TABLES:
            for p in (self.path / table).iterdir():
                if p.name.startswith(".") or (p.name.startswith("part-") and p.name not in complete):
                    p.unlink()
        for p in self.path.glob(f".{MANIFEST}.*.tmp"):
            p.unlink()

    def _drop_failed_chunks_items(self) -> None:
        """Make failed items scoreable again: their failure rows and item ids are removed from their chunks."""
        for part in _complete_parts(self.path):
            failures = pd.read_parquet(self.path / "failures" / part)
            if not len(failures):
                continue
            failed = set(failures["item_id"])
            items = pd.read_parquet(self.path / "items" / part)
            self._write_part(part, {
                "pair": pd.read_parquet(self.path / "pair" / part),
                "choice": pd.read_parquet(self.path / "choice" / part),
                "failures": failures.iloc[0:0],
                "items": items[~items["item_id"].isin(failed)],
            })

    def _write_part(self, part: str, tables: dict[str, pd.DataFrame]) -> None:
        tmps = {}
        for table, df in tables.items():
            tmp = self.path / table / f".{part}.{uuid.uuid4().hex}.tmp"
            df.to_parquet(tmp, index=False)
            tmps[table] = tmp
        for table in ("items", "pair", "choice", "failures"):  # "items" first: a chunk is complete with all four
            os.replace(tmps[table], self.path / table / part)

    def write_chunk(self, item_ids: Iterable[str], pair: Iterable[dict], choice: Iterable[dict],
                    failures: Iterable[dict], frames: dict[str, dict[str, list[int]]] | None = None) -> None:
        """Store one chunk: its items' score rows, failures and the frame indices used (``{item: {clip: [...]}}``,
        clip keys like ``"0"`` or ``"0+1"`` for joined clips), all at once."""
        ids = list(item_ids)
        frames = frames or {}
        part = f"part-{self.next_part:05d}.parquet"
        items = pd.DataFrame({"item_id": ids, "frames": [json.dumps(frames.get(i, {})) for i in ids]})
        self._write_part(part, {"pair": pair_frame(pair), "choice": choice_frame(choice),
                                "failures": failure_frame(failures), "items": items})
        self.next_part += 1
        self.done.update(ids)

    def finish(self, **extra: Any) -> None:
        """Mark the run complete (with any extra manifest entries, e.g. timings)."""
        self.manifest = {**self.manifest, **extra, "status": "complete"}
        _write_json_atomic(self.path / MANIFEST, self.manifest)
