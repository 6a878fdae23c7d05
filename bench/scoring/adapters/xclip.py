"""X-CLIP (a video model): its text embedding depends on the video (the video-specific prompt generator), so every
(clip, texts) group goes through the whole model; the score is ``logits_per_video`` (logit scale x cosine)."""

from __future__ import annotations

from typing import Sequence

import torch

from bench.items import Item
from bench.scoring.adapters.base import Adapter, FrameSource, Scored, model_revision


class XCLIPAdapter(Adapter):
    """One forward pass per clip with all of its item's texts (the text side depends on the clip)."""

    name = "xclip"
    measure = "similarity"

    def __init__(self, model: str, **kwargs):
        super().__init__(model, **kwargs)
        self.load("AutoModel")
        self.frames_needed = int(self.model.config.vision_config.num_frames)

    @torch.inference_mode()
    def score_clip(self, frames, texts: Sequence[str]) -> list[float]:
        """The logits of one clip against ``texts``; the clip must have the model's number of frames."""
        if len(frames) != self.frames_needed:
            raise ValueError(f"X-CLIP {self.model_id} takes {self.frames_needed} frames per clip, got {len(frames)}: "
                             f"use a frame policy with k={self.frames_needed}")
        inputs = self.processor(text=list(texts), videos=[list(frames)], return_tensors="pt", padding=True)
        inputs = {k: (v.to(self.device, self.dtype) if v.is_floating_point() else v.to(self.device))
                  for k, v in inputs.items()}
        return self.model(**inputs).logits_per_video[0].float().cpu().tolist()

    def score(self, items: Sequence[Item], frames: FrameSource, batch_size: int) -> Scored:
        out = Scored()
        for it in items:
            for c in range(len(it.clips)):
                for t, value in enumerate(self.score_clip(frames.clip(it, c).array, it.texts)):
                    out.pair.append({"item_id": it.item_id, "clip": c, "text": t, "score": value})
        return out

    def describe(self) -> dict:
        return {**super().describe(), "revision": model_revision(self.model), "model_class": type(self.model).__name__,
                "frames_per_clip": self.frames_needed}
