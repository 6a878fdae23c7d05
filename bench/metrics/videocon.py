"""VideoCon (Bansal et al., CVPR 2024): entailment ROC-AUC, SSv2-Temporal retrieval, ATP-Hard accuracy.

The item's shape says which evaluation applies:

- 1 clip x 2 texts (caption, contrast caption): ROC-AUC of the entailment scores with (video, caption) as label 1 and
  (video, contrast caption) as label 0 (Sec. 5.1, Table 2, Fig. 7), over all items, per subset, per misalignment type
  and per source; chance 0.5. The README names ``sklearn.metrics.roc_auc_score`` (no script is released), which gives
  a tied pair half credit: that is ``official`` and ``expected``; ``strict`` gives it none. Per item, "caption >
  contrast" is kept for browsing (a tie: 1/2 under ``official``, as in the AUC).
- many clips (a retrieval set such as SSv2-Temporal): for every text with at least one true clip, rank all clips;
  "AP" = average precision and "R@1/5/10" = a true clip within the top k (Table 4 reports mAP). Chance: the exact
  expected AP of a random ranking and 1 - C(N-R, k)/C(N, k). Queries are named ``"<item_id>#<text index>"``.
  ``official`` reproduces ``src/calc_ssv2.py``: rows sorted by ``videopath`` (L37, L45), ranked by
  ``np.argsort(-pred)`` (L62), whose order among equal scores is numpy's; the paper's figures come from numpy < 1.25,
  whose introsort :func:`bench.metrics.legacy_sort.introsort_argsort` reimplements (numpy >= 1.25 orders ties
  differently). ``strict`` ranks a positive after the negatives it ties with; ``expected`` averages over tied orders.
- 1 clip x more than 2 texts (ATP-Hard statements): right when the true statement scores highest (Table 5), overall
  and by question type ("causal" / "temporal" from the first letter of the ``type`` label); chance 1 / number of
  options. ``official`` is ``src/eval_atphard.py``: ``np.argmax`` (L38), so the first listed option wins a tie, and
  questions are grouped by (video, question) keeping only groups of exactly 5 rows (L36-37), so a question asked twice
  of one video with different options is skipped (dropped, counted in ``n_dropped``). Questions whose options repeat
  the true statement word for word are reported in the table's note (:func:`duplicate_true_options`).
- Multiple-choice runs (our ``mc`` protocol; VideoCon publishes none): "caption chosen" for caption/contrast items,
  "accuracy" for ATP-Hard and "true text chosen" per clip of a retrieval set, each right only when the true option is
  chosen in every order asked.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from bench.items import Item
from bench.metrics import intervals
from bench.metrics.aggregate import (ALL, Settings, credits, resampled, resampled_test, row, summarize,
                                     tested, with_labels)
from bench.metrics.chance import choice_chance, expected_average_precision, hit_at_k_chance, ranking_chance
from bench.metrics.legacy_sort import introsort_argsort
from bench.metrics.outcomes import (ChoiceIndex, ScoreIndex, all_orders, answers_status, cells_status, false_texts,
                                    outcome, per_item)
from bench.metrics.ranking import auroc, average_precision, hit_at_k, tie_credit, worst_case
from bench.metrics.ties import DEFAULT_TIES, Decision, decide, rule_for
from bench.store.schema import pair_frame

RETRIEVAL_KS = (1, 5, 10)
DEFAULT_BY = ("misalignment", "source")
TYPE_LABEL = "type"
QUESTION_TYPES = {"C": "causal", "T": "temporal", "D": "descriptive"}
AUROC_NOTE = "NaN scores ranked worst"
# src/eval_atphard.py L38: np.argmax, the first listed option wins a tie.
OFFICIAL_CHOICE_TIES = "first"
# README: sklearn roc_auc_score, half credit for a tied pair (the expectation over tie orders).
OFFICIAL_PAIR_TIES = "expected"


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


def official_order(item: Item, scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The ranking ``src/calc_ssv2.py`` computes: candidates sorted by video path, then numpy's (< 1.25)
    ``argsort(-pred)``; best first, as clip indices (NaN scores worst-case first)."""
    names = item.labels.get("video_names") or [clip.path for clip in item.clips]
    by_path = np.argsort(np.asarray(names, dtype=object), kind="stable")
    ranked = worst_case(scores, labels)[by_path]
    return by_path[introsort_argsort(-ranked)]


