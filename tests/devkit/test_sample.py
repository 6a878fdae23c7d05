"""The embedded sample suite: deterministic, loadable, in each benchmark's format, and true of its videos.

Captions are checked against the decoded pixels by a small reader of the sample's sentence grammar (below): it finds
each coloured shape in every frame (colour by palette, shape by how much of its bounding box it fills) and decides
motion, jumps, order, colour changes and relations from the centroids, independently of the generator's scenes.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shlex
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import decord
import numpy as np
import pytest

import bench.devkit.world.suite as suite_module
from bench.cli import main
from bench.items import Clip, Item
from bench.loaders import load
from bench.devkit.world import ensure_sample, generate_sample
from bench.commands.sample import register
from bench.devkit.world.scenes import COLOURS, SIZE
from bench.devkit.world.suite import STAMP, VERSION
from bench.scoring.prompts import PROMPTS

COLOUR = "|".join(COLOURS)
NP = rf"(?:a|an|the|at least one) (?:(?:{COLOUR}) )?(?:square|circle|triangle)"
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
QUICK_PX_PER_S = 16.0  # the sample's quick motions run at >= 26 px/s, its slow ones at <= 11 px/s
MARGIN = 12  # pixels: net motion, relations and sides must clear this


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    return generate_sample(tmp_path_factory.mktemp("s") / "suite")


def _items(suite, name, **options):
    s = suite[name]
    return load(name, s.data_path, video_root=s.video_root, **{**s.loader_options, **options})


@lru_cache(maxsize=None)
def _decoded(path: str) -> tuple[np.ndarray, float]:
    reader = decord.VideoReader(path)
    return reader.get_batch(list(range(len(reader)))).asnumpy(), reader.get_avg_fps()


# Reading the pixels --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Blob:
    colour: str
    x: float
    y: float
    shape: str


def _blobs(frame: np.ndarray) -> dict[str, Blob]:
    """Each palette colour on stage: its centroid and shape (a square fills its box, a circle ~79%, a triangle ~50%)."""
    found = {}
    for name, rgb in COLOURS.items():
        mask = np.abs(frame.astype(np.int16) - np.array(rgb, np.int16)).max(axis=-1) <= 45
        if mask.sum() < 60:
            continue
        ys, xs = np.nonzero(mask)
        fill = mask.sum() / ((np.ptp(xs) + 1) * (np.ptp(ys) + 1))
        shape = "square" if fill > 0.88 else "circle" if fill > 0.62 else "triangle"
        found[name] = Blob(name, float(xs.mean()), float(ys.mean()), shape)
    return found


@lru_cache(maxsize=None)
def _video_blobs(path: str) -> tuple[tuple[dict[str, Blob], ...], float]:
    frames, fps = _decoded(path)
    return tuple(_blobs(f) for f in frames), fps


class Reader:
    """Decides whether a sentence of the sample's grammar is true of some frames (their blobs) at ``fps``."""

    def __init__(self, frames: tuple[dict[str, Blob], ...], fps: float):
        self.frames, self.fps = frames, fps

    def holds(self, text: str) -> bool:
        return self._sentence(text.strip().rstrip(".").lower())[0]

    def _track(self, colour: str | None, shape: str | None) -> list[Blob | None]:
        track = []
        for blobs in self.frames:
            match = [b for b in blobs.values() if colour in (None, b.colour) and shape in (None, b.shape)]
            assert len(match) <= 1, f"ambiguous reference to {colour} {shape}: {match}"
            track.append(match[0] if match else None)
        return track

    def _np(self, text: str) -> list[Blob | None]:
        if text == "[something]":
            return self._track(None, None)
        m = re.fullmatch(rf"(?:a|an|the|at least one) (?:({COLOUR}) )?(square|circle|triangle)", text)
        assert m, f"not a noun phrase of the sample's grammar: {text!r}"
        return self._track(m[1], m[2])

    def _sentence(self, s: str) -> tuple[bool, int | None]:
        """(holds, onset frame) of a sentence."""
        if m := re.fullmatch(r"first, (.+)\. then, (.+)", s):
            return self._ordered(m[1], m[2])
        if ". " in s:
            parts = [self._sentence(re.sub(r"^then, ", "", p)) for p in s.split(". ")]
            return all(ok for ok, _ in parts), parts[0][1]
        if m := re.fullmatch(r"the shape that (.+) is also the one that (.+)", s):
            colours = sorted({b.colour for blobs in self.frames for b in blobs.values()})
            tracks = [self._track(c, None) for c in colours]
            return any(self._verb(m[1], t)[0] and self._verb(m[2], t)[0] for t in tracks), None
        if m := re.fullmatch(rf"({NP}) appears before ({NP})", s):
            return self._ordered(f"{m[1]} appears", f"{m[2]} appears")
        for pattern, swap in ((r"first (.+), then (.+)", False), (r"(.+) and then (.+)", False),
                              (r"(.+) before (.+)", False), (r"(.+) after (.+)", True)):
            if m := re.fullmatch(pattern, s):
                return self._ordered(m[2], m[1]) if swap else self._ordered(m[1], m[2])
        for pattern in (r"(.+) while (.+)", r"(.+) and (.+)"):
            if m := re.fullmatch(pattern, s):
                (first, onset), (second, _) = self._sentence(m[1]), self._sentence(m[2])
                return first and second, onset
        if m := re.fullmatch(rf"(.+) beside ({NP})", s):
            ok, onset = self._sentence(m[1])
            return ok and self._present(m[2]), onset
        if m := re.fullmatch(rf"({NP}) (.+) on the (left|right) side", s):
            ok, onset = self._verb(m[2], self._np(m[1]))
            x = np.mean([b.x for b in self._np(m[1]) if b])
            side = "left" if x < SIZE / 2 - MARGIN else "right" if x > SIZE / 2 + MARGIN else None
            return ok and side == m[3], onset
        if m := re.fullmatch(rf"(initially|at the end), ({NP}) is ({COLOUR})", s):
            seen = [b for b in self._np(m[2]) if b]
            return bool(seen) and seen[0 if m[1] == "initially" else -1].colour == m[3], 0
        if m := re.fullmatch(rf"there is ({NP})", s):
            return self._present(m[1]), 0
        if m := re.fullmatch(r"moving \[something\] (.+)", s):
            return self._verb("moves " + m[1], self._np("[something]"))
        m = re.fullmatch(rf"({NP}) (.+)", s)
        assert m, f"not a sentence of the sample's grammar: {s!r}"
        return self._verb(m[2], self._np(m[1]))

    def _present(self, text: str) -> bool:
        return sum(b is not None for b in self._np(text)) >= 2

    def _ordered(self, first: str, second: str) -> tuple[bool, int | None]:
        (a, t1), (b, t2) = self._sentence(first), self._sentence(second)
        return a and b and t1 is not None and t2 is not None and t1 < t2, t1

    def _verb(self, vp: str, track: list[Blob | None]) -> tuple[bool, int | None]:
        seen = [(t, b) for t, b in enumerate(track) if b is not None]
        if len(seen) < 2:
            return False, None
        if vp == "appears":
            return track[0] is None, seen[0][0]
        if m := re.fullmatch(r"moves (?:(quickly|slowly) )?(from left to right|from right to left|to the right|"
                             r"to the left|up|down)", vp):
            return self._moves(seen, m[2], m[1])
        if m := re.fullmatch(r"jumps(?: exactly (\w+) times?)?", vp):
            onsets = self._jumps(seen)
            return (len(onsets) == NUMBER_WORDS[m[1]] if m[1] else bool(onsets)), (onsets[0] if onsets else None)
        if vp == "stays still":
            x0, y0 = seen[0][1].x, seen[0][1].y
            return len(seen) == len(track) and all(math.hypot(b.x - x0, b.y - y0) < 3 for _, b in seen), seen[0][0]
        if m := re.fullmatch(rf"turns (?:from ({COLOUR}) to )?({COLOUR})", vp):
            first, last = seen[0][1].colour, seen[-1][1].colour
            changed = next((t for t, b in seen if b.colour != first), None)
            return (first == m[1] if m[1] else first != m[2]) and last == m[2], changed
        if m := re.fullmatch(rf"is (to the left of|to the right of|above|below) ({NP})", vp):
            other = self._np(m[2])
            both = [(b, other[t]) for t, b in seen if other[t] is not None]
            test = {"to the left of": lambda b, o: b.x < o.x - MARGIN,
                    "to the right of": lambda b, o: b.x > o.x + MARGIN,
                    "above": lambda b, o: b.y < o.y - MARGIN, "below": lambda b, o: b.y > o.y + MARGIN}[m[1]]
            return bool(both) and all(test(b, o) for b, o in both), seen[0][0]
        if m := re.fullmatch(rf"chases ({NP})", vp):
            leader = self._np(m[1])
            led = [o for o in leader if o is not None]
            if len(led) < 2:
                return False, None
            mine, theirs = seen[-1][1].x - seen[0][1].x, led[-1].x - led[0].x
            sign = np.sign(mine)
            behind = all((leader[t].x - b.x) * sign > 0 for t, b in seen if leader[t] is not None)
            return (abs(mine) > MARGIN and abs(theirs) > MARGIN and np.sign(theirs) == sign and behind), seen[0][0]
        raise AssertionError(f"not a verb phrase of the sample's grammar: {vp!r}")

    def _moves(self, seen: list[tuple[int, Blob]], way: str, pace: str | None) -> tuple[bool, int | None]:
        """Net motion along the way's axis; the pace from the time the middle 80% of the motion took."""
        axis = "y" if way in ("up", "down") else "x"
        sign = 1 if way in ("down", "to the right", "from left to right") else -1
        ts = [t for t, _ in seen]
        cs = [getattr(b, axis) for _, b in seen]
        net = cs[-1] - cs[0]
        if sign * net <= MARGIN:
            return False, None
        cut = 0.1 * abs(net)
        onset = next(i for i, c in enumerate(cs) if abs(c - cs[0]) > cut)
        settle = max(i for i, c in enumerate(cs) if abs(c - cs[-1]) > cut)
        speed = 0.8 * abs(net) * self.fps / max(1, ts[settle] - ts[onset])
        return pace is None or (speed >= QUICK_PX_PER_S) == (pace == "quickly"), ts[onset]

    @staticmethod
    def _jumps(seen: list[tuple[int, Blob]]) -> list[int]:
        """Onsets of the jumps: runs of frames well above the floor, with the floor before and after them."""
        floor = max(b.y for _, b in seen)
        up = [b.y < floor - 10 for _, b in seen]
        return [seen[i][0] for i in range(1, len(up)) if up[i] and not up[i - 1] and not all(up[i:])]


