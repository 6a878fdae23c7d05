"""What a paper notebook works from: the runs of one benchmark, their items, their metric tables, and the output folder.

Notebooks call these functions and nothing else computes: every number comes from ``bench.metrics``, and each run's
numbers are over that run's own items (:func:`bench.metrics.dispatch.run_items`), whatever other runs share a table;
``Report.items`` (the union, or the annotation files) serves only the statistics of the items themselves. Each table and
figure a notebook makes is shown in the notebook (all of them, not only a cell's last), saved, and listed with its
title and caption in ``<out>/<benchmark>/contents.json``, from which the report's index is written.
"""

from __future__ import annotations

import base64
import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import pandas as pd

from bench.items import Item
from bench.metrics.aggregate import TABLE_COLUMNS, Settings
from bench.metrics.dispatch import run_table
from bench.registry import spec
from bench.report.figures import png_width
from bench.report.outputs import check_formats, save_chart, save_table
from bench.report.runs import headline_rows, unique_labels
from bench.report.tables import STYLE, Table, plain_table, score_table, table_html
from bench.store import Run, read_run

CONTENTS = "contents.json"
HEADLINE = "headline.csv"


def _show(markup: str) -> None:
    """Display HTML when running in a notebook kernel (papermill or JupyterLab); nothing elsewhere."""
    try:
        from IPython import get_ipython
        from IPython.display import HTML, display
    except ImportError:
        return
    if get_ipython() is not None:
        display(HTML(markup))


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
    settings: Settings = field(default_factory=Settings)
    written: list[Path] = field(default_factory=list)
    contents: list[dict] = field(default_factory=list)

    def _record(self, entry: dict) -> None:
        self.contents = [e for e in self.contents if e["name"] != entry["name"] or e["kind"] != entry["kind"]]
        self.contents.append(entry)
        page = {"benchmark": self.benchmark, "title": spec(self.benchmark).title, "paper": spec(self.benchmark).paper,
                "entries": self.contents}
        (self.out / CONTENTS).write_text(json.dumps(page, indent=1))

    def table(self, name: str, table: Table | pd.DataFrame, title: str, caption: str = "") -> None:
        """Show a table in the notebook and save it (CSV with the numbers as computed, Markdown, HTML); a plain
        DataFrame is shown as it is."""
        if isinstance(table, pd.DataFrame):
            table = plain_table(table)
        if not self.runs and table.metric_rows and table.shown.empty:
            return  # an annotation-only report has no scores to show
        paths = save_table(table, self.out, name, title, caption)
        self.written += paths
        self._record({"kind": "table", "name": name, "title": title, "caption": caption,
                      "files": [p.name for p in paths]})
        _show(f"<style>{STYLE}</style>" + table_html(table, title, caption))

    def figure(self, name: str, chart, title: str, caption: str = "") -> None:
        """Show a chart in the notebook (the rendered PNG, static so it shows offline anywhere) with its caption, and
        save it in the report's formats."""
        paths = save_chart(chart, self.out, name, self.formats)
        self.written += paths
        self._record({"kind": "figure", "name": name, "title": title, "caption": caption,
                      "files": [p.name for p in paths]})
        png = [p for p in paths if p.suffix == ".png"]
        if png:
            data = png[0].read_bytes()
            source = f"data:image/png;base64,{base64.b64encode(data).decode()}' width='{png_width(data)}"
        else:
            source = "data:image/svg+xml;base64," + base64.b64encode(paths[0].read_bytes()).decode()
        _show(f"<figure class='fb-figure'><img src='{source}' alt='{html.escape(title)}' style='max-width:100%'>"
              f"<figcaption><b>{html.escape(title)}</b> {html.escape(caption)}</figcaption></figure>")

    def headline(self, candidates: Sequence[tuple[str, str]], caption: str = "") -> None:
        """Each run's headline number (the first of ``candidates``, (metric, breakdown) pairs, its table has), saved
        for the report's index and shown here."""
        if not self.runs:
            return
        rows = headline_rows(self.runs, self.metrics, candidates)
        rows.to_csv(self.out / HEADLINE, index=False)
        found = rows.dropna(subset=["value"]) if "value" in rows else rows.iloc[0:0]
        table = score_table(found.assign(metric=found.get("metric_label"), by="all"),
                            list(dict.fromkeys(found.get("metric_label", []))), by="all")
        table.data = rows
        self.table("headline", table, "Headline numbers",
                   caption or "Each run's main score in this paper, with its interval and the chance level.")

    def add_average(self, metric: str) -> None:
        """Add the papers' average of ``metric`` over the subsets (mean of the per-subset rates over the run's own
        items, computed by ``bench.metrics.aggregate.mean_of_means_row``) as a row "Avg. <metric>" for every run whose
        table has ``metric`` and lacks the average."""
        from bench.metrics.aggregate import mean_of_means_row
        from bench.metrics.dispatch import benchmark_outcomes, run_items

        name, rows = f"Avg. {metric}", []
        for run in self.runs:
            mine = self.metrics["run"] == run.label
            if (mine & (self.metrics["metric"] == name)).any() or not (mine & (self.metrics["metric"] == metric)).any():
                continue
            outcomes = benchmark_outcomes(run_items(run), run.pair, run.choice, self.benchmark)
            subsets = sorted(set(outcomes.loc[outcomes["metric"] == metric, "subset"]))
            row = mean_of_means_row(outcomes, metric, {s: [s] for s in subsets}, name, self.settings)
            if row:
                rows.append({"run": run.label, "benchmark": self.benchmark, **row})
        if rows:
            self.metrics = pd.concat([self.metrics, pd.DataFrame(rows)], ignore_index=True)

    def reload(self, **loader_options) -> list[Item]:
        """The benchmark's items again with other loader options (e.g. ViLMA's ``valid_only=False``)."""
        from bench.loaders import load

        options = {**self.source.get("loader_options", {}), **loader_options}
        return load(self.benchmark, self.source["data_path"], video_root=self.source.get("video_root"),
                    **options).items

    def per_run(self, breakdown, **kwargs) -> pd.DataFrame:
        """``breakdown(outcomes, items, **kwargs)`` (a ``bench.metrics.breakdowns`` function) for every run with a
        metric table, over the run's own items, with a ``run`` column first."""
        from bench.metrics.dispatch import benchmark_outcomes, run_items

        parts = []
        for run in self.runs:
            if not (self.metrics["run"] == run.label).any():
                continue
            items = run_items(run)
            outcomes = benchmark_outcomes(items, run.pair, run.choice, self.benchmark)
            table = breakdown(outcomes, items, **kwargs)
            table.insert(0, "run", run.label)
            parts.append(table)
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["run", *TABLE_COLUMNS])

    def sample_per_subset(self, most: int | None, seed: int = 0) -> list[Item]:
        """The main items, at most ``most`` per subset drawn with a fixed seed (all of them for ``None``): for
        dataset statistics too slow to compute on every item (a text encoder over a whole benchmark)."""
        import random

        groups: dict[str, list[Item]] = {}
        for it in self.items:
            if it.role == "main":
                groups.setdefault(it.subset, []).append(it)
        draw = random.Random(seed)
        return [it for group in groups.values()
                for it in (group if most is None or len(group) <= most else draw.sample(group, most))]

    def durations(self) -> dict[str, float]:
        """Seconds of each readable video of the items (missing videos are left out)."""
        from bench.frames import durations

        return durations([c.path for it in self.items for c in it.clips])

    def run_settings(self) -> pd.DataFrame:
        """Every run with its model, protocol, frame policy, prompt and failures (the manifest in words)."""
        from bench.report.runs import runs_frame

        return runs_frame(self.runs).drop(columns=["benchmark", "folder", "path"])


