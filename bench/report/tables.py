"""Report tables as the papers print them: percentages with one decimal, grouped headers, a chance row, our runs beside
the published rows; and each table's HTML, Markdown and CSV.

Nothing here computes a metric: every cell is formatted from a ``bench.metrics`` table (``value``, ``ci_low``,
``ci_high``, ``chance``, ``n``, ``significant`` and whatever other columns it has). Columns the metrics add later
(tie counts, corrected significance, failure counts...) show in each table's "all numbers" view without a change here.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import pandas as pd

from bench.metrics.ties import TIE_NOTICE, notable

AVERAGE = "Avg"
OVERALL = "All"
# Columns of a metric table that only say how a row was computed: never shown (the CSV keeps them).
INTERNAL = ("benchmark", "by", "test", "note", "p_value")
# Count columns shown only when some row counts something, under these names.
COUNTS = {"n_missing": "missing", "n_nan": "NaN scores", "n_unparsed": "unparsed answers"}
SHOWN_FIRST = ("run", "metric", "subset", "value", "ci_low", "ci_high", "chance", "n")
PERCENT_COLUMNS = ("value", "ci_low", "ci_high", "chance", "strict", "expected")
STAR_TIES = ("The test counts a tie (the true and a false text scored alike) as no more than a fair coin's share, "
             "1/k, whatever rule the value follows: a tie never earns a star, and a model that scores everything alike "
             "is never starred.")
TIES_NOTE = (f"(ties x%, strict v): x% of the items were decided by a tie (shown above {TIE_NOTICE:.0%}) and v is the "
             "value when every tie fails; the value itself follows the benchmark's official tie rule.")


@dataclass
class Table:
    """A report table: ``shown`` holds the cells as printed (columns and rows may be grouped), ``data`` the numbers as
    computed (the CSV), ``notes`` the footnotes; ``metric_rows`` says ``data`` holds metric-table rows, shown in full
    under the table."""

    shown: pd.DataFrame
    data: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    metric_rows: bool = False


def percent(value: float, digits: int = 1) -> str:
    """``0.4567`` -> ``"45.7"``; empty for a missing value."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f"{100 * float(value):.{digits}f}"


def star_column(metrics: pd.DataFrame) -> str:
    """The significance column the stars follow: a corrected one (``significant_<method>``) when the metrics give it,
    else ``significant``."""
    corrected = [c for c in metrics.columns if c.startswith("significant") and c != "significant"]
    return corrected[0] if corrected else "significant"


def tie_text(row: Mapping) -> str:
    """``"(ties 71%, strict 12.0)"`` when ties decided more than :data:`bench.metrics.ties.TIE_NOTICE` of a metric
    row's items (its ``n_tie`` of ``n``): their share and the row's value when every tie fails; else empty."""
    n_tie, n = row.get("n_tie"), row.get("n")
    if n_tie is None or n is None or pd.isna(n_tie) or pd.isna(n) or not notable(int(n_tie), int(n)):
        return ""
    strict = row.get("strict")
    return f"(ties {int(n_tie) / int(n):.0%}" + ("" if strict is None or pd.isna(strict) else
                                                f", strict {percent(strict)}") + ")"


def score_cell(row: Mapping, star: str = "significant") -> str:
    """``"61.2* [52.0, 70.1]"``: value in %, ``*`` when significant, interval in %; then :func:`tie_text`."""
    mark = "*" if row.get(star) is True or row.get(star) == 1 else ""
    cell = f"{percent(row['value'])}{mark}"
    low, high = row.get("ci_low"), row.get("ci_high")
    if cell and not (pd.isna(low) or pd.isna(high)):
        cell += f" [{percent(low)}, {percent(high)}]"
    ties = tie_text(row) if cell else ""
    return f"{cell} {ties}" if ties else cell


def _span(values: Iterable[str]) -> str:
    """One printed value for several runs: the value, or ``low-high`` when the runs differ."""
    found = sorted({v for v in values if v != ""}, key=lambda v: float(v) if _number(v) else math.inf)
    return "" if not found else found[0] if len(found) == 1 else f"{found[0]}-{found[-1]}"


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _names(values: Iterable[str], rename: Mapping[str, str] | None) -> dict[str, str]:
    return {v: (rename or {}).get(v, v) for v in values}


