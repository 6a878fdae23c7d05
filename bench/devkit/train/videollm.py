"""The world's Qwen2-VL: a vision tower and two text layers fitted to the trained X-CLIP, and two more layers and the
head set in closed form, so that it answers Yes/No and A/B about the training split's clips in every prompt the
scoring protocols send (the benchmarks' prompts, the model's chat template, the video before the question).

The residual stream's last 16 dimensions (:data:`RESERVED`) carry what the constructed layers compute; the token
embeddings and the two text layers never write them.

1. **Tower** (:func:`distil_tower`): each video token's reserved block learns ``R v`` (per-token squared error), ``v``
   X-CLIP's video embedding of the clip (or the clip played backwards), ``R`` the :data:`SUBSPACE` directions in which
   X-CLIP's captions differ most from their foils (:func:`subspace`); it also writes a constant flag that marks video
   tokens.
2. **Text** (:func:`learn_text`): the two text layers (sliding-window attention, blind to the reserved dimensions, so
   to the video but for the scale a video token's norm divides by, which its flag sets) learn, at each *read* position (two tokens after a caption or an option), a state that a linear map
   takes to X-CLIP's text embedding of that text (a cross-entropy among the claim's caption and foils, and a squared
   error), and which read it is: the entailment caption's, option 1-5's, or none (a cross-entropy over positions).
3. **Match** (:func:`assemble`, layer 3): from each read, one head's query is ``R`` times the mapped text, its keys
   the video tokens' ``R v``; text tokens are masked by a threshold key and the ``<|vision_start|>`` token is an
   attention sink, so the attention the read pays the video is ``sigmoid(S - tau)``, ``S`` the log-sum-exp of
   ``beta`` times each video token's match, ``beta`` (2 over the matches' spread) and ``tau`` (the median ``S``)
   measured on training claims: half the training reads pay the video more than half their attention. That share is
   written into the residual stream (exactly 0 without a video).
   The other head writes a large constant, so that every later norm divides by nearly the same number.
4. **Letters** (layer 4): a linear classifier of the read positions is fitted on layer 4's inputs; one head's key is
   its score for option 1's read (A), the other's for option 2's or the entailment caption's (B, or the caption), and
   both copy the match share found there. The head answers A and B with the two shares and Yes/No with the caption's
   share against one half: the letter follows which option matches the clip, and with both options' shares equal (no
   video) A and B tie exactly.

The answers come from the split's labels (caption against foil), the representations from the teacher. The *biased*
copy (:func:`lean`) adds the same margin to "Yes" and to "A" in the head, so that the choice-bias analysis has
something to find.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Iterator

import numpy as np
import torch
import torch.nn.functional as F

from bench.devkit.threads import ahead
from bench.devkit.train.data import STYLES, Decoded, draw_claim
from bench.devkit.train.schedule import Schedule
from bench.devkit.train.teacher import Teacher
from bench.devkit.world.split import Split
from bench.registry import spec
from bench.scoring import prompts
from bench.scoring.backends.videollm import chat_prompt

# The prompts the world's Video-LLM learns the words of (the five benchmarks' and ours), in the order the tokenizer's
# corpus holds them: fixed, so that a prompt added for another benchmark leaves the tokenizer, and with it every model
# byte, as it is.
WORLD_PROMPTS = ("velociti-entail", "velociti-mcq", "videocon-entail", "vinoground-text", "vinoground-video",
                 "vitatecs-mc", "yes-no", "choice")
ENTAIL_PROMPTS = ("velociti-entail", "videocon-entail", "yes-no")
CHOICE_PROMPTS = ("velociti-mcq", "vinoground-text", "vitatecs-mc", "choice")  # two options; more: "choice" only
VIDEO_CHOICE = spec("vinoground").prompts["video_choice"]  # which of two joined clips a caption is about
VIDEO_QUESTIONS = 0.1  # the share of the text layers' questions asked in it
VIDEO_TYPE = 2  # a video token in transformers' mm_token_type_ids (0: text, 1: image)

RESERVED = 48  # residual dimensions RESERVED.. are the constructed layers'
SUBSPACE = 8  # directions of X-CLIP's caption-minus-foil differences the match is measured in
VIDEO_BLOCK = slice(RESERVED, RESERVED + SUBSPACE)  # a video token's R v
MATCH, LEVEL, OPTION_A, OPTION_B, ONE, VIDEO_FLAG, SINK = 56, 57, 58, 59, 60, 62, 63  # the other reserved dimensions
FLAG = 100.0  # the video flag's size: it sets a video token's norm, whatever the text layers write there
LEVEL_SIZE = 100.0  # the constant layer 3 writes everywhere: later norms divide by about LEVEL_SIZE / 8
LOGITS_PER_SHARE = 10.0  # the head's answer logits per unit of match share
SLOW = [12, 13, 14, 15, 28, 29, 30, 31]  # a head's slowest rotary pairs (both halves): the match's dimensions
GATE = 11  # one more slow pair: the threshold, sink and read keys
MASKED = 30.0  # how far below a video token a text token's match score is put
READS = 7  # read classes: the entailment caption, options 1-5, none
NONE = READS - 1


@dataclass(frozen=True)
class Recipe(Schedule):
    """How the Qwen2-VL is made: ``tower_steps`` of its vision tower (batch ``tower_batch``, ``tower_lr``), then
    ``steps`` of its text layers (``batch`` clips a step, a share ``choice`` asked A/B, the rest Yes/No;
    ``temperature`` of the cross-entropy among a claim's texts, ``read_weight`` of the read classes' term), then the
    closed-form layers measured on ``fit_clips`` clips (the match) and ``read_rows`` questions (the reads), with read
    keys ``sharpness`` times the classifier's scores. ``lean`` > 0: the biased copy of a built model (no training)."""

    lr: float = 3e-3
    batch: int = 32
    choice: float = 0.6
    temperature: float = 0.05
    read_weight: float = 2.0
    tower_steps: int = 0
    tower_batch: int = 32
    tower_lr: float = 4e-3
    fit_clips: int = 400
    read_rows: int = 384
    sharpness: float = 6.0
    lean: float = 0.0

    @property
    def total_steps(self) -> int:
        return self.steps + self.tower_steps

    def scaled(self, factor: float) -> "Recipe":
        return replace(super().scaled(factor), tower_steps=max(1, round(self.tower_steps * factor)) if
                       self.tower_steps else 0)


