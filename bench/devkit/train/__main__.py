"""Build the world's trained models (timed) and score them on the world's suite through the runner; print the
accuracy by foil type with intervals and the Video-LLMs' answer bias.

    python -m bench.devkit.train [--size full|small] [--home DIR] [--limit N] [--out DIR]

``--limit N`` scores the Video-LLM runs on the first N items of each benchmark (they score many prompts per item).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd

from bench.devkit.train.build import MODELS, models_home, trained_model
from bench.devkit.train.evaluate import Model, answer_bias, score_world
from bench.devkit.world import ensure_sample
from bench.metrics.pooled import item_scores, pooled_table
from bench.store import read_run


def runs_of(home: str | Path | None = None) -> dict[str, Model]:
    """Every trained model with each protocol it is meant for, as runs named ``<model>`` or ``<model>-<protocol>``
    (built first when needed)."""
    runs = {}
    for name, spec in MODELS.items():
        path = str(trained_model(name, home))
        for protocol in spec.protocols:
            runs[name if len(spec.protocols) == 1 else f"{name}-{protocol}"] = Model(path, spec.family, protocol)
    return runs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.devkit.train", description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="full", choices=("small", "full"))
    parser.add_argument("--home", default=None, help="where models/ lives (default: the data home)")
    parser.add_argument("--out", default=None, help="where the runs go (default: <home>/models/runs-<size>)")
    parser.add_argument("--limit", type=int, default=None, help="items per benchmark for the Video-LLM runs")
    args = parser.parse_args(argv)
    times = {}
    for name in MODELS:
        start = time.perf_counter()
        trained_model(name, args.home)
        times[name] = time.perf_counter() - start
    suite = ensure_sample(size=args.size)
    out = Path(args.out) if args.out else models_home(args.home) / f"runs-{args.size}"
    models = {run: replace(model, limit=args.limit) if model.family == "videollm" else model
              for run, model in runs_of(args.home).items()}
    paths = score_world(models, suite, out, progress=True)
    rows = pd.concat([item_scores(read_run(p)) for p in paths], ignore_index=True)
    with pd.option_context("display.width", 160, "display.max_rows", 500, "display.float_format", "{:.1f}".format):
        for table in (pooled_table(rows, "foil_type"), pooled_table(rows.assign(foil_type="all"), "foil_type")):
            print(table.drop(columns=["label", "p"]).to_string(index=False))
        print(answer_bias(paths).to_string(index=False))
    print("build time (s): " + ", ".join(f"{name} {t:.0f}" for name, t in times.items()) +
          f"; total {sum(times.values()):.0f}")


if __name__ == "__main__":
    main()
