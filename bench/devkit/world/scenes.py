"""Synthetic scenes: coloured shapes on a grey stage, drawn with numpy, whose facts the world's captions state.

A :class:`Scene` is a list of :class:`Actor` tracks: each actor has a shape, and per frame a colour, a centre
(``None`` while it is off stage) and a radius. Tracks are plain lists built from the helpers below and joined with
``+`` (``glide(20, a, b) + still(20, b)``: 2 s of motion, then 2 s at rest at 10 fps). Rendering is deterministic.

Timing convention: the two halves of a clip are mirror images under the uniform frame policies
(``np.linspace(0, n - 1, k)`` picks frames ``i`` and ``n - 1 - i`` alike), so stories that put one event in each half
give a bag of frames that cannot tell which event came first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

# x264's output depends on memory layout unless the chroma width is a multiple of 32: 128 keeps the bytes fixed.
SIZE = 128
RADIUS = 12
SMALL, BIG = 7, 14  # radii of "small" and "big" shapes (the size-change stories)
BACKGROUND = 128  # the stage's grey level
COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (220, 30, 30),
    "green": (30, 190, 40),
    "blue": (30, 60, 220),
    "yellow": (230, 210, 30),
}
SHAPES = ("square", "circle", "triangle")
# Stage geometry shared by the stories: two lanes (top, bottom), the floor jumps start from, three columns.
TOP, BOTTOM, FLOOR = 32.0, 96.0, 104.0
LEFT, MIDDLE, RIGHT = 20.0, SIZE / 2, SIZE - 20.0
JUMP_HEIGHT = 36.0

Position = tuple[float, float] | None
Track = list[Position]


@lru_cache(maxsize=None)
def stencil(shape: str, radius: int = RADIUS) -> np.ndarray:
    """The shape's pixels in a (2r+1) x (2r+1) box: a square fills it, a circle ~79%, an upward triangle ~50%."""
    yy, xx = np.mgrid[-radius:radius + 1, -radius:radius + 1]
    if shape == "square":
        return np.ones_like(xx, dtype=bool)
    if shape == "circle":
        return xx**2 + yy**2 <= radius**2
    if shape == "triangle":
        return 2 * np.abs(xx) <= yy + radius
    raise ValueError(f"unknown shape {shape!r}; expected one of {SHAPES}")


@dataclass
class Actor:
    """One shape's track: its colour name, centre (x, y) and radius per frame; ``None`` centre when off stage."""

    shape: str
    colours: list[str]
    positions: Track
    radii: list[int]


@dataclass
class Scene:
    """Actors over the same number of frames at ``fps``."""

    fps: float
    actors: list[Actor] = field(default_factory=list)

    @property
    def frames(self) -> int:
        """The number of frames (every track has the same length)."""
        return len(self.actors[0].positions) if self.actors else 0

    def add(self, shape: str, colour: str | list[str], positions: Track, radius: int | list[int] = RADIUS) -> Scene:
        """Add an actor (``colour`` and ``radius`` may change per frame); returns the scene for chaining."""
        if shape not in SHAPES:
            raise ValueError(f"unknown shape {shape!r}; expected one of {SHAPES}")
        n = len(positions)
        colours = [colour] * n if isinstance(colour, str) else list(colour)
        radii = [radius] * n if isinstance(radius, int) else list(radius)
        unknown = sorted(set(colours) - set(COLOURS))
        if unknown:
            raise ValueError(f"unknown colour(s) {unknown}; expected some of {sorted(COLOURS)}")
        if len(colours) != n or len(radii) != n or (self.actors and n != self.frames):
            raise ValueError(f"track of {n} positions, {len(colours)} colours and {len(radii)} radii does not match "
                             f"the scene's {self.frames} frames")
        self.actors.append(Actor(shape, colours, list(positions), radii))
        return self

    def shifted(self, dx: int) -> Scene:
        """The same scene moved ``dx`` pixels to the right."""
        moved = Scene(self.fps)
        for actor in self.actors:
            positions = [None if p is None else (p[0] + dx, p[1]) for p in actor.positions]
            moved.actors.append(Actor(actor.shape, list(actor.colours), positions, list(actor.radii)))
        return moved

    def left_edge(self) -> int:
        """The smallest drawn centre column (the same for a scene played backwards)."""
        return min(int(round(p[0])) for actor in self.actors for p in actor.positions if p is not None)

    def render(self) -> np.ndarray:
        """The frames, T x SIZE x SIZE x 3 uint8 (later actors are drawn over earlier ones)."""
        out = np.full((self.frames, SIZE, SIZE, 3), BACKGROUND, np.uint8)
        for actor in self.actors:
            for t, pos in enumerate(actor.positions):
                if pos is not None:
                    _stamp(out[t], stencil(actor.shape, actor.radii[t]), pos, _RGB[actor.colours[t]])
        return out


_RGB = {name: np.asarray(rgb, np.uint8) for name, rgb in COLOURS.items()}


def _stamp(frame: np.ndarray, mask: np.ndarray, pos: tuple[float, float], rgb: np.ndarray) -> None:
    r = mask.shape[0] // 2
    x0, y0 = int(round(pos[0])) - r, int(round(pos[1])) - r
    n = mask.shape[0]
    xs, ys = slice(max(0, x0), min(SIZE, x0 + n)), slice(max(0, y0), min(SIZE, y0 + n))
    cut = mask[ys.start - y0:ys.stop - y0, xs.start - x0:xs.stop - x0]
    frame[ys, xs][cut] = rgb


def still(frames: int, pos: Position) -> Track:
    """At rest at ``pos`` (or off stage when ``pos`` is None)."""
    return [pos] * frames


def glide(frames: int, start: tuple[float, float], end: tuple[float, float]) -> Track:
    """Moving evenly from ``start`` (first frame) to ``end`` (last frame)."""
    steps = max(1, frames - 1)
    return [(start[0] + (end[0] - start[0]) * t / steps, start[1] + (end[1] - start[1]) * t / steps)
            for t in range(frames)]


def hops(frames: int, count: int, x: float = MIDDLE, floor: float = FLOOR, height: float = JUMP_HEIGHT) -> Track:
    """Jumping exactly ``count`` times in place: each jump is one up-and-down arc in the middle half of its share of
    the frames, at rest on ``floor`` before and after it (see :func:`jump_frames`)."""
    positions: Track = [(x, floor)] * frames
    for lo, hi in jump_frames(frames, count):
        for t in range(lo, hi):
            positions[t] = (x, floor - height * float(np.sin(np.pi * (t - lo + 1) / (hi - lo + 1))))
    return positions


def jump_frames(frames: int, count: int) -> list[tuple[int, int]]:
    """The ``[first, end)`` airborne frames of each jump made by :func:`hops` over ``frames`` frames."""
    if count < 1 or frames // count < 4:
        raise ValueError(f"cannot fit {count} jumps into {frames} frames")
    period = frames // count
    return [(j * period + period // 4, j * period + period - period // 4) for j in range(count)]


def switch(frames: int, before, after, at: int) -> list:
    """A per-frame track (colours, radii): ``before`` until frame ``at``, ``after`` from then on."""
    return [before if t < at else after for t in range(frames)]


def ramp(frames: int, start: int, end: int, first: int, last: int) -> list[int]:
    """Radii changing evenly from ``start`` to ``end`` over frames ``first..last`` (constant outside)."""
    span = max(1, last - first)
    return [int(round(start + (end - start) * min(1.0, max(0.0, (t - first) / span)))) for t in range(frames)]
