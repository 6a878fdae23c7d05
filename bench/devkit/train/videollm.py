"""Teaching a small Qwen2-VL to answer the benchmarks' questions about the training split: Yes/No (does the video
entail the caption?) and A/B... (which caption, which fragment?), in every prompt the scoring protocols send.

Each question is rendered exactly as ``bench.scoring.backends.videollm`` renders it (the benchmarks' prompts, the
model's chat template, the video before the question); the loss is the cross-entropy of the answer's first token at
the answer position, which is where the backend reads its logits. Claims about time are asked of the clip and of
the clip played backwards (their foil's world) in the same batch. The vision tower stays as initialised (frozen, as
LLaVA-style recipes freeze theirs): each clip's video tokens are computed once, from the video processor's output as
scoring computes them, and placed where the model's own forward pass places them. A *biased* variant continues from
the trained model on answers of which a share is forced to "Yes" / "A", so that the choice-bias analysis has
something to find.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from bench.devkit.train.data import STYLES, Decoded, draw_claim, style
from bench.devkit.train.schedule import Schedule, optimizer_and_schedule, take_step
from bench.devkit.world.split import Split
from bench.registry import spec
from bench.scoring import prompts

ENTAIL_PROMPTS = ("velociti-entail", "videocon-entail", "yes-no")
CHOICE_PROMPTS = ("velociti-mcq", "vinoground-text", "vitatecs-mc", "choice")  # two options; more: "choice" only
VIDEO_CHOICE = spec("vinoground").prompts["video_choice"]  # which of two joined clips a caption is about
VIDEO_TYPE = 2  # a video token in transformers' mm_token_type_ids (0: text, 1: image)


@dataclass(frozen=True)
class Recipe(Schedule):
    """How long and how hard to train; ``forced``: the share of answers replaced by "Yes" / "A" (biased variant)."""

    lr: float = 3e-3
    batch: int = 32
    reversing: float = 0.5
    joined: int = 4  # Vinoground video questions per batch
    forced: float = 0.0


def corpus(split: Split) -> list[str]:
    """The texts the tokenizer must know: every claim of the split in every style and option style, the prompts,
    the answers."""
    texts = {t for e in split.examples for t in e.texts} | {c for p in split.pairs for c in p.captions}
    lines = [styled(t) for t in sorted(texts) for styled in (*STYLES, *prompts.OPTION_STYLE.values())]
    return lines + list(prompts.PROMPTS.values()) * 20 + ["Yes", "No", *prompts.letters(5)] * 200


def video_inputs(processor, frames: list[np.ndarray]) -> list[dict[str, torch.Tensor]]:
    """Each clip through the model's video processor, as the backend's processor call does."""
    return [dict(processor.video_processor(videos=[clip], return_tensors="pt")) for clip in frames]


class Questions:
    """Renders questions as the adapters do and turns them into token ids with the video placeholder expanded."""

    def __init__(self, processor):
        self.processor = processor
        self.tokenizer = processor.tokenizer
        self.video_token = processor.video_token
        self.video_id = self.tokenizer.convert_tokens_to_ids(self.video_token)
        merge = processor.video_processor.merge_size
        self.per_token = merge * merge
        self.answer = {w: self._answer_id(w) for w in ("Yes", "No", *prompts.letters(5))}

    def _answer_id(self, word: str) -> int:
        ids = self.tokenizer(word, add_special_tokens=False).input_ids
        if len(ids) != 1:
            raise ValueError(f"the answer {word!r} is not one token of this tokenizer: {ids}")
        return ids[0]

    def render(self, question: str) -> str:
        """The chat-template prompt up to the answer, the video first (``VideoLLMBackend.render``)."""
        messages = [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": question}]}]
        return self.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)

    def ids(self, question: str, grid: torch.Tensor) -> list[int]:
        """Token ids of the rendered question with the placeholder repeated once per video token."""
        n = int(grid.prod()) // self.per_token
        return self.tokenizer(self.render(question).replace(self.video_token, self.video_token * n),
                              add_special_tokens=False).input_ids


def _entail(rng: np.random.Generator, texts: list[str], true: bool) -> tuple[str, str]:
    template = prompts.PROMPTS[ENTAIL_PROMPTS[int(rng.integers(len(ENTAIL_PROMPTS)))]]
    text = texts[0] if true else texts[1 + int(rng.integers(len(texts) - 1))]
    return template.format(caption=text), "Yes" if true else "No"


def _choice(rng: np.random.Generator, texts: list[str]) -> tuple[str, str]:
    name = CHOICE_PROMPTS[int(rng.integers(len(CHOICE_PROMPTS)))] if len(texts) == 2 else "choice"
    shift = int(rng.integers(len(texts)))
    options = [texts[(shift + k) % len(texts)] for k in range(len(texts))]
    question = prompts.render_choice(prompts.PROMPTS[name], options, name)
    return question, prompts.letters(len(texts))[options.index(texts[0])]


def train(model, processor, videos: list[dict], joined: dict, data: Decoded, recipe: Recipe, seed: int,
          tick: Callable[[int], None] = lambda n: None) -> None:
    """Train ``model``'s language model in place: each step asks ``recipe.batch`` clips one question each (entailment
    of the caption or a foil, or multiple choice; claims about time of the clip backwards too) and ``recipe.joined``
    Vinoground video questions on joined pairs. ``videos[i]`` / ``joined[(pair, order)]``: the video processor's
    outputs."""
    rng = np.random.default_rng(seed)
    questions = Questions(processor)
    by_video, timed = data.claims()
    clips = np.array(sorted(by_video))
    model.model.visual.requires_grad_(False)
    forward = video_tokens(model, videos)
    reversible = sorted({v for v, examples in timed.items() if any(e.reverses for e in examples)})
    backward = dict(zip(reversible, video_tokens(model, [_backwards(videos[v], processor) for v in reversible])))
    pairs = dict(zip(joined, video_tokens(model, list(joined.values()))))
    forced = {"entail": "Yes", "choice": "A"}
    optimizer, schedule = optimizer_and_schedule(model, recipe)
    model.train()
    for _ in range(recipe.steps):
        rows: list[tuple[str, str, Video]] = []
        for v in rng.choice(clips, recipe.batch, replace=False):
            claim = draw_claim(rng, by_video, timed, v, recipe.reversing)
            kind = "entail" if rng.random() < 0.5 else "choice"
            true = bool(rng.random() < 0.5)
            for flip, asked in claim:
                question, answer = _entail(rng, asked, true) if kind == "entail" else _choice(rng, asked)
                if rng.random() < recipe.forced:
                    answer = forced[kind]
                rows.append((question, answer, backward[v] if flip else forward[v]))
        for p in rng.choice(len(data.split.pairs), recipe.joined, replace=False):
            pair = data.split.pairs[p]
            order = ((0, 1), (1, 0))[int(rng.integers(2))]
            k = int(rng.integers(2))
            answer = "A" if order[0] == k else "B"
            answer = "A" if rng.random() < recipe.forced else answer
            rows.append((prompts.PROMPTS[VIDEO_CHOICE].format(caption=style(rng)(pair.captions[k])), answer,
                         pairs[(int(p), order)]))
        loss = answer_loss(model, questions, rows)
        take_step(model, optimizer, schedule, loss)
        tick(1)
    model.eval()


@dataclass(frozen=True)
class Video:
    """One clip's video tokens (the vision tower's output) and its grid of temporal x height x width patches."""

    tokens: torch.Tensor
    grid: torch.Tensor


def video_tokens(model, videos: list[dict], chunk: int = 32) -> list[Video]:
    """The model's vision tower applied to processed clips, without gradients, ``chunk`` clips per pass."""
    out: list[Video] = []
    with torch.no_grad():
        for start in range(0, len(videos), chunk):
            part = videos[start:start + chunk]
            grids = torch.cat([v["video_grid_thw"] for v in part])
            pooled = model.model.get_video_features(torch.cat([v["pixel_values_videos"] for v in part]),
                                                    grids).pooler_output
            out += [Video(t, g[None]) for t, g in zip(pooled, grids)]
    return out