def _retrieval_rows(item: Item, index: ScoreIndex, ties: str) -> list[dict]:
    scores, present = index.matrix(item)
    rule = rule_for(ties, "strict")
    rows = []
    for t in range(len(item.texts)):
        labels = np.array([int(t in item.truth[c]) for c in range(len(item.clips))])
        if not labels.any():
            continue
        qid = f"{item.item_id}#{t}"
        status = cells_status(scores[:, t], present[:, t])
        n, r = len(labels), int(labels.sum())
        order = official_order(item, scores[:, t], labels) if ties == "official" else None
        ap = Decision(average_precision(scores[:, t], labels, rule, order),
                      average_precision(scores[:, t], labels, "strict"),
                      average_precision(scores[:, t], labels, "expected"))
        rows.append(outcome(qid, item.subset, "AP", ap, expected_average_precision(r, n), status))
        for k in RETRIEVAL_KS:
            hit = Decision(hit_at_k(scores[:, t], labels, k, rule, order), hit_at_k(scores[:, t], labels, k, "strict"),
                           hit_at_k(scores[:, t], labels, k, "expected"))
            rows.append(outcome(qid, item.subset, f"R@{k}", hit, hit_at_k_chance(k, n, r), status))
    return rows


def duplicate_true_options(items: Sequence[Item]) -> pd.DataFrame:
    """ATP-Hard questions (1 clip, more than 2 texts) listing the true statement more than once: item_id, answer
    (its index) and positions (every index holding the same text). Identical texts get identical scores, so such a
    question is always decided by a tie: ``strict`` fails it, ``official`` (first listed wins) passes it only when
    the answer is listed first, ``expected`` gives 1 / copies."""
    rows = []
    for it in items:
        if it.role != "main" or kind(it) != "choice":
            continue
        answer = it.truth[0][0]
        same = [i for i, text in enumerate(it.texts) if text == it.texts[answer]]
        if len(same) > 1:
            rows.append({"item_id": it.item_id, "answer": answer, "positions": same})
    return pd.DataFrame(rows, columns=["item_id", "answer", "positions"])


def official_skipped(items: Sequence[Item]) -> set[str]:
    """ATP-Hard questions ``src/eval_atphard.py`` skips: grouped by (video, question) (L36), a group of other than 5
    rows after ``drop_duplicates`` (L19-25) is left out (L37). Repeats with identical options collapse into one
    question, so only the first of them is kept."""
    groups: dict[tuple, list[Item]] = {}
    for it in items:
        if it.role == "main" and kind(it) == "choice" and "question" in it.labels:
            groups.setdefault((it.labels.get("video"), it.labels["question"]), []).append(it)
    skipped: set[str] = set()
    for members in groups.values():
        if len(members) < 2:
            continue
        first = members[0]
        if all(m.texts == first.texts and m.truth == first.truth for m in members):
            skipped |= {m.item_id for m in members[1:]}
        else:
            skipped |= {m.item_id for m in members}
    return skipped


def _pair_rows(item: Item, index: ScoreIndex, ties: str, skipped: set[str]) -> list[dict]:
    if kind(item) == "retrieval":
        return _retrieval_rows(item, index, ties)
    scores, present = index.matrix(item)
    entail = kind(item) == "entailment"
    official = OFFICIAL_PAIR_TIES if entail else OFFICIAL_CHOICE_TIES
    return [outcome(item.item_id, item.subset, "caption > contrast" if entail else "accuracy",
                    decide(scores[0], item.truth[0], false_texts(item, 0), ties, official),
                    ranking_chance(len(item.texts), len(item.truth[0])), cells_status(scores[0], present[0]),
                    dropped=ties == "official" and item.item_id in skipped)]


def _choice_rows(item: Item, choices: ChoiceIndex, ties: str, skipped: set[str]) -> list[dict]:
    shape = kind(item)
    rows = []
    for c in range(len(item.clips)):
        true = list(item.truth[c])
        if not true:
            continue
        asked = choices.asked(item.item_id, "text", c)
        decision = all_orders(asked, true[0], ties) if len(true) == 1 else Decision.plain(
            bool(asked) and all(a.choice in true for a in asked))
        chance = float(np.prod([len(true) * choice_chance(len(a.options)) for a in asked])) if asked else \
            len(true) / len(item.texts)
        if shape == "retrieval":
            rows.append(outcome(f"{item.item_id}@{c}", item.subset, "true text chosen", decision, chance,
                                answers_status(asked)))
        else:
            rows.append(outcome(item.item_id, item.subset, "caption chosen" if shape == "entailment" else "accuracy",
                                decision, chance, answers_status(asked),
                                dropped=ties == "official" and item.item_id in skipped))
    return rows


