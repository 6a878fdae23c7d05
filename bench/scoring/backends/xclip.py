"""X-CLIP (a video model): its text embedding depends on the video (the video-specific prompt generator), so every
clip goes through the whole model with all the texts asked of it; the answer is ``logits_per_video`` (logit scale x
cosine)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from bench.scoring.backends.base import Backend, Videos
from bench.scoring.requests import Match


class XCLIPBackend(Backend):
    """One forward pass per clip with its texts (the text side depends on the clip)."""

    def __init__(self, model: str, **kwargs):
        super().__init__(model, **kwargs)
        self.load("AutoModel")
        self.frames_needed = int(self.model.config.vision_config.num_frames)

    @torch.inference_mode()
    def score_clip(self, frames: np.ndarray, texts: Sequence[str]) -> list[float]:
        """The logits of one clip against ``texts``; the clip must have the model's number of frames."""
        if len(frames) != self.frames_needed:
            raise ValueError(f"X-CLIP {self.model_id} takes {self.frames_needed} frames per clip, got {len(frames)}: "
                             f"use a frame policy with k={self.frames_needed}")
        inputs = self.processor(text=list(texts), videos=[list(frames)], return_tensors="pt", padding=True)
        inputs = {k: (v.to(self.device, self.dtype) if v.is_floating_point() else v.to(self.device))
                  for k, v in inputs.items()}
        return self.model(**inputs).logits_per_video[0].float().cpu().tolist()

    def answer(self, requests: Sequence[Match], videos: Videos, batch_size: int) -> np.ndarray:
        by_video: dict = {}
        for i, r in enumerate(requests):
            by_video.setdefault(r.video, []).append(i)
        out = np.full((len(requests), 1), np.nan)
        for ref, rows in by_video.items():
            texts = list(dict.fromkeys(requests[i].text for i in rows))
            logits = dict(zip(texts, self.score_clip(videos[ref], texts)))
            for i in rows:
                out[i, 0] = logits[requests[i].text]
        return out

    def describe(self) -> dict:
        return {**super().describe(), "frames_per_clip": self.frames_needed}
