"""``foilbench study``: every run a study file lists, scored into one runs folder, then the report (logic in
:mod:`bench.study`)."""

from __future__ import annotations

import argparse

from bench.commands.options import add_command

EXAMPLE = """examples:
  foilbench study examples/demo-study.toml            (the demo's runs and report, as one study)
  foilbench study examples/real-benchmarks.toml --check
  foilbench study my-study.toml --no-report
  foilbench study my-api-study.toml --dry-run         (what its API models would cost, per benchmark)

A study file lists [[benchmarks]] (name, data, videos, options) and [[models]] (name, model, family, protocol,
prompt, frames, limit, spread, controls...; endpoint, api_key_env, concurrency, max_requests... for a model served
behind an OpenAI-compatible API); [study] says where the runs (and the report) go. Every model set-up,
and each of its shortcut controls (blind, one-frame, shuffled, reversed), is scored on every benchmark. Run it
again after a kill: complete runs are skipped, partial ones resume. See docs/study.md.
"""


def _world_names(study) -> list[str]:
    from bench.study.plan import WORLD_MODEL

    return [c.model[len(WORLD_MODEL):] for c in study.configs
            if isinstance(c.model, str) and c.model.startswith(WORLD_MODEL)]


def _check_world_models(study) -> None:
    """A ``world:NAME`` model that the generated world does not train is a one-line error."""
    from bench.devkit.train.build import MODELS
    from bench.study.plan import WORLD_MODEL, StudyError

    unknown = [n for n in _world_names(study) if n not in MODELS]
    if unknown:
        raise StudyError(f"[[models]] model: unknown world model {WORLD_MODEL + unknown[0]!r}; choose among "
                         f"{', '.join(WORLD_MODEL + m for m in MODELS)}")


def _with_world(study, home):
    """``study`` with its ``world:`` models resolved to their folders (built on first use) and, when it names a
    world size, the generated world made first; a benchmark path that still does not exist is a one-line error."""
    import dataclasses
    from pathlib import Path

    from bench.devkit.train.build import trained_model
    from bench.devkit.world import ensure_sample
    from bench.devkit.world.suite import WRITERS
    from bench.study.plan import WORLD_MODEL, StudyError

    if study.world:  # the demo's world, and every other benchmark of the world the study reads from it
        world = home / f"sample-{study.world}"
        listed = [b.name for b in study.benchmarks if b.name in WRITERS and world in Path(b.source.data_path).parents]
        ensure_sample(world, size=study.world, benchmarks=listed or None)
    missing = [(b.name, p) for b in study.benchmarks for p in (b.source.data_path, b.source.video_root)
               if p and not Path(p).exists()]
    if missing:
        raise StudyError(f"[[benchmarks]] {missing[0][0]}: {missing[0][1]} does not exist")
    models = {name: str(trained_model(name, home)) for name in dict.fromkeys(_world_names(study))}
    configs = [dataclasses.replace(c, model=models[c.model[len(WORLD_MODEL):]])
               if isinstance(c.model, str) and c.model.startswith(WORLD_MODEL) else c for c in study.configs]
    return dataclasses.replace(study, configs=configs)


def _dry_run(study) -> int:
    """What each API run of the study would send (requests, images, estimated tokens), per benchmark; nothing is
    sent and nothing scored."""
    from bench.scoring.api.estimate import run_cost
    from bench.scoring.families import families
    from bench.scoring.shared import Shared

    shared = Shared()
    print(f"study {study.path.name}: what its API runs would send")
    for config in study.configs:
        if not (config.family and families()[config.family].remote):
            print(f"  {config.source.benchmark:10s} {config.name}: a local model, no API request")
            continue
        print(f"  {run_cost(config, shared.load).line(config.name)}")
    print("nothing sent (--dry-run)")
    return 0


def run(args: argparse.Namespace) -> int:
    """Check the study, score what is not stored yet and build the report."""
    from pathlib import Path

    from bench.paths import data_home
    from bench.study.execute import run_study
    from bench.study.plan import read_study

    home = Path(args.home).expanduser().resolve() if args.home else data_home()
    study = read_study(args.study, home)
    if args.dry_run:
        return _dry_run(study)
    _check_world_models(study)
    print(f"study {study.path.name}: {len(study.configs)} run(s) of {len(study.benchmarks)} benchmark(s) into "
          f"{study.runs}")
    if args.check:
        for config in study.configs:
            control = f", control {config.control}" if config.control else ""
            print(f"  {config.source.benchmark:10s} {config.name} ({config.model}, {config.protocol or 'default'} "
                  f"protocol, frames {config.frame_policy}{control}) -> {Path(config.out).name}")
        return 0
    paths = run_study(_with_world(study, home), progress=not args.quiet)
    if args.no_report:
        print(f"runs: {study.runs}")
        return 0
    from bench.report.build import build_report

    index = build_report(paths, study.report, progress=not args.quiet)
    print(f"runs: {study.runs}\nreport: open {index} in a browser")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``study`` command."""
    parser = add_command(subparsers, "study", "score every run a study file lists, then build the report",
                         "Score every model set-up of a study file (and its shortcut controls) on every benchmark it "
                         "lists into one runs folder, then build the report. Resumable as a whole.", EXAMPLE)
    parser.add_argument("study", help="the study file (TOML)")
    parser.add_argument("--home", help="data folder {home} stands for (default: $FOILBENCH_HOME, else foilbench-data "
                                       "in the checkout)")
    parser.add_argument("--check", action="store_true", help="check the file and list its runs; score nothing")
    parser.add_argument("--dry-run", action="store_true",
                        help="print what each API model's runs would send (requests, images, estimated tokens per "
                             "benchmark); send and score nothing")
    parser.add_argument("--no-report", action="store_true", help="score only; build no report")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.set_defaults(func=run)