def open_report(benchmark: str, runs: Sequence[str], out: str | Path, *, data_path: str | None = None,
                video_root: str | None = None, loader_options: dict | None = None,
                formats: Sequence[str] = ("png", "svg"), n_boot: int = 1000) -> Report:
    """Read the runs of ``benchmark`` among ``runs`` (others are skipped) and their items.

    Items come from ``data_path`` when given, else from the runs themselves (every item any of them stored); with
    neither, a clear error. Each run's metrics use the items that run was asked to score
    (:func:`bench.metrics.dispatch.run_items`), never the others'. Runs sharing a name get their folder name too.
    """
    stored = [read_run(path) for path in runs]
    mine = [run for run in stored if run.manifest.benchmark == benchmark]
    unique_labels(mine)
    if data_path:
        source = {"data_path": data_path, "video_root": video_root, "loader_options": dict(loader_options or {})}
        from bench.loaders import load

        items = load(benchmark, data_path, video_root=video_root, **source["loader_options"]).items
    elif mine:
        m = mine[0].manifest
        source = {"data_path": m.data_path, "video_root": m.video_root,
                  "loader_options": m.loader_options or {}}
        items = list({it.item_id: it for run in mine for it in run.items()}.values())
    else:
        theirs = sorted({str(r.manifest.benchmark) for r in stored})
        raise ValueError(f"no {benchmark} run among the {len(stored)} given (their benchmarks: "
                         f"{', '.join(theirs) or 'none'}) and no data_path: nothing to report")
    settings = Settings(n_boot=n_boot)
    tables = [run_table(run, settings) for run in mine]
    metrics = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(
        columns=["run", "benchmark", *TABLE_COLUMNS])
    out = Path(out) / benchmark
    out.mkdir(parents=True, exist_ok=True)
    (out / CONTENTS).unlink(missing_ok=True)
    (out / HEADLINE).unlink(missing_ok=True)
    pd.set_option("display.max_rows", None, "display.max_columns", None, "display.width", None)
    return Report(benchmark, mine, items, metrics, out, check_formats(formats), source, settings)
