"""VELOCITI (Saravanan et al., CVPR 2025): ClassicVLE, StrictVLE, its positive/negative analysis, multiple choice.

From the entailment scores e = P(Yes)/(P(Yes)+P(No)) of the positive and negative caption (pair table; official
``metrics.py``):

- ClassicVLE (Sec. 4): e(V, C+) > e(V, C-); chance 1/2.
- StrictVLE (Sec. 4): e(V, C+) > 0.5 and e(V, C-) < 0.5; chance 25% by the paper's convention (see
  :data:`bench.metrics.chance.STRICT_VLE_CHANCE`).
- Table 3 analysis: "pos acc" = share of e(V, C+) > 0.5; "neg acc | pos" = share of e(V, C-) < 0.5 among the items
  whose positive is right (its n is theirs; under ``expected`` a positive at exactly 0.5 is not among them). Each
  reads one class of caption only, so a model that always says "Yes" (or "No") is right on it every time: their
  chance is the run's own rate of that answer, not 1/2. "pos acc": per item, the share of "Yes" among its two
  answers (its rows average the run's own "Yes" rate over their items, and the test is exact given the answers the
  run gave); "neg acc | pos": the run's own share of "No" over both captions of every item. A score of exactly 0.5
  is half an answer each way.

The released code compares strictly, so ``official`` ties fail: ``metrics.py`` L9 ``pos[i] > neg[i]`` (ClassicVLE),
L16 ``pos[i] > 0.5 and neg[i] < 0.5`` (StrictVLE), L21-25 (analysis); ``expected`` gives a tie (or a score of
exactly 0.5, P(Yes) = P(No)) 1/2.

Closed models' Yes/No answers (imported, measure "answer"): ``gemini/closed_model_metrics.py`` L7-15 and L17-29
count only the rows where both answers parse as Yes/No, so under ``official`` an item with an unparsed answer is
dropped from the denominator (counted in ``n_dropped`` and ``n_unparsed``); ``strict`` and ``expected`` count it as
a failure.

From the multiple-choice answers (choice table, axis "text"; Sec. 5.4, Table 5): "MC A" / "MC B" = accuracy when the
positive is option A / B; "MC A∧B" = right in both orders (chance 1/4); "MC bias (B-A)" = MC B minus MC A on the same
items, tested against 0 with an exact McNemar test ("significant" there means a significant choice bias); "MC A" and
"MC B" each read one letter, so their chance is the item's own share of that letter over the orders asked (letters
tied at the top count as a fair coin's share), not 1/2: a model that always answers "A" is at chance on "MC A". As
``metrics.py::mcq`` (L29-44) counts only the items whose two answers are both A or B, ``official`` drops the others.

"Avg" rows average each metric over the seven tests, leaving out the control test (Table 2).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from bench.items import Item
from bench.metrics import intervals
from bench.metrics.chance import STRICT_VLE_CHANCE, STRICT_VLE_NOTE, YES_NO_CHANCE, choice_chance, ranking_chance
from bench.metrics.aggregate import (ALL, MCNEMAR, Settings, credits, mean_of_means_row, row, summarize,
                                     with_labels)
from bench.metrics.outcomes import (ChoiceIndex, ScoreIndex, all_orders, answers_status, cells_status, outcome,
                                    per_item, worst_status)
from bench.metrics.ties import DEFAULT_TIES, both, decide, letter_shares, rule_for, threshold_decision

THRESHOLD = 0.5
CONTROL = "control"
PAIR_METRICS = ("ClassicVLE", "StrictVLE", "pos acc", "neg acc | pos")
THRESHOLD_METRICS = ("StrictVLE", "pos acc", "neg acc | pos")
CHOICE_METRICS = ("MC A", "MC B", "MC A∧B")
DEFAULT_BY: tuple[str, ...] = ()
OFFICIAL_TIES = "strict"
NOTES = {
    "StrictVLE": STRICT_VLE_NOTE,
    "pos acc": "chance: the run's own rate of Yes over both captions (a model always saying Yes is at chance)",
    "neg acc | pos": "among items whose positive caption is right; chance: the run's own rate of No over both "
                     "captions of every item",
    "MC A": "chance: the item's own share of answer A over the orders asked (always answering A is at chance)",
    "MC B": "chance: the item's own share of answer B over the orders asked (always answering B is at chance)",
}


def _pos_neg(item: Item) -> tuple[int, int]:
    pos = item.truth[0][0]
    return pos, 1 - pos


def _unparsed_pair(status: str, other: str) -> str:
    """A parsed answer whose partner is unparsed is unparsed for the row (``closed_model_metrics.py`` needs both)."""
    return "unparsed" if status == "ok" and other == "unparsed" else status


def _pair_rows(item: Item, index: ScoreIndex, ties: str) -> list[dict]:
    scores, present = index.matrix(item)
    unparsed = index.unparsed(item)
    pos, neg = _pos_neg(item)
    s_pos, s_neg = scores[0, pos], scores[0, neg]
    st_pos = cells_status(scores[0, [pos]], present[0, [pos]], unparsed[0, [pos]])
    st_neg = cells_status(scores[0, [neg]], present[0, [neg]], unparsed[0, [neg]])
    pair_status = worst_status(st_pos, st_neg)
    drop = ties == "official" and pair_status == "unparsed"
    pos_yes = threshold_decision(s_pos, THRESHOLD, True, ties, OFFICIAL_TIES)
    neg_no = threshold_decision(s_neg, THRESHOLD, False, ties, OFFICIAL_TIES)
    yes_rate = (pos_yes.expected + 1.0 - neg_no.expected) / 2 if pair_status == "ok" else YES_NO_CHANCE
    rows = [
        outcome(item.item_id, item.subset, "ClassicVLE", decide(scores[0], [pos], [neg], ties, OFFICIAL_TIES),
                ranking_chance(2), pair_status, dropped=drop),
        outcome(item.item_id, item.subset, "StrictVLE", both(pos_yes, neg_no), STRICT_VLE_CHANCE, pair_status,
                dropped=drop),
        outcome(item.item_id, item.subset, "pos acc", pos_yes, yes_rate, _unparsed_pair(st_pos, st_neg),
                dropped=drop),
    ]
    if st_pos == "ok" and pos_yes.value == 1:
        rows.append(outcome(item.item_id, item.subset, "neg acc | pos", neg_no, YES_NO_CHANCE, st_neg, dropped=drop))
    return rows


def _choice_rows(item: Item, choices: ChoiceIndex, ties: str) -> list[dict]:
    pos, _ = _pos_neg(item)
    asked = choices.asked(item.item_id, "text", 0)
    orders = {"A": [a for a in asked if a.options[0] == pos], "B": [a for a in asked if a.options[0] != pos]}
    results = {}
    for letter, rows in orders.items():
        chance = float(np.prod([choice_chance(len(a.options)) for a in rows])) if rows else 0.5
        results[letter] = (all_orders(rows, pos, ties), chance, answers_status(rows))
    (a_ok, a_chance, a_status), (b_ok, b_chance, b_status) = results["A"], results["B"]
    drop = ties == "official" and "unparsed" in (a_status, b_status)
    own = _letter_rates(asked) if worst_status(a_status, b_status) == "ok" else None
    return [
        outcome(item.item_id, item.subset, "MC A", a_ok, a_chance if own is None else own[0] ** len(orders["A"]),
                _unparsed_pair(a_status, b_status), dropped=drop),
        outcome(item.item_id, item.subset, "MC B", b_ok, b_chance if own is None else own[1] ** len(orders["B"]),
                _unparsed_pair(b_status, a_status), dropped=drop),
        outcome(item.item_id, item.subset, "MC A∧B", both(a_ok, b_ok), a_chance * b_chance,
                worst_status(a_status, b_status), dropped=drop),
    ]


def _letter_rates(asked: list) -> tuple[float, float]:
    """The item's own shares of answers A and B over every order asked (letters tied at the top: a fair coin's
    share each)."""
    shares = np.mean([letter_shares(a.logits, a.options.index(a.choice) if a.choice in a.options else -1,
                                    len(a.options))[0][:2] for a in asked], axis=0)
    return float(shares[0]), float(shares[1])


def outcomes(items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None = None, *,
             ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """Entailment outcomes when the pair table has rows (or no table has any), choice outcomes when the choice
    table has rows."""
    rule_for(ties, OFFICIAL_TIES)
    out = per_item(items, pair, choice, lambda it, idx: _pair_rows(it, idx, ties),
                   lambda it, ch: _choice_rows(it, ch, ties))
    return _own_no_rate(out)


def _own_no_rate(out: pd.DataFrame) -> pd.DataFrame:
    """``out`` with the chance of "neg acc | pos" set to the run's own rate of "No" over both captions of every
    item whose answers count (one minus the mean of the items' own "Yes" rates, the "pos acc" chances)."""
    neg = out["metric"] == "neg acc | pos"
    answered = out[(out["metric"] == "pos acc") & (out["status"] == "ok") & ~out["dropped"]]
    if neg.any() and len(answered):
        out.loc[neg, "chance"] = 1.0 - float(answered["chance"].mean())
    return out


def bias_row(out: pd.DataFrame, by: str, subset: str, settings: Settings) -> dict | None:
    """The "MC bias (B-A)" row: accuracy with the positive as B minus as A, paired over the counted items; the exact
    McNemar test against 0 and the interval it inverts."""
    counted = out[~out["dropped"]] if "dropped" in out.columns else out
    a = counted[counted["metric"] == "MC A"].set_index("item_id")
    b = counted[counted["metric"] == "MC B"].set_index("item_id").reindex(a.index)
    if not len(a):
        return None
    right_b, right_a = b["value"].to_numpy() == 1, a["value"].to_numpy() == 1
    told_b, told_a = credits(b, "strict") == 1, credits(a, "strict") == 1
    diff = (b["value"] - a["value"]).to_numpy(float)
    tied = (a["tie"] | b["tie"].fillna(False).astype(bool)).to_numpy(bool) if "tie" in a.columns else np.zeros(0)
    return row("MC bias (B-A)", by, subset, float(diff.mean()), intervals.mcnemar_interval(right_b, right_a,
               settings.level), 0.0, len(diff), intervals.mcnemar_test(told_b, told_a), settings, MCNEMAR,
               n_dropped=int(out.loc[out["metric"] == "MC A", "dropped"].sum()) if "dropped" in out.columns else 0,
               n_tie=int(tied.sum()), strict=float(np.mean(told_b.astype(float) - told_a.astype(float))),
               note="significant = a significant choice bias, not skill; the test counts an order answered right "
                    "only by a tie (letters scored alike) as not right: a tie is no letter chosen")


def table(items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None = None, *,
          measure: str | None = None, settings: Settings = Settings(), by: Sequence[str] | None = None,
          ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """Every metric over all items and per test, the choice bias, and the average over the non-control tests.

    The 0.5-threshold metrics (StrictVLE and its analysis) need probabilities: they are left out for runs whose
    ``measure`` is a similarity or a log-likelihood.
    """
    by = tuple(DEFAULT_BY if by is None else by)
    out = outcomes(items, pair, choice, ties=ties)
    if measure not in (None, "p_yes", "answer"):
        out = out[~out["metric"].isin(THRESHOLD_METRICS)]
    out = with_labels(out, items, by)
    parts = [summarize(out, settings, by=by, notes=NOTES)]
    bias = [bias_row(out, ALL, ALL, settings)]
    bias += [bias_row(group, "subset", str(s), settings) for s, group in out.groupby("subset", sort=True)]
    tests = [s for s in dict.fromkeys(out["subset"]) if s != CONTROL]
    averages = [mean_of_means_row(out, m, {t: [t] for t in tests}, m, settings, by="average",
                                  subset="tests except control", note=NOTES.get(m, ""))
                for m in dict.fromkeys(out["metric"])] if len(tests) > 1 else []
    extra = [r for r in bias + averages if r]
    if extra:
        parts.append(pd.DataFrame(extra))
    return pd.concat(parts, ignore_index=True)


def entailment_points(items: Sequence[Item], pair: pd.DataFrame) -> pd.DataFrame:
    """One row per item with P(Yes) of its positive and negative caption (for the entailment scatter)."""
    index = ScoreIndex(pair)
    rows = []
    for it in items:
        scores, present = index.matrix(it)
        pos, neg = _pos_neg(it)
        if present[0][pos] and present[0][neg]:
            rows.append({"item_id": it.item_id, "subset": it.subset, "pos": float(scores[0][pos]),
                         "neg": float(scores[0][neg])})
    return pd.DataFrame(rows, columns=["item_id", "subset", "pos", "neg"])


def quadrant_counts(points: pd.DataFrame, threshold: float = 0.5) -> pd.DataFrame:
    """How many items fall in each quadrant of the entailment scatter, and how many pass ClassicVLE (pos > neg) and
    StrictVLE (pos > 0.5 and neg < 0.5): the counts the papers' scatter plots mark."""
    pos_yes, neg_yes = points["pos"] > threshold, points["neg"] > threshold
    rows = [
        ("pos Yes, neg No (StrictVLE right)", int((pos_yes & ~neg_yes).sum())),
        ("pos Yes, neg Yes", int((pos_yes & neg_yes).sum())),
        ("pos No, neg No", int((~pos_yes & ~neg_yes).sum())),
        ("pos No, neg Yes", int((~pos_yes & neg_yes).sum())),
        ("pos > neg (ClassicVLE right)", int((points["pos"] > points["neg"]).sum())),
        ("all", len(points)),
    ]
    return pd.DataFrame(rows, columns=["quadrant", "n"])
