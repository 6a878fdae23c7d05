"""``foilbench perf``: benchmark commands that print speed ratios against naive baselines (measurements in
:mod:`bench.devkit.perf`)."""

from __future__ import annotations

import argparse

from bench.commands.options import add_command


def _frames(args: argparse.Namespace) -> int:
    from bench.devkit.perf.frames import measure

    measure(args.frames, args.copies, args.workers)
    return 0


def _score(args: argparse.Namespace) -> int:
    if args.ranks:
        from bench.devkit.perf.ranks import measure as ranks

        ranks(args.ranks, args.items, args.frames, args.batch_size)
        return 0
    from bench.devkit.perf.score import measure

    measure(args.frames, args.batch_size)
    return 0


def _store(args: argparse.Namespace) -> int:
    from bench.devkit.perf.store import measure

    measure(args.items, args.chunk_size)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``perf`` command group."""
    parser = add_command(subparsers, "perf", "speed benchmarks that print ratios against naive baselines",
                         "Speed benchmarks; each prints its throughput and the ratio against a naive baseline.",
                         "examples:\n  foilbench perf frames\n  foilbench perf score")
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
        "request, batch size 1, no reuse) and print requests per second and their ratio.",
        "example:\n  foilbench perf score --frames 8 --batch-size 16")
    score.add_argument("--frames", type=int, default=8, help="frames per clip (default 8)")
    score.add_argument("--batch-size", type=int, default=16, help="our batch size (default 16)")
    score.add_argument("--ranks", type=int, help="instead: throughput of N torchrun ranks (one thread each) against "
                                                 "one rank, e.g. --ranks 2")
    score.add_argument("--items", type=int, default=4096, help="items scored with --ranks (default 4096)")
    score.set_defaults(func=_score)
    store = add_command(
        sub, "store", "reading, compacting and metrics of a large generated run",
        "Write a generated run of many items as loose chunks (no model), and print how long reading it, compacting "
        "it, resuming it and `foilbench metrics` take before and after compaction.",
        "example:\n  foilbench perf store --items 100000 --chunk-size 8")
    store.add_argument("--items", type=int, default=100_000, help="items of the generated run (default 100000)")
    store.add_argument("--chunk-size", type=int, default=8, help="items per chunk (default 8)")
    store.set_defaults(func=_store)
