"""The embedded sample suite: a few items of each benchmark, in each benchmark's own released file format, with
generated videos of which the captions are true and the foils false.

``ensure_sample()`` generates it on first use (into a temporary folder renamed into place, so a crash never leaves a
half-written suite) and regenerates it when :data:`VERSION` changes.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from bench.paths import data_home
from bench.sample import stories
from bench.sample.stories import Story
from bench.videoio import write_video

VERSION = "1"
STAMP = "SAMPLE_VERSION"
SAMPLE_WIDTH = 96
GAP_SECONDS = 2.0  # Vinoground's concatenated videos: two clips separated by a 2-second black frame
VIDEOCON_PROMPT = ("The following is a conversation between a curious human and AI assistant. The assistant gives "
                   "helpful, detailed, and polite answers to the user's questions.\nHuman: <|video|>\nHuman: Does "
                   "this video entail the description: \"{caption}\"?\nAI: ")  # src/prepare_data_for_inference.py
VINO_TEXT_QUESTION = ("Which caption best describes this video?\nA. {a}\nB. {b}\nAnswer with the option's letter from "
                      "the given choices directly. Please only output 1 English character.")
VINO_VIDEO_QUESTION = ("Which video segment matches this caption? Note: The video contains two segments separated by a "
                       "2-second black frame.\nCaption: {caption}\nA. The first fragment (before black frame)\nB. The "
                       "second fragment (after black frame)\nAnswer with the option's letter from the given choices "
                       "directly. Please only output 1 English character.")  # lmms-eval's Vinoground prompts


@dataclass
class SampleSet:
    """Where one benchmark's sample lives and how to load it."""

    benchmark: str
    data_path: Path
    video_root: Path
    loader_options: dict[str, Any] = field(default_factory=dict)


def _video(root: Path, relative: str, story_or_frames: Story | np.ndarray, fps: float | None = None,
           codec: str = "libx264") -> None:
    if isinstance(story_or_frames, Story):
        frames, fps = story_or_frames.scene.render(), story_or_frames.scene.fps
    else:
        frames = story_or_frames
    write_video(root / relative, frames, fps or 10.0, codec=codec)


def _vilma_record(story: Story, valid: bool = True, **fields: Any) -> dict:
    return {
        **fields,
        "caption": story.caption,
        "foils": story.foils,
        "proficiency": {"caption": story.proficiency[0], "foils": [story.proficiency[1]],
                        "human": {"foil": 0, "caption": 1, "other": 0}},
        "mturk": {"foil": 0 if valid else 2, "caption": 3 if valid else 1, "other": 0},
    }


