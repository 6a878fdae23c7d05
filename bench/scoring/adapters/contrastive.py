"""Contrastive image-text models (CLIP, SigLIP) applied to video frames: mean-pooled frame embeddings.

Each clip's frames are embedded once, averaged and L2-normalised (VELOCITI ``clip_eval.py``; ViLMA's CLIP scripts);
each distinct text is embedded once; the score of (clip, text) is the cosine similarity.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from bench.items import Item
from bench.scoring.adapters.base import Adapter, FrameSource, Scored, model_revision


def _features(output) -> torch.Tensor:
    """Projected embeddings from ``get_*_features`` (a tensor, or an output with ``pooler_output``)."""
    return output if isinstance(output, torch.Tensor) else output.pooler_output


class ContrastiveAdapter(Adapter):
    """Similarity matrices of every clip and text of each item."""

    name = "contrastive"
    measure = "similarity"

    def __init__(self, model: str, **kwargs):
        super().__init__(model, **kwargs)
        self.load("AutoModel")
        self._texts: dict[str, np.ndarray] = {}

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
    def embed_frames(self, frames: list[np.ndarray], batch_size: int) -> np.ndarray:
        """The normalised mean of the normalised frame embeddings of one clip."""
        embs = []
        for start in range(0, len(frames), batch_size):
            inputs = self.processor(images=list(frames[start:start + batch_size]), return_tensors="pt")
            pixels = inputs["pixel_values"].to(self.device, self.dtype)
            embs.append(torch.nn.functional.normalize(_features(self.model.get_image_features(pixel_values=pixels))
                                                      .float(), dim=-1))
        mean = torch.cat(embs).mean(dim=0)
        return torch.nn.functional.normalize(mean, dim=-1).cpu().numpy()

    def score(self, items: Sequence[Item], frames: FrameSource, batch_size: int) -> Scored:
        texts = self.embed_texts([t for it in items for t in it.texts], batch_size)
        out = Scored()
        for it in items:
            text_matrix = np.stack([texts[t] for t in it.texts])
            for c in range(len(it.clips)):
                video = self.embed_frames(list(frames.clip(it, c).array), batch_size)
                sims = text_matrix @ video
                out.pair += [{"item_id": it.item_id, "clip": c, "text": t, "score": float(s)}
                             for t, s in enumerate(sims)]
        return out

    def describe(self) -> dict:
        return {**super().describe(), "revision": model_revision(self.model), "pooling": "mean of frame embeddings",
                "model_class": type(self.model).__name__}
