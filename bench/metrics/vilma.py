"""ViLMA (Kesen et al., ICLR 2024): pairwise ranking accuracy on the proficiency (P), main (T) and combined tests.

- acc_r (Sec. 4.2; official ``bin/eval.py``): an item is right when the caption scores strictly above every foil
  (ties fail; SRL action replacement items have two foils, so their chance is 1/3).
- P+T (Sec. 4.2; ``bin/multi_eval.py``): right only when both the main item and its proficiency twin are right;
  chance = the product of the two chances.
- Avg. (Table 2): the mean over the five tests of each test's P+T, each test pooling its subtests' items (the "All"
  columns of Tables 7-11 pool items the same way).
- For probability scores (``measure == "p_yes"``), ``bin/eval.py``'s flattened binary metrics with captions as
  label 1 and foils as 0 at threshold 0.5 (torchmetrics: predicted caption iff p > 0.5): p_c, p_f, min(p_c, p_f),
  accuracy and AUROC; the "P+T" variants first overwrite the main scores of items whose proficiency test failed
  with 0.001 (caption) / 0.999 (foils), as ``bin/multi_eval.py`` does.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from bench.items import Item
from bench.metrics import intervals
from bench.metrics.chance import ranking_chance
from bench.metrics.outcomes import (ScoreIndex, beats_all, cells_status, false_texts, outcome, outcomes_frame,
                                    worst_status)
from bench.metrics.ranking import worst_case
from bench.registry import spec
from bench.metrics.aggregate import ALL, Settings, mean_of_means_row, row, summarize, with_labels
from bench.store.schema import pair_frame

# A proficiency test always has one caption and one foil (BENCHMARKS.md 1.2); used when a twin is absent.
PROFICIENCY_CHANCE = 0.5
# bin/multi_eval.py: main scores of items whose proficiency test failed, in probability mode.
FAILED_PROFICIENCY_SCORES = (0.001, 0.999)
THRESHOLD = 0.5
DEFAULT_BY: tuple[str, ...] = ()


def test_of(subset: str) -> str:
    """The paper's test name for a subtest (file stem); unknown stems are their own test."""
    for prefix, name in spec("vilma").labels["tests"]:
        if subset.startswith(prefix):
            return name
    return subset


def _ranking(item: Item, index: ScoreIndex) -> tuple[bool, float, str]:
    scores, present = index.matrix(item)
    status = cells_status(scores[0], present[0])
    correct = beats_all(scores[0], item.truth[0], false_texts(item, 0))
    return correct, ranking_chance(len(item.texts), len(item.truth[0])), status


