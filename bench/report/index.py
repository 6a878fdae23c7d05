"""The report's ``index.html``: the headline table (runs x benchmarks), accuracy by any item label asked for (pooled
over benchmarks), the runs with their manifests, then one section per paper with every table and figure
its notebook made, under their titles and captions."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from bench import __version__
from bench.analysis.items import Judgements
from bench.report.compared import controls_section, models_compared_section
from bench.report.context import CONTENTS, HEADLINE
from bench.report.figures import metric_bars, png_width
from bench.report.outputs import page_html, save_chart, table_fragment
from bench.report.runs import runs_frame
from bench.report.tables import STAR_TIES, Table, percent, star_column, table_html, tie_text
from bench.metrics.ties import TIE_NOTICE, notable
from bench.registry import spec
from bench.store import Run


def headline_table(out: Path, benchmarks: Sequence[str]) -> Table | None:
    """Runs x benchmarks: each run's headline number with interval, metric, chance, items and failures, from the
    notebooks' ``headline.csv``. Rows are model set-ups (model, protocol, frames), named by their runs."""
    parts = [pd.read_csv(out / b / HEADLINE) for b in benchmarks if (out / b / HEADLINE).is_file()]
    parts = [p for p in parts if len(p)]
    if not parts:
        return None
    rows = pd.concat(parts, ignore_index=True)
    rows["setup"] = list(zip(rows["model"].fillna(""), rows["protocol"].fillna(""), rows["frames"].fillna("")))
    if rows.duplicated(["setup", "benchmark"]).any():
        rows["setup"] = [(*s, r) for s, r in zip(rows["setup"], rows["run"])]
    names = rows.groupby("setup", sort=False)["run"].agg(lambda r: " / ".join(dict.fromkeys(r)))
    rows["row"] = rows["setup"].map(names)
    columns = list(dict.fromkeys(rows["benchmark"]))
    star = star_column(rows)
    shown = pd.DataFrame("", index=list(dict.fromkeys(rows["row"])), columns=columns)
    for r in rows.to_dict("records"):
        shown.at[r["row"], r["benchmark"]] = _headline_cell(r, star)
    shown.index.name = "run"
    notes = ["Each cell: the paper's main score of that run in % with its 95% interval (* different from chance at "
             "p < 0.05), then the metric, its chance level, the items scored and the items that failed to score.",
             STAR_TIES,
             f"ties x% · strict v: shown when ties decided more than {TIE_NOTICE:.0%} of the items; v is the value "
             "when every tie fails (the value follows the benchmark's official tie rule).",
             "Rows: model set-ups (model, protocol, frame policy), named by their runs."]
    return Table(shown, rows.drop(columns=["setup", "row"]), notes)


def _headline_cell(r: Mapping, star: str) -> str:
    """The HTML of one headline cell (escaped here: the table is rendered without escaping)."""
    if pd.isna(r.get("value")):
        return "<small>no score</small>"
    mark = "*" if r.get(star) is True or str(r.get(star)) == "True" else ""
    failed = int(r.get("failures") or 0)
    failures = f"<span class='failed'>{failed} failed</span>" if failed else "0 failed"
    ties = tie_text(r)
    tied = (f"<small class='ties'>{html.escape(ties[1:-1].replace(', ', ' · '))}</small>" if ties else "")
    return (f"<b>{percent(r['value'])}{mark}</b> [{percent(r['ci_low'])}, {percent(r['ci_high'])}]{tied}"
            f"<small>{html.escape(str(r['metric_label']))} · chance {percent(r['chance'])} · {int(r['n'])} items · "
            f"{failures}</small>")


