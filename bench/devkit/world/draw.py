"""Random stories: each story kind with its actors, directions, counts, places and timing drawn from a seeded
generator, so the world has many different scenes of every kind and the same seed gives the same scenes.

``rng_for("test", "vilma", "relations", 3)`` gives the generator of one item; the test world and the training split
draw from different first keys, so they never share a generator. :data:`KINDS` maps each story kind to its drawer.
"""

from __future__ import annotations

import hashlib
from typing import Callable

import numpy as np

from bench.devkit.world import stories
from bench.devkit.world.scenes import BIG, BOTTOM, COLOURS, FLOOR, LEFT, MIDDLE, RIGHT, SHAPES, TOP
from bench.devkit.world.stories import Actor, Story

DIRECTIONS = ("right", "left", "up", "down")


def rng_for(*key: object) -> np.random.Generator:
    """A generator seeded by ``key`` (any printable parts): the same key, the same draws, on every machine."""
    digest = hashlib.sha256("|".join(map(str, key)).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def pick(rng: np.random.Generator, options):
    """One of ``options``, uniformly."""
    return options[int(rng.integers(len(options)))]


def actors(rng: np.random.Generator, n: int) -> list[Actor]:
    """``n`` actors of different colours (the colour tells them apart on screen), shapes drawn freely."""
    colours = list(COLOURS)
    order = rng.permutation(len(colours))[:n]
    return [(colours[i], pick(rng, SHAPES)) for i in order]


def _separated(rng: np.random.Generator, low: float, high: float, gap: float) -> tuple[float, float]:
    """Two coordinates in [low, high] at least ``gap`` apart, the first the smaller."""
    first = float(rng.uniform(low, high - gap))
    return first, float(rng.uniform(first + gap, high))


def move(rng: np.random.Generator, pace: str | None = None, direction: str | None = None) -> Story:
    """A shape crossing the stage: any direction, pace and lane."""
    actor, = actors(rng, 1)
    direction = direction or pick(rng, DIRECTIONS)
    pace = pace or pick(rng, ("quick", "slow", "steady"))
    span = 4.0 if pace != "slow" else 40.0  # how far the centre may wander along the motion
    along = MIDDLE + float(rng.uniform(-span, span))
    across = float(rng.uniform(TOP, BOTTOM))
    centre = (along, across) if direction in ("left", "right") else (across, along)
    return stories.move(actor, direction, pace, centre)


def jumps(rng: np.random.Generator, count: int | None = None, side: bool | None = None) -> Story:
    """A shape jumping 1-4 times; ``side`` puts it clearly on one side (it then has a localisation claim), or near
    the middle; by default either."""
    actor, = actors(rng, 1)
    count = count or int(rng.integers(1, 5))
    side = bool(rng.random() < 0.5) if side is None else side
    foils = [n for n in range(1, 5) if n != count]
    foil = [pick(rng, foils)]
    offset = float(rng.uniform(stories.SIDE + 2, 40)) if side else float(rng.uniform(0, stories.SIDE - 8))
    x = MIDDLE - offset if rng.random() < 0.5 else MIDDLE + offset
    return stories.jumps(actor, count, foil, x)


def sequence(rng: np.random.Generator, verb: str | None = None) -> Story:
    """Two shapes acting one after the other (jumping, or appearing) at two places."""
    first, second = actors(rng, 2)
    verb = verb or pick(rng, ("jumps", "appears"))
    xs = _separated(rng, LEFT, RIGHT, 44)
    xs = xs if rng.random() < 0.5 else xs[::-1]
    return stories.sequence(first, second, verb, xs)


def change(rng: np.random.Generator) -> Story:
    """A still shape changing colour halfway."""
    before, after = (c for c, _ in actors(rng, 2))
    pos = (float(rng.uniform(LEFT + 8, RIGHT - 8)), float(rng.uniform(TOP, BOTTOM)))
    return stories.change(pick(rng, SHAPES), before, after, pos)


def resize(rng: np.random.Generator, grows: bool | None = None) -> Story:
    """A still shape growing or shrinking."""
    actor, = actors(rng, 1)
    grows = bool(rng.random() < 0.5) if grows is None else grows
    pos = (float(rng.uniform(LEFT + BIG - 8, RIGHT - BIG + 8)), float(rng.uniform(TOP, BOTTOM)))
    return stories.resize(actor, grows, pos)


def crowd(rng: np.random.Generator) -> Story:
    """One to four still shapes of different colours, each in its own quarter of the stage."""
    n = int(rng.integers(1, 5))
    corners = [(x, y) for x in (LEFT + 16, RIGHT - 16) for y in (TOP, BOTTOM)]
    places = [(corners[q][0] + float(rng.uniform(-8, 8)), corners[q][1] + float(rng.uniform(-8, 8)))
              for q in rng.permutation(len(corners))[:n]]
    return stories.crowd(actors(rng, n), places, [pick(rng, [k for k in range(1, 5) if k != n])])


def relation(rng: np.random.Generator, where: str | None = None) -> Story:
    """Two still shapes, one to the left of / right of / above / below the other."""
    first, second = actors(rng, 2)
    where = where or pick(rng, ("left", "right", "above", "below"))
    low, high = _separated(rng, LEFT - 4, RIGHT + 4, 44)
    across = float(rng.uniform(TOP, BOTTOM))
    jitter = float(rng.uniform(-6, 6))
    if where in ("left", "right"):
        places = ((low, across), (high, across + jitter))
    else:
        places = ((across, low), (across + jitter, high))
    if where in ("right", "below"):
        places = places[::-1]
    return stories.relation(first, second, where, places)


def cross(rng: np.random.Generator) -> Story:
    """Two shapes crossing each other's path in two lanes."""
    first, second = actors(rng, 2)
    lanes = (TOP + float(rng.uniform(-8, 8)), BOTTOM + float(rng.uniform(-8, 8)))
    return stories.cross(first, second, pick(rng, ("right", "left")), lanes)


def chase(rng: np.random.Generator) -> Story:
    """One shape chasing another along a line."""
    chaser, leader = actors(rng, 2)
    return stories.chase(chaser, leader, pick(rng, ("right", "left")), float(rng.uniform(TOP, FLOOR)))


def episode(rng: np.random.Generator, event_frames: int = 20, count: int | None = None) -> Story:
    """VELOCITI's two events: a quick crossing while another shape jumps (``count`` times, by default one to five),
    and a slow move back, in either order (drawn evenly, so neither a caption's wording nor a bag of frames tells which
    came first); the action claims are about either shape, drawn evenly too."""
    mover, jumper = actors(rng, 2)
    direction = pick(rng, ("right", "left"))
    jump_first = bool(rng.random() < 0.5)
    side = (1 if direction == "right" else -1) * (1 if jump_first else -1)  # where the mover rests
    jump_x = MIDDLE + side * float(rng.uniform(4, 24))
    count, lane = count or int(rng.integers(1, 6)), TOP + float(rng.uniform(-8, 8))
    return stories.episode(mover, jumper, direction, count, event_frames, lane=lane, jump_x=jump_x,
                           jump_first=jump_first, about_mover=bool(rng.random() < 0.5))


KINDS: dict[str, Callable[[np.random.Generator], Story]] = {
    "move": move,
    "jumps": jumps,
    "sequence": sequence,
    "change": change,
    "resize": resize,
    "relation": relation,
    "cross": cross,
    "chase": chase,
    "episode": episode,
    "crowd": crowd,
}


def _actor(story: Story, index: int) -> Actor:
    actor = story.scene.actors[index]
    return actor.colours[0], actor.shape


def pair(rng: np.random.Generator, kind: str) -> tuple[Story, Story, str]:
    """Two stories whose captions (claim kind returned third) are each other's foils: the second is the first's
    counterfactual world (Vinoground's pairs). ``kind`` is one of :data:`PAIRS`; for all but "relation" the second
    video is the first played backwards (the same bag of frames)."""
    first, second = actors(rng, 2)
    place = (float(rng.uniform(30, 98)), float(rng.uniform(30, 98)))
    if kind == "order":
        xs = (float(rng.uniform(20, 50)), float(rng.uniform(78, 108)))
        xs = xs if rng.random() < 0.5 else xs[::-1]  # who acts first is on the left or on the right
        verb = pick(rng, ("jumps", "appears"))
        return (stories.sequence(first, second, verb, xs), stories.sequence(second, first, verb, xs[::-1]),
                "before")
    if kind == "relation":
        pos = relation(rng)
        places = tuple(tuple(actor.positions[0]) for actor in pos.scene.actors)
        where = next(w for w, phrase in stories.RELATIONS.items() if f" is {phrase} " in pos.true("relation"))
        return pos, stories.relation(_actor(pos, 1), _actor(pos, 0), where, places), "swap"
    if kind == "state":
        return (stories.change(first[1], first[0], second[0], place),
                stories.change(first[1], second[0], first[0], place), "change")
    if kind == "size":
        return stories.resize(first, True, place), stories.resize(first, False, place), "action"
    if kind == "direction":
        direction = pick(rng, DIRECTIONS)
        centre = (MIDDLE, place[1]) if direction in ("left", "right") else (place[0], MIDDLE)
        return (stories.move(first, direction, "steady", centre),
                stories.move(first, stories.OPPOSITE[direction], "steady", centre), "direction")
    if kind == "actor":
        direction, lane = pick(rng, ("right", "left")), float(rng.uniform(32, 104))
        return (stories.chase(first, second, direction, lane),
                stories.chase(second, first, stories.OPPOSITE[direction], lane), "swap")
    raise ValueError(f"unknown pair kind {kind!r}; expected one of {PAIRS}")


PAIRS = ("order", "relation", "state", "direction", "actor", "size")
