"""TVBench in the generated world, in the dataset's layout: ``json/<task>.json`` (MVBench's ``{video, question,
candidates, answer}``, with ``start`` and ``end`` for the windowed Action Sequence) and ``video/<task>/<name>.mp4``,
with ``labels.csv`` beside them.

Six of the ten tasks have a counterpart in the world's stories: Action Count (how many times a shape jumps), Object
Count (how many shapes stand on the stage), Action Sequence (which of two shapes jumps first), Action Antonym (a shape
growing or shrinking), Moving Direction (where a shape moves) and Scene Transition (a shape changing colour, from
which to which). Candidates are drawn in a random order per question, so the true one's letter varies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np

from bench.devkit.world import draw
from bench.devkit.world.draw import pick, rng_for
from bench.devkit.world.files import Labels, count, seconds, video, write_json
from bench.devkit.world.stories import Story

FULL = 40  # questions per task in the full world
Asked = tuple[Story, str, list[str], str]  # the story, the question, the candidates (the true one first), foil type


def _shape(story: Story, index: int = 0) -> str:
    actor = story.scene.actors[index]
    return f"the {actor.colours[0]} {actor.shape}"


def _action_count(rng: np.random.Generator) -> Asked:
    jumps = int(rng.integers(1, 5))
    story = draw.jumps(rng, count=jumps)
    return (story, f"How many times does {_shape(story)} jump?",
            [str(jumps), *(str(n) for n in range(1, 5) if n != jumps)], "count")


def _object_count(rng: np.random.Generator) -> Asked:
    story = draw.crowd(rng)
    n = len(story.scene.actors)
    return story, "How many shapes are on the stage?", [str(n), *(str(k) for k in range(1, 5) if k != n)], "count"


def _action_sequence(rng: np.random.Generator) -> Asked:
    story = draw.sequence(rng, verb="jumps")
    return story, "Which shape jumps first?", [_shape(story, 0), _shape(story, 1)], "order"


def _action_antonym(rng: np.random.Generator) -> Asked:
    story = draw.resize(rng)
    grows = story.claims["action"].true.endswith("grows")
    return (story, f"What does {_shape(story)} do?", ["grows", "shrinks"] if grows else ["shrinks", "grows"],
            "state")


def _moving_direction(rng: np.random.Generator) -> Asked:
    way = pick(rng, draw.DIRECTIONS)
    story = draw.move(rng, pace="steady", direction=way)
    return (story, f"In which direction does {_shape(story)} move?",
            [way, *(d for d in draw.DIRECTIONS if d != way)], "direction")


def _scene_transition(rng: np.random.Generator) -> Asked:
    story = draw.change(rng)
    before, after = story.claims["change"].true.rsplit(" from ", 1)[1].split(" to ")
    return (story, f"How does the {story.scene.actors[0].shape} change colour?",
            [f"from {before} to {after}", f"from {after} to {before}"], "state")


# task file stem -> (question drawer, read with a window)
TASKS: dict[str, tuple[Callable[[np.random.Generator], Asked], bool]] = {
    "action_count": (_action_count, False),
    "object_count": (_object_count, False),
    "action_sequence": (_action_sequence, True),
    "action_antonym": (_action_antonym, False),
    "moving_direction": (_moving_direction, False),
    "scene_transition": (_scene_transition, False),
}


def write_tvbench(root: Path, size: str = "small", seed: int = 0) -> None:
    """TVBench: ``json/<task>.json`` for six tasks and ``video/<task>/<name>.mp4``."""
    labels = Labels()
    for stem, (drawer, windowed) in TASKS.items():
        records = []
        for n in range(count(size, 2, FULL)):
            rng = rng_for(seed, "tvbench", stem, n)
            story, question, said, foil_type = drawer(rng)
            name = f"smpltvb_{stem}_{n:03d}.mp4"
            video(root / "video" / stem, name, story.scene)
            candidates = [said[k] for k in rng.permutation(len(said))]
            record = {"video": name, "question": question, "candidates": candidates, "answer": said[0]}
            if windowed:
                record.update(start=0.0, end=float(seconds(story.scene)))
            records.append(record)
            labels.add(f"{stem}/{n}", foil_type)
        write_json(root / "json" / f"{stem}.json", records)
    labels.write(root)
