"""``foilbench perf score``: the scoring pipeline against a naive loop, on the sample suite with tiny models.

The naive loop is what per-request harnesses do: for every request it decodes the clip's frames again and asks the
model at batch size 1, reusing nothing. Ours batches across items, decodes each clip once (prefetched on worker
threads) and embeds each distinct text once.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from bench.config import DataSource, ScoreConfig
from bench.frames import policy, sample_frames
from bench.store import read_run

BENCHMARKS = ("vitatecs", "velociti", "vinoground")
MODELS = {"clip": ("contrastive", "similarity"), "qwen2vl": ("videollm", "entail")}


def _sources(samples: dict) -> list[DataSource]:
    return [DataSource.of(name, samples[name].data_path, samples[name].video_root, samples[name].loader_options)
            for name in BENCHMARKS]


def naive(family: str, protocol_name: str, model: str, sources: list[DataSource], k: int) -> int:
    """Ask every request on its own: fresh decode, batch size 1, a fresh backend cache per request; the model is
    loaded once per benchmark, as our runner does."""
    from bench.registry import spec
    from bench.scoring.families import load_backend
    from bench.scoring.protocols import make_protocol

    frame_policy = policy("uniform", k=k)
    requests = 0
    for source in sources:
        backend = load_backend(family, model)
        protocol = make_protocol(protocol_name, spec(source.benchmark))
        for it in source.load():
            for request, _ in protocol.requests(it):
                backend.reset()
                ref = request.video
                frames = sample_frames(it.clips[ref[1][0]], frame_policy).array
                backend.answer([request], {ref: frames}, 1)
                requests += 1
    return requests


def ours(family: str, protocol: str, model: str, sources: list[DataSource], k: int, out: Path,
         batch_size: int) -> int:
    """The runner, as ``foilbench score`` runs it."""
    from bench.scoring.runner import score

    requests = 0
    for source in sources:
        run = score(ScoreConfig(source, model, family=family, protocol=protocol, frames=f"uniform:k={k}",
                                batch_size=batch_size, out=out / f"{source.benchmark}-{protocol}", progress=False))
        found = read_run(run)
        requests += len(found.pair) + len(found.choice)
    return requests


def measure(frames: int = 8, batch_size: int = 16) -> None:
    """Time both pipelines per tiny model and print requests per second and the ratio."""
    from bench.devkit.tiny import tiny_model
    from bench.devkit.world import ensure_sample

    with tempfile.TemporaryDirectory() as tmp:
        sources = _sources(ensure_sample(Path(tmp) / "sample"))
        print(f"sample suite ({', '.join(BENCHMARKS)}), {frames} frames per clip, batch size {batch_size}")
        for tiny_name, (family, protocol) in MODELS.items():
            model = str(tiny_model(tiny_name, Path(tmp) / "models"))
            start = time.perf_counter()
            n_naive = naive(family, protocol, model, sources, frames)
            t_naive = time.perf_counter() - start
            start = time.perf_counter()
            n_ours = ours(family, protocol, model, sources, frames, Path(tmp) / "runs", batch_size)
            t_ours = time.perf_counter() - start
            if n_ours != n_naive:
                raise RuntimeError(f"{protocol}: ours scored {n_ours} requests, naive {n_naive}")
            print(f"{protocol:12s} tiny {tiny_name:8s} naive {n_naive / t_naive:8.1f} req/s   ours "
                  f"{n_ours / t_ours:8.1f} req/s   ratio {t_naive / t_ours:5.2f}x")
