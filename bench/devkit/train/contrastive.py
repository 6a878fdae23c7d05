"""Contrastive training of CLIP and X-CLIP on the training split, with each claim's foils as hard negatives.

Scores are computed as the scoring backends compute them: CLIP embeds every frame, averages the normalised frame
embeddings and normalises the mean (``ContrastiveBackend``, pooling ``normalized_mean``); X-CLIP scores a clip
against texts through the whole model (``XCLIPBackend``: ``logits_per_video``), which training computes from its
vision tower's frame features, computed once: the tower is the trained CLIP's, kept fixed, and X-CLIP learns its
temporal transformer, its projections and its text tower. The loss for each clip is a
cross-entropy over its true caption and its foils (the benchmarks' question), plus a lighter one over the batch's
captions (which grounds words in pixels), leaving out captions true of many clips (what is there, how many shapes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from bench.devkit.train.data import Decoded, draw_claim
from bench.devkit.train.schedule import Schedule, optimizer_and_schedule, take_step


@dataclass(frozen=True)
class Recipe(Schedule):
    """How long and how hard to train."""

    batch: int = 48
    in_batch: float = 0.5
    reversing: float = 0.0  # the share of a clip's draws given to its claims about time (when it has any)
    timed_draws: int = 1  # how often a clip with claims about time is drawn in each pass over the clips


def clip_pixels(processor, frames: list[np.ndarray]) -> torch.Tensor:
    """Every clip's frames preprocessed as ``ContrastiveBackend`` does (images one by one): N x T x 3 x P x P."""
    flat = processor(images=[f for clip in frames for f in clip], return_tensors="pt")["pixel_values"]
    return flat.view(len(frames), -1, *flat.shape[1:])


def xclip_pixels(processor, frames: list[np.ndarray]) -> torch.Tensor:
    """Every clip preprocessed as ``XCLIPBackend`` does (one video each): N x T x 3 x P x P."""
    return torch.cat([processor(videos=[list(clip)], return_tensors="pt")["pixel_values"] for clip in frames])


