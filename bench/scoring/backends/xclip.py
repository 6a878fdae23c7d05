"""X-CLIP (a video model): its text embedding depends on the video (the video-specific prompt generator), so every
clip goes through the whole model with the texts asked of it; the answer is ``logits_per_video`` (logit scale x
cosine). The frames of ``batch_size`` clips go through the model in one forward pass, against the texts asked of any
of them (each clip's logits do not depend on the other clips of its batch); each clip's frames go through the video
processor on a decode worker (:meth:`XCLIPBackend.encode`)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from bench.frames import Frames
from bench.scoring.backends.base import Backend, Videos, has_frames
from bench.scoring.requests import Match


class XCLIPBackend(Backend):
    """One forward pass per ``batch_size`` clips with their texts (the text side depends on the clip)."""

    def __init__(self, model: str, **kwargs):
        super().__init__(model, **kwargs)
        self.load("AutoModel")
        self.frames_needed = int(self.model.config.vision_config.num_frames)

    def encode(self, frames: Frames):
        """One clip's pixel tensor (1 x T x 3 x H x W) from the video processor, on a decode worker."""
        if not has_frames(frames):
            return frames
        return self.pinned(self._pixels(frames.array))

    def _check_frames(self, count: int) -> None:
        if count != self.frames_needed:
            raise ValueError(f"X-CLIP {self.model_id} takes {self.frames_needed} frames per clip, got {count}: "
                             f"use a frame policy with k={self.frames_needed}")

    def _pixels(self, frames) -> torch.Tensor:
        return self.processor(videos=[list(frames)], return_tensors="pt")["pixel_values"]

    @torch.inference_mode()
    def score_clips(self, clips: Sequence, texts: Sequence[str]) -> np.ndarray:
        """The logits (clips x texts) of ``clips`` (frames, or what :meth:`encode` made of them) against ``texts``
        in one forward pass; every clip must have the model's number of frames."""
        pixels = []
        for clip in clips:
            if isinstance(clip, torch.Tensor) and clip.is_floating_point():
                self._check_frames(clip.shape[1])
                pixels.append(clip)
            else:
                self._check_frames(len(clip.array))
                pixels.append(self._pixels(clip.array))
        tokens = self.processor(text=list(texts), return_tensors="pt", padding=True)
        logits = self.model(input_ids=tokens["input_ids"].to(self.device),
                            attention_mask=tokens["attention_mask"].to(self.device),
                            pixel_values=self.concat_on_device(pixels)).logits_per_video
        return logits.float().cpu().numpy()

    def answer(self, requests: Sequence[Match], videos: Videos, batch_size: int) -> np.ndarray:
        by_video: dict = {}
        for i, r in enumerate(requests):
            by_video.setdefault(r.video, []).append(i)
        refs = list(by_video)
        out = np.full((len(requests), 1), np.nan)
        for start in range(0, len(refs), batch_size):
            batch = refs[start:start + batch_size]
            texts = list(dict.fromkeys(requests[i].text for ref in batch for i in by_video[ref]))
            column = {t: k for k, t in enumerate(texts)}
            logits = self.score_clips([videos[ref] for ref in batch], texts)
            for row, ref in enumerate(batch):
                for i in by_video[ref]:
                    out[i, 0] = logits[row, column[requests[i].text]]
        return out

    def describe(self) -> dict:
        return {**super().describe(), "frames_per_clip": self.frames_needed}
