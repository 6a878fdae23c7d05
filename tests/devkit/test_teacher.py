"""The X-CLIP teacher of the Video-LLM: its logits are X-CLIP's own forward pass (``logits_per_video``, video-specific
text prompts included) on the processed clip, played forwards or backwards, with each vision and text pass done once."""

from __future__ import annotations

import numpy as np
import torch

from bench.devkit.train.teacher import Teacher
from bench.scoring.families import load_backend

TEXTS = ["a red square jumps", "a blue circle moves to the left", "first a red square jumps, then a circle grows"]


def test_the_teachers_logits_and_video_embeddings_are_xclips_own(tiny):
    backend = load_backend("xclip", tiny("xclip"), device="cpu", dtype="float32")
    model, processor = backend.model, backend.processor
    frames = model.config.vision_config.num_frames
    rng = np.random.default_rng(0)
    clips = [rng.integers(0, 255, (frames, 32, 32, 3), dtype=np.uint8) for _ in range(3)]
    teacher = Teacher(model, processor, clips, chunk=2)
    text = processor.tokenizer(TEXTS, padding=True, return_tensors="pt")
    for i, clip in enumerate(clips):
        for backwards in (False, True):
            shown = clip[::-1].copy() if backwards else clip
            pixels = processor(videos=[list(shown)], return_tensors="pt")["pixel_values"]
            with torch.no_grad():
                own = model(input_ids=text.input_ids, attention_mask=text.attention_mask, pixel_values=pixels)
            assert torch.allclose(teacher.logits(i, backwards, TEXTS), own.logits_per_video[0], atol=1e-4)
            assert torch.allclose(teacher.video[(i, backwards)], own.video_embeds[0], atol=1e-5)
    assert not torch.allclose(teacher.logits(0, False, TEXTS), teacher.logits(0, True, TEXTS), atol=1e-4)
    assert teacher.text(TEXTS).shape == (len(TEXTS), teacher.width)
    assert torch.allclose(teacher.text(TEXTS).norm(dim=-1), torch.ones(len(TEXTS)))
