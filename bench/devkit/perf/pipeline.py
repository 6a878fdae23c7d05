"""``foilbench perf pipeline``: can the CPU side feed a GPU? The real processors at real sizes, a zero-cost model.

For each model (processor and token ids of :mod:`bench.devkit.perf.realistic`; a model that answers zeros at once),
on the VELOCITI-format workload at a real resolution:

- the worker side, on one core: decode each clip straight to the processor's size and encode it (the processor),
  as the runner's decode workers do: clips per second per core, split into decoding and processing;
- the main thread: everything the runner does per request around the model (chat template, tokens, positions,
  padding, copies), with the clips already encoded: clips per second on that one thread;
- what 16 cores (15 workers and the main thread) can feed, against what one H100 can consume (the issue's estimate
  from measured GPU busy fractions), as a margin;
- the runner end to end (store included) on this machine's cores, with the zero-cost model.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import torch

from bench.devkit.perf.realistic import MODELS, TINY, build
from bench.devkit.perf.workload import velociti_at_scale
from bench.devkit.threads import torch_threads
from bench.frames import policy, sample_frames
from bench.devkit.perf.prebuilt import Prebuilt

# What one H100 consumes (rows or clips per second), estimated from the busy fractions measured in issue #14.
TARGETS: dict[str, tuple[float, str]] = {"clip-vit-l14": (470.0, "clips"), "qwen2vl-2b": (60.0, "rows"),
                                         "qwen2vl-7b": (33.0, "rows")}
GPU_CORES = 16


class ZeroContrastive(torch.nn.Module):
    """A contrastive model that answers at once: its embeddings are ones."""

    def __init__(self, config):
        super().__init__()
        self.config = config

    def get_image_features(self, pixel_values):
        return torch.ones(len(pixel_values), self.config.projection_dim)

    def get_text_features(self, input_ids, attention_mask=None):
        return torch.ones(len(input_ids), self.config.projection_dim)


class ZeroVideoLLM(torch.nn.Module):
    """A Video-LLM that answers at once (zero logits, an empty-width KV cache), keeping the real model's config and
    position index (Qwen2-VL's M-RoPE) from a tiny instance of its class."""

    def __init__(self, tiny, vocab: int):
        super().__init__()
        self.config = tiny.config
        self.model = tiny.model
        self.vocab = vocab

    def forward(self, input_ids, use_cache=False, **kwargs):
        from transformers import DynamicCache

        rows, width = input_ids.shape
        cache = DynamicCache([(torch.zeros(rows, 1, width, 1), torch.zeros(rows, 1, width, 1))]) if use_cache else None
        return SimpleNamespace(logits=torch.zeros(rows, 1, self.vocab), past_key_values=cache)


def zero_cost(name: str) -> Prebuilt:
    """The real processor of ``name`` with a zero-cost model."""
    tiny = build(name, TINY[name])
    if MODELS[name].family == "contrastive":
        model = ZeroContrastive(tiny.model.config)
    else:
        model = ZeroVideoLLM(tiny.model, len(tiny.processor.tokenizer))
    return Prebuilt(f"{name}-zero-cost", tiny.processor, model)


def _worker_side(backend, clips, frame_policy, fit) -> tuple[dict, float, float]:
    """Decode and encode every clip on this thread with one torch thread: (encoded, decode s, encode s)."""
    encoded, decoding, encoding = {}, 0.0, 0.0
    with torch_threads(1):
        for key, clip in clips:
            start = time.perf_counter()
            frames = sample_frames(clip, frame_policy, size=fit)
            middle = time.perf_counter()
            encoded[key] = backend.encode(frames)
            decoding, encoding = decoding + middle - start, encoding + time.perf_counter() - middle
    return encoded, decoding, encoding


def _main_side(backend, protocol, items, encoded, batch_size: int,
               chunk_size: int = 32) -> tuple[int, float, float]:
    """Every request through the backend with the clips already encoded, chunk by chunk: (requests, seconds, of
    which seconds concatenating pixel tensors on the host: on a GPU that is a non-blocking copy per clip and a
    concatenation on the device, so it is not counted against the main thread there)."""
    requests, seconds, concat = 0, 0.0, [0.0]
    concat_on_device = backend.concat_on_device

    def timed(tensors):
        begin = time.perf_counter()
        try:
            return concat_on_device(tensors)
        finally:
            concat[0] += time.perf_counter() - begin

    backend.concat_on_device = timed
    for start in range(0, len(items), chunk_size):
        planned = [r for it in items[start:start + chunk_size] for r, _ in protocol.requests(it)]
        videos = {r.video: encoded[(r.video[0], r.video[1][0])] for r in planned}
        begin = time.perf_counter()
        backend.answer(planned, videos, batch_size)
        seconds += time.perf_counter() - begin
        requests += len(planned)
    del backend.concat_on_device  # the class's own method again
    return requests, seconds, concat[0]


def measure(models: list[str], copies: int = 4, size: tuple[int, int] = (448, 448), frame_count: int = 8,
            batch_size: int = 16, workers: int | None = None) -> list[dict]:
    """Measure each model's CPU side and print one paragraph per model; returns the numbers."""
    from bench.config import ScoreConfig
    from bench.registry import spec
    from bench.scoring.families import load_backend
    from bench.scoring.protocols import make_protocol
    from bench.scoring.devices import decode_workers
    from bench.scoring.runner import score

    frame_policy = policy("uniform", k=frame_count)
    found = []
    with tempfile.TemporaryDirectory() as tmp:
        source = velociti_at_scale(Path(tmp) / "workload", copies, size)
        items = source.load().items
        clips = [((it.item_id, c), clip) for it in items for c, clip in enumerate(it.clips)]
        cores = decode_workers(workers)
        print(f"workload: VELOCITI format, {len(items)} items, {len(clips)} clips of {size[0]}x{size[1]} video, "
              f"{frame_count} frames each; zero-cost models; this machine: {decode_workers(None)} cores, "
              f"{cores} decode workers end to end")
        for name in models:
            model = MODELS[name]
            zero = zero_cost(name)
            backend = load_backend(model.family, zero, device="cpu", dtype="float32")
            protocol = make_protocol(model.protocol, spec("velociti"))
            backend.prepare(protocol.answers)
            fit = backend.frame_fit()
            encoded, decoding, encoding = _worker_side(backend, clips, frame_policy, fit)
            requests, main, concat = _main_side(backend, protocol, items, encoded, batch_size)
            start = time.perf_counter()
            score(ScoreConfig(source, zero, family=model.family, protocol=model.protocol,
                              frame_policy=f"uniform:k={frame_count}", batch_size=batch_size, device="cpu",
                              dtype="float32", workers=workers, out=Path(tmp) / f"run-{name}", progress=False))
            end_to_end = time.perf_counter() - start
            n = len(clips)
            result = {"model": name, "clips": n, "rows": requests, "per_core": n / (decoding + encoding),
                      "decode_share": decoding / (decoding + encoding), "main": n / (main - concat),
                      "host_concat": concat / n,
                      "end_to_end": n / end_to_end, "fit": fit.describe() if fit else None}
            result["feeds"] = min((GPU_CORES - 1) * result["per_core"], result["main"])
            found.append(result)
            _report(result)
    return found


def _report(r: dict) -> None:
    rows_per_clip = r["rows"] / r["clips"]
    print(f"\n{r['model']}: frames decoded to {r['fit']}, {rows_per_clip:.1f} rows per clip")
    print(f"  worker side : {r['per_core']:7.1f} clips/s per core ({r['decode_share']:.0%} decoding, "
          f"{1 - r['decode_share']:.0%} processor)")
    print(f"  main thread : {r['main']:7.1f} clips/s ({r['main'] * rows_per_clip:.1f} rows/s; not counted: "
          f"{1000 * r['host_concat']:.1f} ms per clip concatenating pixels on the host, done on the GPU there)")
    print(f"  {GPU_CORES} cores feed : {r['feeds']:7.1f} clips/s = {r['feeds'] * rows_per_clip:.1f} rows/s "
          f"(min of {GPU_CORES - 1} workers and the main thread)")
    names = [r["model"]] + (["qwen2vl-7b"] if r["model"] == "qwen2vl-2b" else [])
    for name in names:
        if name in TARGETS:
            target, unit = TARGETS[name]
            fed = r["feeds"] * (rows_per_clip if unit == "rows" else 1.0)
            print(f"  target      : one H100 consumes ~{target:g} {unit}/s with {name}: margin {fed / target:.1f}x")
    print(f"  end to end  : {r['end_to_end']:7.1f} clips/s on this machine (runner and store, zero-cost model)")
