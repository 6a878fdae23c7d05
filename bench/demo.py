"""``foilbench demo``: the main job on the embedded sample suite.

Generates the sample suite (first use only), prints what the loaders read, scores every benchmark with tiny offline
models (a contrastive CLIP, a text-only GPT-2, and a Qwen2-VL asked Yes/No and A/B questions), prints each run's
headline metrics with chance level and confidence interval, and builds the HTML report of all five papers.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.paths import data_home

# adapter -> (tiny model, benchmarks it scores in the demo)
DEMO_RUNS: dict[str, tuple[str, tuple[str, ...]]] = {
    "contrastive": ("clip", ("vilma", "vitatecs", "velociti", "videocon", "vinoground")),
    "textlm": ("gpt2", ("vilma", "vitatecs", "velociti")),
    "entail": ("qwen2vl", ("velociti", "videocon")),
    "mc": ("qwen2vl", ("vitatecs", "velociti", "vinoground")),
}


def score_sample(home: Path, samples: dict, progress: bool = True) -> list[Path]:
    """Score the sample suite as :data:`DEMO_RUNS` says; runs already stored are resumed, not redone."""
    from bench.frames import policy
    from bench.scoring.run import score
    from bench.scoring.tiny import tiny_model

    runs = []
    for adapter, (tiny, benchmarks) in DEMO_RUNS.items():
        model = str(tiny_model(tiny, home / "models"))
        for name in benchmarks:
            s = samples[name]
            runs.append(score(name, s.data_path, model, adapter, video_root=s.video_root,
                              loader_options=s.loader_options, frame_policy=policy("uniform", k=8),
                              out=home / "runs" / "sample" / f"{name}-{adapter}-{tiny}",
                              name=f"{adapter} tiny-{tiny}", progress=progress))
    return runs


def headline(runs: list[Path]) -> str:
    """Each run's overall metrics: value, confidence interval, chance level and significance."""
    from bench.metrics.tables import Settings, run_table
    from bench.runstore import read_run

    lines = []
    for path in runs:
        table = run_table(read_run(path), Settings(n_boot=200))
        overall = table[table["by"] == "all"]
        lines.append(f"{table['benchmark'].iloc[0]:10s} {table['run'].iloc[0]}")
        for row in overall.itertuples():
            mark = "*" if row.significant is True else " "
            lines.append(f"    {row.metric:22s} {100 * row.value:6.1f}{mark} [{100 * row.ci_low:5.1f}, "
                         f"{100 * row.ci_high:5.1f}]  chance {100 * row.chance:5.1f}  n={row.n}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Generate, load, score and summarise the sample suite."""
    from bench.loaders import load
    from bench.loaders.cli import format_summary
    from bench.sample import ensure_sample

    home = Path(args.home) if args.home else data_home()
    samples = ensure_sample(home / "sample")
    for name, sample in samples.items():
        print(format_summary(load(name, sample.data_path, video_root=sample.video_root, **sample.loader_options)))
    print("\nscoring the sample suite with tiny offline models (random weights: expect chance-level numbers)")
    runs = score_sample(home, samples, progress=not args.quiet)
    print("\nheadline metrics (%, 95% bootstrap CI, * = above chance at p < 0.05)")
    print(headline(runs))
    print(f"\nruns stored under {home / 'runs' / 'sample'}; `foilbench metrics RUN...` prints every breakdown")
    from bench.report.build import build_report

    print("\nbuilding the report (every paper notebook, executed with papermill)")
    index = build_report(runs, home / "reports" / "sample", progress=not args.quiet)
    print(f"report written: open {index} in a browser")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``demo`` command."""
    parser = subparsers.add_parser(
        "demo",
        help="the main job on the embedded sample suite",
        description="Generate the embedded sample suite of all five benchmarks (first use only), print what the "
        "loaders read, score it with tiny offline models, print the headline metrics of every run and build the "
        "report of every paper's tables and figures.",
        epilog="example:\n  foilbench demo\n  foilbench demo --home /tmp/foilbench",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--home", help="data folder (default: $FOILBENCH_HOME or ./foilbench-data)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.set_defaults(func=run)
