"""The generated sample suite: every benchmark in its own released file format, with generated videos of which the
captions are true and the foils false, and a ``labels.csv`` beside each giving every item's foil type.

``ensure_sample()`` generates it on first use into a temporary folder renamed into place, so a crash never leaves a
half-written suite, and regenerates it when :data:`VERSION`, the size or the seed changes. By default the suite is the
demo's world (the writers marked ``demo``: what the demo, the lessons and the training scripts score); the other
benchmarks are written when asked for (``benchmarks=``; ``foilbench sample`` writes every one), beside the demo's.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from bench.devkit.world import benchmarks, tempcompass, tvbench
from bench.devkit.world.files import LABELS_FILE, SIZES
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
    demo: bool = True  # part of the demo's world (written by default); else only when asked for


WRITERS: dict[str, Writer] = {
    "vilma": Writer(benchmarks.write_vilma),
    "vitatecs": Writer(benchmarks.write_vitatecs),
    "velociti": Writer(benchmarks.write_velociti, data="velociti.csv"),
    "videocon": Writer(benchmarks.write_videocon),
    "vinoground": Writer(benchmarks.write_vinoground, data=".", videos="."),
    "tempcompass": Writer(tempcompass.write_tempcompass, data=".", demo=False),
    "tvbench": Writer(tvbench.write_tvbench, data=".", videos="video", demo=False),
}


def _chosen(benchmarks: Sequence[str] | None) -> list[str]:
    """The demo's world and the ``benchmarks`` asked for besides, in :data:`WRITERS`' order."""
    unknown = sorted(set(benchmarks or ()) - set(WRITERS))
    if unknown:
        raise ValueError(f"the generated world writes no {', '.join(unknown)}; it writes {', '.join(WRITERS)}")
    return [name for name, w in WRITERS.items() if w.demo or name in (benchmarks or ())]


def _sets_at(out: Path, names: Sequence[str] | None = None) -> dict[str, SampleSet]:
    """The sets of ``names`` (default: the demo's world) in a suite at ``out``."""
    return {name: SampleSet(name, out / name / WRITERS[name].data, out / name / WRITERS[name].videos,
                            {"labels": str(out / name / LABELS_FILE)}) for name in names or _chosen(None)}


def _stamp(size: str, seed: int, names: Sequence[str] = ()) -> str:
    """``VERSION size seed``, and ``+name,...`` for the benchmarks written beside the demo's world."""
    extra = [n for n in names if not WRITERS[n].demo]
    return f"{VERSION} {size} {seed}" + (f" +{','.join(extra)}" if extra else "")


def _context():
    """Forked workers where the platform has fork (they only render and encode: no model code runs in them), so a
    script without a ``__main__`` guard works too."""
    return multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")


def _write(benchmark: str, folder: Path, size: str, seed: int) -> None:
    folder.mkdir()
    WRITERS[benchmark].write(folder, size, seed=seed)


def generate_sample(out_dir: str | Path, size: str = "small", seed: int = 0, workers: int | None = None,
                    benchmarks: Sequence[str] | None = None) -> dict[str, SampleSet]:
    """Write the suite of ``size`` ("small" or "full") into ``out_dir`` (which must not exist yet): the demo's world
    and the ``benchmarks`` asked for besides; the same bytes for the same size and seed. ``workers`` processes write
    benchmarks side by side (default: one for the small suite, one per core for the full one)."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}, got {size!r}")
    names = _chosen(benchmarks)
    out = Path(out_dir)
    out.mkdir(parents=True)
    jobs = [(name, out / name, size, seed) for name in names]
    workers = workers or (1 if size == "small" else min(len(jobs), os.cpu_count() or 1))
    if workers == 1:
        for job in jobs:
            _write(*job)
    else:
        with ProcessPoolExecutor(workers, mp_context=_context()) as pool:
            for done in [pool.submit(_write, *job) for job in jobs]:
                done.result()
    (out / STAMP).write_text(_stamp(size, seed, names))
    return _sets_at(out, names)


def _written(out: Path, size: str, seed: int) -> list[str] | None:
    """The benchmarks of a current suite at ``out`` (None when there is none, or it is outdated)."""
    stamp = out / STAMP
    found = stamp.read_text().split() if stamp.is_file() else []
    if found[:3] != _stamp(size, seed).split() or len(found) > 4 or len(found) == 4 and not found[3].startswith("+"):
        return None
    extra = found[3][1:].split(",") if len(found) == 4 else []
    return _chosen([n for n in extra if n in WRITERS])


def sample_home(size: str = "small") -> Path:
    """The default place of the suite of ``size``: ``<data home>/sample-<size>``."""
    return data_home() / f"sample-{size}"


def ensure_sample(out_dir: str | Path | None = None, *, size: str = "small", seed: int = 0, force: bool = False,
                  benchmarks: Sequence[str] | None = None) -> dict[str, SampleSet]:
    """The suite of ``size`` at ``out_dir`` (default :func:`sample_home`), generated first if absent, outdated, of
    another size or seed or without one of the ``benchmarks`` asked for besides the demo's world (always with
    ``force``); the sets of the demo's world and of ``benchmarks``. A suite regenerated for more benchmarks keeps
    those it had."""
    out = Path(out_dir) if out_dir is not None else sample_home(size)
    wanted = _chosen(benchmarks)
    written = _written(out, size, seed)
    if written is not None and set(wanted) <= set(written) and not force:
        return _sets_at(out, wanted)
    names = _chosen([*(written or ()), *wanted])
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".sample-", dir=out.parent))
    try:
        generate_sample(tmp / "suite", size, seed, benchmarks=names)
        if out.exists():
            os.replace(out, tmp / "outdated")
        try:
            os.replace(tmp / "suite", out)
        except OSError:
            found = _written(out, size, seed)  # another process put a current suite there first: use it
            if found is None or not set(wanted) <= set(found):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _sets_at(out, wanted)
