"""``foilbench perf``: benchmark commands that print speed ratios against naive baselines (measurements in
:mod:`bench.devkit.perf`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench.commands.options import add_command, parse_options


def _frames(args: argparse.Namespace) -> int:
    from bench.devkit.perf.frames import measure

    measure(args.frames, args.copies, args.workers)
    return 0


def _size(text: str) -> tuple[int, int]:
    width, _, height = text.lower().partition("x")
    try:
        found = int(width), int(height)
    except ValueError:
        raise ValueError(f"--video-size must look like 448x448, got {text!r}") from None
    if min(found) < 16 or any(v % 2 for v in found):
        raise ValueError(f"--video-size must be even and at least 16x16, got {text!r}")
    return found


def _models(text: str, choices) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in choices]
    if unknown or not names:
        raise ValueError(f"--models takes a comma-separated list of {', '.join(choices)}; got {text!r}")
    return names


def _score(args: argparse.Namespace) -> int:
    from bench.devkit.perf.realistic import MODELS
    from bench.devkit.perf.score import measure, measure_realistic
    from bench.scoring.devices import resolve_device

    batch_sizes = _numbers(args.batch_size, "--batch-size")
    if args.ranks:
        from bench.devkit.perf.ranks import measure as ranks

        ranks(args.ranks, args.items, args.frames, batch_sizes[0])
        return 0
    if not args.realistic:
        measure(args.frames, batch_sizes[0])
        return 0
    device = resolve_device(args.device)
    if not device.startswith("cuda"):
        print(f"note: --realistic on {device}: models at their released sizes are slow off a GPU", file=sys.stderr)
    found = measure_realistic(_models(args.models, MODELS), device, args.dtype, args.frames,
                              batch_sizes, args.copies, _size(args.video_size),
                              _workers(args.workers), args.fp32_check, parse_options(args.backend_option))
    if args.json:
        Path(args.json).write_text(json.dumps(found, indent=1))
    return 0


def _numbers(text: str, option: str) -> tuple[int, ...]:
    try:
        found = tuple(int(n) for n in text.split(","))
    except ValueError:
        found = ()
    if not found or min(found) < 1:
        raise ValueError(f"{option} takes positive integers separated by commas, got {text!r}")
    return found


def _workers(text: str) -> tuple[int | None, ...]:
    return tuple(None if n.strip() == "auto" else _numbers(n, "--workers")[0] for n in text.split(","))


def _pipeline(args: argparse.Namespace) -> int:
    from bench.devkit.perf.pipeline import measure
    from bench.devkit.perf.realistic import MODELS

    workers = None if args.workers == "auto" else int(args.workers)
    measure(_models(args.models, MODELS), args.copies, _size(args.video_size), args.frames, args.batch_size, workers)
    return 0


def _store(args: argparse.Namespace) -> int:
    from bench.devkit.perf.store import measure

    measure(args.items, args.chunk_size)
    return 0


def _probe(args: argparse.Namespace) -> int:
    from bench.devkit.perf.probe import measure
    from bench.paths import data_home
    from bench.scoring.devices import resolve_device

    home = Path(args.home).expanduser().resolve() if args.home else data_home()
    measure(home, args.size, args.benchmark, resolve_device(args.device))
    return 0


def _build(args: argparse.Namespace) -> int:
    from bench.devkit.perf.build import measure
    from bench.devkit.train.build import MODELS, shrunk

    if args.model not in MODELS:
        raise ValueError(f"--model must be one of {', '.join(MODELS)}; got {args.model!r}")
    measure(args.model, shrunk(args.scale), args.threads)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``perf`` command group."""
    parser = add_command(subparsers, "perf", "speed benchmarks that print ratios against naive baselines",
                         "Speed benchmarks; each prints its throughput and the ratio against a naive baseline.",
                         "examples:\n  foilbench perf frames\n  foilbench perf score\n  foilbench perf pipeline\n"
                         "  foilbench perf score --realistic --device cuda\n  foilbench perf probe\n"
                         "  foilbench perf build")
    sub = parser.add_subparsers(dest="benchmark", metavar="BENCHMARK", required=True)
    frames = add_command(
        sub, "frames", "frame decoding throughput against a naive baseline",
        "Decode generated videos of several sizes with our pipeline (one batched read per video, prefetch threads, "
        "frame cache) and with a naive loop (open and seek per frame), and print frames per second, their ratio, "
        "and the cache's speed-up on a second pass.", "example:\n  foilbench perf frames --frames 16 --copies 4")
    frames.add_argument("--frames", type=int, default=16, help="frames sampled per video (default 16)")
    frames.add_argument("--copies", type=int, default=3, help="videos of each size (default 3)")
    frames.add_argument("--workers", type=int, default=2, help="decoding threads (default 2)")
    frames.set_defaults(func=_frames)
    score = add_command(
        sub, "score", "scoring throughput against a naive per-request loop",
        "Score the sample suite with tiny offline models through our runner and through a naive loop (decode per "
        "request, batch size 1, no reuse) and print requests per second and their ratio. With --realistic: "
        "random-initialised models at their released sizes (CLIP ViT-L/14, Qwen2-VL-2B, LLaVA-OneVision-0.5B; "
        "configs written out in code, no hub) on a VELOCITI-format workload at a real resolution, with each "
        "pipeline's GPU busy fraction sampled through NVML (nvidia-ml-py).",
        "examples:\n  foilbench perf score --frames 8 --batch-size 16\n"
        "  foilbench perf score --realistic --device cuda --copies 40")
    score.add_argument("--frames", type=int, default=8, help="frames per clip (default 8)")
    score.add_argument("--batch-size", default="16",
                       help="our batch size (default 16); --realistic: several, comma-separated, each timed")
    score.add_argument("--workers", default="auto",
                       help="--realistic: decode workers, comma-separated, each timed (default auto: one per core)")
    score.add_argument("--fp32-check", action="store_true",
                       help="--realistic: score again in float32 and print the rank agreement with 16-bit scores")
    score.add_argument("-b", "--backend-option", action="append", default=[], metavar="KEY=VALUE",
                       help="--realistic: a backend option for our runner, as in foilbench score (repeatable)")
    score.add_argument("--json", metavar="FILE", help="--realistic: also write the measurements to FILE as JSON")
    score.add_argument("--realistic", action="store_true", help="models at their released sizes (for a GPU)")
    score.add_argument("--device", default="auto", help="--realistic: auto, cuda, cuda:1, cpu (default auto)")
    score.add_argument("--dtype", default="auto", choices=["auto", "float32", "float16", "bfloat16"],
                       help="--realistic: weights' dtype (default auto: bfloat16 on a GPU that has it)")
    score.add_argument("--models", default="clip-vit-l14,qwen2vl-2b,llava-ov-0.5b",
                       help="--realistic: comma-separated (clip-vit-l14, qwen2vl-2b, qwen2vl-7b, llava-ov-0.5b)")
    score.add_argument("--copies", type=int, default=20,
                       help="--realistic: copies of the VELOCITI sample (12 rows and 2 videos each; default 20)")
    score.add_argument("--video-size", default="448x448", help="--realistic: video resolution (default 448x448)")
    score.set_defaults(func=_score)
    pipeline = add_command(
        sub, "pipeline", "can the CPU side feed a GPU? real processors, zero-cost models",
        "Run the real processors at real sizes (CLIP ViT-L/14 224 px, Qwen2-VL 448x448 x 8 frames, LLaVA-OneVision "
        "384 px; built offline) with models that answer at once, on a VELOCITI-format workload, and print clips "
        "per second per core on the decode workers (decoding and processor), what the runner's main thread "
        "sustains, what 16 cores can feed against what one H100 consumes, and the runner end to end.",
        "example:\n  foilbench perf pipeline --copies 4 --video-size 1280x720")
    pipeline.add_argument("--models", default="clip-vit-l14,qwen2vl-2b,llava-ov-0.5b",
                          help="comma-separated (clip-vit-l14, qwen2vl-2b, qwen2vl-7b, llava-ov-0.5b)")
    pipeline.add_argument("--copies", type=int, default=4, help="copies of the VELOCITI sample (default 4)")
    pipeline.add_argument("--video-size", default="448x448", help="video resolution (default 448x448)")
    pipeline.add_argument("--frames", type=int, default=8, help="frames per clip (default 8)")
    pipeline.add_argument("--batch-size", type=int, default=16, help="requests per forward pass (default 16)")
    pipeline.add_argument("--workers", default="auto", help="decode workers end to end (default auto: one per core)")
    pipeline.set_defaults(func=_pipeline)
    score.add_argument("--ranks", type=int, help="instead: throughput of N torchrun ranks (one thread each) against "
                                                 "one rank, e.g. --ranks 2")
    score.add_argument("--items", type=int, default=4096, help="items scored with --ranks (default 4096)")
    store = add_command(
        sub, "store", "reading, compacting and metrics of a large generated run",
        "Write a generated run of many items as loose chunks (no model), and print how long reading it, compacting "
        "it, resuming it and `foilbench metrics` take before and after compaction.",
        "example:\n  foilbench perf store --items 100000 --chunk-size 8")
    store.add_argument("--items", type=int, default=100_000, help="items of the generated run (default 100000)")
    store.add_argument("--chunk-size", type=int, default=8, help="items per chunk (default 8)")
    store.set_defaults(func=_store)
    probe = add_command(
        sub, "probe", "one what-if probe against the demo's four trained models, once loaded",
        "Load the demo's four trained models (built first when absent, as `foilbench demo` builds them), then time "
        "one probe of one order item (its caption and foil) against all four, with the frames decoded and again "
        "from the frame cache; the target is under 2 seconds on 2 cores.",
        "example:\n  foilbench perf probe --home /path/to/demo-home")
    probe.add_argument("--home", help="data home holding the demo's models and world (default: the data home)")
    probe.add_argument("--size", default="full", choices=["small", "full"], help="which world (default full)")
    probe.add_argument("--benchmark", default="vitatecs", help="whose item is probed (default vitatecs)")
    probe.add_argument("--device", default="cpu", help="cpu (default), cuda, auto")
    probe.set_defaults(func=_probe)
    build = add_command(
        sub, "build", "a world model built idle and beside a busy torch job",
        "Build a world model (default clip-world) in a fresh data home on an idle machine, then again beside a "
        "torch job multiplying matrices on 2 threads, and print both times, their ratio (target: at most 2.2x) and "
        "whether the two builds wrote identical weights; a model built with others it needs (X-CLIP starts from the "
        "CLIP; the Qwen2-VLs learn from the X-CLIP) gets a line for each of them too.",
        "examples:\n  foilbench perf build\n  foilbench perf build --model xclip-world --scale 0.1\n"
        "  foilbench perf build --model qwen2vl-world-biased    # every world model, about 25 minutes")
    build.add_argument("--model", default="clip-world", help="the world model to build (default clip-world)")
    build.add_argument("--scale", type=float, default=1.0,
                       help="share of the full training split and steps (default 1: the demo's build)")
    build.add_argument("--threads", type=int, default=2, help="the busy job's torch threads (default 2)")
    build.set_defaults(func=_build)
