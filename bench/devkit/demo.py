"""The demo: the main job on the generated world, and the lesson of the five papers in one table.

The world's five benchmarks (every file in its released format, every item labelled with the ``foil_type`` its foil
changes) are scored by small models trained offline on a disjoint part of the world (:mod:`bench.devkit.train`),
each loaded by path through the backends a real checkpoint goes through: an order-blind CLIP (frame embeddings
averaged), an order-aware X-CLIP (also fed its frames backwards: the control), a Qwen2-VL asked Yes/No and A/B
(each also with no frames at all: what its language prior alone gets right) and a variant of it taught to lean to "Yes"
and "A". The runs are pooled over benchmarks by foil type (:mod:`bench.metrics.pooled`) and the report of all five
papers is built from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

import pandas as pd


@dataclass(frozen=True)
class Setup:
    """One demo set-up: a trained model (:data:`bench.devkit.train.build.MODELS`), the protocol it is asked through
    and the frame policy."""

    model: str
    protocol: str
    frame_policy: str = "uniform:k=8"


# run name -> set-up; every set-up scores every benchmark, and its runs are pooled under this name
DEMO_RUNS: dict[str, Setup] = {
    "CLIP": Setup("clip-world", "similarity"),
    "X-CLIP": Setup("xclip-world", "similarity"),
    "CLIP shuffled": Setup("clip-world", "similarity", "uniform:k=8,order=shuffle"),
    "X-CLIP shuffled": Setup("xclip-world", "similarity", "uniform:k=8,order=shuffle"),
    "X-CLIP reversed": Setup("xclip-world", "similarity", "uniform:k=8,order=reverse"),
    "Qwen2-VL Yes/No": Setup("qwen2vl-world", "entail"),
    "Qwen2-VL A/B": Setup("qwen2vl-world", "mc"),
    "Qwen2-VL blind": Setup("qwen2vl-world", "entail", "none"),
    "Qwen2-VL blind A/B": Setup("qwen2vl-world", "mc", "none"),
    "biased Yes/No": Setup("qwen2vl-world-biased", "entail"),
    "biased A/B": Setup("qwen2vl-world-biased", "mc"),
}
DEMO_MODELS = list(dict.fromkeys(s.model for s in DEMO_RUNS.values()))  # the trained models the set-ups use, in order
TABLE_RUNS = ["CLIP", "X-CLIP", "X-CLIP reversed", "Qwen2-VL Yes/No", "Qwen2-VL A/B", "Qwen2-VL blind",
              "Qwen2-VL blind A/B"]
# items per benchmark each set-up scores (spread over the file), so that the demo fits in minutes on two cores;
# ``full`` scores every item
DEMO_ITEMS = {"contrastive": 300, "xclip": 300, "videollm": 150}


def score_world(out: Path, samples: Mapping, home: Path, *, ready: Callable[[str], object] = lambda name: None,
                full: bool = False, progress: bool = True) -> list[Path]:
    """Score every benchmark of ``samples`` with every :data:`DEMO_RUNS` set-up into ``out/<benchmark>-<run>``, the
    trained models in ``home``'s models folder, :data:`DEMO_ITEMS` items per benchmark unless ``full``. Runs already
    stored are resumed, not redone; clips are decoded once for every run that asks them with the same frame policy and
    size, and each model is loaded once; the runner's own messages go to ``out/demo.log``. The set-ups are scored
    model by model in :data:`DEMO_MODELS`' order, ``ready(name)`` called before each run of model ``name`` (it builds
    the model, or waits for a build under way); the run folders come back in :data:`DEMO_RUNS`' order, benchmark by
    benchmark."""
    from bench.devkit.train import evaluate
    from bench.devkit.train.build import MODELS, models_home

    models, names = {}, {}
    for run in sorted(DEMO_RUNS, key=lambda run: DEMO_MODELS.index(DEMO_RUNS[run].model)):  # a model's runs together
        setup = DEMO_RUNS[run]
        family, folder = MODELS[setup.model].family, str(models_home(home) / setup.model)
        names[folder] = setup.model
        models[run] = evaluate.Model(folder, family, setup.protocol, setup.frame_policy,
                                     limit=None if full else DEMO_ITEMS[family], spread=not full)
    out.mkdir(parents=True, exist_ok=True)
    paths = evaluate.score_world(models, samples, out, bar=progress, log=out / "demo.log",
                                 before=lambda folder: ready(names[folder]))
    order = [f"{benchmark}-{evaluate.folder_name(run)}" for run in DEMO_RUNS for benchmark in samples]
    return sorted(paths, key=lambda path: order.index(path.name))


def build_estimate(names: list[str], home: Path) -> str:
    """What building ``names`` into ``home`` will take, from what the last builds there measured (each model's stamp
    records its build's duration)."""
    from bench.devkit.train.build import build_seconds, is_current, needed

    todo = [n for n in needed(names) if not is_current(n, home)]
    if not todo:
        return "already built"
    measured = {n: build_seconds(n, home) for n in todo}
    if any(v is None for v in measured.values()):
        return f"building {', '.join(todo)} now; never built in this data home, so no measured time to go by"
    return f"rebuilding {', '.join(todo)}: about {sum(measured.values()):.0f} s, as their last build here took"


def reference_line(names: list[str], home: Path) -> str:
    """Whether the models built in ``home`` are, byte for byte, those the README's lessons were measured with (its
    default seed's column; :func:`bench.devkit.train.build.reference`)."""
    from bench.devkit.train import crosscheck
    from bench.devkit.train.build import DEFAULT_SEED, VERSION, fingerprint, models_home, reference

    recorded = reference()
    if not all(name in recorded for name in names):
        return f"no fingerprints of build {VERSION}'s models are recorded: nothing to compare them with"
    mine = {name: fingerprint(models_home(home) / name) for name in names}
    if all(mine[name] == recorded[name] for name in names):
        return ("the same bytes as the models the README's lessons were measured with: expect its "
                f"seed-{DEFAULT_SEED} column")
    known = [machine for machine, found in crosscheck.recorded().items() if found.get("version") == VERSION
             and all(found.get("models", {}).get(name) == mine[name] for name in names)]
    return ("not the bytes the README's lessons were measured with (another CPU, torch or transformers drew other "
            f"weights{'; the bytes recorded on ' + known[0] if known else ''}): expect its ranges over seeds, not its "
            f"seed-{DEFAULT_SEED} column (where the builds part: python -m bench.devkit.train.crosscheck)")


def foil_type_table(pooled: pd.DataFrame, runs: list[str] | None = None) -> str:
    """Foil types x set-ups (:func:`bench.metrics.pooled.pooled_table` rows): accuracy in % (a tied item is not told
    apart; ``*``: chance below the interval) with its 95 % interval; then, per
    set-up, its items, the items a tie decided and the range of the chance level."""
    runs = [r for r in (runs or TABLE_RUNS) if r in set(pooled["run"])]
    rows = pooled[pooled["run"].isin(runs)]
    kinds = list(dict.fromkeys(sorted(rows["value"])))
    cell = {(r.run, r.value): f"{r.accuracy:.0f}{'*' if r.above else ' '} [{r.low:.0f}-{r.high:.0f}]"
            for r in rows.itertuples()}
    shown = pd.DataFrame({run: [cell.get((run, k), "") for k in kinds] for run in runs}, index=kinds)
    totals = rows.groupby("run")[["n", "tied"]].sum()
    chance = rows.groupby("run")["chance"].agg(["min", "max"])
    shown.loc["items"] = [str(int(totals.at[r, "n"])) for r in runs]
    shown.loc["tied"] = [str(int(totals.at[r, "tied"])) for r in runs]
    shown.loc["chance"] = [f"{chance.at[r, 'min']:.0f}" + (f"-{chance.at[r, 'max']:.0f}"
                                                           if round(chance.at[r, "max"]) != round(chance.at[r, "min"])
                                                           else "") for r in runs]
    shown.index.name = "foil type"
    return shown.to_string()


def tie_lines(runs: list) -> list[str]:
    """The warning about the stored runs whose ties decided a notable share of their items
    (:func:`bench.metrics.dispatch.run_ties`): a heading with the likely causes, then one line per run (none when
    no run's ties are notable)."""
    from bench.metrics.dispatch import run_ties
    from bench.metrics.ties import TIE_CAUSES, notable, tied_items

    found = [(run, *run_ties(run)) for run in runs]
    lines = [f"  {run.label} on {run.manifest.benchmark}: {tied_items(tied, n)}" for run, tied, n in found
             if notable(tied, n)]
    return [f"Runs whose true and false texts scored exactly alike on many items (ties, judged not told apart on "
            f"every surface; likely causes: {TIE_CAUSES}):", *lines] if lines else []


def both_orders_lines(right: pd.DataFrame) -> list[str]:
    """The multiple-choice runs' share right in both option orders
    (:func:`bench.devkit.train.evaluate.both_orders`) in words, one line per run."""
    return [f"  {run:18s} " + ", ".join(f"{r.benchmark} {r.value:5.1f} % ({r.n} items)" for r in rows.itertuples())
            for run, rows in right.groupby("run", sort=False)]


def bias_lines(bias: pd.DataFrame) -> list[str]:
    """The answer-bias table (:func:`bench.devkit.train.evaluate.answer_bias`) in words, one line per run and measure:
    a share over the answers that chose, with the tied ones (neither) counted; a run whose answers all tied is named
    as such, not given a share."""
    lines = []
    for r in bias.itertuples():
        if r.measure != "P(Yes)" and r.tied == r.n and r.n:
            lines.append(f"  {r.run:18s} {r.measure:10s}   -    every one of its {r.n} answers tied (no answer "
                         f"chosen: {'P(Yes) = P(No)' if r.measure == 'share Yes' else 'its letters scored alike'}), "
                         "not a bias")
            continue
        tied = f", {r.tied} tied: neither" if r.tied and r.measure != "P(Yes)" else ""
        lines.append(f"  {r.run:18s} {r.measure:10s} {r.value:5.1f} %  ({r.n} answers{tied})")
    return lines
