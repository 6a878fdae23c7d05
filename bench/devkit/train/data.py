"""The training data: the world's training split decoded once, exactly as scoring decodes it, and shared by every
model (each then preprocesses the frames with its own processor, as its backend does).

Clips are decoded with the runner's default frame policy (8 frames, ``np.linspace`` over the clip).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from bench.devkit.world.files import sentence
from bench.devkit.world.split import Split
from bench.frames import FrameError, policy, prefetch, sample_frames
from bench.items import Clip

FRAME_POLICY = policy("uniform", k=8)  # ScoreConfig.frame_policy's default, and X-CLIP's num_frames
STYLES = (str, sentence)  # as the benchmarks' files write a caption: as is, or in sentence case with a full stop
TIME_FOILS = ("order", "direction", "state")  # foil types only a model that sees the order of frames can reject
GENERIC_CLAIMS = ("presence", "shapes")  # claims of what is there and how many: true of many clips besides their own


@dataclass
class Decoded:
    """The split's clips decoded: ``frames[i]`` of ``videos[i]``."""

    split: Split
    videos: list[str]
    frames: list[np.ndarray]
    _claims: tuple[dict[int, list], dict[int, list]] | None = field(default=None, init=False, repr=False,
                                                                     compare=False)

    def index(self) -> dict[str, int]:
        """Each video's position in :attr:`videos`."""
        return {v: i for i, v in enumerate(self.videos)}

    def claims(self) -> tuple[dict[int, list], dict[int, list]]:
        """The split's examples by clip position: all of them, and those whose claim is about time (its foil type one
        of :data:`TIME_FOILS`, or the clip played backwards makes its foil true); worked out once, to be read only."""
        if self._claims is not None:
            return self._claims
        position = self.index()
        every: dict[int, list] = {}
        timed: dict[int, list] = {}
        for example in self.split.examples:
            every.setdefault(position[example.video], []).append(example)
            if example.reverses or example.foil_type in TIME_FOILS:
                timed.setdefault(position[example.video], []).append(example)
        self._claims = every, timed
        return self._claims

    def generic_captions(self) -> set[str]:
        """The true captions of claims of a :data:`GENERIC_CLAIMS` kind, in every style: each is true of many clips
        the split does not say it of, so it must never be another clip's negative."""
        return {styled(e.texts[0]) for e in self.split.examples if e.kind.split("/")[1] in GENERIC_CLAIMS
                for styled in STYLES}


def decode(split: Split, size=None, workers: int = 2, tick=lambda n: None) -> Decoded:
    """Decode every clip of ``split`` at ``size`` (a backend's ``frame_fit()``, as the runner's ``size="auto"``
    decodes; None: the videos' own size) on ``workers`` threads; ``tick(n)`` reports progress in clips."""
    videos = sorted({e.video for e in split.examples} | {v for p in split.pairs for v in p.videos})
    requests = [(v, lambda v=v: sample_frames(Clip(split.path(v)), FRAME_POLICY, size=size).array) for v in videos]
    frames: dict = {}
    for key, result in prefetch(iter(requests), workers=workers, queue_size=4 * workers):
        if isinstance(result, FrameError):
            raise RuntimeError(f"training split video unreadable: {result}")
        frames[key] = result
        tick(1)
    return Decoded(split, videos, [frames[v] for v in videos])


def draw_claim(rng: np.random.Generator, every: dict[int, list], timed: dict[int, list], clip: int,
               reversing: float) -> list[tuple[bool, list[str]]]:
    """One claim of ``clip`` (of :meth:`Decoded.claims`; a claim about time with probability ``reversing`` when the
    clip has one), in one drawn style, as ``(backwards, texts)``: its texts as asked of the clip and, for a claim
    about time, as asked of the clip played backwards (its foil's world: caption and first foil swapped)."""
    pool = timed[clip] if clip in timed and rng.random() < reversing else every[clip]
    example = pool[int(rng.integers(len(pool)))]
    styled = style(rng)
    texts = [styled(t) for t in example.texts]
    return [(False, texts)] + ([(True, texts[1::-1] + texts[2:])] if example.reverses else [])


def style(rng: np.random.Generator) -> Callable[[str], str]:
    """One of the :data:`STYLES`, drawn from ``rng``."""
    return STYLES[int(rng.integers(len(STYLES)))]
