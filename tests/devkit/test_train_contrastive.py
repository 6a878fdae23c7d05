"""The contrastive recipe's parts: which captions the in-batch loss contrasts, how often a pass draws each clip, and
X-CLIP's training logits from its fixed tower's frame features (its own forward pass)."""

from __future__ import annotations

from collections import Counter

import numpy as np
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


def _xclip(tiny):
    from bench.scoring.families import load_backend

    backend = load_backend("xclip", tiny("xclip"), device="cpu", dtype="float32")
    return backend.model, backend.processor


def test_xclips_training_logits_from_fixed_frame_features_are_its_own_forward_pass_forwards_and_backwards(tiny):
    from bench.devkit.train.contrastive import xclip_frame_features, xclip_logits, xclip_pixels

    model, processor = _xclip(tiny)
    with torch.no_grad():
        model.prompts_generator.alpha.zero_()  # the world's X-CLIP's prompt_alpha
    frames = model.config.vision_config.num_frames
    rng = np.random.default_rng(1)
    clips = [rng.integers(0, 255, (frames, 32, 32, 3), dtype=np.uint8) for _ in range(3)]
    texts = processor.tokenizer(["a red square jumps", "a circle moves left", "a triangle grows"], padding=True,
                                return_tensors="pt")
    pixels = xclip_pixels(processor, clips)
    features = xclip_frame_features(model, pixels, chunk=2)
    assert features.shape[:2] == pixels.shape[:2]
    for shown, fed in ((pixels, features), (pixels.flip(1), features.flip(1))):  # backwards: the features backwards
        with torch.no_grad():
            own = model(input_ids=texts.input_ids, attention_mask=texts.attention_mask, pixel_values=shown)
            mine = xclip_logits(model, fed, texts.input_ids, texts.attention_mask)
        assert torch.allclose(mine, own.logits_per_video, atol=1e-4)
    with torch.no_grad():
        forwards = xclip_logits(model, features, texts.input_ids, texts.attention_mask)
        backwards = xclip_logits(model, features.flip(1), texts.input_ids, texts.attention_mask)
    assert not torch.allclose(forwards, backwards, atol=1e-4)  # the temporal transformer sees the order


def test_xclips_training_logits_refuse_a_model_whose_prompts_add_something(tiny):
    from bench.devkit.train.contrastive import xclip_logits

    model, _ = _xclip(tiny)
    with torch.no_grad():
        model.prompts_generator.alpha.fill_(0.1)
    ids = torch.ones((1, 4), dtype=torch.long)
    with pytest.raises(ValueError, match="prompt_alpha is 0"):
        xclip_logits(model, torch.zeros((1, model.config.vision_config.num_frames, 64)), ids, ids)
