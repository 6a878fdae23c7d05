"""``foilbench models``: every architecture the test suite builds and scores, with what each is given and how, from
the table in :mod:`bench.scoring.architectures` (and the families installed packages add)."""

from __future__ import annotations

import argparse
import json

from bench.commands.options import add_command

EXAMPLE = """examples:
  foilbench models
  foilbench models --json
  foilbench models --all    # also every other image-text-to-text model type transformers ships, untested

A model whose type is not listed as tested goes through its family's generic path, with one line saying so; a
Video-LLM without a video processor in transformers is refused before scoring (a blind run can still score it).
"""


def format_table(rows: list[dict]) -> str:
    """One line per architecture: type, family, protocols, tested transformers versions, its times, KV reuse."""
    header = ("architecture", "family", "protocols", "tested on", "times", "KV reuse")
    table = [header] + [(r["architecture"] or "-", r["family"], ",".join(r["protocols"]),
                         ", ".join(r["transformers"]) or "untested", _short(r.get("times", "")),
                         _short(r.get("kv", "")) or "n/a") for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(header) - 1)]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths)) + "  " + line[-1] for line in table)


def _short(text: str, width: int = 44) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def run(args: argparse.Namespace) -> int:
    """Print the table (or JSON)."""
    import sys

    from bench.scoring.architectures import listing
    from bench.scoring.families import plugin_problems

    rows = listing(everything=args.all)
    for problem in plugin_problems():
        print(f"foilbench models: {problem}", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(format_table(rows))
    tested = [r for r in rows if r["tested"]]
    print(f"\n{sum(r['family'] == 'videollm' for r in tested)} Video-LLM and "
          f"{sum(r['family'] not in ('videollm', 'textlm') for r in tested)} encoder architectures tested "
          "(foilbench models --json for what each is given; docs/models.md)")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``models`` command."""
    p = add_command(subparsers, "models", "list the model architectures the tests build and score, and how",
                    "List every architecture the test suite builds as a tiny model and scores end to end: its family "
                    "and protocols, the transformers versions it was tested on, what its processor makes of a clip, "
                    "how the frames' true times reach it, and whether KV-prefix reuse is exact.", EXAMPLE)
    p.add_argument("--json", action="store_true", help="print a JSON list of objects, one per architecture")
    p.add_argument("--all", action="store_true", help="also list the image-text-to-text model types transformers "
                                                      "ships that no test builds (untested)")
    p.set_defaults(func=run)
