"""Video-text encoders (PE-Video, VideoPrism): the clip's frames through the model's video processor and video tower
as one video, each text through its text tower, and the similarity of the two embeddings.

The embeddings come from ``get_video_features`` and ``get_text_features`` (their ``pooler_output``); for an
architecture whose model class lacks them, its row in :data:`bench.scoring.architectures.ARCHITECTURES` names the
forward outputs that hold them (transformers' ``PeVideoModel`` defines both functions inside ``__init__``, so the
class has neither: its ``video_embeds`` and ``text_video_embeds`` are used). The score is the dot product of the two
embeddings as the model returns them: the similarity its own logit is an increasing function of (VideoPrism's
embeddings are L2-normalised by the model, so it is their cosine; PE-Video's logit is it times a scale plus a bias).
The numbers do not depend on the batch: each text is tokenized alone with the processor's own text settings and
texts of one token length go through the text tower together; clips of one shape go through the video tower together.
A model with a fixed number of frames (VideoPrism's ``num_frames``) takes exactly that many per clip.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from bench.frames import Frames
from bench.scoring.architectures import architecture_of
from bench.scoring.backends.base import Backend, Videos, has_frames
from bench.scoring.requests import Match

FEATURES = ("get_video_features", "get_text_features")


def _pooled(output) -> torch.Tensor:
    """One embedding row per input from ``get_*_features`` (a tensor, or an output with ``pooler_output``; VideoPrism
    pools each video to one query: B x 1 x D)."""
    found = output if isinstance(output, torch.Tensor) else output.pooler_output
    return found.reshape(found.shape[0], -1)


class VideoTextBackend(Backend):
    """Dot products of clip and text embeddings from a video-text encoder."""

    vision = "video_processor"

    def __init__(self, model, **kwargs):
        super().__init__(model, **kwargs)
        self.load("AutoModel")
        row = architecture_of(str(getattr(self.model.config, "model_type", "")))
        self.outputs = row.embeddings if row is not None else None
        if self.outputs is None and not all(hasattr(self.model, name) for name in FEATURES):
            raise ValueError(f"{self.model_id}: {type(self.model).__name__} has no get_video_features and "
                             "get_text_features, and no row of the architecture table names its embeddings")
        vision = getattr(self.model.config, "vision_config", None)
        self.frames_needed = getattr(vision, "num_frames", None)

    def encode(self, frames: Frames):
        """One clip's video-processor outputs (``pixel_values_videos`` and, for PE-Video, its padding mask), on a
        decode worker."""
        if not has_frames(frames):
            return frames
        return {k: self.pinned(v.contiguous()) for k, v in self._video_inputs(frames.array).items()}

    def _video_inputs(self, frames) -> dict[str, torch.Tensor]:
        if self.frames_needed and len(frames) != self.frames_needed:
            raise ValueError(f"{type(self.model).__name__} {self.model_id} takes {self.frames_needed} frames per "
                             f"clip, got {len(frames)}: use a frame policy with k={self.frames_needed}")
        found = self.processor(videos=[frames], return_tensors="pt")
        return {k: v for k, v in found.items() if isinstance(v, torch.Tensor)}

    def _text_inputs(self, text: str) -> dict[str, torch.Tensor]:
        found = self.processor(text=[text], return_tensors="pt")
        return {k: v for k, v in found.items() if k in ("input_ids", "attention_mask")}

    @torch.inference_mode()
    def similarities(self, clips: Sequence, texts: Sequence[str]) -> np.ndarray:
        """The similarity (clips x texts) of ``clips`` (frames, or what :meth:`encode` made of them) and ``texts``."""
        inputs = [clip if isinstance(clip, dict) else self._video_inputs(clip.array) for clip in clips]
        by_shape: dict[tuple, list[int]] = {}
        for c, clip in enumerate(inputs):
            by_shape.setdefault(tuple((k, tuple(v.shape)) for k, v in sorted(clip.items())), []).append(c)
        tokens = {t: self._text_inputs(t) for t in dict.fromkeys(texts)}
        by_length: dict[int, list[str]] = {}
        for text, found in tokens.items():
            by_length.setdefault(found["input_ids"].shape[-1], []).append(text)
        out = np.zeros((len(clips), len(texts)), dtype=np.float64)
        column = {t: [i for i, u in enumerate(texts) if u == t] for t in tokens}
        for rows in by_shape.values():
            video = {k: self.concat_on_device([inputs[c][k] for c in rows]) for k in inputs[rows[0]]}
            video_emb = None
            for group in by_length.values():
                text = {k: torch.cat([tokens[t][k] for t in group]).to(self.device) for k in tokens[group[0]]}
                video_emb, text_emb = self._embeddings(video, text, video_emb)
                sims = (video_emb @ text_emb.T).cpu().numpy()
                for j, t in enumerate(group):
                    for i in column[t]:
                        out[rows, i] = sims[:, j]
        return out

    def _embeddings(self, video: dict, text: dict, video_emb: torch.Tensor | None):
        """(video embeddings, text embeddings): through ``get_*_features``, or the forward outputs the
        architecture's row names."""
        if self.outputs is not None:
            found = self.model(**video, **text)
            return getattr(found, self.outputs[0]).float(), getattr(found, self.outputs[1]).float()
        if video_emb is None:
            video_emb = _pooled(self.model.get_video_features(**video)).float()
        return video_emb, _pooled(self.model.get_text_features(**text)).float()

    def answer(self, requests: Sequence[Match], videos: Videos, batch_size: int) -> np.ndarray:
        by_video: dict = {}
        for i, r in enumerate(requests):
            by_video.setdefault(r.video, []).append(i)
        refs = list(by_video)
        for ref in refs:
            if not has_frames(videos.get(ref)):
                raise ValueError(f"no frames for {ref}: video-text encoders need frames (not --frames none)")
        out = np.full((len(requests), 1), np.nan)
        for start in range(0, len(refs), batch_size):
            batch = refs[start:start + batch_size]
            texts = list(dict.fromkeys(requests[i].text for ref in batch for i in by_video[ref]))
            sims = self.similarities([videos[ref] for ref in batch], texts)
            for row, ref in enumerate(batch):
                for i in by_video[ref]:
                    out[i, 0] = sims[row, texts.index(requests[i].text)]
        return out

    def describe(self) -> dict:
        source = f"forward outputs {', '.join(self.outputs)}" if self.outputs else ", ".join(FEATURES)
        return {**super().describe(), "embeddings": source, "frames_per_clip": self.frames_needed,
                "similarity": "dot product of the video and text embeddings as the model returns them"}
