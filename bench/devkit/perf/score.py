"""``foilbench perf score``: the scoring pipeline against a naive loop.

The naive loop is what per-request harnesses do: for every request it decodes the clip's frames again and asks the
model at batch size 1, reusing nothing. Ours batches across items, decodes each clip once (prefetched on worker
threads, straight to the processor's size, encoded there) and embeds each distinct text once (Video-LLMs: each video
once, its shared prompt prefix once).

By default both run on the sample suite with tiny models. ``--realistic`` runs random-initialised models at the
released sizes (:mod:`bench.devkit.perf.realistic`) on the VELOCITI-format workload at a real resolution, created
directly on the device, saved and loaded by path as a user's model would be, and also prints the GPU busy fraction
of each pipeline (NVML). Times include loading the model.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import pandas as pd

from bench.config import DataSource, Manifest, ScoreConfig
from bench.devkit.perf.gpu import BusySampler
from bench.frames import policy, sample_frames
from bench.store import read_run

BENCHMARKS = ("vitatecs", "velociti", "vinoground")
MODELS = {"clip": ("contrastive", "similarity"), "qwen2vl": ("videollm", "entail")}


def _sources(samples: dict) -> list[DataSource]:
    return [DataSource.of(name, samples[name].data_path, samples[name].video_root, samples[name].loader_options)
            for name in BENCHMARKS]


def naive(family: str, protocol_name: str, model: str, sources: list[DataSource], k: int, device: str = "cpu",
          dtype: str = "auto") -> int:
    """Ask every request on its own: fresh decode, batch size 1, a fresh backend cache per request, whole requests
    (no KV reuse), the processor on the CPU; the model is loaded once per benchmark, as our runner does."""
    from bench.registry import spec
    from bench.scoring.families import load_backend
    from bench.scoring.protocols import make_protocol

    frame_policy = policy("uniform", k=k)
    options = {"reuse": "none"} if family == "videollm" else {}
    if family in ("videollm", "contrastive"):
        options["preprocess"] = "cpu"
    requests = 0
    for source in sources:
        backend = load_backend(family, model, device=device, dtype=dtype, **options)
        protocol = make_protocol(protocol_name, spec(source.benchmark))
        for it in source.load():
            for request, _ in protocol.requests(it):
                backend.reset()
                ref = request.video
                frames = sample_frames(it.clips[ref[1][0]], frame_policy)
                backend.answer([request], {ref: frames}, 1)
                requests += 1
    return requests


def ours(family: str, protocol: str, model: str, sources: list[DataSource], k: int, out: Path,
         batch_size: int, device: str = "cpu", dtype: str = "auto", workers: int | None = None,
         options: dict | None = None) -> int:
    """The runner, as ``foilbench score`` runs it (``workers`` None: one decode worker per core; ``options``: the
    backend options of ``-b KEY=VALUE``)."""
    from bench.scoring.runner import score

    requests = 0
    for source in sources:
        run = score(ScoreConfig(source, model, family=family, protocol=protocol, frame_policy=f"uniform:k={k}",
                                batch_size=batch_size, device=device, dtype=dtype, workers=workers,
                                options=dict(options or {}), out=out / f"{source.benchmark}-{protocol}",
                                progress=False))
        found = read_run(run)
        requests += len(found.pair) + len(found.choice)
    return requests


def measure(frame_count: int = 8, batch_size: int = 16) -> None:
    """Time both pipelines per tiny model and print requests per second and the ratio."""
    from bench.devkit.tiny_models import tiny_model
    from bench.devkit.world import ensure_sample

    with tempfile.TemporaryDirectory() as tmp:
        sources = _sources(ensure_sample(Path(tmp) / "sample"))
        print(f"sample suite ({', '.join(BENCHMARKS)}), {frame_count} frames per clip, batch size {batch_size}")
        for tiny_name, (family, protocol) in MODELS.items():
            model = str(tiny_model(tiny_name, Path(tmp) / "models"))
            start = time.perf_counter()
            n_naive = naive(family, protocol, model, sources, frame_count)
            t_naive = time.perf_counter() - start
            start = time.perf_counter()
            n_ours = ours(family, protocol, model, sources, frame_count, Path(tmp) / "runs", batch_size)
            t_ours = time.perf_counter() - start
            if n_ours != n_naive:
                raise RuntimeError(f"{protocol}: ours scored {n_ours} requests, naive {n_naive}")
            print(f"{protocol:12s} tiny {tiny_name:8s} naive {n_naive / t_naive:8.1f} req/s   ours "
                  f"{n_ours / t_ours:8.1f} req/s   ratio {t_naive / t_ours:5.2f}x")


def _timed(fn, *args, **kwargs) -> tuple[int, float, BusySampler]:
    """``fn(*args, **kwargs)``'s result, its seconds, and the busy fraction of the device it was given."""
    with BusySampler(kwargs.get("device", "cpu")) as busy:
        start = time.perf_counter()
        n = fn(*args, **kwargs)
        seconds = time.perf_counter() - start
    return n, seconds, busy


def _busy(sampler: BusySampler) -> str:
    return "   -" if sampler.fraction is None else f"{sampler.fraction:4.0%}"


def _scores(folder: Path) -> tuple[pd.Series, Manifest]:
    """A run's pair scores indexed by (item, clip, text), and its manifest."""
    found = read_run(folder)
    return found.pair.set_index(["item_id", "clip", "text"])["score"].sort_index(), found.manifest


