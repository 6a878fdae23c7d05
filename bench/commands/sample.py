"""``foilbench sample``: write the generated sample suite and say where each benchmark's files are."""

from __future__ import annotations

import argparse
import shlex

from bench.commands.options import add_command

SIZES = ("small", "full")  # bench.devkit.world.files.SIZES, repeated so that --help imports no world code

EXAMPLE = """example:
  foilbench sample                       # small, into <data home>/sample-small
  foilbench sample --size full           # about a hundred items per subtest, into .../sample-full
  foilbench sample --out /tmp/sample --force
  foilbench summary vilma /tmp/sample/vilma/data --video-root /tmp/sample/vilma/videos \\
      -o labels=/tmp/sample/vilma/labels.csv
"""


def run(args: argparse.Namespace) -> int:
    """Ensure (or, with ``--force``, regenerate) the suite and print a load command per benchmark."""
    from bench.devkit.world.suite import WRITERS, ensure_sample

    sets = ensure_sample(args.out, size=args.size, seed=args.seed, force=args.force, benchmarks=list(WRITERS))
    width = max(map(len, sets))
    for name, s in sets.items():
        options = "".join(f" -o {shlex.quote(f'{k}={v}')}" for k, v in s.loader_options.items())
        print(f"{name:{width}s} foilbench summary {name} {shlex.quote(str(s.data_path))} "
              f"--video-root {shlex.quote(str(s.video_root))}{options}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``sample`` command."""
    parser = add_command(
        subparsers, "sample",
        "write the generated sample suite (videos of moving shapes, every benchmark's file format)",
        "Write a deterministic sample of each benchmark, in its own released file format with all its subtests, of "
        "generated videos of moving shapes whose captions are true and foils false, and beside each a labels.csv of "
        "every item's foil type (order, direction, action, attribute, count, relation...); print where each "
        "benchmark's files are. Nothing is rewritten when a current suite is already there.",
        EXAMPLE)
    parser.add_argument("--size", choices=SIZES, default="small",
                        help="small: a few items per subtest (seconds); full: about a hundred per subtest, enough for "
                        "95%% intervals of about +/-5 points per foil type (about a minute)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated world (default 0)")
    parser.add_argument("--out", help="folder of the suite (default: <data home>/sample-SIZE; the data home is "
                        "$FOILBENCH_HOME, else foilbench-data in the checkout)")
    parser.add_argument("--force", action="store_true", help="regenerate even if a current suite is there")
    parser.set_defaults(func=run)
