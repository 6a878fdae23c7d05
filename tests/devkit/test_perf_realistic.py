"""The GPU benchmarks' CPU-testable parts: realistic configs at the released sizes, their processors' real frame and
token counts with tiny overrides, the NVML busy sampler, ``perf score --realistic`` and ``perf pipeline`` end to end
with shrunken models."""

from __future__ import annotations

import json
import re
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from bench.cli import main
from bench.devkit.perf import gpu
from bench.devkit.perf.realistic import MODELS, TINY, build

# Parameters of the released checkpoints (config.json sizes; the weights' own counts).
RELEASED = {"clip-vit-l14": 427.6e6, "qwen2vl-2b": 2.209e9, "qwen2vl-7b": 8.291e9, "llava-ov-0.5b": 0.894e9}


@pytest.mark.parametrize("name", MODELS)
def test_realistic_configs_have_the_released_sizes(name):
    _, config, model_class = MODELS[name].parts({})
    with torch.device("meta"):
        model = model_class(config)
    assert sum(p.numel() for p in model.parameters()) == pytest.approx(RELEASED[name], rel=0.002)


def test_shrunken_qwen2vl_keeps_the_real_448px_video_grid_and_runs():
    built = build("qwen2vl-2b", TINY["qwen2vl-2b"])
    prompt = built.processor.apply_chat_template(
        [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": "Is it red?"}]}],
        add_generation_prompt=True, tokenize=False)
    frames = np.zeros((8, 448, 448, 3), np.uint8)
    inputs = built.processor(text=[prompt], videos=[frames], return_tensors="pt")
    assert inputs["video_grid_thw"].tolist() == [[4, 32, 32]]
    assert int((inputs["input_ids"] == built.model.config.video_token_id).sum()) == 1024
    assert tuple(inputs["pixel_values_videos"].shape) == (4096, 1176)
    with torch.no_grad():
        logits = built.model(**inputs, logits_to_keep=1).logits
    assert logits.shape[-1] == 151936


def test_shrunken_llava_onevision_and_clip_keep_their_real_frames():
    ov = build("llava-ov-0.5b", TINY["llava-ov-0.5b"])
    out = ov.processor.video_processor(videos=[np.zeros((8, 360, 640, 3), np.uint8)], return_tensors="pt")
    assert tuple(out["pixel_values_videos"].shape) == (1, 8, 3, 384, 384)
    clip = build("clip-vit-l14", TINY["clip-vit-l14"])
    pixels = clip.processor(images=list(np.zeros((8, 360, 640, 3), np.uint8)), return_tensors="pt")["pixel_values"]
    assert tuple(pixels.shape) == (8, 3, 224, 224)
    assert clip.model.get_image_features(pixel_values=pixels).pooler_output.shape[-1] == 768


def test_busy_sampler_says_why_it_cannot_measure(monkeypatch):
    with gpu.BusySampler("cpu") as busy:
        pass
    assert busy.fraction is None and "not CUDA" in busy.reason
    monkeypatch.setitem(sys.modules, "pynvml", None)
    with gpu.BusySampler("cuda") as busy:
        pass
    assert busy.fraction is None and "install nvidia-ml-py" in busy.reason


def test_busy_sampler_averages_nvml_utilisation(monkeypatch):
    readings = iter([40, 60, 80] + [80] * 1000)

    class NVMLError(Exception):
        pass

    def by_uuid(uuid):
        raise NVMLError(uuid)

    fake = types.SimpleNamespace(NVMLError=NVMLError, nvmlInit=lambda: None, nvmlDeviceGetHandleByUUID=by_uuid,
                                 nvmlDeviceGetHandleByIndex=lambda index: ("gpu", index),
                                 nvmlDeviceGetUtilizationRates=lambda h: types.SimpleNamespace(gpu=next(readings)))
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i: types.SimpleNamespace(uuid="abc"))
    with gpu.BusySampler("cuda:0", interval=0.01) as busy:
        while len(busy.samples) < 3:
            pass
    assert busy.reason is None and busy._handle == ("gpu", 0)
    assert busy.samples[:3] == [0.4, 0.6, 0.8] and 0.4 <= busy.fraction <= 0.8


