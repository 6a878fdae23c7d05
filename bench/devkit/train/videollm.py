"""Teaching a small Qwen2-VL to answer the benchmarks' questions about the training split: Yes/No (does the video
entail the caption?) and A/B... (which caption, which fragment?), in every prompt the scoring protocols send.

Training has three stages, the first two taught by the trained X-CLIP
(:class:`~bench.devkit.train.teacher.Teacher`), whose representations a model this small does not find alone in
minutes:

1. The vision tower learns X-CLIP's video embedding: the mean of a clip's video tokens is drawn to it (cosine), for
   clips and clips played backwards, computed from the video processor's output as scoring computes it.
2. With the tower frozen (each clip's video tokens computed once, placed where the model's own forward pass places
   them), the language model learns the answers. Each question is rendered exactly as
   ``bench.scoring.backends.videollm`` renders it (the benchmarks' prompts, the model's chat template, the video before
   the question); the loss is the cross-entropy of the answer's token among the answers the question offers (Yes/No, or
   the options' letters) at the answer position: where and what the backend compares. Entailment asks a claim's caption
   and one of its foils of the same clip (claims about time also of the clip played backwards: their foil's world), and
   two more terms teach it: a pairwise loss on the caption's Yes-minus-No logit over the foil's (what the entailment
   metrics compare), and a cosine loss drawing a middle layer's state at the answer position (through a linear map used
   only in training) to X-CLIP's text embedding of the asked caption, and (through a second map) to X-CLIP's video
   embedding of the clip asked about, so that the caption and the clip meet at the answer position for the layers above
   to compare (and likewise at each option's last token, below). A multiple-choice question is asked in both option
   orders, with a pairwise loss on the caption's A-minus-B logit when it is option A over the same question's when it is
   option B (a lean to one letter cancels in it), and the cosine loss drawing the answer position's state to the
   direction from option B's X-CLIP text embedding to option A's; each option is also answered Yes/No at its own last
   token by a middle layer (through the final norm and the head), so that the last layer has each option's answer to
   compare. Three terms teach where attention looks (:func:`_attention_loss`): a head of the third layer scores the
   clip's video tokens higher from the caption than from its foil (at the Yes/No answer position and at the options'
   last tokens), the last layer's first head at the answer position attends to the caption's option above the
   foil's, and each option's last token names its own letter: the answer selects the option that matches the clip
   and copies its letter, which attention does well, instead of subtracting two options' answers, which it does not.

3. With the tower and the token embeddings (which the head shares) frozen, the decoder's layers learn two-option
   questions alone (:func:`learn_to_choose`), each in both option orders: the cross-entropy of the caption's letter
   and the pairwise loss on the swapped orders; each question is also asked without the video and taught to favour
   neither letter. The second stage leaves each option's own judgement beside it; what a model this small does not
   learn among the second stage's many terms is to let the letter follow that judgement, and a stage of its own
   teaches it (build 19: continuing build 18's seed-0 draw on an AMD EPYC, right in both orders on VITATECS's 150
   scored items 40.7 -> 70.0 %, VELOCITI's 18.0 -> 33.3 %, without frames 34.0 / 8.7 -> 18.7 / 16.7 %).

The answers are the split's labels; the teacher gives representations only. A *biased* variant continues from the
trained model, without a teacher, on answers of which a share is forced to "Yes" / "A", so that the choice-bias
analysis has something to find.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import torch

from bench.devkit.train.data import STYLES, Decoded, draw_claim, style
from bench.devkit.train.schedule import Schedule, optimizer_and_schedule, take_step
from bench.devkit.train.teacher import Teacher
from bench.devkit.world.split import Split
from bench.registry import spec
from bench.scoring import prompts
from bench.scoring.backends.videollm import chat_prompt

ENTAIL_PROMPTS = ("velociti-entail", "videocon-entail", "yes-no")
CHOICE_PROMPTS = ("velociti-mcq", "vinoground-text", "vitatecs-mc", "choice")  # two options; more: "choice" only
VIDEO_CHOICE = spec("vinoground").prompts["video_choice"]  # which of two joined clips a caption is about
VIDEO_TYPE = 2  # a video token in transformers' mm_token_type_ids (0: text, 1: image)


@dataclass(frozen=True)
class Recipe(Schedule):
    """How long and how hard to train: ``steps`` of the language model after ``tower_steps`` of the vision tower
    (with a teacher); ``choice``: the share of clips asked A/B rather than Yes/No; ``forced``: the share of answers
    replaced by "Yes" / "A" (biased variant); ``look_weight``, ``select_weight``, ``letter_weight``: the terms of
    :func:`_attention_loss` (0: off)."""

    lr: float = 3e-3
    batch: int = 16
    reversing: float = 0.5
    joined: int = 2  # Vinoground video questions per batch
    choice: float = 0.4
    forced: float = 0.0
    tower_steps: int = 0
    tower_batch: int = 32
    tower_lr: float = 2e-3
    pair_weight: float = 1.0
    text_weight: float = 2.0
    text_layer: int = 2  # the decoder layer whose output at the answer position learns the text embedding
    video_weight: float = 0.0  # with a teacher: that state also learns X-CLIP's video embedding of the clip asked
    option_weight: float = 0.0  # two-option questions: Yes/No of each option read at the option's last token
    option_layer: int = 3  # the decoder layer whose output (through the final norm and the head) answers there
    look_weight: float = 0.0  # a head of layer look_layer scores the clip higher from the caption than its foil
    look_layer: int = 2
    select_weight: float = 0.0  # two options: the last layer's first head attends to the caption's option
    letter_weight: float = 0.0  # two options: each option's last token names its letter (layer letter_layer)
    letter_layer: int = 2
    choice_steps: int = 0  # then the decoder alone on two-option questions (:func:`learn_to_choose`)
    choice_lr: float = 2e-3
    blind_weight: float = 0.0  # there: the same questions without the video, taught to favour neither letter

    @property
    def total_steps(self) -> int:
        return self.steps + self.tower_steps + self.choice_steps

    def scaled(self, factor: float) -> "Recipe":
        tower, choice = (max(1, round(n * factor)) if n else 0 for n in (self.tower_steps, self.choice_steps))
        return replace(super().scaled(factor), tower_steps=tower, choice_steps=choice)


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
    """Renders questions as the adapters do and turns them into token ids with the video placeholder expanded (each
    question tokenized once per grid: training asks the same questions again and again)."""

    def __init__(self, processor):
        self.processor = processor
        self.tokenizer = processor.tokenizer
        self.video_token = processor.video_token
        self.video_id = self.tokenizer.convert_tokens_to_ids(self.video_token)
        merge = processor.video_processor.merge_size
        self.per_token = merge * merge
        self.answer = {w: self._answer_id(w) for w in ("Yes", "No", *prompts.letters(5))}
        self._ids: dict[tuple, list[int]] = {}
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
        key = _asked(question, grid)
        if key not in self._ids:
            self._ids[key] = self.tokenizer(self._expanded(question, grid), add_special_tokens=False).input_ids
        return self._ids[key]

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

    def ends(self, question: str, grid: torch.Tensor, texts: list[str]) -> list[int]:
        """The position of each of ``texts``' last token in :meth:`ids` (``texts`` as they appear, in order)."""
        key = (*_asked(question, grid), tuple(texts))
        if key not in self._ends:
            self._ends[key] = self._find_ends(question, grid, texts)
        return self._ends[key]

    def _find_ends(self, question: str, grid: torch.Tensor, texts: list[str]) -> list[int]:
        text = self._expanded(question, grid)
        spans = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True).offset_mapping
        found, start = [], text.index(question)
        for t in texts:
            start = text.index(t, start) + len(t)
            found.append(max(i for i, (a, _) in enumerate(spans) if a < start))
        return found