def _reader(clip: Clip, seconds: tuple[float, float | None] | None = None) -> Reader:
    """The frames of a clip's window (``pts``: frame slice; seconds: both ends included, as torchvision reads)."""
    blobs, fps = _video_blobs(clip.path)
    if clip.unit == "pts":
        lo, hi = int(clip.start or 0), len(blobs) if clip.end is None else int(clip.end)
    else:
        start, end = seconds or clip.window_seconds()
        lo = math.ceil((start or 0) * fps - 1e-6)
        hi = len(blobs) if end is None else min(len(blobs), math.floor(end * fps + 1e-6) + 1)
    return Reader(blobs[lo:hi], fps)


def _velociti_event(item: Item) -> tuple[float, float]:
    """VELOCITI's events are the 2-s parts of the video: Ev1 = [0, 2) s, ..."""
    events = [int(n) for n in re.findall(r"Ev(\d+)", item.labels["event"])]
    return 2.0 * (min(events) - 1), 2.0 * max(events) - 1e-3


# Tests ---------------------------------------------------------------------------------------------------------

def test_the_pixel_reader_tells_true_from_false():
    blue_square_moving_right = [{"blue": Blob("blue", 20.0 + 4 * t, 64.0, "square")} for t in range(20)]
    reader = Reader(tuple(blue_square_moving_right), 10.0)
    assert reader.holds("A blue square moves from left to right.")
    assert reader.holds("a blue square moves quickly to the right")
    assert not reader.holds("a blue square moves slowly to the right")
    assert not reader.holds("a blue square moves from right to left")
    assert not reader.holds("a blue circle moves to the right") and not reader.holds("a red square moves to the right")
    assert not reader.holds("a blue square jumps") and not reader.holds("a blue square stays still")