@pytest.mark.slow
def test_perf_score_realistic_runs_end_to_end_with_shrunken_models(monkeypatch, tmp_path, capsys):
    from bench.devkit.perf import score

    measured = score.measure_realistic
    monkeypatch.setattr(score, "measure_realistic",
                        lambda *a, **k: measured(*a, overrides=TINY, root=tmp_path, **k))
    out_json = tmp_path / "perf.json"
    assert main(["perf", "score", "--realistic", "--device", "cpu", "--models", "qwen2vl-2b", "--copies", "1",
                 "--frames", "2", "--batch-size", "2,4", "--dtype", "bfloat16", "--fp32-check",
                 "-b", "reuse=auto", "--json", str(out_json)]) == 0
    out = capsys.readouterr()
    ratios = re.findall(r"qwen2vl-2b\s+entail\s+ours\s+[\d.]+ rows/s .* batch\s+(\d+) workers auto\s+ratio\s+([\d.]+)x",
                        out.out)
    assert [int(b) for b, _ in ratios] == [2, 4] and all(float(r) > 0 for _, r in ratios)
    assert "GPU busy fraction not measured: the device is cpu" in out.out and "slow off a GPU" in out.err
    assert re.search(r"qwen2vl-2b\s+built and saved in [\d.]+ s; naive loop next", out.out)
    assert "KV-reuse self-check: passed (" in out.out
    found = json.loads(out_json.read_text())
    assert [r["batch_size"] for r in found] == [2, 4]
    agreement = found[-1]["fp32"]
    assert agreement["pairs"] == found[-1]["rows"] and agreement["spearman"] > 0.9
    assert f"16-bit against float32 on {agreement['pairs']} pairs" in out.out


def test_perf_score_realistic_runs_both_pipelines_on_the_device_asked_for(monkeypatch, tmp_path):
    """The naive loop and our runner each get the device and dtype of the command (a busy-fraction wrapper once
    swallowed ``device``, so both ran on the CPU while the GPU stayed idle)."""
    from bench.devkit.perf import realistic, score, workload

    calls = []

    def recorder(name):
        def run(*args, device="cpu", dtype="auto", **kwargs):
            calls.append((name, device, dtype))
            return 5
        return run

    monkeypatch.setitem(sys.modules, "pynvml", None)
    monkeypatch.setattr(realistic, "save", lambda name, folder, *a: Path(folder))
    monkeypatch.setattr(workload, "velociti_at_scale", lambda *a: types.SimpleNamespace(benchmark="velociti"))
    monkeypatch.setattr(score, "naive", recorder("naive"))
    monkeypatch.setattr(score, "ours", recorder("ours"))
    monkeypatch.setattr(score, "_scores", lambda folder: (None, types.SimpleNamespace(details={})))
    found = score.measure_realistic(["clip-vit-l14"], device="cuda:3", dtype="float32", batch_sizes=(2, 4),
                                    root=tmp_path)
    assert calls == [("naive", "cuda:3", "float32"), ("ours", "cuda:3", "float32"), ("ours", "cuda:3", "float32")]
    assert [r["batch_size"] for r in found] == [2, 4] and all(r["rows"] == 5 for r in found)


def test_fp32_agreement_compares_the_same_pairs_and_the_preferred_text(tmp_path):
    from bench.devkit.perf import score

    def run(folder, scores):
        pair = pd.DataFrame({"item_id": ["a", "a", "b", "b"], "clip": 0, "text": [0, 1, 0, 1], "score": scores})
        return types.SimpleNamespace(pair=pair, manifest={"name": folder})

    runs = {"low": run("low", [0.9, 0.1, 0.4, 0.6]), "high": run("high", [0.8, 0.2, 0.7, 0.3])}
    original = score.read_run
    try:
        score.read_run = lambda folder: runs[str(folder)]
        found = score._fp32_agreement(Path("low"), Path("high"))
    finally:
        score.read_run = original
    assert found["pairs"] == 4 and found["same_top"] == 0.5
    assert found["max_abs_diff"] == pytest.approx(0.3)
    assert found["spearman"] == pytest.approx(1 - 6 * 2 / (4 * 15))  # rank differences 0, 0, 1, 1


def test_perf_pipeline_prints_per_core_rates_and_the_margin(capsys):
    assert main(["perf", "pipeline", "--models", "clip-vit-l14", "--copies", "1", "--frames", "2"]) == 0
    out = capsys.readouterr().out
    per_core = re.search(r"worker side :\s+([\d.]+) clips/s per core", out)
    assert per_core and float(per_core.group(1)) > 0
    assert "one H100 consumes ~470 clips/s with clip-vit-l14: margin" in out and "end to end" in out


@pytest.mark.parametrize("args, message", [(["--models", "gpt5"], "--models takes"),
                                           (["--video-size", "big"], "--video-size must look like")])
def test_bad_perf_options_are_one_line_errors(capsys, args, message):
    assert main(["perf", "pipeline", *args]) == 2
    assert message in capsys.readouterr().err
