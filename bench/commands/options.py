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


def add_model(parser: argparse.ArgumentParser) -> None:
    """``--model``, ``--family`` (the built-in families and those installed packages add) and the arguments of a model
    served elsewhere (:func:`add_endpoint`): ``score`` and ``probe``."""
    from bench.scoring.families import REMOTE, family_names

    parser.add_argument("--model", required=True, help="hub id or local folder of the model (with --endpoint: the "
                                                       "name of the model the endpoint serves)")
    parser.add_argument("--family", choices=family_names(),
                        help=f"model family (default: read from the model's config; {REMOTE} with --endpoint)")
    add_endpoint(parser)


def add_endpoint(parser: argparse.ArgumentParser) -> None:
    """The arguments of a model served elsewhere (family ``api``): ``--endpoint``, the key's variable, concurrency,
    time-out and retries (``score`` and ``probe``)."""
    parser.add_argument("--endpoint", metavar="URL",
                        help="an OpenAI-compatible base URL serving --model (https://api.openai.com/v1, "
                             "http://127.0.0.1:8000/v1 for vLLM or SGLang...): the model is family api (docs/api.md)")
    parser.add_argument("--api-key-env", metavar="NAME",
                        help="API: the environment variable holding the key (default OPENAI_API_KEY); only its name "
                             "is recorded")
    parser.add_argument("--concurrency", type=int, metavar="N", help="API: requests sent at once (default 8)")
    parser.add_argument("--request-timeout", type=float, metavar="S",
                        help="API: seconds a request may take before it is tried again (default 120)")
    parser.add_argument("--max-retries", type=int, metavar="N",
                        help="API: tries after the first on 429, 5xx, time-outs and dropped connections, waiting as "
                             "Retry-After says or backing off (default 6)")


# The Endpoint field each API argument sets (those a command has: ``score`` and ``probe``).
ENDPOINT_ARGS = {"api_key_env": "key_env", "concurrency": "concurrency", "max_requests": "max_requests",
                 "token_budget": "token_budget", "request_timeout": "timeout", "max_retries": "retries"}


def endpoint_of(args: argparse.Namespace):
    """The :class:`~bench.config.Endpoint` of ``--endpoint`` and the API arguments (None without it; API arguments
    without it, ``--dry-run`` included, are a one-line error)."""
    from bench.config import Endpoint

    given = {name: getattr(args, name) for name in ENDPOINT_ARGS if getattr(args, name, None) is not None}
    if args.endpoint is None:
        flags = [f"--{name.replace('_', '-')}" for name in given]
        flags += ["--dry-run"] if getattr(args, "dry_run", False) else []
        if flags:
            raise ValueError(f"{', '.join(flags)} applies to models served elsewhere: give --endpoint URL")
        return None
    return Endpoint(args.endpoint, **{ENDPOINT_ARGS[name]: value for name, value in given.items()})
