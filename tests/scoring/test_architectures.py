"""One test per architecture of the table (:mod:`bench.scoring.architectures`): a tiny random instance built offline
with its real processor classes, scored on the generated world through the runner (Yes/No and A/B for a Video-LLM,
similarity for an encoder), its stored numbers recomputed with plain transformers on the same frames (with their true
times) and prompt, ``probe`` giving the run's number, KV reuse against whole requests, and, for a model that reads
its frames' times, those times read back from the prompt or the positions the model is given. CI runs this module at
both ends of the supported transformers range; an architecture the installed transformers lacks is skipped, named.
"""

from __future__ import annotations

import importlib
import json
import logging
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
import torch
from packaging.version import Version

from bench.config import DataSource, ScoreConfig
from bench.devkit.tiny_models import tiny_architectures
from bench.frames import policy, sample_frames
from bench.commands.models import listing
from bench.scoring import prompts
from bench.scoring.architectures import ARCHITECTURES, TESTED_TRANSFORMERS
from bench.scoring.backends import videollm
from bench.scoring.chunks import frame_size
from bench.scoring.families import FAMILIES, load_backend
from bench.scoring.probe import probe, run_setup
from bench.scoring.runner import score
from bench.scoring.warm import WarmModels
from bench.store import read_run

FRAMES = "uniform:k=4"
BUILT = tiny_architectures()
VIDEO_LLMS = sorted(a for a in BUILT if ARCHITECTURES[a].family == "videollm")
ENCODERS = sorted(a for a in BUILT if ARCHITECTURES[a].family in ("contrastive", "xclip", "videotext"))


def shipped(arch: str) -> None:
    """Skip, naming the architecture, when the installed transformers does not ship it."""
    import transformers

    row = ARCHITECTURES[arch]
    if Version(transformers.__version__) < Version(row.since):
        pytest.skip(f"{row.name} ({arch}) is tested from transformers {row.since} on: {row.before}")


@pytest.fixture(scope="module")
def sources(sample):
    return {name: DataSource.of(name, sample[name].data_path, sample[name].video_root, sample[name].loader_options)
            for name in ("velociti", "vitatecs")}


@pytest.fixture(scope="module")
def models():
    found = WarmModels()
    yield found
    found.clear()