def score_table(metrics: pd.DataFrame, names: Sequence[str], by: str = "subset", *, order: Sequence[str] = (),
                rename: Mapping[str, str] | None = None, overall: bool = False, average: bool = True,
                groups_down: bool = False, only: Sequence[str] | None = None) -> Table:
    """Runs down, (group, metric) across, as the papers print them, with the chance level and the items per column.

    Groups are the values of ``by`` (in ``order`` first, then as they come; ``rename`` prints them the papers' way).
    ``overall`` adds the rows over all items as a group "All"; ``average`` adds the papers' average as a group "Avg"
    when the metrics give it (rows ``by="average"``, or a metric named ``"Avg. <name>"``); ``only`` keeps the groups
    named (raw or printed names). With one metric the metric heads the groups; the metrics stand alone over all
    items (``by="all"``). ``groups_down`` turns a wide table around: groups down, (run, metric) across, chance
    and items last.
    """
    names = list(names)
    parts = []
    if len(metrics):
        rows = metrics[metrics["metric"].isin(names) & (metrics["by"] == by)]
        parts.append(rows.assign(_group=rows["subset"].astype(str), _metric=rows["metric"]))
        if overall and by != "all":
            rows = metrics[metrics["metric"].isin(names) & (metrics["by"] == "all")]
            parts.append(rows.assign(_group=OVERALL, _metric=rows["metric"]))
        if average:
            rows = metrics[metrics["metric"].isin(names) & (metrics["by"] == "average")]
            parts.append(rows.assign(_group=AVERAGE, _metric=rows["metric"]))
            named = {f"Avg. {m}": m for m in names}
            rows = metrics[metrics["metric"].isin(list(named)) & (metrics["by"] == "all")]
            parts.append(rows.assign(_group=AVERAGE, _metric=rows["metric"].map(named)))
    rows = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if rows.empty:
        return Table(pd.DataFrame(), metrics.iloc[0:0] if len(metrics.columns) else pd.DataFrame(), [], True)
    labels = _names(rows["_group"], rename)
    if only is not None:
        rows = rows[[g in only or labels[g] in only for g in rows["_group"]]]
        if rows.empty:
            return Table(pd.DataFrame(), rows, [], True)
    groups = _ordered(rows["_group"], order, labels)
    metric_order = [m for m in names if m in set(rows["_metric"])]
    star = star_column(rows)
    rows = rows.assign(_cell=[score_cell(r, star) for r in rows.to_dict("records")])
    if len(metric_order) == 1 and len(groups) > 1:
        columns = [(metric_order[0], labels[g]) for g in groups]
        key = {(g, metric_order[0]): (metric_order[0], labels[g]) for g in groups}
    elif len(groups) == 1 and by == "all":
        columns = metric_order
        key = {(groups[0], m): m for m in metric_order}
    else:
        columns = [(labels[g], m) for g in groups for m in metric_order
                   if ((rows["_group"] == g) & (rows["_metric"] == m)).any()]
        key = {(g, m): (labels[g], m) for g in groups for m in metric_order}
    runs = list(dict.fromkeys(rows["run"]))
    data = rows.drop(columns=[c for c in rows.columns if c.startswith("_")]).reset_index(drop=True)
    if groups_down:
        return Table(_groups_down(rows, groups, labels, metric_order, runs), data, score_notes(data, star), True)
    shown = pd.DataFrame("", index=runs + ["chance", "items"], columns=pd.Index(columns, tupleize_cols=True))
    for (g, m), part in rows.groupby(["_group", "_metric"], sort=False):
        column = key[(g, m)]
        for r in part.to_dict("records"):
            shown.at[r["run"], column] = r["_cell"]
        shown.at["chance", column] = _span(percent(c) for c in part["chance"])
        shown.at["items", column] = _span(str(int(n)) for n in part["n"])
    if isinstance(columns[0], tuple):
        shown.columns = pd.MultiIndex.from_tuples(columns)
    shown.index.name = "run"
    return Table(shown, data, score_notes(data, star), metric_rows=True)


def _groups_down(rows: pd.DataFrame, groups: Sequence[str], labels: Mapping[str, str], metrics: Sequence[str],
                 runs: Sequence[str]) -> pd.DataFrame:
    """Groups down, (run, metric) then (chance, metric) and items across."""
    columns = [(r, m) for r in runs for m in metrics] + [("chance", m) for m in metrics] + [("items", "")]
    shown = pd.DataFrame("", index=[labels[g] for g in groups], columns=pd.MultiIndex.from_tuples(columns))
    for (g, m), part in rows.groupby(["_group", "_metric"], sort=False):
        for r in part.to_dict("records"):
            shown.at[labels[g], (r["run"], m)] = r["_cell"]
        shown.at[labels[g], ("chance", m)] = _span(percent(c) for c in part["chance"])
    for g, part in rows.groupby("_group", sort=False):
        shown.at[labels[g], ("items", "")] = _span(str(int(n)) for n in part["n"])
    return shown


