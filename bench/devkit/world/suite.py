"""The generated sample suite: every benchmark in its own released file format, with generated videos of which the
captions are true and the foils false, and a ``labels.csv`` beside each giving every item's foil type.

``ensure_sample()`` generates it on first use into a temporary folder renamed into place, so a crash never leaves a
half-written suite, and regenerates it when :data:`VERSION`, the size or the seed changes.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from bench.devkit.world import benchmarks
from bench.devkit.world.files import LABELS_FILE, SIZES, worker_context
from bench.paths import data_home

VERSION = "9"  # bump whenever the generated files change
STAMP = "SAMPLE_VERSION"


@dataclass
class SampleSet:
    """Where one benchmark's sample lives and how to load it:
    ``bench.loaders.load(benchmark, data_path, video_root, **loader_options)`` (the options join the foil types)."""

    benchmark: str
    data_path: Path
    video_root: Path
    loader_options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Writer:
    """How the world writes one benchmark: ``write(folder, size, seed=0)``, and where inside ``folder`` its
    annotation files (``data``) and its videos (``videos``) land."""

    write: Callable[..., None]
    data: str = "data"
    videos: str = "videos"


WRITERS: dict[str, Writer] = {
    "vilma": Writer(benchmarks.write_vilma),
    "vitatecs": Writer(benchmarks.write_vitatecs),
    "velociti": Writer(benchmarks.write_velociti, data="velociti.csv"),
    "videocon": Writer(benchmarks.write_videocon),
    "vinoground": Writer(benchmarks.write_vinoground, data=".", videos="."),
}


def _sets_at(out: Path) -> dict[str, SampleSet]:
    return {name: SampleSet(name, out / name / w.data, out / name / w.videos, {"labels": str(out / name / LABELS_FILE)})
            for name, w in WRITERS.items()}


def _stamp(size: str, seed: int) -> str:
    return f"{VERSION} {size} {seed}"


def _write(benchmark: str, folder: Path, size: str, seed: int) -> None:
    folder.mkdir()
    WRITERS[benchmark].write(folder, size, seed=seed)


def generate_sample(out_dir: str | Path, size: str = "small", seed: int = 0,
                    workers: int | None = None) -> dict[str, SampleSet]:
    """Write the whole suite of ``size`` ("small" or "full") into ``out_dir`` (which must not exist yet); the same
    bytes for the same size and seed. ``workers`` processes write benchmarks side by side (default: one for the
    small suite, one per core for the full one)."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}, got {size!r}")
    out = Path(out_dir)
    out.mkdir(parents=True)
    jobs = [(name, out / name, size, seed) for name in WRITERS]
    workers = workers or (1 if size == "small" else min(len(jobs), os.cpu_count() or 1))
    if workers == 1:
        for job in jobs:
            _write(*job)
    else:
        with ProcessPoolExecutor(workers, mp_context=worker_context()) as pool:
            for done in [pool.submit(_write, *job) for job in jobs]:
                done.result()
    (out / STAMP).write_text(_stamp(size, seed))
    return _sets_at(out)


def _current(out: Path, size: str, seed: int) -> bool:
    stamp = out / STAMP
    return stamp.is_file() and stamp.read_text().strip() == _stamp(size, seed)


def sample_home(size: str = "small") -> Path:
    """The default place of the suite of ``size``: ``<data home>/sample-<size>``."""
    return data_home() / f"sample-{size}"


def ensure_sample(out_dir: str | Path | None = None, *, size: str = "small", seed: int = 0,
                  force: bool = False, workers: int | None = None) -> dict[str, SampleSet]:
    """The suite of ``size`` at ``out_dir`` (default :func:`sample_home`), generated first if absent, outdated or of
    another size or seed (always with ``force``), by ``workers`` processes (:func:`generate_sample`)."""
    out = Path(out_dir) if out_dir is not None else sample_home(size)
    if _current(out, size, seed) and not force:
        return _sets_at(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".sample-", dir=out.parent))
    try:
        generate_sample(tmp / "suite", size, seed, workers)
        if out.exists():
            os.replace(out, tmp / "outdated")
        try:
            os.replace(tmp / "suite", out)
        except OSError:
            if not _current(out, size, seed):  # another process put a current suite there first: use it
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _sets_at(out)