def _asked(question: str, grid: torch.Tensor | None) -> tuple:
    """What :class:`Questions` caches by: the question and its clip's grid of patches (None: no clip)."""
    return question, None if grid is None else tuple(grid.tolist())


def _choices(rng: np.random.Generator, texts: list[str]) -> list[tuple[str, str, list[str]]]:
    """One multiple-choice question about ``texts`` (the caption first) in two option orders, the second the first
    reversed (with two options: the caption at A once and at B once), as ``(question, the caption's letter, options in
    letter order)``."""
    name = CHOICE_PROMPTS[int(rng.integers(len(CHOICE_PROMPTS)))] if len(texts) == 2 else "choice"
    shift = int(rng.integers(len(texts)))
    options = [texts[(shift + k) % len(texts)] for k in range(len(texts))]
    names = prompts.letters(len(texts))
    shown = prompts.OPTION_STYLE.get(name, lambda text: text)
    return [(prompts.render_choice(prompts.PROMPTS[name], order, name), names[order.index(texts[0])],
             [shown(o) for o in order]) for order in (options, options[::-1])]


def _caption_at_a_and_b(first: int, both: list[tuple[str, str, list[str]]]) -> tuple[int, int]:
    """The rows of a two-option question's two orders (:func:`_choices`, asked from row ``first`` on) with the caption
    at A and with it at B: a pair of :func:`_swap_loss`."""
    at_b = int(both[0][1] == "B")
    return first + at_b, first + 1 - at_b


