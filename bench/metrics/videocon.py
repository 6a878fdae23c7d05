"""VideoCon (Bansal et al., CVPR 2024): entailment ROC-AUC, SSv2-Temporal retrieval, ATP-Hard accuracy.

The item's shape says which evaluation applies:

- 1 clip x 2 texts (caption, contrast caption): ROC-AUC of the entailment scores with (video, caption) as label 1 and
  (video, contrast caption) as label 0 (Sec. 5.1, Table 2, Fig. 7), over all items, per subset, per misalignment type
  and per source; chance 0.5, Mann-Whitney test. Per item, "caption > contrast" (strict) is kept for browsing.
- many clips (a retrieval set such as SSv2-Temporal): for every text with at least one true clip, rank all clips;
  "AP" = average precision and "R@1/5/10" = a true clip within the top k (``src/calc_ssv2.py``; Table 4 reports mAP).
  Chance: the exact expected AP of a random ranking and 1 - C(N-R, k)/C(N, k). Queries are named
  ``"<item_id>#<text index>"`` in the outcomes.
- 1 clip x more than 2 texts (ATP-Hard statements): right when the true statement scores strictly highest
  (``src/eval_atphard.py``, Table 5), overall and by question type ("causal" / "temporal" from the first letter of
  the ``type`` label); chance 1 / number of options.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from bench.items import Item
from bench.metrics import intervals
from bench.metrics.chance import expected_average_precision, hit_at_k_chance, ranking_chance
from bench.metrics.outcomes import ScoreIndex, beats_all, cells_status, false_texts, outcome, outcomes_frame
from bench.metrics.ranking import auroc, average_precision, hit_at_k, worst_case
from bench.metrics.aggregate import ALL, Settings, row, summarize, with_labels
from bench.store.schema import pair_frame

RETRIEVAL_KS = (1, 5, 10)
DEFAULT_BY = ("misalignment", "source")
TYPE_LABEL = "type"
QUESTION_TYPES = {"C": "causal", "T": "temporal", "D": "descriptive"}
AUROC_NOTE = "ties get half credit (sklearn roc_auc_score); NaN scores ranked worst"


def kind(item: Item) -> str:
    """The evaluation an item's shape calls for: "entailment" (1 x 2), "choice" (1 x >2, ATP-Hard) or
    "retrieval" (many clips)."""
    if len(item.clips) > 1:
        return "retrieval"
    return "entailment" if len(item.texts) == 2 else "choice"


def question_type(item: Item, label: str = TYPE_LABEL) -> str | None:
    """ATP-Hard's question type from the first letter of the ``type`` label (``src/eval_atphard.py``)."""
    value = item.labels.get(label)
    if not value:
        return None
    return QUESTION_TYPES.get(str(value)[0].upper(), str(value))


def entailment_scores(items: Sequence[Item], pair: pd.DataFrame | None) -> pd.DataFrame:
    """One row per entailment item: item_id, subset, caption and contrast scores, status."""
    index = ScoreIndex(pair if pair is not None else pair_frame([]))
    rows = []
    for it in items:
        if it.role != "main" or kind(it) != "entailment":
            continue
        scores, present = index.matrix(it)
        cap = it.truth[0][0]
        rows.append({"item_id": it.item_id, "subset": it.subset, "caption": scores[0, cap],
                     "contrast": scores[0, 1 - cap], "status": cells_status(scores[0], present[0])})
    return pd.DataFrame(rows, columns=["item_id", "subset", "caption", "contrast", "status"])


def _retrieval_rows(item: Item, index: ScoreIndex) -> list[dict]:
    scores, present = index.matrix(item)
    rows = []
    for t in range(len(item.texts)):
        labels = np.array([int(t in item.truth[c]) for c in range(len(item.clips))])
        if not labels.any():
            continue
        qid = f"{item.item_id}#{t}"
        status = cells_status(scores[:, t], present[:, t])
        n, r = len(labels), int(labels.sum())
        rows.append(outcome(qid, item.subset, "AP", average_precision(scores[:, t], labels),
                            expected_average_precision(r, n), status))
        for k in RETRIEVAL_KS:
            rows.append(outcome(qid, item.subset, f"R@{k}", hit_at_k(scores[:, t], labels, k),
                                hit_at_k_chance(k, n, r), status))
    return rows


