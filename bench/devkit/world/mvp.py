"""MVP's files in the generated world, as HF ``facebook/minimal_video_pairs`` releases them: per subset a folder of
``full-00000-of-00001.parquet`` and ``mini-00000-of-00001.parquet`` (rows ``video_id, video_path, question, answer,
candidates, source``; ``candidates`` a Python list literal), videos under ``<source>/`` as ``make download_videos``
files them.

Each minimal pair is a counterfactual pair of the world (:func:`bench.devkit.world.draw.pair`): two videos asked one
question with the same two options, each video's caption the other's foil, so each video has the other answer; for
all kinds but ``relation`` the second video is the first played backwards. ``mini`` holds every other pair.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from bench.devkit.world import draw
from bench.devkit.world.draw import rng_for
from bench.devkit.world.files import Labels, count, sentence, video

# subset -> (pair kinds of draw.PAIRS, the source folders its videos are filed under: the real sources' names)
SUBSETS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "human_object_interactions": (("state", "size"), ("pt", "ssv2")),
    "robot_object_interactions": (("actor",), ("language_table",)),
    "intuitive_physics": (("direction", "relation"), ("clevrer", "intphys")),
    "temporal_reasoning": (("order",), ("star", "vinoground")),
}
QUESTIONS = {
    "order": "Which happens first?",
    "relation": "Where are the two shapes?",
    "state": "How does the shape change?",
    "direction": "Which way does the shape move?",
    "actor": "Which shape chases the other?",
    "size": "How does the shape change?",
}
FULL_PAIRS = 50  # per subset
FILE = "{split}-00000-of-00001.parquet"


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)


def write_mvp(root: Path, size: str = "small", seed: int = 0) -> None:
    """MVP: ``data/<subset>/{full,mini}-00000-of-00001.parquet``, videos under ``videos/<source>/``."""
    labels = Labels()
    number = 0
    for subset, (kinds, sources) in SUBSETS.items():
        full, mini = [], []
        for k in range(count(size, 2, FULL_PAIRS)):
            rng = rng_for(seed, "mvp", subset, k)
            kind, source = kinds[k % len(kinds)], sources[k % len(sources)]
            first, second, claim_kind = draw.pair(rng, kind)
            answers = [sentence(first.true(claim_kind)), sentence(second.true(claim_kind))]
            candidates = answers if rng.random() < 0.5 else answers[::-1]
            pair = f"{source}_{number:05d}"
            number += 1
            rows = []
            for side, (story, answer) in enumerate(zip((first, second), answers)):
                video_id = f"{pair}_{side}"
                video(root / "videos", f"{source}/{video_id}.mp4", story.scene)
                rows.append({"video_id": video_id, "video_path": f"{source}/{video_id}.mp4",
                             "question": QUESTIONS[kind], "answer": answer, "candidates": repr(candidates),
                             "source": source})
            full += rows
            if k % 2 == 0:
                mini += rows
            labels.add(f"{subset}/{pair}", first.claims[claim_kind].foil_type)
        _write(root / "data" / subset / FILE.format(split="full"), full)
        _write(root / "data" / subset / FILE.format(split="mini"), mini)
    labels.write(root)