def _ordered(values: Iterable[str], order: Sequence[str], labels: Mapping[str, str]) -> list[str]:
    """Groups in ``order`` (raw or printed names) first, then as they come, "All" and "Avg" last."""
    present = list(dict.fromkeys(values))
    rank = {name: i for i, name in enumerate(order)}
    head = sorted((v for v in present if v in rank or labels[v] in rank),
                  key=lambda v: rank.get(v, rank.get(labels[v])))
    tail = [v for v in present if v not in head and v not in (OVERALL, AVERAGE)]
    return head + tail + [v for v in (OVERALL, AVERAGE) if v in present]


def score_notes(rows: pd.DataFrame, star: str = "significant") -> list[str]:
    """The footnotes of a score table: what the numbers, the star and the brackets mean, and the metrics' own notes."""
    notes = ["Percentages, one decimal; [low, high]: 95% interval; chance: the score of random answers; items: items "
             "per column (a range when the runs differ)."]
    if star in rows:
        which = "" if star == "significant" else f" after correction for multiple comparisons ({star})"
        notes.append(f"*: different from chance at p < 0.05{which}. {STAR_TIES}")
    if any(tie_text(r) for r in rows.to_dict("records")):
        notes.append(TIES_NOTE)
    if "chance" in rows and (rows["chance"] >= 0.999).any():
        notes.append("Chance 100%: every answer passes (k is at least the number of candidates); such a column "
                     "says nothing about the model.")
    if "note" in rows:
        for metric, note in dict.fromkeys(zip(rows["metric"], rows["note"].fillna(""))):
            if note:
                notes.append(f"{metric}: {note}.")
    return notes


def metric_details(rows: pd.DataFrame) -> pd.DataFrame:
    """Every number of some metric-table rows, in %, with the internal columns left out and the count columns shown only
    when they count something; columns the metrics add are kept."""
    if rows.empty:
        return rows
    frame = rows.copy()
    for column in PERCENT_COLUMNS:
        if column in frame:
            frame[column] = [percent(v) for v in frame[column]]
    for column, name in COUNTS.items():
        if column in frame:
            frame = frame.rename(columns={column: name}) if frame[column].fillna(0).astype(float).any() else \
                frame.drop(columns=column)
    frame = frame.drop(columns=[c for c in INTERNAL if c in frame])
    first = [c for c in SHOWN_FIRST if c in frame]
    frame = frame[first + [c for c in frame.columns if c not in first]]
    return frame.rename(columns={"value": "value (%)", "ci_low": "low (%)", "ci_high": "high (%)",
                                 "chance": "chance (%)", "strict": "strict (%)", "expected": "expected (%)"})


def plain_table(frame: pd.DataFrame, *, percent_columns: Sequence[str] = (), index: str | None = None,
                notes: Sequence[str] = ()) -> Table:
    """Any other table (counts, statistics): ``percent_columns`` (fractions) print as percentages, others as they are;
    ``index`` names the column that heads the rows."""
    shown = frame.copy()
    for column in percent_columns:
        shown[column] = [percent(v) for v in shown[column]]
    shown = shown.rename(columns={c: f"{c} (%)" for c in percent_columns})
    if index:
        shown = shown.set_index(index)
    return Table(shown, frame.reset_index(drop=True), list(notes))


def _normal(name: str) -> str:
    return re.sub(r"[\s_\-]+", " ", str(name)).strip().lower()


