"""The kept probes: ``probes.parquet`` in the data home, append-only, one row per text probed (model, clip, text,
control, score, time, and the family, frame policy and prompt that made it).

``probes.parquet`` is a folder of Parquet parts (one per probe, written under a temporary name and renamed in
place), read as one table: appending never rewrites what is there, a probe killed mid-write leaves nothing half
written, and the table reads back after a restart.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Sequence

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from bench.paths import data_home

PROBES = "probes.parquet"
SCHEMA = pa.schema([("model", pa.string()), ("family", pa.string()), ("video", pa.string()),
                    ("start", pa.float64()), ("end", pa.float64()), ("text", pa.string()), ("control", pa.string()),
                    ("frames", pa.string()), ("prompt", pa.string()), ("score", pa.float64()),
                    ("time", pa.timestamp("us", tz="UTC"))])


def probes_path(home: str | Path | None = None) -> Path:
    """``<data home>/probes.parquet`` (or under ``home``)."""
    return (Path(home) if home is not None else data_home()) / PROBES


def append_probes(rows: Sequence[dict], path: str | Path | None = None) -> Path:
    """Add ``rows`` (:meth:`bench.scoring.probe.Probe.records`) as one new part; returns the part's path."""
    folder = Path(path) if path is not None else probes_path()
    folder.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(list(rows), schema=SCHEMA)
    name = f"part-{pd.Timestamp.now('UTC').strftime('%Y%m%dT%H%M%S%f')}-{uuid.uuid4().hex[:8]}.parquet"
    tmp = folder / f".{name}.tmp"
    pq.write_table(table, tmp)
    os.replace(tmp, folder / name)
    return folder / name


def read_probes(path: str | Path | None = None) -> pd.DataFrame:
    """Every kept probe, oldest first (an empty table with the columns when none was kept)."""
    folder = Path(path) if path is not None else probes_path()
    parts = sorted(folder.glob("part-*.parquet")) if folder.is_dir() else []
    if not parts:
        return SCHEMA.empty_table().to_pandas()
    table = pa.concat_tables([pq.read_table(p, schema=SCHEMA) for p in parts])
    return table.to_pandas().sort_values("time", kind="stable").reset_index(drop=True)
