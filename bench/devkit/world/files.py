"""What the benchmark writers share: sizes, caption styling, deterministic video/CSV/JSON writing and the
``labels.csv`` sidecar that gives every item its foil type."""

from __future__ import annotations

import csv
import io
import json
import multiprocessing
from pathlib import Path
from typing import Any

from bench.devkit.world.scenes import Scene
from bench.videoio import write_video

SIZES = ("small", "full")
LABELS_FILE = "labels.csv"
SUITE_PARITY, TRAINING_PARITY = 0, 1  # the parity of the leftmost drawn column of every scene (see placed)


def count(size: str, small: int, full: int) -> int:
    """How many of something a suite of ``size`` has."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}, got {size!r}")
    return small if size == "small" else full


def sentence(text: str, stop: str = ".") -> str:
    """Sentence case ending in ``stop``: ``first, x. then, y`` -> ``First, x. Then, y.``."""
    return ". ".join(part[:1].upper() + part[1:] for part in text.split(". ")) + stop


def seconds(scene: Scene) -> int:
    """The scene's length in whole seconds."""
    return int(round(scene.frames / scene.fps))


def placed(scene: Scene, parity: int = SUITE_PARITY) -> Scene:
    """``scene`` moved one pixel to the right when the parity of its leftmost drawn column is not ``parity``.

    The sample suite draws every scene at even columns, the training split at odd ones, so no training video can be
    a video of the suite, while every caption stays true (a pixel is far below the world's margins). The column is
    the same for a scene played backwards, so a counterfactual pair stays an exact time reversal.
    """
    return scene if scene.left_edge() % 2 == parity else scene.shifted(1)


def worker_context():
    """Forked workers where the platform has fork (they only render and encode: no model code runs in them), so a
    script without a ``__main__`` guard works too: the suite's and the training split's writers."""
    return multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")


def video(root: Path, relative: str, scene: Scene, codec: str = "libx264", parity: int = SUITE_PARITY) -> None:
    """Render ``scene`` (:func:`placed` at ``parity``) and encode it to ``root/relative``."""
    write_video(root / relative, placed(scene, parity).render(), scene.fps, codec=codec)


def write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    """A CSV with ``\\n`` line ends (the same bytes on every platform)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(buffer.getvalue(), encoding="utf-8")


def write_json(path: Path, data: Any) -> None:
    """Indented JSON ending in a newline."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


class Labels:
    """The foil type of every item, by the id the benchmark's loader gives it; written as ``labels.csv``."""

    def __init__(self) -> None:
        self.rows: dict[str, str] = {}

    def add(self, item_id: str, foil_type: str) -> None:
        """Label one item (each id once)."""
        if item_id in self.rows:
            raise ValueError(f"item {item_id!r} labelled twice")
        self.rows[item_id] = foil_type

    def write(self, root: Path) -> Path:
        """``root/labels.csv`` with columns ``item_id,foil_type``."""
        path = root / LABELS_FILE
        write_csv(path, ["item_id", "foil_type"], [[i, t] for i, t in self.rows.items()])
        return path
