"""Writers of small VideoCon files in the released formats, into a test's tmp_path.

The core CSVs are on Hugging Face only (``videocon/videocon``); their columns follow the dataset README and
BENCHMARKS.md 4.1. The downstream writers reproduce ``datasets/*.csv`` of ``Hritikbansal/videocon`` on made-up rows,
for the broken-input tests.
"""

from __future__ import annotations

import csv
from pathlib import Path

LLM_HEADER = ["videopath", "source", "caption", "neg_caption", "youtube_key", "split", "misalignment"]
LLM_ROWS = [
    ["msr-vtt/TrainValVideo/video3094.mp4", "msr-vtt", "lego characters dance to music",
     "lego characters sing to music", "1tCWjXq8ZD8", "test", "action"],
    ["tempo/videos/1524.mp4", "tempo", "the man and dog enter the field then the man detaches leash.",
     "The man detaches leash then the man and dog enter the field", "", "train", "flip"],
    ["k600/val/eOsIGrDFuuw_000004_000014.mp4", "vatex", "two men play racket ball on a court",
     "three men play racket ball on a court", "eOsIGrDFuuw", "test", "counting"],
    ["msr-vtt/TrainValVideo/video7.mp4", "msr-vtt", "a red car drives on a road", "a blue car drives on a road",
     "xYz123", "val", "attribute"],
]
NLE = ["the characters dance, they do not sing", "the man and dog enter first", "there are two men, not three",
       "the car is red"]
HUMAN_HEADER = ["video_url", "caption", "neg_caption", "nle", "hard"]
HUMAN_ROWS = [
    ["https://videocon.s3.amazonaws.com/activitynet/v_abc123.mp4", "a boy jumps over a fence",
     "a boy sits on a fence", "the boy jumps, he does not sit", "True"],
    ["https://videocon.s3.amazonaws.com/activitynet/v_def456.mp4", "a woman paints a wall",
     "a woman paints a canvas", "she paints a wall", "False"],
]
# src/prepare_data_for_inference.py (verbatim): the mPLUG-Owl conversation around every downstream description.
CONVERSATION = ("The following is a conversation between a curious human and AI assistant. The assistant gives "
                "helpful, detailed, and polite answers to the user's questions.\nHuman: <|video|>\nHuman: Does this "
                'video entail the description: "{caption}"?\nAI: ')
SSV2_VIDEOS = ["videos/104599.avi", "videos/191873.avi", "videos/185280.avi"]
SSV2_CAPTIONS = ["Covering [something] with [something]", 'Putting "something" on [something]']
SSV2_MATCH = {"videos/104599.avi": 0, "videos/191873.avi": 1, "videos/185280.avi": 0}
ATP_QUESTIONS = [  # (folder, video, question, answer, qid, type, five statements)
    ("1106", "4010069381", "how do the two man play the instrument", 0, 6, "CH",
     ["Play by rolling the handle.", "Play by tapping feet.", "Play by strumming.", "Play by hitting sticks.",
      "Play by patting."]),
    ("1102", "3562017845", "what did the bird do after stepping into the water", 0, 0, "TN",
     ["bird bends down.", "bird walks around.", "bird looks around.", "bird lifts a leg.", "bird moves around."]),
    ("1102", "3562017845", "what did the bird do after stepping into the water", 2, 1, "CW",
     ["The bird followed another bird.", "The bird flew away.", "The bird looked down.", "The bird washed.",
      "The bird ate bread."]),
]


def write_csv(path: Path, rows: list[list]) -> Path:
    """Write ``rows`` (header first) as a CSV, quoting where needed like pandas/csv do."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    return path


def write_llm_entailment(folder: Path, rows: list[list] = LLM_ROWS) -> Path:
    """``videocon_llm_entailment.csv``."""
    return write_csv(folder / "videocon_llm_entailment.csv", [LLM_HEADER] + rows)


def write_llm_feedback(folder: Path, rows: list[list] = LLM_ROWS, nle: list[str] = NLE) -> Path:
    """``videocon_llm_feedback.csv``: the entailment columns plus ``nle``."""
    return write_csv(folder / "videocon_llm_feedback.csv",
                     [LLM_HEADER + ["nle"]] + [row + [n] for row, n in zip(rows, nle)])


def write_human(folder: Path, rows: list[list] = HUMAN_ROWS) -> Path:
    """``videocon_human.csv``."""
    return write_csv(folder / "videocon_human.csv", [HUMAN_HEADER] + rows)


def write_ssv2(folder: Path, match: dict[str, int] = SSV2_MATCH, captions: list[str] = SSV2_CAPTIONS) -> Path:
    """``eval_ssv2_temporal.csv``: every video against every caption; ``match`` gives each video's true caption."""
    rows = [[video, CONVERSATION.format(caption=c), int(i == true)]
            for video, true in match.items() for i, c in enumerate(captions)]
    return write_csv(folder / "eval_ssv2_temporal.csv", [["videopath", "caption", "match"]] + rows)


def write_atp(folder: Path, questions=ATP_QUESTIONS) -> dict[str, Path]:
    """The ATP-Hard trio: ``eval-nextqa-atphard.csv`` (5 rows a question), ``nextqa-atphard-statements.csv`` and
    ``nextqa-atphard.csv`` (NExT-QA's questions with short answers)."""
    evals, statements, nextqa = [], [], []
    for folder_id, video, question, answer, qid, qtype, options in questions:
        evals += [[f"/local2/nextqa/NExTVideo/{folder_id}/{video}.mp4", question, answer, k,
                   CONVERSATION.format(caption=s)] for k, s in enumerate(options)]
        statements.append([video, question, answer, *options])
        nextqa.append([video, 300, 640, 480, question, answer, qid, qtype, *(s.split()[-1] for s in options)])
    return {
        "eval": write_csv(folder / "eval-nextqa-atphard.csv",
                          [["videopath", "question", "answer", "option", "caption"]] + evals),
        "statements": write_csv(folder / "nextqa-atphard-statements.csv",
                                [["vid_id", "question", "answer", "s0", "s1", "s2", "s3", "s4"]] + statements),
        "questions": write_csv(folder / "nextqa-atphard.csv",
                               [["video", "frame_count", "width", "height", "question", "answer", "qid", "type",
                                 "a0", "a1", "a2", "a3", "a4"]] + nextqa),
    }
