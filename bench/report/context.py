"""What a paper notebook works from: the runs of one benchmark, their items, their metric tables, and the output folder.

Notebooks call these functions and nothing else computes: every number comes from ``bench.metrics``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import pandas as pd

from bench.items import Item
from bench.metrics.aggregate import Settings
from bench.metrics.dispatch import run_table
from bench.report.outputs import save_chart, save_table
from bench.registry import spec
from bench.store import Run, read_run


@dataclass
class Report:
    """One notebook's inputs and outputs."""

    benchmark: str
    runs: list[Run]
    items: list[Item]
    metrics: pd.DataFrame
    out: Path
    formats: tuple[str, ...] = ("png", "svg")
    source: dict = field(default_factory=dict)
    written: list[Path] = field(default_factory=list)

    def table(self, name: str, table: pd.DataFrame, title: str = "") -> pd.DataFrame:
        """Save a table (CSV, Markdown, HTML) and return it for display."""
        self.written += save_table(table, self.out, name, title)
        return table

    def figure(self, name: str, chart):
        """Save a chart (PNG/SVG) and return the PNG for display (static, so it renders offline anywhere)."""
        from IPython.display import Image

        paths = save_chart(chart, self.out, name, self.formats)
        self.written += paths
        png = [p for p in paths if p.suffix == ".png"]
        return Image(filename=str(png[0])) if png else chart

    def reload(self, **loader_options) -> list[Item]:
        """The benchmark's items again with other loader options (e.g. ViLMA's ``valid_only=False``)."""
        from bench.loaders import load

        options = {**self.source.get("loader_options", {}), **loader_options}
        return load(self.benchmark, self.source["data_path"], video_root=self.source.get("video_root"),
                    **options).items

    def per_run(self, breakdown, **kwargs) -> pd.DataFrame:
        """``breakdown(outcomes, items, **kwargs)`` (a ``bench.metrics.breakdowns`` function) for every run, with a
        ``run`` column."""
        from bench.metrics.dispatch import benchmark_outcomes, expand_items

        parts = []
        for run in self.runs:
            items = expand_items(self.items, run.pair, self.benchmark)
            outcomes = benchmark_outcomes(items, run.pair, run.choice, self.benchmark)
            parts.append(breakdown(outcomes, items, **kwargs).assign(run=run.label))
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()

    def overall_by_run(self, names: Sequence[str]) -> pd.DataFrame:
        """The overall value of ``names`` for every run with its frame policy, adapter and prompt (blind, single-frame
        and multi-frame runs side by side)."""
        rows = []
        for run in self.runs:
            label = run.label
            policy = run.manifest.get("frame_policy") or {}
            mine = self.metrics[(self.metrics["run"] == label) & (self.metrics["by"] == "all")
                                & self.metrics["metric"].isin(names)]
            row = {"run": label, "protocol": run.manifest.get("protocol"),
                   "frames": ", ".join(f"{k}={v}" for k, v in policy.items()),
                   "prompt": (run.manifest.get("prompt") or {}).get("name")}
            row.update({m: round(100 * v, 1) for m, v in zip(mine["metric"], mine["value"])})
            rows.append(row)
        return pd.DataFrame(rows)


