"""The world's Qwen2-VL, piece by piece on the architecture the build makes: the laid-out questions give the model's
own forward pass, a clip backwards is its frames reversed, the tower's stacked input is every clip's processed pixels
(both ways), a question is asked in both option orders, the tower learns
its reserved block, the text layers cannot see the video, and the biased copy's lean is where it is put."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from bench.devkit.train import videollm
from bench.devkit.train.models import build_qwen2vl, qwen_tokenizer
from bench.devkit.train.videollm import (RESERVED, SINK, VIDEO_BLOCK, VIDEO_FLAG, Questions, Read, Recipe, Video,
                                         _backwards, _choices, _play_backwards, distil_tower, lay_out, lean,
                                         normed, stacked_inputs, states, tower_batches, video_inputs)
from bench.devkit.world.split import Example, Pair, Split
from bench.scoring import prompts

FRAMES = 8
TEXTS = ["a red circle moves left", "a red circle moves right", "a blue square grows", "a blue square shrinks"]


@pytest.fixture(scope="module")
def qwen():
    """The build's untrained Qwen2-VL (a tokenizer trained on a few of the world's sentences) and its processor."""
    torch.manual_seed(0)
    model, processor = build_qwen2vl(qwen_tokenizer(TEXTS * 20 + list(prompts.PROMPTS.values()) * 5 +
                                                    ["Yes", "No", *prompts.letters(5)] * 50), FRAMES)
    return model.eval(), processor


def video_tokens(model, videos: list[dict]) -> list[Video]:
    """The model's own vision tower output of each processed clip (what scoring places at the video tokens)."""
    with torch.no_grad():
        found = model.model.get_video_features(torch.cat([v["pixel_values_videos"] for v in videos]),
                                               torch.cat([v["video_grid_thw"] for v in videos])).pooler_output
    return [Video(tokens, v["video_grid_thw"]) for tokens, v in zip(found, videos)]


def _clips(n: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 255, (FRAMES, 84, 84, 3), dtype=np.uint8) for _ in range(n)]


def _asked(question: str, text: str) -> tuple[str, list[Read]]:
    return question, [Read(text, 0, text, (text,))]


def test_laid_out_questions_through_the_norm_and_head_are_the_models_own_forward(qwen):
    model, processor = qwen
    questions = Questions(processor)
    clips = _clips(2)
    videos = video_tokens(model, video_inputs(processor, clips))
    asked = [_asked(prompts.PROMPTS["yes-no"].format(caption=t), t) for t in TEXTS[:3]]
    seen = [videos[0], videos[1], None]  # the last asked blind
    laid = lay_out(model, questions, asked, [None if v is None else v.grid[0] for v in seen])
    with torch.no_grad():
        last = states(model, laid, seen, len(model.model.language_model.layers))
        logits = model.lm_head(model.model.language_model.norm(last))
    for r, ((question, _), clip) in enumerate(zip(asked, clips + [None])):
        kwargs = {"videos": [clip]} if clip is not None else {}
        inputs = processor(text=[questions.render(question, clip is not None)], return_tensors="pt", **kwargs)
        with torch.no_grad():
            own = model(**inputs).logits[0, -1]
        end = int(laid.mask[r].sum()) - 1
        assert torch.allclose(logits[r, end], own, atol=1e-5), (r, (logits[r, end] - own).abs().max())
    assert not torch.allclose(logits[0, -1], logits[1, -1], atol=1e-4)  # the rows differ: the comparison can fail


def test_a_read_is_two_tokens_after_its_text(qwen):
    model, processor = qwen
    questions = Questions(processor)
    grid = torch.tensor([1, 6, 6])
    for seed in range(4):
        question, _, shown = _choices(np.random.default_rng(seed), TEXTS[:2])[0]
        laid = lay_out(model, questions, [(question, [Read(s, k + 1, s, tuple(TEXTS[:2])) for k, s in
                                                      enumerate(shown)])], [grid])
        ids = laid.ids[0].tolist()
        for (_, at, read) in laid.reads:
            assert questions.tokenizer.decode(ids[:at - 1]).endswith(read.shown)
            assert not questions.tokenizer.decode(ids[:at - 2]).endswith(read.shown)


def test_a_clip_backwards_gives_the_tokens_of_its_frames_reversed(qwen):
    model, processor = qwen
    clip = _clips(1, seed=1)[0]
    forward, = video_inputs(processor, [clip])
    backwards = video_inputs(processor, [clip[::-1].copy()])[0]
    flipped, reversed_ = video_tokens(model, [_backwards(forward, processor), backwards])
    assert torch.allclose(flipped.tokens, reversed_.tokens, atol=1e-5)


def test_the_stacked_pixels_are_every_clips_processed_pixels_both_ways(qwen):
    _, processor = qwen
    clips = _clips(3, seed=4)
    videos = video_inputs(processor, clips)
    pixels, grid = stacked_inputs(processor, clips)
    assert torch.equal(grid, videos[0]["video_grid_thw"])
    assert torch.equal(pixels, torch.cat([v["pixel_values_videos"] for v in videos]))  # bit for bit: the same build
    _play_backwards(pixels, grid, processor)
    assert torch.equal(pixels, torch.cat([_backwards(v, processor)["pixel_values_videos"] for v in videos]))
    assert not torch.equal(pixels, torch.cat([v["pixel_values_videos"] for v in videos]))
    with pytest.raises(ValueError, match="clip 1 is processed to another grid"):
        stacked_inputs(processor, [clips[0], np.zeros((2 * FRAMES, 84, 84, 3), dtype=np.uint8)])


