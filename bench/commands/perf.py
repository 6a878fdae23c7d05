"""``foilbench perf``: benchmark commands that print speed ratios against naive baselines."""

from __future__ import annotations

import argparse
import importlib

# perf subcommand -> module providing ``register(subparsers)``
BENCHMARKS: dict[str, str] = {
    "frames": "bench.devkit.perf.frames",
    "score": "bench.devkit.perf.score",
}


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``perf`` command group."""
    parser = subparsers.add_parser(
        "perf", help="speed benchmarks that print ratios against naive baselines",
        description="Speed benchmarks; each prints its throughput and the ratio against a naive baseline.",
        epilog="example:\n  foilbench perf frames", formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="benchmark", metavar="BENCHMARK", required=True)
    for module in BENCHMARKS.values():
        importlib.import_module(module).register(sub)
