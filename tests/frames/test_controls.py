"""Shortcut controls: each control's frame policy, derived from the run's own, read back from a manifest's policy;
shuffled frames are a seeded permutation per clip, decoded once for every order (joined clips too); the blind control
of a similarity model is one black frame."""

from __future__ import annotations

import numpy as np
import pytest

from bench.commands.score import CONTROLS as COMMAND_CONTROLS
from bench.frames import FrameCache, parse_policy, policy, sample_frames, sample_joined
from bench.frames.controls import CONTROLS, base_policy, control_of, control_policy, run_control
from bench.frames.policies import feeding_order
from bench.items import Clip
from bench.videoio import write_video
from tests.frames.test_frames import FPS, numbered, read_numbers


@pytest.fixture(scope="module")
def video(tmp_path_factory):
    return str(write_video(tmp_path_factory.mktemp("v") / "n60.mp4", numbered(60), FPS))


def test_the_score_command_offers_every_control():
    assert COMMAND_CONTROLS == tuple(CONTROLS)


def test_a_runs_control_is_the_one_it_was_scored_as_else_the_one_its_policy_amounts_to():
    from bench.config import Manifest

    reversed_policy = control_policy("reversed", parse_policy("uniform:k=8")).describe()
    assert run_control(Manifest.from_dict({"frame_policy": reversed_policy})) == "reversed"
    assert run_control(Manifest.from_dict({"control": "one-frame", "frame_policy": {"name": "uniform", "k": 8}})) \
        == "one-frame"
    assert run_control(Manifest.from_dict({"frame_policy": {"name": "uniform", "k": 8}})) is None
    assert run_control(Manifest.from_dict({})) is None


@pytest.mark.parametrize("base", ["uniform:k=8", "fps:fps=1,max_frames=12", "consecutive:k=8,seed=3",
                                  "second_middles"])
@pytest.mark.parametrize("blind_ok", [True, False])
def test_every_control_reads_back_from_its_policy(base, blind_ok):
    own = parse_policy(base)
    assert control_of(own.describe()) is None
    for name in CONTROLS:
        derived = control_policy(name, own, blind_ok)
        assert control_of(derived.describe()) == name
        if name in ("shuffled", "reversed"):
            assert base_policy(derived.describe()) == own.describe()
    assert control_policy("blind", own, True) == policy("none")
    k = dict(own.params).get("k", 1)
    still = {"repeat": k} if k > 1 else {}
    assert control_policy("blind", own, False) == policy("single", mode="middle", blank=True, **still)
    assert control_policy("one-frame", own, blind_ok) == policy("single", mode="middle", **still)


def test_reordering_a_single_frame_and_unknown_controls_are_one_line_errors():
    with pytest.raises(ValueError, match="the shuffled-frames control reorders frames"):
        control_policy("shuffled", policy("single"), True)
    with pytest.raises(ValueError, match="unknown control 'mirrored'; choose among blind, one-frame"):
        control_policy("mirrored", policy("uniform", k=8), True)


def test_shuffle_is_a_seeded_permutation_per_clip():
    first = feeding_order(16, {"order": "shuffle", "seed": 0}, "a")
    assert sorted(first) == list(range(16)) and first != list(range(16))
    assert feeding_order(16, {"order": "shuffle", "seed": 0}, "a") == first
    assert feeding_order(16, {"order": "shuffle", "seed": 1}, "a") != first
    assert feeding_order(16, {"order": "shuffle", "seed": 0}, "b") != first


def test_shuffled_frames_are_the_same_frames_in_another_order_decoded_once(video):
    cache = FrameCache()
    forward = sample_frames(Clip(video), policy("uniform", k=8), cache=cache)
    shuffled = sample_frames(Clip(video), policy("uniform", k=8, order="shuffle", seed=0), cache=cache)
    assert (cache.hits, cache.misses) == (1, 1)
    assert sorted(shuffled.indices) == forward.indices and shuffled.indices != forward.indices
    assert read_numbers(shuffled.array) == shuffled.indices
    assert sample_frames(Clip(video), policy("uniform", k=8, order="shuffle", seed=0)).indices == shuffled.indices


def test_joined_clips_through_the_cache_are_the_frames_decoded_without_it_once_for_every_order(video, tmp_path):
    other = str(write_video(tmp_path / "other.mp4", numbered(30)[::-1].copy(), FPS))
    clips, cache = [Clip(video), Clip(other)], FrameCache()
    for order in ("forward", "reverse", "shuffle", "forward"):
        chosen = policy("uniform", k=12, order=order)
        alone, cached = sample_joined(clips, chosen), sample_joined(clips, chosen, cache=cache)
        assert np.array_equal(cached.array, alone.array) and cached.indices == alone.indices
        assert (cached.segments, cached.notes, cached.timestamps) == (alone.segments, alone.notes, alone.timestamps)
    assert (cache.hits, cache.misses) == (3, 1)
    sample_joined(clips, policy("uniform", k=12), gap_seconds=1.0, cache=cache)  # another gap: another entry
    sample_joined(clips[::-1], policy("uniform", k=12), cache=cache)  # the other clip first: another entry
    assert cache.misses == 3


def test_a_blank_frame_is_black_at_the_clip_size(video):
    for frames in (sample_frames(Clip(video), policy("single", blank=True)),
                   sample_joined([Clip(video), Clip(video)], policy("single", blank=True))):
        assert frames.array.shape[1:] == (64, 64, 3) and not frames.array.any()
        assert any("blanked" in n for n in frames.notes)
    assert np.asarray(sample_frames(Clip(video), policy("single")).array).any()
