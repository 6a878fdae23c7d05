"""ViLMA (Kesen et al., ICLR 2024): pairwise ranking accuracy on the proficiency (P), main (T) and combined tests.

- acc_r (Sec. 4.2; official ``bin/eval.py``): an item is right when the caption outscores every foil (SRL action
  replacement items have two foils, so their chance is 1/3). Ties (:mod:`bench.metrics.ties`): ``official`` lets
  the caption win them, as the released code does: ``bin/eval.py`` L71-72 computes torchmetrics'
  ``multiclass_accuracy(scores, labels=0, average='micro')``, which takes ``scores.argmax(dim=1)``, and
  ``bin/multi_eval.py`` L78 tests ``argmax().item() == 0`` (L80 ``argmin`` for perplexity); torch's argmax returns
  the first maximal index and the caption is listed first. ``strict`` fails them; ``expected`` gives 1/(tied + 1).
- P+T (Sec. 4.2; ``bin/multi_eval.py``): right only when both the main item and its proficiency twin are right;
  chance = the product of the two chances.
- Multiple-choice runs (our ``mc`` protocol; ViLMA publishes none): P, T and P+T from the choice table, the
  caption chosen in every option order asked; chance = the product over the orders.
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
from bench.metrics.aggregate import (ALL, BINOMIAL, Settings, mean_of_means_row, resampled, row, summarize,
                                     with_holm, with_labels)
from bench.metrics.chance import choice_chance, ranking_chance
from bench.metrics.outcomes import (ChoiceIndex, ScoreIndex, all_orders, answers_status, cells_status, false_texts,
                                    outcome, outcomes_frame, worst_status)
from bench.metrics.ranking import tie_credit, worst_case
from bench.metrics.ties import DEFAULT_TIES, Decision, both, decide, rule_for
from bench.registry import spec
from bench.store.schema import pair_frame

# A proficiency test always has one caption and one foil (BENCHMARKS.md 1.2); used when a twin is absent.
PROFICIENCY_CHANCE = 0.5
# bin/multi_eval.py: main scores of items whose proficiency test failed, in probability mode.
FAILED_PROFICIENCY_SCORES = (0.001, 0.999)
THRESHOLD = 0.5
DEFAULT_BY: tuple[str, ...] = ()
# bin/eval.py, bin/multi_eval.py: argmax over (caption, foils...), the first maximal index wins a tie.
OFFICIAL_TIES = "first"


def test_of(subset: str) -> str:
    """The paper's test name for a subtest (file stem); unknown stems are their own test."""
    for prefix, name in spec("vilma").labels["tests"]:
        if subset.startswith(prefix):
            return name
    return subset


def _ranking(item: Item, index: ScoreIndex, ties: str) -> tuple[Decision, float, str]:
    scores, present = index.matrix(item)
    status = cells_status(scores[0], present[0])
    decision = decide(scores[0], item.truth[0], false_texts(item, 0), ties, OFFICIAL_TIES)
    return decision, ranking_chance(len(item.texts), len(item.truth[0])), status


def _choosing(item: Item, choices: ChoiceIndex, ties: str) -> tuple[Decision, float, str]:
    asked = choices.asked(item.item_id, "text", 0)
    chance = float(np.prod([choice_chance(len(a.options)) for a in asked])) if asked else \
        ranking_chance(len(item.texts), len(item.truth[0]))
    return all_orders(asked, item.truth[0][0], ties), chance, answers_status(asked)