def beside_published(metrics: pd.DataFrame, published: pd.DataFrame, *, by: Sequence[str] = ("subset",),
                     subsets: Mapping[str, str] | None = None, metric_names: Mapping[str, str] | None = None) -> Table:
    """A published table as printed (models down, grouped columns) with our runs as rows below, in %, one decimal.

    Our rows fill the cells whose subset and metric match: subsets by name (case, spaces, ``_`` and ``-`` aside;
    ``subsets`` maps a published name to ours), "Avg" from the papers' averages in the metrics (``by="average"`` rows
    or a metric "Avg. <name>") and "all" from the rows over all items; ``metric_names`` maps a published metric to
    ours. ``by`` lists the metric-table breakdowns the subsets come from.
    """
    if published.empty:
        return Table(pd.DataFrame(), pd.DataFrame(), ["nothing published for this table"])
    subsets, metric_names = dict(subsets or {}), dict(metric_names or {})
    paper_subsets = list(dict.fromkeys(published["subset"]))
    paper_metrics = list(dict.fromkeys(published["metric"]))
    ours = _our_cells(metrics, by, paper_subsets, subsets, paper_metrics, metric_names)
    layout = _layout(paper_subsets, paper_metrics)
    rows, row_notes = {}, {}
    for r in published.to_dict("records"):
        label = (r["model_group"] or "published", r["model"] or "")
        rows.setdefault(label, {})[layout(r["subset"], r["metric"])] = r["value"]
        row_notes.setdefault(label, {})[r["note"] or ""] = None
    row_notes = {label: "; ".join(n for n in notes if n) for label, notes in row_notes.items()}
    per_row = len(set(row_notes.values())) > 1
    runs = {}
    for r in ours:
        ties = tie_text(r)
        runs.setdefault(("ours", r["run"]), {})[layout(r["paper_subset"], r["paper_metric"])] = (
            f"{100 * r['value']:.1f} {ties}" if ties else round(100 * r["value"], 1))
    columns = list(dict.fromkeys(layout(s, m) for s, m in zip(published["subset"], published["metric"])))
    shown = pd.DataFrame.from_dict({**rows, **runs}, orient="index").reindex(columns=columns)
    shown.index = pd.MultiIndex.from_tuples(list(rows) + list(runs), names=["", "model"])
    if isinstance(columns[0], tuple):
        shown.columns = pd.MultiIndex.from_tuples(columns)
    shown = shown.map(lambda v: v if isinstance(v, str) else "" if pd.isna(v) else f"{v:.1f}")
    notes = [f"{published['table'].iloc[0]} of {published['paper'].iloc[0]}: {published['caption'].iloc[0]}"]
    if per_row:
        note_column = ("note", "") if isinstance(shown.columns, pd.MultiIndex) else "note"
        shown[note_column] = [row_notes.get(label, "") for label in shown.index]
    else:
        notes += [n for n in set(row_notes.values()) if n]
    if runs:
        notes.append("ours: our runs' values in the same cells (%, one decimal); empty where a run does not report "
                     "the metric.")
        if any(tie_text(r) for r in ours):
            notes.append(TIES_NOTE)
    else:
        notes.append("None of the runs reports a metric of this table.")
    data = pd.concat([published.assign(source="published"),
                      pd.DataFrame(ours, columns=["run", "paper_subset", "paper_metric", "metric", "by", "subset",
                                                  "value", "n", "n_tie", "strict"]).assign(source="ours")],
                     ignore_index=True)
    return Table(shown, data, notes)


def _layout(subsets: Sequence[str], metrics: Sequence[str]):
    """How a published (subset, metric) cell is headed: (subset, metric) groups, (metric, subset) for one metric, the
    metric alone for one subset."""
    if len(metrics) == 1 and len(subsets) > 1:
        return lambda s, m: (m, s)
    if len(subsets) == 1:
        return lambda s, m: m
    return lambda s, m: (s, m)


def _our_cells(metrics: pd.DataFrame, by: Sequence[str], paper_subsets: Sequence[str], subsets: Mapping[str, str],
               paper_metrics: Sequence[str], metric_names: Mapping[str, str]) -> list[dict]:
    """Our metric rows that fill a published table's cells, with the published subset and metric they fill."""
    if metrics.empty:
        return []
    wanted_metric = {metric_names.get(m, m): m for m in paper_metrics}
    ours = {_normal(k): v for k, v in subsets.items()}
    wanted_subset = {_normal(ours.get(_normal(s), s)): s for s in paper_subsets}
    cells = []
    for r in metrics.to_dict("records"):
        metric, subset = r["metric"], None
        if r["by"] == "average":
            subset = AVERAGE
        elif r["by"] == "all" and metric.startswith("Avg. ") and metric[5:] in wanted_metric:
            metric, subset = metric[5:], AVERAGE
        elif r["by"] == "all":
            subset = "all"
        elif r["by"] in by:
            subset = str(r["subset"])
        if subset is None or metric not in wanted_metric:
            continue
        paper = wanted_subset.get(_normal(subset))
        if paper is None and subset == AVERAGE:
            paper = next((s for s in paper_subsets if _normal(s) in ("avg", "avg.", "average")), None)
        if paper is not None and not pd.isna(r["value"]):
            cells.append({"run": r["run"], "paper_subset": paper, "paper_metric": wanted_metric[metric],
                          "metric": r["metric"], "by": r["by"], "subset": r["subset"], "value": r["value"],
                          **{k: r.get(k) for k in ("n", "n_tie", "strict")}})
    return cells


