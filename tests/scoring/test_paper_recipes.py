"""The papers' scoring recipes: contrastive pooling over frames per benchmark (recorded in the manifest) and
lmms-eval's VITATECS option style."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from bench.config import DataSource, ScoreConfig
from bench.frames import policy, sample_frames
from bench.loaders import load
from bench.registry import spec
from bench.scoring import prompts
from bench.scoring.families import load_backend
from bench.scoring.protocols import make_protocol
from bench.scoring.chunks import answer_items
from bench.scoring.runner import score


def test_vitatecs_options_get_one_period():
    style = prompts.OPTION_STYLE["vitatecs-mc"]
    assert style("a dog runs") == "A dog runs."
    assert style("a dog runs.") == "A dog runs."


def test_no_vitatecs_option_ends_with_two_periods(realdata):
    items = load("vitatecs", realdata / "vitatecs").items
    texts = [t for it in items for t in it.texts]
    assert any(t.endswith(".") for t in texts)  # the released files have such captions
    style = prompts.OPTION_STYLE["vitatecs-mc"]
    assert [t for t in texts if style(t).endswith("..") and not t.endswith("..")] == []


def _direct(backend, item, frames, pooling):
    model, proc = backend.model, backend.processor
    with torch.no_grad():
        text = proc(text=list(item.texts), return_tensors="pt", padding="max_length", max_length=77)
        t = torch.nn.functional.normalize(model.get_text_features(
            input_ids=text["input_ids"], attention_mask=text["attention_mask"]).pooler_output, dim=-1)
        images = proc(images=list(sample_frames(item.clips[0], frames).array), return_tensors="pt")["pixel_values"]
        f = model.get_image_features(pixel_values=images).pooler_output
        if pooling == "raw_mean":
            return (torch.nn.functional.normalize(f.mean(0), dim=-1) @ t.T).numpy()
        logits = model.logit_scale.exp() * torch.nn.functional.normalize(f, dim=-1) @ t.T
        return logits.softmax(dim=1).mean(0).numpy()


@pytest.mark.parametrize("pooling", ["raw_mean", "frame_softmax"])
def test_contrastive_pooling_matches_the_papers_code(sample, tiny, pooling):
    s = sample["vilma"]
    items = [it for it in load("vilma", s.data_path, video_root=s.video_root).items if len(it.texts) == 3][:1]
    backend = load_backend("contrastive", tiny("clip"), pooling=pooling)
    frames = policy("uniform", k=3)
    scored = answer_items(backend, make_protocol("similarity", spec("vilma")), items, frames)
    got = np.array([r["score"] for r in sorted(scored.pair, key=lambda r: r["text"])])
    assert got == pytest.approx(_direct(backend, items[0], frames, pooling), abs=1e-5)
    if pooling == "frame_softmax":
        assert got.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="pooling must be one of"):
        load_backend("contrastive", tiny("clip"), pooling="max")


def test_each_benchmark_default_pooling_is_recorded_and_overridable(sample, tiny, tmp_path):
    s = sample["velociti"]
    source = DataSource.of("velociti", s.data_path, s.video_root, s.loader_options)

    def run(options, out):
        folder = score(ScoreConfig(source, tiny("clip"), frame_policy="uniform:k=2", limit=1, out=tmp_path / out,
                                   progress=False, options=options))
        return json.loads((folder / "manifest.json").read_text())

    default = run({}, "default")
    assert spec("velociti").backend_options["contrastive"]["pooling"] == "raw_mean"
    assert default["options"] == {"pooling": "raw_mean"} and default["details"]["pooling"] == "raw_mean"
    chosen = run({"pooling": "frame_softmax"}, "chosen")
    assert chosen["options"] == {"pooling": "frame_softmax"} and chosen["details"]["pooling"] == "frame_softmax"
