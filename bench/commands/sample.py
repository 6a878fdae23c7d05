"""``foilbench sample``: write the embedded sample suite and say where each benchmark's files are."""

from __future__ import annotations

import argparse
import shlex

EXAMPLE = """example:
  foilbench sample                       # into ./foilbench-data/sample (or $FOILBENCH_HOME/sample)
  foilbench sample --out /tmp/sample --force
  foilbench summary vilma /tmp/sample/vilma/data --video-root /tmp/sample/vilma/videos
"""


def run(args: argparse.Namespace) -> int:
    """Ensure (or, with ``--force``, regenerate) the suite and print a load command per benchmark."""
    from bench.devkit.world.suite import ensure_sample

    sets = ensure_sample(args.out, force=args.force)
    for name, s in sets.items():
        options = "".join(f" -o {k}={v}" for k, v in s.loader_options.items())
        print(f"{name:10s} foilbench summary {name} {shlex.quote(str(s.data_path))} "
              f"--video-root {shlex.quote(str(s.video_root))}{options}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``sample`` command."""
    parser = subparsers.add_parser(
        "sample",
        help="write the embedded sample suite (generated videos, every benchmark's file format)",
        description="Write a small deterministic sample of each benchmark, in its own released file format, with "
        "generated videos of moving shapes whose captions are true and foils false; print where each benchmark's "
        "files are. Nothing is rewritten when a current suite is already there.",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--out", help="folder of the suite (default: <FOILBENCH_HOME or ./foilbench-data>/sample)")
    parser.add_argument("--force", action="store_true", help="regenerate even if a current suite is there")
    parser.set_defaults(func=run)
