"""``foilbench demo``: the main job on the embedded sample suite."""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.paths import data_home


def run(args: argparse.Namespace) -> int:
    """Generate the sample suite on first use, then load every benchmark of it and print what was read."""
    from bench.loaders import load
    from bench.loaders.cli import format_summary
    from bench.sample import ensure_sample

    home = Path(args.home) if args.home else data_home()
    samples = ensure_sample(home / "sample")
    for name, sample in samples.items():
        items = load(name, sample.data_path, video_root=sample.video_root, **sample.loader_options)
        print(format_summary(items))
        print()
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``demo`` command."""
    parser = subparsers.add_parser(
        "demo",
        help="the main job on the embedded sample suite",
        description="Generate the embedded sample suite of all five benchmarks (first use only) and print what the "
        "loaders read from it.",
        epilog="example:\n  foilbench demo\n  foilbench demo --home /tmp/foilbench",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--home", help="data folder (default: $FOILBENCH_HOME or ./foilbench-data)")
    parser.set_defaults(func=run)