def train(model, processor, videos: list[dict], joined: dict, data: Decoded, recipe: Recipe, seed: int,
          tick: Callable[[int], None] = lambda n: None, teacher: Teacher | None = None) -> None:
    """Train ``model`` in place: ``recipe.tower_steps`` steps of its vision tower towards ``teacher``'s video
    embeddings, then ``recipe.steps`` steps of its language model, each asking ``recipe.batch`` clips a question about
    one claim (Yes/No of the caption and of a foil, or A/B; claims about time of the clip backwards too) and
    ``recipe.joined`` Vinoground video questions on joined pairs; an A/B question in both option orders; then
    ``recipe.choice_steps`` steps of :func:`learn_to_choose`.
    ``videos[i]`` / ``joined[(pair, order)]``: the video processor's outputs; ``teacher``: X-CLIP's view of the same
    clips (None: the answers alone)."""
    rng = np.random.default_rng(seed)
    if recipe.tower_steps:
        if teacher is None:
            raise ValueError("a recipe with tower steps needs a teacher")
        distil_tower(model, processor, videos, teacher, recipe, rng, tick)
    questions = Questions(processor)
    by_video, timed = data.claims()
    clips = np.array(sorted(by_video))
    model.model.visual.requires_grad_(False)
    forward = video_tokens(model, videos)
    reversible = sorted({v for v, examples in timed.items() if any(e.reverses for e in examples)})
    backward = dict(zip(reversible, video_tokens(model, [_backwards(videos[v], processor) for v in reversible])))
    pairs = dict(zip(joined, video_tokens(model, list(joined.values()))))
    forced = {"entail": "Yes", "choice": "A"}
    width = model.config.text_config.hidden_size
    text_map = None if teacher is None else torch.nn.Linear(width, teacher.width)
    video_map = torch.nn.Linear(width, teacher.width) if teacher is not None and recipe.video_weight else None
    trained = torch.nn.ModuleList([model] + [m for m in (text_map, video_map) if m is not None])
    optimizer, schedule = optimizer_and_schedule(trained, recipe)
    model.train()
    for _ in range(recipe.steps):
        rows: list[tuple[str, str, Video, tuple[str, ...]]] = []  # question, answer, video, the answers offered
        captions: dict[int, str] = {}  # row -> the caption it asks (Yes/No rows)
        ranked: list[int] = []  # rows asking a claim's caption; the next row asks one of its foils of the same clip
        swapped: list[tuple[int, int]] = []  # two-option rows with the caption at A; the next row has it at B
        options_of: dict[int, tuple[list[str], str]] = {}  # two-option row -> its options A, B as shown, the caption
        clip_of: dict[int, tuple[int, bool]] = {}  # row about one clip -> the clip, and whether played backwards
        for v in rng.choice(clips, min(recipe.batch, len(clips)), replace=False):
            claim = draw_claim(rng, by_video, timed, v, recipe.reversing)
            kind = "choice" if rng.random() < recipe.choice else "entail"
            template = prompts.PROMPTS[ENTAIL_PROMPTS[int(rng.integers(len(ENTAIL_PROMPTS)))]]
            for flip, asked in claim:
                video = backward[v] if flip else forward[v]
                if kind == "choice":
                    both = _choices(rng, asked)
                    if len(asked) == 2:
                        swapped.append(_caption_at_a_and_b(len(rows), both))
                    for question, answer, options in both:
                        if len(options) == 2:
                            options_of[len(rows)] = (options, options["AB".index(answer)])
                        clip_of[len(rows)] = (int(v), bool(flip))
                        rows.append((question, forced[kind] if rng.random() < recipe.forced else answer, video,
                                     prompts.letters(len(asked))))
                    continue
                foil = asked[1 + int(rng.integers(len(asked) - 1))]
                ranked.append(len(rows))
                for text, answer in ((asked[0], "Yes"), (foil, "No")):
                    captions[len(rows)] = text
                    clip_of[len(rows)] = (int(v), bool(flip))
                    rows.append((template.format(caption=text),
                                 forced[kind] if rng.random() < recipe.forced else answer, video, ("Yes", "No")))
        for p in rng.choice(len(data.split.pairs), recipe.joined, replace=False):
            pair = data.split.pairs[p]
            order = ((0, 1), (1, 0))[int(rng.integers(2))]
            k = int(rng.integers(2))
            answer = "A" if order[0] == k else "B"
            answer = "A" if rng.random() < recipe.forced else answer
            rows.append((prompts.PROMPTS[VIDEO_CHOICE].format(caption=style(rng)(pair.captions[k])), answer,
                         pairs[(int(p), order)], ("A", "B")))
        asked = [(q, video) for q, _, video, _ in rows]
        laid = lay_out(model, questions, asked)
        logits, states, hidden = answer_outputs(model, questions, asked, recipe.text_layer, laid)
        loss = answer_loss(logits, questions, [(answer, offered) for _, answer, _, offered in rows])
        if ranked:
            at = torch.tensor(ranked)
            margin = logits[:, questions.answer["Yes"]] - logits[:, questions.answer["No"]]
            loss = loss - recipe.pair_weight * torch.nn.functional.logsigmoid(margin[at] - margin[at + 1]).mean()
        if swapped:
            loss = loss + recipe.pair_weight * _swap_loss(logits, questions, swapped)
        if text_map is not None and (captions or options_of):
            # Yes/No rows: X-CLIP's embedding of the asked caption; two-option rows: the difference of its options'
            # embeddings (A minus B), so that A-minus-B reads the video as Yes-minus-No does
            at = torch.tensor(list(captions) + list(options_of))  # rows in the order they were added
            pairs_shown = [options for options, _ in options_of.values()]
            target = torch.cat(([teacher.text(list(captions.values()))] if captions else []) +
                               ([_contrast(teacher, pairs_shown)] if pairs_shown else []))
            loss = loss + recipe.text_weight * _cosine_loss(text_map, states[at], target)
        if video_map is not None and clip_of:  # the clip asked about, gathered at the answer position
            target = torch.stack([teacher.video[c] for c in clip_of.values()])
            loss = loss + recipe.video_weight * _cosine_loss(video_map, states[torch.tensor(list(clip_of))], target)
        if recipe.option_weight and options_of:
            loss = loss + recipe.option_weight * _option_loss(model, questions, rows, options_of, hidden, recipe,
                                                              text_map, teacher, video_map, clip_of)
        loss = loss + _attention_loss(model, questions, rows, laid, hidden, recipe, ranked, options_of)
        take_step(trained, optimizer, schedule, loss)
        tick(1)
    if recipe.choice_steps:
        learn_to_choose(model, questions, lambda r: _two_options(r, by_video, timed, forward, backward, recipe, clips),
                        recipe, rng, tick)
    model.eval()