def _vilma(root: Path) -> None:
    data, videos = root / "data", root / "videos"
    data.mkdir(parents=True)
    counting_pts, counting_sec = {}, {}
    for i, (colour, count, foil) in enumerate([("red", 3, 5), ("blue", 2, 4), ("yellow", 4, 1)]):
        story = stories.jumps(colour, "circle", count, [foil], frames=90, fps=30)
        name = f"{i:03d}_{colour}_jumps.mp4"
        _video(videos, f"quva/normalized_videos/{name}", story)
        base = {"dataset": "QUVA", "original_split": "test", "dataset_idx": f"{i:03d}", "youtube_id": None,
                "video_file": name, "normalized": True, "class": count, "classes_foil": [foil]}
        key = f"counting-easy-{i:03d}"
        counting_pts[key] = _vilma_record(story, i != 2, **base, start_time=0, end_time=89, time_unit="pts")
        counting_sec[key] = _vilma_record(story, i != 2, **base, start_time=0.0, end_time=89 / 30, time_unit="sec")
    files: dict[str, dict] = {"counting-easy-spelled-pts": counting_pts, "counting-easy-spelled-sec": counting_sec}
    relations = {}
    for i, (a, b) in enumerate([(("red", "square"), ("blue", "circle")), (("green", "circle"), ("red", "square"))]):
        story = stories.beside(a, b)
        _video(videos, f"something-something-v2/{9000 + i}.webm", story, codec="libvpx")
        relations[str(i)] = _vilma_record(story, dataset="something-something-v2", original_split="val",
                                          dataset_idx=str(9000 + i), linguistic_phenomena="spatial-relations",
                                          youtube_id=None, video_file=str(9000 + i), start_time=None, end_time=None,
                                          time_unit="sec", **{"class": "left of"}, classes_foil=["right of"])
    files["relations"] = relations
    change_state = {}
    for i, (before, after) in enumerate([("green", "red"), ("blue", "yellow")]):
        story = stories.change("square", before, after)
        ytid = f"chgstate{i:03d}"
        _video(videos, f"youtube/{ytid}.mp4", story)
        change_state[f"change-state-action-{i:04d}"] = _vilma_record(
            story, dataset="coin", original_split="test", dataset_idx=ytid, linguistic_phenomena="change-of-state",
            youtube_id=ytid, video_file=None, start_time=0.0, end_time=3.0, time_unit="sec",
            **{"class": "turn"}, classes_foil=["turn"])
    files["change-state-action"] = change_state
    srl = {}
    for i, (colour, rightwards) in enumerate([("red", True), ("blue", False)]):
        story = stories.move(colour, "square", rightwards)
        story.foils.append(f"a {colour} square jumps {'from left to right' if rightwards else 'from right to left'}")
        ytid = f"srlmove{i:04d}"
        _video(videos, f"youtube/{ytid}.mp4", story)
        srl[str(i)] = _vilma_record(story, dataset="VidSitu", original_split="training", dataset_idx="-",
                                    linguistic_phenomena="action_replacement", youtube_id=ytid,
                                    video_file=f"{ytid}_0_3", start_time=0, end_time=3, time_unit="sec",
                                    **{"class": "move"}, classes_foil=["move", "jump"])
    files["SRL_Action_Replacement_Top_1000"] = srl
    for stem, records in files.items():
        (data / f"{stem}.json").write_text(json.dumps(records, indent=1))


def _vitatecs(root: Path) -> None:
    data, videos = root / "data", root / "videos"
    data.mkdir(parents=True)
    aspects: dict[str, list[Story]] = {
        "Direction": [stories.move("red", "square", True), stories.move("blue", "circle", False)],
        "Intensity": [stories.speed("green", "square", True), stories.speed("yellow", "circle", False)],
        "Sequence": [stories.sequence(("red", "square"), ("blue", "circle")),
                     stories.sequence(("yellow", "circle"), ("green", "square"))],
        "Compositionality": [stories.cross(("red", "square"), ("blue", "circle"))],
    }
    n = 0
    for aspect, group in aspects.items():
        lines = []
        for story in group:
            source, name = ("MSRVTT", f"video{7010 + n}.mp4") if n % 2 == 0 else \
                ("VATEX", f"sample{n:04d}x_{n:06d}_{n + 3:06d}.mp4")
            _video(videos, f"{source}/{name}", story)
            lines.append(json.dumps({"src_dataset": source, "video_name": name, "caption": story.caption,
                                     "counterfactual": story.foils[0], "aspect": aspect}))
            n += 1
        (data / f"{aspect}.jsonl").write_text("\n".join(lines) + "\n")


def _velociti(root: Path) -> None:
    videos = root / "videos"
    rows = []
    plan = [
        ("agent_bind", stories.cross(("red", "square"), ("blue", "circle"))),
        ("action_bind", stories.move("green", "circle", True)),
        ("chrono", stories.sequence(("red", "circle"), ("yellow", "square"))),
        ("action_adv", stories.speed("blue", "square", True)),
        ("agent_random", stories.jumps("red", "square", 2, [3])),
        ("control", stories.beside(("green", "square"), ("red", "circle"))),
    ]
    for i, (test, story) in enumerate(plan):
        video_id = f"v_sample{i:02d}_seg_0_3"
        _video(videos, f"{video_id}.mp4", story)
        event = "(Ev1, Ev2)" if test == "chrono" else "Ev1"
        rows.append({"video_id": video_id, "test_name": test, "event": event, "pos": story.caption,
                     "neg": story.foils[0], "in_subset": i % 2 == 0})
    path = root / "velociti.csv"
    _write_csv(path, list(rows[0]), [list(r.values()) for r in rows])