def test_every_benchmark_loads_with_all_videos_and_every_subset(suite):
    expected = {
        "vilma": {"counting-easy-spelled-pts", "relations", "change-state-action", "change-state-prestate",
                  "change-state-poststate", "change-state-inverse", "SRL_Action_Replacement_Top_1000",
                  "SRL_Actor_Swapping", "rare-actions-noun-foils"},
        "vitatecs": {"Direction", "Intensity", "Sequence", "Localization", "Compositionality", "Type"},
        "velociti": {"action_bind", "action_manner", "agent_bind", "chrono", "control", "coref"},
        "videocon": {"llm", "human", "ssv2_temporal", "atp_hard"},
        "vinoground": {"object", "action", "viewpoint"},
    }
    for name in suite:
        items = _items(suite, name)
        assert {it.subset for it in items} == expected[name], name
        assert 4 <= len([it for it in items if it.role == "main"]) <= 20, name
        assert all(c.exists for it in items for c in it.clips), name
    videocon = _items(suite, "videocon")
    assert {it.labels["misalignment"] for it in videocon if it.subset == "llm"} == {
        "object", "action", "attribute", "relation", "hallucination", "counting", "flip"}
    assert sorted(it.labels["type"] for it in videocon if it.subset == "atp_hard") == ["TC", "TN", "TP", "TP"]
    assert {it.labels["hard"] for it in videocon if it.subset == "human"} == {True, False}