def outcomes(items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None = None, *,
             ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """Per item (or per retrieval query): "caption > contrast", "AP" and "R@k", or "accuracy" from the pair table;
    from the choice table of a multiple-choice run: "caption chosen", "accuracy", "true text chosen" (per clip)."""
    rule_for(ties, "strict")
    skipped = official_skipped(items)
    return per_item(items, pair, choice, lambda it, idx: _pair_rows(it, idx, ties, skipped),
                    lambda it, ch: _choice_rows(it, ch, ties, skipped))


def _bootstrap_row(metric: str, by: str, subset: str, value: float, samples: np.ndarray, chance: float, n: int,
                   settings: Settings, tested: tuple[float, np.ndarray] | None = None, **extra) -> dict:
    ci, p_value, test = resampled(value, samples, n, chance, settings, tested)
    return row(metric, by, subset, value, ci, chance, n, p_value, settings, test, **extra)


def auroc_row(group: pd.DataFrame, by: str, subset: str, settings: Settings, ties: str = DEFAULT_TIES) -> dict:
    """ROC-AUC of one group of entailment items, bootstrapped over items (each item brings its two scores)."""
    cap, con = group["caption"].to_numpy(float), group["contrast"].to_numpy(float)
    n = len(group)
    labels = np.r_[np.ones(n, int), np.zeros(n, int)]
    scores = np.r_[cap, con]
    rule = rule_for(ties, OFFICIAL_PAIR_TIES)  # a tied pair's credit: 0 or 1/2, never above a fair coin's share
    samples = intervals.bootstrap_auroc(scores, labels, np.r_[np.arange(n), np.arange(n)], settings.n_boot,
                                        settings.seed, tie_credit(rule))
    values = worst_case(scores, labels)
    n_tie = int(np.sum(values[:n] == values[n:]))
    status = group["status"]
    return _bootstrap_row("AUROC", by, subset, auroc(scores, labels, rule), samples, 0.5, n, settings,
                          n_missing=int((status == "missing").sum()), n_nan=int((status == "nan").sum()),
                          n_tie=n_tie, strict=auroc(scores, labels, "strict"),
                          expected=auroc(scores, labels, "expected"), note=AUROC_NOTE)


def map_row(group: pd.DataFrame, by: str, subset: str, settings: Settings) -> dict:
    """mAP over retrieval queries with a bootstrap interval over queries."""
    values = group["value"].to_numpy(float)
    status = group["status"]
    samples = intervals.bootstrap_means(values, settings.n_boot, settings.seed)
    return _bootstrap_row("mAP", by, subset, float(values.mean()), samples, float(group["chance"].mean()),
                          len(group), settings, resampled_test(values, tested(group), settings),
                          n_missing=int((status == "missing").sum()), n_nan=int((status == "nan").sum()),
                          n_tie=int(group["tie"].sum()), strict=float(group["strict"].mean()),
                          expected=float(credits(group, "expected").mean()),
                          note="chance: exact expected AP of a random ranking")


def _duplicates_note(items: Sequence[Item]) -> str:
    found = duplicate_true_options(items)
    if not len(found):
        return ""
    listed = ", ".join(f"{r.item_id} (answer {r.answer} at {r.positions})" for r in found.itertuples())
    return (f"{len(found)} question(s) list the true statement more than once, so a tie decides them: {listed}")


def table(items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None = None, *,
          measure: str | None = None, settings: Settings = Settings(), by: Sequence[str] | None = None,
          ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """AUROC (all, per subset and per label in ``by``), mAP and R@k per retrieval set, ATP-Hard accuracy overall and
    per question type; the choice-table metrics of a multiple-choice run; the per-item metrics per label in ``by``
    too."""
    labels_present = {k for it in items for k in it.labels}
    by = tuple(b for b in DEFAULT_BY if b in labels_present) if by is None else tuple(by)
    parts = []
    has_pair = pair is not None and len(pair) > 0
    has_choice = choice is not None and len(choice) > 0
    ent = entailment_scores(items, pair) if has_pair or not has_choice else entailment_scores([], None)
    if len(ent):
        ent = with_labels(ent, items, by)
        rows = [auroc_row(ent, ALL, ALL, settings, ties)]
        for column in ("subset", *by):
            for value, group in ent.groupby(column, sort=True):
                rows.append(auroc_row(group, column, str(value), settings, ties))
        parts.append(pd.DataFrame(rows))
    out = outcomes(items, pair, choice, ties=ties)
    if len(out):
        types = {it.item_id: question_type(it) for it in items if kind(it) == "choice"}
        out["question type"] = out["item_id"].map(types)
        queries = out[out["metric"] == "AP"]
        notes = {"accuracy": _duplicates_note(items)}
        out = with_labels(out, items, by)
        parts.append(summarize(out[out["metric"] != "AP"], settings,
                               by=(("question type",) if any(types.values()) else ()) + by, notes=notes))
        if len(queries):
            rows = [map_row(queries, ALL, ALL, settings)]
            rows += [map_row(g, "subset", str(s), settings) for s, g in queries.groupby("subset", sort=True)]
            parts.append(pd.DataFrame(rows))
    if not parts:
        raise ValueError("no VideoCon items to score")
    return pd.concat(parts, ignore_index=True)
