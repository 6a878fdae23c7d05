"""The Video-LLM backend (Qwen2-VL, LLaVA-OneVision, Video-LLaVA) through the entail and mc protocols, with tiny
offline models, against direct, unbatched, unpadded computations with the model."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bench.frames import policy, sample_frames, sample_joined
from bench.loaders import load
from bench.registry import spec
from bench.scoring import prompts
from bench.scoring.backends import videollm
from bench.scoring.families import load_backend
from bench.scoring.protocols import make_protocol
from bench.scoring.chunks import answer_items
from bench.store.schema import choice_frame, pair_frame

FAMILIES = ["qwen2vl", "llava_onevision", "video_llava"]
UNIFORM = policy("uniform", k=4)
ENTAIL = make_protocol("entail", spec("velociti"))


def clip_frames(item, clip):
    return sample_frames(item.clips[clip], UNIFORM)


def backend(path, **options):
    return load_backend("videollm", path, **options)


def items_of(sample, name, n=None, subset=None):
    s = sample[name]
    items = [it for it in load(name, s.data_path, video_root=s.video_root).items if subset in (None, it.subset)]
    return items[:n]


def reference_logits(adapter, prompt: str, frames) -> torch.Tensor:
    """Next-token logits of one prompt, unbatched and unpadded, straight through the processor and the model (the
    frames with their true times)."""
    kwargs = {"videos": [frames.array], "video_metadata": [frames.video_metadata()]} if frames is not None else {}
    inputs = adapter.processor(text=[prompt], return_tensors="pt", **kwargs)
    with torch.no_grad():
        return adapter.model(**inputs).logits[0]


def spy_forward(adapter) -> list[dict]:
    """Record (rows, tokens, with pixels, with a cache) of every forward pass."""
    calls = []
    forward = adapter.model.forward

    def spied(*args, **kwargs):
        calls.append({"shape": tuple(kwargs["input_ids"].shape),
                      "pixels": any(k.startswith("pixel_values") for k in kwargs),
                      "cached": kwargs.get("past_key_values") is not None})
        return forward(*args, **kwargs)

    adapter.model.forward = spied
    return calls


@pytest.mark.parametrize("family", FAMILIES)
def test_entailment_reads_yes_and_no_at_the_answer_position(sample, tiny, family):
    adapter = backend(tiny(family))
    items = items_of(sample, "velociti", 3)
    scored = answer_items(adapter, ENTAIL, items, UNIFORM, batch_size=4)
    assert len(scored.pair) == 6 and all(0.0 < r["score"] < 1.0 for r in scored.pair)
    yes, no = adapter.answer_ids(["Yes", "No"])
    tok = adapter.processor.tokenizer
    assert tok.decode([yes]).strip() == "Yes" and tok.decode([no]).strip() == "No" and yes != no
    for row in scored.pair:
        it = next(i for i in items if i.item_id == row["item_id"])
        prompt = adapter.render(ENTAIL.template.format(caption=it.texts[row["text"]]), True)
        assert "Here is a caption that describes the video: " + it.texts[row["text"]] in prompt
        logits = reference_logits(adapter, prompt, clip_frames(it, row["clip"]))
        assert (row["logit_yes"], row["logit_no"]) == pytest.approx((logits[-1, yes].item(), logits[-1, no].item()),
                                                                    abs=1e-4)
        assert (row["logit_yes"], row["logit_no"]) != pytest.approx((logits[-2, yes].item(), logits[-2, no].item()),
                                                                    abs=1e-4)
        p = torch.softmax(logits[-1], -1)
        assert row["score"] == pytest.approx((p[yes] / (p[yes] + p[no])).item(), abs=1e-5)
    assert len(pair_frame(scored.pair)) == 6


@pytest.mark.parametrize("family", FAMILIES)
def test_batched_kv_reused_and_whole_scores_agree(sample, tiny, family):
    items = items_of(sample, "velociti", 4) + items_of(sample, "vinoground", 1)
    results = {}
    for reuse in ("kv", "none"):
        adapter = backend(tiny(family), reuse=reuse)
        assert adapter.describe()["reuse"] == reuse
        for batch_size in (1, 5):
            calls = spy_forward(adapter)
            scored = answer_items(adapter, ENTAIL, items, UNIFORM, batch_size)
            results[reuse, batch_size] = [(r["logit_yes"], r["logit_no"]) for r in scored.pair]
            with_pixels = sum(c["shape"][0] for c in calls if c["pixels"])
            if reuse == "kv":
                assert with_pixels == 6, "each of the 6 clips goes through the model once"
                assert sum(c["shape"][0] for c in calls if c["cached"]) == 12
                assert all(c["shape"][0] <= batch_size for c in calls)
            else:
                assert with_pixels == 12 and not any(c["cached"] for c in calls)
    reference = np.array(results["none", 1])
    for key, found in results.items():
        assert np.array(found) == pytest.approx(reference, abs=1e-4), key


@pytest.mark.parametrize("family", FAMILIES)
def test_multiple_choice_asks_both_orders_of_texts_and_of_joined_videos(sample, tiny, family):
    adapter = backend(tiny(family))
    choice = make_protocol("mc", spec("vinoground"))
    items = items_of(sample, "vinoground", 2)
    scored = answer_items(adapter, choice, items, UNIFORM, batch_size=3)
    letters = adapter.answer_ids(["A", "B"])
    assert [adapter.processor.tokenizer.decode([t]).strip() for t in letters] == ["A", "B"]
    assert adapter.describe()["answer_tokens"] == {"A": letters[0], "B": letters[1]}
    table = choice_frame(scored.choice)
    assert len(table) == 16 and set(table["axis"]) == {"text", "video"}
    for it in items:
        for axis in ("text", "video"):
            for query in (0, 1):
                rows = table[(table.item_id == it.item_id) & (table.axis == axis) & (table["query"] == query)]
                assert sorted(map(tuple, rows["options"])) == [(0, 1), (1, 0)]
    for r in scored.choice:
        assert len(r["logits"]) == 2 and r["choice"] == r["options"][int(np.argmax(r["logits"]))]
    it = items[1]
    text_row = next(r for r in scored.choice if (r["item_id"], r["axis"], r["query"], r["options"])
                    == (it.item_id, "text", 1, [1, 0]))
    question = choice.template.format(option_a=it.texts[1], option_b=it.texts[0])
    logits = reference_logits(adapter, adapter.render(question, True), clip_frames(it, 1))[-1]
    assert text_row["logits"] == pytest.approx(logits[letters].tolist(), abs=1e-4)
    video_row = next(r for r in scored.choice if (r["item_id"], r["axis"], r["query"], r["options"])
                     == (it.item_id, "video", 0, [1, 0]))
    question = prompts.PROMPTS["vinoground-video"].format(caption=it.texts[0])
    joined = sample_joined([it.clips[1], it.clips[0]], UNIFORM)
    logits = reference_logits(adapter, adapter.render(question, True), joined)[-1]
    assert video_row["logits"] == pytest.approx(logits[letters].tolist(), abs=1e-4)


def test_five_options_take_every_cyclic_order_with_five_letters(sample, tiny):
    items = items_of(sample, "videocon", 2, subset="atp_hard")
    found = {}
    for reuse in ("kv", "none"):
        adapter = backend(tiny("video_llava"), reuse=reuse)
        found[reuse] = answer_items(adapter, make_protocol("mc", spec("videocon")), items, policy("uniform", k=2),
                                    batch_size=4).choice
    rows = found["kv"]
    assert len(rows) == 10 and all(len(r["logits"]) == 5 for r in rows)
    assert sorted(tuple(r["options"]) for r in rows if r["item_id"] == items[0].item_id) == [
        (0, 1, 2, 3, 4), (1, 2, 3, 4, 0), (2, 3, 4, 0, 1), (3, 4, 0, 1, 2), (4, 0, 1, 2, 3)]
    assert len(set(adapter.answer_ids(list("ABCDE")))) == 5
    assert np.array([r["logits"] for r in rows]) == pytest.approx(np.array([r["logits"] for r in found["none"]]),
                                                                  abs=1e-4)


@pytest.mark.parametrize("family", ["qwen2vl", "llava_onevision"])
def test_blind_runs_send_the_prompts_without_video(sample, tiny, family):
    adapter = backend(tiny(family))
    items = items_of(sample, "velociti", 2)
    calls = spy_forward(adapter)
    scored = answer_items(adapter, ENTAIL, items, policy("none"), batch_size=2)
    assert len(scored.pair) == 4 and not any(c["pixels"] for c in calls)
    row = scored.pair[1]
    prompt = adapter.render(ENTAIL.template.format(caption=items[0].texts[row["text"]]), False)
    assert adapter.processor.video_token not in prompt
    logits = reference_logits(adapter, prompt, None)[-1]
    yes, no = adapter.answer_ids(["Yes", "No"])
    assert (row["logit_yes"], row["logit_no"]) == pytest.approx((logits[yes].item(), logits[no].item()), abs=1e-4)


def test_requests_are_processed_one_by_one_when_the_placeholder_expansion_cannot_be_reproduced(sample, tiny,
                                                                                               monkeypatch):
    adapter = backend(tiny("qwen2vl"))
    items = items_of(sample, "velociti", 2)
    shared = [r["score"] for r in answer_items(adapter, ENTAIL, items, UNIFORM, batch_size=4).pair]
    processed = []
    process = adapter._process
    monkeypatch.setattr(adapter, "_process", lambda p, f, **kw: processed.append(p) or process(p, f, **kw))

    def differs(*args):
        raise ValueError("the processor inserts more than the placeholder")

    monkeypatch.setattr(adapter, "_expanded", differs)
    alone = [r["score"] for r in answer_items(adapter, ENTAIL, items, UNIFORM, batch_size=4).pair]
    probe = adapter.render(videollm.PROBE, True)
    assert processed.count(probe) == 2, "each video through the processor once with the probe question"
    assert len([p for p in processed if p != probe]) == 4, "then each of the 4 requests on its own"
    assert alone == pytest.approx(shared, abs=1e-5)


def test_answer_token_when_the_assistant_turn_does_not_extend_the_generation_prompt(tiny):
    adapter = backend(tiny("llava_onevision"))
    adapter.prepare(["Yes", "No"])
    assert adapter.describe()["answer_token_source"] == {"Yes": "template", "No": "template"}
    template = adapter.processor.chat_template
    adapter.processor.chat_template = template.replace(
        "<|im_start|>{{ message['role'] }}\n", "<|im_start|>{{ message['role'] }} \n")
    adapter._answer_ids.clear()
    prefix = adapter.render("?", False)
    assert prefix.endswith("<|im_start|>assistant\n")
    head = adapter.tokenizer(prefix, add_special_tokens=False).input_ids
    expected = adapter.tokenizer(prefix + "No", add_special_tokens=False).input_ids[len(head)]
    assert adapter.answer_id("No") == expected
    assert adapter.describe()["answer_token_source"]["No"] == "appended"


def test_answers_must_be_single_distinct_tokens(tiny):
    adapter = backend(tiny("qwen2vl"))
    with pytest.raises(ValueError, match="not a single token"):
        adapter.answer_id("Perhaps")
    with pytest.raises(ValueError, match="share tokens"):
        adapter.answer_ids(["Yes", "Yes"])


def test_reuse_and_preprocess_modes_are_checked(tiny):
    with pytest.raises(ValueError, match="reuse must be one of"):
        backend(tiny("qwen2vl"), reuse="sometimes")
    with pytest.raises(ValueError, match="preprocess must be one of"):
        backend(tiny("qwen2vl"), preprocess="gpu")
    adapter = backend(tiny("qwen2vl"))
    assert (adapter.reuse, adapter.describe()["reuse_check"]["status"], adapter.preprocess) == ("kv", "pending", "cpu")


def test_kv_reuse_checks_itself_on_the_first_batch_and_keeps_it_when_it_agrees(sample, tiny, capsys):
    adapter = backend(tiny("qwen2vl"))
    items = items_of(sample, "velociti", 4)
    calls = spy_forward(adapter)
    checked = answer_items(adapter, ENTAIL, items, UNIFORM, batch_size=4)
    check = adapter.describe()["reuse_check"]
    assert check["status"] == "passed" and adapter.reuse == "kv" and check["cached_rows"] >= 2
    assert check["max_abs_diff"] <= check["atol"] and check["requests"] == 4
    assert "KV-prefix reuse checked on 4 requests" in capsys.readouterr().err
    assert any(c["cached"] for c in calls)
    whole = answer_items(backend(tiny("qwen2vl"), reuse="none"), ENTAIL, items, UNIFORM, batch_size=4)
    assert [r["score"] for r in checked.pair] == pytest.approx([r["score"] for r in whole.pair], abs=1e-5)


@pytest.mark.parametrize("fault", ["differs", "raises"])
def test_kv_reuse_that_differs_or_fails_falls_back_to_whole_requests(sample, tiny, monkeypatch, capsys, fault):
    adapter = backend(tiny("qwen2vl"))
    cached = adapter._cached

    def broken(*args):
        if fault == "raises":
            raise IndexError("index 312 is out of bounds for dimension 0 with size 1")
        return cached(*args) + 1.0

    monkeypatch.setattr(adapter, "_cached", broken)
    monkeypatch.setattr(videollm, "architecture_of", lambda model_type: None)
    items = items_of(sample, "velociti", 3)
    scored = answer_items(adapter, ENTAIL, items, UNIFORM, batch_size=4)
    check = adapter.describe()["reuse_check"]
    assert adapter.reuse == "none" and adapter.describe()["reuse"] == "none" and check["status"] == "failed"
    assert ("IndexError" if fault == "raises" else "beyond") in check["reason"]
    err = capsys.readouterr().err
    assert "disagrees with whole requests (model type 'qwen2_vl' is not among the tested)" in err
    whole = answer_items(backend(tiny("qwen2vl"), reuse="none"), ENTAIL, items, UNIFORM, batch_size=4)
    assert [r["score"] for r in scored.pair] == pytest.approx([r["score"] for r in whole.pair], abs=1e-6)


def test_the_tiny_qwen2vl_config_is_consistent(tiny):
    """Every token id the processor can emit is inside the vocabulary, M-RoPE sections cover half the head, and
    the vision rope covers the vision head (a wrong one of these is a device-side assert on CUDA)."""
    adapter = backend(tiny("qwen2vl"))
    config = adapter.model.config
    text, vision = config.text_config, config.vision_config
    assert len(adapter.tokenizer) <= text.vocab_size
    for name in ("image_token_id", "video_token_id", "vision_start_token_id", "vision_end_token_id"):
        assert getattr(config, name) < text.vocab_size
    head = text.hidden_size // text.num_attention_heads
    assert sum(text.rope_parameters["mrope_section"]) == head // 2
    assert (vision.embed_dim // vision.num_heads) % 4 == 0


def test_a_run_with_a_video_llm_stores_its_tables_and_settings(sample, tiny, tmp_path):
    from bench.config import DataSource, ScoreConfig
    from bench.scoring.runner import score
    from bench.store import read_run

    s = sample["vinoground"]
    source = DataSource.of("vinoground", s.data_path, s.video_root)
    out = score(ScoreConfig(source, tiny("llava_onevision"), protocol="mc", frame_policy="uniform:k=4",
                            out=tmp_path / "run", batch_size=4, limit=2, progress=False))
    run = read_run(out)
    assert len(run.choice) == 16 and run.failures.empty
    assert run.manifest.family == "videollm" and run.manifest.protocol == "mc"
    assert run.manifest.prompt["name"] == "vinoground-text"
    assert run.manifest.details["reuse"] == "kv"
    assert run.manifest.details["reuse_check"]["status"] == "passed"
    assert set(run.manifest.details["answer_tokens"]) == {"A", "B"}


@pytest.mark.parametrize("family", ["qwen2vl", "llava_onevision"])
def test_positions_continued_from_a_videos_first_request_equal_the_models_own(sample, tiny, family):
    adapter = backend(tiny(family))
    it = items_of(sample, "velociti", 1)[0]
    video = adapter.encode(clip_frames(it, 0))
    captions = ["Yes", "a red square moves from left to right and then jumps three times", "?"]
    prompts_ = [videollm._Prompt(adapter.render(ENTAIL.template.format(caption=c), True), "v") for c in captions]
    rows = adapter._rows(prompts_, {"v": video})
    assert len({len(r.ids) for r in rows}) == 3
    for row in rows:
        assert torch.equal(row.positions, adapter._positions(row))


def test_a_check_where_no_request_goes_through_the_cache_says_reuse_off_and_why(sample, tiny, monkeypatch, capsys):
    adapter = backend(tiny("qwen2vl"))

    def differs(*args):
        raise ValueError("the processor inserts more than the placeholder")

    monkeypatch.setattr(adapter, "_expanded", differs)
    items = items_of(sample, "velociti", 2)
    scored = answer_items(adapter, ENTAIL, items, UNIFORM, batch_size=4)
    check = adapter.describe()["reuse_check"]
    assert check["status"] == "off" and check["cached_rows"] == 0 and adapter.reuse == "none"
    assert check["reason"] == "the processor's tokens differ from those of its expanded text"
    err = capsys.readouterr().err
    assert ("KV-prefix reuse off: none of the first batch's 4 requests went through the cache (the processor's "
            "tokens differ from those of its expanded text); whole requests") in err and "reuse on" not in err
    whole = answer_items(backend(tiny("qwen2vl"), reuse="none"), ENTAIL, items, UNIFORM, batch_size=4)
    assert [r["score"] for r in scored.pair] == pytest.approx([r["score"] for r in whole.pair], abs=1e-5)
