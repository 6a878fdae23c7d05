"""``foilbench summary``: what a loader read from a benchmark's files."""

from __future__ import annotations

import argparse

from bench.commands.options import add_command, add_source, source_of
from bench.items import ItemSet

EXAMPLE = """example:
  foilbench summary vilma ../shared/realdata/vilma
  foilbench summary vitatecs data/VITATECS/data --video-root data/VITATECS/videos
  foilbench summary vilma data/vilma -o valid_only=false
"""


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
    print(format_summary(source_of(args).load()))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``summary`` command."""
    parser = add_command(
        subparsers, "summary", "load a benchmark's released files and print the items per subset and missing videos",
        "Load BENCHMARK from DATA (a file or folder exactly as released) and print how many items each subset has "
        "and how many of their videos are missing under --video-root.", EXAMPLE)
    add_source(parser)
    parser.set_defaults(func=run)
