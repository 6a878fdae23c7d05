"""``foilbench perf score``: the scoring pipeline against a naive loop, on the sample suite with tiny models.

The naive loop is what per-request harnesses do: for every (clip, text) request it decodes the clip's frames again
and runs the model at batch size 1, reusing nothing. Ours batches across items, decodes each clip once (prefetched on
worker threads) and embeds each distinct text once.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from bench.frames import policy
from bench.loaders import load

BENCHMARKS = ("vitatecs", "velociti", "vinoground")
MODELS = {"contrastive": "clip", "entail": "qwen2vl"}


def naive(adapter_name: str, model: str, samples: dict, frame_policy) -> int:
    """Score every (clip, text) request on its own: fresh decode, batch size 1, a fresh adapter state per request;
    the model is loaded once per benchmark, as our runner does."""
    from bench.items import Item
    from bench.scoring.adapters import adapter_class
    from bench.scoring.run import DirectFrames

    requests = 0
    for name in BENCHMARKS:
        s = samples[name]
        adapter = adapter_class(adapter_name)(model, benchmark=name)
        for it in load(name, s.data_path, video_root=s.video_root):
            for c, clip in enumerate(it.clips):
                for t, text in enumerate(it.texts):
                    single = Item(it.benchmark, it.item_id, it.subset, (clip,), (text,), ((0,),))
                    if hasattr(adapter, "_texts"):
                        adapter._texts.clear()
                    adapter.score([single], DirectFrames(frame_policy), 1)
                    requests += 1
    return requests


def ours(adapter_name: str, model: str, samples: dict, frame_policy, out: Path, batch_size: int) -> int:
    """The runner, as ``foilbench score`` runs it."""
    from bench.runstore import read_run
    from bench.scoring.run import score

    requests = 0
    for name in BENCHMARKS:
        s = samples[name]
        run = score(name, s.data_path, model, adapter_name, video_root=s.video_root, frame_policy=frame_policy,
                    out=out / f"{name}-{adapter_name}", batch_size=batch_size, progress=False)
        requests += len(read_run(run).pair)
    return requests


def run(args: argparse.Namespace) -> int:
    """Time both pipelines per adapter and print requests per second and the ratio."""
    from bench.devkit.world import ensure_sample
    from bench.devkit.tiny import tiny_model

    frame_policy = policy("uniform", k=args.frames)
    with tempfile.TemporaryDirectory() as tmp:
        samples = ensure_sample(Path(tmp) / "sample")
        print(f"sample suite ({', '.join(BENCHMARKS)}), {args.frames} frames per clip, batch size {args.batch_size}")
        for adapter_name, tiny_name in MODELS.items():
            model = str(tiny_model(tiny_name, Path(tmp) / "models"))
            start = time.perf_counter()
            n_naive = naive(adapter_name, model, samples, frame_policy)
            t_naive = time.perf_counter() - start
            start = time.perf_counter()
            n_ours = ours(adapter_name, model, samples, frame_policy, Path(tmp) / "runs", args.batch_size)
            t_ours = time.perf_counter() - start
            if n_ours != n_naive:
                raise RuntimeError(f"{adapter_name}: ours scored {n_ours} requests, naive {n_naive}")
            print(f"{adapter_name:12s} tiny {tiny_name:8s} naive {n_naive / t_naive:8.1f} req/s   ours "
                  f"{n_ours / t_ours:8.1f} req/s   ratio {t_naive / t_ours:5.2f}x")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``perf score``."""
    parser = subparsers.add_parser(
        "score", help="scoring throughput against a naive per-request loop",
        description="Score the sample suite with tiny offline models through our runner and through a naive loop "
        "(decode per request, batch size 1, no reuse) and print requests per second and their ratio.",
        epilog="example:\n  foilbench perf score --frames 8 --batch-size 16",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=8, help="frames per clip (default 8)")
    parser.add_argument("--batch-size", type=int, default=16, help="our batch size (default 16)")
    parser.set_defaults(func=run)
