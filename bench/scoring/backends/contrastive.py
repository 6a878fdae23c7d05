"""Contrastive image-text models (CLIP, SigLIP) applied to video frames: pooled frame embeddings.

Each clip's frames are embedded once, L2-normalised, averaged and normalised again (ViLMA's CLIP scripts); each
distinct text is embedded once; a :class:`~bench.scoring.requests.Match` scores the cosine similarity. Frames of all
the clips of a batch of requests go through the image tower together.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from bench.scoring.backends.base import Backend, Videos
from bench.scoring.requests import Match


def _features(output) -> torch.Tensor:
    """Projected embeddings from ``get_*_features`` (a tensor, or an output with ``pooler_output``)."""
    return output if isinstance(output, torch.Tensor) else output.pooler_output


class ContrastiveBackend(Backend):
    """Similarities of clips and texts."""

    def __init__(self, model: str, **kwargs):
        super().__init__(model, **kwargs)
        self.load("AutoModel")
        self._texts: dict[str, np.ndarray] = {}

    def reset(self) -> None:
        self._texts.clear()

    @torch.inference_mode()
    def embed_texts(self, texts: Sequence[str], batch_size: int) -> dict[str, np.ndarray]:
        """Normalised text embeddings, each distinct text computed once per model."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._texts]
        for start in range(0, len(todo), batch_size):
            batch = todo[start:start + batch_size]
            inputs = self.processor(text=batch, return_tensors="pt", padding="max_length", truncation=True,
                                    max_length=self._max_length())
            inputs = {k: v.to(self.device) for k, v in inputs.items() if k in ("input_ids", "attention_mask")}
            emb = torch.nn.functional.normalize(_features(self.model.get_text_features(**inputs)).float(), dim=-1)
            self._texts.update(zip(batch, emb.cpu().numpy()))
        return {t: self._texts[t] for t in texts}

    def _max_length(self) -> int:
        return int(self.model.config.text_config.max_position_embeddings)

    @torch.inference_mode()
    def embed_clips(self, clips: Sequence[np.ndarray], batch_size: int) -> np.ndarray:
        """One normalised embedding per clip: the normalised mean of its normalised frame embeddings; the frames of
        all clips are embedded together, ``batch_size`` images per forward pass."""
        frames = [frame for clip in clips for frame in clip]
        embs = []
        for start in range(0, len(frames), batch_size):
            inputs = self.processor(images=frames[start:start + batch_size], return_tensors="pt")
            pixels = inputs["pixel_values"].to(self.device, self.dtype)
            embs.append(torch.nn.functional.normalize(
                _features(self.model.get_image_features(pixel_values=pixels)).float(), dim=-1))
        per_frame = torch.cat(embs)
        bounds = np.cumsum([0] + [len(clip) for clip in clips])
        means = torch.stack([per_frame[a:b].mean(dim=0) for a, b in zip(bounds[:-1], bounds[1:])])
        return torch.nn.functional.normalize(means, dim=-1).cpu().numpy()

    def answer(self, requests: Sequence[Match], videos: Videos, batch_size: int) -> np.ndarray:
        refs = list(dict.fromkeys(r.video for r in requests))
        clips = []
        for ref in refs:
            frames = videos.get(ref)
            if frames is None or not len(frames):
                raise ValueError(f"no frames for {ref}: contrastive models need frames (not --frames none)")
            clips.append(frames)
        clip_emb = dict(zip(refs, self.embed_clips(clips, batch_size))) if refs else {}
        text_emb = self.embed_texts([r.text for r in requests], batch_size)
        return np.array([[float(text_emb[r.text] @ clip_emb[r.video])] for r in requests]).reshape(-1, 1)

    def describe(self) -> dict:
        return {**super().describe(), "pooling": "mean of normalised frame embeddings"}
