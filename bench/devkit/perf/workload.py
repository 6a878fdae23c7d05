"""The workload of the GPU benchmarks: the VELOCITI-format sample replicated to many videos at a real resolution."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

from bench.config import DataSource
from bench.frames import decode


def velociti_at_scale(folder: str | Path, copies: int, size: tuple[int, int]) -> DataSource:
    """The sample suite's VELOCITI release (its videos re-encoded at ``size`` = (width, height)) replicated
    ``copies`` times under new video ids: ``copies`` x its rows and videos, at 30 fps with a keyframe a second."""
    from bench.devkit.world import ensure_sample
    from bench.videoio import write_video

    folder = Path(folder)
    sample = ensure_sample(folder / "sample")["velociti"]
    with open(sample.data_path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    videos = folder / "videos"
    videos.mkdir(parents=True, exist_ok=True)
    for video_id in dict.fromkeys(r["video_id"] for r in rows):
        source = str(sample.video_root / f"{video_id}.mp4")
        count, fps = decode.probe(source, "pyav")
        first = write_video(videos / f"{video_id}_000.mp4", decode.read(source, list(range(count)), "pyav", size),
                            fps)
        for copy in range(1, copies):
            shutil.copyfile(first, videos / f"{video_id}_{copy:03d}.mp4")
    data = folder / "velociti.csv"
    with open(data, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        for copy in range(copies):
            writer.writerows({**r, "video_id": f"{r['video_id']}_{copy:03d}"} for r in rows)
    return DataSource.of("velociti", data, videos)