def _fp32_agreement(low: Path, high: Path) -> dict:
    """How far a 16-bit run's scores agree with the same model's float32 run: Spearman's rank correlation, the
    largest absolute difference, and how often the item's preferred text (the top score per item and clip) agrees."""
    from scipy.stats import spearmanr

    a, _ = _scores(low)
    b, _ = _scores(high)
    a, b = a.align(b, join="inner")
    same = _preferred(a) == _preferred(b)
    return {"pairs": len(a), "spearman": float(spearmanr(a, b).statistic),
            "max_abs_diff": float((a - b).abs().max()), "same_top": float(same.mean())}


def _preferred(scores: pd.Series) -> pd.Series:
    """The (item, clip, text) key of each item and clip's highest score."""
    return scores.groupby(level=["item_id", "clip"]).idxmax()


def measure_realistic(models: list[str], device: str = "cuda", dtype: str = "auto", frame_count: int = 8,
                      batch_sizes: tuple[int, ...] = (16,), copies: int = 20, size: tuple[int, int] = (448, 448),
                      workers: tuple[int | None, ...] = (None,), fp32_check: bool = False,
                      options: dict | None = None, overrides: dict | None = None,
                      root: str | Path | None = None) -> list[dict]:
    """Score the workload with each realistic model through our runner (once per batch size and worker count) and
    the naive loop on ``device``; print rows per second, each setting's ratio against the naive loop (measured once
    per model, in the same process) and each pipeline's GPU busy fraction; for Video-LLMs the KV-reuse self-check
    the runner recorded; with ``fp32_check`` the first setting again in float32 and its rank agreement with the
    16-bit scores. ``options`` are backend options for our runner. ``overrides`` (name -> config overrides) shrink
    the models for tests."""
    from bench.devkit.perf.realistic import MODELS, save
    from bench.devkit.perf.workload import velociti_at_scale
    from bench.scoring.backends.base import torch_dtype

    found = []
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        source = velociti_at_scale(Path(tmp) / "workload", copies, size)
        print(f"workload: VELOCITI format, {copies} copies ({size[0]}x{size[1]} video), {frame_count} frames per clip, "
              f"{device} ({dtype}); times include loading the model", flush=True)
        for name in models:
            model = MODELS[name]
            start = time.perf_counter()
            folder = str(save(name, Path(tmp) / "models" / name, device, torch_dtype(dtype, device),
                              (overrides or {}).get(name)))
            print(f"{name:14s} built and saved in {time.perf_counter() - start:.1f} s; naive loop next", flush=True)
            n_naive, t_naive, busy_naive = _timed(naive, model.family, model.protocol, folder, [source], frame_count,
                                                  device=device, dtype=dtype)
            print(f"{name:14s} {model.protocol:10s} naive {n_naive / t_naive:7.1f} rows/s "
                  f"(GPU busy {_busy(busy_naive)})", flush=True)
            first = None
            for batch_size in batch_sizes:
                for count in workers:
                    runs = Path(tmp) / "runs" / f"{name}-b{batch_size}-w{count}"
                    n_ours, t_ours, busy = _timed(ours, model.family, model.protocol, folder, [source], frame_count,
                                                  runs, batch_size, device=device, dtype=dtype, workers=count,
                                                  options=options)
                    if n_ours != n_naive:
                        raise RuntimeError(f"{name}: ours scored {n_ours} requests, naive {n_naive}")
                    first = first or runs / f"{source.benchmark}-{model.protocol}"
                    result = {"model": name, "protocol": model.protocol, "batch_size": batch_size,
                              "workers": count or "auto", "rows": n_ours, "ours": n_ours / t_ours,
                              "naive": n_naive / t_naive, "ratio": t_naive / t_ours, "busy_ours": busy.fraction,
                              "busy_naive": busy_naive.fraction}
                    found.append(result)
                    print(f"{name:14s} {model.protocol:10s} ours {result['ours']:7.1f} rows/s (GPU busy "
                          f"{_busy(busy)}) batch {batch_size:3d} workers {result['workers']!s:4s}  ratio "
                          f"{result['ratio']:5.2f}x", flush=True)
                    if busy.reason:
                        print(f"  {busy.reason}")
            check = _scores(first)[1].details.get("reuse_check")
            if check:
                rest = ", ".join(f"{k} {v}" for k, v in check.items() if k != "status")
                print(f"{name:14s} KV-reuse self-check: {check['status']} ({rest})", flush=True)
            if fp32_check and torch_dtype(dtype, device) != torch_dtype("float32", device):
                high = Path(tmp) / "runs" / f"{name}-fp32"
                ours(model.family, model.protocol, folder, [source], frame_count, high, batch_sizes[0], device=device,
                     dtype="float32", workers=workers[0], options=options)
                agreement = _fp32_agreement(first, high / f"{source.benchmark}-{model.protocol}")
                found[-1]["fp32"] = agreement
                print(f"{name:14s} 16-bit against float32 on {agreement['pairs']} pairs: Spearman "
                      f"{agreement['spearman']:.4f}, max |diff| {agreement['max_abs_diff']:.4f}, same preferred "
                      f"text {agreement['same_top']:.1%}", flush=True)
    return found
