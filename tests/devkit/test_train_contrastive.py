"""The contrastive recipe's parts: which captions the in-batch loss contrasts, and how often a pass draws each clip."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

from bench.devkit.train.contrastive import _in_batch, drawn_clips
from bench.devkit.train.data import GENERIC_CLAIMS, STYLES, Decoded
from bench.devkit.world.split import training_split


@pytest.fixture(scope="module")
def decoded(tmp_path_factory):
    split = training_split(tmp_path_factory.mktemp("split") / "split", videos_per_kind=2, pairs=2, seed=5)
    return Decoded(split, sorted({e.video for e in split.examples}), frames=[])


def test_generic_captions_are_the_presence_and_shape_count_claims_in_every_style(decoded):
    generic = decoded.generic_captions()
    kinds = {e.kind.split("/")[1] for e in decoded.split.examples}
    assert set(GENERIC_CLAIMS) <= kinds  # the split has claims of each generic kind
    for e in decoded.split.examples:
        styled = {style(e.texts[0]) for style in STYLES}
        if e.kind.split("/")[1] in GENERIC_CLAIMS:
            assert styled <= generic, e
        elif e.foil_type in ("order", "action", "attribute"):  # captions that name what happens or how it looks
            assert not styled & generic, e


def test_the_in_batch_loss_never_contrasts_a_generic_caption():
    claims = [["a red circle jumps", "a red square jumps"],
              ["there are exactly two shapes", "there is exactly one shape"],
              ["a blue square grows", "a blue square shrinks"], ["there is a red circle", "there is a red square"]]
    texts = list(dict.fromkeys(t for claim in claims for t in claim))
    column = {t: i for i, t in enumerate(texts)}
    generic = {"there are exactly two shapes", "there is a red circle"}
    scores = torch.randn(len(claims), len(texts), generator=torch.Generator().manual_seed(0))
    loss = _in_batch(scores, claims, column, generic)
    kept = [0, 2]
    expected = torch.nn.functional.cross_entropy(scores[kept][:, [column[claims[i][0]] for i in kept]],
                                                 torch.arange(len(kept)))
    assert loss.item() == pytest.approx(expected.item())
    moved = scores.clone()
    moved[1] += 5.0  # a generic claim's clip
    moved[:, column["there is a red circle"]] -= 5.0  # a generic caption
    assert _in_batch(moved, claims, column, generic).item() == pytest.approx(loss.item())
    moved[0, column["a blue square grows"]] += 5.0  # another clip's specific caption: a negative
    assert _in_batch(moved, claims, column, generic).item() > loss.item() + 1.0
    assert _in_batch(scores, claims[1::2], column, generic).item() == 0.0  # only generic claims: nothing to contrast


def test_a_pass_draws_each_clip_once_and_clips_with_claims_about_time_as_often_as_asked(decoded):
    every, timed = decoded.claims()
    assert timed and set(every) - set(timed)
    for draws in (1, 2, 3):
        seen = Counter(drawn_clips(every, timed, draws).tolist())
        assert set(seen) == set(every)
        assert all(seen[clip] == (draws if clip in timed else 1) for clip in every)
