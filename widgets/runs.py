"""Finding the runs to browse (run folders under the data home, picked by benchmark from their manifests), which of
them are plain models and which controls, and the items they scored together."""

from __future__ import annotations

import heapq
import re
from collections import Counter
from pathlib import Path
from typing import Sequence

from bench.config import Manifest
from bench.frames.controls import run_control
from bench.items import Item
from bench.paths import HOME_ENV, data_home
from bench.store import read_manifest

DEMO_HINT = "run `foilbench demo` to score the sample suite there"


def runs_root() -> Path:
    """Where runs are stored: ``<data home>/runs``."""
    return data_home() / "runs"


def _manifest(folder: Path) -> Manifest:
    try:
        return read_manifest(folder)
    except (OSError, ValueError):
        return Manifest.from_dict({})


def resolve_run(folder: str | Path) -> Path:
    """A run folder: absolute as given, relative under ``<data home>/runs``; a clear error when it holds no run."""
    path = Path(folder).expanduser()
    path = path if path.is_absolute() else runs_root() / path
    if not (path / "manifest.json").is_file():
        raise FileNotFoundError(f"no run at {path} (no manifest.json; relative run folders are taken under "
                                f"{runs_root()}, set {HOME_ENV} to change the data home)")
    return path


def find_runs(benchmark: str, runs: Sequence[str | Path] = (), under: str | Path | None = None) -> list[Path]:
    """The run folders to browse: ``runs`` when given (see :func:`resolve_run`), else every run of ``benchmark``
    (its manifest's ``benchmark``) under ``under`` (default ``<data home>/runs``, searched at any depth), in path
    order. Runs of the benchmark on different data files are not mixed: those on the file most runs share are
    kept."""
    if runs:
        return [resolve_run(r) for r in runs]
    root = Path(under).expanduser() if under is not None else runs_root()
    folders = sorted(p.parent for p in root.rglob("manifest.json")) if root.is_dir() else []
    manifests = {f: _manifest(f) for f in folders}
    found = [f for f in folders if str(manifests[f].benchmark or "").lower() == benchmark.lower()]
    if not found:
        others = sorted({str(m.benchmark) for m in manifests.values() if m.benchmark})
        seen = f" (runs found there are of {', '.join(others)})" if others else ""
        raise FileNotFoundError(f"no run of {benchmark} under {root}{seen}: {DEMO_HINT}, or set {HOME_ENV} to the "
                                f"data home that holds your runs")
    data = Counter(manifests[f].data_path for f in found).most_common(1)[0][0]
    return [f for f in found if manifests[f].data_path == data]


CONTROL_WORDS = ("biased", "blind", "reversed")  # how the demo names its biased copies and controls


def is_control(manifest: Manifest) -> bool:
    """Whether a run is a control or a deliberately biased copy rather than a plain model: a video model scored as a
    shortcut control (its manifest's ``control``, or a frame policy that amounts to one: no frames, one frame,
    shuffled or reversed frames, :func:`bench.frames.controls.run_control`; a text-only model reads no frames and is
    a plain model of its kind), or named so (one of the demo's words ``biased``, ``blind``, ``reversed`` in the run's
    name or its model's folder, as a whole word: ``unbiased`` is no control). Every default the explore notebook takes
    prefers the other runs."""
    if manifest.family != "textlm" and run_control(manifest):
        return True
    names = f"{manifest.name or ''} {Path(str(manifest.model or '')).name}".lower()
    return bool(set(re.findall(r"[a-z]+", names)) & set(CONTROL_WORDS))


def plain_first(runs: Sequence) -> list:
    """``runs`` (anything with a ``manifest``) with the plain models first and the controls after
    (:func:`is_control`), each group in the order given."""
    return sorted(runs, key=lambda run: is_control(run.manifest))


def _natural(item_id: str) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", item_id)]


def union_items(runs: Sequence) -> list[Item]:
    """Every item some run (anything with ``items()``, e.g. ``bench.store.Run``) was asked, once: in the order of
    the annotation file as far as the runs show it (each run stores its items in file order), items no run places
    relative to each other by id. The same list whatever the order of the runs."""
    items: dict[str, Item] = {}
    follows: dict[str, set[str]] = {}
    for run in runs:
        own = run.items()
        for it in own:
            items.setdefault(it.item_id, it)
            follows.setdefault(it.item_id, set())
        for before, after in zip(own, own[1:]):
            follows[before.item_id].add(after.item_id)
    waiting = Counter(after for afters in follows.values() for after in afters)
    ready = [(_natural(i), i) for i in items if not waiting[i]]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        _, item_id = heapq.heappop(ready)
        order.append(item_id)
        for after in follows[item_id]:
            waiting[after] -= 1
            if not waiting[after]:
                heapq.heappush(ready, (_natural(after), after))
    placed = set(order)
    order += sorted((i for i in items if i not in placed), key=_natural)  # runs that disagree on the order
    return [items[i] for i in order]
