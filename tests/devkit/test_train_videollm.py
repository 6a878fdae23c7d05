"""The Video-LLM's training: its answer logits are those of the model's own forward pass on the video processor's
output (what scoring runs), so the frozen vision tower's tokens computed once change nothing; its answer loss compares
only the answers a question offers; its tower learns the teacher's video embeddings; its last stage teaches the
decoder alone to pick the caption's letter in both option orders."""

from __future__ import annotations

import numpy as np
import torch

from types import SimpleNamespace

from bench.devkit.train.videollm import (CHOICE_PROMPTS, Questions, Recipe, _attention_loss, _backwards, _choices,
                                         answer_loss, answer_outputs, distil_tower, head_scores, lay_out,
                                         learn_to_choose, video_inputs, video_tokens)
from bench.scoring import prompts
from bench.scoring.families import load_backend


def _clips(n: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 255, (8, 84, 84, 3), dtype=np.uint8) for _ in range(n)]


def test_training_answer_logits_are_the_models_own_forward_on_the_processed_clips(tiny):
    backend = load_backend("videollm", tiny("qwen2vl"), device="cpu", dtype="float32")
    model, processor = backend.model, backend.processor
    questions = Questions(processor)
    clips = _clips(3)
    videos = video_inputs(processor, clips)
    asked = ["Does this video show a red circle?", "Is it a square?", "Which one: A) a circle B) a long red square?"]
    rows = list(zip(asked, video_tokens(model, videos, chunk=2)))
    batched, _, _ = answer_outputs(model, questions, rows)
    for (question, _), clip, logits in zip(rows, clips, batched):
        inputs = processor(text=[questions.render(question)], videos=[clip], return_tensors="pt")
        with torch.no_grad():
            own = model(**inputs).logits[0, -1]
        assert torch.allclose(logits, own, atol=1e-5), (logits - own).abs().max()
    assert not torch.allclose(batched[0], batched[1], atol=1e-3)  # the rows differ: the comparison can fail


def test_a_row_without_a_video_is_the_question_the_backend_asks_blind(tiny):
    """A training row whose video is None gets the logits the scoring backend's blind prompt (no video in the user
    turn) gets from the model's own forward pass, beside rows with a video in the same batch."""
    backend = load_backend("videollm", tiny("qwen2vl"), device="cpu", dtype="float32")
    model, processor = backend.model, backend.processor
    questions = Questions(processor)
    video, = video_tokens(model, video_inputs(processor, _clips(1)))
    asked = ["Is it a square?", "Which one: A) a circle B) a long red square?"]
    rows = [(asked[0], video), (asked[0], None), (asked[1], None)]
    batched, _, _ = answer_outputs(model, questions, rows)
    for (question, _), logits in zip(rows[1:], batched[1:]):
        inputs = processor(text=[backend.render(question, False)], return_tensors="pt")
        with torch.no_grad():
            own = model(**inputs).logits[0, -1]
        assert torch.allclose(logits, own, atol=1e-5), (logits - own).abs().max()
    assert not torch.allclose(batched[0], batched[1], atol=1e-3)  # the video changes the answer: it was read


def test_a_clip_backwards_gives_the_tokens_of_its_frames_reversed(tiny):
    backend = load_backend("videollm", tiny("qwen2vl"), device="cpu", dtype="float32")
    model, processor = backend.model, backend.processor
    clip = _clips(1, seed=1)[0]
    forward, = video_inputs(processor, [clip])
    backwards = video_inputs(processor, [clip[::-1].copy()])[0]
    flipped, reversed_ = video_tokens(model, [_backwards(forward, processor), backwards])
    assert torch.allclose(flipped.tokens, reversed_.tokens, atol=1e-5)


def test_the_answer_loss_compares_only_the_answers_a_question_offers(tiny):
    processor = load_backend("videollm", tiny("qwen2vl"), device="cpu", dtype="float32").processor
    questions = Questions(processor)
    yes, no, a, b, c = (questions.answer[w] for w in ("Yes", "No", "A", "B", "C"))
    logits = torch.randn(3, len(processor.tokenizer), generator=torch.Generator().manual_seed(0))
    answers = [("Yes", ("Yes", "No")), ("B", ("A", "B")), ("C", ("A", "B", "C"))]
    expected = -torch.stack([logits[0, [yes, no]].log_softmax(0)[0], logits[1, [a, b]].log_softmax(0)[1],
                             logits[2, [a, b, c]].log_softmax(0)[2]]).mean()
    assert torch.allclose(answer_loss(logits, questions, answers), expected)
    elsewhere = logits.clone()
    elsewhere[:, questions.answer["D"]] += 50  # an answer none of the questions offers
    assert torch.allclose(answer_loss(elsewhere, questions, answers), expected)


