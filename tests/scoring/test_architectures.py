"""One test per architecture of the table (:mod:`bench.scoring.architectures`): a tiny random instance built offline
with its real processor classes, scored on the generated world through the runner (Yes/No and A/B for a Video-LLM,
similarity for an encoder), its stored numbers recomputed with plain transformers on the same frames (with their true
times) and prompt, ``probe`` giving the run's number, KV reuse against whole requests, and, for a model that reads
its frames' times, those times read back from the prompt or the positions the model is given. CI runs this module at
both ends of the supported transformers range; an architecture the installed transformers lacks is skipped, named.
"""

from __future__ import annotations

import logging
from datetime import timedelta

import numpy as np
import pytest
import torch
from packaging.version import Version

from bench.config import DataSource, ScoreConfig
from bench.devkit.tiny import tiny_architectures
from bench.frames import policy, sample_frames
from bench.scoring.architectures import ARCHITECTURES, listing
from bench.scoring.backends import videollm
from bench.scoring.chunks import frame_size
from bench.scoring.families import load_backend
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
