"""The Video-LLM's training forward pass: its answer logits are those of the model's own forward pass on the video
processor's output (what scoring runs), so the frozen vision tower's tokens computed once change nothing."""

from __future__ import annotations

import numpy as np
import torch

from bench.devkit.train.videollm import Questions, _backwards, answer_logits, video_inputs, video_tokens
from bench.scoring.families import load_backend


def _clips(n: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 255, (8, 84, 84, 3), dtype=np.uint8) for _ in range(n)]


def test_training_answer_logits_are_the_models_own_forward_on_the_processed_clips(tiny):
    backend = load_backend("videollm", tiny("qwen2vl"), device="cpu", dtype="float32")
    model, processor = backend.model, backend.processor
    questions = Questions(processor)
    clips = _clips(3)
    videos = video_inputs(processor, clips)
    asked = ["Does this video show a red circle?", "Is it a square?", "Which one: A) a circle B) a long red square?"]
    rows = list(zip(asked, video_tokens(model, videos, chunk=2)))
    batched = answer_logits(model, questions, rows)
    for (question, _), clip, logits in zip(rows, clips, batched):
        inputs = processor(text=[questions.render(question)], videos=[clip], return_tensors="pt")
        with torch.no_grad():
            own = model(**inputs).logits[0, -1]
        assert torch.allclose(logits, own, atol=1e-5), (logits - own).abs().max()
    assert not torch.allclose(batched[0], batched[1], atol=1e-3)  # the rows differ: the comparison can fail


def test_a_clip_backwards_gives_the_tokens_of_its_frames_reversed(tiny):
    backend = load_backend("videollm", tiny("qwen2vl"), device="cpu", dtype="float32")
    model, processor = backend.model, backend.processor
    clip = _clips(1, seed=1)[0]
    forward, = video_inputs(processor, [clip])
    backwards = video_inputs(processor, [clip[::-1].copy()])[0]
    flipped, reversed_ = video_tokens(model, [_backwards(forward, processor), backwards])
    assert torch.allclose(flipped.tokens, reversed_.tokens, atol=1e-5)