def test_the_vision_tower_learns_the_teachers_video_embeddings(tiny):
    backend = load_backend("videollm", tiny("qwen2vl"), device="cpu", dtype="float32")
    model, processor = backend.model, backend.processor
    videos = video_inputs(processor, _clips(4, seed=2))
    width = model.config.text_config.hidden_size
    targets = torch.nn.functional.normalize(torch.randn(8, width, generator=torch.Generator().manual_seed(1)), dim=-1)
    teacher = SimpleNamespace(video={(i, backwards): targets[2 * i + backwards] for i in range(4)
                                     for backwards in (False, True)})

    def agreement() -> float:
        seen = video_tokens(model, videos) + video_tokens(model, [_backwards(v, processor) for v in videos])
        means = torch.stack([v.tokens.mean(dim=0) for v in seen])
        wanted = torch.stack([teacher.video[(i % 4, i >= 4)] for i in range(8)])
        return float(torch.nn.functional.cosine_similarity(means, wanted, dim=-1).mean())

    before = agreement()
    distil_tower(model, processor, videos, teacher, Recipe(1, tower_steps=150, tower_batch=4, tower_lr=1e-2),
                 np.random.default_rng(0))
    assert before < 0.3 and agreement() > 0.8, (before, agreement())


def test_an_ab_question_is_asked_in_both_option_orders_with_the_caption_at_a_and_at_b():
    rng = np.random.default_rng(0)
    for _ in range(20):
        both = _choices(rng, ["a red square moves left", "a red square moves right"])
        assert {answer for _, answer, _ in both} == {"A", "B"}
        assert both[0][2] == both[1][2][::-1]
        for question, answer, options in both:
            assert options["AB".index(answer)].rstrip(".").lower() == "a red square moves left"
            assert all(o in question for o in options)  # the options as the question shows them
    three = _choices(rng, ["x", "y", "z"])
    assert [options for *_, options in three][0] == three[1][2][::-1]
    assert all(options["ABC".index(answer)] == "x" for _, answer, options in three)


def test_an_options_end_is_the_position_of_its_last_token(tiny):
    backend = load_backend("videollm", tiny("qwen2vl"), device="cpu", dtype="float32")
    questions = Questions(backend.processor)
    video, = video_tokens(backend.model, video_inputs(backend.processor, _clips(1)))
    for seed in range(6):
        question, _, options = _choices(np.random.default_rng(seed), ["a red circle moves left", "a blue square"])[0]
        ids = questions.ids(question, video.grid[0])
        ends = questions.ends(question, video.grid[0], options)
        assert ends[0] < ends[1] < len(ids) - 1
        for end, option in zip(ends, options):
            assert questions.tokenizer.decode(ids[:end + 1]).endswith(option)
            assert not questions.tokenizer.decode(ids[:end]).endswith(option)


def _eager_attentions(model, laid, rows) -> tuple[torch.Tensor, ...]:
    """Every decoder layer's attention weights (rows x heads x width x width) from the model's own forward pass (eager
    attention) over the laid-out rows with their video tokens in place."""
    embeds = model.get_input_embeddings()(laid.ids)
    embeds = embeds.masked_scatter(laid.video[..., None].expand_as(embeds), torch.cat([v.tokens for _, v in rows]))
    return model.model.language_model(inputs_embeds=embeds, attention_mask=laid.mask, position_ids=laid.positions,
                                      output_attentions=True).attentions


def test_head_scores_are_the_first_heads_own_attention_before_the_softmax(tiny):
    backend = load_backend("videollm", tiny("qwen2vl"), device="cpu", dtype="float32")
    model, processor = backend.model, backend.processor
    model.set_attn_implementation("eager")  # so that the forward pass returns its attention weights
    questions = Questions(processor)
    asked = ["Does this video show a red circle?", "Which one: A) a circle B) a long red square?"]
    rows = list(zip(asked, video_tokens(model, video_inputs(processor, _clips(2, seed=3)))))
    laid = lay_out(model, questions, rows)
    with torch.no_grad():
        _, _, hidden = answer_outputs(model, questions, rows, laid=laid)
        weights = _eager_attentions(model, laid, rows)
        for layer in range(len(weights)):
            at = [(0, int(laid.answers[0])), (1, int(laid.answers[1])), (1, 20)]
            scores = head_scores(model, hidden, layer, laid.positions, at)
            for (row, point), score in zip(at, scores):
                own = weights[layer][row, 0, point, :point + 1]
                assert torch.allclose(score[:point + 1].softmax(-1), own, atol=1e-5), (layer, row, point)
    assert not torch.allclose(scores[0], scores[1])  # rows differ: the comparison can fail