def clip_logits(model, pixels: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Scaled cosine similarity of mean-pooled frame embeddings and text embeddings: B x T."""
    def features(out):
        return out if isinstance(out, torch.Tensor) else out.pooler_output

    b, t = pixels.shape[:2]
    frames = torch.nn.functional.normalize(features(model.get_image_features(pixel_values=pixels.flatten(0, 1))),
                                           dim=-1)
    video = torch.nn.functional.normalize(frames.view(b, t, -1).mean(dim=1), dim=-1)
    text = torch.nn.functional.normalize(features(model.get_text_features(input_ids=ids, attention_mask=mask)), dim=-1)
    return model.logit_scale.exp() * video @ text.T


def xclip_frame_features(model, pixels: torch.Tensor, chunk: int = 64) -> torch.Tensor:
    """What X-CLIP's vision tower makes of each frame (its pooled class token, before the visual projection) for clips
    preprocessed by :func:`xclip_pixels`, the tower fixed: N x T x D. Its messages between frames attend without
    frame positions, so a clip played backwards has these features backwards."""
    b, t = pixels.shape[:2]
    with torch.no_grad():
        return torch.cat([model.vision_model(pixel_values=pixels[i:i + chunk].flatten(0, 1)).pooler_output
                          for i in range(0, b, chunk)]).view(b, t, -1)


def xclip_video(model, features: torch.Tensor) -> torch.Tensor:
    """X-CLIP's video embeddings (before normalising) from frame features (N x T x D, the vision tower's pooled class
    tokens): the visual projection, then the temporal transformer, as ``XCLIPModel`` computes them."""
    b, t = features.shape[:2]
    return model.mit(model.visual_projection(features.flatten(0, 1)).view(b, t, -1)).pooler_output


def xclip_logits(model, features: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """X-CLIP's ``logits_per_video`` (clips x texts) from :func:`xclip_frame_features`, computed as ``XCLIPModel.forward``
    computes them past its vision tower, with its prompts left out: they add ``prompt_alpha`` times their output, and
    ``prompt_alpha`` is 0 (the world's X-CLIP's, which this never trains; a model with another is refused)."""
    if bool(model.prompts_generator.alpha.detach().abs().max() > 0):
        raise ValueError("xclip_logits leaves X-CLIP's prompts out, which holds only while their prompt_alpha is 0")
    video = xclip_video(model, features)
    text = model.text_projection(model.text_model(input_ids=ids, attention_mask=mask).pooler_output)
    video = video / video.norm(p=2, dim=-1, keepdim=True)
    text = text / text.norm(p=2, dim=-1, keepdim=True)
    return video @ (model.logit_scale.exp() * text).T


class Tokens:
    """Each text tokenized once; batches padded with the tokenizer's pad token (to ``length`` when given)."""

    def __init__(self, tokenizer, length: int | None = None):
        self.tokenizer, self.length = tokenizer, length
        self.ids: dict[str, list[int]] = {}

    def batch(self, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        todo = [t for t in dict.fromkeys(texts) if t not in self.ids]
        if todo:
            found = self.tokenizer(todo, truncation=self.length is not None, max_length=self.length)["input_ids"]
            self.ids.update(zip(todo, found))
        width = self.length or max(len(self.ids[t]) for t in texts)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        ids = torch.full((len(texts), width), pad, dtype=torch.long)
        mask = torch.zeros((len(texts), width), dtype=torch.long)
        for i, t in enumerate(texts):
            row = self.ids[t][:width]
            ids[i, :len(row)] = torch.tensor(row)
            mask[i, :len(row)] = 1
        return ids, mask


def drawn_clips(every: dict[int, list], timed: dict[int, list], timed_draws: int) -> np.ndarray:
    """The clips one pass of training draws (of :meth:`Decoded.claims`): each once, and each with claims about time
    ``timed_draws`` times."""
    return np.array(sorted(every) + sorted(timed) * (timed_draws - 1))


def train(model, logits: Callable, pixels: torch.Tensor, tokens: Tokens, data: Decoded, recipe: Recipe, seed: int,
          tick: Callable[[int], None] = lambda n: None) -> None:
    """Train ``model`` in place for ``recipe.steps`` steps of ``recipe.batch`` clips, each with one of its claims
    (claims about time: with the clip played backwards too). ``pixels``: each clip's frames as ``logits`` takes them
    (N x T x ...: preprocessed frames, or a fixed tower's frame features), played backwards along T."""
    rng = np.random.default_rng(seed)
    model.text_model.embeddings.token_embedding.requires_grad_(False)  # random token vectors: a fine lookup table
    by_video, timed = data.claims()
    generic = data.generic_captions()
    videos = drawn_clips(by_video, timed, recipe.timed_draws)
    optimizer, schedule = optimizer_and_schedule(model, recipe)
    model.train()
    order = rng.permutation(videos)
    cursor = 0
    for _ in range(recipe.steps):
        if cursor + recipe.batch > len(order):
            order, cursor = rng.permutation(videos), 0
        chosen = order[cursor:cursor + recipe.batch]
        cursor += recipe.batch
        rows, claims, backwards = [], [], []
        for v in chosen:
            # a claim about time is asked of the clip and of the clip played backwards (its foil's world): the two
            # have the same frames, so only their order can tell the captions apart
            for flip, texts in draw_claim(rng, by_video, timed, v, recipe.reversing):
                rows.append(v)
                claims.append(texts)
                backwards.append(flip)
        texts = list(dict.fromkeys(t for claim in claims for t in claim))
        column = {t: i for i, t in enumerate(texts)}
        ids, mask = tokens.batch(texts)
        clips = pixels[torch.as_tensor(rows)]
        flip = torch.as_tensor(backwards)
        clips[flip] = clips[flip].flip(1)
        scores = logits(model, clips, ids, mask)
        width = max(len(claim) for claim in claims)
        asked = torch.full((len(claims), width), -1e4)
        for i, claim in enumerate(claims):
            asked[i, :len(claim)] = 0
        picked = scores.gather(1, torch.tensor([[column[t] for t in claim] + [0] * (width - len(claim))
                                                for claim in claims]))
        hard = torch.nn.functional.cross_entropy(picked + asked, torch.zeros(len(claims), dtype=torch.long))
        loss = hard + recipe.in_batch * _in_batch(scores, claims, column, generic)
        take_step(model, optimizer, schedule, loss)
        tick(1)
    model.eval()


def _in_batch(scores: torch.Tensor, claims: list[list[str]], column: dict[str, int], generic: set[str]) -> torch.Tensor:
    """Cross-entropy of each clip's true caption against the batch's other true captions, leaving out the
    ``generic`` ones (and their clips): true of clips the split does not say them of, they would be false negatives."""
    rows = [i for i, claim in enumerate(claims) if claim[0] not in generic]
    if not rows:
        return scores.new_zeros(())
    captions = list(dict.fromkeys(claims[i][0] for i in rows))
    within = scores[rows][:, [column[c] for c in captions]]
    return torch.nn.functional.cross_entropy(within, torch.tensor([captions.index(claims[i][0]) for i in rows]))
