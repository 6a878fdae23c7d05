"""``foilbench perf score --ranks N``: scoring throughput of N torchrun ranks against one rank.

Every rank runs one thread (``OMP_NUM_THREADS=1``, one decoding thread), on CPU here and on its own GPU where there
are GPUs. The set is a VITATECS file of many items over the sample suite's videos, large enough that scoring outweighs
starting the ranks; throughput counts the items over the scoring time the run records (rank 0's clock from the first
chunk to the end of the last rank, model loading excluded), and the whole command's time is printed beside it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.devkit.perf.score import MODELS
from bench.store import read_manifest

BENCHMARK = "vitatecs"


def many_items(sample_data: Path, folder: Path, n: int) -> Path:
    """A VITATECS folder of ``n`` items made from the sample's (captions numbered so that no two are equal)."""
    lines = [json.loads(line) for f in sorted(sample_data.glob("*.jsonl")) for line in f.read_text().splitlines()]
    rows = [dict(lines[i % len(lines)], caption=f"{lines[i % len(lines)]['caption']} number {i}",
                 aspect="Direction") for i in range(n)]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Direction.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def launch(ranks: int, args: list[str], out: Path) -> tuple[float, float]:
    """Score with ``ranks`` one-thread ranks under torchrun; returns (the run's scoring seconds, the command's)."""
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(ranks),
               "-m", "bench", "score", *args, "--workers", "1", "--out", str(out), "--quiet"]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{ranks} rank(s) failed: {done.stderr.strip().splitlines()[-1:]}")
    manifest = read_manifest(out)
    if manifest.status != "complete":
        raise RuntimeError(f"{out}: the run did not complete")
    return manifest.extra["seconds"], took


def measure(ranks: int, items: int = 4096, frame_count: int = 8, batch_size: int = 16) -> None:
    """Score ``items`` items with each tiny model on 1 and on ``ranks`` ranks; print items per second and ratios."""
    from bench.devkit.tiny_models import tiny_model
    from bench.devkit.world import ensure_sample

    if ranks < 2:
        raise ValueError(f"--ranks must be at least 2 (it is compared with one rank), got {ranks}")
    with tempfile.TemporaryDirectory() as tmp:
        sample = ensure_sample(Path(tmp) / "sample")[BENCHMARK]
        data = many_items(sample.data_path, Path(tmp) / "data", items)
        print(f"{items} {BENCHMARK} items over the sample's videos, {frame_count} frames per clip, batch size "
              f"{batch_size}, one thread per rank, {os.cpu_count()} cores")
        for tiny_name, (family, protocol) in MODELS.items():
            model = str(tiny_model(tiny_name, Path(tmp) / "models"))
            args = [BENCHMARK, str(data), "--video-root", str(sample.video_root), "--model", model, "--family",
                    family, "--protocol", protocol, "--frames", f"uniform:k={frame_count}", "--batch-size",
                    str(batch_size)]
            one, one_all = launch(1, args, Path(tmp) / "runs" / f"{tiny_name}-1")
            many, many_all = launch(ranks, args, Path(tmp) / "runs" / f"{tiny_name}-{ranks}")
            print(f"{protocol:10s} tiny {tiny_name:8s} 1 rank {items / one:7.1f} items/s   {ranks} ranks "
                  f"{items / many:7.1f} items/s   ratio {one / many:5.2f}x   (whole command {one_all:5.1f} s vs "
                  f"{many_all:5.1f} s)")
