"""What the report says about a run: its manifest in words (model, family, protocol, frames, prompt, commit, date) and
its failure count, and the choice of each run's headline number."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from bench.registry import names, spec
from bench.store import Run

RUN_COLUMNS = ["run", "benchmark", "model", "family", "protocol", "frames", "prompt", "measure", "items", "failures",
               "status", "commit", "date", "folder", "path"]


def frames_label(policy: Mapping | None) -> str:
    """A frame policy as written on the command line: ``uniform k=8``, ``none`` for blind runs."""
    if not policy:
        return ""
    rest = " ".join(f"{k}={v}" for k, v in policy.items() if k != "name" and v is not None)
    return f"{policy.get('name', '')} {rest}".strip()


def model_label(model: str | None) -> str:
    """A model id as given, or a local model folder's name."""
    if not model:
        return ""
    path = Path(str(model))
    return path.name if path.is_absolute() or path.exists() else str(model)


def failures(run: Run) -> int:
    """How many items the run recorded as failed (its failures table, each item once)."""
    return int(run.failures["item_id"].nunique()) if len(run.failures) else 0


def describe(run: Run) -> dict:
    """One row of the runs table: the manifest in words, the items asked and the failures."""
    m = run.manifest
    commit = str((m.versions or {}).get("git_commit") or "")[:10]
    items = m.n_items
    limit = f" (limit {m.limit}{', spread' if m.spread else ''})" if m.limit else ""
    return {"run": run.label, "benchmark": spec(m.benchmark).title, "model": model_label(m.model),
            "family": m.family or "", "protocol": m.protocol or "",
            "frames": frames_label(m.frame_policy), "prompt": (m.prompt or {}).get("name") or "",
            "measure": m.measure or "",
            "items": "" if items is None else f"{items}{limit}",
            "failures": failures(run), "status": m.status or "", "commit": commit,
            "date": str(m.created or "").replace("T", " ")[:16], "folder": Path(str(run.path)).name,
            "path": str(run.path)}


def runs_frame(runs: Sequence[Run]) -> pd.DataFrame:
    """The runs table: one row per run, by benchmark (in the registry's order), then in the order given."""
    order = {name: i for i, name in enumerate(names())}
    ranked = sorted(range(len(runs)), key=lambda i: (order.get(runs[i].manifest.benchmark, len(order)), i))
    return pd.DataFrame([describe(runs[i]) for i in ranked], columns=RUN_COLUMNS)


def unique_labels(runs: Sequence[Run]) -> None:
    """Give runs that share a name within one benchmark their folder name too, so that no table merges them (the
    in-memory manifests change, the run folders do not)."""
    seen: dict[tuple[str, str], int] = {}
    for run in runs:
        key = (run.manifest.benchmark, run.label)
        seen[key] = seen.get(key, 0) + 1
    for run in runs:
        if seen[(run.manifest.benchmark, run.label)] > 1:
            run.manifest = replace(run.manifest, name=f"{run.label} [{Path(str(run.path)).name}]")


def headline_rows(runs: Sequence[Run], metrics: pd.DataFrame, candidates: Sequence[tuple[str, str]]) -> pd.DataFrame:
    """Each run's headline number: the first of ``candidates`` (metric, breakdown) its metric table has (else its first
    row over all items), with interval, chance, items and the run's failure count."""
    rows = []
    for run in runs:
        mine = metrics[metrics["run"] == run.label]
        found = None
        for metric, by in candidates:
            hit = mine[(mine["metric"] == metric) & (mine["by"] == by)]
            if len(hit):
                found = hit.iloc[0]
                break
        if found is None and len(mine[mine["by"] == "all"]):
            found = mine[mine["by"] == "all"].iloc[0]
        row = {**describe(run), "benchmark_name": run.manifest.benchmark}
        if found is not None:
            row.update({k: found[k] for k in found.index if k not in ("run", "benchmark")})
            row["metric_label"] = found["metric"] + ("" if found["by"] == "all" else f" ({found['subset']})")
        rows.append(row)
    return pd.DataFrame(rows)
