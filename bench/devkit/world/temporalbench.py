"""TemporalBench's files in the generated world, as HF ``microsoft/TemporalBench`` releases them:
``temporalbench_short_qa.json`` and ``temporalbench_long_qa.json`` (lists of ``{idx, video_name, question, GT,
dataset, category}``, ``idx`` the video's name and the question's number), videos under ``short_video/<dataset>/``
and ``long_video/<dataset>/``.

Each short video is a story of the world asked about two of its claims, one binary question per foil: the true
sentence against the foil, in a drawn order (``GT`` its letter), the category the claim's kind stands for. A long
video is two short stories one after the other, asked whether its first or its second part is told right.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np

from bench.devkit.world import draw, files
from bench.devkit.world.draw import pick, rng_for
from bench.devkit.world.files import Labels, count, placed, seconds, sentence, video, write_json
from bench.devkit.world.stories import Story
from bench.scoring.prompts import PROMPTS

# the sources TemporalBench's videos come from (get_qa_acc.py's per-dataset table)
DATASETS = ("ActivityNet", "Charades", "COIN", "EgoExo4D", "Movie_Description", "Oops", "FineGym")
# story drawer -> {claim kind asked: TemporalBench category}
PLANS: tuple[tuple[Callable[[np.random.Generator], Story], dict[str, str]], ...] = (
    (lambda rng: draw.move(rng, pace=pick(rng, ("quick", "slow"))),
     {"direction": "Motion Direction/Orientation", "intensity": "Motion Magnitude"}),
    (draw.jumps, {"count": "Action Frequency", "attribute": "Others"}),
    (draw.sequence, {"sequence": "Action Order", "chrono": "Event Order"}),
)
LONG_PARTS = ((draw.move, "direction"), (draw.sequence, "sequence"))  # a long video: these two stories in turn


def _question(rng: np.random.Generator, idx: str, name: str, dataset: str, true: str, foil: str,
              category: str) -> dict:
    true_first = bool(rng.random() < 0.5)
    a, b = (true, foil) if true_first else (foil, true)
    return {"idx": idx, "video_name": name, "question": PROMPTS["temporalbench"].format(option_a=a, option_b=b),
            "GT": "A" if true_first else "B", "dataset": dataset, "category": category}


def _short(root: Path, size: str, seed: int, labels: Labels) -> list[dict]:
    questions = []
    for v in range(count(size, 6, 120)):
        rng = rng_for(seed, "temporalbench", "short", v)
        drawer, asked = PLANS[v % len(PLANS)]
        story, dataset = drawer(rng), DATASETS[v % len(DATASETS)]
        name = f"short_video/{dataset}/smpltb{v:03d}_start_0.0_end_{float(seconds(story.scene)):.1f}.mp4"
        video(root, name, story.scene)
        foils = [(story.claims[kind], foil, category) for kind, category in asked.items()
                 for foil in story.claims[kind].false]
        for k, (claim, foil, category) in enumerate(foils):
            questions.append(_question(rng, f"{name}_{k}", name, dataset, sentence(claim.true), sentence(foil),
                                       category))
            labels.add(f"{name}_{k}", claim.foil_type)
    return questions


def _long(root: Path, size: str, seed: int, labels: Labels) -> list[dict]:
    questions = []
    for v in range(count(size, 2, 20)):
        rng = rng_for(seed, "temporalbench", "long", v)
        parts = [(drawer(rng), kind) for drawer, kind in LONG_PARTS]
        dataset = DATASETS[v % len(DATASETS)]
        name = f"long_video/{dataset}/smpltblong{v:03d}.mp4"
        frames = np.concatenate([placed(story.scene).render() for story, _ in parts])
        files.write_video(root / name, frames, parts[0][0].scene.fps)
        told = [sentence(story.true(kind)) for story, kind in parts]
        for k, (story, kind) in enumerate(parts):
            claim = story.claims[kind]
            foil = " ".join(sentence(claim.false[0]) if j == k else t for j, t in enumerate(told))
            idx = f"{name}_{k}"
            questions.append(_question(rng, idx, name, dataset, " ".join(told), foil, ""))
            labels.add(idx, claim.foil_type)
    return questions


def write_temporalbench(root: Path, size: str = "small", seed: int = 0) -> None:
    """TemporalBench: the two QA files in ``root``, videos under ``short_video/`` and ``long_video/``."""
    labels = Labels()
    write_json(root / "temporalbench_short_qa.json", _short(root, size, seed, labels))
    write_json(root / "temporalbench_long_qa.json", _long(root, size, seed, labels))
    labels.write(root)
