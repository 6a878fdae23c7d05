"""The ``foilbench`` command: a thin dispatcher over the subcommands each part of the package registers.

Each module named in :data:`SUBCOMMANDS` provides ``register(subparsers)``, which adds its parser and sets
``func`` (taking the parsed arguments, returning an exit code). Heavy imports stay inside those functions so that
``foilbench --help`` is quick.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from bench import __version__

SUBCOMMANDS: dict[str, str] = {
    "demo": "bench.commands.demo",
    "sample": "bench.commands.sample",
    "summary": "bench.commands.summary",
    "metrics": "bench.commands.metrics",
    "score": "bench.commands.score",
    "import": "bench.commands.importing",
    "report": "bench.commands.report",
    "perf": "bench.commands.perf",
}


class UserError(Exception):
    """A problem with the user's input: printed as one clear line, exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="foilbench",
        description="Load, score and analyse counterfactual video-caption benchmarks "
        "(ViLMA, VITATECS, VELOCITI, VideoCon, Vinoground).",
    )
    parser.add_argument("--version", action="version", version=f"foilbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in SUBCOMMANDS.values():
        importlib.import_module(module).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (UserError, FileNotFoundError, ValueError) as err:
        print(f"foilbench {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