def pooled_section(out: Path, runs: Sequence[Run], label: str, judged: Judgements | None = None) -> str:
    """Accuracy by the values of the item label ``label``, the runs of one name pooled over benchmarks
    (:mod:`bench.metrics.pooled`): a figure (``by-<label>.png``) and its table (``by-<label>.csv``); empty when no
    item carries the label (``judged``: the runs' judgements already worked out)."""
    from bench.metrics.pooled import pooled_table

    labelled = [r for r in runs if any(it.labels.get(label) for it in r.items())]
    if not labelled:
        return ""
    judged = judged or Judgements()
    words, stem = label.replace("_", " "), f"by-{label}"
    pooled = pooled_table(pd.concat([judged.scores(r) for r in labelled], ignore_index=True), label)
    pooled.to_csv(out / f"{stem}.csv", index=False)
    rows = pooled.assign(metric="accuracy", by=label, subset=pooled["value"], value=pooled["accuracy"] / 100,
                         ci_low=pooled["low"] / 100, ci_high=pooled["high"] / 100, chance=pooled["chance"] / 100)
    chart = metric_bars(rows, "accuracy", label, title=f"Accuracy by {words}, pooled over benchmarks",
                        x_title=words, order=sorted(set(pooled["value"])))
    image = save_chart(chart, out, stem, ("png",))[0]
    cells = pooled.assign(cell=[f"{a:.1f}{'*' if above else ''} [{lo:.1f}, {hi:.1f}]"
                                + (f" (ties {tied / n:.0%})" if notable(tied, n) else "")
                                for a, above, lo, hi, tied, n in zip(pooled["accuracy"], pooled["above"], pooled["low"],
                                                                     pooled["high"], pooled["tied"], pooled["n"])])
    shown = cells.pivot(index="value", columns="run", values="cell").fillna("")
    shown = shown[list(dict.fromkeys(pooled["run"]))]
    shown.index.name = words
    table = Table(shown, pooled, [f"Each cell: accuracy in % of the run's items with that {words}, over every "
                                  "benchmark it scored, with its exact 95% interval (* chance below the interval). "
                                  "Items are judged by each benchmark's own per-item score; an item a tie decided is "
                                  "not told apart (wrong), whatever the benchmark's official rule, as in the models "
                                  "compared below; (ties x%): the share of the cell's items a tie decided, shown "
                                  f"above {TIE_NOTICE:.0%}."])
    return (f"<h2 id='{stem}'>By {html.escape(words)}</h2><figure class='fb-figure'><a href='{image.name}'><img "
            f"src='{image.name}' width='{png_width(image.read_bytes())}' alt='Accuracy by {html.escape(words)}'></a>"
            f"<figcaption>Bars: runs, lines: 95% intervals, black ticks: chance. <span class='links'><a "
            f"href='{stem}.csv'>CSV</a></span></figcaption></figure>" + table_html(table, f"Accuracy by {words}",
                                                                                   f"What each run gets right, by {words}."))


def _entry_html(benchmark: str, entry: Mapping, folder: Path) -> str:
    files = entry["files"]
    links = " ".join(f"<a href='{benchmark}/{html.escape(f)}'>{Path(f).suffix[1:].upper()}</a>" for f in files)
    if entry["kind"] == "table":
        fragment = folder / f"{entry['name']}.html"
        body = table_fragment(fragment.read_text()) if fragment.is_file() else ""
        return body.replace("</figcaption>", f"<span class='links'>{links}</span></figcaption>", 1)
    image = next((f for f in files if f.endswith(".png")), files[0])
    width = f" width='{png_width((folder / image).read_bytes())}'" if image.endswith(".png") else ""
    return (f"<figure class='fb-figure'><a href='{benchmark}/{html.escape(image)}'><img src='{benchmark}/"
            f"{html.escape(image)}'{width} alt='{html.escape(entry['title'])}'></a><figcaption><b>"
            f"{html.escape(entry['title'])}</b> {html.escape(entry['caption'])}<span class='links'>{links}</span>"
            "</figcaption></figure>")


@dataclass(frozen=True)
class RunSections:
    """The parts of the index that come from the runs alone, not from the notebooks (:func:`run_sections`): accuracy by
    each pooled label, the controls, the models compared and the runs table, as HTML."""

    pooled: dict[str, str]
    controls: str
    compared: str
    runs: str


