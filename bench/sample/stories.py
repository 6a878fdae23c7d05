"""Stories: a scene together with the caption that is true of it and foils that change exactly one fact."""

from __future__ import annotations

from dataclasses import dataclass

from bench.sample.scenes import SIZE, Scene, appear, glide, hops

NUMBERS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}
LEFT, RIGHT, MIDDLE = 18.0, SIZE - 18.0, SIZE / 2


@dataclass
class Story:
    """A scene and what is true and false of it; ``fact`` names what the foils change."""

    scene: Scene
    caption: str
    foils: list[str]
    fact: str
    proficiency: tuple[str, str]


def move(colour: str, shape: str, rightwards: bool, frames: int = 30, fps: float = 10) -> Story:
    """A shape crossing the stage; the foil reverses the direction."""
    scene = Scene(frames, fps)
    start, end = ((LEFT, MIDDLE), (RIGHT, MIDDLE)) if rightwards else ((RIGHT, MIDDLE), (LEFT, MIDDLE))
    scene.add(shape, colour, glide(frames, start, end))
    way, other = ("from left to right", "from right to left") if rightwards else ("from right to left",
                                                                                  "from left to right")
    return Story(scene, f"a {colour} {shape} moves {way}", [f"a {colour} {shape} moves {other}"], "direction",
                 (f"there is a {colour} {shape}", f"there is a {colour} {_other_shape(shape)}"))


def speed(colour: str, shape: str, fast: bool, frames: int = 30, fps: float = 10) -> Story:
    """A shape moving right, fast (across the stage) or slowly (a short way); the foil swaps the speed."""
    scene = Scene(frames, fps)
    scene.add(shape, colour, glide(frames, (LEFT, MIDDLE), (RIGHT if fast else LEFT + 14, MIDDLE)))
    word, other = ("quickly", "slowly") if fast else ("slowly", "quickly")
    return Story(scene, f"a {colour} {shape} moves {word} to the right", [f"a {colour} {shape} moves {other} to the right"],
                 "intensity", (f"there is a {colour} {shape}", f"there is a {colour} {_other_shape(shape)}"))


def jumps(colour: str, shape: str, count: int, foil_counts: list[int], frames: int = 30, fps: float = 10) -> Story:
    """A shape jumping exactly ``count`` times; each foil names another count."""
    scene = Scene(frames, fps)
    scene.add(shape, colour, hops(frames, count))
    def say(n: int) -> str:
        return f"a {colour} {shape} jumps exactly {NUMBERS[n]} times"
    return Story(scene, say(count), [say(n) for n in foil_counts], "count",
                 (f"a {colour} {shape} jumps", f"a {colour} {shape} spins"))


def sequence(first: tuple[str, str], second: tuple[str, str], frames: int = 30, fps: float = 10) -> Story:
    """Two shapes appearing one after the other; the foil swaps the order."""
    scene = Scene(frames, fps)
    scene.add(first[1], first[0], appear(frames, frames // 5, (LEFT + 10, MIDDLE)))
    scene.add(second[1], second[0], appear(frames, 3 * frames // 5, (RIGHT - 10, MIDDLE)))
    a, b = " ".join(first), " ".join(second)
    return Story(scene, f"first a {a} appears, then a {b} appears", [f"first a {b} appears, then a {a} appears"],
                 "order", (f"a {a} and a {b} appear", f"a {a} and a green triangle appear"))


def change(shape: str, before: str, after: str, frames: int = 30, fps: float = 10) -> Story:
    """A still shape changing colour halfway; the foil reverses the change."""
    scene = Scene(frames, fps)
    scene.add(shape, [before if t < frames // 2 else after for t in range(frames)], [(MIDDLE, MIDDLE)] * frames)
    return Story(scene, f"the {shape} turns from {before} to {after}", [f"the {shape} turns from {after} to {before}"],
                 "change of state", (f"there is a {shape}", f"there is a {_other_shape(shape)}"))


def cross(a: tuple[str, str], b: tuple[str, str], frames: int = 30, fps: float = 10) -> Story:
    """Two shapes crossing: ``a`` moves right, ``b`` moves left; the foil swaps who does what."""
    scene = Scene(frames, fps)
    scene.add(a[1], a[0], glide(frames, (LEFT, MIDDLE - 22), (RIGHT, MIDDLE - 22)))
    scene.add(b[1], b[0], glide(frames, (RIGHT, MIDDLE + 22), (LEFT, MIDDLE + 22)))
    sa, sb = " ".join(a), " ".join(b)
    return Story(scene, f"a {sa} moves right and a {sb} moves left", [f"a {sb} moves right and a {sa} moves left"],
                 "compositionality", (f"there is a {sa}", "there is a green triangle"))


def beside(a: tuple[str, str], b: tuple[str, str], frames: int = 30, fps: float = 10) -> Story:
    """``a`` still left of ``b``; the foil swaps the relation."""
    scene = Scene(frames, fps)
    scene.add(a[1], a[0], [(LEFT + 8, MIDDLE)] * frames)
    scene.add(b[1], b[0], [(RIGHT - 8, MIDDLE)] * frames)
    sa, sb = " ".join(a), " ".join(b)
    return Story(scene, f"a {sa} is left of a {sb}", [f"a {sa} is right of a {sb}"], "relation",
                 (f"there is a {sa}", "there is a green triangle"))


def _other_shape(shape: str) -> str:
    return "circle" if shape == "square" else "square"