def _two_options(rng: np.random.Generator, by_video: dict, timed: dict, forward: list, backward: dict, recipe: Recipe,
                 clips: np.ndarray) -> list[tuple[Video, list[str]]]:
    """One batch of :func:`learn_to_choose`: ``recipe.batch`` clips, each with one claim's caption and one of its
    foils (:func:`~bench.devkit.train.data.draw_claim`: a claim about time also asked of the clip backwards)."""
    asked = []
    for v in rng.choice(clips, min(recipe.batch, len(clips)), replace=False):
        for flip, texts in draw_claim(rng, by_video, timed, v, recipe.reversing):
            foil = texts[1 + int(rng.integers(len(texts) - 1))]
            asked.append((backward[v] if flip else forward[v], [texts[0], foil]))
    return asked


def learn_to_choose(model, questions: Questions, draw: Callable[[np.random.Generator], list[tuple[Video, list[str]]]],
                    recipe: Recipe, rng: np.random.Generator, tick: Callable[[int], None] = lambda n: None) -> None:
    """Train ``model``'s decoder layers and final norm, ``recipe.choice_steps`` steps at ``recipe.choice_lr``, the
    vision tower and the token embeddings (and so the head, which shares them) frozen, on two-option questions alone:
    each ``(video, [caption, foil])`` of ``draw(rng)`` asked in a drawn two-option prompt in both option orders, the
    loss the cross-entropy of the caption's letter and the pairwise term on the two orders (:func:`_swap_loss`); with
    ``recipe.blind_weight``, each question is also asked without the video and taught to favour neither letter (the
    cross-entropy of A and B against one half each), so that what the letter learns comes from the video."""
    model.requires_grad_(False)
    decoder = model.model.language_model
    trained = torch.nn.ModuleList([*decoder.layers, decoder.norm]).requires_grad_(True)
    optimizer, schedule = optimizer_and_schedule(trained, Schedule(recipe.choice_steps, lr=recipe.choice_lr,
                                                                   warmup=10))
    model.train()
    for _ in range(recipe.choice_steps):
        rows: list[tuple[str, str, Video]] = []
        swapped: list[tuple[int, int]] = []
        for video, texts in draw(rng):
            both = _choices(rng, texts)
            swapped.append(_caption_at_a_and_b(len(rows), both))
            rows += [(question, answer, video) for question, answer, _ in both]
        blind = [(question, None) for question, _, _ in rows] if recipe.blind_weight else []
        logits = answer_outputs(model, questions, [(question, video) for question, _, video in rows] + blind)[0]
        seen, unseen = logits[:len(rows)], logits[len(rows):]
        loss = answer_loss(seen, questions, [(answer, ("A", "B")) for _, answer, _ in rows])
        loss = loss + recipe.pair_weight * _swap_loss(seen, questions, swapped)
        if blind:
            letters = unseen[:, [questions.answer["A"], questions.answer["B"]]]
            loss = loss - recipe.blind_weight * letters.log_softmax(-1).mean()
        take_step(trained, optimizer, schedule, loss)
        tick(1)


