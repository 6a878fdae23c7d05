"""A reader of the generated world's sentence grammar that decides, from pixels alone, whether a sentence is true.

It finds each coloured shape in every frame (colour by palette, shape by how much of its bounding box it fills, size
by the box) and decides motion, jumps, order, colour and size changes and relations from the centroids,
independently of the generator's scenes. Used by the world's tests on decoded videos and on rendered frames.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from bench.devkit.world.scenes import COLOURS, SIZE
from bench.devkit.world.stories import NUMBERS

COLOUR = "|".join(COLOURS)
NP = rf"(?:a|an|the|at least one) (?:(?:{COLOUR}) )?(?:square|circle|triangle)"
NUMBER_WORDS = {word: n for n, word in NUMBERS.items()}
QUICK_PX_PER_S = 16.0  # the world's quick motions run at >= 26 px/s, its slow ones at <= 11 px/s
MARGIN = 12  # pixels: net motion, relations and sides must clear this
SMALL_BOX, BIG_BOX = 21, 25  # box sides: a small shape's box is narrower than 21 px, a big one's wider than 25


Span = tuple[int, int]  # the first and last frame of what a sentence tells


@dataclass(frozen=True)
class Blob:
    colour: str
    x: float
    y: float
    shape: str
    box: int = 25


def blobs(frame: np.ndarray) -> dict[str, Blob]:
    """Each palette colour on stage: its centroid, shape (a square fills its box, a circle 66-79%, a triangle ~50%)
    and box side."""
    found = {}
    for name, rgb in COLOURS.items():
        mask = np.abs(frame.astype(np.int16) - np.array(rgb, np.int16)).max(axis=-1) <= 45
        if mask.sum() < 30:
            continue
        ys, xs = np.nonzero(mask)
        box = (np.ptp(xs) + 1) * (np.ptp(ys) + 1)
        fill = mask.sum() / box
        shape = "square" if fill > 0.86 else "circle" if fill > 0.6 else "triangle"
        found[name] = Blob(name, float(xs.mean()), float(ys.mean()), shape, int(max(np.ptp(xs), np.ptp(ys)) + 1))
    return found


class Reader:
    """Decides whether a sentence of the world's grammar is true of some frames (their blobs) at ``fps``."""

    def __init__(self, frames: tuple[dict[str, Blob], ...], fps: float):
        self.frames, self.fps = frames, fps

    @classmethod
    def of(cls, frames: np.ndarray, fps: float) -> Reader:
        """The reader of raw frames (T x H x W x 3)."""
        return cls(tuple(blobs(f) for f in frames), fps)

    def holds(self, text: str) -> bool:
        return self._sentence(text.strip().rstrip(".").lower())[0]

    def _track(self, colour: str | None, shape: str | None) -> list[Blob | None]:
        track = []
        for found in self.frames:
            match = [b for b in found.values() if colour in (None, b.colour) and shape in (None, b.shape)]
            assert len(match) <= 1, f"ambiguous reference to {colour} {shape}: {match}"
            track.append(match[0] if match else None)
        return track

    def _np(self, text: str) -> list[Blob | None]:
        if text == "[something]":
            return self._track(None, None)
        m = re.fullmatch(rf"(?:a|an|the|at least one) (?:({COLOUR}) )?(square|circle|triangle)", text)
        assert m, f"not a noun phrase of the world's grammar: {text!r}"
        return self._track(m[1], m[2])

    def _sentence(self, s: str) -> tuple[bool, Span | None]:
        """(holds, the first and last frame of what it tells) of a sentence. "X before Y": X is over when Y starts;
        "X while Y": they overlap."""
        if m := re.fullmatch(r"first, (.+)\. then, (.+)", s):
            return self._ordered(m[1], m[2])
        if ". " in s:
            parts = [self._sentence(re.sub(r"^then, ", "", p)) for p in s.split(". ")]
            return all(ok for ok, _ in parts), parts[0][1]
        if m := re.fullmatch(r"the shape that (.+) is also the one that (.+)", s):
            colours = sorted({b.colour for found in self.frames for b in found.values()})
            tracks = [self._track(c, None) for c in colours]
            return any(self._verb(m[1], t)[0] and self._verb(m[2], t)[0] for t in tracks), None
        for pattern, swap in ((r"first (.+), then (.+)", False), (r"(.+) and then (.+)", False),
                              (r"(.+) before (.+)", False), (r"(.+) after (.+)", True)):
            if m := re.fullmatch(pattern, s):
                return self._ordered(m[2], m[1]) if swap else self._ordered(m[1], m[2])
        if m := re.fullmatch(r"(.+) while (.+)", s):
            (first, span), (second, other) = self._sentence(m[1]), self._sentence(m[2])
            overlap = span is not None and other is not None and max(span[0], other[0]) <= min(span[1], other[1])
            return first and second and overlap, span
        if m := re.fullmatch(r"(.+) and (.+)", s):
            (first, span), (second, _) = self._sentence(m[1]), self._sentence(m[2])
            return first and second, span
        if m := re.fullmatch(rf"(.+) beside ({NP})", s):
            ok, span = self._sentence(m[1])
            return ok and self._present(m[2]), span
        if m := re.fullmatch(rf"({NP}) (.+) on the (left|right) side", s):
            ok, span = self._verb(m[2], self._np(m[1]))
            x = np.mean([b.x for b in self._np(m[1]) if b])
            side = "left" if x < SIZE / 2 - MARGIN else "right" if x > SIZE / 2 + MARGIN else None
            return ok and side == m[3], span
        if m := re.fullmatch(rf"(initially|at the end), ({NP}) is ({COLOUR}|small|big)", s):
            seen = [b for b in self._np(m[2]) if b]
            if not seen:
                return False, None
            blob = seen[0 if m[1] == "initially" else -1]
            if m[3] in ("small", "big"):
                return (blob.box < SMALL_BOX) if m[3] == "small" else (blob.box > BIG_BOX), self._whole
            return blob.colour == m[3], self._whole
        if m := re.fullmatch(r"there (?:is|are) exactly (\w+) shapes?", s):
            return all(len(found) == NUMBER_WORDS[m[1]] for found in self.frames), self._whole
        if m := re.fullmatch(rf"there is ({NP})", s):
            return self._present(m[1]), self._whole
        if m := re.fullmatch(r"moving \[something\] (.+)", s):
            return self._verb("moves " + m[1], self._np("[something]"))
        m = re.fullmatch(rf"({NP}) (.+)", s)
        assert m, f"not a sentence of the world's grammar: {s!r}"
        return self._verb(m[2], self._np(m[1]))

    def _present(self, text: str) -> bool:
        return sum(b is not None for b in self._np(text)) >= 2

    @property
    def _whole(self) -> Span:
        return 0, len(self.frames) - 1

    def _ordered(self, first: str, second: str) -> tuple[bool, Span | None]:
        (a, one), (b, two) = self._sentence(first), self._sentence(second)
        return a and b and one is not None and two is not None and one[0] < two[0] and one[1] <= two[0], one

    def _verb(self, vp: str, track: list[Blob | None]) -> tuple[bool, Span | None]:
        seen = [(t, b) for t, b in enumerate(track) if b is not None]
        if len(seen) < 2:
            return False, None
        whole = seen[0][0], seen[-1][0]
        if vp == "appears":
            return track[0] is None, whole
        if m := re.fullmatch(r"moves (?:(quickly|slowly) )?(from left to right|from right to left|to the right|"
                             r"to the left|up|down)", vp):
            return self._moves(seen, m[2], m[1])
        if m := re.fullmatch(r"jumps(?: exactly (\w+) times?)?", vp):
            airborne = self._jumps(seen)
            span = (airborne[0][0], airborne[-1][1]) if airborne else None
            return (len(airborne) == NUMBER_WORDS[m[1]] if m[1] else bool(airborne)), span
        if vp == "stays still":
            return self._still(seen)
        if vp in ("grows", "shrinks"):
            first, last = seen[0][1].box, seen[-1][1].box
            changing = [t for t, b in seen if 2 < abs(b.box - first) and 2 < abs(b.box - last)]
            span = (changing[0], changing[-1]) if changing else whole
            return (last > first + 8) if vp == "grows" else (last < first - 8), span
        if m := re.fullmatch(rf"turns (?:from ({COLOUR}) to )?({COLOUR})", vp):
            first, last = seen[0][1].colour, seen[-1][1].colour
            changed = next((t for t, b in seen if b.colour != first), None)
            return (first == m[1] if m[1] else first != m[2]) and last == m[2], \
                (changed, changed) if changed is not None else None
        if m := re.fullmatch(rf"is (to the left of|to the right of|above|below) ({NP})", vp):
            other = self._np(m[2])
            both = [(b, other[t]) for t, b in seen if other[t] is not None]
            test = {"to the left of": lambda b, o: b.x < o.x - MARGIN,
                    "to the right of": lambda b, o: b.x > o.x + MARGIN,
                    "above": lambda b, o: b.y < o.y - MARGIN, "below": lambda b, o: b.y > o.y + MARGIN}[m[1]]
            return bool(both) and all(test(b, o) for b, o in both), whole
        if m := re.fullmatch(rf"chases ({NP})", vp):
            leader = self._np(m[1])
            led = [o for o in leader if o is not None]
            if len(led) < 2:
                return False, None
            mine, theirs = seen[-1][1].x - seen[0][1].x, led[-1].x - led[0].x
            sign = np.sign(mine)
            behind = all((leader[t].x - b.x) * sign > 0 for t, b in seen if leader[t] is not None)
            return (abs(mine) > MARGIN and abs(theirs) > MARGIN and np.sign(theirs) == sign and behind), whole
        raise AssertionError(f"not a verb phrase of the world's grammar: {vp!r}")

    def _moves(self, seen: list[tuple[int, Blob]], way: str, pace: str | None) -> tuple[bool, Span | None]:
        """Net motion along the way's axis; the pace from the time the middle 80% of the motion took."""
        axis = "y" if way in ("up", "down") else "x"
        sign = 1 if way in ("down", "to the right", "from left to right") else -1
        ts = [t for t, _ in seen]
        cs = [getattr(b, axis) for _, b in seen]
        net = cs[-1] - cs[0]
        if sign * net <= MARGIN:
            return False, None
        cut = 0.1 * abs(net)
        onset = next(i for i, c in enumerate(cs) if abs(c - cs[0]) > cut)
        settle = max(i for i, c in enumerate(cs) if abs(c - cs[-1]) > cut)
        speed = 0.8 * abs(net) * self.fps / max(1, ts[settle] - ts[onset])
        return pace is None or (speed >= QUICK_PX_PER_S) == (pace == "quickly"), (ts[onset], ts[settle])

    def _still(self, seen: list[tuple[int, Blob]]) -> tuple[bool, Span | None]:
        """Staying still: within 3 px of where it stood for a second or more (its longest such run of frames)."""
        best = (seen[0][0], seen[0][0])
        for i, (t, b) in enumerate(seen):
            j = i
            while j + 1 < len(seen) and math.hypot(seen[j + 1][1].x - b.x, seen[j + 1][1].y - b.y) < 3:
                j += 1
            if seen[j][0] - t > best[1] - best[0]:
                best = (t, seen[j][0])
        return best[1] - best[0] + 1 >= self.fps, best

    @staticmethod
    def _jumps(seen: list[tuple[int, Blob]]) -> list[Span]:
        """The jumps' first and last airborne frames: runs of frames well above the floor, with the floor before and
        after them."""
        floor = max(b.y for _, b in seen)
        up = [b.y < floor - 10 for _, b in seen]
        starts = [i for i in range(1, len(up)) if up[i] and not up[i - 1] and not all(up[i:])]
        return [(seen[i][0], seen[next(k for k in range(i, len(up)) if not up[k]) - 1][0]) for i in starts]
