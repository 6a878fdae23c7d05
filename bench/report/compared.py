"""Two report sections built from :mod:`bench.analysis`: "What can be solved without the video" (each full run beside
its shortcut controls, per label value, with the paired test of each drop) and "Models compared" (per benchmark:
the agreement matrix, the paired tests, the hardest items with their texts). Each table is saved with
:func:`bench.report.outputs.save_table` under ``<out>/compared/``."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import pandas as pd

from bench.analysis.items import (Judgements, agreement_matrix, item_outcomes, item_table, pair_table,
                                  shared_items, tie_notes)
from bench.analysis.agreement import compare_pair
from bench.frames.controls import base_policy, run_control
from bench.metrics.intervals import clopper_pearson, holm
from bench.metrics.ties import most_tied
from bench.report.outputs import save_table
from bench.report.tables import Table, percent, plain_table, table_html
from bench.store import Run

FOLDER = "compared"
HARDEST = 10


def _label(runs: Sequence[Run], labels: Sequence[str]) -> str:
    """The first of ``labels`` (the report's ``--pool`` labels) that the runs' items carry, else ``subset``."""
    return next((label for label in labels if any(it.labels.get(label) for r in runs for it in r.items())), "subset")


def _by_benchmark(runs: Sequence[Run]) -> dict[str, list[Run]]:
    found: dict[str, list[Run]] = {}
    for r in runs:
        found.setdefault(str(r.manifest.benchmark), []).append(r)
    return found


def _setup(run: Run) -> tuple:
    return run.manifest.model, run.manifest.protocol, str(run.manifest.prompt)


def control_pairs(runs: Sequence[Run]) -> list[tuple[Run, Run, str]]:
    """(full run, control run, control) of one benchmark's runs: a control is matched to the full run of the same
    model, protocol and prompt whose frame policy it derives from (reordered controls) or to the first such run."""
    full = [r for r in runs if run_control(r.manifest) is None]
    pairs = []
    for run in runs:
        control = run_control(run.manifest)
        if control is None:
            continue
        mates = [f for f in full if _setup(f) == _setup(run)]
        exact = [f for f in mates if base_policy(f.manifest.frame_policy) ==
                 base_policy(run.manifest.frame_policy)]
        chosen = (exact or mates)[:1]
        if chosen:
            pairs.append((chosen[0], run, control))
    return pairs


def _cell(k: int, n: int) -> str:
    if not n:
        return ""
    low, high = clopper_pearson(k, n)
    return f"{percent(k / n)} [{percent(low)}, {percent(high)}]"


def controls_table(runs: Sequence[Run], labels: Sequence[str] = (), judged: Judgements | None = None) -> pd.DataFrame:
    """Per full run, control and label value (and all items): both accuracies with their exact intervals on the items
    both scored (a tied item is not told apart), the items each tied, the drop, and the exact McNemar p-value,
    Holm-corrected across the values of each pair (``judged``: the runs' judgements already worked out)."""
    label = _label(runs, labels)
    judged = judged or Judgements()
    rows = []
    for full, control_run, control in control_pairs(runs):
        long, _ = item_outcomes({"full": full, "control": control_run}, judged)
        shared = shared_items(long, "full", "control")
        groups = [("all", shared)] + [(str(v), g) for v, g in shared.groupby(shared[label].astype(str), sort=True)
                                      if v not in ("", "None", "nan")]
        found = []
        for value, group in groups:
            stats = compare_pair(group["right_a"], group["right_b"])
            found.append({"run": full.label, "control": control, "control run": control_run.label, label: value,
                          "n": stats["n"], "full": stats["accuracy_a"], "with control": stats["accuracy_b"],
                          "drop": stats["accuracy_a"] - stats["accuracy_b"],
                          "full_cell": _cell(stats["both"] + stats["only_a"], stats["n"]),
                          "control_cell": _cell(stats["both"] + stats["only_b"], stats["n"]),
                          "tied full": int(group["tie_a"].sum()), "tied control": int(group["tie_b"].sum()),
                          "mcnemar_p": stats["mcnemar_p"]})
        for row, p in zip(found[1:], holm([r["mcnemar_p"] for r in found[1:]])):
            row["p_holm"] = float(p)
        found[0]["p_holm"] = found[0]["mcnemar_p"]
        rows += found
    return pd.DataFrame(rows)


def _most_tied(overall: pd.DataFrame) -> list[str]:
    """A sentence for each run of the controls' 'all' rows that tied most of the items it shares with its pair."""
    found = {}
    for r in overall.to_dict("records"):
        for run, tied in ((r["run"], r["tied full"]), (r["control run"], r["tied control"])):
            found.setdefault(run, most_tied(run, int(tied), int(r["n"])))
    return [note for note in found.values() if note]


def _p(value: float) -> str:
    return "" if value is None or math.isnan(value) else f"{value:.2g}"


def controls_section(out: Path, runs: Sequence[Run], labels: Sequence[str] = (),
                     judged: Judgements | None = None) -> str:
    """The section "What can be solved without the video" (empty when no run is a control), by the first of
    ``labels`` the items carry (else by subset); ``judged``: the runs' judgements already worked out."""
    parts = []
    for benchmark, own in _by_benchmark(runs).items():
        table = controls_table(own, labels, judged)
        if table.empty:
            continue
        label = _label(own, labels)
        shown = pd.DataFrame({"run": table["run"], "control": table["control"], label: table[label],
                              "items": table["n"], "full (%)": table["full_cell"],
                              "with control (%)": table["control_cell"],
                              "ties (full / control)": [f"{a} / {b}" for a, b in
                                                        zip(table["tied full"], table["tied control"])],
                              "drop (points)": [f"{100 * d:+.1f}" for d in table["drop"]],
                              "McNemar p": [_p(p) for p in table["mcnemar_p"]],
                              "Holm p": [_p(p) for p in table["p_holm"]]})
        result = Table(shown, table.drop(columns=["full_cell", "control_cell"]),
                       ["Accuracy in % on the items both runs scored, with exact 95% intervals: an item is right when "
                        "the true text won outright; an item a tie decided is not told apart (wrong), whatever the "
                        "benchmark's official rule gives it; ties: the items each run tied. Drop: full minus "
                        "control; McNemar: exact two-sided test of the paired difference; Holm: corrected across the "
                        f"values of {label} of each pair (the 'all' row is not corrected).",
                        *_most_tied(table[table[label] == "all"])])
        title = f"{benchmark}: each run beside its controls"
        caption = "blind: no video; one-frame: the middle frame; shuffled / reversed: the same frames out of order."
        save_table(result, out / FOLDER, f"{benchmark}-controls", title, caption)
        parts.append(table_html(result, title, caption))
    if not parts:
        return ""
    return "<h2 id='controls'>What can be solved without the video</h2>\n" + "\n".join(parts)


def models_compared_section(out: Path, runs: Sequence[Run], labels: Sequence[str] = (),
                            judged: Judgements | None = None) -> str:
    """The section "Models compared": per benchmark with two or more full runs, the kappa matrix, the paired tests
    per label value and the hardest items (empty when no benchmark has two; ``judged``: the runs' judgements already
    worked out)."""
    parts = []
    for benchmark, own in _by_benchmark(runs).items():
        full = {r.label: r for r in own if run_control(r.manifest) is None}
        if len(full) < 2:
            continue
        label = _label(own, labels)
        long, items = item_outcomes(full, judged)
        pairs = pair_table(long, label)
        ties = tie_notes(long)
        matrix = agreement_matrix(pairs).map(lambda v: "" if math.isnan(v) else f"{v:.2f}")
        matrix.index.name = "run"
        tables = [
            (f"{benchmark}-kappa", Table(matrix, agreement_matrix(pairs).reset_index(names="run"),
                                         ["Cohen's kappa on the items both runs scored (1: the same items right; 0: "
                                          "no more agreement than chance).", *ties]),
             f"{benchmark}: agreement beyond chance", "Cohen's kappa of each pair of runs."),
            (f"{benchmark}-pairs", _pairs_table(pairs, ties), f"{benchmark}: paired tests",
             f"Each pair on the items both scored, over all items and per {label}."),
            (f"{benchmark}-hardest", _hardest_table(item_table(long, items), label, ties),
             f"{benchmark}: hardest items", "The items the fewest runs get right, with their texts."),
        ]
        for name, table, title, caption in tables:
            save_table(table, out / FOLDER, name, title, caption)
            parts.append(table_html(table, title, caption))
    if not parts:
        return ""
    return "<h2 id='compared'>Models compared</h2>\n" + "\n".join(parts)


def _pairs_table(pairs: pd.DataFrame, ties: Sequence[str] = ()) -> Table:
    shown = pd.DataFrame({
        "a": pairs["a"], "b": pairs["b"],
        "items": ["all" if lab is None else f"{lab}={val}" for lab, val in zip(pairs["label"], pairs["value"])],
        "n": pairs["n"], "agreement (%)": [percent(v) for v in pairs["agreement"]],
        "kappa [95% CI]": ["" if math.isnan(k) else f"{k:.2f} [{lo:.2f}, {hi:.2f}]"
                           for k, (lo, hi) in zip(pairs["kappa"], pairs["kappa_ci"])],
        "accuracy a (%)": [percent(v) for v in pairs["accuracy_a"]],
        "accuracy b (%)": [percent(v) for v in pairs["accuracy_b"]],
        "ties a / b": [f"{a} / {b}" for a, b in zip(pairs["tied_a"], pairs["tied_b"])],
        "McNemar p": [_p(p) for p in pairs["mcnemar_p"]],
        "Holm p": [_p(p) if lab is not None else "" for p, lab in zip(pairs["p_holm"], pairs["label"])]})
    return Table(shown, pairs.assign(kappa_ci=[list(c) for c in pairs["kappa_ci"]]),
                 ["Kappa: Wald interval with the large-sample SE of Fleiss, Cohen & Everitt (1969). McNemar: exact, "
                  "two-sided; Holm: corrected across the values of each pair. Accuracy: the true text won outright; "
                  "ties a / b: the items each run tied, judged not told apart.", *ties])


def _hardest_table(items: pd.DataFrame, label: str, ties: Sequence[str] = ()) -> Table:
    top = items.head(HARDEST)
    frame = pd.DataFrame({"item": top["item_id"], label: top[label] if label in top else "",
                          "runs right": [f"{k}/{n}" for k, n in zip(top["runs_right"], top["runs_scored"])],
                          "runs tied": top["runs_tied"],
                          "difficulty (%)": [f"{percent(d, 0)} [{percent(lo, 0)}, {percent(hi, 0)}]" for d, lo, hi in
                                             zip(top["difficulty"], top["difficulty_low"], top["difficulty_high"])],
                          "texts": list(top["text"])})
    return plain_table(frame, notes=["Difficulty: the share of runs that got the item right (a tie is not told "
                                     "apart), with its exact 95% interval; runs tied: the runs whose true and false "
                                     "texts scored alike on it; texts: the true one marked (true).", *ties])
