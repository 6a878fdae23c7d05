"""Per-item tables for error analysis across runs, in long form: each run's correctness per item on the metrics that
apply to it, each item's margin in each run, and the flags the item browser filters on (wrong somewhere, runs
disagree, ClassicVLE right but StrictVLE wrong). An item a tie decided is not told apart: the flags read the
``strict`` credit (a tie fails), whatever the benchmark's official rule gives it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from bench.items import Item
from bench.metrics.aggregate import Settings
from bench.metrics.dispatch import benchmark_outcomes, metric_table
from bench.metrics.outcomes import ScoreIndex, false_texts


@dataclass(frozen=True)
class RunScores:
    """What the per-item tables read of a run: its pair and choice tables and its score measure."""

    pair: pd.DataFrame | None
    choice: pd.DataFrame | None = None
    measure: str | None = None

    @classmethod
    def of(cls, run) -> RunScores:
        """The scores of a stored run (``bench.store.Run``)."""
        return cls(run.pair, run.choice, run.manifest.measure)


Runs = Mapping[str, RunScores]
OUTCOME_COLUMNS = ["run", "item_id", "metric", "value", "strict", "tie", "status"]


def applicable_outcomes(items: Sequence[Item], scores: RunScores) -> pd.DataFrame:
    """The run's per-item outcomes on the metrics that apply to it: those its benchmark's metric table reports for
    the run's measure and tables (VELOCITI: StrictVLE only for probabilities, the MC metrics only for multiple-choice
    answers), less any metric the run scored on no item (ViLMA's metrics read no multiple-choice answers)."""
    outcomes = benchmark_outcomes(items, scores.pair, scores.choice)
    if not len(outcomes):
        return outcomes
    reported = set(metric_table(items, scores.pair, scores.choice, measure=scores.measure,
                                settings=Settings(n_boot=1), by=())["metric"])
    scored = set(outcomes.loc[outcomes["status"] != "missing", "metric"])
    return outcomes[outcomes["metric"].isin(reported & scored)]


def run_outcomes(items: Sequence[Item], runs: Runs) -> pd.DataFrame:
    """Columns run, item_id, metric, value, strict, tie, status: every run's per-item outcomes on the metrics that
    apply to it (:func:`applicable_outcomes`; value 0 for any status but "ok", as in the metrics; ``strict``: the
    credit when a tie fails; ``tie``: a tie decided it)."""
    parts = [applicable_outcomes(items, scores)[OUTCOME_COLUMNS[1:]].assign(run=label)
             for label, scores in runs.items()]
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True)[OUTCOME_COLUMNS] if parts else pd.DataFrame(columns=OUTCOME_COLUMNS)


def _gap(winners: np.ndarray, losers: np.ndarray) -> float:
    return float(np.min(winners) - np.max(losers))


def score_margin(items: Sequence[Item], pair: pd.DataFrame) -> pd.Series:
    """Per item, the smallest gap by which its true pairs beat its false ones: over each clip, its true texts'
    lowest score minus its false texts' highest, and (items of several clips) over each text, its clips' lowest score
    minus the other clips' highest. Positive exactly when every ranking the item asks for is right (a tie gives 0);
    NaN when a needed score is absent or NaN."""
    index = ScoreIndex(pair)
    margins = {}
    for it in items:
        scores, present = index.matrix(it)
        gaps = []
        for c, true in enumerate(it.truth):
            wrong = false_texts(it, c)
            if true and wrong:
                gaps.append(_gap(scores[c, list(true)], scores[c, wrong]) if present[c][list(true) + wrong].all()
                            else np.nan)
        for t in range(len(it.texts)):
            own = [c for c, row in enumerate(it.truth) if t in row]
            other = [c for c in range(len(it.clips)) if c not in own]
            if own and other:
                gaps.append(_gap(scores[own, t], scores[other, t]) if present[own + other, t].all() else np.nan)
        margins[it.item_id] = min(gaps) if gaps and not np.isnan(gaps).any() else np.nan
    return pd.Series(margins, name="margin", dtype=float)


