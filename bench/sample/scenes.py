"""Synthetic scenes: coloured shapes on a grey stage, drawn with numpy, whose facts the captions state.

A :class:`Scene` is a list of :class:`Actor` tracks; each actor has a shape, a colour per frame and a position per
frame (``None`` while it is not on stage). Rendering is deterministic: the same scene gives the same pixels.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

SIZE = 96
RADIUS = 10
BACKGROUND = (128, 128, 128)
COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (220, 30, 30),
    "green": (30, 190, 40),
    "blue": (30, 60, 220),
    "yellow": (230, 210, 30),
}
SHAPES = ("square", "circle")


@dataclass
class Actor:
    """One shape's track: its colour name and centre (x, y) per frame, ``None`` when absent."""

    shape: str
    colours: list[str]
    positions: list[tuple[float, float] | None]


@dataclass
class Scene:
    """Actors over ``frames`` frames at ``fps``."""

    frames: int
    fps: float
    actors: list[Actor] = field(default_factory=list)

    def add(self, shape: str, colour: str | list[str], positions: list[tuple[float, float] | None]) -> Actor:
        """Add an actor; ``colour`` may change per frame."""
        if len(positions) != self.frames:
            raise ValueError(f"{len(positions)} positions for {self.frames} frames")
        colours = [colour] * self.frames if isinstance(colour, str) else list(colour)
        actor = Actor(shape, colours, positions)
        self.actors.append(actor)
        return actor

    def render(self) -> np.ndarray:
        """The frames, T x SIZE x SIZE x 3 uint8."""
        out = np.empty((self.frames, SIZE, SIZE, 3), np.uint8)
        out[:] = BACKGROUND
        yy, xx = np.mgrid[0:SIZE, 0:SIZE]
        for t in range(self.frames):
            for actor in self.actors:
                pos = actor.positions[t]
                if pos is None:
                    continue
                x, y = pos
                if actor.shape == "square":
                    mask = (np.abs(xx - x) <= RADIUS) & (np.abs(yy - y) <= RADIUS)
                else:
                    mask = (xx - x) ** 2 + (yy - y) ** 2 <= RADIUS**2
                out[t][mask] = COLOURS[actor.colours[t]]
        return out


def glide(frames: int, start: tuple[float, float], end: tuple[float, float]) -> list[tuple[float, float]]:
    """Positions moving evenly from ``start`` to ``end``."""
    return [(start[0] + (end[0] - start[0]) * t / max(1, frames - 1),
             start[1] + (end[1] - start[1]) * t / max(1, frames - 1)) for t in range(frames)]


def hops(frames: int, count: int, x: float = SIZE / 2, floor: float = 70, height: float = 40) -> list[tuple[float, float]]:
    """A shape jumping exactly ``count`` times (one full up-and-down arc per jump, resting between jumps)."""
    positions = [(x, floor)] * frames
    period = frames // count
    for j in range(count):
        lo = j * period + period // 4
        hi = j * period + 3 * period // 4
        for t in range(lo, hi):
            phase = (t - lo) / (hi - lo)
            positions[t] = (x, floor - height * np.sin(np.pi * phase))
    return positions


def appear(frames: int, at: int, pos: tuple[float, float]) -> list[tuple[float, float] | None]:
    """Absent before frame ``at``, then still at ``pos``."""
    return [None if t < at else pos for t in range(frames)]


def centroid(frame: np.ndarray, colour: str, tolerance: int = 40) -> tuple[float, float] | None:
    """The centre of the pixels of ``colour`` in one frame, or ``None`` if there are none (for checking captions)."""
    target = np.array(COLOURS[colour], dtype=np.int16)
    mask = np.abs(frame.astype(np.int16) - target).max(axis=-1) <= tolerance
    if mask.sum() < 10:
        return None
    ys, xs = np.nonzero(mask)
    return float(xs.mean()), float(ys.mean())