def run_sections(out: Path, runs: Sequence[Run], pool_by: Sequence[str] = ()) -> RunSections:
    """The index's sections that read the runs alone (with their figures and CSVs in ``out``): worked out while the
    notebooks run (:class:`bench.report.build.ReportBuilder`), each run judged once for all of them."""
    judged = Judgements()
    pooled = {label: pooled_section(out, runs, label, judged) for label in pool_by}
    controls = controls_section(out, runs, pool_by, judged)
    compared = models_compared_section(out, runs, pool_by, judged)
    listed = runs_frame(runs)
    listed.to_csv(out / "runs.csv", index=False)
    runs_table = Table(listed.drop(columns="path").set_index("run"), listed)
    table = ("<p>No run was given.</p>" if not runs else
             table_html(runs_table, "Runs and their manifests",
                        "What each run scored and how: model, family, protocol, frame policy, prompt, the score "
                        "measure, items asked (and the limit), failures, status, the commit it was scored at and "
                        "when, and its folder (full paths in runs.csv)."))
    return RunSections(pooled, controls, compared, table)


def write_index(out: Path, runs: Sequence[Run], pages: Mapping[str, Path], seconds: float,
                pool_by: Sequence[str] = (), sections: RunSections | None = None) -> Path:
    """``index.html``: headline, accuracy by each label of ``pool_by`` pooled over benchmarks, controls, models
    compared, runs, then each paper's tables and figures; returns its path. ``sections``: :func:`run_sections` of
    the same runs and labels, already worked out (default: worked out here)."""
    sections = sections or run_sections(out, runs, pool_by)
    papers = []
    for benchmark, page in pages.items():
        listing = out / benchmark / CONTENTS
        contents = json.loads(listing.read_text()) if listing.is_file() else {"entries": []}
        s = spec(benchmark)
        body = [f"<h2 id='{benchmark}'>{html.escape(s.title)} <small class='meta'>{html.escape(s.paper)}</small></h2>",
                f"<p class='meta'>The executed notebook, with its code: <a href='{page.relative_to(out)}'>"
                f"{html.escape(page.stem)} notebook</a>.</p>"]
        body += [_entry_html(benchmark, e, out / benchmark) for e in contents["entries"] if e["name"] != "headline"]
        papers.append("\n".join(body))
    headline = headline_table(out, list(pages))
    commits = sorted({str((r.manifest.versions or {}).get("git_commit") or "")[:10] for r in runs} - {""})
    built = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    nav = " ".join(f"<a href='#{b}'>{html.escape(spec(b).title)}</a>" for b in pages)
    pooled_nav = "".join(f"<a href='#by-{label}'>By {html.escape(label.replace('_', ' '))}</a> "
                         for label, section in sections.pooled.items() if section)
    parts = ["<h1>Foilbench report</h1>",
             f"<p class='meta'>{len(runs)} run(s), {len(pages)} paper(s); built {built} in {seconds:.0f} s by "
             f"foilbench {__version__}; runs scored at commit(s) {', '.join(commits) or 'unknown'}.</p>",
             f"<nav><a href='#headline'>Headline</a> {pooled_nav}<a href='#controls'>Controls</a> "
             "<a href='#compared'>Models compared</a> <a href='#runs'>Runs</a> "
             f"{nav}</nav>",
             "<h2 id='headline'>Headline</h2>"]
    if headline is not None:
        headline.data.to_csv(out / HEADLINE, index=False)
        parts.append(_raw_table_html(headline))
    else:
        parts.append("<p>No run was scored: the notebooks show annotation statistics only.</p>")
    parts += sections.pooled.values()
    parts += [sections.controls, sections.compared, "<h2 id='runs'>Runs</h2>", sections.runs]
    parts += papers
    index = out / "index.html"
    index.write_text(page_html("Foilbench report", "\n".join(parts)))
    return index


def _raw_table_html(table: Table) -> str:
    """The headline table, whose cells are HTML already."""
    shown = table.shown.copy()
    shown.index = [html.escape(str(i)) for i in shown.index]
    shown.columns = [html.escape(str(c)) for c in shown.columns]
    body = shown.to_html(escape=False, border=0, index_names=False)
    notes = "<br>".join(html.escape(n) for n in table.notes)
    return (f"<figure class='fb-table headline'><figcaption><span class='title'>Main score of each run on each "
            f"benchmark</span> The number each paper leads with. <span class='links'><a href='headline.csv'>CSV"
            f"</a></span></figcaption>{body}<p class='notes'>{notes}</p></figure>")
