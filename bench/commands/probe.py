"""``foilbench probe``: any texts scored against any clip by any model, through the backends and frame policies of a
run (:mod:`bench.scoring.probe`)."""

from __future__ import annotations

import argparse
import json

from bench.commands.options import add_command, add_model, endpoint_of, parse_options

EXAMPLE = """examples:
  foilbench probe --model openai/clip-vit-base-patch32 clip.mp4 "a man opens a door" "a man closes a door"
  foilbench probe --model foilbench-data/models/xclip-world clip.mp4 "a ball rolls left" "a ball rolls right" \\
      --control reversed --json
  foilbench probe --model Qwen/Qwen2-VL-2B-Instruct clip.mp4 "a dog jumps" --start 2 --end 6 --frames uniform:k=16

Scores: a similarity for CLIP-like models and X-CLIP, P(Yes) for a Video-LLM (the yes-no prompt unless --prompt),
a log-likelihood for a text LM. Controls: as-is, reversed, shuffled (seeded by --seed), one-frame (the middle one),
no-video. Each probe is kept in <data home>/probes.parquet (--no-keep: not kept).
"""


def _window(args: argparse.Namespace) -> tuple[float | None, float | None]:
    for name in ("start", "end"):
        value = getattr(args, name)
        if value is not None and not value >= 0:
            raise ValueError(f"--{name} must be seconds >= 0, got {value}")
    if args.start is not None and args.end is not None and args.end <= args.start:
        raise ValueError(f"--end ({args.end}) must be after --start ({args.start})")
    return args.start, args.end


def run(args: argparse.Namespace) -> int:
    """Probe, print the scores (a table, or JSON), keep the probe."""
    from bench.scoring.console import quiet_library_bars
    from bench.scoring.probe import probe
    from bench.store.probes import append_probes

    start, end = _window(args)
    quiet_library_bars()
    found = probe(args.model, args.video, args.texts, family=args.family, frame_policy=args.frames,
                  control=args.control, prompt=args.prompt, start=start, end=end, device=args.device, dtype=args.dtype,
                  options=parse_options(args.backend_option), seed=args.seed, endpoint=endpoint_of(args))
    if not args.no_keep:
        append_probes(found.records())
    if args.json:
        print(json.dumps(found.json(), ensure_ascii=False))
        return 0
    best = max(range(len(found.scores)), key=found.scores.__getitem__)
    print(f"{found.model} ({found.family}, {found.prompt or 'no prompt'}), control {found.control}, frames "
          f"{found.frame_policy['name']}")
    for n, (text, score) in enumerate(zip(found.texts, found.scores)):
        print(f"{'>' if n == best else ' '} {score:10.4f}  {text}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``probe`` command."""
    from bench.frames.controls import AS_IS, CONTROLS

    p = add_command(subparsers, "probe", "score any texts against any clip with any model (what if...?)",
                    "Score TEXT... against VIDEO (or a window of it) with MODEL, through the same backends, frame "
                    "policies and protocol code as a run; with --control, under a shortcut control.", EXAMPLE)
    p.add_argument("video", help="video file")
    p.add_argument("texts", nargs="+", metavar="TEXT", help="texts to score (a caption, foils...)")
    add_model(p)
    p.add_argument("--frames", help="frame policy NAME[:KEY=VALUE,...] (default uniform:k=8, or uniform:k=N for a "
                                   "model that takes N frames, as X-CLIP)")
    p.add_argument("--control", default=AS_IS, choices=[AS_IS, *CONTROLS],
                   help="what the model sees of the sampled frames (default as-is)")
    p.add_argument("--prompt", help="Video-LLMs: prompt name or template with {caption} (default yes-no)")
    p.add_argument("--start", type=float, help="window start in seconds (default: the video's start)")
    p.add_argument("--end", type=float, help="window end in seconds (default: the video's end)")
    p.add_argument("--seed", type=int, default=0, help="seed of the shuffled control and seeded policies (default 0)")
    p.add_argument("--device", default="auto", help="auto (CUDA, else MPS, else CPU), cpu, cuda, cuda:1...")
    p.add_argument("--dtype", default="auto", choices=["auto", "float32", "float16", "bfloat16"],
                   help="auto: bfloat16/float16 on GPU, float32 on CPU")
    p.add_argument("-b", "--backend-option", action="append", default=[], metavar="KEY=VALUE",
                   help="backend option, e.g. pooling=raw_mean for a contrastive model")
    p.add_argument("--json", action="store_true", help='print [{"text", "score"}, ...] in the order given')
    p.add_argument("--no-keep", action="store_true", help="do not keep the probe in probes.parquet")
    p.set_defaults(func=run)
