"""Lessons over seeds: the demo's models trained with several build seeds, each scored as the demo scores it, and the
"What the demo shows" table written with each lesson as a range over the seeds beside the default seed's value.

    python -m bench.devkit.lessons [--seeds 0,1,2] [--home DIR] [--out docs/demo-lessons.md] [--size full]
                                   [--readme README.md]

With ``--readme`` at full scale it also records the default seed's models' fingerprints
(:func:`bench.devkit.train.build.write_reference`), which the demo compares its own models with.

Each seed's models and runs live in ``<home>/seeds/<seed>`` (built on first use, reused after); the default seed's are
the demo's own (``<home>/models``, ``<home>/runs/sample-<size>``), so that a finished demo is not redone; the world
is the demo's (``<home>/sample-<size>``). A lesson is one cell of the demo's table (a set-up's accuracy on a foil
type) or one answer-bias measure.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from bench.devkit.train.build import DEFAULT_SEED

BOTH = "both orders"


@dataclass(frozen=True)
class Lesson:
    """One number the demo shows: ``run``'s accuracy on foil type ``foil`` (%), or its answer-bias ``measure``
    (:data:`BOTH`: its share of VITATECS's and VELOCITI's A/B questions right in both option orders; ``BOTH`` and a
    benchmark's name: that benchmark's alone)."""

    text: str
    run: str
    foil: str | None = None
    measure: str | None = None


LESSONS = [
    Lesson("X-CLIP, accuracy on `order`", "X-CLIP", foil="order"),
    Lesson("X-CLIP, accuracy on `state`", "X-CLIP", foil="state"),
    Lesson("X-CLIP, accuracy on `actor`", "X-CLIP", foil="actor"),
    Lesson("X-CLIP with reversed frames, accuracy on `order`", "X-CLIP reversed", foil="order"),
    Lesson("CLIP, accuracy on `order`", "CLIP", foil="order"),
    Lesson("CLIP, accuracy on `attribute` (colours)", "CLIP", foil="attribute"),
    Lesson("Qwen2-VL Yes/No, accuracy on `order`", "Qwen2-VL Yes/No", foil="order"),
    Lesson("Qwen2-VL Yes/No, accuracy on `state`", "Qwen2-VL Yes/No", foil="state"),
    Lesson("Qwen2-VL Yes/No, accuracy on `actor`", "Qwen2-VL Yes/No", foil="actor"),
    Lesson("Qwen2-VL A/B, right in both orders (VITATECS, VELOCITI; chance 25 %)", "Qwen2-VL A/B", measure=BOTH),
    Lesson("Qwen2-VL A/B, right in both orders on VITATECS", "Qwen2-VL A/B", measure=f"{BOTH} vitatecs"),
    Lesson("Qwen2-VL A/B, right in both orders on VELOCITI", "Qwen2-VL A/B", measure=f"{BOTH} velociti"),
    Lesson("Qwen2-VL A/B, share of A", "Qwen2-VL A/B", measure="share A"),
    Lesson("Qwen2-VL blind A/B, right in both orders (no frames)", "Qwen2-VL blind A/B", measure=BOTH),
    Lesson("Qwen2-VL Yes/No, P(Yes)", "Qwen2-VL Yes/No", measure="P(Yes)"),
    Lesson("biased A/B, share of A", "biased A/B", measure="share A"),
]


def seed_values(pooled: pd.DataFrame, bias: pd.DataFrame, right: pd.DataFrame) -> dict[str, float]:
    """Each lesson's value (%) in one seed's pooled table (:func:`bench.metrics.pooled.pool_runs` by foil type), answer
    bias (:func:`bench.devkit.train.evaluate.answer_bias`) and A/B in both orders
    (:func:`bench.devkit.train.evaluate.both_orders`, pooled over its benchmarks and per benchmark); a lesson the runs
    do not hold is left out."""
    accuracy = {(r.run, r.value): float(r.accuracy) for r in pooled.itertuples()}
    measured = {(r.run, r.measure): float(r.value) for r in bias.itertuples()}
    for run, rows in right.groupby("run"):
        measured[run, BOTH] = float((rows["value"] * rows["n"]).sum() / rows["n"].sum())
        measured.update({(run, f"{BOTH} {r.benchmark}"): float(r.value) for r in rows.itertuples()})
    found = {}
    for lesson in LESSONS:
        key = (lesson.run, lesson.foil) if lesson.foil else (lesson.run, lesson.measure)
        value = (accuracy if lesson.foil else measured).get(key)
        if value is not None and value == value:  # NaN: a share of answers that all tied (no answer chosen)
            found[lesson.text] = value
    return found


def lessons_table(values: dict[int, dict[str, float]], default: int = DEFAULT_SEED) -> str:
    """The Markdown table: each lesson with the default seed's value and its range over every seed in ``values``
    (seed -> :func:`seed_values`)."""
    seeds = sorted(values)
    lines = [f"| lesson | seed {default} | range over seeds {', '.join(map(str, seeds))} |", "| --- | ---: | ---: |"]
    for lesson in LESSONS:
        found = [values[s][lesson.text] for s in seeds if lesson.text in values[s]]
        if not found:
            continue
        own = values.get(default, {}).get(lesson.text)
        lines.append(f"| {lesson.text} | {'' if own is None else f'{own:.0f} %'} | "
                     f"{min(found):.0f}-{max(found):.0f} % |")
    return "\n".join(lines)


def measure_seed(seed: int, home: Path, samples, scale, size: str = "full", progress: bool = True) -> dict[str, float]:
    """Build the demo's models with ``seed`` into ``home/seeds/<seed>`` (the default seed at full scale: the demo's
    own ``home``), score the demo's set-ups there (runs kept and resumed) and return :func:`seed_values`."""
    from bench.devkit.demo import DEMO_MODELS, score_world
    from bench.devkit.train.build import trained_model, trained_models
    from bench.devkit.train.evaluate import answer_bias, both_orders
    from bench.metrics.pooled import pool_runs
    from bench.store import read_run

    demo = seed == DEFAULT_SEED and scale.steps == 1
    own = home if demo else home / "seeds" / str(seed)
    trained_models(DEMO_MODELS, own, seed=seed, scale=scale, progress=progress)
    runs = own / "runs" / f"sample-{size}" if demo else own / "runs"
    paths = score_world(runs, samples, own, ready=lambda name: trained_model(name, own, seed=seed, scale=scale,
                                                                             progress=False), progress=progress)
    return seed_values(pool_runs([read_run(p) for p in paths], "foil_type"), answer_bias(paths), both_orders(paths))


