"""Contrastive image-text models (CLIP, SigLIP) applied to video frames, with a named pooling over frames.

Each clip's frames are embedded once and each distinct text once; the frames of ``batch_size`` clips go through the
image tower in one forward pass. Each clip's frames go through the image processor on a decode worker
(:meth:`ContrastiveBackend.encode`), or, on CUDA, on the GPU after a non-blocking copy of the pinned frames
(``preprocess``: "auto", "cpu" or "device"). How frames become one score per (clip, text) is the ``pooling`` option
(``-b pooling=NAME``; each benchmark's default is in its registry spec, the manifest records the one used):

- ``normalized_mean``: L2-normalise each frame embedding, average, normalise again, cosine with the text
  (CLIP4Clip's mean pooling, which VITATECS evaluates: ``X-CLIP/modules/modeling.py`` L392-394);
- ``raw_mean``: average the raw frame embeddings, then normalise, cosine with the text (VELOCITI ``clip_eval.py``
  L131-136);
- ``frame_softmax``: per frame, the softmax over the clip's texts of CLIP's logits (logit scale x cosine), averaged
  over frames (ViLMA ``models/image/run_clip.py`` L144-155); the texts are those the protocol asks of the clip.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np
import torch

from bench.frames import Frames
from bench.scoring.backends.base import Backend, Videos, has_frames
from bench.scoring.requests import Match


def _features(output) -> torch.Tensor:
    """Projected embeddings from ``get_*_features`` (a tensor, or an output with ``pooler_output``)."""
    return output if isinstance(output, torch.Tensor) else output.pooler_output


POOLINGS = {
    "normalized_mean": "mean of L2-normalised frame embeddings, normalised (CLIP4Clip; VITATECS)",
    "raw_mean": "mean of raw frame embeddings, normalised (VELOCITI clip_eval.py)",
    "frame_softmax": "per-frame softmax over the clip's texts of the logits, averaged (ViLMA run_clip.py)",
}


class ContrastiveBackend(Backend):
    """Similarities of clips and texts, pooled over frames as ``pooling`` says (:data:`POOLINGS`)."""

    def __init__(self, model: str, *, pooling: str = "normalized_mean", preprocess: str = "auto", **kwargs):
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {', '.join(POOLINGS)}, got {pooling!r}")
        if preprocess not in ("auto", "cpu", "device"):
            raise ValueError(f"preprocess must be auto, cpu or device, got {preprocess!r}")
        super().__init__(model, **kwargs)
        self.pooling = pooling
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

    def encode(self, frames: Frames):
        """One clip's image-processor outputs (every tensor it returns, each with one row per frame: SigLIP 2 adds
        ``pixel_attention_mask`` and ``spatial_shapes`` to ``pixel_values``), on a decode worker; with
        ``preprocess="device"`` the frames pinned for the copy (the processor then runs on the device)."""
        if not has_frames(frames):
            return frames
        if self.preprocess == "device":
            return dataclasses.replace(frames, array=self.pinned(torch.from_numpy(np.ascontiguousarray(frames.array))))
        return {k: self.pinned(v.contiguous()) for k, v in self._process_frames(frames.array).items()}

    def _process_frames(self, frames) -> dict[str, torch.Tensor]:
        """The image processor's tensors of a clip's frames (on the device with ``preprocess="device"``)."""
        kwargs = {}
        if self.preprocess == "device":
            frames = torch.as_tensor(frames).to(self.device, non_blocking=self.on_cuda)
            kwargs["device"] = self.device
        found = self.processor(images=list(frames), return_tensors="pt", **kwargs)
        return {k: v for k, v in found.items() if isinstance(v, torch.Tensor)}

    @torch.inference_mode()
    def frame_features(self, clips: Sequence, batch_size: int) -> list[torch.Tensor]:
        """The raw image embeddings of every frame, one (frames x dim) tensor per clip (frames, or what
        :meth:`encode` made of them); the frames of ``batch_size`` clips go through the image tower together."""
        embs, lengths = [], []
        for start in range(0, len(clips), batch_size):
            inputs = [clip if isinstance(clip, dict) else self._process_frames(clip.array)
                      for clip in clips[start:start + batch_size]]
            lengths += [len(clip["pixel_values"]) for clip in inputs]
            batch = {k: self.concat_on_device([clip[k] for clip in inputs]) for k in inputs[0]}
            embs.append(_features(self.model.get_image_features(**batch)).float())
        per_frame = torch.cat(embs)
        bounds = np.cumsum([0] + lengths)
        return [per_frame[a:b] for a, b in zip(bounds[:-1], bounds[1:])]

    def embed_clips(self, clips: Sequence[np.ndarray], batch_size: int) -> np.ndarray:
        """One normalised embedding per clip, pooled as ``normalized_mean`` or ``raw_mean`` says."""
        normalize = torch.nn.functional.normalize
        pooled = [(normalize(f, dim=-1) if self.pooling == "normalized_mean" else f).mean(dim=0)
                  for f in self.frame_features(clips, batch_size)]
        return normalize(torch.stack(pooled), dim=-1).cpu().numpy()

    def _logit_scale(self) -> float:
        scale = getattr(self.model, "logit_scale", None)
        return float(scale.detach().exp()) if scale is not None else 1.0

    def answer(self, requests: Sequence[Match], videos: Videos, batch_size: int) -> np.ndarray:
        refs = list(dict.fromkeys(r.video for r in requests))
        clips = []
        for ref in refs:
            frames = videos.get(ref)
            if not has_frames(frames):
                raise ValueError(f"no frames for {ref}: contrastive models need frames (not --frames none)")
            clips.append(frames)
        text_emb = self.embed_texts([r.text for r in requests], batch_size)
        if self.pooling != "frame_softmax":
            clip_emb = dict(zip(refs, self.embed_clips(clips, batch_size))) if refs else {}
            return np.array([[float(text_emb[r.text] @ clip_emb[r.video])] for r in requests]).reshape(-1, 1)
        out = np.empty((len(requests), 1))
        scale = self._logit_scale()
        for ref, features in zip(refs, self.frame_features(clips, batch_size) if refs else []):
            asked = [i for i, r in enumerate(requests) if r.video == ref]
            frames = torch.nn.functional.normalize(features, dim=-1).cpu().numpy()
            texts = np.stack([text_emb[requests[i].text] for i in asked])
            logits = scale * frames @ texts.T
            probs = np.exp(logits - logits.max(axis=1, keepdims=True))
            out[asked, 0] = (probs / probs.sum(axis=1, keepdims=True)).mean(axis=0)
        return out

    def describe(self) -> dict:
        return {**super().describe(), "pooling": self.pooling, "pooling_detail": POOLINGS[self.pooling],
                "preprocess": self.preprocess}
