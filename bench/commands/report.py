"""``foilbench report``: every paper's tables and figures for scored runs, as one browsable folder."""

from __future__ import annotations

import argparse

from bench.commands.options import add_command

EXAMPLE = """examples:
  foilbench report runs/vilma-clip runs/vilma-xclip --out reports/vilma
  foilbench report runs/* --out reports/all --notebooks velociti,vinoground --format png
  foilbench report --data vitatecs=data/VITATECS/data --out reports/stats    (annotation-only tables)
  foilbench report foilbench-data/runs/sample-full --out reports/world --pool foil_type
Open OUT/index.html in a browser.
"""


def run(args: argparse.Namespace) -> int:
    """Build the report and say where to open it."""
    from bench.report.build import build_report
    from bench.store import run_folders

    data = {}
    for pair in args.data:
        name, sep, path = pair.partition("=")
        if not sep:
            raise ValueError(f"--data must look like BENCHMARK=PATH, got {pair!r}")
        data[name] = path
    notebooks = [n for n in args.notebooks.split(",") if n] if args.notebooks else None
    index = build_report(run_folders(args.runs), args.out, notebooks,
                         data, not args.no_published, [f for f in args.format.split(",") if f], args.bootstrap,
                         progress=not args.quiet, jobs=args.jobs, pool_by=args.pool)
    print(f"report written: open {index}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``report`` command."""
    parser = add_command(
        subparsers, "report", "run the paper notebooks on scored runs and write an HTML report",
        "Execute the paper notebooks (notebooks/*.ipynb) with papermill on the given runs, writing every table (CSV, "
        "Markdown, HTML) and figure (PNG, SVG) and an index.html linking them all.", EXAMPLE)
    parser.add_argument("runs", nargs="*",
                        help="run folders (any benchmarks), or folders holding run folders")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--notebooks", help="comma-separated benchmarks whose notebooks to run (default: those with "
                                            "runs)")
    parser.add_argument("--data", action="append", default=[], metavar="BENCHMARK=PATH",
                        help="annotation path for a notebook without runs (repeatable)")
    parser.add_argument("--no-published", action="store_true", help="leave the papers' published rows out")
    parser.add_argument("--format", default="png,svg", help="figure formats (default png,svg)")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for intervals (default 1000)")
    parser.add_argument("--jobs", type=int, help="notebooks run at once (default: one per CPU core, at most 4)")
    parser.add_argument("--pool", action="append", default=[], metavar="LABEL",
                        help="also show accuracy by this item label, each run name's runs pooled over benchmarks "
                             "(repeatable; e.g. foil_type of the generated world)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)