def open_report(benchmark: str, runs: Sequence[str], out: str | Path, *, data_path: str | None = None,
                video_root: str | None = None, loader_options: dict | None = None,
                formats: Sequence[str] = ("png", "svg"), n_boot: int = 1000) -> Report:
    """Read the runs of ``benchmark`` among ``runs`` (others are skipped) and their items.

    Items come from ``data_path`` when given, else from the runs themselves (every item any of them stored); with
    neither, a clear error. Each run's metrics use the items that run was asked to score.
    """
    stored = [read_run(path) for path in runs]
    mine = [run for run in stored if run.manifest.get("benchmark") == benchmark]
    if data_path:
        source = {"data_path": data_path, "video_root": video_root, "loader_options": dict(loader_options or {})}
        from bench.loaders import load

        items = load(benchmark, data_path, video_root=video_root, **source["loader_options"]).items
    elif mine:
        m = mine[0].manifest
        source = {"data_path": m["data_path"], "video_root": m.get("video_root"),
                  "loader_options": m.get("loader_options") or {}}
        items = list({it.item_id: it for run in mine for it in run.items()}.values())
    else:
        raise ValueError(f"no run of {benchmark} among the {len(stored)} given and no data_path: nothing to report")
    settings = Settings(n_boot=n_boot)
    tables = [run_table(run, settings) for run in mine]
    metrics = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(
        columns=["run", "benchmark", "metric", "by", "subset", "value", "ci_low", "ci_high", "chance", "n",
                 "significant"])
    out = Path(out) / benchmark
    out.mkdir(parents=True, exist_ok=True)
    return Report(benchmark, mine, items, metrics, out, tuple(formats), source)


def score_table(metrics: pd.DataFrame, names: Sequence[str], by: str = "subset") -> pd.DataFrame:
    """Runs x (metric, group) as printed: "61.2* [52.0, 70.1]" (% , CI, * above chance), with a chance row."""
    rows = metrics[metrics["metric"].isin(names) & (metrics["by"] == by)].copy()
    if rows.empty:
        return pd.DataFrame()
    rows["cell"] = [f"{100 * v:.1f}{'*' if s is True else ''} [{100 * lo:.1f}, {100 * hi:.1f}]"
                    for v, s, lo, hi in zip(rows["value"], rows["significant"], rows["ci_low"], rows["ci_high"])]
    rows["column"] = rows["metric"] + " " + rows["subset"].astype(str)
    order = list(dict.fromkeys(rows["column"]))
    wide = rows.pivot_table(index="run", columns="column", values="cell", aggfunc="first")[order]
    chance = rows.drop_duplicates("column").set_index("column")["chance"].reindex(order)
    wide.loc["chance"] = [f"{100 * c:.1f}" if pd.notna(c) else "" for c in chance]
    wide.columns.name = None
    return wide.reset_index()


def beside_published(metrics: pd.DataFrame, published: pd.DataFrame, by: str = "subset") -> pd.DataFrame:
    """Our runs' values (in %) in the rows of a published table, for the (subset, metric) cells it prints."""
    if published.empty:
        return pd.DataFrame()
    benchmarks = set(metrics["benchmark"]) if "benchmark" in metrics else set()
    aliases = spec(benchmarks.pop()).labels.get("aliases", {}) if len(benchmarks) == 1 else {}
    published = published.assign(subset=published["subset"].map(lambda s: _name(s, aliases)))
    cells = set(zip(published["subset"], published["metric"]))
    ours = metrics[metrics["by"] == by]
    ours = ours.assign(subset=ours["subset"].map(lambda s: _name(s, aliases)))
    ours = ours[[(s, m) in cells for s, m in zip(ours["subset"], ours["metric"])]]
    rows = pd.concat([
        published.assign(source="published")[["source", "model", "subset", "metric", "value"]],
        ours.assign(source="ours", model=ours["run"], value=100 * ours["value"])[
            ["source", "model", "subset", "metric", "value"]],
    ], ignore_index=True)
    wide = rows.pivot_table(index=["source", "model"], columns=["metric", "subset"], values="value",
                            aggfunc="first", sort=False)
    wide.columns = [f"{m} {s}" for m, s in wide.columns]
    return wide.round(1).reset_index()


def _name(subset, aliases: dict[str, str]) -> str:
    """Subset names compared across the papers' spelling and ours ("Agent Random" = "agent_random"); ``aliases``
    names our subsets the way a paper does (``BenchmarkSpec.labels["aliases"]``)."""
    name = str(subset).strip()
    return aliases.get(name, name.replace("_", " ").lower())