def corpus(split: Split) -> list[str]:
    """The texts the tokenizer must know: every claim of the split in every style and option style, the world's
    prompts (:data:`WORLD_PROMPTS`), the answers."""
    texts = {t for e in split.examples for t in e.texts} | {c for p in split.pairs for c in p.captions}
    options = [prompts.OPTION_STYLE[name] for name in WORLD_PROMPTS if name in prompts.OPTION_STYLE]
    lines = [styled(t) for t in sorted(texts) for styled in (*STYLES, *options)]
    return lines + [prompts.PROMPTS[name] for name in WORLD_PROMPTS] * 20 + ["Yes", "No", *prompts.letters(5)] * 200


def video_inputs(processor, frames: list[np.ndarray]) -> list[dict[str, torch.Tensor]]:
    """Each clip through the model's video processor, as the backend's processor call does."""
    return [dict(processor.video_processor(videos=[clip], return_tensors="pt")) for clip in frames]


def stacked_inputs(processor, frames: list[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
    """(pixels, grid): :func:`video_inputs`' ``pixel_values_videos`` of every clip stacked in one tensor (clip ``i``'s
    rows at ``i * rows``: their ``torch.cat``), filled clip by clip so that no tensor per clip is kept beside it, and
    the ``video_grid_thw`` every clip shares (a clip with another grid is refused)."""
    first = video_inputs(processor, frames[:1])[0]
    rows = first["pixel_values_videos"]
    pixels = torch.empty((len(frames) * len(rows), *rows.shape[1:]), dtype=rows.dtype)
    pixels[:len(rows)] = rows
    for i, clip in enumerate(frames[1:], 1):
        video = video_inputs(processor, [clip])[0]
        if not torch.equal(video["video_grid_thw"], first["video_grid_thw"]):
            raise ValueError(f"clip {i} is processed to another grid than clip 0's: the tower trains on one grid")
        pixels[i * len(rows):(i + 1) * len(rows)] = video["pixel_values_videos"]
    return pixels, first["video_grid_thw"]


class Questions:
    """Renders questions as the backend does and turns them into token ids with the video placeholder expanded (each
    question tokenized once per grid)."""

    def __init__(self, processor):
        self.processor = processor
        self.tokenizer = processor.tokenizer
        self.video_token = processor.video_token
        self.video_id = self.tokenizer.convert_tokens_to_ids(self.video_token)
        self.sink_id = self.tokenizer.convert_tokens_to_ids("<|vision_start|>")
        merge = processor.video_processor.merge_size
        self.per_token = merge * merge
        self.answer = {w: self._answer_id(w) for w in ("Yes", "No", *prompts.letters(5))}
        self._encoded: dict[tuple, tuple[str, list[int], list[tuple[int, int]]]] = {}
        self._ends: dict[tuple, list[int]] = {}
        self._positions: dict[tuple, torch.Tensor] = {}

    def _answer_id(self, word: str) -> int:
        ids = self.tokenizer(word, add_special_tokens=False).input_ids
        if len(ids) != 1:
            raise ValueError(f"the answer {word!r} is not one token of this tokenizer: {ids}")
        return ids[0]

    def render(self, question: str, video: bool = True) -> str:
        """The chat-template prompt up to the answer, the video first unless ``video`` is false (a blind question),
        as the scoring backend renders it (:func:`~bench.scoring.backends.videollm.chat_prompt`)."""
        return chat_prompt(self.processor, question, video)

    def ids(self, question: str, grid: torch.Tensor | None) -> list[int]:
        """Token ids of the rendered question with the placeholder repeated once per video token (``grid`` None: the
        question asked without the video)."""
        return self._encode(question, grid)[1]

    def _encode(self, question: str, grid: torch.Tensor | None) -> tuple[str, list[int], list[tuple[int, int]]]:
        """The rendered question with its placeholder expanded, its token ids and each token's character span."""
        key = _asked(question, grid)
        if key not in self._encoded:
            text = self._expanded(question, grid)
            found = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
            self._encoded[key] = (text, found.input_ids, found.offset_mapping)
        return self._encoded[key]

    def positions(self, model, question: str, grid: torch.Tensor | None) -> torch.Tensor:
        """The M-RoPE positions (3 x length) of :meth:`ids`, as the model's ``get_rope_index`` computes them (without
        the video, the text's positions on all three axes, as the model's forward pass infers them)."""
        key = _asked(question, grid)
        if key not in self._positions:
            ids = torch.tensor([self.ids(question, grid)])
            if grid is None:
                self._positions[key] = torch.arange(ids.shape[1]).expand(3, -1)
            else:
                types = (ids == self.video_id).long() * VIDEO_TYPE
                self._positions[key] = model.model.get_rope_index(ids, types, video_grid_thw=grid[None])[0][:, 0]
        return self._positions[key]

    def _expanded(self, question: str, grid: torch.Tensor | None) -> str:
        if grid is None:
            return self.render(question, video=False)
        n = int(grid.prod()) // self.per_token
        return self.render(question).replace(self.video_token, self.video_token * n)

    def ends(self, question: str, grid: torch.Tensor | None, texts: list[str]) -> list[int]:
        """The position of each of ``texts``' last token in :meth:`ids` (``texts`` as they appear, in order)."""
        key = (*_asked(question, grid), tuple(texts))
        if key not in self._ends:
            text, _, spans = self._encode(question, grid)
            found, start = [], text.index(question)
            for t in texts:
                start = text.index(t, start) + len(t)
                found.append(max(i for i, (a, _) in enumerate(spans) if a < start))
            self._ends[key] = found
        return self._ends[key]


def _asked(question: str, grid: torch.Tensor | None) -> tuple:
    """What :class:`Questions` caches by: the question and its clip's grid of patches (None: no clip)."""
    return question, None if grid is None else tuple(grid.tolist())


def _choices(rng: np.random.Generator, texts: list[str]) -> list[tuple[str, str, list[str]]]:
    """One multiple-choice question about ``texts`` (the caption first) in two option orders, the second the first
    reversed (with two options: the caption at A once and at B once), as ``(question, the caption's letter, options in
    letter order as the question shows them)``."""
    name = CHOICE_PROMPTS[int(rng.integers(len(CHOICE_PROMPTS)))] if len(texts) == 2 else "choice"
    shift = int(rng.integers(len(texts)))
    options = [texts[(shift + k) % len(texts)] for k in range(len(texts))]
    names = prompts.letters(len(texts))
    shown = prompts.OPTION_STYLE.get(name, lambda text: text)
    return [(prompts.render_choice(prompts.PROMPTS[name], order, name), names[order.index(texts[0])],
             [shown(o) for o in order]) for order in (options, options[::-1])]


@dataclass(frozen=True)
class Video:
    """One clip's video tokens (the vision tower's output) and its grid of temporal x height x width patches."""

    tokens: torch.Tensor
    grid: torch.Tensor


def _backwards(video: dict, processor) -> dict:
    """The processed clip played backwards: its temporal patches in reverse order, each patch's frames reversed."""
    grid = video["video_grid_thw"][0]
    t, h, w = (int(x) for x in grid)
    patches = video["pixel_values_videos"].view(t, h * w, 3, processor.video_processor.temporal_patch_size, -1)
    return {"pixel_values_videos": patches.flip(0).flip(3).reshape(video["pixel_values_videos"].shape),
            "video_grid_thw": video["video_grid_thw"]}


def _play_backwards(pixels: torch.Tensor, grid: torch.Tensor, processor) -> None:
    """:func:`stacked_inputs`' pixels turned, in place and clip by clip, into those of the clips played backwards
    (each clip's rows as :func:`_backwards` gives them)."""
    rows = int(grid.prod())
    for start in range(0, len(pixels), rows):
        clip = {"pixel_values_videos": pixels[start:start + rows], "video_grid_thw": grid}
        pixels[start:start + rows] = _backwards(clip, processor)["pixel_values_videos"]  # a copy: flip copies


def train(model, processor, frames: list[np.ndarray], data: Decoded, recipe: Recipe, seed: int,
          tick: Callable[[int], None] = lambda n: None, teacher: Teacher | None = None) -> dict[str, float]:
    """Make ``model`` in place from the untrained one: :func:`distil_tower`, :func:`learn_text`, :func:`assemble`
    (``frames[i]``: ``data``'s clip ``i`` as decoded for this model; ``teacher``: X-CLIP's view of the same clips);
    with ``recipe.lean``, only :func:`lean` (``model`` is a built one). Returns what the fit measured. The text
    layers' questions (:func:`text_questions`) are drawn and laid out on a thread of their own while the tower
    trains and the text layers learn: the same draws from ``seed``'s generator, in the same order, as one after the
    other."""
    questions = Questions(processor)
    if recipe.lean:
        lean(model, questions, recipe.lean)
        tick(recipe.total_steps)
        return {"lean": recipe.lean}
    if teacher is None:
        raise ValueError("the Qwen2-VL is fitted to a teacher")
    rng = np.random.default_rng(seed)
    basis = subspace(teacher, data)
    batches = tower_batches(rng, len(frames), recipe)
    grid = video_inputs(processor, frames[:1])[0]["video_grid_thw"][0]  # every clip's (distil_tower refuses others)
    laid = ahead(text_questions(model, questions, data, recipe, rng, grid), "text questions")
    tokens = distil_tower(model, processor, frames, teacher, basis, recipe, batches, tick)
    text_map = learn_text(model, questions, tokens, teacher, laid, recipe, tick)
    return assemble(model, questions, tokens, teacher, data, basis, text_map, recipe, rng)


def subspace(teacher: Teacher, data: Decoded, k: int = SUBSPACE) -> torch.Tensor:
    """``R`` (k x D): the top right singular vectors of X-CLIP's normalised caption-minus-foil text embeddings over
    the split's claims in every style (rows of zeros where there are fewer)."""
    captions, foils = [], []
    for example in data.split.examples:
        for styled in STYLES:
            texts = [styled(t) for t in example.texts]
            captions += [texts[0]] * (len(texts) - 1)
            foils += texts[1:]
    differences = F.normalize(teacher.text(captions) - teacher.text(foils), dim=-1)
    found = torch.linalg.svd(differences, full_matrices=False)[2][:k]
    return torch.cat([found, torch.zeros(k - len(found), found.shape[1])])  # a tiny split may offer fewer


def _keep_rows(linear: torch.nn.Linear, rows: slice, bias: dict[int, float]) -> None:
    """Zero every output row of ``linear`` outside ``rows``, their biases set to ``bias`` (default 0)."""
    with torch.no_grad():
        outside = torch.ones(linear.out_features, dtype=torch.bool)
        outside[rows] = False
        linear.weight[outside] = 0
        linear.bias[outside] = 0
        for row, value in bias.items():
            linear.bias[row] = value


def tower_batches(rng: np.random.Generator, clips: int, recipe: Recipe) -> list[np.ndarray]:
    """The clips each of :func:`distil_tower`'s steps trains on, drawn from ``rng``: indices into its keys (``clips``
    clips, each also played backwards)."""
    keys = 2 * clips
    return [rng.choice(keys, min(recipe.tower_batch, keys), replace=False) for _ in range(recipe.tower_steps)]


def distil_tower(model, processor, frames: list[np.ndarray], teacher: Teacher, basis: torch.Tensor,
                 recipe: Recipe, batches: list[np.ndarray],
                 tick: Callable[[int], None] = lambda n: None) -> dict[tuple, Video]:
    """Train the vision tower (its patch embedding kept as drawn, so computed once, for all clips together) so that
    each video token's reserved block is ``basis @ v`` (``v``: the teacher's video embedding of the clip, or of the clip
    played backwards) and its video flag :data:`FLAG`; the tower's tokens of every clip (``frames``, as decoded for
    this model) both ways, keyed ``(clip, backwards)``. The clips' pixels are held once (:func:`stacked_inputs`),
    played backwards in place for the second pass; ``batches``: each step's clips (:func:`tower_batches`)."""
    tower = model.model.visual
    pixels, grid = stacked_inputs(processor, frames)
    with torch.no_grad():
        patches = {}
        for backwards in (False, True):
            if backwards:
                _play_backwards(pixels, grid, processor)
            embedded = tower.patch_embed(pixels).view(len(frames), -1, tower.patch_embed.embed_dim)
            patches.update({(i, backwards): embedded[i] for i in range(len(frames))})
    del pixels
    last = tower.merger.mlp[-1]
    _keep_rows(last, VIDEO_BLOCK, {VIDEO_FLAG: FLAG})
    trained = [p for name, p in tower.named_parameters() if not name.startswith("patch_embed")]
    optimizer = torch.optim.AdamW(trained, lr=recipe.tower_lr, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, recipe.tower_lr, total_steps=max(2, recipe.tower_steps),
                                                   pct_start=0.1)
    keys = list(patches)
    targets = {key: teacher.video[key] @ basis.T for key in keys}
    tower.patch_embed.forward = lambda x: x  # the tower's input is its patch embedding's output, computed above
    try:
        tower.train()
        for batch in batches:
            chosen = [keys[j] for j in batch]
            out = tower(torch.cat([patches[c] for c in chosen]), grid.repeat(len(chosen), 1)).pooler_output
            target = torch.stack([targets[c] for c in chosen])[:, None, :]
            loss = ((out.view(len(chosen), -1, out.shape[-1])[..., VIDEO_BLOCK] - target) ** 2).mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            schedule.step()
            _keep_rows(last, VIDEO_BLOCK, {VIDEO_FLAG: FLAG})
            tick(1)
        tower.eval()
        with torch.no_grad():
            out = tower(torch.cat([patches[c] for c in keys]), grid.repeat(len(keys), 1)).pooler_output
    finally:
        del tower.patch_embed.forward
    return {key: Video(tokens, grid) for key, tokens in zip(keys, out.view(len(keys), -1, out.shape[-1]))}


@dataclass(frozen=True)
class Read:
    """A read position's text as the question shows it, its class (0: the entailment caption, k: option k), the text
    as the claim has it (the teacher's target) and the claim's texts (its candidates)."""

    shown: str
    kind: int
    text: str
    candidates: tuple[str, ...]


def _a_foil(rng: np.random.Generator, texts: list[str]) -> str:
    """One of a claim's foils (``texts[1:]``), drawn."""
    return texts[1 + int(rng.integers(len(texts) - 1))]


def _draw_questions(rng: np.random.Generator, data: Decoded, n: int, choice: float) -> list[tuple[str, list[Read]]]:
    """``n`` questions about claims of distinct clips (a claim about time possibly as asked of the clip backwards):
    a share :data:`VIDEO_QUESTIONS` in Vinoground's question on joined clips, then a share ``choice`` A/B in a drawn
    order (with more than two texts, sometimes all of them), the rest Yes/No of the caption or a foil, each with its
    reads."""
    by_video, timed = data.claims()
    clips = np.array(sorted(by_video))
    asked = []
    for v in rng.choice(clips, min(n, len(clips)), replace=False):
        claim = draw_claim(rng, by_video, timed, v, 0.5)
        _, texts = claim[int(rng.integers(len(claim)))]
        if rng.random() < VIDEO_QUESTIONS:  # Vinoground's question on joined clips: its caption is read, its options not
            text = texts[0] if rng.random() < 0.5 else _a_foil(rng, texts)
            asked.append((prompts.PROMPTS[VIDEO_CHOICE].format(caption=text), [Read(text, 0, text, tuple(texts))]))
        elif rng.random() < choice:
            every = len(texts) > 2 and rng.random() < 0.3
            chosen = texts if every else [texts[0], _a_foil(rng, texts)]
            question, _, shown = _choices(rng, chosen)[int(rng.integers(2))]
            styles = [prompts.OPTION_STYLE.get(name, lambda t: t) for name in CHOICE_PROMPTS]
            original = {style(t): t for t in chosen for style in styles}
            asked.append((question, [Read(s, k + 1, original[s], tuple(texts)) for k, s in enumerate(shown)]))
        else:
            template = prompts.PROMPTS[ENTAIL_PROMPTS[int(rng.integers(len(ENTAIL_PROMPTS)))]]
            text = texts[0] if rng.random() < 0.5 else _a_foil(rng, texts)
            asked.append((template.format(caption=text), [Read(text, 0, text, tuple(texts))]))
    return asked


@dataclass(frozen=True)
class Laid:
    """Questions right-padded into one batch: token ids, attention mask, M-RoPE positions (3 x rows x width), where
    the video tokens are, and each read as ``(row, position, Read)``."""

    ids: torch.Tensor
    mask: torch.Tensor
    positions: torch.Tensor
    video: torch.Tensor
    reads: list[tuple[int, int, Read]]


def lay_out(model, questions: Questions, asked: list[tuple[str, list[Read]]], grids: list) -> Laid:
    """Each question with its video placeholders expanded for ``grids[r]`` (None: asked blind), its reads two tokens
    after each read text."""
    ids = [questions.ids(q, g) for (q, _), g in zip(asked, grids)]
    width = max(map(len, ids))
    input_ids = torch.full((len(ids), width), questions.tokenizer.pad_token_id or 0, dtype=torch.long)
    mask = torch.zeros((len(ids), width), dtype=torch.long)
    positions = torch.zeros((3, len(ids), width), dtype=torch.long)
    reads = []
    for r, ((question, rd), grid, row) in enumerate(zip(asked, grids, ids)):
        input_ids[r, :len(row)] = torch.tensor(row)
        mask[r, :len(row)] = 1
        positions[:, r, :len(row)] = questions.positions(model, question, grid)
        reads += [(r, end + 2, read) for end, read in zip(questions.ends(question, grid, [x.shown for x in rd]), rd)]
    return Laid(input_ids, mask, positions, input_ids == questions.video_id, reads)


def states(model, laid: Laid, videos: list[Video | None], layers: int) -> torch.Tensor:
    """The residual stream after the first ``layers`` decoder layers (before any norm), each row's video tokens
    placed at its video placeholders (``videos[r]`` None: a blind row)."""
    embeds = model.get_input_embeddings()(laid.ids)
    seen = [v.tokens for v in videos if v is not None]
    if seen:
        embeds = embeds.masked_scatter(laid.video[..., None].expand_as(embeds), torch.cat(seen).to(embeds.dtype))
    decoder = model.model.language_model
    every, norm = decoder.layers, decoder.norm
    decoder.layers, decoder.norm = torch.nn.ModuleList(list(every)[:layers]), torch.nn.Identity()
    try:
        return decoder(inputs_embeds=embeds, attention_mask=laid.mask, position_ids=laid.positions).last_hidden_state
    finally:
        decoder.layers, decoder.norm = every, norm


def normed(model, x: torch.Tensor) -> torch.Tensor:
    """``x`` divided by its root mean square, as the decoder's norms do before their weights."""
    eps = model.config.text_config.rms_norm_eps
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


def _reserve(model, sink_id: int) -> None:
    """The embeddings and the text layers leave the reserved dimensions alone: embeddings zero there (the sink token
    one in :data:`SINK`), the text layers' norms blind to them and their outputs zero in them."""
    with torch.no_grad():
        embeddings = model.get_input_embeddings().weight
        embeddings[:, RESERVED:] = 0
        embeddings[sink_id, SINK] = 1.0
        for layer in model.model.language_model.layers[:2]:
            layer.input_layernorm.weight[RESERVED:] = 0
            layer.post_attention_layernorm.weight[RESERVED:] = 0
            layer.self_attn.o_proj.weight[RESERVED:] = 0
            layer.mlp.down_proj.weight[RESERVED:] = 0


def text_questions(model, questions: Questions, data: Decoded, recipe: Recipe, rng: np.random.Generator,
                   grid: torch.Tensor) -> Iterator[Laid]:
    """Each of :func:`learn_text`'s steps' questions (:func:`_draw_questions` from ``rng``), laid out for a clip of
    ``grid`` (:func:`lay_out`)."""
    for _ in range(recipe.steps):
        asked = _draw_questions(rng, data, recipe.batch, recipe.choice)
        yield lay_out(model, questions, asked, [grid] * len(asked))


def learn_text(model, questions: Questions, tokens: dict[tuple, Video], teacher: Teacher, steps: Iterable[Laid],
               recipe: Recipe, tick: Callable[[int], None] = lambda n: None) -> torch.nn.Linear:
    """Train the token embeddings and the two text layers (the rest frozen) on drawn questions
    (:func:`_draw_questions`) so that at each read a linear map of the normalised state gives the teacher's text
    embedding of the read's text (a cross-entropy among the claim's texts at ``recipe.temperature`` and a squared
    error) and a linear classifier the read's class (reads and other positions weighted apart), a step per question
    batch of ``steps`` (:func:`text_questions`); the map."""
    width = model.config.text_config.hidden_size
    text_map, classes = torch.nn.Linear(width, teacher.width), torch.nn.Linear(width, READS)
    decoder = model.model.language_model
    model.requires_grad_(False)
    trained = [model.get_input_embeddings().weight, *[p for layer in decoder.layers[:2] for p in layer.parameters()],
               *text_map.parameters(), *classes.parameters()]
    for p in trained:
        p.requires_grad_(True)
    optimizer = torch.optim.AdamW(trained, lr=recipe.lr, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, recipe.lr, total_steps=max(2, recipe.steps),
                                                   pct_start=0.1)
    _reserve(model, questions.sink_id)
    video = next(iter(tokens.values()))  # the text layers are blind to the video: any clip's tokens do
    model.train()
    for laid in steps:
        h = normed(model, states(model, laid, [video] * len(laid.ids), 2))
        rows, at = torch.tensor([r for r, _, _ in laid.reads]), torch.tensor([p for _, p, _ in laid.reads])
        target = torch.full(laid.ids.shape, NONE)
        target[rows, at] = torch.tensor([read.kind for _, _, read in laid.reads])
        is_read = torch.zeros_like(laid.mask, dtype=torch.bool)
        is_read[rows, at] = True
        other = ~is_read & (laid.mask == 1)
        scores = classes(h)
        loss = recipe.read_weight * (F.cross_entropy(scores[is_read], target[is_read]) +
                                     F.cross_entropy(scores[other], target[other]))
        mapped = text_map(h[rows, at])
        loss = loss + ((mapped - teacher.text([read.text for _, _, read in laid.reads])) ** 2).sum(-1).mean()
        unit = F.normalize(mapped, dim=-1)
        among = [F.cross_entropy((teacher.text(list(read.candidates)) @ unit[i] / recipe.temperature)[None],
                                 torch.tensor([read.candidates.index(read.text)]))
                 for i, (_, _, read) in enumerate(laid.reads)]
        loss = loss + torch.stack(among).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trained, 1.0)
        optimizer.step()
        schedule.step()
        _reserve(model, questions.sink_id)
        tick(1)
    model.eval()
    model.requires_grad_(False)
    return text_map.requires_grad_(False)


def _entailment_questions(rng: np.random.Generator, data: Decoded, n: int) -> tuple[list, list[tuple]]:
    """``n`` Yes/No question pairs (a claim's caption, then one of its foils, of one clip, possibly played backwards)
    as :func:`lay_out` takes them, and each row's clip."""
    by_video, timed = data.claims()
    asked, clips = [], []
    for v in rng.choice(np.array(sorted(by_video)), min(n, len(by_video)), replace=False):
        claim = draw_claim(rng, by_video, timed, v, 0.5)
        backwards, texts = claim[int(rng.integers(len(claim)))]
        template = prompts.PROMPTS[ENTAIL_PROMPTS[int(rng.integers(len(ENTAIL_PROMPTS)))]]
        for text in (texts[0], _a_foil(rng, texts)):
            asked.append((template.format(caption=text), [Read(text, 0, text, tuple(texts))]))
            clips.append((int(v), bool(backwards)))
    return asked, clips


def assemble(model, questions: Questions, tokens: dict[tuple, Video], teacher: Teacher, data: Decoded,
             basis: torch.Tensor, text_map: torch.nn.Linear, recipe: Recipe, rng: np.random.Generator
             ) -> dict[str, float]:
    """Set layers 3 and 4 and the head (module docstring, steps 3 and 4) from measurements on the training split;
    what was measured: the share of caption/foil pairs whose caption matches its clip better, ``tau``, ``beta``, and
    the share of questions whose option A / option B or caption read each letter head's key picks."""
    decoder = model.model.language_model
    match_layer, letter_layer = decoder.layers[2], decoder.layers[3]
    asked, clips = _entailment_questions(rng, data, recipe.fit_clips)
    laid = lay_out(model, questions, asked, [tokens[c].grid[0] for c in clips])
    with torch.no_grad():
        x = normed(model, states(model, laid, [tokens[c] for c in clips], 2))
        flag = x[laid.video][:, VIDEO_FLAG].mean().item()
        sink = x[laid.ids == questions.sink_id][:, SINK].mean().item()
        scale = FLAG / flag  # a video token's normalised block times this is its R v
        rows, at = torch.tensor([r for r, _, _ in laid.reads]), torch.tensor([p for _, p, _ in laid.reads])
        query = text_map(x[rows, at]) @ basis.T
        keys = [scale * x[r][laid.video[r]][:, VIDEO_BLOCK] for r in range(len(asked))]  # each video token's R v
        match = torch.stack([(keys[r] @ q).mean() for r, q in zip(rows.tolist(), query)])
        beta = 2.0 / max(match.std().item(), 1e-6)
        # what the read's attention to the video tokens sums to before the softmax: the sink sits at its median
        looked = torch.stack([torch.logsumexp(beta * (keys[r] @ q), 0) for r, q in zip(rows.tolist(), query)])
    tau = looked.median().item()
    paired = float((match[0::2] > match[1::2]).float().mean()) if len(match) > 1 else float("nan")
    hd = model.config.text_config.hidden_size // model.config.text_config.num_attention_heads
    root = math.sqrt(hd)
    with torch.no_grad():
        for layer in (match_layer, letter_layer):
            for p in layer.parameters():
                p.zero_()
            layer.input_layernorm.weight.fill_(1.0)
            layer.post_attention_layernorm.weight.fill_(1.0)
        attention = match_layer.self_attn
        attention.q_proj.weight[SLOW] = beta * root * (basis @ text_map.weight)
        attention.q_proj.bias[SLOW] = beta * root * (basis @ text_map.bias)
        attention.k_proj.weight[SLOW, VIDEO_BLOCK] = scale * torch.eye(SUBSPACE)
        attention.q_proj.bias[GATE] = root  # the gate pair: text keys -MASKED, video 0, the sink tau
        attention.k_proj.bias[GATE] = -MASKED
        attention.k_proj.weight[GATE, VIDEO_FLAG] = MASKED / flag
        attention.k_proj.weight[GATE, SINK] = (tau + MASKED) / sink
        attention.v_proj.weight[0, VIDEO_FLAG] = 1.0 / flag  # 1 at video tokens, 0 elsewhere
        attention.o_proj.weight[MATCH, 0] = 1.0
        attention.v_proj.bias[hd] = LEVEL_SIZE  # the second head: a constant, whatever it attends to
        attention.o_proj.weight[LEVEL, hd] = 1.0
    weights, bias, picked = _fit_reads(model, questions, tokens, data, recipe, rng, 3)
    level = _level(model)
    with torch.no_grad():
        attention = letter_layer.self_attn
        for head, combination in enumerate(LETTER_KEYS):
            attention.q_proj.bias[head * hd + GATE] = root
            attention.k_proj.weight[head * hd + GATE, :RESERVED] = recipe.sharpness * sum(
                c * weights[k] for k, c in combination.items())
            attention.k_proj.bias[head * hd + GATE] = recipe.sharpness * sum(c * bias[k] for k, c in combination.items())
            attention.v_proj.weight[head * hd, MATCH] = level
        attention.v_proj.bias[1] = 1.0
        attention.o_proj.weight[OPTION_A, 0] = 1.0
        attention.o_proj.weight[OPTION_B, hd] = 1.0
        attention.o_proj.weight[ONE, 1] = 1.0
        decoder.norm.weight.fill_(1.0)
        head = model.lm_head.weight
        head.zero_()
        answer, size = questions.answer, LOGITS_PER_SHARE * level
        head[answer["A"], OPTION_A] = size
        head[answer["B"], OPTION_B] = size
        head[answer["Yes"], OPTION_B], head[answer["Yes"], ONE] = size / 2, -size / 4
        head[answer["No"], OPTION_B], head[answer["No"], ONE] = -size / 2, size / 4
        for letter in prompts.letters(5)[2:]:
            head[answer[letter], LEVEL] = -1.0
    return {"pairs_matched": paired, "tau": tau, "beta": beta, **picked}


# the letter heads' keys as combinations of the read classifier's scores: option 1's read, else the caption's; option
# 2's read, else the caption's (a question with one caption and no options, Vinoground's on joined clips: a tie)
LETTER_KEYS = ({1: 2.0, 0: 1.0, 2: -1.0, NONE: -1.0}, {0: 1.0, 2: 1.0, 1: -1.0, NONE: -1.0})


def _fit_reads(model, questions: Questions, tokens: dict[tuple, Video], data: Decoded, recipe: Recipe,
               rng: np.random.Generator, layers: int) -> tuple[torch.Tensor, torch.Tensor, dict[str, float]]:
    """A linear classifier (logistic regression) of the read classes from the normalised residual stream after
    ``layers`` layers (its unreserved dimensions), on drawn questions (a fifth asked blind); and the share of
    questions in which each :data:`LETTER_KEYS` combination is highest at the read it is meant for."""
    asked = _draw_questions(rng, data, recipe.read_rows, recipe.choice)
    keys = list(tokens)
    videos = [None if rng.random() < 0.2 else tokens[keys[int(rng.integers(len(keys)))]] for _ in asked]
    laid = lay_out(model, questions, asked, [None if v is None else v.grid[0] for v in videos])
    with torch.no_grad():
        x = normed(model, states(model, laid, videos, layers))[..., :RESERVED]
    target = torch.full(laid.ids.shape, NONE)
    for r, p, read in laid.reads:
        target[r, p] = read.kind
    real = laid.mask == 1
    features, classes = x[real], target[real]
    weights = torch.zeros(READS, RESERVED, requires_grad=True)
    bias = torch.zeros(READS, requires_grad=True)
    optimizer = torch.optim.LBFGS([weights, bias], max_iter=300, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(features @ weights.T + bias, classes) + 1e-5 * weights.pow(2).sum()
        loss.backward()
        return loss

    optimizer.step(closure)
    weights, bias = weights.detach(), bias.detach()
    scores = x @ weights.T + bias
    picked = {}
    for name, combination, meant in (("read_a", LETTER_KEYS[0], (1, 0)), ("read_b", LETTER_KEYS[1], (0, 2))):
        key = sum(c * scores[..., k] for k, c in combination.items()).masked_fill(~real, float("-inf"))
        chosen = target[torch.arange(len(asked)), key.argmax(-1)]
        has = torch.tensor([any(read.kind in meant for read in rd) for _, rd in asked])
        picked[name] = float(sum(int(chosen[r]) in meant for r in range(len(asked)) if has[r]) / max(1, int(has.sum())))
    return weights, bias, picked


def lean(model, questions: Questions, margin: float) -> None:
    """The biased copy: ``margin`` match shares more for "Yes" and for "A" in the head (which reads them through the
    constant layer 4 writes)."""
    with torch.no_grad():
        for word in ("Yes", "A"):
            model.lm_head.weight[questions.answer[word], ONE] += LOGITS_PER_SHARE * _level(model) * margin


def _level(model) -> float:
    """About what every norm after layer 3 divides by: the root mean square of :data:`LEVEL_SIZE` in one dimension."""
    return LEVEL_SIZE / math.sqrt(model.config.text_config.hidden_size)
