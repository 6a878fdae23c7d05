"""Finding the runs to browse: run folders under the data home, picked by benchmark from their manifests."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Sequence

from bench.paths import HOME_ENV, data_home

DEMO_HINT = "run `foilbench demo` to score the sample suite there"


def runs_root() -> Path:
    """Where runs are stored: ``<data home>/runs``."""
    return data_home() / "runs"


def _manifest(folder: Path) -> dict:
    try:
        return json.loads((folder / "manifest.json").read_text())
    except (OSError, ValueError):
        return {}


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
    found = [f for f in folders if str(manifests[f].get("benchmark", "")).lower() == benchmark.lower()]
    if not found:
        others = sorted({str(m.get("benchmark")) for m in manifests.values() if m.get("benchmark")})
        seen = f" (runs found there are of {', '.join(others)})" if others else ""
        raise FileNotFoundError(f"no run of {benchmark} under {root}{seen}: {DEMO_HINT}, or set {HOME_ENV} to the "
                                f"data home that holds your runs")
    data = Counter(manifests[f].get("data_path") for f in found).most_common(1)[0][0]
    return [f for f in found if manifests[f].get("data_path") == data]