def test_vilma_has_valid_and_invalid_items_in_both_time_units(suite):
    main = [it for it in _items(suite, "vilma", valid_only=False, time_unit=None) if it.role == "main"]
    invalid = [it.item_id for it in main if not it.labels["valid"]]
    # one counting item (in both time units) and one relation are invalid, most items valid
    assert len(invalid) == 3 and len(main) - len(invalid) > 3 * len(invalid)
    pts = {it.item_id.split("/", 1)[1]: it.clips[0] for it in main if it.subset == "counting-easy-spelled-pts"}
    sec = {it.item_id.split("/", 1)[1]: it.clips[0] for it in main if it.subset == "counting-easy-spelled-sec"}
    assert pts.keys() == sec.keys() and len(pts) == 4
    for key, clip in pts.items():
        assert (clip.unit, clip.fps) == ("pts", 30.0) and sec[key].unit == "sec"
        assert clip.window_seconds() == pytest.approx(sec[key].window_seconds(), abs=1e-3)
        assert clip.path == sec[key].path and "/quva/normalized_videos/" in clip.path
        assert _decoded(clip.path)[1] == pytest.approx(30.0)
    assert {it.labels["source"] for it in main} == {"QUVA", "something-something-v2", "coin", "star", "VidSitu",
                                                     "RareAct"}
    assert all(len(it.texts) == 3 for it in main if it.subset.startswith("SRL_Action"))


@pytest.mark.parametrize("name", ["vilma", "vitatecs", "velociti", "videocon", "vinoground"])
def test_every_caption_is_true_of_its_video_and_every_foil_false(suite, name):
    options = {"valid_only": False, "time_unit": None} if name == "vilma" else {}
    checked = 0
    for item in _items(suite, name, **options):
        for c, clip in enumerate(item.clips):
            for t, text in enumerate(item.texts):
                if name == "velociti":  # pos: true of its events; neg: false of the whole video
                    reader = _reader(clip, _velociti_event(item) if t == 0 else (0.0, None))
                else:
                    reader = _reader(clip)
                assert reader.holds(text) == (t in item.truth[c]), (item.item_id, c, text)
                checked += 1
    assert checked >= 12


def test_counting_windows_decide_the_count(suite):
    items = [it for it in _items(suite, "vilma", valid_only=False, time_unit=None)
             if it.subset.startswith("counting") and it.role == "main"]
    assert len(items) == 8
    for it in items:
        assert not _reader(Clip(it.clips[0].path)).holds(it.texts[0]), it.item_id  # more jumps outside the window


def test_generation_is_deterministic(suite, tmp_path):
    again = generate_sample(tmp_path / "again")
    root_a, root_b = suite["vilma"].video_root.parents[1], again["vilma"].video_root.parents[1]
    files = sorted(p.relative_to(root_a) for p in root_a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(root_b) for p in root_b.rglob("*") if p.is_file())
    videos = 0
    for rel in files:
        assert (root_a / rel).read_bytes() == (root_b / rel).read_bytes(), rel
        if rel.suffix in (".mp4", ".webm", ".avi"):
            assert np.array_equal(_decoded(str(root_a / rel))[0], _decoded(str(root_b / rel))[0]), rel
            videos += 1
    assert videos >= 40 and sum((root_a / rel).stat().st_size for rel in files) < 5_000_000