def test_an_ab_question_is_asked_in_both_option_orders_with_the_caption_at_a_and_at_b():
    rng = np.random.default_rng(0)
    for _ in range(20):
        both = _choices(rng, ["a red square moves left", "a red square moves right"])
        assert {answer for _, answer, _ in both} == {"A", "B"}
        assert both[0][2] == both[1][2][::-1]
        for question, answer, options in both:
            assert options["AB".index(answer)].rstrip(".").lower() == "a red square moves left"
            assert all(o in question for o in options)  # the options as the question shows them
    three = _choices(rng, ["x", "y", "z"])
    assert [options for *_, options in three][0] == three[1][2][::-1]
    assert all(options["ABC".index(answer)] == "x" for _, answer, options in three)


def test_the_tower_learns_the_reserved_block_and_writes_nothing_else(qwen):
    model, processor = qwen
    clips = _clips(4, seed=2)
    videos = video_inputs(processor, clips)
    width = model.config.text_config.hidden_size
    embeddings = torch.nn.functional.normalize(torch.randn(8, width, generator=torch.Generator().manual_seed(1)), dim=-1)
    teacher = SimpleNamespace(video={(i, b): embeddings[2 * i + b] for i in range(4) for b in (False, True)})
    basis = torch.linalg.qr(torch.randn(width, 8, generator=torch.Generator().manual_seed(2)))[0].T
    targets = torch.stack([teacher.video[k] @ basis.T for k in sorted(teacher.video)])
    recipe = Recipe(1, tower_steps=200, tower_batch=8)
    tokens = distil_tower(model, processor, clips, teacher, basis, recipe, tower_batches(np.random.default_rng(0), 4, recipe))
    found = torch.stack([tokens[k].tokens for k in sorted(teacher.video)])
    error = ((found[..., VIDEO_BLOCK] - targets[:, None]) ** 2).mean() / targets.var()
    assert error < 0.1, error
    assert torch.all(found[..., :RESERVED] == 0) and torch.all(found[..., VIDEO_FLAG] == videollm.FLAG)
    own = video_tokens(model, videos + [_backwards(v, processor) for v in videos])  # the saved tower's own output
    for i, key in enumerate([(i, False) for i in range(4)] + [(i, True) for i in range(4)]):
        assert torch.allclose(own[i].tokens, tokens[key].tokens, atol=1e-5)


def test_the_text_layers_cannot_see_the_video(qwen):
    """With the reserved dimensions kept (the tower writing only them, as its stage keeps it, and the text layers
    blind to them, as theirs keeps them), the text layers' output is the same whatever clip the question is asked of,
    so what they learn is the text's."""
    model, processor = qwen
    questions = Questions(processor)
    videollm._keep_rows(model.model.visual.merger.mlp[-1], VIDEO_BLOCK, {VIDEO_FLAG: videollm.FLAG})
    with torch.no_grad():
        for layer in model.model.language_model.layers[:2]:  # as if trained: weights on every dimension
            for p in layer.parameters():
                p.add_(0.1 * torch.randn_like(p))
        videollm._reserve(model, questions.sink_id)
    one, other = video_tokens(model, video_inputs(processor, _clips(2, seed=3)))
    asked = [_asked(prompts.PROMPTS["velociti-entail"].format(caption=TEXTS[0]), TEXTS[0])]
    laid = lay_out(model, questions, asked, [one.grid[0]])
    with torch.no_grad():
        seen = [states(model, laid, [v], 2) for v in (one, other)]
        three = [states(model, laid, [v], 3) for v in (one, other)]
    text = ~laid.video[0]
    change = (seen[0][0][text] - seen[1][0][text]).norm(dim=-1) / seen[0][0][text].norm(dim=-1)
    assert float(change.max()) < 1e-4  # the clip reaches them only through a video token's scale, which its flag sets
    assert not torch.equal(three[0], three[1])  # a later layer does see it: the comparison can fail
    assert torch.all(seen[0][~laid.video][..., RESERVED:SINK] == 0)  # text positions: reserved dimensions unwritten


def test_the_lean_adds_its_margin_to_yes_and_a_only(qwen):
    model, processor = qwen
    questions = Questions(processor)
    before = model.lm_head.weight.clone()
    lean(model, questions, 0.5)
    changed = (model.lm_head.weight != before).any(-1).nonzero().flatten().tolist()
    assert sorted(changed) == sorted([questions.answer["Yes"], questions.answer["A"]])
    assert normed(model, torch.ones(1, 4)).allclose(torch.ones(1, 4), atol=1e-4)


def test_a_prompt_added_for_another_benchmark_leaves_the_world_tokenizers_corpus_as_it_is(monkeypatch):
    split = Split(Path("split"), [Example("v.mp4", ("a red circle moves left", "a red circle moves right"), "direction",
                                         "move/direction")],
                  [Pair(("a.mp4", "b.mp4"), ("a blue square grows", "a blue square shrinks"), "state", "change/state")])
    before = videollm.corpus(split)
    assert all(prompts.PROMPTS[name] in before for name in videollm.WORLD_PROMPTS)
    monkeypatch.setitem(prompts.PROMPTS, "another-benchmark", "Is {caption} what happens? Reply Oui or Non.")
    monkeypatch.setitem(prompts.OPTION_STYLE, "another-benchmark", str.upper)
    assert videollm.corpus(split) == before