def _backwards(video: dict, processor) -> dict:
    """The processed clip played backwards: its temporal patches in reverse order, each patch's two frames swapped."""
    grid = video["video_grid_thw"][0]
    t, h, w = (int(x) for x in grid)
    patches = video["pixel_values_videos"].view(t, h * w, 3, processor.video_processor.temporal_patch_size, -1)
    return {"pixel_values_videos": patches.flip(0).flip(3).reshape(video["pixel_values_videos"].shape),
            "video_grid_thw": video["video_grid_thw"]}


def answer_logits(model, questions: Questions, rows: list[tuple[str, Video]]) -> torch.Tensor:
    """The logits at each row's answer position (rows right-padded), with each row's video tokens placed at its video
    placeholders and M-RoPE positions as the model's forward pass computes them from ``input_ids``."""
    ids = [questions.ids(q, video.grid[0]) for q, video in rows]
    width = max(map(len, ids))
    pad = questions.tokenizer.pad_token_id or 0
    input_ids = torch.full((len(ids), width), pad, dtype=torch.long)
    mask = torch.zeros((len(ids), width), dtype=torch.long)
    for i, row in enumerate(ids):
        input_ids[i, :len(row)] = torch.tensor(row)
        mask[i, :len(row)] = 1
    placeholders = input_ids == questions.video_id
    embeds = model.get_input_embeddings()(input_ids)
    video = torch.cat([v.tokens for _, v in rows]).to(embeds.dtype)
    embeds = embeds.masked_scatter(placeholders[..., None].expand_as(embeds), video)
    positions, _ = model.model.get_rope_index(input_ids, placeholders.long() * VIDEO_TYPE,
                                              video_grid_thw=torch.cat([v.grid for _, v in rows]), attention_mask=mask)
    out = model(inputs_embeds=embeds, attention_mask=mask, position_ids=positions)
    return out.logits[torch.arange(len(ids)), torch.tensor([len(row) - 1 for row in ids])]


def answer_loss(model, questions: Questions, rows: list[tuple[str, str, Video]]) -> torch.Tensor:
    """Cross-entropy of each row's answer token at its answer position."""
    logits = answer_logits(model, questions, [(q, video) for q, _, video in rows])
    return torch.nn.functional.cross_entropy(logits, torch.tensor([questions.answer[a] for _, a, _ in rows]))
