"""Feeding the model: frames decoded straight to the size the processor resizes to (a Fit), clips encoded by the
backend on the decode workers, the device-preprocessing path, many clips per image-tower call."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

from bench.cli import main
from bench.frames import Fit, decode, policy, sample_frames
from bench.loaders import load
from bench.registry import spec
from bench.scoring.backends.contrastive import ContrastiveBackend
from bench.scoring.backends.xclip import XCLIPBackend
from bench.scoring.families import load_backend
from bench.scoring.protocols import make_protocol
from bench.scoring.chunks import answer_items
from bench.store import read_run
from bench.videoio import write_video

FAMILIES = {"clip": "contrastive", "xclip": "xclip", "qwen2vl": "videollm", "llava_onevision": "videollm",
            "video_llava": "videollm"}
UNIFORM = policy("uniform", k=4)


def first_item(sample, name="velociti"):
    s = sample[name]
    return list(load(name, s.data_path, video_root=s.video_root))[0]


def pixels(backend, frames, **kwargs) -> torch.Tensor:
    part = getattr(backend.processor, backend.vision)
    if backend.vision == "image_processor":
        out = part(images=list(frames), return_tensors="pt", **kwargs)
    else:
        out = part(videos=[frames], return_tensors="pt", **kwargs)
    return next(v for k, v in out.items() if k.startswith("pixel_values"))


@pytest.mark.parametrize("name", FAMILIES)
def test_decoding_to_the_fit_leaves_the_processor_nothing_to_resize(sample, tiny, name):
    backend = load_backend(FAMILIES[name], tiny(name))
    fit = backend.frame_fit()
    assert isinstance(fit, Fit)
    clip = first_item(sample).clips[0]
    full = sample_frames(clip, UNIFORM).array
    fitted = sample_frames(clip, UNIFORM, size=fit).array
    assert fitted.shape[1:3][::-1] == fit.target(full.shape[2], full.shape[1], len(full)) != full.shape[1:3][::-1]
    assert torch.equal(pixels(backend, fitted), pixels(backend, fitted, do_resize=False))


def test_the_qwen2vl_fit_follows_smart_resize_and_the_reference_per_frame_cap():
    from transformers import Qwen2VLVideoProcessor

    frames = np.zeros((8, 720, 1280, 3), np.uint8)
    for cap, tokens in ((False, 0), (True, 1000)):
        processor = Qwen2VLVideoProcessor(min_pixels=56 * 56, max_pixels=448 * 448, max_video_tokens=1000,
                                          cap_pixels_per_frame=cap)
        grid = processor(videos=[frames], return_tensors="pt")["video_grid_thw"][0].tolist()
        fit = Fit("qwen2_vl", factor=28, min_pixels=56 * 56, max_pixels=448 * 448, video_tokens=tokens, temporal=2)
        assert fit.target(1280, 720, 8) == (grid[2] * 14, grid[1] * 14)
    assert Fit("qwen2_vl", factor=28, min_pixels=3136, max_pixels=200704, video_tokens=1000,
               temporal=2).target(1280, 720, 8) < Fit("qwen2_vl", factor=28, min_pixels=3136,
                                                       max_pixels=200704).target(1280, 720, 8)


@pytest.mark.parametrize("backend", ["decord", "pyav"])
def test_both_decoders_decode_to_a_fit_and_probe_each_file_once(tmp_path, monkeypatch, backend):
    path = str(write_video(tmp_path / "v.mp4", np.full((20, 96, 160, 3), 80, np.uint8), 10))
    probes = []
    original = decode.PROBES[backend]
    monkeypatch.setitem(decode.PROBES, backend, lambda p: probes.append(p) or original(p))
    fit = Fit("shortest_edge", edge=48)
    assert decode.read(path, [0, 5, 19], backend, fit).shape == (3, 48, 80, 3)
    assert decode.read(path, [1], backend, Fit("exact", width=64, height=32)).shape == (1, 32, 64, 3)
    assert decode.read(path, [2], backend, Fit("exact", width=160, height=96)).shape == (1, 96, 160, 3)
    assert decode.probe(path, backend) == decode.probe(path, backend) and len(probes) == 1


def test_runs_record_the_frame_size_and_refuse_to_resume_with_another(sample, tiny, tmp_path, capsys):
    s = sample["vitatecs"]
    args = ["score", "vitatecs", str(s.data_path), "--video-root", str(s.video_root), "--model", tiny("clip"),
            "--frames", "uniform:k=2", "--limit", "2", "--quiet", "--out"]
    assert main(args + [str(tmp_path / "auto")]) == 0
    assert read_run(tmp_path / "auto").manifest.frame_size == {"kind": "shortest_edge", "edge": 32, "temporal": 1}
    assert main(args + [str(tmp_path / "full"), "--size", "full"]) == 0
    assert read_run(tmp_path / "full").manifest.frame_size is None
    assert main(args + [str(tmp_path / "auto"), "--size", "full"]) == 2
    assert "differs in ['frame_size']" in capsys.readouterr().err


@pytest.mark.parametrize("name, backend, k", [("clip", ContrastiveBackend, 2), ("xclip", XCLIPBackend, 4)])
def test_clips_are_encoded_on_the_decode_workers_with_the_same_scores(sample, tiny, tmp_path, monkeypatch, name,
                                                                      backend, k):
    threads = []
    encode = backend.encode
    monkeypatch.setattr(backend, "encode",
                        lambda self, frames: threads.append(threading.current_thread().name) or encode(self, frames))
    s = sample["vitatecs"]
    assert main(["score", "vitatecs", str(s.data_path), "--video-root", str(s.video_root), "--model", tiny(name),
                 "--frames", f"uniform:k={k}", "--limit", "3", "--size", "full", "--workers", "2", "--quiet", "--out",
                 str(tmp_path / "run")]) == 0
    assert len(threads) >= 3 and all(name.startswith("frames") for name in threads)
    stored = read_run(tmp_path / "run").pair.sort_values(["item_id", "clip", "text"])
    items = list(load("vitatecs", s.data_path, video_root=s.video_root))[:3]
    adapter = load_backend(FAMILIES[name], tiny(name))
    direct = answer_items(adapter, make_protocol("similarity", spec("vitatecs")), items, policy("uniform", k=k))
    expected = sorted((r["item_id"], r["clip"], r["text"], r["score"]) for r in direct.pair)
    assert list(stored["score"]) == pytest.approx([r[3] for r in expected], abs=1e-6)


@pytest.mark.parametrize("name, protocol", [("clip", "similarity"), ("qwen2vl", "entail")])
def test_preprocessing_on_the_device_matches_the_cpu(sample, tiny, name, protocol):
    items = [first_item(sample, "vinoground")]
    found = {}
    for mode in ("cpu", "device"):
        adapter = load_backend(FAMILIES[name], tiny(name), preprocess=mode)
        assert adapter.describe()["preprocess"] == mode
        scored = answer_items(adapter, make_protocol(protocol, spec("vinoground")), items, UNIFORM, batch_size=4)
        found[mode] = [r["score"] for r in scored.pair]
    assert found["device"] == pytest.approx(found["cpu"], abs=1e-5)


def test_contrastive_embeds_the_frames_of_batch_size_clips_per_forward(sample, tiny):
    adapter = load_backend("contrastive", tiny("clip"))
    calls = []
    features = adapter.model.get_image_features
    adapter.model.get_image_features = lambda pixel_values: calls.append(len(pixel_values)) or features(
        pixel_values=pixel_values)
    s = sample["vitatecs"]
    items = list(load("vitatecs", s.data_path, video_root=s.video_root))[:5]
    clips = [sample_frames(it.clips[0], UNIFORM) for it in items]
    adapter.embed_clips([adapter.encode(c) for c in clips], batch_size=2)
    assert calls == [8, 8, 4]
