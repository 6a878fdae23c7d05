"""The embedded sample suite: a few items of each benchmark in its own released file format, with generated videos
of which the captions are true and the foils false.

``ensure_sample()`` generates it on first use into a temporary folder renamed into place, so a crash never leaves a
half-written suite, and regenerates it when :data:`VERSION` changes.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.paths import data_home
from bench.devkit.world.benchmarks import LAYOUT, WRITERS

VERSION = "2"  # bump whenever the generated files change
STAMP = "SAMPLE_VERSION"


@dataclass
class SampleSet:
    """Where one benchmark's sample lives and how to load it:
    ``bench.loaders.load(benchmark, data_path, video_root, **loader_options)``."""

    benchmark: str
    data_path: Path
    video_root: Path
    loader_options: dict[str, Any] = field(default_factory=dict)


def _sets_at(out: Path) -> dict[str, SampleSet]:
    return {name: SampleSet(name, out / name / data, out / name / videos) for name, (data, videos) in LAYOUT.items()}


def generate_sample(out_dir: str | Path) -> dict[str, SampleSet]:
    """Write the whole sample suite into ``out_dir`` (which must not exist yet); the same bytes every time."""
    out = Path(out_dir)
    out.mkdir(parents=True)
    for name, writer in WRITERS.items():
        (out / name).mkdir()
        writer(out / name)
    (out / STAMP).write_text(VERSION)
    return _sets_at(out)


def _current(out: Path) -> bool:
    stamp = out / STAMP
    return stamp.is_file() and stamp.read_text().strip() == VERSION


def sample_home() -> Path:
    """The default place of the suite: ``<data home>/sample``."""
    return data_home() / "sample"


def ensure_sample(out_dir: str | Path | None = None, *, force: bool = False) -> dict[str, SampleSet]:
    """The sample suite at ``out_dir`` (default :func:`sample_home`), generated first if absent or outdated (always
    with ``force``)."""
    out = Path(out_dir) if out_dir is not None else sample_home()
    if _current(out) and not force:
        return _sets_at(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".sample-", dir=out.parent))
    try:
        generate_sample(tmp / "suite")
        if out.exists():
            os.replace(out, tmp / "outdated")
        try:
            os.replace(tmp / "suite", out)
        except OSError:
            if not _current(out):  # another process put a current suite there first: use it, else fail loudly
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _sets_at(out)
