"""VideoCon metrics: entailment ROC-AUC with breakdowns, SSv2-Temporal retrieval, ATP-Hard accuracy by type."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from bench.items import Clip, Item
from bench.metrics import chance, videocon
from bench.metrics import Settings, metric_table
from bench.store.schema import pair_frame

FAST = Settings(n_boot=200)


def _entail(key, misalignment, source, cap=0):
    texts = ("a caption", "a contrast caption") if cap == 0 else ("a contrast caption", "a caption")
    return Item("videocon", key, "llm", (Clip(f"{key}.mp4"),), texts, ((cap,),),
                labels={"misalignment": misalignment, "source": source})


def _rows(key, scores):
    return [{"item_id": key, "clip": 0, "text": t, "score": s} for t, s in enumerate(scores)]


def test_auroc_overall_and_per_label_match_sklearn():
    rng = np.random.default_rng(0)
    items, rows, truth = [], [], []
    for i in range(30):
        mis, src = ["action", "flip", "object"][i % 3], ["msr-vtt", "vatex"][i % 2]
        cap = i % 2
        items.append(_entail(f"v{i}", mis, src, cap))
        s_cap, s_con = rng.random() * 0.6 + 0.3, rng.random() * 0.6
        rows += _rows(f"v{i}", [s_cap, s_con] if cap == 0 else [s_con, s_cap])
        truth.append((mis, src, s_cap, s_con))
    table = metric_table(items, pair_frame(rows), settings=FAST).set_index(["metric", "by", "subset"])

    def sk(keep):
        sel = [t for t in truth if keep(t)]
        return roc_auc_score([1] * len(sel) + [0] * len(sel), [t[2] for t in sel] + [t[3] for t in sel])

    assert table.loc[("AUROC", "all", "all"), "value"] == pytest.approx(sk(lambda t: True))
    assert table.loc[("AUROC", "misalignment", "flip"), "value"] == pytest.approx(sk(lambda t: t[0] == "flip"))
    assert table.loc[("AUROC", "source", "vatex"), "value"] == pytest.approx(sk(lambda t: t[1] == "vatex"))
    row = table.loc[("AUROC", "all", "all")]
    assert row["chance"] == 0.5 and row["significant"] and row["ci_low"] < row["value"] < row["ci_high"]
    assert table.loc[("caption > contrast", "all", "all"), "n"] == 30


def test_auroc_counts_nan_and_missing_items_as_worst_case():
    items = [_entail("a", "action", "vatex"), _entail("b", "action", "vatex"), _entail("c", "action", "vatex")]
    pair = pair_frame(_rows("a", [0.9, 0.1]) + _rows("b", [math.nan, 0.2]))   # c is missing
    row = metric_table(items, pair, settings=FAST).set_index(["metric", "by", "subset"]).loc[("AUROC", "all", "all")]
    # positives 0.9, -inf, -inf(c) ; negatives 0.1, 0.2, +inf(c): 0.9 beats two of three -> 2 / 9
    assert row["value"] == pytest.approx(2 / 9)
    assert (row["n"], row["n_nan"], row["n_missing"]) == (3, 1, 1)


def _retrieval():
    # 4 videos x 2 captions; caption 0 is true of videos 0 and 2, caption 1 of videos 1 and 3
    item = Item("videocon", "ssv2", "ssv2_temporal", tuple(Clip(f"{i}.avi") for i in range(4)),
                ("covering something", "stuffing something"), ((0,), (1,), (0,), (1,)))
    scores = {0: [0.9, 0.8, 0.1, 0.7],      # caption 0 ranks videos 0, 1, 3, 2: AP = (1 + 2/4) / 2
              1: [0.5, 0.6, 0.6, 0.2]}      # caption 1: video 1 (true) ties video 2
    rows = [{"item_id": "ssv2", "clip": c, "text": t, "score": s[c]} for t, s in scores.items() for c in range(4)]
    return item, pair_frame(rows)


def test_retrieval_average_precision_and_recall():
    item, pair = _retrieval()
    out = videocon.outcomes([item], pair, ties="strict").set_index(["item_id", "metric"])
    assert out.loc[("ssv2#0", "AP"), "value"] == pytest.approx((1 + 2 / 4) / 2)
    # strict: the negative first -> the positives rank 2 and 4
    assert out.loc[("ssv2#1", "AP"), "value"] == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert out.loc[("ssv2#0", "R@1"), "value"] == 1.0
    assert out.loc[("ssv2#1", "R@1"), "value"] == 0.0
    # official: calc_ssv2.py's argsort(-pred) over paths 0..3; four rows sort stably -> video 1 first, ranks 1 and 4
    official = videocon.outcomes([item], pair).set_index(["item_id", "metric"])
    assert official.loc[("ssv2#1", "AP"), "value"] == pytest.approx((1 + 2 / 4) / 2)
    assert official.loc[("ssv2#1", "R@1"), ["value", "strict", "tie"]].tolist() == [1.0, 0.0, True]
    expected = videocon.outcomes([item], pair, ties="expected").set_index(["item_id", "metric"])
    assert expected.loc[("ssv2#1", "AP"), "value"] == pytest.approx((0.75 + 0.5) / 2)
    assert expected.loc[("ssv2#1", "R@1"), "value"] == pytest.approx(0.5)
    assert out.loc[("ssv2#1", "R@5"), "value"] == 1.0
    assert out.loc[("ssv2#0", "AP"), "chance"] == pytest.approx(chance.expected_average_precision(2, 4))
    assert out.loc[("ssv2#0", "R@1"), "chance"] == pytest.approx(0.5)
    table = metric_table([item], pair, settings=FAST, ties="strict").set_index(["metric", "by", "subset"])
    m = table.loc[("mAP", "all", "all")]
    assert m["value"] == pytest.approx((0.75 + 0.5) / 2) and m["n"] == 2 and m["n_tie"] == 1
    assert 0 <= m["p_value"] <= 1 and m["test"] == "bootstrap"
    assert ("AP", "all", "all") not in table.index


def test_atp_hard_accuracy_by_question_type():
    def q(key, qtype, scores, answer):
        it = Item("videocon", key, "atp_hard", (Clip("1106/4010069381.mp4"),), tuple(f"s{i}" for i in range(5)),
                  ((answer,),), labels={"type": qtype})
        return it, _rows(key, scores)

    cases = [q("q1", "CW", [0.1, 0.9, 0.2, 0.3, 0.4], 1),   # right
             q("q2", "TN", [0.9, 0.9, 0.2, 0.3, 0.4], 1),   # tie with option 0, listed first: wrong
             q("q3", "TC", [0.1, 0.2, 0.3, 0.4, 0.5], 4),   # right
             q("q4", "CH", [0.5, 0.2, 0.3, 0.4, 0.1], 2)]   # wrong
    items = [c[0] for c in cases]
    pair = pair_frame([r for c in cases for r in c[1]])
    table = metric_table(items, pair, settings=FAST).set_index(["metric", "by", "subset"])
    assert table.loc[("accuracy", "all", "all"), "value"] == 0.5
    assert table.loc[("accuracy", "all", "all"), "chance"] == pytest.approx(0.2)
    assert table.loc[("accuracy", "question type", "causal"), "value"] == 0.5
    assert table.loc[("accuracy", "question type", "temporal"), "value"] == 0.5
    assert videocon.question_type(items[0]) == "causal"
