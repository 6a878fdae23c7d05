"""Each backend through its protocols on the sample suite with tiny offline models, against direct reference
computations."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from bench.frames import policy, sample_frames
from bench.loaders import load
from bench.registry import spec
from bench.scoring.families import load_backend
from bench.scoring.protocols import make_protocol
from bench.scoring.chunks import answer_items


def items_of(sample, name):
    s = sample[name]
    return load(name, s.data_path, video_root=s.video_root).items


def clip_frames(item, clip, frame_policy):
    return sample_frames(item.clips[clip], frame_policy).array


def test_contrastive_similarities_match_a_direct_computation(sample, tiny):
    adapter = load_backend("contrastive", tiny("clip"))
    similarity = make_protocol("similarity", spec("vinoground"))
    items = items_of(sample, "vinoground")
    frames = policy("uniform", k=3)
    scored = answer_items(adapter, similarity, items, frames, batch_size=4)
    assert len(scored.pair) == sum(len(it.clips) * len(it.texts) for it in items)
    assert all(-1.0 <= r["score"] <= 1.0 for r in scored.pair)
    it = items[1]
    model, proc = adapter.model, adapter.processor
    with torch.no_grad():
        text = proc(text=[it.texts[1]], return_tensors="pt", padding="max_length", max_length=77)
        t = model.get_text_features(input_ids=text["input_ids"], attention_mask=text["attention_mask"]).pooler_output[0]
        images = proc(images=list(clip_frames(it, 0, frames)), return_tensors="pt")["pixel_values"]
        v = torch.nn.functional.normalize(model.get_image_features(pixel_values=images).pooler_output, dim=-1).mean(0)
    expected = float(torch.nn.functional.normalize(t, dim=-1) @ torch.nn.functional.normalize(v, dim=-1))
    got = next(r["score"] for r in scored.pair if (r["item_id"], r["clip"], r["text"]) == (it.item_id, 0, 1))
    assert got == pytest.approx(expected, abs=1e-5)
    again = answer_items(adapter, similarity, items, frames, batch_size=1)
    assert [r["score"] for r in again.pair] == pytest.approx([r["score"] for r in scored.pair], abs=1e-5)


def test_text_lm_log_likelihoods_match_an_unbatched_reference(sample, tiny):
    adapter = load_backend("textlm", tiny("gpt2"))
    items = items_of(sample, "vitatecs")
    scored = answer_items(adapter, make_protocol("loglik", spec("vitatecs")), items, policy("none"), batch_size=5)
    assert {r["clip"] for r in scored.pair} == {-1}
    row = scored.pair[3]
    text = next(it for it in items if it.item_id == row["item_id"]).texts[row["text"]]
    tok, model = adapter.tokenizer, adapter.model
    ids = torch.tensor([[tok.eos_token_id] + tok(text, add_special_tokens=False).input_ids])
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=ids).logits[0, :-1], dim=-1)
    ref = logp.gather(-1, ids[0, 1:, None]).sum().item()
    assert row["score"] == pytest.approx(ref, abs=1e-4)
    assert row["loglik_mean"] == pytest.approx(ref / (ids.shape[1] - 1), abs=1e-5)
    assert row["n_tokens"] == ids.shape[1] - 1


def test_entailment_reads_yes_and_no_at_the_answer_position(sample, tiny):
    adapter = load_backend("videollm", tiny("qwen2vl"))
    entail = make_protocol("entail", spec("velociti"))
    items = items_of(sample, "velociti")[:3]
    frames = policy("uniform", k=4)
    scored = answer_items(adapter, entail, items, frames, batch_size=4)
    assert len(scored.pair) == 6 and all(0.0 < r["score"] < 1.0 for r in scored.pair)
    yes, no = adapter.answer_id("Yes"), adapter.answer_id("No")
    tok = adapter.processor.tokenizer
    assert tok.decode([yes]) == "Yes" and tok.decode([no]) == "No" and yes != no
    row = scored.pair[3]
    it = next(i for i in items if i.item_id == row["item_id"])
    prompt = adapter.render(entail.template.format(caption=it.texts[row["text"]]), True)
    assert "Here is a caption that describes the video: " + it.texts[row["text"]] in prompt
    inputs = adapter.processor(text=[prompt], videos=[clip_frames(it, 0, frames)], return_tensors="pt")
    with torch.no_grad():
        logits = adapter.model(**inputs).logits[0, -1]
    assert (row["logit_yes"], row["logit_no"]) == pytest.approx((logits[yes].item(), logits[no].item()), abs=1e-4)
    p = torch.softmax(logits, -1)
    assert row["score"] == pytest.approx((p[yes] / (p[yes] + p[no])).item(), abs=1e-5)
    unbatched = answer_items(adapter, entail, items, frames, batch_size=1)
    assert [r["score"] for r in unbatched.pair] == pytest.approx([r["score"] for r in scored.pair], abs=1e-4)


def test_multiple_choice_asks_every_order_and_the_video_question(sample, tiny):
    adapter = load_backend("videollm", tiny("qwen2vl"))
    items = items_of(sample, "vinoground")[:2]
    scored = answer_items(adapter, make_protocol("mc", spec("vinoground")), items, policy("uniform", k=4), batch_size=3)
    text_rows = [r for r in scored.choice if r["axis"] == "text"]
    video_rows = [r for r in scored.choice if r["axis"] == "video"]
    assert len(text_rows) == 2 * 2 * 2 and len(video_rows) == 2 * 2 * 2
    for it in items:
        orders = sorted(tuple(r["options"]) for r in text_rows if r["item_id"] == it.item_id and r["query"] == 0)
        assert orders == [(0, 1), (1, 0)]
    for r in scored.choice:
        assert r["choice"] == r["options"][int(np.argmax(r["logits"]))]
    assert adapter.describe()["answer_tokens"].keys() == {"A", "B"}


def test_more_than_two_options_use_cyclic_orders(sample, tiny):
    adapter = load_backend("videollm", tiny("qwen2vl"))
    atp = [it for it in items_of(sample, "videocon") if it.subset == "atp_hard"][:1]
    scored = answer_items(adapter, make_protocol("mc", spec("videocon")), atp, policy("uniform", k=2), batch_size=8)
    assert sorted(r["options"][0] for r in scored.choice) == list(range(len(atp[0].texts)))
    assert not any(r["axis"] == "video" for r in scored.choice)  # VideoCon has no joined-video question
    assert all(len(r["logits"]) == 5 for r in scored.choice)


def test_blind_entailment_sends_no_video(sample, tiny):
    adapter = load_backend("videollm", tiny("qwen2vl"))
    items = items_of(sample, "velociti")[:2]
    scored = answer_items(adapter, make_protocol("entail", spec("velociti")), items, policy("none"), batch_size=2)
    assert len(scored.pair) == 4
    assert "<|video_pad|>" not in adapter.render("x", False)


def test_unknown_prompt_is_a_clear_error():
    with pytest.raises(ValueError, match="neither a known name"):
        make_protocol("entail", spec("velociti"), "Is it {colour}?")
    with pytest.raises(ValueError, match="takes no --prompt"):
        make_protocol("similarity", spec("velociti"), "yes-no")


def test_xclip_scores_batch_size_clips_per_forward_as_each_clip_alone(sample, tiny):
    adapter = load_backend("xclip", tiny("xclip"))
    similarity = make_protocol("similarity", spec("vinoground"))
    items = items_of(sample, "vinoground")[:3]
    frames = policy("uniform", k=4)
    calls = []
    forward = adapter.model.forward
    adapter.model.forward = lambda **inputs: calls.append(len(inputs["pixel_values"])) or forward(**inputs)
    scored = answer_items(adapter, similarity, items, frames, batch_size=4)
    clips = sum(len(it.clips) for it in items)
    assert calls == [min(4, clips - start) for start in range(0, clips, 4)]
    assert len(scored.pair) == sum(len(it.clips) * len(it.texts) for it in items)
    for it in items:
        for c in range(len(it.clips)):
            inputs = adapter.processor(text=list(it.texts), videos=[list(clip_frames(it, c, frames))],
                                       return_tensors="pt", padding=True)
            with torch.no_grad():
                expected = dict(zip(it.texts, forward(**inputs).logits_per_video[0].tolist()))
            got = {it.texts[r["text"]]: r["score"] for r in scored.pair
                   if r["item_id"] == it.item_id and r["clip"] == c}
            assert got == pytest.approx(expected, abs=1e-4)
    with pytest.raises(RuntimeError, match="takes 4 frames per clip, got 8"):
        answer_items(adapter, similarity, items, policy("uniform", k=8), batch_size=2)


def test_a_local_models_revision_changes_when_its_files_are_rewritten_and_a_hub_models_is_its_commit(tmp_path):
    from types import SimpleNamespace

    from bench.scoring.backends.base import model_revision

    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    model = SimpleNamespace(config=SimpleNamespace())
    first = model_revision(model, str(tmp_path))
    assert first.startswith("files:") and model_revision(model, str(tmp_path)) == first
    os.utime(tmp_path / "model.safetensors", ns=(1, 1))  # rewritten in place: another modification time
    assert model_revision(model, str(tmp_path)) != first
    assert model_revision(model, "org/name") is None  # a hub id without a known commit
    hub = SimpleNamespace(config=SimpleNamespace(_commit_hash="abc123"))
    assert model_revision(hub, str(tmp_path)) == "abc123"
