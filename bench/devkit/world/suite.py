"""The generated sample suite: every benchmark in its own released file format, with generated videos of which the
captions are true and the foils false, and a ``labels.csv`` beside each giving every item's foil type.

``ensure_sample()`` generates it on first use into a temporary folder renamed into place, so a crash never leaves a
half-written suite, and regenerates it when :data:`VERSION`, the size or the seed changes, or a benchmark asked for is
not in it. By default the suite is the demo's world, the benchmarks whose :class:`Writer` is ``default`` (the five the
trained models and the demo's lessons are about); ``benchmarks=`` names others too (``foilbench sample`` writes
every one), and the stamp lists them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from bench.devkit.world import benchmarks
from bench.devkit.world.files import LABELS_FILE, SIZES, worker_context
from bench.devkit.world.mvp import write_mvp
from bench.devkit.world.tempcompass import write_tempcompass
from bench.devkit.world.temporalbench import write_temporalbench
from bench.devkit.world.tvbench import write_tvbench
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
    annotation files (``data``) and its videos (``videos``) land; ``default``: part of the demo's world (written
    unless other benchmarks are asked for)."""

    write: Callable[..., None]
    data: str = "data"
    videos: str = "videos"
    default: bool = True


WRITERS: dict[str, Writer] = {
    "vilma": Writer(benchmarks.write_vilma),
    "vitatecs": Writer(benchmarks.write_vitatecs),
    "velociti": Writer(benchmarks.write_velociti, data="velociti.csv"),
    "videocon": Writer(benchmarks.write_videocon),
    "vinoground": Writer(benchmarks.write_vinoground, data=".", videos="."),
    "mvp": Writer(write_mvp, default=False),
    "temporalbench": Writer(write_temporalbench, data=".", videos=".", default=False),
    "tempcompass": Writer(write_tempcompass, data=".", default=False),
    "tvbench": Writer(write_tvbench, data=".", videos="video", default=False),
}


def chosen(benchmarks: Sequence[str] | None = None) -> list[str]:
    """The benchmarks a suite holds, in :data:`WRITERS`' order: ``benchmarks`` (checked), or the default ones."""
    if benchmarks is None:
        return [name for name, w in WRITERS.items() if w.default]
    unknown = [b for b in benchmarks if b not in WRITERS]
    if unknown:
        raise ValueError(f"the generated world writes no {', '.join(map(repr, unknown))}; it writes "
                         f"{', '.join(WRITERS)}")
    return [name for name in WRITERS if name in benchmarks]


def _sets_at(out: Path, benchmarks: Sequence[str] | None = None) -> dict[str, SampleSet]:
    return {name: SampleSet(name, out / name / WRITERS[name].data, out / name / WRITERS[name].videos,
                            {"labels": str(out / name / LABELS_FILE)}) for name in chosen(benchmarks)}


def _stamp(size: str, seed: int, names: Sequence[str] | None = None) -> str:
    """``VERSION size seed``, then the benchmarks written when they are not the default ones."""
    names = chosen(names)
    return f"{VERSION} {size} {seed}" + ("" if names == chosen() else " " + ",".join(names))


def _written(out: Path, size: str, seed: int) -> list[str] | None:
    """The benchmarks of a current suite of ``size`` and ``seed`` at ``out``, or None (none there, or outdated)."""
    stamp = out / STAMP
    found = stamp.read_text().split() if stamp.is_file() else []
    if found[:3] != [VERSION, size, str(seed)] or len(found) > 4:
        return None
    return found[3].split(",") if len(found) == 4 else chosen()


def _write(benchmark: str, folder: Path, size: str, seed: int) -> None:
    folder.mkdir()
    WRITERS[benchmark].write(folder, size, seed=seed)


def generate_sample(out_dir: str | Path, size: str = "small", seed: int = 0, workers: int | None = None,
                    benchmarks: Sequence[str] | None = None) -> dict[str, SampleSet]:
    """Write the suite of ``size`` ("small" or "full") into ``out_dir`` (which must not exist yet); the same bytes
    for the same size and seed. ``benchmarks``: which (default: the demo's world, :func:`chosen`). ``workers``
    processes write benchmarks side by side (default: one for the small suite, one per core for the full one)."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}, got {size!r}")
    names = chosen(benchmarks)
    out = Path(out_dir)
    out.mkdir(parents=True)
    jobs = [(name, out / name, size, seed) for name in names]
    workers = workers or (1 if size == "small" else min(len(jobs), os.cpu_count() or 1))
    if workers == 1:
        for job in jobs:
            _write(*job)
    else:
        with ProcessPoolExecutor(workers, mp_context=worker_context()) as pool:
            for done in [pool.submit(_write, *job) for job in jobs]:
                done.result()
    (out / STAMP).write_text(_stamp(size, seed, names))
    return _sets_at(out, names)


def _current(out: Path, size: str, seed: int, names: Sequence[str] | None = None) -> bool:
    written = _written(out, size, seed)
    return written is not None and set(chosen(names)) <= set(written)


def sample_home(size: str = "small") -> Path:
    """The default place of the suite of ``size``: ``<data home>/sample-<size>``."""
    return data_home() / f"sample-{size}"


def ensure_sample(out_dir: str | Path | None = None, *, size: str = "small", seed: int = 0, force: bool = False,
                  benchmarks: Sequence[str] | None = None, workers: int | None = None) -> dict[str, SampleSet]:
    """The suite of ``size`` at ``out_dir`` (default :func:`sample_home`) holding ``benchmarks`` (default: the demo's
    world), generated first if absent, outdated, of another size or seed, or without one of them (always with
    ``force``), by ``workers`` processes (:func:`generate_sample`); a suite regenerated keeps the benchmarks it held.
    Returns the sets of ``benchmarks``."""
    out = Path(out_dir) if out_dir is not None else sample_home(size)
    names = chosen(benchmarks)
    if _current(out, size, seed, names) and not force:
        return _sets_at(out, names)
    held = [name for name in _written(out, size, seed) or [] if name in WRITERS]
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".sample-", dir=out.parent))
    try:
        generate_sample(tmp / "suite", size, seed, workers, benchmarks=chosen([*names, *held]))
        if out.exists():
            os.replace(out, tmp / "outdated")
        try:
            os.replace(tmp / "suite", out)
        except OSError:
            if not _current(out, size, seed, names):  # another process put a current suite there first: use it
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _sets_at(out, names)
