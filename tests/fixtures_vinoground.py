"""Writers of small Vinoground files in the released formats (HF ``HanSolo9682/Vinoground``, BENCHMARKS.md 5.2)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from bench.scoring.prompts import PROMPTS

HEADER = ["index", "major", "minor", "pos_vid", "pos_start", "pos_end", "pos_cap", "neg_vid", "neg_start", "neg_end",
          "neg_cap"]
ROWS = [
    ["0", "action", "", "QINQHWlQIzU", "5", "15", "a toddler plays around the grass field before he drinks",
     "QINQHWlQIzU", "10", "20", "a toddler drinks before he plays around the grass field"],
    ["1", "object", "spatial;interaction", "abc", "0", "5", "a cup left of a bowl", "abd", "0", "5.5",
     "a bowl left of a cup"],
    ["2", "viewpoint", "contextual", "vp1", "", "", "a car seen from the driver's seat",
     "vp2", "1", "4", "a driver's seat seen from outside the car"],
]


def write_csv(folder: Path, rows: list[list] = ROWS, header: list[str] = HEADER) -> Path:
    """``vinoground.csv`` with ``rows``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "vinoground.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([header] + rows)
    return path


def text_entries(rows: list[list] = ROWS) -> list[dict]:
    """``vinoground_textscore.json``: per pair and side, both captions as options A (pos) and B (neg)."""
    return [{"idx": f"{row[0]}_{side}", "video_name": f"vinoground_videos/{row[0]}_{side}.mp4",
             "question": PROMPTS["vinoground-text"].format(option_a=row[6], option_b=row[10]),
             "GT": "A" if side == "pos" else "B"} for row in rows for side in ("pos", "neg")]


def video_entries(rows: list[list] = ROWS) -> list[dict]:
    """``vinoground_videoscore.json``: per pair and side, that side's caption against the concatenated video."""
    return [{"idx": f"{row[0]}_{side}", "video_name": f"vinoground_videos_concated/{row[0]}.mp4",
             "question": PROMPTS["vinoground-video"].format(caption=row[6 if side == "pos" else 10]),
             "GT": "A" if side == "pos" else "B"} for row in rows for side in ("pos", "neg")]


def write_json(path: Path, entries) -> Path:
    """A score JSON (any content, for the broken-input tests too)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(entries, indent=1), encoding="utf-8")
    return path


def write_vinoground(folder: Path, rows: list[list] = ROWS) -> Path:
    """The CSV with both score JSONs beside it; returns the CSV."""
    write_json(folder / "vinoground_textscore.json", text_entries(rows))
    write_json(folder / "vinoground_videoscore.json", video_entries(rows))
    return write_csv(folder, rows)
