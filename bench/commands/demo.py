"""``foilbench demo``: the main job on the generated world (logic in :mod:`bench.devkit.demo`)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from bench.commands.options import add_command
from bench.paths import data_home


def run(args: argparse.Namespace) -> int:
    """Build the trained models in a background process while generating the world and scoring each model as soon
    as it is built (the last ones in two processes once the build ends), print the lesson and build the report (each
    benchmark's notebook as soon as its runs are scored); when interrupted, say that running it again resumes."""
    try:
        return _demo(args)
    except KeyboardInterrupt:
        print("foilbench demo: interrupted; what is built and scored is kept: run the same command again to resume",
              file=sys.stderr)
        return 130


def _demo(args: argparse.Namespace) -> int:
    from bench.devkit.train.pinned import passive_waits

    passive_waits()  # before torch loads: scoring's idle threads sleep instead of spinning against other work
    from bench.devkit.demo import (DEMO_ITEMS, DEMO_MODELS, DEMO_RUNS, bias_lines, both_orders_lines,
                                   build_estimate, foil_type_table, reference_line, score_world, tie_lines)
    import torch
    from tqdm.auto import tqdm

    from bench.devkit.threads import CoresLeft, torch_threads
    from bench.devkit.train.build import MODELS, THREADS, Background, is_current, split_of
    from bench.devkit.train.evaluate import answer_bias, both_orders
    from bench.devkit.train.models import quiet_window_warning
    from bench.devkit.world import ensure_sample
    from bench.loaders import load
    from bench.metrics.pooled import pool_runs
    from bench.report.build import ReportBuilder
    from bench.scoring.console import quiet_library_bars
    from bench.store import read_run

    started = time.perf_counter()
    phases: dict[str, float] = {}

    def phase_done(name: str) -> None:
        phases[name] = time.perf_counter() - started - sum(phases.values())

    quiet_library_bars()
    quiet_window_warning()
    if args.quiet:
        from transformers.utils import logging

        logging.disable_progress_bar()
    home = Path(args.home).expanduser().resolve() if args.home else data_home()
    progress = not args.quiet
    world, runs_dir = home / f"sample-{args.size}", home / "runs" / f"sample-{args.size}"
    log = home / "models" / "build.log"
    print(f"1/4 the trained models, in {home / 'models'} ({build_estimate(DEMO_MODELS, home)})")
    cores = CoresLeft(THREADS)  # while the build runs, this process keeps off the build's core
    building = Background(DEMO_MODELS, home, log=log, ended=cores.give_back)
    report = ReportBuilder(home / "reports" / f"sample-{args.size}", progress=progress, pool_by=["foil_type"])
    try:
        if building.child is not None:
            print("    their training split first, on every core")
            split_of(home)  # the build's first need (its child waits for it meanwhile)
            left = cores.confine()
            print(f"    built in a background process (torch on {THREADS} thread{'' if THREADS == 1 else 's'}"
                  f"{'; this process keeps off a core for it' if left else ''}) beside steps 2 and 3, each model's "
                  f"set-ups scored as soon as it is built (its log: {log})")
        print(f"2/4 the generated world ({args.size}), in {world}")
        # beside a build, the world is written on the cores the build leaves
        free = max(1, (os.cpu_count() or 1) - THREADS) if building.child is not None else None
        samples = ensure_sample(world, size=args.size, workers=free)
        for name, s in samples.items():
            items = load(name, s.data_path, video_root=s.video_root, **s.loader_options)
            missing = sum(1 for it in items if it.videos_missing)
            kinds = len({it.labels.get("foil_type") for it in items} - {None})
            print(f"    {name}: {len(items)} items, {kinds} foil types, {missing} missing on disk")
        phase_done("world")
        scope = ("every item" if args.full else
                 ", ".join(f"{n} items per benchmark for {f}" for f, n in DEMO_ITEMS.items()))
        print(f"3/4 scoring {len(DEMO_RUNS)} set-ups on the 5 benchmarks ({scope}), model by model; each "
              "benchmark's report notebook starts as soon as its runs are scored")
        shown: set[str] = set()

        def ready(name: str) -> None:
            if name not in shown and not is_current(name, home):
                tqdm.write(f"    waiting for {name}, being built")
            building.ready(name)
            if name not in shown:
                shown.add(name)
                tqdm.write(f"    {name}, its set-ups scored from {time.perf_counter() - started:.0f} s: "
                           f"{MODELS[name].summary}")

        # beside a build, scoring leaves the build its cores (on two cores one torch thread scores as fast as two)
        threads = max(1, (os.cpu_count() or 1) - THREADS) if building.child is not None else torch.get_num_threads()
        with torch_threads(threads):
            paths = score_world(runs_dir, samples, home, ready=ready, full=args.full, progress=progress,
                                finished=report.start, lane=(world, args.size) if building.child is not None else None,
                                spare=lambda: report.allow(report.at_once + 1))
        models_took = building.wait()
        phase_done("scoring")
    except BaseException:
        report.close()
        raise
    finally:
        building.close()
        cores.give_back()
    early = report.done()  # the notebooks already run while the last set-ups scored
    print(f"    the models took {models_took:.0f} s, built beside the world and the scoring" if models_took else
          "    the models were already built")
    print(f"    {reference_line(DEMO_MODELS, home)}")
    runs = [read_run(p) for p in paths]
    warned = tie_lines(runs)
    if warned:
        print("\n" + "\n".join(warned))
    print("\nAccuracy by foil type, pooled over the five benchmarks (%, 95 % exact interval; a tied item is not told "
          "apart, as in `foilbench compare`; * chance below the interval):")
    print(foil_type_table(pool_runs(runs, "foil_type")))
    print("\nAnswer bias of the Video-LLM runs (the biased variant was taught to lean to Yes and A; a share is over "
          "the answers that chose, a tied answer is neither):")
    print("\n".join(bias_lines(answer_bias(paths))))
    print("\nA/B questions right in both option orders (chance 25 %; blind: no frames):")
    print("\n".join(both_orders_lines(both_orders(paths))))
    print(f"\nruns: {runs_dir}  (all of them: `foilbench metrics {runs_dir} --pool foil_type`; one: "
          "`foilbench metrics RUN --by foil_type`)")
    print("4/4 the report of all five papers (papermill" + (f"; the notebooks of {', '.join(early)} ran beside the "
                                                            "scoring)" if early else ")"))
    try:
        index = report.finish(paths)
    finally:
        report.close()
    print(f"report: open {index} in a browser; the explore notebook (notebooks/explore.ipynb) opens on these runs")
    phase_done("report")
    beside = [f"the models took {models_took:.0f} s of it, built beside the world and the scoring"] * bool(models_took)
    beside += [f"{len(early)} of the {len(report.pages)} report notebooks ran beside the scoring"] if early else []
    print(f"done in {sum(phases.values()):.0f} s ({', '.join(f'{k} {v:.0f} s' for k, v in phases.items())}"
          + "".join(f"; {b}" for b in beside) + ")")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``demo`` command."""
    parser = add_command(
        subparsers, "demo", "the main job on the generated world, with trained models",
        "Generate the world's five benchmarks (first use only), build small models trained offline on a disjoint "
        "part of it (first use only, in a background process beside the world and the scoring; the demo says how long "
        "the last build took), score them on every benchmark (once the build ends, in two processes), "
        "print accuracy by foil type with intervals, the answer bias and A/B in both orders, and build the report of "
        "every paper's tables and figures (each paper's notebook as soon as its benchmark's runs are scored).",
        "examples:\n  foilbench demo\n  foilbench demo --home /tmp/foilbench --quiet\n  foilbench demo --full")
    parser.add_argument("--home", help="data folder (default: $FOILBENCH_HOME, else foilbench-data in the checkout)")
    parser.add_argument("--size", default="full", choices=("small", "full"),
                        help="the world's size (default full: hundreds of items per test; small: a few)")
    parser.add_argument("--full", action="store_true",
                        help="score every item (default: a spread of items per benchmark, to stay within minutes)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.set_defaults(func=run)
