"""``foilbench perf store``: a large generated run (no model: the tables are written directly) read as loose chunks and
after compaction, and the time ``foilbench metrics`` takes on it.

The run is VITATECS-shaped (one clip, a caption and a foil per item) with random similarities, written the way the
runner leaves an interrupted run: one small file per table per chunk.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bench.config import Manifest
from bench.items import Clip, Item
from bench.store import RunWriter, read_run
from bench.store.run import TABLES, chunk_name
from bench.store.schema import ARROW_SCHEMAS

ASPECTS = ("Direction", "Intensity", "Sequence", "Localization", "Compositionality", "Type")


def items(n: int) -> list[Item]:
    """``n`` VITATECS-shaped items over 500 videos."""
    return [Item("vitatecs", f"{ASPECTS[i % 6]}/{i}", ASPECTS[i % 6], (Clip(f"MSRVTT/video{i % 500}.mp4"),),
                 (f"a person does thing {i}", f"a person undoes thing {i}"), ((0,),), labels={"source": "MSRVTT"})
            for i in range(n)]


def _tables(ids: list[str], rng: np.random.Generator) -> dict[str, pa.Table]:
    n = len(ids)
    nan = np.full(2 * n, np.nan)
    pair = pa.table({"item_id": np.repeat(ids, 2), "clip": np.zeros(2 * n, np.int64),
                     "text": np.tile(np.array([0, 1], np.int64), n), "score": rng.normal(0.25, 0.05, 2 * n),
                     "logit_yes": nan, "logit_no": nan, "loglik_mean": nan, "n_tokens": nan, "answer": [""] * (2 * n)},
                    schema=ARROW_SCHEMAS["pair"])
    scored = pa.table({"item_id": ids, "frames": [json.dumps({"0": list(range(0, 64, 8))})] * n,
                       "notes": ["[]"] * n, "chunk": np.zeros(n, np.int64), "launch": ["00000000"] * n,
                       "rank": np.zeros(n, np.int64)}, schema=ARROW_SCHEMAS["scored"])
    return {"pair": pair, "choice": ARROW_SCHEMAS["choice"].empty_table(),
            "failures": ARROW_SCHEMAS["failures"].empty_table(), "scored": scored}


def write_run(folder: Path, n: int, chunk_size: int) -> None:
    """A run of ``n`` items whose tables lie in chunks of ``chunk_size`` items, as a killed run leaves them."""
    stored = items(n)
    manifest = Manifest(benchmark="vitatecs", data_path=None, model="generated", measure="similarity",
                        family="contrastive", protocol="similarity", frame_policy={"name": "uniform", "k": 8})
    RunWriter(folder, manifest, stored, chunk_size=chunk_size).close()
    tables = _tables([it.item_id for it in stored], np.random.default_rng(0))
    for c in range(0, n, chunk_size):
        number = c // chunk_size
        for table in TABLES:
            rows = tables[table]
            part = rows.slice(2 * c, 2 * chunk_size) if table == "pair" else rows.slice(c, chunk_size)
            if table == "scored":
                part = part.set_column(3, "chunk", pa.array([number] * part.num_rows, pa.int64()))
            pq.write_table(part, folder / table / chunk_name(number, "00000000", 0))


def _timed(work):
    """``work()``'s result with the wall and CPU seconds it took (CPU counts this process and its children)."""
    def cpu():
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    wall, used = time.perf_counter(), cpu()
    result = work()
    return result, time.perf_counter() - wall, cpu() - used


def measure(n: int = 100_000, chunk_size: int = 8) -> None:
    """Print the times of reading a run left in chunks, compacting it, resuming it, reading it compacted and
    ``foilbench metrics`` on it (wall and CPU seconds: CPU does not count other processes' load)."""
    line = "{:44s} {:7.2f} s wall {:7.2f} s CPU"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "run"
        _, wall, _ = _timed(lambda: write_run(folder, n, chunk_size))
        files = sum(1 for t in TABLES for _ in (folder / t).iterdir())
        print(f"{n} items in {files} chunk files ({chunk_size} items per chunk), written in {wall:.1f} s")
        stored = items(n)
        loose, *loose_time = _timed(lambda: read_run(folder))
        print(line.format("read_run of the loose chunks", *loose_time))
        manifest = loose.manifest
        writer, *took = _timed(lambda: RunWriter(folder, manifest, stored, chunk_size=chunk_size))
        writer.finish()
        print(line.format("open the loose run (compacts it)", *took))
        _, *took = _timed(lambda: RunWriter(folder, manifest, stored, chunk_size=chunk_size).close())
        print(line.format("resume bookkeeping: open the compacted run", *took))
        compacted, *compact_time = _timed(lambda: read_run(folder))
        print(line.format("read_run of the compacted run", *compact_time)
              + f"   ratio {loose_time[0] / compact_time[0]:6.1f}x")
        if len(compacted.pair) != len(loose.pair) or len(compacted.scored) != n:
            raise RuntimeError("compaction changed the rows")
        _, *took = _timed(compacted.items)
        print(line.format("its items (items.parquet)", *took))
        command = [sys.executable, "-m", "bench", "metrics", str(folder)]
        _, *took = _timed(lambda: subprocess.run(command, check=True, capture_output=True))
        print(line.format("foilbench metrics RUN (whole command)", *took))