STYLE = """
.fb-table{margin:1em 0 1.5em}
.fb-table table{border-collapse:collapse;font-size:13px;font-variant-numeric:tabular-nums}
.fb-table th,.fb-table td{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
.fb-table td.num{text-align:right}
.fb-table .scroll{overflow-x:auto;max-width:100%}
.fb-table thead th{text-align:center;border-bottom:1px solid #888;background:#f6f6f6}
.fb-table tbody th{text-align:left;white-space:nowrap}
.fb-table .ci{display:block;color:#666;font-size:11px;white-space:nowrap}
.fb-table .ties{display:block;color:#a15c00;font-size:11px;white-space:nowrap}
.fb-table caption,.fb-table figcaption{text-align:left;margin:.3em 0}
.fb-table .title{font-weight:bold;font-size:15px}
.fb-table .notes{color:#555;font-size:12px;margin:.3em 0}
.fb-table details{margin:.3em 0;font-size:12px}
""".strip()


def _cell_html(value) -> str:
    """One cell: escaped, with an interval ``[a, b]`` and a tie note ``(ties ...)`` each on its own smaller line."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    text = html.escape(str(value))
    text = re.sub(r"\s*(\[[^\]]*\])", r"<span class='ci'>\1</span>", text)
    return re.sub(r"\s*(\(ties [^)]*\))", r"<span class='ties'>\1</span>", text)


NUMERIC_CELL = re.compile(r"<td>(\s*(?:[-+]?[\d.,]+\*?|nan|-)\s*(?:<span class='ci'>[^<]*</span>)?\s*"
                          r"(?:<span class='ties'>[^<]*</span>)?\s*)</td>")


def numeric_cells(body: str) -> str:
    """Mark the cells holding a number (with its interval) so they align right; text aligns left."""
    return NUMERIC_CELL.sub(r"<td class='num'>\1</td>", body)


def _escaped(index: pd.Index) -> pd.Index:
    if isinstance(index, pd.MultiIndex):
        return pd.MultiIndex.from_tuples([tuple(html.escape(str(x)) for x in t) for t in index], names=index.names)
    return pd.Index([html.escape(str(x)) for x in index], name=index.name)


def table_html(table: Table, title: str = "", caption: str = "", links: str = "") -> str:
    """The table as an HTML fragment: title, caption, the grouped table, footnotes and, for metric rows, every number
    in a collapsed block."""
    parts = ["<figure class='fb-table'>"]
    if title or caption:
        parts.append(f"<figcaption><span class='title'>{html.escape(title)}</span> {html.escape(caption)}"
                     f"{links}</figcaption>")
    if table.shown.empty:
        parts.append("<p class='notes'>No rows: none of the runs reports these numbers.</p>")
    else:
        numbered = type(table.shown.index) is pd.RangeIndex
        shown = table.shown.map(_cell_html)
        shown.index, shown.columns = _escaped(shown.index), _escaped(shown.columns)
        body = shown.to_html(escape=False, na_rep="", border=0, index=not numbered, sparsify=True,
                             index_names=False)
        parts.append(f"<div class='scroll'>{numeric_cells(body)}</div>")
    if table.notes:
        parts.append("<p class='notes'>" + "<br>".join(html.escape(n) for n in table.notes) + "</p>")
    if table.metric_rows and len(table.data):
        details = metric_details(table.data)
        parts.append("<details><summary>All numbers of this table (%)</summary><div class='scroll'>"
                     + numeric_cells(details.to_html(index=False, na_rep="", border=0)) + "</div></details>")
    parts.append("</figure>")
    return "\n".join(parts)


def table_markdown(table: Table, title: str = "", caption: str = "") -> str:
    """The table as Markdown: grouped headers joined with " / ", footnotes below."""
    head = (f"### {title}\n\n" if title else "") + (f"{caption}\n\n" if caption else "")
    if table.shown.empty:
        return head + "_no rows_\n"
    shown = table.shown.copy()
    if isinstance(shown.columns, pd.MultiIndex):
        shown.columns = [" / ".join(str(x) for x in c if str(x)) for c in shown.columns]
    if isinstance(shown.index, pd.MultiIndex):
        shown.index = [" / ".join(str(x) for x in i if str(x)) for i in shown.index]
    notes = "".join(f"\n{n}\n" for n in table.notes)
    return head + shown.to_markdown(index=type(shown.index) is not pd.RangeIndex) + "\n" + notes