class Warnings(logging.Handler):
    """transformers' log lines while it is installed (its ``warning_once`` forgotten, so a warning given before in
    the session is given again)."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())

    def __enter__(self):
        logging.Logger.warning_once.cache_clear()
        logging.getLogger("transformers").addHandler(self)
        return self

    def __exit__(self, *exc):
        logging.getLogger("transformers").removeHandler(self)


def run_frames(backend, clip):
    """The clip's frames as a run decodes them for ``backend`` (straight to its processor's size)."""
    return sample_frames(clip, policy("uniform", k=4), size=frame_size("auto", backend))


def plain_logits(backend, prompt: str, frames) -> torch.Tensor:
    """Next-token logits of one prompt and clip straight through the processor (the frames with their true times)
    and the model, unbatched and unpadded."""
    inputs = backend.processor(text=[prompt], videos=[[frames.array]], video_metadata=[frames.video_metadata()],
                               return_tensors="pt")
    with torch.no_grad():
        return backend.model(**inputs).logits[0, -1]


def test_every_architecture_of_the_table_is_built_and_tested_here():
    assert set(BUILT) == set(ARCHITECTURES)
    assert set(VIDEO_LLMS) | set(ENCODERS) | {"gpt2"} == set(ARCHITECTURES)  # GPT-2: tests/scoring/test_backends.py
    rows = listing()
    assert all(r["tested"] for r in rows if r["architecture"] in ARCHITECTURES)
    params = {test_a_video_llm_scores_end_to_end_with_its_frames_true_times.__name__: VIDEO_LLMS,
              test_an_encoder_scores_similarities_end_to_end.__name__: ENCODERS}
    for r in rows:  # each row's test is a test of the suite, with the architecture among its parameters
        path, name = r["test"].split("::")
        function, _, param = name.partition("[")
        module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
        assert callable(getattr(module, function)), r["test"]
        assert param.rstrip("]") in params[function] if param else r["family"] in ("textlm", "api"), r["test"]
    remote = [r for r in rows if r.get("remote")]  # served elsewhere: no architecture, tested through a server
    assert [r["family"] for r in remote] == [f.name for f in FAMILIES.values() if f.remote] == ["api"]
    assert all(r["architecture"] is None and r["tested"] and "transformers serve" in r["served"] for r in remote)
    assert sum(r["family"] == "videollm" and r["tested"] for r in rows) >= 12
    assert sum(r["family"] in ("contrastive", "xclip", "videotext") and r["tested"] for r in rows) >= 5


@pytest.mark.slow
@pytest.mark.parametrize("arch", VIDEO_LLMS)
def test_a_video_llm_scores_end_to_end_with_its_frames_true_times(arch, tiny, sources, models, tmp_path, capsys):
    shipped(arch)
    row = ARCHITECTURES[arch]
    folder = tiny(arch)
    with Warnings() as logged:
        runs = {protocol: read_run(score(ScoreConfig(sources["velociti"], folder, protocol=protocol,
                                                     frame_policy=FRAMES, limit=2, batch_size=4,
                                                     out=tmp_path / protocol, progress=False)))
                for protocol in ("entail", "mc")}
    err = capsys.readouterr().err
    assert not [line for line in logged.lines if "could not be inferred" in line or "timestamps" in line], logged.lines
    entail, mc = runs["entail"], runs["mc"]
    assert entail.failures.empty and mc.failures.empty
    items = entail.items()
    assert len(entail.pair) == sum(len(it.texts) for it in items) and entail.pair["score"].between(0, 1).all()
    assert len(mc.choice) and all(len(logits) == 2 for logits in mc.choice["logits"])
    details = entail.manifest.details
    assert details["architecture"]["model_type"] == arch and details["architecture"]["tested"]
    assert details["frame_times"] == videollm.FRAME_TIMES
    check = details["reuse_check"]
    if row.kv == "exact":
        assert check["status"] == "passed" and check["cached_rows"] > 0 and details["reuse"] == "kv"
        assert f"({check['cached_rows']} through the cache)" in err and "reuse on" in err
    else:
        assert check["status"] == "off" and details["reuse"] == "none" and "reuse on" not in err
        assert f"KV-prefix reuse off for {row.name}: {row.kv.removeprefix('off: ')}" in err

    backend = load_backend("videollm", folder, reuse="none")
    it = items[0]
    frames = run_frames(backend, it.clips[0])
    question = entail.manifest.prompt["template"].format(caption=it.texts[1])
    stored = entail.pair[(entail.pair["item_id"] == it.item_id) & (entail.pair["text"] == 1)].iloc[0]
    yes, no = backend.answer_ids(["Yes", "No"])
    logits = plain_logits(backend, backend.render(question, True), frames)
    assert (stored["logit_yes"], stored["logit_no"]) == pytest.approx((logits[yes].item(), logits[no].item()),
                                                                     abs=1e-4)

    choice = mc.choice[(mc.choice["item_id"] == it.item_id) & (mc.choice["axis"] == "text")
                       & (mc.choice["query"] == 0)].iloc[-1]
    options = [it.texts[o] for o in choice["options"]]
    asked = prompts.render_choice(mc.manifest.prompt["template"], options, mc.manifest.prompt["name"])
    logits = plain_logits(backend, backend.render(asked, True), frames)
    assert list(choice["logits"]) == pytest.approx(logits[backend.answer_ids(["A", "B"])].tolist(), abs=1e-4)

    setup = run_setup(entail.manifest)
    for item in items:
        found = probe(video=item.clips[0], texts=item.texts, models=models, **setup)
        expected = entail.pair[entail.pair["item_id"] == item.item_id].sort_values("text")["score"].tolist()
        assert found.scores == pytest.approx(expected, rel=1e-4, abs=1e-6)

    template = entail.manifest.prompt["template"]
    requests = _requests(backend, items, template)
    whole = backend.next_logits(*requests, batch_size=4, reuse="none")
    reused = backend.next_logits(*requests, batch_size=4, reuse="kv")
    assert backend._kv_rows == (len(requests[0]) if row.kv == "exact" else 0)
    assert reused == pytest.approx(whole, abs=1e-4)

    prompt = backend.render(question, True)
    video = backend.encode(frames)
    (token_row,) = backend._rows([videollm._Prompt(prompt, "v")], {"v": video})
    text = backend.tokenizer.decode(token_row.ids)
    metadata = frames.video_metadata()
    if row.time_text:
        shown = row.time_texts(metadata)
        assert len(shown) >= 2 and all(t in text for t in shown)
        positions = [text.index(t) for t in shown]
        assert positions == sorted(positions), "each frame's time in order"
    if "duration" in row.times:
        assert str(timedelta(seconds=int(metadata["duration"]))) in text
    if arch == "qwen2_5_vl":  # the times are M-RoPE positions: one temporal step per second_per_grid_ts seconds
        sampled_fps = len(metadata["frames_indices"]) / metadata["total_num_frames"] * metadata["fps"]
        step = float(token_row.pixels["second_per_grid_ts"][0])
        assert step == pytest.approx(2 / sampled_fps)
        tokens_per_second = backend.model.config.vision_config.tokens_per_second
        video_at = [i for i, t in enumerate(token_row.ids) if t == backend.processor.video_token_id]
        temporal = sorted(set(token_row.positions[0, video_at].tolist()))
        assert np.diff(temporal).tolist() == [int(step * tokens_per_second)] * (len(temporal) - 1)


def _requests(backend, items, template):
    """(the entailment prompt of each text with each item's first clip, the encoded clips, the Yes/No tokens)."""
    prompts, videos = [], {}
    for it in items:
        videos[it.item_id] = backend.encode(run_frames(backend, it.clips[0]))
        prompts += [videollm._Prompt(backend.render(template.format(caption=t), True), it.item_id) for t in it.texts]
    return prompts, videos, backend.answer_ids(["Yes", "No"])


@pytest.mark.slow
@pytest.mark.parametrize("arch", ENCODERS)
def test_an_encoder_scores_similarities_end_to_end(arch, tiny, sources, models, tmp_path):
    shipped(arch)
    row = ARCHITECTURES[arch]
    folder = tiny(arch)
    run = read_run(score(ScoreConfig(sources["vitatecs"], folder, frame_policy=FRAMES, limit=3, batch_size=2,
                                     out=tmp_path / "run", progress=False)))
    assert run.failures.empty and run.manifest.family == row.family and run.manifest.protocol == "similarity"
    items = run.items()
    assert len(run.pair) == sum(len(it.texts) * len(it.clips) for it in items)
    assert run.manifest.details["architecture"]["model_type"] == arch
    assert run.pair.groupby("item_id")["score"].nunique().gt(1).all(), "texts told apart"

    backend = load_backend(row.family, folder)
    it = items[0]
    frames = run_frames(backend, it.clips[0]).array
    stored = run.pair[(run.pair["item_id"] == it.item_id) & (run.pair["clip"] == 0)].sort_values("text")["score"]
    assert stored.tolist() == pytest.approx(_plain_similarities(backend, row, frames, it.texts, run), abs=1e-4)

    setup = run_setup(run.manifest)
    for item in items:
        found = probe(video=item.clips[0], texts=item.texts, models=models, **setup)
        expected = run.pair[(run.pair["item_id"] == item.item_id) & (run.pair["clip"] == 0)].sort_values("text")
        assert found.scores == pytest.approx(expected["score"].tolist(), rel=1e-4, abs=1e-6)


def _plain_similarities(backend, row, frames, texts, run) -> list[float]:
    """The similarities straight through the processor (every tensor it returns) and the model, one text at a time."""
    model, processor = backend.model, backend.processor
    with torch.no_grad():
        if row.family == "contrastive":
            images = processor(images=list(frames), return_tensors="pt")
            pooled = torch.nn.functional.normalize(model.get_image_features(**images).pooler_output, dim=-1)
            pooling = run.manifest.options["pooling"]
            assert pooling == "normalized_mean"  # VITATECS' default
            video = torch.nn.functional.normalize(pooled.mean(0), dim=-1)
            out = []
            for text in texts:
                tokens = processor(text=[text], return_tensors="pt", padding="max_length", truncation=True,
                                   max_length=model.config.text_config.max_position_embeddings)
                emb = model.get_text_features(**{k: v for k, v in tokens.items()
                                                 if k in ("input_ids", "attention_mask")}).pooler_output[0]
                out.append(float(torch.nn.functional.normalize(emb, dim=-1) @ video))
            return out
        if row.family == "xclip":
            inputs = processor(text=list(texts), videos=[list(frames)], return_tensors="pt", padding=True)
            return model(**inputs).logits_per_video[0].tolist()
        out = []
        for text in texts:
            inputs = processor(text=[text], videos=[frames], return_tensors="pt")
            if row.embeddings:
                found = model(**inputs)
                video, emb = (getattr(found, name) for name in row.embeddings)
            else:
                video = model.get_video_features(pixel_values_videos=inputs["pixel_values_videos"]).pooler_output
                emb = model.get_text_features(input_ids=inputs["input_ids"],
                                              attention_mask=inputs["attention_mask"]).pooler_output
            out.append(float(video.reshape(-1) @ emb.reshape(-1)))
        return out


def test_the_watch_on_transformers_warnings_sees_made_up_times(tiny, sample):
    """Without the true times, Qwen3-VL's processor makes them up and says so: the watch the tests above use hears
    it (so its silence there means something)."""
    from transformers import AutoProcessor

    processor = AutoProcessor.from_pretrained(tiny("qwen3_vl"))
    clip = sample["velociti"]
    frames = sample_frames(DataSource.of("velociti", clip.data_path, clip.video_root).load().items[0].clips[0],
                           policy("uniform", k=4))
    prompt = processor.apply_chat_template([{"role": "user", "content": [{"type": "video"}]}], tokenize=False)
    with Warnings() as logged:
        made_up = processor(text=[prompt], videos=[[frames.array]], do_sample_frames=False, return_tensors="pt")
    assert any("could not be inferred" in line for line in logged.lines)
    true = processor(text=[prompt], videos=[[frames.array]], video_metadata=[frames.video_metadata()],
                     do_sample_frames=False, return_tensors="pt")
    text = processor.tokenizer.decode(true["input_ids"][0])
    assert all(t in text for t in ARCHITECTURES["qwen3_vl"].time_texts(frames.video_metadata()))
    assert processor.tokenizer.decode(made_up["input_ids"][0]) != text


def test_the_true_times_count_from_the_clips_start_in_time_order_whatever_the_feeding_order(sample):
    from bench.items import Clip

    clip = DataSource.of("velociti", sample["velociti"].data_path, sample["velociti"].video_root).load().items[0]
    whole = clip.clips[0]
    window = Clip(whole.path, 1.0, 3.0)
    frames = sample_frames(window, policy("uniform", k=4))
    metadata = frames.video_metadata()
    assert metadata["frames_indices"][0] == 0 and metadata["duration"] == pytest.approx(2.0)
    assert metadata["frames_indices"] == [i - frames.window[0] for i in frames.indices]
    backwards = sample_frames(window, policy("uniform", k=4, order="reverse"))
    assert backwards.indices == frames.indices[::-1] and backwards.video_metadata() == metadata


def test_an_untested_architecture_gets_one_line_and_an_impossible_one_is_refused_before_loading(
        tiny, sample, tmp_path, monkeypatch, capsys):
    import transformers
    from transformers import LlavaConfig

    from bench.cli import main
    from bench.scoring import architectures

    s = sample["velociti"]
    command = ["score", "velociti", str(s.data_path), "--video-root", str(s.video_root), "--frames", FRAMES,
               "--limit", "1", "--quiet"]
    LlavaConfig().save_pretrained(tmp_path / "llava")  # image-only: transformers ships no video processor for it
    assert main([*command, "--model", str(tmp_path / "llava"), "--out", str(tmp_path / "r1")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'llava' takes no video in transformers" in err and "--frames none" in err

    monkeypatch.setattr(transformers, "__version__", "5.16.0")
    with pytest.raises(ValueError, match=r"^Molmo 2 \(molmo2\) needs transformers >= 5.23.0, this is 5.16.0: "):
        architectures.check_architecture("molmo2", "videollm", True)
    monkeypatch.undo()

    monkeypatch.setattr(architectures, "ARCHITECTURES",
                        {k: v for k, v in ARCHITECTURES.items() if k != "llava_onevision"})
    assert main([*command, "--model", tiny("llava_onevision"), "--out", str(tmp_path / "r2")]) == 0
    err = capsys.readouterr().err
    untested = [line for line in err.splitlines() if "untested" in line]
    assert untested == ["'llava_onevision' is not among the tested architectures (foilbench models): it goes "
                        "through the generic videollm path untested"]
    assert "KV-prefix reuse checked (model type 'llava_onevision' is not among the tested)" in err
    assert read_run(tmp_path / "r2").manifest.details["architecture"] == {"model_type": "llava_onevision",
                                                                         "tested": False}


def test_models_prints_the_table_and_json_with_every_field(capsys):
    from bench.cli import main

    assert main(["models", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    tested = [r for r in rows if r["tested"] and not r.get("remote")]
    assert {r["architecture"] for r in tested} == set(ARCHITECTURES)
    for r in rows:
        assert {"architecture", "family", "protocols", "tested", "transformers"} <= set(r)
    for r in tested:
        row = ARCHITECTURES[r["architecture"]]
        assert r["family"] == row.family and r["transformers"] == row.tested_versions() and r["clip"] == row.clip
        assert r["times"] == row.times and (r["family"] != "videollm" or r["kv"] == row.kv and "video" in r)
    assert main(["models"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:3] == ["architecture", "family", "protocols"]
    assert out[-2].startswith("14 Video-LLM and 6 encoder architectures tested")
    assert out[-1].startswith("api: any model an OpenAI-compatible endpoint serves") and "transformers serve" in out[-1]
    assert any(line.split()[:2] == ["(remote)", "api"] and f"transformers serve {TESTED_TRANSFORMERS[-1]}" in line
               for line in out)
    assert main(["models", "--all"]) == 0
    assert "llava " in capsys.readouterr().out  # an image-only model type transformers ships, untested


def test_the_models_page_holds_the_table_and_details_the_code_generates():
    from bench.commands.models import markdown_details, markdown_table

    page = (Path(__file__).resolve().parents[2] / "docs" / "models.md").read_text()
    for name, text in (("markdown_table", markdown_table(listing())), ("markdown_details", markdown_details())):
        start = page.index(f"<!-- generated by bench.commands.models.{name} -->\n") + len(
            f"<!-- generated by bench.commands.models.{name} -->\n")
        assert page[start:page.index("\n<!-- end of generated", start)] == text, name
