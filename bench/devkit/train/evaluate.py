"""How well models do on the generated world, by foil type: every model scored through the runner
(:func:`bench.scoring.runner.score`), each item judged by its benchmark's metric module
(:func:`bench.metrics.dispatch.benchmark_outcomes`), the items pooled over benchmarks by their ``foil_type``.

Per item, a pair-scoring run (similarity, entail, loglik) is right when the caption scores above its foils: the
benchmark's headline outcome (:data:`HEADLINE`). A multiple-choice run (mc) scores the share of its text questions
(every clip, every order of the options) answered with a true option. Main items only (ViLMA's proficiency twins
aside).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from bench.config import DataSource, ScoreConfig
from bench.metrics.intervals import binomial_p_value, clopper_pearson

# benchmark -> the per-item outcome of a pair-scoring run that says "the caption beat its foils"
HEADLINE = {"vilma": "T", "vitatecs": "accuracy", "velociti": "ClassicVLE", "videocon": ("caption > contrast",
                                                                                        "accuracy"),
            "vinoground": "text"}
COLUMNS = ["run", "benchmark", "item_id", "subset", "foil_type", "value", "chance"]


@dataclass(frozen=True)
class Model:
    """A model as the runner scores it: its folder, family, protocol and frame policy."""

    path: str
    family: str
    protocol: str
    frames: str = "uniform:k=8"


def score_world(models: Mapping[str, Model], suite: Mapping, out: str | Path, *,
                benchmarks: Sequence[str] | None = None, limit: int | None = None,
                progress: bool = False) -> dict[str, list[Path]]:
    """Score every benchmark of ``suite`` (:func:`bench.devkit.world.ensure_sample`'s sets) with every model into
    ``out/<benchmark>-<run>`` (runs already stored are resumed); run name -> its run folders."""
    from bench.scoring.runner import score

    runs: dict[str, list[Path]] = {}
    for run, model in models.items():
        for name in benchmarks or list(suite):
            s = suite[name]
            source = DataSource.of(name, s.data_path, s.video_root, s.loader_options)
            runs.setdefault(run, []).append(Path(score(ScoreConfig(
                source, model.path, family=model.family, protocol=model.protocol, frames=model.frames,
                out=Path(out) / f"{name}-{run}", limit=limit, name=run, progress=progress))))
    return runs


def _pair_rows(items, stored, benchmark: str) -> pd.DataFrame:
    from bench.metrics.dispatch import benchmark_outcomes

    out = benchmark_outcomes(items, stored.pair, None, benchmark=benchmark)
    wanted = HEADLINE[benchmark]
    out = out[out["metric"].isin(wanted if isinstance(wanted, tuple) else (wanted,))]
    return out[["item_id", "value", "chance"]]


def _choice_rows(items, choice: pd.DataFrame) -> pd.DataFrame:
    truth = {it.item_id: it.truth for it in items}
    text = choice[(choice["axis"] == "text") & choice["item_id"].isin(truth)]
    right = [chosen in truth[i][q] for i, q, chosen in zip(text["item_id"], text["query"], text["choice"])]
    per = text.assign(value=np.array(right, float), chance=[1 / len(o) for o in text["options"]])
    return per.groupby("item_id", sort=False)[["value", "chance"]].mean().reset_index()


def item_rows(path: str | Path) -> pd.DataFrame:
    """One row per main item of a stored run: :data:`COLUMNS` (value 1 right, 0 wrong; a share for mc)."""
    from bench.store import read_run

    stored = read_run(path)
    benchmark = stored.manifest["benchmark"]
    items = [it for it in stored.items() if it.role == "main"]
    judged = _choice_rows(items, stored.choice) if stored.manifest.get("protocol") == "mc" else \
        _pair_rows(items, stored, benchmark)
    labels = pd.DataFrame([{"item_id": it.item_id, "subset": it.subset, "foil_type": it.labels.get("foil_type")}
                           for it in items])
    return judged.merge(labels, on="item_id").assign(run=stored.label, benchmark=benchmark)[COLUMNS]


def by_foil_type(rows: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Accuracy (%) per run and foil type pooled over benchmarks: Clopper-Pearson interval, number of items, mean
    chance (%) and the exact binomial test against it (``above``: chance below the interval)."""
    table = []
    for (run, foil_type), group in rows.groupby(["run", "foil_type"], sort=False):
        values = group["value"].to_numpy(float)
        n, right, chance = len(values), float(values.sum()), float(group["chance"].mean())
        low, high = clopper_pearson(right, n, level)
        table.append({"run": run, "foil_type": foil_type, "accuracy": 100 * right / n, "low": 100 * low,
                      "high": 100 * high, "n": n, "chance": 100 * chance,
                      "p": binomial_p_value(right, n, chance), "above": low > chance})
    return pd.DataFrame(table)


def answer_bias(paths: Sequence[str | Path]) -> pd.DataFrame:
    """How much each Video-LLM run leans to an answer, over every question it was asked (all benchmarks pooled): for
    entail runs the mean P(Yes) (``score``) and the share of "Yes" (P(Yes) > 1/2); for mc runs the share of "A"
    answers. One row per run: ``run``, ``protocol``, ``measure``, ``value`` (%), ``n``."""
    from bench.store import read_run

    rows: dict[tuple[str, str], list[np.ndarray]] = {}
    for path in paths:
        stored = read_run(path)
        protocol = stored.manifest.get("protocol")
        if protocol == "entail":
            score = stored.pair["score"].dropna().to_numpy(float)
            rows.setdefault((stored.label, "P(Yes)"), []).append(score)
            rows.setdefault((stored.label, "share Yes"), []).append((score > 0.5).astype(float))
        elif protocol == "mc":
            answered = stored.choice[stored.choice["choice"] >= 0]
            first = [options[0] == chosen for options, chosen in zip(answered["options"], answered["choice"])]
            rows.setdefault((stored.label, "share A"), []).append(np.array(first, float))
    table = []
    for (run, measure), parts in rows.items():
        values = np.concatenate(parts)
        table.append({"run": run, "measure": measure, "value": 100 * float(values.mean()), "n": len(values)})
    return pd.DataFrame(table, columns=["run", "measure", "value", "n"])
