"""TempCompass in the generated world, in the repository's layout: ``questions/<task>.json`` (multi-choice, yes_no,
caption_matching, captioning), ``meta_info.json`` and ``videos/<id>.mp4``, with ``labels.csv`` beside them.

Each video is asked about one temporal aspect: direction (a shape crossing the stage), speed (a quick or slow
crossing), action (moving, jumping), order (two shapes acting in turn) or attribute change (a shape changing colour
or size). As TempCompass does with its conflicting videos, every direction, order and attribute-change video has a
twin ``<id>_reverse``, the same clip played backwards, of which the first foil is true and the true statement false.
Every (video, aspect) is asked in the four formats, with TempCompass' question shapes: multi-choice options
``A. ...``, yes/no questions about each statement, caption matching in the three released templates (``Caption A``,
``Option 1``, ``Sentence A``) and the captioning instruction with ``Information X: {...}`` lines. The statements are
sentences of the world's grammar, so ``tests/world_reader.py`` can check them against the decoded videos.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.devkit.world import draw, files
from bench.devkit.world.draw import pick, rng_for
from bench.devkit.world.files import Labels, count, placed, sentence, video, write_json
from bench.devkit.world.stories import OPPOSITE, TOWARDS, WAY, Story, a

FULL = 25  # videos per aspect in the full world (each reversible one has a twin)
# eval_utils.py L79-83: the three caption-matching templates
TEMPLATES = ("Which caption matches the video better?\nCaption A: {a}\nCaption B: {b}",
             "Which description is a more suitable match for the video?\nOption 1: {a}\nOption 2: {b}",
             "Which sentence better captures the essence of the video?\nSentence A: {a}\nSentence B: {b}")
# questions/captioning.json: the instruction before the information lines (as released)
INSTRUCTION = ("You will be presented with a video and several pieces of information. One piece of information is "
               "consistent with the video while the others are not. Please identify the information that consistent "
               "with the video and generate a video caption accordingly.")
STEMS = {"action": ("What is happening in the video?", "Which action does the video show?"),
         "direction": ("In which direction does the shape move?", "Which way is the shape headed?"),
         "speed": ("How fast does the shape move?", "At what pace does the shape cross the stage?"),
         "order": ("In what order do the events happen?", "What is the sequence of events?"),
         "attribute_change": ("How does the shape change?", "What happens to the shape over time?")}
FOIL_TYPES = {"action": "action", "direction": "direction", "speed": "speed", "order": "order",
              "attribute_change": "state"}
LETTERS = "ABCD"


@dataclass
class Asked:
    """One video's aspect: its scene, statements (the true one first), fine-grained aspect, meta entry, and whether
    its reversed twin makes the first foil true."""

    story: Story
    statements: list[str]
    fine: str
    meta: dict
    reverses: bool


def _subject(story: Story, index: int = 0) -> str:
    actor = story.scene.actors[index]
    return f"{actor.colours[0]} {actor.shape}"


def _direction(rng: np.random.Generator) -> Asked:
    way = pick(rng, draw.DIRECTIONS)
    story = draw.move(rng, pace="steady", direction=way)
    across = pick(rng, ("up", "down") if way in ("left", "right") else ("right", "left"))
    actor = (story.scene.actors[0].colours[0], story.scene.actors[0].shape)
    said = [f"{a(actor)} moves {WAY[w]}" for w in (way, OPPOSITE[way], across)]
    return Asked(story, said, "object motion",
                 {"subject": _subject(story), "direction": WAY[way], "type": "object motion"}, True)


def _speed(rng: np.random.Generator) -> Asked:
    pace, way = pick(rng, ("quick", "slow")), pick(rng, ("right", "left"))
    story = draw.move(rng, pace=pace, direction=way)
    actor = (story.scene.actors[0].colours[0], story.scene.actors[0].shape)
    words = ("quickly", "slowly") if pace == "quick" else ("slowly", "quickly")
    said = [f"{a(actor)} moves {w} {TOWARDS[way]}" for w in words]
    return Asked(story, said, "absolute speed", {"subject": _subject(story), "speed": words[0],
                                                  "type": "absolute speed"}, False)


def _action(rng: np.random.Generator, i: int) -> Asked:
    story = (draw.move(rng, pace="steady") if i % 2 == 0 else draw.jumps(rng))
    claim = story.claims["action"]
    return Asked(story, [claim.true, *claim.false], "coarse-grained action",
                 {"subject": _subject(story), "action": claim.true.split(" ", 3)[-1], "type": "coarse-grained action"},
                 False)


def _order(rng: np.random.Generator) -> Asked:
    story = draw.sequence(rng)
    claim = story.claims["sequence"]
    first, second = claim.true.split(" and then ")
    return Asked(story, [claim.true, claim.false[0]], "order",
                 {"subject": "two shapes", "event1": first, "event2": second}, True)


def _attribute_change(rng: np.random.Generator, i: int) -> Asked:
    story, kind, fine = (draw.change(rng), "change", "color & light change") if i % 2 == 0 else \
        (draw.resize(rng), "action", "size & shape change")
    claim = story.claims[kind]
    return Asked(story, [claim.true, claim.false[0]], fine,
                 {"subject": _subject(story), "attribute_change": claim.true, "type": fine}, True)


def _drawn(aspect: str, rng: np.random.Generator, i: int) -> Asked:
    if aspect == "direction":
        return _direction(rng)
    if aspect == "speed":
        return _speed(rng)
    if aspect == "action":
        return _action(rng, i)
    if aspect == "order":
        return _order(rng)
    return _attribute_change(rng, i)


def _questions(aspect: str, said: list[str], rng: np.random.Generator, size: str) -> dict[str, list[dict]]:
    """The four tasks' questions about one video's aspect (``said``: the true statement first)."""
    n = len(said)
    out: dict[str, list[dict]] = {"multi-choice": [], "yes_no": [], "caption_matching": [], "captioning": []}
    for stem in STEMS[aspect][:count(size, 1, 2)]:
        shift = int(rng.integers(n))
        order = [(shift + j) % n for j in range(n)]
        lines = [f"{LETTERS[j]}. {said[o]}" for j, o in enumerate(order)]
        out["multi-choice"].append({"question": "\n".join([stem, *lines]), "answer": lines[order.index(0)]})
    for k, text in enumerate(said[:count(size, 2, n)]):
        out["yes_no"].append({"question": f"Is it true that {text}?", "answer": "yes" if k == 0 else "no"})
    for k, foil in enumerate(said[1:count(size, 2, n)]):
        first = bool(rng.random() < 0.5)
        pair = (sentence(said[0]), sentence(foil)) if first else (sentence(foil), sentence(said[0]))
        question = pick(rng, TEMPLATES).format(a=pair[0], b=pair[1])
        out["caption_matching"].append({"question": question, "answer": question.split("\n")[1 if first else 2]})
    shift = int(rng.integers(n))
    order = [(shift + j) % n for j in range(n)]
    info = [f"Information {LETTERS[j]}: {{'subject': 'shape', '{aspect}': '{said[o]}'}}" for j, o in enumerate(order)]
    out["captioning"].append({"question": "\n".join([INSTRUCTION, *info, "Generated Caption:"]),
                              "answer": f"{LETTERS[order.index(0)]}. {said[0]}"})
    return out


def write_tempcompass(root: Path, size: str = "small", seed: int = 0) -> None:
    """TempCompass: ``questions/<task>.json``, ``meta_info.json``, ``videos/<id>.mp4`` (and ``<id>_reverse.mp4``)."""
    tasks: dict[str, dict] = {t: {} for t in ("multi-choice", "yes_no", "caption_matching", "captioning")}
    meta, labels = {}, Labels()
    number = 0
    for aspect in STEMS:
        for i in range(count(size, 1, FULL)):
            rng = rng_for(seed, "tempcompass", aspect, i)
            asked = _drawn(aspect, rng, i)
            vid = str(7000000001 + number)
            number += 1
            video(root / "videos", f"{vid}.mp4", asked.story.scene)
            worlds = [(vid, asked.statements, asked.meta)]
            if asked.reverses:
                frames = placed(asked.story.scene).render()[::-1]
                files.write_video(root / "videos" / f"{vid}_reverse.mp4", np.ascontiguousarray(frames),
                                  asked.story.scene.fps)
                flipped = [asked.statements[1], asked.statements[0], *asked.statements[2:]]
                worlds.append((f"{vid}_reverse", flipped, _reversed_meta(aspect, asked.meta, flipped[0])))
            for name, said, entry in worlds:
                meta[name] = {"eval_dim": {a: (entry if a == aspect else None) for a in STEMS}, "content": ["abstract"]}
                for task, questions in _questions(aspect, said, rng, size).items():
                    tasks[task][name] = {aspect: questions}
                    for k in range(len(questions)):
                        labels.add(f"{task}/{name}/{aspect}/{k}", FOIL_TYPES[aspect])
    for task, data in tasks.items():
        write_json(root / "questions" / f"{task}.json", data)
    write_json(root / "meta_info.json", meta)
    labels.write(root)


def _reversed_meta(aspect: str, entry: dict, true: str) -> dict:
    """The meta entry of a reversed twin: what its true statement says."""
    if aspect == "direction":
        way = next(w for w in WAY if true.endswith(f"moves {WAY[w]}"))
        return {**entry, "direction": WAY[way]}
    if aspect == "order":
        first, second = true.split(" and then ")
        return {**entry, "event1": first, "event2": second}
    return {**entry, "attribute_change": true}