def outcomes(items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per item (or per retrieval query): "caption > contrast", "AP" and "R@k", or "accuracy"."""
    index = ScoreIndex(pair if pair is not None else pair_frame([]))
    rows = []
    for it in items:
        if it.role != "main":
            continue
        shape = kind(it)
        if shape == "retrieval":
            rows += _retrieval_rows(it, index)
            continue
        scores, present = index.matrix(it)
        metric = "caption > contrast" if shape == "entailment" else "accuracy"
        rows.append(outcome(it.item_id, it.subset, metric, beats_all(scores[0], it.truth[0], false_texts(it, 0)),
                            ranking_chance(len(it.texts), len(it.truth[0])), cells_status(scores[0], present[0])))
    return outcomes_frame(rows)


def auroc_row(group: pd.DataFrame, by: str, subset: str, settings: Settings) -> dict:
    """ROC-AUC of one group of entailment items, bootstrapped over items (each item brings its two scores)."""
    cap, con = group["caption"].to_numpy(float), group["contrast"].to_numpy(float)
    n = len(group)
    labels = np.r_[np.ones(n, int), np.zeros(n, int)]
    scores = np.r_[cap, con]
    ci = intervals.bootstrap_auroc(scores, labels, np.r_[np.arange(n), np.arange(n)], settings.n_boot,
                                   settings.level, settings.seed)
    ranked = worst_case(scores, labels)
    p_value = intervals.mann_whitney_test(ranked[labels == 1], ranked[labels == 0])
    status = group["status"]
    return row("AUROC", by, subset, auroc(scores, labels), tuple(ci), 0.5, n, p_value, settings, "mann-whitney",
               n_missing=int((status == "missing").sum()), n_nan=int((status == "nan").sum()), note=AUROC_NOTE)


def map_row(group: pd.DataFrame, by: str, subset: str, settings: Settings, sizes: dict[str, tuple[int, int]],
            n_sim: int = 2000) -> dict:
    """mAP over retrieval queries, tested against random rankings of each query's candidates (simulated)."""
    values = group["value"].to_numpy(float)
    observed = float(values.mean())
    rng = np.random.default_rng(settings.seed)
    simulated = np.zeros(n_sim)
    for qid in group["item_id"]:
        n, r = sizes[qid]
        positives = np.argsort(rng.random((n_sim, n)), axis=1)[:, :r]
        ranks = np.sort(positives, axis=1) + 1
        simulated += np.mean(np.arange(1, r + 1) / ranks, axis=1)
    simulated /= len(group)
    p_value = float((1 + np.sum(simulated >= observed - 1e-12)) / (n_sim + 1))
    status = group["status"]
    ci = intervals.bootstrap_ci(values, settings.n_boot, settings.level, settings.seed)
    return row("mAP", by, subset, observed, ci, float(group["chance"].mean()), len(group), p_value, settings,
               "random-ranking simulation", n_missing=int((status == "missing").sum()),
               n_nan=int((status == "nan").sum()), note="chance: exact expected AP of a random ranking")


def table(items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None = None, *,
          measure: str | None = None, settings: Settings = Settings(), by: Sequence[str] | None = None) -> pd.DataFrame:
    """AUROC (all, per subset and per label in ``by``), mAP and R@k per retrieval set, ATP-Hard accuracy overall and
    per question type."""
    labels_present = {k for it in items for k in it.labels}
    by = tuple(b for b in DEFAULT_BY if b in labels_present) if by is None else tuple(by)
    parts = []
    ent = entailment_scores(items, pair)
    if len(ent):
        ent = with_labels(ent, items, by)
        rows = [auroc_row(ent, ALL, ALL, settings)]
        for column in ("subset", *by):
            for value, group in ent.groupby(column, sort=True):
                rows.append(auroc_row(group, column, str(value), settings))
        parts.append(pd.DataFrame(rows))
    out = outcomes(items, pair)
    if len(out):
        types = {it.item_id: question_type(it) for it in items if kind(it) == "choice"}
        out["question type"] = out["item_id"].map(types)
        queries = out[out["metric"] == "AP"]
        parts.append(summarize(out[out["metric"] != "AP"], settings,
                               by=("question type",) if any(types.values()) else ()))
        if len(queries):
            sizes = {}
            for it in items:
                if kind(it) == "retrieval":
                    for t in range(len(it.texts)):
                        r = sum(t in truth for truth in it.truth)
                        sizes[f"{it.item_id}#{t}"] = (len(it.clips), r)
            rows = [map_row(queries, ALL, ALL, settings, sizes)]
            rows += [map_row(g, "subset", str(s), settings, sizes) for s, g in queries.groupby("subset", sort=True)]
            parts.append(pd.DataFrame(rows))
    if not parts:
        raise ValueError("no VideoCon items to score")
    return pd.concat(parts, ignore_index=True)
