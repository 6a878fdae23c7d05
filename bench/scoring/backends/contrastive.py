"""Contrastive image-text models (CLIP, SigLIP) applied to video frames: pooled frame embeddings.

Each clip's frames are embedded once, L2-normalised, averaged and normalised again (ViLMA's CLIP scripts); each
distinct text is embedded once; a :class:`~bench.scoring.requests.Match` scores the cosine similarity. The frames of
``batch_size`` clips go through the image tower in one forward pass. Each clip's frames go through the image
processor on a decode worker (:meth:`ContrastiveBackend.encode`), or, on CUDA, on the GPU after a non-blocking copy of
the pinned frames (``preprocess``: "auto", "cpu" or "device").
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

    def __init__(self, model, *, preprocess: str = "auto", **kwargs):
        super().__init__(model, **kwargs)
        if preprocess not in ("auto", "cpu", "device"):
            raise ValueError(f"preprocess must be auto, cpu or device, got {preprocess!r}")
        self.load("AutoModel")
        self.preprocess = "device" if preprocess == "device" or (preprocess == "auto" and self.on_cuda) else "cpu"
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

    def encode(self, frames: np.ndarray):
        """One clip's pixel tensor (T x 3 x H x W) from the image processor, on a decode worker; with
        ``preprocess="device"`` the frames pinned for the copy (the processor then runs on the device)."""
        if frames is None or not len(frames):
            return frames
        if self.preprocess == "device":
            return self.pinned(torch.from_numpy(np.ascontiguousarray(frames)))
        return self.pinned(self._process_frames(frames).contiguous())

    def _process_frames(self, frames) -> torch.Tensor:
        """The image processor's pixel values of a clip's frames (on the device with ``preprocess="device"``)."""
        kwargs = {}
        if self.preprocess == "device":
            frames = torch.as_tensor(frames).to(self.device, non_blocking=self.on_cuda)
            kwargs["device"] = self.device
        return self.processor(images=list(frames), return_tensors="pt", **kwargs)["pixel_values"]

    def _device_pixels(self, pixels: Sequence[torch.Tensor]) -> torch.Tensor:
        """The clips' pixel tensors, each copied to the device (without blocking, from pinned memory), concatenated
        there."""
        return torch.cat([self.to_device(p) for p in pixels])

    @torch.inference_mode()
    def embed_clips(self, clips: Sequence, batch_size: int) -> np.ndarray:
        """One normalised embedding per clip (frames, or what :meth:`encode` made of them): the normalised mean of
        its normalised frame embeddings; the frames of ``batch_size`` clips go through the image tower together."""
        embs = []
        for start in range(0, len(clips), batch_size):
            pixels = [clip if isinstance(clip, torch.Tensor) and clip.is_floating_point() else self._process_frames(clip)
                      for clip in clips[start:start + batch_size]]
            batch = self._device_pixels(pixels)
            embs.append(torch.nn.functional.normalize(
                _features(self.model.get_image_features(pixel_values=batch)).float(), dim=-1))
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
        return {**super().describe(), "pooling": "mean of normalised frame embeddings", "preprocess": self.preprocess}
