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

import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import pandas as pd

if TYPE_CHECKING:
    from bench.config import ScoreConfig
    from bench.devkit.train.evaluate import Model


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


def _stage(run: str) -> int:
    """When a set-up's model is built: its place in :data:`DEMO_MODELS` (a copy of a model, such as the biased
    Qwen2-VL, with the model it copies)."""
    from bench.devkit.train.build import MODELS

    model = DEMO_RUNS[run].model
    return DEMO_MODELS.index(MODELS[model].base or model)


def scoring_order(benchmarks: Sequence[str]) -> list[tuple[str, str]]:
    """(run, benchmark) of every set-up on every benchmark, in the order the demo scores them: model by model in the
    order they are built (:func:`_stage`), and within one model's set-ups benchmark by benchmark, so that a benchmark's
    runs are all stored as soon as the builds allow and its report notebook can run while the others score."""
    runs, benchmarks = list(DEMO_RUNS), list(benchmarks)
    pairs = [(run, benchmark) for run in runs for benchmark in benchmarks]
    return sorted(pairs, key=lambda p: (_stage(p[0]), benchmarks.index(p[1]), runs.index(p[0])))


def demo_model(run: str, home: Path, *, full: bool = False) -> Model:
    """How the set-up ``run`` of :data:`DEMO_RUNS` is scored (:class:`bench.devkit.train.evaluate.Model`): its trained
    model in ``home``'s models folder, :data:`DEMO_ITEMS` items per benchmark unless ``full``."""
    from bench.devkit.train import evaluate
    from bench.devkit.train.build import MODELS, models_home

    setup = DEMO_RUNS[run]
    family = MODELS[setup.model].family
    return evaluate.Model(str(models_home(home) / setup.model), family, setup.protocol, setup.frame_policy,
                          limit=None if full else DEMO_ITEMS[family], spread=not full)


def demo_configs(out: Path, samples: Mapping, home: Path, *,
                 full: bool = False) -> dict[tuple[str, str], ScoreConfig]:
    """The run of each (run, benchmark) of :func:`scoring_order`, in that order, into ``out/<benchmark>-<run>``
    (:func:`demo_model`)."""
    from bench.devkit.train import evaluate

    return {(run, benchmark): evaluate.world_configs({run: demo_model(run, home, full=full)}, samples, out,
                                                     benchmarks=[benchmark])[0]
            for run, benchmark in scoring_order(list(samples))}


def score_world(out: Path, samples: Mapping, home: Path, *, ready: Callable[[str], object] = lambda name: None,
                full: bool = False, progress: bool = True,
                finished: Callable[[str, list[Path]], object] = lambda benchmark, paths: None,
                lane: tuple[Path, str] | None = None, spare: Callable[[], object] = lambda: None) -> list[Path]:
    """Score every benchmark of ``samples`` with every :data:`DEMO_RUNS` set-up (:func:`demo_configs`). Runs already
    stored are resumed, not redone; clips are decoded once for every run that asks them with the same frame policy and
    size, and each model is loaded once; the runner's own messages go to ``out/demo.log``. The set-ups are scored in
    :func:`scoring_order`, ``ready(name)`` called before each run of model ``name`` (it builds the model, or waits
    for a build under way) and ``finished(benchmark, paths)`` once every run of a benchmark is stored. With ``lane``
    (the world's folder and size), the last models' set-ups are shared, benchmark by benchmark, with a second process
    (:class:`bench.devkit.lane.Lane`, started when they are reached), which scores on the core the build leaves when it
    ends: the benchmarks whose earlier set-ups cost this process the most CPU time are handed out first, so that the
    two end close together, and ``spare()`` is called when this process has nothing left to score but the other
    still scores; should the other fail, this process says so in one line on stderr and scores what it left. The run
    folders come back in :data:`DEMO_RUNS`' order, benchmark by benchmark."""
    from bench.devkit.lane import Lane
    from bench.devkit.train import evaluate
    from bench.scoring.console import progress_bar

    configs = demo_configs(out, samples, home, full=full)
    names = {config.model: DEMO_RUNS[run].model for (run, _), config in configs.items()}
    last = max(_stage(run) for run, _ in configs)
    shared = [run for run in DEMO_RUNS if _stage(run) == last] if lane else []  # in DEMO_RUNS' order
    queue = list(dict.fromkeys(benchmark for run, benchmark in configs if run in shared))  # taken from the front
    cost = dict.fromkeys(samples, 0.0)  # CPU seconds this process spent on each benchmark's runs
    clock = [time.process_time()]
    left = {benchmark: sum(b == benchmark for _, b in configs) for benchmark in samples}
    by_folder = {Path(config.out).resolve(): config for config in configs.values()}
    stored: dict[str, list[Path]] = {}
    done: set[Path] = set()  # the run folders stored, by either process
    lock = threading.Lock()
    helpers: list[Lane] = []
    console = sys.stderr  # while scoring, the runner's messages go to the log instead

    def take() -> str | None:
        with lock:
            return queue.pop(0) if queue else None

    def after(config, path: Path) -> None:  # a run of either process is stored
        benchmark = config.source.benchmark
        with lock:
            stored.setdefault(benchmark, []).append(path)
            done.add(Path(config.out).resolve())
            left[benchmark] -= 1
            complete = not left[benchmark]
        if complete:
            finished(benchmark, stored[benchmark])

    def ours(config, path: Path) -> None:  # a run this process stored
        now = time.process_time()
        cost[config.source.benchmark] += now - clock[0]
        clock[0] = now
        after(config, path)

    def theirs(path: Path) -> None:  # a run the second process stored
        shown.update()
        after(by_folder[path.resolve()], path)

    def mine():
        """This process's runs: every set-up but the shared ones, then the shared ones of the benchmarks it takes."""
        yield from (c for (run, _), c in configs.items() if run not in shared)
        queue.sort(key=lambda benchmark: -cost[benchmark])  # the costliest first (stable: ties in order)
        if queue:
            world, size = lane
            request = {"out": str(out), "home": str(home), "world": str(world), "size": size,
                       "models": {run: asdict(demo_model(run, home, full=full)) for run in shared}}
            helpers.append(Lane(request, take, theirs, out / "demo.log"))
        while (benchmark := take()) is not None:
            yield from (c for (run, b), c in configs.items() if run in shared and b == benchmark)
        if helpers:
            spare()
            failed = helpers[0].wait()
            if failed:  # its share is scored here: what it stored is kept, a run it left half done resumes
                print(f"{failed}: scoring its share here", file=console)
                yield from (c for c in configs.values() if Path(c.out).resolve() not in done)

    out.mkdir(parents=True, exist_ok=True)
    with progress_bar(total=len(configs), desc="scoring", unit="run", disable=not progress) as shown:
        try:
            evaluate.score_configs(mine(), bar=shown, log=out / "demo.log",
                                   before=lambda folder: ready(names[folder]), after=ours)
        finally:
            for helper in helpers:
                helper.close()
    order = [f"{benchmark}-{evaluate.folder_name(run)}" for run in DEMO_RUNS for benchmark in samples]
    return sorted((p for runs in stored.values() for p in runs), key=lambda path: order.index(path.name))


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