def outcomes(items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per main item: "P" (its proficiency twin), "T" and "P+T" outcomes (see :mod:`bench.metrics.outcomes`).

    Items without a twin get "T" only; a twin named but absent from ``items`` counts as missing.
    """
    index = ScoreIndex(pair if pair is not None else pair_frame([]))
    by_id = {it.item_id: it for it in items}
    rows = []
    for it in items:
        if it.role != "main":
            continue
        t_ok, t_chance, t_status = _ranking(it, index)
        if it.twin_id is not None:
            twin = by_id.get(it.twin_id)
            if twin is None:
                p_ok, p_chance, p_status = False, PROFICIENCY_CHANCE, "missing"
            else:
                p_ok, p_chance, p_status = _ranking(twin, index)
            rows.append(outcome(it.item_id, it.subset, "P", p_ok, p_chance, p_status))
        rows.append(outcome(it.item_id, it.subset, "T", t_ok, t_chance, t_status))
        if it.twin_id is not None:
            rows.append(outcome(it.item_id, it.subset, "P+T", p_ok and t_ok, p_chance * t_chance,
                                worst_status(p_status, t_status)))
    return outcomes_frame(rows)


def caption_foil_scores(items: Sequence[Item], pair: pd.DataFrame | None, *, combined: bool = False) -> pd.DataFrame:
    """Main-test scores flattened as ``bin/eval.py`` does: item_id, subset, label (1 caption, 0 foil), score, status.

    With ``combined``, items whose proficiency test failed get scores 0.001 / 0.999 (``bin/multi_eval.py``).
    """
    index = ScoreIndex(pair if pair is not None else pair_frame([]))
    failed_p: set[str] = set()
    if combined:
        prof = outcomes(items, pair)
        failed_p = set(prof.loc[(prof["metric"] == "P") & (prof["value"] == 0), "item_id"])
    rows = []
    for it in items:
        if it.role != "main":
            continue
        scores, present = index.matrix(it)
        for t in range(len(it.texts)):
            label = int(t in it.truth[0])
            status = cells_status(scores[0, t:t + 1], present[0, t:t + 1])
            score = scores[0, t]
            if it.item_id in failed_p:
                score = FAILED_PROFICIENCY_SCORES[0] if label else FAILED_PROFICIENCY_SCORES[1]
            rows.append({"item_id": it.item_id, "subset": it.subset, "label": label, "score": score,
                         "status": status})
    return pd.DataFrame(rows, columns=["item_id", "subset", "label", "score", "status"])


def _weighted_metrics(s: np.ndarray, y: np.ndarray, codes: np.ndarray, n_values: int,
                      w: np.ndarray) -> dict[str, float]:
    pred_caption, pred_foil = s > THRESHOLD, (1.0 - s) > THRESHOLD
    n_c, n_f = w[pred_caption].sum(), w[pred_foil].sum()
    p_c = float(w[pred_caption & (y == 1)].sum() / n_c) if n_c else 0.0
    p_f = float(w[pred_foil & (y == 0)].sum() / n_f) if n_f else 0.0
    return {"p_c": p_c, "p_f": p_f, "min(p_c, p_f)": min(p_c, p_f),
            "acc": float(w[pred_caption.astype(int) == y].sum() / w.sum()) if w.sum() else float("nan"),
            "AUROC": intervals.weighted_auroc(codes, n_values, y, w)}


def probability_metrics(scores: Sequence[float], labels: Sequence[int]) -> dict[str, float]:
    """``bin/eval.py``'s probability-mode metrics: p_c, p_f, min(p_c, p_f), acc, AUROC (NaN scores worst-case).

    p_c is the precision of "caption" predictions (p > 0.5), p_f that of "foil" predictions (1 - p > 0.5); a
    precision with no predictions is 0, torchmetrics' ``zero_division`` default.
    """
    y = np.asarray(labels, dtype=int)
    ranked = worst_case(scores, y)
    values, codes = np.unique(ranked, return_inverse=True)
    return _weighted_metrics(np.clip(ranked, 0.0, 1.0), y, codes, len(values), np.ones(len(y)))


def _probability_rows(flat: pd.DataFrame, by: str, subset: str, prefix: str, settings: Settings) -> list[dict]:
    unit_ids, units = np.unique(flat["item_id"].to_numpy(), return_inverse=True)
    scores, labels = flat["score"].to_numpy(float), flat["label"].to_numpy(int)
    ranked = worst_case(scores, labels)
    s = np.clip(ranked, 0.0, 1.0)
    values_sorted, codes = np.unique(ranked, return_inverse=True)
    names = ["p_c", "p_f", "min(p_c, p_f)", "acc", "AUROC"]
    values = probability_metrics(scores, labels)
    rng = np.random.default_rng(settings.seed)
    samples = np.array([
        [m[k] for k in names]
        for m in (_weighted_metrics(s, labels, codes, len(values_sorted),
                                    intervals.unit_weights(rng, units, len(unit_ids)))
                  for _ in range(settings.n_boot))])
    tail = (1 - settings.level) / 2 * 100
    cis = [tuple(np.nanpercentile(samples[:, j], [tail, 100 - tail])) for j in range(len(names))]
    prevalence = float(labels.mean())
    pred_c, pred_f = s > THRESHOLD, (1.0 - s) > THRESHOLD
    tests = {
        "p_c": (intervals.binomial_test(int((labels[pred_c] == 1).sum()), int(pred_c.sum()), prevalence),
                prevalence, "binomial"),
        "p_f": (intervals.binomial_test(int((labels[pred_f] == 0).sum()), int(pred_f.sum()), 1 - prevalence),
                1 - prevalence, "binomial"),
        "min(p_c, p_f)": (float("nan"), min(prevalence, 1 - prevalence), ""),
        "acc": (intervals.binomial_test(int((pred_c.astype(int) == labels).sum()), len(labels), 0.5), 0.5,
                "binomial"),
        "AUROC": (intervals.mann_whitney_test(ranked[labels == 1], ranked[labels == 0]), 0.5, "mann-whitney"),
    }
    status = flat.groupby("item_id", sort=False)["status"].agg(lambda st: worst_status(*st))
    out = []
    for j, name in enumerate(names):
        p_value, chance, test = tests[name]
        note = "threshold 0.5 on caption/foil probabilities (bin/eval.py); chance = class share"
        if prefix:
            p_value, chance, test = float("nan"), float("nan"), ""
            note = "scores of items failing P overwritten (bin/multi_eval.py); no defined chance"
        out.append(row(prefix + name, by, subset, values[name], cis[j], chance, len(unit_ids), p_value,
                       settings, test, n_missing=int((status == "missing").sum()),
                       n_nan=int((status == "nan").sum()), note=note))
    return out


def probability_table(items: Sequence[Item], pair: pd.DataFrame | None,
                      settings: Settings = Settings()) -> pd.DataFrame:
    """The probability-mode rows (plain and P+T variants), over all items and per subtest."""
    out = []
    for combined, prefix in ((False, ""), (True, "P+T ")):
        flat = caption_foil_scores(items, pair, combined=combined)
        if not len(flat):
            continue
        out += _probability_rows(flat, ALL, ALL, prefix, settings)
        for subset, group in flat.groupby("subset", sort=True):
            out += _probability_rows(group, "subset", str(subset), prefix, settings)
    return pd.DataFrame(out)


def table(items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None = None, *,
          measure: str | None = None, settings: Settings = Settings(), by: Sequence[str] | None = None) -> pd.DataFrame:
    """P, T and P+T over all items, per subtest and per test; the average of the tests' P+T ("Avg.", Table 2);
    and, for probability scores, the rows of :func:`probability_table`."""
    by = tuple(DEFAULT_BY if by is None else by)
    out = with_labels(outcomes(items, pair), items, by)
    out["test"] = out["subset"].map(test_of)
    parts = [summarize(out, settings, by=("test", *by))]
    groups: dict[str, list[str]] = {}
    for subset in dict.fromkeys(out["subset"]):
        groups.setdefault(test_of(subset), []).append(subset)
    avg = mean_of_means_row(out, "P+T", groups, "Avg. P+T", settings)
    if avg:
        parts.append(pd.DataFrame([avg]))
    if measure == "p_yes":
        parts.append(probability_table(items, pair, settings))
    return pd.concat([p for p in parts if len(p)], ignore_index=True)
