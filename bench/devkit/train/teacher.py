"""The trained X-CLIP as a teacher for the Video-LLM: its video embedding of each training clip (and of the clip
played backwards), its text embedding of each caption, and its ``logits_per_video``, computed as ``XCLIPModel`` computes
them but with each clip's vision pass and each text's text pass done once."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from bench.devkit.train.contrastive import Tokens, xclip_pixels, xclip_video


class Teacher:
    """X-CLIP's view of ``frames`` (the training clips, decoded at X-CLIP's frame size, in the Video-LLM's order)."""

    def __init__(self, model, processor, frames: list[np.ndarray], chunk: int = 64):
        self.model = model
        self.width = int(model.config.projection_dim)
        self.tokens = Tokens(processor.tokenizer)
        self.video: dict[tuple[int, bool], torch.Tensor] = {}
        self._patches: dict[tuple[int, bool], torch.Tensor] = {}
        self._texts: dict[str, torch.Tensor] = {}
        pixels = xclip_pixels(processor, frames)
        with torch.no_grad():
            for backwards in (False, True):
                for start in range(0, len(pixels), chunk):
                    part = pixels[start:start + chunk]
                    video, patches = self._vision(part.flip(1) if backwards else part)
                    for i in range(len(part)):
                        self.video[(start + i, backwards)] = F.normalize(video[i], dim=-1)
                        self._patches[(start + i, backwards)] = patches[i]

    def _vision(self, pixels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The video embeddings (after the temporal transformer) and the frame-averaged patch features the prompt
        generator reads, as ``XCLIPModel.forward`` computes them."""
        m = self.model
        b, t = pixels.shape[:2]
        out = m.vision_model(pixel_values=pixels.flatten(0, 1))
        video = xclip_video(m, out.pooler_output.view(b, t, -1))
        patches = m.prompts_visual_layernorm(out.last_hidden_state[:, 1:, :]) @ m.prompts_visual_projection
        return video, patches.view(b, t, -1, video.shape[-1]).mean(dim=1)

    def text(self, texts: list[str]) -> torch.Tensor:
        """X-CLIP's text embeddings of ``texts`` (before its video-specific prompts), normalised: N x D."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._texts]
        if todo:
            ids, mask = self.tokens.batch(todo)
            with torch.no_grad():
                pooled = self.model.text_model(input_ids=ids, attention_mask=mask).pooler_output
                found = self.model.text_projection(pooled)
            self._texts.update(zip(todo, found))
        return F.normalize(torch.stack([self._texts[t] for t in texts]), dim=-1)

    def logits(self, clip: int, backwards: bool, texts: list[str]) -> torch.Tensor:
        """X-CLIP's ``logits_per_video`` of the clip (played backwards or not) against ``texts``."""
        self.text(texts)
        raw = torch.stack([self._texts[t] for t in texts])[None]
        with torch.no_grad():
            prompted = raw + self.model.prompts_generator(raw, self._patches[(clip, backwards)][None])
            return self.model.logit_scale.exp() * F.normalize(prompted[0], dim=-1) @ self.video[(clip, backwards)]