def _swap_loss(logits: torch.Tensor, questions: Questions, swapped: list[tuple[int, int]]) -> torch.Tensor:
    """The pairwise term on a question's two option orders: the caption's A-minus-B margin when it is option A over
    the same question's when it is option B (``swapped``: those rows' pairs), so that no lean to one letter helps."""
    at = torch.tensor(swapped)
    margin = logits[:, questions.answer["A"]] - logits[:, questions.answer["B"]]
    return -torch.nn.functional.logsigmoid(margin[at[:, 0]] - margin[at[:, 1]]).mean()


def _option_loss(model, questions: Questions, rows: list, options_of: dict, hidden: tuple, recipe: Recipe,
                 text_map, teacher: Teacher | None, video_map=None, clip_of: dict | None = None) -> torch.Tensor:
    """Each option of a two-option question answered Yes (the caption) or No (the foil) at its own last token, by
    decoder layer ``recipe.option_layer`` through the final norm and the head; with a teacher, layer
    ``recipe.text_layer`` there also drawn to X-CLIP's embedding of the option (and with ``video_map``, to its
    video embedding of the row's clip, ``clip_of[row]``)."""
    where, said, texts = [], [], []
    for r, (options, caption) in options_of.items():
        question, _, video, _ = rows[r]
        for end, option in zip(questions.ends(question, video.grid[0], options), options):
            where.append((r, end))
            said.append("Yes" if option == caption else "No")
            texts.append(option)
    at = (torch.tensor([r for r, _ in where]), torch.tensor([e for _, e in where]))
    logits = option_logits(model, hidden, recipe.option_layer, at)
    loss = answer_loss(logits, questions, [(s, ("Yes", "No")) for s in said])
    if text_map is not None:
        loss = loss + _cosine_loss(text_map, hidden[recipe.text_layer][at], teacher.text(texts))
    if video_map is not None:
        target = torch.stack([teacher.video[clip_of[r]] for r, _ in where])
        loss = loss + recipe.video_weight * _cosine_loss(video_map, hidden[recipe.text_layer][at], target)
    return loss


