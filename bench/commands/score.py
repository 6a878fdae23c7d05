"""``foilbench score``."""

from __future__ import annotations

import argparse

SCORE_EXAMPLE = """examples:
  foilbench score vitatecs data/VITATECS/data --video-root data/VITATECS/videos \\
      --model openai/clip-vit-base-patch32 --adapter contrastive --frames uniform:k=8 --batch-size 32 --device cuda
  foilbench score velociti velociti.parquet --video-root videos --model Qwen/Qwen2-VL-7B-Instruct \\
      --adapter entail --prompt velociti-entail --frames second_middles --limit 100
Re-running the same command resumes where it stopped.
"""

def _size(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    width, _, height = text.lower().partition("x")
    try:
        return int(width), int(height)
    except ValueError:
        raise ValueError(f"--size must look like 224x224, got {text!r}") from None


def run_score(args: argparse.Namespace) -> int:
    """Score and print where the run went."""
    from bench.frames import parse_policy
    from bench.commands.summary import parse_options
    from bench.scoring.run import score

    out = score(args.benchmark, args.data, args.model, args.adapter, video_root=args.video_root,
                frame_policy=parse_policy(args.frames), prompt=args.prompt, batch_size=args.batch_size,
                device=args.device, dtype=args.dtype, out=args.out, limit=args.limit, seed=args.seed,
                loader_options=parse_options(args.option), chunk_size=args.chunk_size, workers=args.workers,
                backend=args.backend, size=_size(args.size), name=args.name, retry_failures=args.retry_failures,
                progress=not args.quiet, adapter_options=parse_options(args.adapter_option))
    print(f"run stored in {out}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``score``."""
    from bench.loaders import LOADERS
    from bench.scoring.adapters import ADAPTERS

    p = subparsers.add_parser(
        "score", help="score a benchmark with a model into a resumable run folder",
        description="Score every item of BENCHMARK (read from DATA as released) with MODEL (a hub id or a local "
        "folder) through ADAPTER, writing per-item scores to a run folder. Killing and re-running resumes.",
        epilog=SCORE_EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("benchmark", choices=sorted(LOADERS))
    p.add_argument("data", help="annotation file or folder as released")
    p.add_argument("--video-root", help="folder the benchmark's video paths are relative to")
    p.add_argument("--model", required=True, help="hub id or local folder of the model")
    p.add_argument("--adapter", required=True, choices=sorted(ADAPTERS), help="model family / protocol")
    p.add_argument("--frames", default="uniform:k=8",
                   help="frame policy NAME[:KEY=VALUE,...] (default uniform:k=8; e.g. fps:fps=1,max_frames=12, "
                        "segment_midpoints:k=32, second_middles, none)")
    p.add_argument("--prompt", help="protocol prompt name or a template with {caption} (generative adapters)")
    p.add_argument("--batch-size", type=int, default=8, help="requests per forward pass (halved on out-of-memory)")
    p.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1... (default cpu)")
    p.add_argument("--dtype", default="auto", choices=["auto", "float32", "float16", "bfloat16"],
                   help="auto: bfloat16/float16 on GPU, float32 on CPU")
    p.add_argument("--out", help="run folder (default <data home>/runs/<benchmark>-<adapter>-<model>-<hash>)")
    p.add_argument("--limit", type=int, help="score only the first N items (with their ViLMA twins)")
    p.add_argument("--seed", type=int, default=0, help="seed for seeded frame policies and the model (default 0)")
    p.add_argument("--chunk-size", type=int, default=32, help="items stored per chunk (default 32)")
    p.add_argument("--workers", type=int, default=2, help="frame decoding threads (default 2)")
    p.add_argument("--backend", default="decord", choices=["decord", "pyav"], help="video decoder")
    p.add_argument("--size", help="resize frames on decode, WIDTHxHEIGHT (default: the processor resizes)")
    p.add_argument("--name", help="short run label for tables (default: the folder name)")
    p.add_argument("--retry-failures", action="store_true", help="score again the items recorded as failures")
    p.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE", help="loader option")
    p.add_argument("-a", "--adapter-option", action="append", default=[], metavar="KEY=VALUE",
                   help="adapter option, e.g. reuse=none to run Video-LLM requests whole (default reuse=auto)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run_score)
