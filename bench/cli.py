"""The ``foilbench`` command: a thin dispatcher over the commands of :mod:`bench.commands`.

Each module named in :data:`SUBCOMMANDS` provides ``register(subparsers)``, which adds its parser and sets
``func`` (taking the parsed arguments, returning an exit code). Heavy imports stay inside those functions so that
``foilbench --help`` is quick. Errors print as one line (``--debug`` shows the traceback); a closed pipe
(``foilbench metrics RUN | head``) ends the command quietly.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from bench import __version__

SUBCOMMANDS: dict[str, str] = {
    "demo": "bench.commands.demo",
    "sample": "bench.commands.sample",
    "summary": "bench.commands.summary",
    "metrics": "bench.commands.metrics",
    "compare": "bench.commands.compare",
    "score": "bench.commands.score",
    "study": "bench.commands.study",
    "probe": "bench.commands.probe",
    "models": "bench.commands.models",
    "import": "bench.commands.importing",
    "report": "bench.commands.report",
    "perf": "bench.commands.perf",
}
# Errors that describe a mistake in the user's input or environment: printed without the "internal error" hint.
USER_ERRORS = (ValueError, FileNotFoundError, FileExistsError, NotADirectoryError, PermissionError)


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
    parser.add_argument("--debug", action="store_true", help="show the full traceback of an error")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in SUBCOMMANDS.values():
        importlib.import_module(module).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if not getattr(args, "func", None):
        if unknown:
            parser.parse_args(argv)  # argparse's own error, naming them
        parser.print_help()
        return 2
    if unknown:
        print(f"foilbench {args.command}: error: unrecognized arguments: {' '.join(unknown)} (see foilbench "
              f"{args.command} --help)", file=sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print(f"foilbench {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # noqa: BLE001 - every error becomes one line; --debug shows the traceback
        if args.debug:
            raise
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        if isinstance(err, (UserError, *USER_ERRORS)):
            print(f"foilbench {args.command}: error: {first}", file=sys.stderr)
            return 2
        print(f"foilbench {args.command}: internal error: {type(err).__name__}: {first} "
              "(run again with --debug for the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