def test_vinoground_questions_follow_the_documented_format(suite):
    root = suite["vinoground"].data_path
    pairs = _items(suite, "vinoground")
    text_q = json.loads((root / "vinoground_textscore.json").read_text())
    video_q = json.loads((root / "vinoground_videoscore.json").read_text())
    assert [q["idx"] for q in text_q] == [f"{i}_{s}" for i in range(len(pairs)) for s in ("pos", "neg")]
    assert [q["idx"] for q in video_q] == [q["idx"] for q in text_q]
    for item in pairs:
        i = int(item.item_id)
        pos, neg = item.texts
        for k, (side, gt) in enumerate((("pos", "A"), ("neg", "B"))):
            tq, vq = text_q[2 * i + k], video_q[2 * i + k]
            assert tq["question"] == PROMPTS["vinoground-text"].format(option_a=pos, option_b=neg)
            assert tq["question"].split("\n")[1:3] == [f"A. {pos}", f"B. {neg}"]
            assert vq["question"].split("\n")[1] == f"Caption: {item.texts[k]}"
            assert vq["question"].split("\n")[2:4] == ["A. The first fragment (before black frame)",
                                                       "B. The second fragment (after black frame)"]
            assert (tq["GT"], vq["GT"]) == (gt, gt)
            assert tq["video_name"] == f"vinoground_videos/{i}_{side}.mp4"
            assert vq["video_name"] == f"vinoground_videos_concated/{i}.mp4"


def test_vinoground_concatenated_videos_are_pos_black_gap_neg(suite):
    root = suite["vinoground"].data_path
    for i, item in enumerate(_items(suite, "vinoground")):
        frames, fps = _decoded(str(root / item.labels["video_pos_video"]))
        pos, neg = (_decoded(c.path)[0] for c in item.clips)
        black = frames.reshape(len(frames), -1).max(axis=1) < 30
        gap = int(round(2 * fps))
        assert len(frames) == len(pos) + gap + len(neg)
        assert black[len(pos):len(pos) + gap].all() and black.sum() == gap
        assert np.abs(frames[:len(pos)].astype(int) - pos).mean() < 2
        assert np.abs(frames[len(pos) + gap:].astype(int) - neg).mean() < 2


def test_velociti_events_are_two_second_parts_of_short_videos(suite):
    items = _items(suite, "velociti")
    for it in items:
        frames, fps = _decoded(it.clips[0].path)
        start, end = (int(n) for n in re.search(r"_seg_(\d+)_(\d+)$", it.labels["video_id"]).groups())
        assert len(frames) / fps == pytest.approx(end - start)
        assert _velociti_event(it)[1] <= end - start
    assert {it.labels["event"] for it in items} == {"Ev1", "Ev2", "(Ev1, Ev2)"}
    assert {it.labels["in_subset"] for it in items} == {True, False}


def test_ensure_sample_generates_once_and_regenerates_when_outdated(tmp_path, monkeypatch):
    out = tmp_path / "sample"
    sets = ensure_sample(out)
    stamp = out / STAMP
    assert stamp.read_text() == VERSION
    mtime = stamp.stat().st_mtime_ns
    assert ensure_sample(out)["vilma"].data_path == sets["vilma"].data_path
    assert stamp.stat().st_mtime_ns == mtime
    stamp.write_text("0")
    (out / "stray.txt").write_text("from the outdated suite")
    ensure_sample(out)
    assert stamp.read_text() == VERSION and not (out / "stray.txt").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["sample"]
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    assert ensure_sample()["vitatecs"].data_path == tmp_path / "home" / "sample" / "vitatecs" / "data"


def test_a_crash_while_generating_leaves_the_old_suite_and_no_half_written_one(tmp_path, monkeypatch):
    out = tmp_path / "sample"
    ensure_sample(out)
    (out / STAMP).write_text("0")

    def broken(root: Path) -> None:
        (root / "partial.json").write_text("{")
        raise RuntimeError("disk full")

    monkeypatch.setitem(suite_module.WRITERS, "vinoground", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        ensure_sample(out)
    assert [p.name for p in tmp_path.iterdir()] == ["sample"]
    assert (out / STAMP).read_text() == "0" and not list(out.rglob("partial.json"))
    assert (out / "vinoground" / "vinoground.csv").is_file()


def test_sample_command_prints_a_working_load_command_per_benchmark(tmp_path, capsys):
    parser = argparse.ArgumentParser(prog="foilbench")
    register(parser.add_subparsers())
    args = parser.parse_args(["sample", "--out", str(tmp_path / "s")])
    assert args.func(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(suite_module.WRITERS)
    for line in lines:
        command = shlex.split(line)[1:]
        assert command[:2] == ["foilbench", "summary"] and main(command[1:]) == 0
        assert ", 0 missing on disk" in capsys.readouterr().out
    stamp = tmp_path / "s" / STAMP
    mtime = stamp.stat().st_mtime_ns
    args.func(args)
    assert stamp.stat().st_mtime_ns == mtime
    args.func(parser.parse_args(["sample", "--out", str(tmp_path / "s"), "--force"]))
    assert stamp.stat().st_mtime_ns != mtime
