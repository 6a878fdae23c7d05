"""Frame sampling: every policy's indices, frame order, windows, the black gap, both backends, and bad files."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from bench.frames import (BACKENDS, FrameCache, FrameError, parse_policy, policy, prefetch, sample_frames,
                          sample_joined)
from bench.frames.policies import POLICIES
from bench.items import Clip
from bench.videoio import write_video

FPS = 10


def numbered(n: int, size: int = 64) -> np.ndarray:
    """Frames whose grey level encodes the frame number (4 levels apart, readable after compression)."""
    frames = np.empty((n, size, size, 3), np.uint8)
    frames[:] = (np.arange(n) * 4 + 8)[:, None, None, None]
    return frames


def read_numbers(frames: np.ndarray) -> list[int]:
    return [int(round((f[8:-8, 8:-8].mean() - 8) / 4)) for f in frames]


@pytest.fixture(scope="module")
def video(tmp_path_factory):
    return str(write_video(tmp_path_factory.mktemp("v") / "n60.mp4", numbered(60), FPS))


def select(name, count, rate=FPS, first=0, key="k", **params):
    return POLICIES[name].select(first, count, rate, params, key)


def test_policy_indices_follow_the_official_code():
    assert select("uniform", 60, k=4) == ([0, 20, 39, 59], [])
    seg = 59 / 8  # VideoCon / mPLUG-Owl get_index: int(seg/2) + round(seg*i)
    assert select("segment_midpoints", 60, k=8)[0] == [int(seg / 2) + round(seg * i) for i in range(8)]
    assert select("second_middles", 60)[0] == [5, 15, 25, 35, 45, 55]
    assert select("second_middles", 60, rate=29.97)[0] == [15, 45]  # fps rounded to 30 first
    assert select("quarter_seconds", 30)[0] == [2, 8, 12, 18, 22, 28]  # s+0.25, s+0.75 at 10 fps (rounded)
    assert select("fps", 60, fps=1)[0] == [0, 10, 20, 30, 40, 50]
    thinned, notes = select("fps", 60, fps=5, max_frames=4)
    assert len(thinned) == 4 and thinned[0] == 0 and "thinned to 4" in notes[0]
    assert select("single", 60)[0] == [29]
    assert select("none", 60) == ([], [])


def test_seeded_policies_are_reproducible_per_clip():
    a = select("consecutive", 60, k=8, seed=0, key="clip-a")[0]
    assert a == select("consecutive", 60, k=8, seed=0, key="clip-a")[0]
    assert a == list(range(a[0], a[0] + 8)) and 0 <= a[0] and a[-1] < 60
    assert {tuple(select("consecutive", 60, k=8, seed=s, key="clip-a")[0]) for s in range(10)} != {tuple(a)}
    r = select("single", 60, mode="random", seed=3, key="x")[0]
    assert r == select("single", 60, mode="random", seed=3, key="x")[0] and 0 <= r[0] < 60


def test_short_windows_are_recorded_not_padded():
    for name in ("uniform", "segment_midpoints", "consecutive"):
        indices, notes = select(name, 5, k=8)
        assert indices == [0, 1, 2, 3, 4] and "fewer than k=8" in notes[0]
    indices, notes = select("second_middles", 6)
    assert indices == [3] and "shorter than one second" in notes[0]


def test_policy_arguments_are_checked():
    with pytest.raises(ValueError, match="unknown frame policy 'evenly'"):
        policy("evenly")
    with pytest.raises(ValueError, match=r"missing \['k'\]"):
        policy("uniform")
    with pytest.raises(ValueError, match=r"unknown \['fps'\]"):
        policy("uniform", k=4, fps=2)
    assert parse_policy("fps:fps=1,max_frames=12") == policy("fps", fps=1, max_frames=12)
    assert parse_policy(" uniform: k = 8 ") == policy("uniform", k=8)
    assert policy("uniform", k=8).describe() == {"name": "uniform", "k": 8}


@pytest.mark.parametrize("text, message", [
    ("uniform:k=abc", "frame policy 'uniform': k must be a positive integer, got 'abc'"),
    ("uniform:k=0", "frame policy 'uniform': k must be a positive integer, got 0"),
    ("segment_midpoints:k=-3", "frame policy 'segment_midpoints': k must be a positive integer, got -3"),
    ("consecutive:k=2.5", "frame policy 'consecutive': k must be a positive integer, got 2.5"),
    ("uniform:k=true", "frame policy 'uniform': k must be a positive integer, got True"),
    ("uniform:k=[8]", r"frame policy 'uniform': k must be a positive integer, got \[8\]"),
    ("fps:fps=0", "frame policy 'fps': fps must be a finite number > 0, got 0"),
    ("fps:fps=-1.5", "frame policy 'fps': fps must be a finite number > 0, got -1.5"),
    ("fps:fps=NaN", "frame policy 'fps': fps must be a finite number > 0, got nan"),
    ("fps:fps=Infinity", "frame policy 'fps': fps must be a finite number > 0, got inf"),
    ("fps:fps=1,max_frames=0", "frame policy 'fps': max_frames must be a positive integer, got 0"),
    ("consecutive:k=8,seed=x", "frame policy 'consecutive': seed must be an integer, got 'x'"),
    ("single:mode=sideways", "frame policy 'single': mode must be 'middle' or 'random', got 'sideways'"),
    ("blur:k=3", "unknown frame policy 'blur'; choose one of consecutive, fps, none, quarter_seconds"),
    ("", "unknown frame policy ''"),
    ("uniform:k", "frame policy parameter must look like KEY=VALUE, got 'k' in 'uniform:k'"),
    ("uniform:=8", "frame policy parameter must look like KEY=VALUE, got '=8'"),
    ("uniform:k=8,k=4", "frame policy parameter 'k' given twice in 'uniform:k=8,k=4'"),
    ("uniform:k=8,order=backwards", "frame policy 'uniform': order must be one of forward, reverse, shuffle, got 'backwards'"),
    ("single:order=reverse",
     r"frame policy 'single' takes \['mode', 'seed', 'blank', 'repeat'\]; missing \[\], unknown \['order'\]"),
    ("none:k=1", r"frame policy 'none' takes no parameters; missing \[\], unknown \['k'\]"),
])
def test_bad_policies_are_one_line_errors_before_any_video_is_read(text, message):
    with pytest.raises(ValueError, match="^" + message) as caught:
        parse_policy(text)
    assert "\n" not in str(caught.value)


def test_a_rate_above_the_video_rate_takes_every_frame_once():
    assert select("fps", 60, fps=10**9) == (list(range(60)), [])
    assert select("fps", 60, fps=10) == (list(range(60)), [])


@pytest.mark.parametrize("backend", BACKENDS)
def test_frames_come_back_in_order_with_their_timestamps(video, backend):
    frames = sample_frames(Clip(video), policy("uniform", k=6), backend=backend)
    assert frames.array.shape == (6, 64, 64, 3) and frames.array.dtype == np.uint8
    assert read_numbers(frames.array) == frames.indices == [0, 12, 24, 35, 47, 59]
    assert frames.timestamps == pytest.approx([i / FPS for i in frames.indices])


@pytest.mark.parametrize("text", ["uniform:k=6", "fps:fps=2,max_frames=5", "segment_midpoints:k=4",
                                  "second_middles", "quarter_seconds", "consecutive:k=5,seed=1"])
def test_reversed_order_feeds_the_same_frames_backwards(video, text):
    forward = sample_frames(Clip(video), parse_policy(text))
    backward = sample_frames(Clip(video), parse_policy(text + ("," if ":" in text else ":") + "order=reverse"))
    assert len(forward.indices) > 1 and backward.indices == forward.indices[::-1]
    assert read_numbers(backward.array) == backward.indices
    assert backward.timestamps == forward.timestamps[::-1]
    assert parse_policy(text + ("," if ":" in text else ":") + "order=forward") == parse_policy(text)


def test_reversed_joined_clips_play_the_second_clip_first(video, tmp_path):
    other = str(write_video(tmp_path / "b.mp4", numbered(30)[::-1].copy(), FPS))
    forward = sample_joined([Clip(video), Clip(other)], policy("uniform", k=12))
    backward = sample_joined([Clip(video), Clip(other)], policy("uniform", k=12, order="reverse"))
    assert backward.segments == forward.segments[::-1] and backward.segments[0] == 1
    assert np.array_equal(backward.array, forward.array[::-1])


def test_backends_return_the_same_frames(video):
    a = sample_frames(Clip(video), policy("segment_midpoints", k=7), backend="decord")
    b = sample_frames(Clip(video), policy("segment_midpoints", k=7), backend="pyav")
    assert a.indices == b.indices
    assert np.abs(a.array.astype(int) - b.array.astype(int)).max() <= 2


def test_windows_in_seconds_and_in_frame_indices(video):
    sec = sample_frames(Clip(video, start=2.0, end=4.0), policy("uniform", k=3))
    assert read_numbers(sec.array) == [20, 30, 39]  # [2 s, 4 s) = frames 20..39
    pts = sample_frames(Clip(video, start=30, end=60, unit="pts", fps=30), policy("uniform", k=3))
    assert read_numbers(pts.array) == [10, 14, 19] and "converted through time" in pts.notes[0]
    past = sample_frames(Clip(video, start=5.0, end=9.0), policy("uniform", k=3))
    assert read_numbers(past.array) == [50, 54, 59] and "clipped to the end" in past.notes[0]
    with pytest.raises(FrameError, match="after the last frame"):
        sample_frames(Clip(video, start=7.0), policy("uniform", k=3))


def test_resize_on_decode(video):
    frames = sample_frames(Clip(video), policy("single"), size=(32, 48))
    assert frames.array.shape == (1, 48, 32, 3)


@pytest.mark.parametrize("side", [24, 48, 72])
def test_sizes_decords_scaler_rejects_are_decoded_by_pyav(video, side):
    import decord

    with pytest.raises(Exception):  # decord's own size check fails at these sizes: the case handled here
        decord.VideoReader(video, width=side, height=side, num_threads=1).get_batch([0])
    frames = sample_frames(Clip(video), policy("uniform", k=4), size=(side, side))
    assert frames.array.shape == (4, side, side, 3)
    assert read_numbers(frames.array) == frames.indices
    assert np.array_equal(frames.array, sample_frames(Clip(video), policy("uniform", k=4), backend="pyav",
                                                      size=(side, side)).array)


def test_a_file_decords_scaler_rejected_goes_to_pyav_directly_afterwards(video, monkeypatch):
    from bench.frames import decode

    opened = []
    real = decode._decord_reader
    monkeypatch.setattr(decode, "_PROBED", type(decode._PROBED)())  # nothing remembered from other tests
    monkeypatch.setattr(decode, "_decord_reader", lambda path, size: opened.append(size) or real(path, size))
    first = sample_frames(Clip(video), policy("uniform", k=4), size=(24, 24))
    assert opened[-2:] == [(24, 24), None]  # decord's scaler fails, then decord decodes the frames at their own size
    opened.clear()
    again = sample_frames(Clip(video), policy("uniform", k=4), size=(24, 24))
    assert opened == [] and np.array_equal(again.array, first.array)
    assert read_numbers(again.array) == again.indices
    sample_frames(Clip(video), policy("uniform", k=4), size=(32, 48))
    assert opened == [(32, 48)]  # other sizes still go through decord


def test_joined_clips_put_the_black_gap_between_them(video, tmp_path):
    other = str(write_video(tmp_path / "b.mp4", numbered(30)[::-1].copy(), FPS))
    frames = sample_joined([Clip(video), Clip(other)], policy("uniform", k=12), gap_seconds=2.0)
    segments = np.array(frames.segments)
    assert set(segments) == {0, -1, 1}
    assert list(segments) == sorted(segments, key=lambda s: {0: 0, -1: 1, 1: 2}[s])
    gap_times = np.array(frames.timestamps)[segments == -1]
    assert gap_times.min() >= 6.0 and gap_times.max() < 8.0
    assert frames.array[segments == -1].max() == 0
    assert (frames.array[segments != -1].reshape(-1).max()) > 0
    assert read_numbers(frames.array[segments == 0]) == [i for i, s in zip(frames.indices, segments) if s == 0]
    assert read_numbers(frames.array[segments == 1]) == [29 - i for i, s in zip(frames.indices, segments) if s == 1]


def test_joined_sampling_gives_every_part_a_frame(video, tmp_path):
    frames = sample_joined([Clip(video), Clip(video)], policy("uniform", k=2), gap_seconds=2.0)
    assert set(frames.segments) == {0, -1, 1} and any("middle frame added" in n for n in frames.notes)


def test_blind_policy_opens_nothing(tmp_path):
    frames = sample_frames(Clip(str(tmp_path / "absent.mp4")), policy("none"))
    assert frames.array.shape[0] == 0 and frames.indices == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_files_raise_frame_errors(tmp_path, video, backend):
    with pytest.raises(FrameError, match="no such file"):
        sample_frames(Clip(str(tmp_path / "missing.mp4")), policy("single"), backend=backend)
    empty = tmp_path / "empty.mp4"
    empty.write_bytes(b"")
    with pytest.raises(FrameError, match="empty file"):
        sample_frames(Clip(str(empty)), policy("single"), backend=backend)
    garbage = tmp_path / "garbage.mp4"
    garbage.write_bytes(os.urandom(5000))
    with pytest.raises(FrameError):
        sample_frames(Clip(str(garbage)), policy("single"), backend=backend)
    truncated = tmp_path / "truncated.mp4"
    truncated.write_bytes(open(video, "rb").read()[:3000])
    with pytest.raises(FrameError):
        sample_frames(Clip(str(truncated)), policy("uniform", k=4), backend=backend)


def test_prefetch_keeps_order_and_survives_a_corrupt_file(tmp_path, video):
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"not a video at all" * 100)
    clips = [Clip(video), Clip(str(bad)), Clip(video, start=1.0)]
    out = list(prefetch(((i, lambda c=c: sample_frames(c, policy("uniform", k=4))) for i, c in enumerate(clips)),
                        workers=2, queue_size=2))
    assert [k for k, _ in out] == [0, 1, 2]
    assert isinstance(out[1][1], FrameError) and "bad.mp4" in str(out[1][1])
    assert read_numbers(out[2][1].array)[0] == 10


def test_no_file_descriptors_leak(video):
    def count():
        return len(os.listdir("/proc/self/fd"))
    for backend in BACKENDS:
        sample_frames(Clip(video), policy("single"), backend=backend)
    before = count()
    for i in range(40):
        sample_frames(Clip(video, start=i % 5), policy("uniform", k=4), backend=BACKENDS[i % 2])
    list(prefetch(((i, lambda: sample_frames(Clip(video), policy("single"))) for i in range(20)), workers=2))
    assert count() <= before


def test_cache_decodes_once_and_sees_file_changes(video, tmp_path):
    cache = FrameCache()
    a = sample_frames(Clip(video), policy("uniform", k=4), cache=cache)
    b = sample_frames(Clip(video), policy("uniform", k=4), cache=cache)
    assert a is b and (cache.hits, cache.misses) == (1, 1)
    sample_frames(Clip(video), policy("uniform", k=5), cache=cache)
    assert cache.misses == 2
    copy = tmp_path / "c.mp4"
    copy.write_bytes(open(video, "rb").read())
    sample_frames(Clip(str(copy)), policy("single"), cache=cache)
    write_video(copy, numbered(20), FPS)
    os.utime(copy, ns=(1, 1))
    assert read_numbers(sample_frames(Clip(str(copy)), policy("single"), cache=cache).array) == [9]
    small = FrameCache(max_bytes=a.nbytes + 10)
    sample_frames(Clip(video), policy("uniform", k=4), cache=small)
    sample_frames(Clip(video, start=1.0), policy("uniform", k=4), cache=small)
    assert len(small) == 1 and small.bytes <= small.max_bytes


def test_cache_holds_clips_as_played_so_a_reversed_policy_decodes_once(video):
    cache = FrameCache()
    forward = sample_frames(Clip(video), policy("uniform", k=5), cache=cache)
    backward = sample_frames(Clip(video), policy("uniform", k=5, order="reverse"), cache=cache)
    assert (cache.hits, cache.misses) == (1, 1)
    uncached = sample_frames(Clip(video), policy("uniform", k=5, order="reverse"))
    assert read_numbers(backward.array) == read_numbers(uncached.array) == read_numbers(forward.array)[::-1]
    assert backward.indices == uncached.indices == forward.indices[::-1]


def test_a_single_frame_repeated_is_a_still_of_the_middle_frame(video):
    still = sample_frames(Clip(video), policy("single", repeat=4))
    assert still.indices == [29] * 4 and read_numbers(still.array) == [29] * 4


def test_shuffled_order_feeds_the_same_frames_in_a_seeded_order_decoded_once(video):
    cache = FrameCache()
    forward = sample_frames(Clip(video), policy("uniform", k=8), cache=cache)
    shuffled = sample_frames(Clip(video), parse_policy("uniform:k=8,order=shuffle,seed=3"), cache=cache)
    again = sample_frames(Clip(video), policy("uniform", k=8, order="shuffle", seed=3))
    other = sample_frames(Clip(video), policy("uniform", k=8, order="shuffle", seed=4))
    assert (cache.hits, cache.misses) == (1, 1)
    assert sorted(shuffled.indices) == forward.indices and shuffled.indices != forward.indices
    assert read_numbers(shuffled.array) == shuffled.indices == again.indices
    assert other.indices != shuffled.indices and sorted(other.indices) == forward.indices


def test_concurrent_requests_for_one_clip_decode_it_once(video):
    cache, calls, started, again, release = FrameCache(), [], threading.Event(), threading.Event(), threading.Event()

    def slow(*args):
        calls.append(args)
        if len(calls) > 1:
            again.set()
        started.set()
        release.wait(10)
        return sample_frames(Clip(video), policy("uniform", k=3))

    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(cache.get_or_decode, Clip(video), "p", "decord", None, slow)
        started.wait(10)
        second = pool.submit(cache.get_or_decode, Clip(video), "p", "decord", None, slow)
        again.wait(0.5)
        release.set()
        assert first.result() is second.result()
    assert len(calls) == 1 and (cache.hits, cache.misses) == (1, 1)


def test_a_failed_decode_lets_the_waiting_request_decode_itself(video):
    cache, started, release = FrameCache(), threading.Event(), threading.Event()

    def failing(*args):
        started.set()
        release.wait(10)
        raise FrameError(video, "broken")

    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(cache.get_or_decode, Clip(video), "p", "decord", None, failing)
        started.wait(10)
        second = pool.submit(cache.get_or_decode, Clip(video), "p", "decord", None,
                             lambda *a: sample_frames(Clip(video), policy("single")))
        release.set()
        with pytest.raises(FrameError):
            first.result()
        assert second.result().array.shape[0] == 1
    assert cache.misses == 2 and len(cache) == 1


@pytest.mark.slow
def test_perf_frames_prints_ratios(capsys):
    from bench.cli import main

    assert main(["perf", "frames", "--copies", "1", "--frames", "4"]) == 0
    out = capsys.readouterr().out
    assert "naive (open + seek per frame):" in out and out.count("ratio") == 2 and "(3 hits)" in out
