"""Small TemporalBench QA files in the released format (HF ``microsoft/TemporalBench``: lists of ``{idx, video_name,
question, GT, dataset, category}``). :data:`README_ROW` is the data instance of mu-cai/TemporalBench ``README.md``
(L188-195), verbatim; the other rows are made up in the same format."""

from __future__ import annotations

import json
from pathlib import Path

README_ROW = {
    "idx": "short_video/Charades/EEVD3_start_11.4_end_16.9.mp4_0",
    "video_name": "short_video/Charades/EEVD3_start_11.4_end_16.9.mp4",
    "category": "Action Effector",
    "source_dataset": "Charades",
    "question": "Which caption best describes this video?\nA. A person closes the door of the fridge with his left "
                "hand while looking at the bowl of fruit he holds in his right hand. He transfers the bowl from his right "
                "hand to his left hand. He picks up a fruit from the bowl with his left hand. He tosses the fruit up "
                "with his left hand and catches it with the same hand while walking forward. \nB. A person closes the "
                "door of the fridge with his left hand while looking at the bowl of fruit he holds in his right hand. "
                "He transfers the bowl from his right hand to his left hand. He picks up a fruit from the bowl with "
                "his right hand. He tosses the fruit up with his right hand and catches it with the same hand while "
                "walking forward.\nAnswer with the option's letter from the given choices directly.",
    "GT": "B",
}
HEAD = "Which caption best describes this video?"
TAIL = "Answer with the option's letter from the given choices directly."


def entry(video: str, k: int, true: str, foil: str, gt: str = "A", dataset: str = "COIN",
          category: str | None = "Action Order") -> dict:
    """Question ``k`` about ``video``: ``true`` against ``foil``, the true caption at ``gt``."""
    a, b = (true, foil) if gt == "A" else (foil, true)
    found = {"idx": f"{video}_{k}", "video_name": video, "question": f"{HEAD}\nA. {a}\nB. {b}\n{TAIL}", "GT": gt,
             "dataset": dataset}
    if category is not None:
        found["category"] = category
    return found


def short_entries() -> list[dict]:
    """Two COIN videos (two and one questions) and one FineGym video (two questions)."""
    one, two, gym = ("short_video/COIN/abc_start_1.0_end_9.5.mp4", "short_video/COIN/xyz_start_0.0_end_7.0.mp4",
                     "short_video/FineGym/g1_start_3.2_end_8.0.mp4")
    return [entry(one, 0, "He opens the lid, then pours.", "He pours, then opens the lid."),
            entry(one, 1, "He opens the lid, then pours.", "He opens the lid, then stirs.", gt="B",
                  category="Action Type"),
            entry(two, 0, "She cuts twice.", "She cuts three times.", category="Action Frequency"),
            entry(gym, 0, "The gymnast turns left.", "The gymnast turns right.", gt="B", dataset="FineGym",
                  category="Motion Direction/Orientation"),
            entry(gym, 1, "The gymnast turns left.", "The gymnast turns left slowly.", dataset="FineGym",
                  category="Motion Magnitude")]


def long_entries() -> list[dict]:
    """One long video asked two questions, without categories (as the official script expects for long files)."""
    video = "long_video/COIN/abc.mp4"
    return [entry(video, 0, "He opens the lid. She cuts twice.", "He closes the lid. She cuts twice.", category=""),
            entry(video, 1, "He opens the lid. She cuts twice.", "He opens the lid. She cuts once.", gt="B",
                  category="")]


def write(path: Path, entries: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(entries, indent=1), encoding="utf-8")
    return path


def write_temporalbench(root: Path) -> Path:
    """Both QA files in ``root``."""
    write(root / "temporalbench_short_qa.json", short_entries())
    write(root / "temporalbench_long_qa.json", long_entries())
    return root