def _attention_loss(model, questions: Questions, rows: list, laid: Laid, hidden: tuple, recipe: Recipe,
                    ranked: list[int], options_of: dict) -> torch.Tensor:
    """The terms that teach where the decoder looks (each at its recipe weight; zero when every weight is 0):

    - *look*: decoder layer ``recipe.look_layer``'s first head scores the clip's video tokens (the log-sum-exp of its
      attention scores to them) higher from the caption than from its foil: at the Yes/No answer position (a
      caption's row over its foil's row) and at the options' last tokens (the caption's option over the foil's);
    - *select*: at a two-option question's answer position, the last layer's first head scores the caption's last
      token above the foil's, so that the answer can copy what the caption's option holds;
    - *letter*: each option's last token, read by layer ``recipe.letter_layer`` through the final norm and the head,
      names its own letter, which is what the answer copies.
    """
    loss = torch.zeros(())
    two = [(r, *_ends(questions, rows[r], options, caption)) for r, (options, caption) in options_of.items()]
    if recipe.look_weight and (ranked or two):
        at = [(r, int(laid.answers[r])) for c in ranked for r in (c, c + 1)] + \
             [(r, end) for r, caption_end, foil_end, _ in two for end in (caption_end, foil_end)]
        scores = head_scores(model, hidden, recipe.look_layer, laid.positions, at)
        looked = scores.masked_fill(~laid.video[[r for r, _ in at]], float("-inf")).logsumexp(-1)
        loss = loss - recipe.look_weight * torch.nn.functional.logsigmoid(looked[0::2] - looked[1::2]).mean()
    if recipe.select_weight and two:
        scores = head_scores(model, hidden, select_layer(model), laid.positions,
                             [(r, int(laid.answers[r])) for r, *_ in two])
        n = torch.arange(len(two))
        chosen = scores[n, [c for _, c, _, _ in two]] - scores[n, [f for _, _, f, _ in two]]
        loss = loss - recipe.select_weight * torch.nn.functional.logsigmoid(chosen).mean()
    if recipe.letter_weight and two:
        where = [(r, end) for r, *_, ends in two for end in ends]
        logits = option_logits(model, hidden, recipe.letter_layer, tuple(torch.tensor(c) for c in zip(*where)))
        letters = [letter for *_, ends in two for letter in prompts.letters(len(ends))]
        loss = loss + recipe.letter_weight * answer_loss(logits, questions, [(w, ("A", "B")) for w in letters])
    return loss


def select_layer(model) -> int:
    """The decoder layer whose first head the select term teaches to attend to the caption's option: the last."""
    return len(model.model.language_model.layers) - 1


def _ends(questions: Questions, row: tuple, options: list[str], caption: str) -> tuple[int, int, list[int]]:
    """A two-option row's caption's last token, its foil's, and both options' in letter order."""
    question, _, video, _ = row
    ends = questions.ends(question, video.grid[0], options)
    k = options.index(caption)
    return ends[k], ends[1 - k], ends


