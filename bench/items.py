"""The data model: every benchmark item is a small matching problem.

An :class:`Item` holds a few clips (a video file plus an optional time window) and a few texts (a caption and its
foils), with a truth relation saying which texts are true of which clip. Labels (test, subtest, aspect, category,
misalignment, source...) ride along as plain values so that every breakdown is a pandas ``groupby``.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

import pandas as pd

TIME_UNITS = ("sec", "pts")
ROLES = ("main", "proficiency")
# Control characters and unpaired surrogates; newline, carriage return and tab are allowed in texts.
BAD_CHARACTER = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
CHARACTER_NAMES = {0: "NUL", 8: "backspace", 12: "form feed", 27: "escape", 127: "delete"}


def bad_character(text: str) -> str | None:
    """What is wrong with the first control character or unpaired surrogate in ``text``, or None."""
    found = BAD_CHARACTER.search(text)
    if found is None:
        return None
    code = ord(found.group())
    kind = "unpaired surrogate" if 0xD800 <= code <= 0xDFFF else "control character"
    name = f" ({CHARACTER_NAMES[code]})" if code in CHARACTER_NAMES else ""
    return f"{kind} U+{code:04X}{name} at character {found.start()}; only newline and tab are allowed in texts"


@dataclass(frozen=True)
class Clip:
    """A video file and an optional window.

    ``path`` is the file as the annotation names it, joined to the loader's video root when one was given.
    ``start``/``end`` bound the window (``None`` means the start / the end of the file). With ``unit == "pts"``
    they are frame indices into a video at ``fps`` frames per second (ViLMA's QUVA convention), otherwise seconds.
    ``exists`` is ``None`` when no video root was given, else whether the file is on disk.
    """

    path: str
    start: float | None = None
    end: float | None = None
    unit: str = "sec"
    fps: float | None = None
    exists: bool | None = None

    def __post_init__(self) -> None:
        if self.unit not in TIME_UNITS:
            raise ValueError(f"Clip.unit must be one of {TIME_UNITS}, got {self.unit!r}")
        if self.unit == "pts" and not self.fps:
            raise ValueError("a 'pts' window needs the frame rate it refers to (fps)")
        if any(v is not None and not (math.isfinite(v) and v >= 0) for v in (self.start, self.end)):
            raise ValueError(f"clip window must be finite and >= 0, got start={self.start!r}, end={self.end!r} "
                             f"({self.path})")
        if self.fps is not None and not (math.isfinite(self.fps) and self.fps > 0):
            raise ValueError(f"clip fps must be a finite number > 0, got {self.fps!r} ({self.path})")
        if self.start is not None and self.end is not None and self.end < self.start:
            raise ValueError(f"clip window ends before it starts: {self.start} > {self.end} ({self.path})")

    def window_seconds(self) -> tuple[float | None, float | None]:
        """The window in seconds (``pts`` converted with ``fps``)."""
        if self.unit == "sec":
            return self.start, self.end
        scale = 1.0 / float(self.fps)  # type: ignore[arg-type]
        return (
            None if self.start is None else self.start * scale,
            None if self.end is None else self.end * scale,
        )


@dataclass(frozen=True)
class Item:
    """One matching problem: ``clips`` x ``texts`` with ``truth[c]`` = indices of the texts true of clip ``c``.

    ``role`` is ``"main"`` or ``"proficiency"`` (ViLMA); ``twin_id`` links a main problem and its proficiency
    problem both ways.
    """

    benchmark: str
    item_id: str
    subset: str
    clips: tuple[Clip, ...]
    texts: tuple[str, ...]
    truth: tuple[tuple[int, ...], ...]
    labels: Mapping[str, Any] = field(default_factory=dict)
    role: str = "main"
    twin_id: str | None = None

    def __post_init__(self) -> None:
        where = f"{self.benchmark} item {self.item_id!r}"
        if not self.texts:
            raise ValueError(f"{where}: no texts")
        if any(not isinstance(t, str) or not t.strip() for t in self.texts):
            raise ValueError(f"{where}: every text must be a non-empty string, got {list(self.texts)!r}")
        for n, text in enumerate(self.texts):
            problem = bad_character(text)
            if problem:
                raise ValueError(f"{where}: text {n}: {problem}")
        if len(self.truth) != len(self.clips):
            raise ValueError(f"{where}: truth has {len(self.truth)} rows for {len(self.clips)} clips")
        for row in self.truth:
            if any(not 0 <= t < len(self.texts) for t in row):
                raise ValueError(f"{where}: truth {row} points outside the {len(self.texts)} texts")
        if self.role not in ROLES:
            raise ValueError(f"{where}: role must be one of {ROLES}, got {self.role!r}")

    def truth_matrix(self) -> list[list[bool]]:
        """``m[c][t]`` is True when text ``t`` is true of clip ``c``."""
        return [[t in row for t in range(len(self.texts))] for row in self.truth]

    @property
    def videos_missing(self) -> int:
        """How many of this item's clips are known to be missing on disk."""
        return sum(1 for c in self.clips if c.exists is False)


@dataclass
class ItemSet:
    """What a loader read: the items, where from, and notes on what it filtered (never silently)."""

    benchmark: str
    source: str
    items: list[Item]
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Item]:
        return iter(self.items)

    def by_id(self) -> dict[str, Item]:
        """Items keyed by ``item_id``."""
        return {it.item_id: it for it in self.items}

    def counts(self, role: str | None = "main") -> dict[str, int]:
        """Items per subset (of one role; ``None`` counts every role), in first-seen order."""
        return dict(Counter(it.subset for it in self.items if role is None or it.role == role))

    def videos(self) -> dict[str, bool | None]:
        """Every distinct video file with whether it exists (``None``: no video root given)."""
        out: dict[str, bool | None] = {}
        for it in self.items:
            for c in it.clips:
                out.setdefault(c.path, c.exists)
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row per item; labels become plain columns."""
        return items_frame(self.items)


def items_frame(items: Iterable[Item]) -> pd.DataFrame:
    """A DataFrame with one row per item (``texts``, ``clips`` and ``truth`` as lists, labels as columns)."""
    rows = []
    for it in items:
        row = {
            "benchmark": it.benchmark,
            "item_id": it.item_id,
            "subset": it.subset,
            "role": it.role,
            "twin_id": it.twin_id,
            "n_clips": len(it.clips),
            "n_texts": len(it.texts),
            "texts": list(it.texts),
            "videos": [c.path for c in it.clips],
            "truth": [list(r) for r in it.truth],
            "videos_missing": it.videos_missing,
        }
        for key, value in it.labels.items():
            if key in row:
                raise ValueError(f"label {key!r} of item {it.item_id!r} clashes with a core column")
            row[key] = value
        rows.append(row)
    return pd.DataFrame(rows)


class OutsideRoot(ValueError):
    """A video path that leaves the video root."""


def resolve_video(root: str | os.PathLike | None, relative: str, *,
                  allow_outside: bool = False) -> tuple[str, bool | None]:
    """Join ``relative`` to ``root`` and say whether the file exists (``None`` without a root).

    A path that leaves the root as written (absolute, or climbing out with ``..``; the current folder stands for a
    missing root) raises :class:`OutsideRoot` unless ``allow_outside``. Symbolic links are not followed for the
    check: a link inside the root may point anywhere.
    """
    if not allow_outside:
        base = os.path.abspath(root if root is not None else os.curdir)
        if os.path.commonpath([base, os.path.abspath(os.path.join(base, relative))]) != base:
            where = f"the video root {str(root)!r}" if root is not None else "the current folder (no video root given)"
            raise OutsideRoot(f"video path {relative!r} leaves {where}")
    if root is None:
        return relative, None
    path = Path(root) / relative
    return str(path), path.is_file()
