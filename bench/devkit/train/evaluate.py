"""How well models do on the generated world, by foil type: each model scored through the runner and its adapter,
each item judged by its benchmark's metric module, the items pooled over benchmarks by their ``foil_type``.

Per item, a pair-scoring run (contrastive, xclip, entail) is right when the caption scores above its foils (the
benchmark's headline outcome: ViLMA "T", VITATECS "accuracy", VELOCITI "ClassicVLE", VideoCon "caption > contrast" /
ATP-Hard "accuracy", Vinoground "text"); a multiple-choice run (mc) scores the share of its text questions (every
clip, every order of the options) answered with a true option. Main items only (ViLMA's proficiency twins aside).
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

import numpy as np
import pandas as pd

from bench.frames import policy
from bench.metrics.intervals import bootstrap_ci

HEADLINE = {"T", "accuracy", "ClassicVLE", "caption > contrast", "text"}
CHOICE_ADAPTERS = {"mc"}


def _pair_rows(items, pair: pd.DataFrame, benchmark: str) -> pd.DataFrame:
    from bench.metrics.tables import benchmark_outcomes

    out = benchmark_outcomes(items, pair, None, benchmark=benchmark)
    return out[out["metric"].isin(HEADLINE)][["item_id", "value", "chance"]]


def _choice_rows(items, choice: pd.DataFrame) -> pd.DataFrame:
    truth = {it.item_id: it.truth for it in items}
    text = choice[choice["axis"] == "text"]
    right = [chosen in truth[i][q] for i, q, chosen in zip(text["item_id"], text["query"], text["choice"])]
    per = text.assign(value=np.array(right, float), chance=[1 / len(o) for o in text["options"]])
    return per.groupby("item_id", sort=False)[["value", "chance"]].mean().reset_index()


def evaluate(models: Mapping[str, tuple[str, str]], suite: Mapping, out: str | Path, *,
             benchmarks: list[str] | None = None, limit: int | None = None, progress: bool = False) -> pd.DataFrame:
    """Score every benchmark of ``suite`` (:func:`bench.devkit.world.ensure_sample`'s sets) with every model of
    ``models`` (run name -> (adapter, model folder)) into runs under ``out``; one row per (run, main item): run,
    benchmark, item_id, subset, foil_type, value (1 right, 0 wrong; a share for mc), chance."""
    from bench.loaders import load
    from bench.runstore import read_run
    from bench.scoring.run import score

    rows = []
    for run, (adapter, model) in models.items():
        for name in benchmarks or list(suite):
            s = suite[name]
            folder = score(name, s.data_path, model, adapter, video_root=s.video_root, loader_options=s.loader_options,
                           frame_policy=policy("uniform", k=8), out=Path(out) / f"{name}-{run}", limit=limit,
                           name=run, progress=progress)
            stored = read_run(folder)
            items = [it for it in load(name, s.data_path, video_root=s.video_root, **s.loader_options)
                     if it.role == "main"]
            judged = _choice_rows(items, stored.choice) if adapter in CHOICE_ADAPTERS else \
                _pair_rows(items, stored.pair, name)
            labels = pd.DataFrame([{"item_id": it.item_id, "subset": it.subset,
                                    "foil_type": it.labels.get("foil_type")} for it in items])
            rows.append(judged.merge(labels, on="item_id").assign(run=run, benchmark=name))
    columns = ["run", "benchmark", "item_id", "subset", "foil_type", "value", "chance"]
    return pd.concat(rows, ignore_index=True)[columns]


def by_foil_type(rows: pd.DataFrame, n_boot: int = 1000) -> pd.DataFrame:
    """Accuracy (%) per run and foil type with a 95% bootstrap interval, the number of items and chance (%)."""
    table = []
    for (run, foil_type), group in rows.groupby(["run", "foil_type"], sort=False):
        values = group["value"].to_numpy(float)
        low, high = bootstrap_ci(values, n_boot=n_boot)
        table.append({"run": run, "foil_type": foil_type, "accuracy": 100 * values.mean(), "low": 100 * low,
                      "high": 100 * high, "n": len(values), "chance": 100 * group["chance"].mean()})
    return pd.DataFrame(table)