def head_scores(model, hidden: tuple[torch.Tensor, ...], layer: int, positions: torch.Tensor,
                at: list[tuple[int, int]]) -> torch.Tensor:
    """Decoder layer ``layer``'s first head's attention scores (before the softmax) from each ``(row, position)`` of
    ``at`` to every position of that row (N x width), computed from ``hidden`` (every layer's states; a layer's input
    is ``hidden[layer]``) and the rows' M-RoPE ``positions`` (3 x rows x width) as the layer computes them."""
    from transformers.models.qwen2_vl.modeling_qwen2_vl import rotate_half

    decoder = model.model.language_model
    block = decoder.layers[layer]
    attention = block.self_attn
    rows, where = torch.unique(torch.tensor([r for r, _ in at]), return_inverse=True)
    states = block.input_layernorm(hidden[layer][rows])
    cos, sin = decoder.rotary_emb(states, positions[:, rows])
    if cos.dim() == 4:  # older transformers (5.16) give time, height and width apart, joined in the attention
        sections = list(attention.config.rope_parameters["mrope_section"]) * 2
        cos, sin = (torch.cat([part[i % 3] for i, part in enumerate(t.split(sections, dim=-1))], dim=-1)
                    for t in (cos, sin))
    width = attention.head_dim
    keys = attention.k_proj(states)[..., :width]  # the first key head, which the first query head reads
    keys = keys * cos + rotate_half(keys) * sin
    points = torch.tensor([p for _, p in at])
    queries = attention.q_proj(states[where, points])[..., :width]
    queries = queries * cos[where, points] + rotate_half(queries) * sin[where, points]
    return torch.einsum("nd,nwd->nw", queries, keys[where]) * attention.scaling


def option_logits(model, hidden: tuple[torch.Tensor, ...], layer: int, at) -> torch.Tensor:
    """The answer logits that decoder layer ``layer``'s states (``hidden``: every layer's) give at positions ``at``
    through the final norm and the head: how an option answers Yes/No at its own last token."""
    return model.lm_head(model.model.language_model.norm(hidden[layer][at]))


