"""``foilbench demo``: the main job on the embedded sample suite (logic in :mod:`bench.devkit.demo`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.commands.options import add_command
from bench.paths import data_home


def run(args: argparse.Namespace) -> int:
    """Generate, load, score and summarise the sample suite."""
    from bench.commands.summary import format_summary
    from bench.devkit.demo import headline, score_sample
    from bench.devkit.world import ensure_sample
    from bench.loaders import load
    from bench.report.build import build_report

    home = Path(args.home) if args.home else data_home()
    samples = ensure_sample(home / "sample")
    for name, sample in samples.items():
        print(format_summary(load(name, sample.data_path, video_root=sample.video_root, **sample.loader_options)))
    print("\nscoring the sample suite with tiny offline models (random weights: expect chance-level numbers)")
    runs = score_sample(home, samples, progress=not args.quiet)
    print("\nheadline metrics (%, 95% bootstrap CI, * = above chance at p < 0.05)")
    print(headline(runs))
    print(f"\nruns stored under {home / 'runs' / 'sample'}; `foilbench metrics RUN...` prints every breakdown")
    print("\nbuilding the report (every paper notebook, executed with papermill)")
    index = build_report(runs, home / "reports" / "sample", progress=not args.quiet)
    print(f"report written: open {index} in a browser")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``demo`` command."""
    parser = add_command(
        subparsers, "demo", "the main job on the embedded sample suite",
        "Generate the embedded sample suite of all five benchmarks (first use only), print what the "
        "loaders read, score it with tiny offline models, print the headline metrics of every run and build the "
        "report of every paper's tables and figures.",
        "example:\n  foilbench demo\n  foilbench demo --home /tmp/foilbench")
    parser.add_argument("--home", help="data folder (default: $FOILBENCH_HOME or ./foilbench-data)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.set_defaults(func=run)