def write(path: Path, table: str, seeds: list[int], scale) -> None:
    """The lessons page: what it is, how it was made, the table."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "# What the demo shows, over build seeds\n\n"
        "Each lesson of `foilbench demo` (accuracy in % pooled over the five benchmarks, or an answer-bias share) for "
        f"the default build seed {DEFAULT_SEED} and its range over seeds {', '.join(map(str, seeds))}. A seed draws "
        "the models' initial weights, the training split and the order of training steps. Written by "
        f"`python -m bench.devkit.lessons --seeds {','.join(map(str, seeds))}`"
        f"{'' if scale.steps == 1 else f' (scale {scale.steps})'}. The models are built with their kernels pinned "
        "(torch's AVX2 kernels, MKL's AVX2 branch on Intel CPUs and its AUTO branch on others, oneDNN off), so "
        "that a seed draws the same weights on a machine whatever else runs; another kind of CPU can draw others, "
        f"like another seed. `foilbench demo` says whether its models are, byte for byte, the seed-{DEFAULT_SEED} "
        "models measured here.\n\n" + table + "\n")


START, END = "<!-- lessons: start -->", "<!-- lessons: end -->"


def into_readme(text: str, table: str) -> str:
    """``text`` (a README) with the lines between its :data:`START` and :data:`END` markers replaced by ``table``."""
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise ValueError(f"the README needs one {START} line and one {END} line after it")
    head, rest = text.split(START)
    return head + START + "\n" + table + "\n" + END + rest.split(END, 1)[1]


def main(argv: list[str] | None = None) -> None:
    from bench.devkit.demo import DEMO_MODELS
    from bench.devkit.train.build import FULL, shrunk, write_reference
    from bench.devkit.train.pinned import passive_waits
    from bench.devkit.world import ensure_sample
    from bench.paths import data_home

    parser = argparse.ArgumentParser(prog="python -m bench.devkit.lessons", description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated build seeds (default 0,1,2)")
    parser.add_argument("--home", help="data folder (default: the data home)")
    parser.add_argument("--out", default="docs/demo-lessons.md", help="the page written (default docs/demo-lessons.md)")
    parser.add_argument("--size", default="full", choices=("small", "full"), help="the world's size (default full)")
    parser.add_argument("--scale", type=float, default=1.0, help="share of the training split and steps (tests)")
    parser.add_argument("--readme", help="also put the table into this README, between its lessons markers")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    try:
        seeds = sorted({int(s) for s in args.seeds.split(",") if s.strip()})
    except ValueError:
        parser.error(f"--seeds takes comma-separated integers, got {args.seeds!r}")
    if len(seeds) < 2 or DEFAULT_SEED not in seeds:
        parser.error(f"--seeds needs at least two seeds, {DEFAULT_SEED} among them; got {args.seeds!r}")
    try:
        scale = shrunk(args.scale)
    except ValueError as bad:
        parser.error(str(bad))
    passive_waits()
    home = Path(args.home).expanduser().resolve() if args.home else data_home()
    samples = ensure_sample(home / f"sample-{args.size}", size=args.size)
    values = {seed: measure_seed(seed, home, samples, scale, args.size, not args.quiet) for seed in seeds}
    table = lessons_table(values)
    write(Path(args.out), table, seeds, scale)
    print(table)
    print(f"written: {args.out}")
    if args.readme:
        readme = Path(args.readme)
        readme.write_text(into_readme(readme.read_text(), table))
        print(f"written: the table in {readme}")
        if scale == FULL:
            print(f"written: {write_reference(DEMO_MODELS, home)}")


if __name__ == "__main__":
    main()