def _videocon(root: Path) -> None:
    data, videos = root / "data", root / "videos"
    data.mkdir(parents=True)
    core = [
        ("msr-vtt", "action", stories.move("red", "square", True), "a red square jumps from left to right"),
        ("vatex", "object", stories.move("blue", "circle", False), "a blue square moves from right to left"),
        ("msr-vtt", "attribute", stories.change("circle", "green", "red"), "the circle turns from green to yellow"),
        ("vatex", "counting", stories.jumps("yellow", "square", 3, [2]), None),
        ("tempo", "flip", stories.sequence(("red", "square"), ("green", "circle")), None),
        ("msr-vtt", "relation", stories.beside(("blue", "square"), ("yellow", "circle")), None),
        ("vatex", "hallucination", stories.move("green", "square", True),
         "a green square moves from left to right past a red circle"),
    ]
    rows = []
    for i, (source, kind, story, contrast) in enumerate(core):
        path = f"{source}/video{i}.mp4"
        _video(videos, path, story)
        rows.append([path, source, story.caption, contrast or story.foils[0], "", "test", kind])
    _write_csv(data / "videocon_llm_entailment.csv",
               ["videopath", "source", "caption", "neg_caption", "youtube_key", "split", "misalignment"], rows)
    ssv2 = [stories.move("red", "square", True), stories.move("red", "square", False),
            stories.change("square", "green", "red")]
    captions = [ssv2[0].caption, ssv2[1].caption, ssv2[2].caption]
    ssv2_rows = []
    for v, story in enumerate(ssv2):
        name = f"videos/{100 + v}.avi"
        _video(videos, name, story, codec="mpeg4")
        ssv2_rows += [[name, VIDEOCON_PROMPT.format(caption=c), int(c == story.caption)] for c in captions]
    _write_csv(data / "eval_ssv2_temporal.csv", ["videopath", "caption", "match"], ssv2_rows)
    atp = [(stories.sequence(("blue", "circle"), ("red", "square")), "what appears after the blue circle", "TN"),
           (stories.jumps("green", "circle", 2, [1]), "how many times does the circle jump", "CW")]
    eval_rows, question_rows = [], []
    for q, (story, question, qtype) in enumerate(atp):
        video = f"{2000 + q}"
        _video(videos, f"0001/{video}.mp4", story)
        options = [story.caption] + story.foils + [f"a {c} triangle spins" for c in ("red", "blue", "green")][:4 - len(story.foils)]
        order = [(q + k) % 5 for k in range(5)]
        texts = [options[k] for k in order]
        answer = order.index(0)
        eval_rows += [[f"/data/NExTVideo/0001/{video}.mp4", question, answer, k, VIDEOCON_PROMPT.format(caption=t)]
                      for k, t in enumerate(texts)]
        question_rows.append([video, 30, SAMPLE_WIDTH, SAMPLE_WIDTH, question, answer, q, qtype] + texts)
    _write_csv(data / "eval-nextqa-atphard.csv", ["videopath", "question", "answer", "option", "caption"], eval_rows)
    _write_csv(data / "nextqa-atphard.csv", ["video", "frame_count", "width", "height", "question", "answer", "qid",
                                              "type", "a0", "a1", "a2", "a3", "a4"], question_rows)