def _cosine_loss(mapping: torch.nn.Module, states: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """One minus the mean cosine of ``mapping(states)`` with the (normalised) ``target`` rows."""
    mapped = torch.nn.functional.normalize(mapping(states), dim=-1)
    return (1 - (mapped * target).sum(-1)).mean()


def _contrast(teacher: Teacher, options: list[list[str]]) -> torch.Tensor:
    """The direction from option B's X-CLIP text embedding to option A's, normalised: N x D."""
    a, b = teacher.text([o[0] for o in options]), teacher.text([o[1] for o in options])
    return torch.nn.functional.normalize(a - b, dim=-1)


def distil_tower(model, processor, videos: list[dict], teacher: Teacher, recipe: Recipe, rng: np.random.Generator,
                 tick: Callable[[int], None] = lambda n: None) -> None:
    """Train ``model``'s vision tower so that the mean of each clip's video tokens points where ``teacher``'s video
    embedding of the clip does (and keeps a norm near 1), for clips and clips played backwards alike."""
    tower = model.model.visual
    tower.requires_grad_(True)
    optimizer, schedule = optimizer_and_schedule(tower, Schedule(recipe.tower_steps, lr=recipe.tower_lr, warmup=20))
    tower.train()
    for _ in range(recipe.tower_steps):
        chosen = rng.choice(len(videos), min(recipe.tower_batch, len(videos)), replace=False)
        flips = rng.random(len(chosen)) < 0.5
        part = [_backwards(videos[v], processor) if f else videos[v] for v, f in zip(chosen, flips)]
        means = torch.stack([tokens.mean(dim=0) for tokens in _clip_tokens(model, part)])
        target = torch.stack([teacher.video[(int(v), bool(f))] for v, f in zip(chosen, flips)])
        loss = (1 - torch.nn.functional.cosine_similarity(means, target, dim=-1)).mean() + \
            0.1 * ((means.norm(dim=-1) - 1) ** 2).mean()
        take_step(tower, optimizer, schedule, loss)
        tick(1)
    tower.eval()


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
            out += [Video(tokens, v["video_grid_thw"]) for tokens, v in zip(_clip_tokens(model, part), part)]
    return out


def _clip_tokens(model, part: list[dict]) -> tuple[torch.Tensor, ...]:
    """The vision tower's tokens of each processed clip of ``part``, in one pass (transformers splits them by clip)."""
    return model.model.get_video_features(torch.cat([v["pixel_values_videos"] for v in part]),
                                          torch.cat([v["video_grid_thw"] for v in part])).pooler_output


def _backwards(video: dict, processor) -> dict:
    """The processed clip played backwards: its temporal patches in reverse order, each patch's two frames swapped."""
    grid = video["video_grid_thw"][0]
    t, h, w = (int(x) for x in grid)
    patches = video["pixel_values_videos"].view(t, h * w, 3, processor.video_processor.temporal_patch_size, -1)
    return {"pixel_values_videos": patches.flip(0).flip(3).reshape(video["pixel_values_videos"].shape),
            "video_grid_thw": video["video_grid_thw"]}


def answer_loss(logits: torch.Tensor, questions: Questions, answers: list[tuple[str, tuple[str, ...]]]) -> torch.Tensor:
    """Cross-entropy of each row's answer among the answers its question offers (Yes/No, or its options' letters),
    which is what the backend compares."""
    offered = torch.full_like(logits, float("-inf"))
    for i, (_, words) in enumerate(answers):
        offered[i, [questions.answer[w] for w in words]] = 0
    return torch.nn.functional.cross_entropy(logits + offered, torch.tensor([questions.answer[a] for a, _ in answers]))


@dataclass(frozen=True)
class Laid:
    """Rows of questions right-padded into one batch: token ids, attention mask, M-RoPE positions (3 x rows x width,
    padding at 0 as ``get_rope_index`` leaves it), where the video tokens are, and each row's answer position."""

    ids: torch.Tensor
    mask: torch.Tensor
    positions: torch.Tensor
    video: torch.Tensor
    answers: torch.Tensor


def lay_out(model, questions: Questions, rows: list[tuple[str, Video | None]]) -> Laid:
    """Each row's question tokenized with its video placeholders expanded (a row without a video: asked blind),
    right-padded into one :class:`Laid`."""
    ids = [questions.ids(q, _grid(video)) for q, video in rows]
    width = max(map(len, ids))
    pad = questions.tokenizer.pad_token_id or 0
    input_ids = torch.full((len(ids), width), pad, dtype=torch.long)
    mask = torch.zeros((len(ids), width), dtype=torch.long)
    positions = torch.zeros((3, len(ids), width), dtype=torch.long)
    for i, ((question, video), row) in enumerate(zip(rows, ids)):
        input_ids[i, :len(row)] = torch.tensor(row)
        mask[i, :len(row)] = 1
        positions[:, i, :len(row)] = questions.positions(model, question, _grid(video))
    return Laid(input_ids, mask, positions, input_ids == questions.video_id, torch.tensor([len(r) - 1 for r in ids]))


def _grid(video: Video | None) -> torch.Tensor | None:
    return None if video is None else video.grid[0]


def answer_outputs(model, questions: Questions, rows: list[tuple[str, Video | None]], layer: int = 1,
                   laid: Laid | None = None) -> tuple[torch.Tensor, torch.Tensor, tuple[torch.Tensor, ...]]:
    """The logits and decoder layer ``layer``'s output at each row's answer position (rows right-padded), and every
    layer's states at every position, with each row's video tokens placed at its video placeholders and M-RoPE
    positions as the model's forward pass computes them from ``input_ids`` (``laid``: the rows already laid out; a row
    whose video is None is asked blind)."""
    laid = laid or lay_out(model, questions, rows)
    embeds = model.get_input_embeddings()(laid.ids)
    seen = [v.tokens for _, v in rows if v is not None]
    if seen:
        embeds = embeds.masked_scatter(laid.video[..., None].expand_as(embeds), torch.cat(seen).to(embeds.dtype))
    out = model.model(inputs_embeds=embeds, attention_mask=laid.mask, position_ids=laid.positions,
                      output_hidden_states=True)
    at = (torch.arange(len(rows)), laid.answers)
    return model.lm_head(out.last_hidden_state[at]), out.hidden_states[layer][at], out.hidden_states
