"""The embedded sample suite: deterministic, loadable, and its captions are true of its videos."""

from __future__ import annotations

import json

import decord
import numpy as np
import pytest

from bench.loaders import load
from bench.sample import ensure_sample, generate_sample
from bench.sample.scenes import centroid
from bench.sample.suite import STAMP


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    return generate_sample(tmp_path_factory.mktemp("s") / "suite")


def _frames(path) -> np.ndarray:
    return decord.VideoReader(str(path)).get_batch(list(range(len(decord.VideoReader(str(path)))))).asnumpy()


def test_every_benchmark_loads_with_all_videos(suite):
    for name, sample in suite.items():
        items = load(name, sample.data_path, video_root=sample.video_root, **sample.loader_options)
        assert len(items) >= 4, name
        assert all(c.exists for it in items for c in it.clips), name


def test_generation_is_deterministic(suite, tmp_path):
    again = generate_sample(tmp_path / "again")
    for name in suite:
        first, second = suite[name], again[name]
        files = sorted(p.relative_to(first.data_path.parent) for p in first.data_path.parent.rglob("*") if p.is_file())
        for rel in files:
            a, b = first.data_path.parent / rel, second.data_path.parent / rel
            if rel.suffix in (".json", ".jsonl", ".csv"):
                assert a.read_text() == b.read_text(), rel
            elif rel.suffix == ".mp4":
                assert np.array_equal(_frames(a), _frames(b)), rel


def test_direction_captions_are_true(suite):
    items = load("vitatecs", suite["vitatecs"].data_path, video_root=suite["vitatecs"].video_root)
    for it in items:
        if it.subset != "Direction":
            continue
        colour = it.texts[0].split()[1]
        frames = _frames(it.clips[0].path)
        x0, x1 = centroid(frames[0], colour)[0], centroid(frames[-1], colour)[0]
        assert ("from left to right" in it.texts[0]) == (x1 > x0)
        assert ("from left to right" in it.texts[1]) == (x1 < x0)


def test_counting_captions_are_true(suite):
    items = load("vilma", suite["vilma"].data_path, video_root=suite["vilma"].video_root)
    words = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
    checked = 0
    for it in items:
        if not it.subset.startswith("counting") or it.role != "main":
            continue
        colour = it.texts[0].split()[1]
        ys = np.array([centroid(f, colour)[1] for f in _frames(it.clips[0].path)])
        airborne = ys < ys.max() - 8
        jumps = int(np.sum(airborne[1:] & ~airborne[:-1]) + airborne[0])
        assert jumps == words[it.texts[0].split()[-2]]
        assert all(jumps != words[foil.split()[-2]] for foil in it.texts[1:])
        checked += 1
    assert checked == 2  # the third counting item fails the validity filter by design


def test_order_and_colour_change_captions_are_true(suite):
    items = load("vinoground", suite["vinoground"].data_path, video_root=suite["vinoground"].video_root)
    order_pair = items.by_id()["0"]
    for clip, text in zip(order_pair.clips, order_pair.texts):
        first_colour = text.split()[2]
        second_colour = text.split(", then a ")[1].split()[0]
        frames = _frames(clip.path)
        seen_first = next(t for t, f in enumerate(frames) if centroid(f, first_colour))
        seen_second = next(t for t, f in enumerate(frames) if centroid(f, second_colour))
        assert seen_first < seen_second
    change_pair = items.by_id()["2"]
    for clip, text in zip(change_pair.clips, change_pair.texts):
        before, after = text.split("from ")[1].split(" to ")
        frames = _frames(clip.path)
        assert centroid(frames[0], before) and centroid(frames[-1], after)
        assert centroid(frames[0], after) is None


def test_vinoground_concatenated_video_has_a_two_second_black_gap(suite):
    root = suite["vinoground"].data_path
    video_q = json.loads((root / "vinoground_videoscore.json").read_text())
    path = root / video_q[0]["video_name"]
    reader = decord.VideoReader(str(path))
    fps = reader.get_avg_fps()
    frames = _frames(path)
    black = frames.reshape(len(frames), -1).max(axis=1) < 30
    clip = len(_frames(root / "vinoground_videos/0_pos.mp4"))
    assert black.sum() == int(2 * fps)
    assert black[clip:clip + int(2 * fps)].all() and not black[:clip].any()


def test_ensure_sample_generates_once_and_regenerates_when_outdated(tmp_path):
    out = tmp_path / "sample"
    sets = ensure_sample(out)
    stamp = out / STAMP
    mtime = stamp.stat().st_mtime_ns
    assert ensure_sample(out)["vilma"].data_path == sets["vilma"].data_path
    assert stamp.stat().st_mtime_ns == mtime
    stamp.write_text("0")
    ensure_sample(out)
    assert stamp.read_text() != "0"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".sample-")]
