"""``foilbench summary``: what a loader read from a benchmark's files."""

from __future__ import annotations

import argparse
import json
from typing import Any

from bench.items import ItemSet

EXAMPLE = """example:
  foilbench summary vilma ../shared/realdata/vilma
  foilbench summary vitatecs data/VITATECS/data --video-root data/VITATECS/videos
  foilbench summary vilma data/vilma -o valid_only=false
  foilbench summary velociti data/velociti.json --video-root videos -o allow_outside_root=true
"""


def parse_options(pairs: list[str]) -> dict[str, Any]:
    """``["key=value", ...]`` to a dict; values are read as JSON when they parse (true, 3, null), else kept as text.

    Which options a loader takes (and their types) is checked by the loader itself
    (:func:`bench.loaders.common.check_options`), before any file is read.
    """
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"option must look like KEY=VALUE, got {pair!r}")
        if key in options:
            raise ValueError(f"option {key!r} given twice")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def format_summary(items: ItemSet) -> str:
    """A plain-text summary: items per subset and role, videos found and missing, and the loader's notes."""
    lines = [f"{items.benchmark}: {len(items)} items from {items.source}"]
    roles = sorted({it.role for it in items})
    for role in roles:
        counts = items.counts(role)
        lines.append(f"  {role} items per subset:")
        width = max(len(s) for s in counts)
        lines += [f"    {subset:<{width}}  {n:>6}" for subset, n in counts.items()]
        lines.append(f"    {'total':<{width}}  {sum(counts.values()):>6}")
    videos = items.videos()
    known = [v for v in videos.values() if v is not None]
    if len(known) < len(videos):
        lines.append(f"  videos: {len(videos)} distinct files (no --video-root given: not checked on disk)")
    else:
        missing = sum(1 for v in known if not v)
        affected = sum(1 for it in items if it.videos_missing)
        lines.append(f"  videos: {len(videos)} distinct files, {missing} missing on disk "
                     f"({affected} items affected, kept and flagged)")
    lines += [f"  note: {note}" for note in items.notes]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Load and print the summary."""
    from bench.loaders import load

    items = load(args.benchmark, args.path, video_root=args.video_root, **parse_options(args.option))
    print(format_summary(items))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``summary`` command."""
    from bench.loaders import LOADERS

    parser = subparsers.add_parser(
        "summary",
        help="load a benchmark's released files and print the items per subset and missing videos",
        description="Load BENCHMARK from PATH (a file or folder exactly as released) and print how many items each "
        "subset has and how many of their videos are missing under --video-root.",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("benchmark", choices=sorted(LOADERS), help="which benchmark's format PATH is in")
    parser.add_argument("path", help="annotation file or folder as released")
    parser.add_argument("--video-root", help="folder the benchmark's video paths are relative to")
    parser.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                        help="loader option, repeatable (e.g. valid_only=false for ViLMA; allow_outside_root=true "
                        "for video paths outside --video-root)")
    parser.set_defaults(func=run)
