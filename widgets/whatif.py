"""The pair viewer's "what if" panel, Python side: the models it asks (the runs' models, each as its run asked it)
and the re-scoring of an item's edited texts under a control, through :func:`bench.scoring.probe.probe`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from bench.items import Item
from bench.scoring.probe import probe, run_setup
from bench.scoring.warm import WarmModels
from bench.store import Run
from bench.store.probes import append_probes

PAIR_PROTOCOLS = ("similarity", "entail", "loglik")


@dataclass
class Target:
    """A model the panel can ask: its label, the :func:`probe` arguments of its run, and that run (whose stored
    scores show beside the new ones; None when the run stores no per-text score, e.g. a Video-LLM asked A/B)."""

    label: str
    setup: dict[str, Any]
    run: Run | None


def _plain(run: Run) -> bool:
    """Whether a run sees its frames as sampled (no shortcut control: frames, in their order)."""
    frames = run.manifest.frame_policy or {}
    return frames.get("name") != "none" and "order" not in frames


def targets_of(runs: Sequence[Run]) -> list[Target]:
    """One target per model of ``runs``, in run order, asked as its first run with per-text scores and frames as
    sampled asks it (else as its first run)."""
    by_model: dict[str, list[Run]] = {}
    for run in runs:
        if run.manifest.model and run.manifest.family:
            by_model.setdefault(str(run.manifest.model), []).append(run)
    found = []
    for model, own in by_model.items():
        scored = [r for r in own if r.manifest.protocol in PAIR_PROTOCOLS]
        run = next((r for r in scored if _plain(r)), scored[0] if scored else own[0])
        found.append(Target(Path(model).name, run_setup(run.manifest), run if scored else None))
    return found


def stored_scores(item: Item, run: Run | None, clip: int, texts: Sequence[str]) -> list[float | None]:
    """The score ``run`` stores for each of ``texts`` that is one of the item's own texts, on ``clip`` (None for a
    new or edited text, or no such score)."""
    if run is None or run.pair is None or not len(run.pair):
        return [None] * len(texts)
    rows = run.pair[(run.pair["item_id"] == item.item_id) & run.pair["clip"].isin([clip, -1])]
    by_index = dict(zip(rows["text"].astype(int), rows["score"].astype(float)))
    own = {text: n for n, text in reversed(list(enumerate(item.texts)))}
    found = [by_index.get(own[t]) if t in own else None for t in texts]
    return [None if v is None or not np.isfinite(v) else v for v in found]


def rescore(item: Item, targets: Sequence[Target], texts: Sequence[str], control: str, clip: int,
            models: WarmModels, keep: bool, shown: Callable[[dict], None]) -> None:
    """Ask every target about ``texts`` on the item's ``clip`` under ``control``, one model at a time; each
    result (scores, stored scores, or the error in one line) goes to ``shown`` as it comes, and, when ``keep``,
    to ``probes.parquet``."""
    for target in targets:
        row = {"target": target.label, "control": control, "texts": list(texts), "scores": [],
               "stored": stored_scores(item, target.run, clip, texts), "error": ""}
        try:
            found = probe(video=item.clips[clip], texts=texts, control=control, models=models, **target.setup)
        except Exception as err:  # noqa: BLE001 - one model's failure is shown in its column, the others go on
            row["error"] = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        else:
            row["scores"] = found.scores
            if keep:
                append_probes(found.records())
        shown(row)


def fit_note(target: Target, models: WarmModels) -> str:
    """Why the target's model cannot be asked on this machine (too big for the memory free, or not found), or ""."""
    from bench.scoring.hub import locate
    from bench.scoring.devices import resolve_device

    try:
        return models.too_big(locate(target.setup["model"]), "auto", resolve_device("auto")) or ""
    except ValueError as err:
        return str(err).splitlines()[0]