def test_the_select_term_is_the_answers_attention_to_the_captions_option_over_the_foils(tiny):
    backend = load_backend("videollm", tiny("qwen2vl"), device="cpu", dtype="float32")
    model, processor = backend.model, backend.processor
    model.set_attn_implementation("eager")
    questions = Questions(processor)
    video, = video_tokens(model, video_inputs(processor, _clips(1, seed=4)))
    both = _choices(np.random.default_rng(0), ["a red circle moves left", "a blue square jumps"])
    rows = [(question, answer, video, ("A", "B")) for question, answer, _ in both]
    options_of = {i: (options, options["AB".index(answer)]) for i, (_, answer, options) in enumerate(both)}
    asked = [(q, v) for q, _, v, _ in rows]
    laid = lay_out(model, questions, asked)
    with torch.no_grad():
        _, _, hidden = answer_outputs(model, questions, asked, laid=laid)
        weights = _eager_attentions(model, laid, asked)[-1]
        expected = []
        for r, (options, caption) in options_of.items():
            ends = questions.ends(rows[r][0], video.grid[0], options)
            k = options.index(caption)
            own = weights[r, 0, int(laid.answers[r])]
            expected.append(torch.nn.functional.logsigmoid(own[ends[k]].log() - own[ends[1 - k]].log()))
        loss = _attention_loss(model, questions, rows, laid, hidden, Recipe(1, select_weight=2.0), [], options_of)
    assert torch.allclose(loss, -2.0 * torch.stack(expected).mean(), atol=1e-5)
    assert float(_attention_loss(model, questions, rows, laid, hidden, Recipe(1), [], options_of)) == 0.0


def test_learning_to_choose_teaches_the_decoder_alone_the_captions_letter_in_both_orders(tiny):
    """:func:`learn_to_choose` moves the caption's A-minus-B margin with it at A above the margin with it at B, in every
    two-option prompt, from none at all; it trains the decoder's layers and final norm and nothing else (the tower and
    the token embeddings, which the scored answers read, stay as they were)."""
    backend = load_backend("videollm", tiny("qwen2vl"), device="cpu", dtype="float32")
    model, processor = backend.model, backend.processor
    questions = Questions(processor)
    video, = video_tokens(model, video_inputs(processor, _clips(1, seed=5)))
    texts = ["a red circle moves left", "a blue square jumps"]

    def swapped_margins() -> list[float]:
        found = []
        with torch.no_grad():
            for name in CHOICE_PROMPTS:
                rows = [(prompts.render_choice(prompts.PROMPTS[name], order, name), video)
                        for order in (texts, texts[::-1])]
                logits = answer_outputs(model, questions, rows)[0]
                margin = logits[:, questions.answer["A"]] - logits[:, questions.answer["B"]]
                found.append(float(margin[0] - margin[1]))
        return found

    before, weights = swapped_margins(), {n: p.detach().clone() for n, p in model.named_parameters()}
    learn_to_choose(model, questions, lambda rng: [(video, texts)], Recipe(1, choice_steps=30, choice_lr=2e-2),
                    np.random.default_rng(1))
    after = swapped_margins()
    assert max(map(abs, before)) < 0.1 and min(after) > 0.5, (before, after)
    moved = {n for n, p in model.named_parameters() if not torch.equal(p, weights[n])}
    decoder = "model.language_model."
    assert moved and all(n.startswith(decoder + "layers.") or n == decoder + "norm.weight" for n in moved), moved
    assert any(".mlp." in n for n in moved) and any(".self_attn." in n for n in moved)


def test_the_last_stage_counts_in_the_steps_and_shrinks_with_a_quick_build():
    recipe = Recipe(100, tower_steps=30, choice_steps=50)
    assert recipe.total_steps == 180
    quick = recipe.scaled(0.1)
    assert (quick.steps, quick.tower_steps, quick.choice_steps) == (10, 3, 5)
    assert Recipe(100).scaled(0.1).choice_steps == 0
