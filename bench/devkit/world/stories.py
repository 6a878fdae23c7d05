"""Stories: a scene together with claims about it, each a true sentence and false ones that change exactly one fact.

The parameters of a story make both its video and its sentences, so a caption cannot drift from what is drawn. A
story offers several claims by kind (``"direction"``, ``"count"``, ``"prestate"``...); each benchmark's writer picks
the kinds its tests are about and styles them (capitals, full stops) as that benchmark's files do. Sentences use a
small fixed grammar (``a red square moves from left to right``, ``first, X. then, Y``, ``X before Y``...) that
``tests/test_sample.py`` reads back from the decoded pixels.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bench.devkit.world.scenes import (BOTTOM, COLOURS, FLOOR, LEFT, MIDDLE, RIGHT, SHAPES, TOP, Scene, glide, hops, still,
                                 switch)

NUMBERS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
WAY = {"right": "from left to right", "left": "from right to left", "up": "up", "down": "down"}
TOWARDS = {"right": "to the right", "left": "to the left", "up": "up", "down": "down"}
OPPOSITE = {"right": "left", "left": "right", "up": "down", "down": "up"}
RELATIONS = {"left": "to the left of", "right": "to the right of", "above": "above", "below": "below"}
OPPOSITE_RELATION = {"left": "right", "right": "left", "above": "below", "below": "above"}
# Distances (pixels) over a clip: quick motions run at >= 26 px/s, slow ones at <= 11 px/s.
QUICK, SLOW = 80.0, 20.0

Actor = tuple[str, str]  # (colour, shape)


@dataclass
class Claim:
    """A true sentence and its foils; ``when`` names the part of the video it is about (VELOCITI events),
    ``question``/``answers`` a multiple-choice form (ATP-Hard: short answers, the true one first)."""

    true: str
    false: list[str]
    when: str | None = None
    question: str | None = None
    answers: list[str] = field(default_factory=list)


@dataclass
class Story:
    """A scene and the claims it makes true, by kind."""

    scene: Scene
    claims: dict[str, Claim]

    def true(self, kind: str) -> str:
        """The true sentence of one kind of claim."""
        return self.claims[kind].true


def a(actor: Actor) -> str:
    """``a red square``."""
    return f"a {actor[0]} {actor[1]}"


def the(actor: Actor) -> str:
    """``the red square``."""
    return f"the {actor[0]} {actor[1]}"


def times(n: int) -> str:
    """``one time``, ``three times`` (ViLMA's counting captions)."""
    return "one time" if n == 1 else f"{NUMBERS[n]} times"


def other_shape(shape: str, *avoid: str) -> str:
    """The first shape that is neither ``shape`` nor any of ``avoid``."""
    return next(s for s in SHAPES if s != shape and s not in avoid)


def other_colour(colour: str, *avoid: str) -> str:
    """The first colour that is neither ``colour`` nor any of ``avoid``."""
    return next(c for c in COLOURS if c != colour and c not in avoid)


def move(actor: Actor, direction: str, pace: str = "steady", frames: int = 30, fps: float = 10) -> Story:
    """One shape crossing the stage (``pace`` "quick"/"steady" cross it, "slow" covers a short way)."""
    colour, shape = actor
    distance = SLOW if pace == "slow" else QUICK
    sign = 1 if direction in ("right", "down") else -1
    if direction in ("left", "right"):
        start, end = (MIDDLE - sign * distance / 2, MIDDLE), (MIDDLE + sign * distance / 2, MIDDLE)
    else:
        start, end = (MIDDLE, MIDDLE - sign * distance / 2), (MIDDLE, MIDDLE + sign * distance / 2)
    scene = Scene(fps).add(shape, colour, glide(frames, start, end))
    does = f"{a(actor)} moves {TOWARDS[direction]}"
    stranger = (other_colour(colour), other_shape(shape))
    claims = {
        "direction": Claim(f"{a(actor)} moves {WAY[direction]}", [f"{a(actor)} moves {WAY[OPPOSITE[direction]]}"]),
        "type": Claim(does, [f"{a(actor)} jumps"]),
        "action": Claim(does, [f"{a(actor)} jumps", f"{a(actor)} moves {TOWARDS[OPPOSITE[direction]]}"]),
        "object": Claim(does, [f"a {colour} {other_shape(shape)} moves {TOWARDS[direction]}"]),
        "hallucination": Claim(does, [f"{does} beside {a(stranger)}"]),
        # Something-Something v2 template captions (the object is "[something]")
        "ssv2": Claim(f"moving [something] {WAY[direction]}",
                      [f"moving [something] {WAY[other]}" for other in WAY if other != direction]),
    }
    if pace != "steady":
        word, foil = ("quickly", "slowly") if pace == "quick" else ("slowly", "quickly")
        claims["intensity"] = Claim(f"{a(actor)} moves {word} {TOWARDS[direction]}",
                                    [f"{a(actor)} moves {foil} {TOWARDS[direction]}"])
    return Story(scene, claims)


def jumps(actor: Actor, count: int, foil_counts: list[int], x: float = MIDDLE, frames: int = 30,
          fps: float = 10) -> Story:
    """One shape jumping exactly ``count`` times in place at ``x``."""
    colour, shape = actor
    scene = Scene(fps).add(shape, colour, hops(frames, count, x))
    counted = f"{a(actor)} jumps exactly {times(count)}"
    claims = {
        "count": Claim(counted, [f"{a(actor)} jumps exactly {times(n)}" for n in foil_counts]),
        "type": Claim(f"{a(actor)} jumps", [f"{a(actor)} moves to the right"]),
        "object": Claim(f"{a(actor)} jumps", [f"a {colour} {other_shape(shape)} jumps"]),
        "attribute": Claim(counted, [f"a {other_colour(colour)} {shape} jumps exactly {times(count)}"]),
        "presence": Claim(f"there is at least one {shape}", [f"there is at least one {other_shape(shape)}"]),
    }
    if x != MIDDLE:
        side = "left" if x < MIDDLE else "right"
        claims["localization"] = Claim(f"{a(actor)} jumps on the {side} side",
                                       [f"{a(actor)} jumps on the {OPPOSITE[side]} side"])
    return Story(scene, claims)


def order(first: Actor, second: Actor, frames: int = 30, fps: float = 10) -> Story:
    """Two shapes appearing one after the other (at 1/5 and 3/5 of the clip), ``first`` on the left."""
    scene = Scene(fps)
    scene.add(first[1], first[0], still(frames // 5, None) + still(frames - frames // 5, (LEFT + 16, MIDDLE)))
    scene.add(second[1], second[0],
              still(3 * frames // 5, None) + still(frames - 3 * frames // 5, (RIGHT - 16, MIDDLE)))
    return Story(scene, {
        "sequence": Claim(f"{a(first)} appears and then {a(second)} appears",
                          [f"{a(second)} appears and then {a(first)} appears"]),
        "before": Claim(f"{the(first)} appears before {the(second)}", [f"{the(second)} appears before {the(first)}"]),
        "flip": Claim(f"first {a(first)} appears, then {a(second)} appears",
                      [f"first {a(second)} appears, then {a(first)} appears"]),
    })


def change(shape: str, before: str, after: str, frames: int = 30, fps: float = 10) -> Story:
    """A still shape changing colour halfway through: ViLMA's change of state (action, pre-, post-state, inverse)."""
    scene = Scene(fps).add(shape, switch(frames, before, after, frames // 2), still(frames, (MIDDLE, MIDDLE)))
    it = f"the {shape}"
    return Story(scene, {
        "action": Claim(f"{it} turns {after}", [f"{it} turns {before}"]),
        "prestate": Claim(f"initially, {it} is {before}", [f"initially, {it} is {after}"]),
        "poststate": Claim(f"at the end, {it} is {after}", [f"at the end, {it} is {before}"]),
        "inverse": Claim(f"initially, {it} is {before}. then, {it} turns {after}. at the end, {it} is {after}",
                         [f"initially, {it} is {after}. then, {it} turns {before}. at the end, {it} is {before}"]),
        "object": Claim(f"{it} turns {after}", [f"the {other_shape(shape)} turns {after}"]),
        "change": Claim(f"{it} turns from {before} to {after}", [f"{it} turns from {after} to {before}"]),
    })


def relation(first: Actor, second: Actor, where: str = "left", frames: int = 30, fps: float = 10) -> Story:
    """``first`` still beside ``second``: to its left (``where="left"``) or above it (``"above"``)."""
    if where == "left":
        places = (LEFT + 12, MIDDLE), (RIGHT - 12, MIDDLE)
    elif where == "above":
        places = (MIDDLE, TOP), (MIDDLE, BOTTOM)
    else:
        raise ValueError(f"where must be 'left' or 'above', got {where!r}")
    scene = Scene(fps).add(first[1], first[0], still(frames, places[0]))
    scene.add(second[1], second[0], still(frames, places[1]))
    said = f"{the(first)} is {RELATIONS[where]} {the(second)}"
    return Story(scene, {
        "relation": Claim(said, [f"{the(first)} is {RELATIONS[OPPOSITE_RELATION[where]]} {the(second)}"]),
        "swap": Claim(said, [f"{the(second)} is {RELATIONS[where]} {the(first)}"]),
        "presence": Claim(f"there is {a(first)}", [f"there is a {first[0]} {other_shape(first[1], second[1])}"]),
    })


def cross(first: Actor, second: Actor, frames: int = 30, fps: float = 10) -> Story:
    """``first`` crossing to the right in the top lane while ``second`` crosses to the left in the bottom lane."""
    scene = Scene(fps)
    scene.add(first[1], first[0], glide(frames, (LEFT, TOP), (RIGHT, TOP)))
    scene.add(second[1], second[0], glide(frames, (RIGHT, BOTTOM), (LEFT, BOTTOM)))
    return Story(scene, {
        "compositionality": Claim(f"{a(first)} moves to the right and {a(second)} moves to the left",
                                  [f"{a(second)} moves to the right and {a(first)} moves to the left"]),
    })


def chase(chaser: Actor, leader: Actor, frames: int = 30, fps: float = 10) -> Story:
    """``chaser`` following ``leader`` to the right along the same line, 40 px behind."""
    scene = Scene(fps)
    scene.add(chaser[1], chaser[0], glide(frames, (LEFT, MIDDLE), (LEFT + 48, MIDDLE)))
    scene.add(leader[1], leader[0], glide(frames, (LEFT + 40, MIDDLE), (LEFT + 88, MIDDLE)))
    return Story(scene, {
        "swap": Claim(f"{the(chaser)} chases {the(leader)}", [f"{the(leader)} chases {the(chaser)}"]),
        "presence": Claim(f"there is {a(chaser)}", [f"there is a {chaser[0]} {other_shape(chaser[1], leader[1])}"]),
    })


def episode(mover: Actor, jumper: Actor, direction: str = "right", count: int = 2, event_frames: int = 20,
            fps: float = 10) -> Story:
    """Two events of ``event_frames`` each (VELOCITI's Ev1, Ev2).

    Ev1: ``mover`` crosses the top lane quickly towards ``direction`` while ``jumper`` jumps ``count`` times on the
    floor. Ev2: ``mover`` rests; ``jumper`` moves slowly the other way. Claims are keyed by VELOCITI test name
    (``when`` = the events) and by ATP-Hard question type (TN, TP, TC: five statements, one true).
    """
    n = event_frames
    back = OPPOSITE[direction]
    sign = 1 if direction == "right" else -1
    start, end = (MIDDLE - sign * 40, TOP), (MIDDLE + sign * 40, TOP)
    jump_x = MIDDLE + sign * 10
    scene = Scene(fps)
    scene.add(mover[1], mover[0], glide(n, start, end) + still(n, end))
    scene.add(jumper[1], jumper[0], hops(n, count, jump_x) + glide(n, (jump_x, FLOOR), (jump_x - sign * SLOW, FLOOR)))
    m, j = the(mover), the(jumper)
    goes, returns = f"moves {TOWARDS[direction]}", f"moves {TOWARDS[back]}"
    recolour = other_colour(jumper[0], mover[0])
    later = other_colour(recolour, jumper[0], mover[0])
    return Story(scene, {
        "action_bind": Claim(f"{m} {goes}", [f"{m} jumps"], "Ev1"),
        "agent_bind": Claim(f"{m} {goes} while {j} jumps", [f"{j} {goes} while {m} jumps"], "Ev1"),
        "action_manner": Claim(f"{j} moves slowly {TOWARDS[back]}", [f"{j} moves quickly {TOWARDS[back]}"], "Ev2"),
        "chrono": Claim(f"first, {j} jumps. then, {j} {returns}", [f"first, {j} {returns}. then, {j} jumps"],
                        "(Ev1, Ev2)"),
        "coref": Claim(f"the shape that jumps is also the one that {returns}",
                       [f"the shape that {goes} is also the one that {returns}"], "(Ev1, Ev2)"),
        "control": Claim(f"{m} {goes}", [], "Ev1"),
        "TN": Claim(f"{j} moves slowly {TOWARDS[back]} after {m} {goes}",
                    [f"{j} moves quickly {TOWARDS[direction]} after {m} {goes}",
                     f"{j} turns {recolour} after {m} {goes}", f"{j} stays still after {m} {goes}",
                     f"{j} turns {later} after {m} {goes}"],
                    question=f"what does {j} do after {m} {goes}",
                    answers=[f"move slowly {TOWARDS[back]}", f"move quickly {TOWARDS[direction]}",
                             f"turn {recolour}", "stay still", f"turn {later}"]),
        "TP": Claim(f"{j} jumps exactly {times(count)} before {j} {returns}",
                    [f"{j} jumps exactly {times(k)} before {j} {returns}" for k in range(1, 6) if k != count],
                    question=f"how many times does {j} jump before it {returns}",
                    answers=[NUMBERS[count]] + [NUMBERS[k] for k in range(1, 6) if k != count]),
        "TC": Claim(f"{j} jumps while {m} {goes}",
                    [f"{j} turns {recolour} while {m} {goes}", f"{j} stays still while {m} {goes}",
                     f"{j} moves quickly {TOWARDS[direction]} while {m} {goes}",
                     f"{j} turns {later} while {m} {goes}"],
                    question=f"what does {j} do while {m} {goes}",
                    answers=["jump", f"turn {recolour}", "stay still", f"move quickly {TOWARDS[direction]}",
                             f"turn {later}"]),
    })
