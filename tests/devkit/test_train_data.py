"""The training draws: which claims count as claims about time, and how a draw asks them of the clip and of the clip
played backwards."""

from __future__ import annotations

import numpy as np
import pytest

from bench.devkit.train.data import TIME_FOILS, Decoded, draw_claim
from bench.devkit.world.split import training_split


@pytest.fixture(scope="module")
def decoded(tmp_path_factory):
    split = training_split(tmp_path_factory.mktemp("split") / "split", videos_per_kind=2, pairs=2, seed=3)
    videos = sorted({e.video for e in split.examples})
    return Decoded(split, videos, frames=[])


def test_every_order_direction_and_state_claim_is_a_claim_about_time(decoded):
    every, timed = decoded.claims()
    position = decoded.index()
    expected = {(position[e.video], e.kind) for e in decoded.split.examples
                if e.foil_type in TIME_FOILS or e.reverses}
    assert {(v, e.kind) for v, examples in timed.items() for e in examples} == expected
    # the episode's chronology is about order though its reversal is not its foil's world: it is drawn as timed too
    assert any(e.kind == "episode/chrono" and not e.reverses for examples in timed.values() for e in examples)
    assert sum(map(len, every.values())) == len(decoded.split.examples)


def test_a_timed_draw_asks_a_claim_about_time_and_a_reversible_one_of_the_clip_backwards_too(decoded):
    every, timed = decoded.claims()
    rng = np.random.default_rng(0)
    for clip in timed:
        times = {tuple(e.texts[:2]) for e in timed[clip]}
        for _ in range(5):
            drawn = draw_claim(rng, every, timed, clip, reversing=1.0)
            forward = drawn[0][1]
            assert drawn[0][0] is False
            styled = {(a.lower().rstrip("."), b.lower().rstrip(".")) for a, b in times}
            assert (forward[0].lower().rstrip("."), forward[1].lower().rstrip(".")) in styled
            if len(drawn) == 2:  # reversible: the clip backwards makes the first foil true
                assert drawn[1] == (True, [forward[1], forward[0], *forward[2:]])
