"""Writers of small MVP files in the released format: HF ``facebook/minimal_video_pairs``, one folder per subset with
``full-00000-of-00001.parquet`` and ``mini-00000-of-00001.parquet`` of rows ``video_id, video_path, question, answer,
candidates, source`` (the dataset card's features; ``candidates`` a Python list literal, read by
``tasks/mvp/utils.py`` ``get_candidates``). The rows are made up in that format."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def question(video_id: str, answer: str, candidates: list[str], question: str = "Will the red ball hit the cube?",
             source: str = "clevrer", path: str | None = None) -> dict:
    """One row: a question about one video (``candidates`` written as the release writes them, a list literal)."""
    return {"video_id": video_id, "video_path": path or f"{source}/{video_id}.mp4", "question": question,
            "answer": answer, "candidates": repr(candidates), "source": source}


def pair(pair_id: str, answers: tuple[str, str], candidates: list[str], **fields) -> list[dict]:
    """The two rows of a minimal pair: ``<pair_id>_0`` and ``<pair_id>_1`` with their answers."""
    return [question(f"{pair_id}_{k}", answer, candidates, **fields) for k, answer in enumerate(answers)]


def write(root: Path, subset: str, rows: list[dict], split: str = "full") -> Path:
    """``root/<subset>/<split>-00000-of-00001.parquet``."""
    path = root / subset / f"{split}-00000-of-00001.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def write_mvp(root: Path) -> Path:
    """Three pairs in two subsets (full split) and one of them in the mini split."""
    physics = (pair("clevrer_17", ("yes", "no"), ["yes", "no"])
               + pair("intphys_O1_02", ("no", "yes"), ["yes", "no"], question="Is this video physically possible?",
                      source="intphys"))
    temporal = pair("star_Interaction_T1_2", ("The door.", "The window."), ["The door.", "The window."],
                    question="Which object was opened by the person?", source="star")
    write(root, "intuitive_physics", physics)
    write(root, "temporal_reasoning", temporal)
    write(root, "intuitive_physics", physics[:2], split="mini")
    write(root, "temporal_reasoning", temporal, split="mini")
    return root
