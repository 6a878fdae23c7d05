"""The OpenCLIP back-end: each frame through the checkpoint's own preprocessing and image tower, the L2-normalised
frame embeddings averaged and normalised again per clip (CLIP4Clip's mean pooling), the cosine with each text."""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np
import torch

from bench.frames import Frames
from bench.scoring.backends.base import Backend, Videos, folder_revision, has_frames, torch_dtype
from bench.scoring.requests import Match


def open_clip_name(model: str) -> str:
    """``model`` as open_clip names it: a local folder as ``local-dir:FOLDER``, anything else as given."""
    return f"local-dir:{model}" if os.path.isdir(model) else model


class OpenClipBackend(Backend):
    """Similarities of clips and texts from an OpenCLIP model (the ``similarity`` protocol)."""

    def __init__(self, model: str, **kwargs):
        import open_clip

        super().__init__(model, **kwargs)
        self.dtype = torch_dtype(self.dtype_name, self.device)
        name = open_clip_name(self.model_id)
        self.model, _, self.preprocess = open_clip.create_model_and_transforms(name, device=self.device)
        self.model = self.model.to(self.dtype).eval()
        self.tokenizer = open_clip.get_tokenizer(name)
        self.revision = folder_revision(self.model_id) if os.path.isdir(self.model_id) else None

    def frame_fit(self):
        """None: frames are decoded at the video's own size and the checkpoint's preprocessing resizes them."""
        return None

    def encode(self, frames: Frames):
        """One clip's frames through the checkpoint's preprocessing (T x 3 x H x W), on a decode worker."""
        from PIL import Image

        if not has_frames(frames):
            return frames
        return torch.stack([self.preprocess(Image.fromarray(frame)) for frame in frames.array])

    @torch.inference_mode()
    def _clip(self, pixels: torch.Tensor) -> torch.Tensor:
        frames = torch.nn.functional.normalize(self.model.encode_image(self.to_device(pixels)).float(), dim=-1)
        return torch.nn.functional.normalize(frames.mean(dim=0), dim=-1)

    @torch.inference_mode()
    def _texts(self, texts: Sequence[str]) -> torch.Tensor:
        tokens = self.tokenizer(list(texts)).to(self.device)
        return torch.nn.functional.normalize(self.model.encode_text(tokens).float(), dim=-1)

    def answer(self, requests: Sequence[Match], videos: Videos, batch_size: int) -> np.ndarray:
        texts = list(dict.fromkeys(r.text for r in requests))
        text_emb = dict(zip(texts, self._texts(texts)))
        clips = {}
        for ref in dict.fromkeys(r.video for r in requests):
            video = videos.get(ref)
            if not has_frames(video):
                raise ValueError(f"no frames for {ref}: OpenCLIP models need frames (not --frames none)")
            clips[ref] = self._clip(video if isinstance(video, torch.Tensor) else self.encode(video))
        return np.array([[float(text_emb[r.text] @ clips[r.video])] for r in requests])

    def describe(self) -> dict:
        return {"model": self.model_id, "revision": self.revision, "model_class": type(self.model).__name__,
                "pooling": "normalized_mean", "package": "foilbench-openclip"}
