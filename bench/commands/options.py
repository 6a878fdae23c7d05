"""What the commands share: the parser of a command with its examples, the data-source arguments and ``KEY=VALUE``
options."""

from __future__ import annotations

import argparse
from typing import Any

from bench.config import DataSource
from bench.keyvalue import parse_pairs
from bench.registry import names


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Help text as written (examples keep their lines), wrapped to a readable width."""

    def __init__(self, prog: str):
        super().__init__(prog, max_help_position=32, width=110)


def add_command(subparsers: argparse._SubParsersAction, name: str, summary: str, description: str,
                example: str) -> argparse.ArgumentParser:
    """A command's parser: one-line ``summary`` for ``foilbench --help``, ``description`` and ``example`` for its
    own."""
    return subparsers.add_parser(name, help=summary, description=description, epilog=example,
                                 formatter_class=Formatter)


def add_source(parser: argparse.ArgumentParser, *, positional: bool = True) -> None:
    """The arguments that say where a benchmark's items come from: BENCHMARK DATA (or ``--benchmark``/``--data``),
    ``--video-root`` and ``-o KEY=VALUE`` loader options."""
    choices = names()
    if positional:
        parser.add_argument("benchmark", choices=choices, help="which benchmark's format the data is in")
        parser.add_argument("data", help="annotation file or folder, as released")
    else:
        parser.add_argument("--benchmark", required=True, choices=choices, help="which benchmark's format")
        parser.add_argument("--data", required=True, help="annotation file or folder, as released")
    parser.add_argument("--video-root", help="folder the benchmark's video paths are relative to")
    parser.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                        help="loader option, repeatable (e.g. valid_only=false for ViLMA; allow_outside_root=true "
                        "for video paths outside --video-root)")


def source_of(args: argparse.Namespace) -> DataSource:
    """The :class:`~bench.config.DataSource` of the arguments of :func:`add_source`."""
    return DataSource.of(args.benchmark, args.data, args.video_root, parse_options(args.option))


def parse_options(pairs: list[str]) -> dict[str, Any]:
    """``["key=value", ...]`` to a dict (:func:`bench.keyvalue.parse_pairs`). Which options a loader takes (and their
    types) is checked by the loader itself (:func:`bench.loaders.options.check_options`), before any file is read."""
    return parse_pairs(pairs)