def choice_margin(items: Sequence[Item], choice: pd.DataFrame) -> pd.Series:
    """Per item, over every multiple-choice question asked (each option order): the lowest letter logit of a right
    option minus the highest of a wrong one; the smallest. NaN when a question has no logits (imported answers)."""
    by_item = {item_id: rows for item_id, rows in choice.groupby("item_id", sort=False)} if len(choice) else {}
    margins = {}
    for it in items:
        gaps = []
        for r in by_item.get(it.item_id, pd.DataFrame()).itertuples():
            options, logits = [int(o) for o in r.options], np.asarray(r.logits, dtype=float)
            if r.axis == "text":
                right = [k for k, o in enumerate(options) if o in it.truth[r.query]]
            else:
                right = [k for k, o in enumerate(options) if r.query in it.truth[o]]
            wrong = [k for k in range(len(options)) if k not in right]
            if right and wrong:
                gaps.append(_gap(logits[right], logits[wrong]) if len(logits) == len(options) else np.nan)
        margins[it.item_id] = min(gaps) if gaps and not np.isnan(gaps).any() else np.nan
    return pd.Series(margins, name="margin", dtype=float)


def run_margins(items: Sequence[Item], runs: Runs) -> pd.DataFrame:
    """Columns run, item_id, margin (in each run's unit: score gaps for pair scores, letter-logit gaps for
    multiple-choice answers; see :func:`score_margin`, :func:`choice_margin`) for the main items."""
    main = [it for it in items if it.role == "main"]
    parts = []
    for label, scores in runs.items():
        if scores.pair is not None and len(scores.pair):
            margin = score_margin(main, scores.pair)
        elif scores.choice is not None and len(scores.choice):
            margin = choice_margin(main, scores.choice)
        else:
            continue
        parts.append(margin.rename_axis("item_id").reset_index().assign(run=label))
    columns = ["run", "item_id", "margin"]
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)


def headline_metrics(outcomes: pd.DataFrame, metric: str | None = None) -> dict[str, str]:
    """Per run of :func:`run_outcomes`, the metric to judge it by: ``metric`` where it applies, else the run's
    first."""
    chosen = {}
    for run, own in outcomes.groupby("run", sort=False):
        names = list(dict.fromkeys(own["metric"]))
        chosen[run] = metric if metric in names else names[0]
    return chosen


def item_flags(items: Sequence[Item], outcomes: pd.DataFrame, metric: str | None = None) -> pd.DataFrame:
    """One row per main item: item_id, subset, ``wrong`` (wrong on some metric of some run), ``disagree`` (runs
    differ on their :func:`headline_metrics`) and ``classic_not_strict`` (some run right under ClassicVLE and wrong
    under StrictVLE), each judged by the ``strict`` credit (a tied item is not told apart). ``outcomes`` is
    :func:`run_outcomes`."""
    main = [it for it in items if it.role == "main"]
    frame = pd.DataFrame({"item_id": [it.item_id for it in main], "subset": [it.subset for it in main]})
    ids = frame["item_id"]
    told = "strict" if "strict" in outcomes.columns else "value"
    wrong = set(outcomes.loc[outcomes[told] == 0, "item_id"])
    headline = [outcomes[(outcomes["run"] == run) & (outcomes["metric"] == chosen)].set_index("item_id")[told]
                for run, chosen in headline_metrics(outcomes, metric).items()]
    disagree = (pd.concat(headline, axis=1).nunique(axis=1, dropna=True) > 1) if len(headline) > 1 else None
    wide = outcomes[outcomes["metric"].isin(["ClassicVLE", "StrictVLE"])].pivot_table(
        index=["run", "item_id"], columns="metric", values=told, aggfunc="first")
    classic_not_strict: set = set()
    if {"ClassicVLE", "StrictVLE"} <= set(wide.columns):
        hits = wide[(wide["ClassicVLE"] == 1) & (wide["StrictVLE"] == 0)]
        classic_not_strict = set(hits.index.get_level_values("item_id"))
    return frame.assign(wrong=ids.isin(wrong),
                        disagree=ids.map(disagree).fillna(False).astype(bool) if disagree is not None else False,
                        classic_not_strict=ids.isin(classic_not_strict))
