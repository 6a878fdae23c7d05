"""Stories: a scene together with claims about it, each a true sentence and false ones that change one fact.

The parameters of a story make both its video and its sentences, so a caption cannot drift from what is drawn. A
story offers several claims by kind (``"direction"``, ``"count"``, ``"prestate"``...); each benchmark's writer picks
the kinds its tests are about and styles them (capitals, full stops) as that benchmark's files do. Every claim names
its ``foil_type`` (one of :data:`FOIL_TYPES`): what its foils change. Sentences use a small fixed grammar
(``a red square moves from left to right``, ``first, X. then, Y``, ``X before Y``...) that
``tests/devkit/test_sample.py`` reads back from the decoded pixels.

Stories whose foils are about time (order, direction, change of state, role swaps in motion) put their events
symmetrically about the middle of the clip, so that the foil's world is the time-reversed video: a model that
averages its frames sees the same bag of frames for both and must be at chance.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

from bench.devkit.world.scenes import (BIG, BOTTOM, COLOURS, FLOOR, LEFT, MIDDLE, RIGHT, SHAPES, SMALL, TOP, Scene,
                                       glide, hops, ramp, still, switch)

FOIL_TYPES = ("order", "direction", "state", "speed", "action", "actor", "attribute", "object", "count", "relation",
              "location", "control")
NUMBERS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine",
           10: "ten"}
WAY = {"right": "from left to right", "left": "from right to left", "up": "up", "down": "down"}
TOWARDS = {"right": "to the right", "left": "to the left", "up": "up", "down": "down"}
OPPOSITE = {"right": "left", "left": "right", "up": "down", "down": "up"}
RELATIONS = {"left": "to the left of", "right": "to the right of", "above": "above", "below": "below"}
OPPOSITE_RELATION = {"left": "right", "right": "left", "above": "below", "below": "above"}
# Distances (pixels) over a clip: quick motions run at >= 26 px/s, slow ones at <= 11 px/s.
QUICK, SLOW = 80.0, 20.0
SIDE = 24.0  # a shape at least this far from the middle is on the left or the right side
FRAMES, FPS = 30, 10.0  # a clip: 3 s

Actor = tuple[str, str]  # (colour, shape)


@dataclass
class Claim:
    """A true sentence and its foils, which change what ``foil_type`` names; ``when`` names the part of the video
    it is about (VELOCITI events), ``question``/``answers`` a multiple-choice form (ATP-Hard: short answers, the true
    one first). ``reverses``: the video played backwards makes the first foil true and the sentence false (its
    world is the time-reversed video)."""

    true: str
    false: list[str]
    foil_type: str
    when: str | None = None
    question: str | None = None
    answers: list[str] = field(default_factory=list)
    reverses: bool = False

    def __post_init__(self) -> None:
        if self.foil_type not in FOIL_TYPES:
            raise ValueError(f"unknown foil type {self.foil_type!r}; expected one of {FOIL_TYPES}")


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


def _asked(x: str, y: str, clause: str, link: str, true: str, phrases: list[str]) -> Claim:
    """An ATP-Hard question about what ``x`` does ``link`` ``y`` does ``clause``: the five ``phrases`` as statements
    (``true`` first, the others in their order) and as short answers (``moves quickly`` -> ``move quickly``)."""
    said = [true, *(p for p in phrases if p != true)]
    return Claim(f"{x} {true} {link} {y} {clause}", [f"{x} {p} {link} {y} {clause}" for p in said[1:]], "action",
                 question=f"what does {x} do {link} {y} {clause}",
                 answers=[" ".join([p.split()[0].removesuffix("s"), *p.split()[1:]]) for p in said])


def times(n: int) -> str:
    """``one time``, ``three times`` (ViLMA's counting captions)."""
    return "one time" if n == 1 else f"{NUMBERS[n]} times"


def other_shape(shape: str, *avoid: str, salt: str) -> str:
    """A shape that is neither ``shape`` nor any of ``avoid``, chosen by ``salt`` (see :func:`_other`)."""
    return _other(shape, [s for s in SHAPES if s != shape and s not in avoid], salt)


def other_colour(colour: str, *avoid: str, salt: str) -> str:
    """A colour that is neither ``colour`` nor any of ``avoid``, chosen by ``salt`` (see :func:`_other`)."""
    return _other(colour, [c for c in COLOURS if c != colour and c not in avoid], salt)


def _other(word: str, options: list[str], salt: str) -> str:
    """One of ``options`` for a foil's word in place of ``word``, chosen by a checksum of ``word`` and ``salt`` (the
    story's own settings): across stories each option is chosen about as often, so a foil's word is no more often a
    foil's than a caption's. Always taking the first option made "square" and "red" foils' words far more often than
    captions' (before build 8): a word prior that a model reading the texts alone learned."""
    return options[zlib.crc32(f"{word}|{salt}".encode()) % len(options)]


def move(actor: Actor, direction: str, pace: str = "steady", centre: tuple[float, float] = (MIDDLE, MIDDLE),
         frames: int = FRAMES, fps: float = FPS) -> Story:
    """One shape crossing the stage through ``centre`` (``pace`` "quick"/"steady" cover 80 px, "slow" 20 px)."""
    salt = repr(sorted(locals().items()))  # its settings choose its foils' words
    colour, shape = actor
    distance = SLOW if pace == "slow" else QUICK
    sign = 1 if direction in ("right", "down") else -1
    cx, cy = centre
    if direction in ("left", "right"):
        start, end = (cx - sign * distance / 2, cy), (cx + sign * distance / 2, cy)
    else:
        start, end = (cx, cy - sign * distance / 2), (cx, cy + sign * distance / 2)
    scene = Scene(fps).add(shape, colour, glide(frames, start, end))
    does = f"{a(actor)} moves {TOWARDS[direction]}"
    stranger = (other_colour(colour, salt=salt), other_shape(shape, salt=salt))
    claims = {
        "direction": Claim(f"{a(actor)} moves {WAY[direction]}", [f"{a(actor)} moves {WAY[OPPOSITE[direction]]}"],
                           "direction", reverses=True),
        "type": Claim(does, [f"{a(actor)} jumps"], "action"),
        "action": Claim(does, [f"{a(actor)} jumps", f"{a(actor)} grows"], "action"),
        "verb": Claim(does, [f"{a(actor)} turns {stranger[0]}"], "action"),
        "attribute": Claim(does, [f"a {stranger[0]} {shape} moves {TOWARDS[direction]}"], "attribute"),
        "object": Claim(does, [f"a {colour} {stranger[1]} moves {TOWARDS[direction]}"], "object"),
        "hallucination": Claim(does, [f"{does} beside {a(stranger)}"], "object"),
        "presence": Claim(f"there is {a(actor)}", [f"there is a {colour} {stranger[1]}"], "object"),
        # Something-Something v2 template captions (the object is "[something]")
        "ssv2": Claim(f"moving [something] {WAY[direction]}",
                      [f"moving [something] {WAY[other]}" for other in WAY if other != direction], "direction"),
    }
    if pace != "steady":
        word, foil = ("quickly", "slowly") if pace == "quick" else ("slowly", "quickly")
        claims["intensity"] = Claim(f"{a(actor)} moves {word} {TOWARDS[direction]}",
                                    [f"{a(actor)} moves {foil} {TOWARDS[direction]}"], "speed")
    return Story(scene, claims)


def jumps(actor: Actor, count: int, foil_counts: list[int], x: float = MIDDLE, frames: int = FRAMES,
          fps: float = FPS) -> Story:
    """One shape jumping exactly ``count`` times in place at ``x``."""
    salt = repr(sorted(locals().items()))  # its settings choose its foils' words
    colour, shape = actor
    scene = Scene(fps).add(shape, colour, hops(frames, count, x))
    counted = f"{a(actor)} jumps exactly {times(count)}"
    colour2, shape2 = other_colour(colour, salt=salt), other_shape(shape, salt=salt)
    claims = {
        "count": Claim(counted, [f"{a(actor)} jumps exactly {times(n)}" for n in foil_counts], "count"),
        "type": Claim(f"{a(actor)} jumps", [f"{a(actor)} moves to the right"], "action"),
        "verb": Claim(f"{a(actor)} jumps", [f"{a(actor)} grows"], "action"),
        "action": Claim(f"{a(actor)} jumps", [f"{a(actor)} moves to the left", f"{a(actor)} shrinks"], "action"),
        "object": Claim(f"{a(actor)} jumps", [f"a {colour} {shape2} jumps"], "object"),
        "attribute": Claim(counted, [f"a {colour2} {shape} jumps exactly {times(count)}"], "attribute"),
        "presence": Claim(f"there is at least one {shape}", [f"there is at least one {shape2}"],
                          "object"),
    }
    if abs(x - MIDDLE) >= SIDE:
        side = "left" if x < MIDDLE else "right"
        claims["localization"] = Claim(f"{a(actor)} jumps on the {side} side",
                                       [f"{a(actor)} jumps on the {OPPOSITE[side]} side"], "location")
    return Story(scene, claims)


def sequence(first: Actor, second: Actor, verb: str = "jumps", xs: tuple[float, float] = (LEFT + 16, RIGHT - 16),
             frames: int = FRAMES, fps: float = FPS) -> Story:
    """``first`` acts in the frames just before the middle of the clip, ``second`` in those just after it.

    ``verb`` "jumps": both rest on the floor at ``xs`` throughout and each jumps once in its turn; "appears": each is
    on stage only during its turn. Either way the foil's world (``second`` first) is the time-reversed video.
    """
    salt = repr(sorted(locals().items()))  # its settings choose its foils' words
    half, turn = frames // 2, frames // 2 - 3
    scene = Scene(fps)
    if verb == "jumps":
        scene.add(first[1], first[0], still(half - turn, (xs[0], FLOOR)) + hops(turn, 1, xs[0])
                  + still(frames - half, (xs[0], FLOOR)))
        scene.add(second[1], second[0], still(half, (xs[1], FLOOR)) + hops(turn, 1, xs[1])
                  + still(frames - half - turn, (xs[1], FLOOR)))
    elif verb == "appears":
        scene.add(first[1], first[0], still(half - turn, None) + still(turn, (xs[0], MIDDLE)) + still(half, None))
        scene.add(second[1], second[0], still(half, None) + still(turn, (xs[1], MIDDLE))
                  + still(frames - half - turn, None))
    else:
        raise ValueError(f"verb must be 'jumps' or 'appears', got {verb!r}")
    p, q = first, second
    stranger = (other_colour(p[0], q[0], salt=salt), p[1])
    return Story(scene, {
        "sequence": Claim(f"{a(p)} {verb} and then {a(q)} {verb}", [f"{a(q)} {verb} and then {a(p)} {verb}"], "order",
                          reverses=True),
        "before": Claim(f"{the(p)} {verb} before {the(q)} {verb}", [f"{the(q)} {verb} before {the(p)} {verb}"],
                        "order", reverses=True),
        "after": Claim(f"{the(q)} {verb} after {the(p)} {verb}", [f"{the(p)} {verb} after {the(q)} {verb}"], "order",
                       reverses=True),
        "flip": Claim(f"first {a(p)} {verb}, then {a(q)} {verb}", [f"first {a(q)} {verb}, then {a(p)} {verb}"],
                      "order", reverses=True),
        "chrono": Claim(f"first, {the(p)} {verb}. then, {the(q)} {verb}",
                        [f"first, {the(q)} {verb}. then, {the(p)} {verb}"], "order", reverses=True),
        "attribute": Claim(f"{a(p)} {verb} and then {a(q)} {verb}", [f"{a(stranger)} {verb} and then {a(q)} {verb}"],
                           "attribute"),
        "presence": Claim(f"there is {a(p)}", [f"there is a {p[0]} {other_shape(p[1], q[1], salt=salt)}"], "object"),
    })


def change(shape: str, before: str, after: str, pos: tuple[float, float] = (MIDDLE, MIDDLE), frames: int = FRAMES,
           fps: float = FPS) -> Story:
    """A still shape changing colour in the middle of the clip: ViLMA's change of state (action, pre-, post-state,
    inverse)."""
    salt = repr(sorted(locals().items()))  # its settings choose its foils' words
    scene = Scene(fps).add(shape, switch(frames, before, after, frames // 2), still(frames, pos))
    it = f"the {shape}"
    return Story(scene, {
        "action": Claim(f"{it} turns {after}", [f"{it} turns {before}"], "state", reverses=True),
        "prestate": Claim(f"initially, {it} is {before}", [f"initially, {it} is {after}"], "state", reverses=True),
        "poststate": Claim(f"at the end, {it} is {after}", [f"at the end, {it} is {before}"], "state", reverses=True),
        "inverse": Claim(f"initially, {it} is {before}. then, {it} turns {after}. at the end, {it} is {after}",
                         [f"initially, {it} is {after}. then, {it} turns {before}. at the end, {it} is {before}"],
                         "state", reverses=True),
        "change": Claim(f"{it} turns from {before} to {after}", [f"{it} turns from {after} to {before}"], "state",
                        reverses=True),
        "object": Claim(f"{it} turns {after}", [f"the {other_shape(shape, salt=salt)} turns {after}"], "object"),
        "verb": Claim(f"{it} turns {after}", [f"{it} jumps"], "action"),
        "presence": Claim(f"there is at least one {shape}", [f"there is at least one {other_shape(shape, salt=salt)}"],
                          "object"),
    })


def resize(actor: Actor, grows: bool = True, pos: tuple[float, float] = (MIDDLE, MIDDLE), frames: int = FRAMES,
           fps: float = FPS) -> Story:
    """A still shape growing from small to big (or shrinking) over the middle two thirds of the clip."""
    salt = repr(sorted(locals().items()))  # its settings choose its foils' words
    colour, shape = actor
    first, last = (SMALL, BIG) if grows else (BIG, SMALL)
    scene = Scene(fps).add(shape, colour, still(frames, pos), ramp(frames, first, last, frames // 6,
                                                                   frames - 1 - frames // 6))
    it = the(actor)
    does, undoes = ("grows", "shrinks") if grows else ("shrinks", "grows")
    before, after = ("small", "big") if grows else ("big", "small")
    return Story(scene, {
        "action": Claim(f"{it} {does}", [f"{it} {undoes}"], "state", reverses=True),
        "prestate": Claim(f"initially, {it} is {before}", [f"initially, {it} is {after}"], "state", reverses=True),
        "poststate": Claim(f"at the end, {it} is {after}", [f"at the end, {it} is {before}"], "state", reverses=True),
        "inverse": Claim(f"initially, {it} is {before}. then, {it} {does}. at the end, {it} is {after}",
                         [f"initially, {it} is {after}. then, {it} {undoes}. at the end, {it} is {before}"], "state",
                         reverses=True),
        "object": Claim(f"{it} {does}", [f"the {colour} {other_shape(shape, salt=salt)} {does}"], "object"),
        "attribute": Claim(f"{it} {does}", [f"the {other_colour(colour, salt=salt)} {shape} {does}"], "attribute"),
        "verb": Claim(f"{it} {does}", [f"{it} jumps"], "action"),
        "presence": Claim(f"there is {a(actor)}", [f"there is a {colour} {other_shape(shape, salt=salt)}"], "object"),
    })


def crowd(cast: list[Actor], places: list[tuple[float, float]], foil_counts: list[int], frames: int = FRAMES,
          fps: float = FPS) -> Story:
    """The shapes of ``cast`` standing still at ``places``: a count of things seen in any one frame (VideoCon's
    counting, which its paper calls atemporal), where a jump count needs the frames' order."""
    scene = Scene(fps)
    for (colour, shape), place in zip(cast, places):
        scene.add(shape, colour, still(frames, place))
    return Story(scene, {"shapes": Claim(shapes(len(cast)), [shapes(n) for n in foil_counts], "count")})


def shapes(n: int) -> str:
    """``there is exactly one shape`` / ``there are exactly <n> shapes``."""
    return "there is exactly one shape" if n == 1 else f"there are exactly {NUMBERS[n]} shapes"


def relation(first: Actor, second: Actor, where: str = "left", places: tuple[tuple[float, float], ...] | None = None,
             frames: int = FRAMES, fps: float = FPS) -> Story:
    """``first`` still beside ``second``: to its left / right, above / below it (``places``: their centres)."""
    salt = repr(sorted(locals().items()))  # its settings choose its foils' words
    if where not in RELATIONS:
        raise ValueError(f"where must be one of {sorted(RELATIONS)}, got {where!r}")
    if places is None:
        gap = {"left": ((LEFT + 12, MIDDLE), (RIGHT - 12, MIDDLE)), "above": ((MIDDLE, TOP), (MIDDLE, BOTTOM))}
        there = gap["left" if where in ("left", "right") else "above"]
        places = there if where in ("left", "above") else there[::-1]
    scene = Scene(fps).add(first[1], first[0], still(frames, places[0]))
    scene.add(second[1], second[0], still(frames, places[1]))
    said = f"{the(first)} is {RELATIONS[where]} {the(second)}"
    stranger = (other_colour(first[0], second[0], salt=salt), first[1])
    shape2 = other_shape(first[1], second[1], salt=salt)
    return Story(scene, {
        "relation": Claim(said, [f"{the(first)} is {RELATIONS[OPPOSITE_RELATION[where]]} {the(second)}"], "relation"),
        "swap": Claim(said, [f"{the(second)} is {RELATIONS[where]} {the(first)}"], "relation"),
        "attribute": Claim(said, [f"{the(stranger)} is {RELATIONS[where]} {the(second)}"], "attribute"),
        "presence": Claim(f"there is {a(first)}", [f"there is a {first[0]} {shape2}"], "object"),
    })


def cross(first: Actor, second: Actor, direction: str = "right", lanes: tuple[float, float] = (TOP, BOTTOM),
          frames: int = FRAMES, fps: float = FPS) -> Story:
    """``first`` crossing towards ``direction`` in the top lane while ``second`` crosses the other way in the bottom
    lane (the foil swapping who goes which way is the time-reversed video)."""
    salt = repr(sorted(locals().items()))  # its settings choose its foils' words
    back = OPPOSITE[direction]
    ends = {"right": (LEFT, RIGHT), "left": (RIGHT, LEFT)}
    scene = Scene(fps)
    scene.add(first[1], first[0], glide(frames, (ends[direction][0], lanes[0]), (ends[direction][1], lanes[0])))
    scene.add(second[1], second[0], glide(frames, (ends[back][0], lanes[1]), (ends[back][1], lanes[1])))
    return Story(scene, {
        "compositionality": Claim(f"{a(first)} moves {TOWARDS[direction]} and {a(second)} moves {TOWARDS[back]}",
                                  [f"{a(second)} moves {TOWARDS[direction]} and {a(first)} moves {TOWARDS[back]}"],
                                  "actor", reverses=True),
        "direction": Claim(f"{a(first)} moves {TOWARDS[direction]} and {a(second)} moves {TOWARDS[back]}",
                           [f"{a(first)} moves {TOWARDS[back]} and {a(second)} moves {TOWARDS[direction]}"],
                           "direction", reverses=True),
        "presence": Claim(f"there is {a(first)}",
                          [f"there is a {first[0]} {other_shape(first[1], second[1], salt=salt)}"], "object"),
    })


def chase(chaser: Actor, leader: Actor, direction: str = "right", lane: float = MIDDLE, frames: int = FRAMES,
          fps: float = FPS) -> Story:
    """``chaser`` following ``leader`` towards ``direction`` along one line, 40 px behind (the foil swapping them
    is the time-reversed video)."""
    salt = repr(sorted(locals().items()))  # its settings choose its foils' words
    sign = 1 if direction == "right" else -1
    start = MIDDLE - sign * 44
    scene = Scene(fps)
    scene.add(chaser[1], chaser[0], glide(frames, (start, lane), (start + sign * 48, lane)))
    scene.add(leader[1], leader[0], glide(frames, (start + sign * 40, lane), (start + sign * 88, lane)))
    return Story(scene, {
        "swap": Claim(f"{the(chaser)} chases {the(leader)}", [f"{the(leader)} chases {the(chaser)}"], "actor",
                      reverses=True),
        "presence": Claim(f"there is {a(chaser)}",
                          [f"there is a {chaser[0]} {other_shape(chaser[1], leader[1], salt=salt)}"], "object"),
    })


def episode(mover: Actor, jumper: Actor, direction: str = "right", count: int = 2, event_frames: int = 20,
            fps: float = FPS, lane: float = TOP, jump_x: float | None = None, jump_first: bool = True,
            about_mover: bool = True) -> Story:
    """Two events of ``event_frames`` each (VELOCITI's Ev1, Ev2), in the order ``jump_first`` draws.

    The jump event: ``mover`` crosses the top ``lane`` quickly towards ``direction`` while ``jumper`` jumps ``count``
    times on the floor at ``jump_x`` (default: 10 px from the middle on the side where ``mover`` rests). The move
    event: ``mover`` rests at its end of the lane; ``jumper`` moves slowly the other way, from ``jump_x`` (to it when
    this event comes first). Either order is the other's time reversal, so a bag of frames cannot tell them apart, and
    every claim (its event, "first... then", "before"/"after") follows the order. Claims are keyed by VELOCITI test
    name (``when`` = the events) and by ATP-Hard question type (TN, TP, TC: five statements, one true).
    ``about_mover``: whose action the action claims (binding, adversarial, manner) and ATP-Hard's TN and TC are about
    (the mover's quick crossing, the foil binding the jump to it, or the jumper's jump and slow move back), so their
    wording does not give the answer. ATP-Hard's TP asks for the count among the answers one to five.
    """
    salt = repr(sorted(locals().items()))  # its settings choose its foils' words
    n = event_frames
    back = OPPOSITE[direction]
    sign = 1 if direction == "right" else -1
    start, end = (MIDDLE - sign * 40, lane), (MIDDLE + sign * 40, lane)
    rest = 1 if jump_first else -1  # the mover rests at its end (after crossing) or its start (before it)
    jump_x = MIDDLE + rest * sign * 10 if jump_x is None else jump_x
    crossing, hopping = glide(n, start, end), hops(n, count, jump_x)
    returning = glide(n, (jump_x, FLOOR), (jump_x - sign * SLOW, FLOOR)) if jump_first \
        else glide(n, (jump_x + sign * SLOW, FLOOR), (jump_x, FLOOR))
    scene = Scene(fps)
    if jump_first:
        scene.add(mover[1], mover[0], crossing + still(n, end))
        scene.add(jumper[1], jumper[0], hopping + returning)
    else:
        scene.add(mover[1], mover[0], still(n, start) + crossing)
        scene.add(jumper[1], jumper[0], returning + hopping)
    jumping, moving = ("Ev1", "Ev2") if jump_first else ("Ev2", "Ev1")
    then, counted = ("after", "before") if jump_first else ("before", "after")  # move vs jump, jump vs move
    m, j = the(mover), the(jumper)
    goes, returns = f"moves {TOWARDS[direction]}", f"moves {TOWARDS[back]}"
    recolour = other_colour(jumper[0], mover[0], salt=salt)
    absent = (recolour, mover[1])
    jumped, returned = f"{j} jumps", f"{j} {returns}"
    chrono = [f"first, {jumped}. then, {returned}", f"first, {returned}. then, {jumped}"]
    if not jump_first:
        chrono.reverse()
    # ATP-Hard's TN / TC: what one shape does after (or before) / while the other acts, asked of either shape; each
    # question's five answers are the four things the shapes do and one that neither does, so every answer is as
    # often true as chance makes it and no answer's wording tells a true one from a foil
    during = {m: f"moves quickly {TOWARDS[direction]}", j: "jumps"}  # in the jump event
    later_act = {m: "stays still", j: f"moves slowly {TOWARDS[back]}"}  # in the move event
    clause = {m: goes, j: "jumps"}
    phrases = [*during.values(), *later_act.values(),
               _other("never", [f"moves quickly {TOWARDS[back]}", f"moves slowly {TOWARDS[direction]}"], salt)]
    x, y = (m, j) if about_mover else (j, m)
    if about_mover:
        bind = Claim(f"{m} {goes}", [f"{m} jumps"], "action", jumping)
        manner = Claim(f"{m} moves quickly {TOWARDS[direction]}", [f"{m} moves slowly {TOWARDS[direction]}"], "speed",
                       jumping)
    else:
        bind = Claim(jumped, [f"{j} {goes}"], "action", jumping)
        manner = Claim(f"{j} moves slowly {TOWARDS[back]}", [f"{j} moves quickly {TOWARDS[back]}"], "speed", moving)
    return Story(scene, {
        "action_bind": bind,
        "action_adv": Claim(f"{x} {clause[x]}", [f"{x} {_other('adverse', ['grows', 'shrinks'], salt)}"], "action",
                            jumping),
        "agent_bind": Claim(f"{m} {goes} while {j} jumps", [f"{j} {goes} while {m} jumps"], "actor", jumping),
        "agent_random": Claim(f"{m} {goes}", [f"{the(absent)} {goes}"], "attribute", jumping),
        "action_manner": manner,
        "chrono": Claim(chrono[0], chrono[1:], "order", "(Ev1, Ev2)"),
        "coref": Claim(f"the shape that jumps is also the one that {returns}",
                       [f"the shape that {goes} is also the one that {returns}"], "actor", "(Ev1, Ev2)"),
        "control": Claim(f"{m} {goes}", [], "control", jumping),
        "TN": _asked(x, y, clause[y], then, true=later_act[x], phrases=phrases),
        "TP": Claim(f"{j} jumps exactly {times(count)} {counted} {j} {returns}",
                    [f"{j} jumps exactly {times(k)} {counted} {j} {returns}" for k in range(1, 6) if k != count],
                    "count", question=f"how many times does {j} jump {counted} it {returns}",
                    answers=[NUMBERS[count]] + [NUMBERS[k] for k in range(1, 6) if k != count]),
        "TC": _asked(x, y, clause[y], "while", true=during[x], phrases=phrases),
    })