def outcomes(items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None = None, *,
             ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """Per main item: "P" (its proficiency twin), "T" and "P+T" outcomes (see :mod:`bench.metrics.outcomes`), from
    the pair table, or from the choice table when only it has rows (a multiple-choice run).

    Items without a twin get "T" only; a twin named but absent from ``items`` counts as missing.
    """
    rule_for(ties, OFFICIAL_TIES)
    use_choice = (choice is not None and len(choice) > 0) and not (pair is not None and len(pair) > 0)
    index = ScoreIndex(pair if pair is not None else pair_frame([]))
    choices = ChoiceIndex(choice if use_choice else None)

    def judge(item: Item) -> tuple[Decision, float, str]:
        return _choosing(item, choices, ties) if use_choice else _ranking(item, index, ties)

    by_id = {it.item_id: it for it in items}
    rows = []
    for it in items:
        if it.role != "main":
            continue
        t_ok, t_chance, t_status = judge(it)
        if it.twin_id is not None:
            twin = by_id.get(it.twin_id)
            if twin is None:
                p_ok, p_chance, p_status = Decision.plain(False), PROFICIENCY_CHANCE, "missing"
            else:
                p_ok, p_chance, p_status = judge(twin)
            rows.append(outcome(it.item_id, it.subset, "P", p_ok, p_chance, p_status))
        rows.append(outcome(it.item_id, it.subset, "T", t_ok, t_chance, t_status))
        if it.twin_id is not None:
            rows.append(outcome(it.item_id, it.subset, "P+T", both(p_ok, t_ok), p_chance * t_chance,
                                worst_status(p_status, t_status)))
    return outcomes_frame(rows)


def caption_foil_scores(items: Sequence[Item], pair: pd.DataFrame | None, *, combined: bool = False,
                        ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """Main-test scores flattened as ``bin/eval.py`` does: item_id, subset, label (1 caption, 0 foil), score, status.

    With ``combined``, items whose proficiency test failed (under ``ties``; ``bin/multi_eval.py`` L92 takes the
    argmax, so the caption wins a tie) get scores 0.001 / 0.999 (``bin/multi_eval.py`` L94-96).
    """
    index = ScoreIndex(pair if pair is not None else pair_frame([]))
    failed_p: set[str] = set()
    if combined:
        prof = outcomes(items, pair, ties=ties)
        failed_p = set(prof.loc[(prof["metric"] == "P") & (prof["value"] < 1), "item_id"])
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


def _weighted_metrics(s: np.ndarray, y: np.ndarray, codes: np.ndarray, n_values: int, w: np.ndarray,
                      credit: float = 0.5) -> dict[str, float]:
    pred_caption, pred_foil = s > THRESHOLD, (1.0 - s) > THRESHOLD
    n_c, n_f = w[pred_caption].sum(), w[pred_foil].sum()
    p_c = float(w[pred_caption & (y == 1)].sum() / n_c) if n_c else 0.0
    p_f = float(w[pred_foil & (y == 0)].sum() / n_f) if n_f else 0.0
    return {"p_c": p_c, "p_f": p_f, "min(p_c, p_f)": min(p_c, p_f),
            "acc": float(w[pred_caption.astype(int) == y].sum() / w.sum()) if w.sum() else float("nan"),
            "AUROC": intervals.weighted_auroc(codes, n_values, y, w, credit)}


def probability_metrics(scores: Sequence[float], labels: Sequence[int], ties: str = DEFAULT_TIES) -> dict[str, float]:
    """``bin/eval.py``'s probability-mode metrics: p_c, p_f, min(p_c, p_f), acc, AUROC (NaN scores worst-case).

    p_c is the precision of "caption" predictions (p > 0.5), p_f that of "foil" predictions (1 - p > 0.5); a
    precision with no predictions is 0, torchmetrics' ``zero_division`` default. AUROC gives a tied (caption, foil)
    pair half credit (torchmetrics' trapezoidal AUROC, L86; also ``expected``) or none (``strict``).
    """
    y = np.asarray(labels, dtype=int)
    ranked = worst_case(scores, y)
    values, codes = np.unique(ranked, return_inverse=True)
    return _weighted_metrics(np.clip(ranked, 0.0, 1.0), y, codes, len(values), np.ones(len(y)), _auroc_credit(ties))


def _auroc_credit(ties: str) -> float:
    return tie_credit("strict" if ties == "strict" else "expected")


def own_rate_chance(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, float]:
    """``(right, chance)`` of the caption/foil answers at threshold 0.5 with a score of exactly 0.5 (P(Yes) = P(No))
    counted as half an answer each way: each pair's credit, and the accuracy of answers that ignore the label at this
    run's own rate ``r`` of "caption" answers, ``r * prevalence + (1 - r) * (1 - prevalence)``. With two-foil items
    captions are a third of the pairs or less, so a model that always answers "foil" is right more often than 1/2,
    and exactly at this chance."""
    said = np.where(scores > THRESHOLD, 1.0, np.where(scores == THRESHOLD, 0.5, 0.0))
    prevalence, rate = float(labels.mean()), float(said.mean())
    return np.where(labels == 1, said, 1.0 - said), rate * prevalence + (1 - rate) * (1 - prevalence)


def _probability_rows(flat: pd.DataFrame, by: str, subset: str, prefix: str, settings: Settings,
                      ties: str) -> list[dict]:
    unit_ids, units = np.unique(flat["item_id"].to_numpy(), return_inverse=True)
    scores, labels = flat["score"].to_numpy(float), flat["label"].to_numpy(int)
    ranked = worst_case(scores, labels)
    s = np.clip(ranked, 0.0, 1.0)
    values_sorted, codes = np.unique(ranked, return_inverse=True)
    credit = _auroc_credit(ties)  # a tied pair's credit: 0 or 1/2, never above a fair coin's share
    values = probability_metrics(scores, labels, ties)
    strict = probability_metrics(scores, labels, "strict")
    fair = probability_metrics(scores, labels, "expected")
    rng = np.random.default_rng(settings.seed)
    samples = np.array([
        [m["min(p_c, p_f)"], m["AUROC"]]
        for m in (_weighted_metrics(s, labels, codes, len(values_sorted),
                                    intervals.unit_weights(rng, units, len(unit_ids)), credit)
                  for _ in range(settings.n_boot))])
    prevalence = float(labels.mean())
    pred_c, pred_f = s > THRESHOLD, (1.0 - s) > THRESHOLD
    coin, own_chance = own_rate_chance(s, labels)
    right = pred_c.astype(int) == labels
    # (successes, trials, chance, successes tested): a tie never lands in p_c's or p_f's predictions; acc's test
    # counts a pair at exactly 0.5 as no more than half right
    counts = {"p_c": (int((labels[pred_c] == 1).sum()), int(pred_c.sum()), prevalence, None),
              "p_f": (int((labels[pred_f] == 0).sum()), int(pred_f.sum()), 1 - prevalence, None),
              "acc": (int(right.sum()), len(labels), own_chance, float(np.minimum(right, coin).sum()))}
    status = flat.groupby("item_id", sort=False)["status"].agg(lambda st: worst_status(*st))
    extra = {"n_missing": int((status == "missing").sum()), "n_nan": int((status == "nan").sum())}
    out = []
    for name in ("p_c", "p_f", "min(p_c, p_f)", "acc", "AUROC"):
        note = "threshold 0.5 on caption/foil probabilities (bin/eval.py); chance = class share"
        expected = fair[name]
        if name in counts:
            k, n, chance, tested = counts[name]
            ci, test = intervals.clopper_pearson(k, n, settings.level), BINOMIAL
            p_value = intervals.binomial_p_value(k if tested is None else tested, n, chance)
            if name == "acc":
                expected = float(coin.mean())
                note = ("threshold 0.5 on caption/foil probabilities (bin/eval.py); chance: the accuracy of answers "
                        "that ignore the label at this run's own rate of caption answers (a score of exactly 0.5 "
                        "counted half each way)")
        else:
            column = samples[:, 0 if name == "min(p_c, p_f)" else 1]
            chance = min(prevalence, 1 - prevalence) if name == "min(p_c, p_f)" else 0.5
            ci, p_value, test = resampled(values[name], column, len(unit_ids), chance, settings)
            if name == "min(p_c, p_f)":
                p_value = float("nan")
        if prefix:
            p_value, chance, test = float("nan"), float("nan"), test
            note = "scores of items failing P overwritten (bin/multi_eval.py); no defined chance"
        out.append(row(prefix + name, by, subset, values[name], ci, chance, len(unit_ids), p_value, settings, test,
                       strict=strict[name], expected=expected, note=note, **extra))
    return out


def probability_table(items: Sequence[Item], pair: pd.DataFrame | None, settings: Settings = Settings(),
                      ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """The probability-mode rows (plain and P+T variants), over all items and per subtest.

    Under ``expected`` a proficiency test decided by a tie counts as failed for the P+T overwrite (it is
    all-or-nothing).
    """
    out = []
    for combined, prefix in ((False, ""), (True, "P+T ")):
        flat = caption_foil_scores(items, pair, combined=combined, ties=ties)
        if not len(flat):
            continue
        out += _probability_rows(flat, ALL, ALL, prefix, settings, ties)
        for subset, group in flat.groupby("subset", sort=True):
            out += _probability_rows(group, "subset", str(subset), prefix, settings, ties)
    return with_holm(pd.DataFrame(out), settings) if out else pd.DataFrame()


def table(items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None = None, *,
          measure: str | None = None, settings: Settings = Settings(), by: Sequence[str] | None = None,
          ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """P, T and P+T over all items, per subtest and per test; the average of the tests' P+T ("Avg.", Table 2);
    and, for probability scores, the rows of :func:`probability_table`."""
    by = tuple(DEFAULT_BY if by is None else by)
    out = with_labels(outcomes(items, pair, choice, ties=ties), items, by)
    out["test"] = out["subset"].map(test_of)
    parts = [summarize(out, settings, by=("test", *by))]
    groups: dict[str, list[str]] = {}
    for subset in dict.fromkeys(out["subset"]):
        groups.setdefault(test_of(subset), []).append(subset)
    avg = mean_of_means_row(out, "P+T", groups, "Avg. P+T", settings)
    if avg:
        parts.append(pd.DataFrame([avg]))
    if measure == "p_yes":
        parts.append(probability_table(items, pair, settings, ties))
    return pd.concat([p for p in parts if len(p)], ignore_index=True)