def _vinoground(root: Path) -> None:
    pairs = [
        ("action", "", stories.sequence(("red", "square"), ("blue", "circle")),
         stories.sequence(("blue", "circle"), ("red", "square"))),
        ("object", "spatial", stories.beside(("red", "square"), ("blue", "circle")),
         stories.beside(("blue", "circle"), ("red", "square"))),
        ("action", "cyclical", stories.change("circle", "green", "red"), stories.change("circle", "red", "green")),
        ("viewpoint", "spatial;interaction", stories.move("yellow", "square", True),
         stories.move("yellow", "square", False)),
    ]
    rows, text_q, video_q = [], [], []
    for i, (major, minor, pos, neg) in enumerate(pairs):
        _video(root, f"vinoground_videos/{i}_pos.mp4", pos)
        _video(root, f"vinoground_videos/{i}_neg.mp4", neg)
        a, b = pos.scene.render(), neg.scene.render()
        gap = np.zeros((int(GAP_SECONDS * pos.scene.fps),) + a.shape[1:], np.uint8)
        _video(root, f"vinoground_videos_concated/{i}.mp4", np.concatenate([a, gap, b]), pos.scene.fps)
        rows.append([i, major, minor, f"sample{i:03d}pos", 0, 3, pos.caption, f"sample{i:03d}neg", 0, 3, neg.caption])
        for side, gt in (("pos", "A"), ("neg", "B")):
            text_q.append({"idx": f"{i}_{side}", "video_name": f"vinoground_videos/{i}_{side}.mp4",
                           "question": VINO_TEXT_QUESTION.format(a=pos.caption, b=neg.caption), "GT": gt})
            video_q.append({"idx": f"{i}_{side}", "video_name": f"vinoground_videos_concated/{i}.mp4",
                            "question": VINO_VIDEO_QUESTION.format(caption=(pos if side == "pos" else neg).caption),
                            "GT": gt})
    _write_csv(root / "vinoground.csv", ["index", "major", "minor", "pos_vid", "pos_start", "pos_end", "pos_cap",
                                         "neg_vid", "neg_start", "neg_end", "neg_cap"], rows)
    (root / "vinoground_textscore.json").write_text(json.dumps(text_q, indent=1))
    (root / "vinoground_videoscore.json").write_text(json.dumps(video_q, indent=1))


def _write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    path.write_text(buffer.getvalue(), encoding="utf-8")


# Each benchmark's (data path, video root) inside its folder of the suite.
LAYOUT: dict[str, tuple[str, str]] = {
    "vilma": ("data", "videos"),
    "vitatecs": ("data", "videos"),
    "velociti": ("velociti.csv", "videos"),
    "videocon": ("data", "videos"),
    "vinoground": (".", "."),
}
WRITERS: dict[str, Callable[[Path], None]] = {
    "vilma": _vilma,
    "vitatecs": _vitatecs,
    "velociti": _velociti,
    "videocon": _videocon,
    "vinoground": _vinoground,
}


def generate_sample(out_dir: str | Path) -> dict[str, SampleSet]:
    """Write the whole sample suite into ``out_dir`` (which must not exist yet)."""
    out = Path(out_dir)
    out.mkdir(parents=True)
    for name, writer in WRITERS.items():
        (out / name).mkdir()
        writer(out / name)
    (out / STAMP).write_text(VERSION)
    return _sets_at(out)


def _sets_at(out: Path) -> dict[str, SampleSet]:
    return {name: SampleSet(name, out / name / data, out / name / videos) for name, (data, videos) in LAYOUT.items()}


def ensure_sample(out_dir: str | Path | None = None) -> dict[str, SampleSet]:
    """The sample suite at ``out_dir`` (default ``<data home>/sample``), generated first if absent or outdated."""
    out = Path(out_dir) if out_dir is not None else data_home() / "sample"
    stamp = out / STAMP
    if stamp.is_file() and stamp.read_text() == VERSION:
        return _sets_at(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".sample-", dir=out.parent))
    try:
        generate_sample(tmp / "suite")
        if out.exists():
            shutil.rmtree(out)
        (tmp / "suite").rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _sets_at(out)
