"""Tie policies: the comparison rules by hand, each benchmark's official convention (as its released code does it),
duplicated options, numpy's pre-1.25 argsort order, and the released Owl-Con scores against the VideoCon paper."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from bench.items import Clip, Item
from bench.metrics import metric_table, ties, videocon, vitatecs
from bench.metrics.dispatch import item_correct
from bench.metrics.legacy_sort import _heapsort, introsort_argsort
from bench.store.schema import choice_frame, pair_frame

POLICIES = ("strict", "official", "expected")


def _rows(item_id, scores, clip=0):
    return [{"item_id": item_id, "clip": clip, "text": t, "score": s} for t, s in enumerate(scores)]


def test_all_above_by_hand():
    assert ties.all_above([0.6, 0.6], [0], [1], "strict") == 0.0
    assert ties.all_above([0.6, 0.6], [0], [1], "first") == 1.0
    assert ties.all_above([0.6, 0.6], [1], [0], "first") == 0.0
    assert ties.all_above([0.6, 0.6], [0], [1], "expected") == 0.5
    assert ties.all_above([0.8, 0.8, 0.8, 0.1], [1], [0, 2, 3], "expected") == pytest.approx(1 / 3)
    # two winners tied with one loser: all three orders equally likely, the loser last in one of them
    assert ties.all_above([0.5, 0.5, 0.5], [0, 1], [2], "expected") == pytest.approx(1 / 3)
    assert ties.all_above([0.9, 0.5, 0.5], [0, 1], [2], "first") == 1.0
    assert ties.all_above([math.nan, 0.1], [0], [1], "expected") == 0.0
    d = ties.decide([0.6, 0.6], [0], [1], "official", "first")
    assert (d.value, d.strict, d.expected, d.tie) == (1.0, 0.0, 0.5, True)
    assert not ties.decide([0.7, 0.6], [0], [1], "strict", "first").tie
    with pytest.raises(ValueError, match="unknown tie policy 'random'"):
        ties.check("random")


def test_thresholds_and_letter_logits_by_hand():
    for above in (True, False):
        d = ties.threshold_decision(0.5, 0.5, above, "expected")
        assert (d.value, d.strict, d.tie) == (0.5, 0.0, True)
        assert ties.threshold_decision(0.5, 0.5, above, "official").value == 0.0
    # the protocol stores the first letter of a tie (argmax); official keeps it, strict fails, expected halves
    d = ties.choice_decision([0, 1], [2.0, 2.0], 0, 0, "official")
    assert (d.value, d.strict, d.expected) == (1.0, 0.0, 0.5)
    assert ties.choice_decision([1, 0], [2.0, 2.0], 1, 0, "expected").value == 0.5
    assert ties.choice_decision([0, 1], [math.nan, math.nan], 0, 0, "strict").value == 1.0  # imported answer
    assert ties.choice_decision([0, 1], [1.0, 0.0], -1, 0, "expected").value == 0.0  # unparsed


def test_numpy_124_argsort_order():
    # np.argsort of these arrays under numpy 1.24.4 (numpy 2.x returns other orders among the ties)
    x = [(i * 7) % 3 for i in range(20)]
    assert introsort_argsort(x).tolist() == [0, 15, 12, 18, 6, 9, 3, 4, 7, 10, 13, 1, 16, 19, 8, 11, 2, 14, 17, 5]
    y = [-0.5] * 10 + [-0.9] * 3 + [-0.5] * 8
    assert introsort_argsort(y).tolist() == [10, 12, 11, 18, 17, 16, 15, 14, 13, 19, 0, 8, 7, 6, 5, 4, 3, 2, 1, 9,
                                             20]
    rng = np.random.default_rng(0)
    for n in (0, 1, 5, 16, 17, 50, 300):
        values = rng.integers(0, 4, size=n).astype(float)
        order = introsort_argsort(values)
        assert sorted(order.tolist()) == list(range(n)) and np.all(np.diff(values[order]) >= 0)
    assert introsort_argsort([1.0, math.nan, 0.0]).tolist() == [2, 0, 1]  # NaN last


def test_the_heapsort_fallback_sorts_its_slice_and_nothing_else():
    # introsort falls back to heapsort when its depth budget runs out; inputs that do so are rare, so it is run here
    rng = np.random.default_rng(1)
    for n in (0, 1, 2, 7, 64, 101):
        values = [math.nan if k % 9 == 4 else float(x) for k, x in enumerate(rng.integers(0, 5, size=n + 6))]
        idx = rng.permutation(n + 6).tolist()
        before = list(idx)
        _heapsort(values, idx, 3, n)
        part = [values[i] for i in idx[3:3 + n]]
        assert idx[:3] == before[:3] and idx[3 + n:] == before[3 + n:]
        assert sorted(idx[3:3 + n]) == sorted(before[3:3 + n])
        numbers = [x for x in part if x == x]
        assert numbers == sorted(numbers) and part[len(numbers):] == [x for x in part if x != x]  # NaN last


def test_vilma_caption_equal_to_its_foil():
    # like rare-actions noun item actions-noun-active-0858 ("hammering an egg" twice): argmax picks the caption
    main = Item("vilma", "rare-actions-noun-foils/x", "rare-actions-noun-foils", (Clip("v.mp4"),),
                ("hammering an egg", "hammering an egg"), ((0,),))
    pair = pair_frame(_rows(main.item_id, [0.3, 0.3]))
    found = {p: item_correct([main], pair, ties=p).loc[main.item_id, "T"] for p in POLICIES}
    assert found == {"strict": 0.0, "official": 1.0, "expected": 0.5}


def _atp(key, scores, answer, texts=None, video="1099/6277800530", question="what does the man hold"):
    texts = texts or tuple(f"statement {i}" for i in range(5))
    item = Item("videocon", key, "atp_hard", (Clip(f"{video}.mp4"),), texts, ((answer,),),
                labels={"type": "CW", "video": video.split("/")[-1], "question": question})
    return item, _rows(key, scores)


def test_atp_hard_first_listed_option_wins_and_duplicates_are_reported():
    copies = ("holds a rope", "holds a rope", "holds a rope", "holds a bag", "holds a cup")
    cases = [_atp("top", [0.9, 0.9, 0.1, 0.2, 0.3], 0, question="q1"),        # answer listed first: official wins
             _atp("late", [0.9, 0.9, 0.1, 0.2, 0.3], 1, question="q2"),       # answer listed second: official loses
             _atp("dup", [0.8, 0.8, 0.8, 0.1, 0.2], 1, copies, question="q3")]  # answer 1 copied at 0 and 2
    items = [c[0] for c in cases]
    pair = pair_frame([r for c in cases for r in c[1]])
    found = {p: item_correct(items, pair, ties=p)["accuracy"].tolist() for p in POLICIES}
    assert found == {"strict": [0.0, 0.0, 0.0], "official": [1.0, 0.0, 0.0],
                     "expected": [0.5, 0.5, pytest.approx(1 / 3)]}
    duplicates = videocon.duplicate_true_options(items)
    assert duplicates["item_id"].tolist() == ["dup"] and duplicates["positions"].tolist() == [[0, 1, 2]]
    row = metric_table(items, pair).set_index(["metric", "by"]).loc[("accuracy", "all")]
    assert row["n_tie"] == 3 and "dup (answer 1 at [0, 1, 2])" in row["note"]


def test_atp_hard_question_asked_twice_with_other_options_is_skipped_officially():
    a, rows_a = _atp("a", [0.9, 0.1, 0.1, 0.1, 0.1], 0, question="what did the bird do")
    b, rows_b = _atp("b", [0.9, 0.1, 0.1, 0.1, 0.1], 0, tuple(f"other {i}" for i in range(5)),
                     question="what did the bird do")
    c, rows_c = _atp("c", [0.1, 0.9, 0.1, 0.1, 0.1], 0, question="another question")
    pair = pair_frame(rows_a + rows_b + rows_c)
    official = metric_table([a, b, c], pair).set_index(["metric", "by"]).loc[("accuracy", "all")]
    assert (official["value"], official["n"], official["n_dropped"]) == (0.0, 1, 2)
    strict = metric_table([a, b, c], pair, ties="strict").set_index(["metric", "by"]).loc[("accuracy", "all")]
    assert (strict["value"], strict["n"]) == (pytest.approx(2 / 3), 3)


def test_velociti_and_vitatecs_and_vinoground_compare_strictly():
    vel = Item("velociti", "v", "agent_bind", (Clip("v.mp4"),), ("pos", "neg"), ((0,),))
    pair = pair_frame(_rows("v", [0.5, 0.5]))
    for policy, classic, strict_vle in (("strict", 0.0, 0.0), ("official", 0.0, 0.0), ("expected", 0.5, 0.25)):
        wide = item_correct([vel], pair, ties=policy)
        assert (wide.loc["v", "ClassicVLE"], wide.loc["v", "StrictVLE"]) == (classic, strict_vle)
    vit = Item("vitatecs", "t", "Type", (Clip("v.mp4"),), ("a", "b"), ((0,),))
    assert [item_correct([vit], pair_frame(_rows("t", [0.2, 0.2])), ties=p).loc["t", "accuracy"]
            for p in POLICIES] == [0.0, 0.0, 0.5]
    vino = Item("vinoground", "0", "action", (Clip("p.mp4"), Clip("n.mp4")), ("pos", "neg"), ((0,), (1,)))
    every = pair_frame(_rows("0", [0.4, 0.4]) + _rows("0", [0.4, 0.4], clip=1))   # all four scores tie
    wide = item_correct([vino], every, ties="expected").loc["0"]
    assert (wide["text"], wide["video"], wide["group"]) == (0.25, 0.25, pytest.approx(1 / 6))
    assert item_correct([vino], every, ties="official").loc["0"].tolist() == [0.0, 0.0, 0.0]


def test_vitatecs_multiple_choice_reads_the_order_lmms_eval_asks():
    caption, counterfactual = "a man pushes a cart", "a man pulls a cart"
    item = Item("vitatecs", "Direction/0", "Direction", (Clip("v.mp4"),), (caption, counterfactual), ((0,),))
    first = vitatecs.official_caption_first(caption, counterfactual)
    # the model always answers A: right only in the order that shows the caption as (A)
    rows = [{"item_id": item.item_id, "axis": "text", "query": 0, "options": options, "logits": [1.0, 0.0],
             "choice": options[0]} for options in ([0, 1], [1, 0])]
    wide = item_correct([item], None, choice_frame(rows))
    assert wide.loc[item.item_id, "accuracy"] == float(first)
    assert wide.loc[item.item_id, "accuracy (both orders)"] == 0.0


def _owlcon(realdata):
    folder = realdata / "videocon"
    needed = [folder / name for name in ("eval_ssv2_temporal_scores.csv", "atphard_scores.csv")]
    if not all(p.is_file() for p in needed):
        pytest.skip(f"the released Owl-Con score files are not in {folder} (datasets/*_scores.csv of "
                    "Hritikbansal/videocon)")
    return folder


@pytest.mark.parametrize("data, scores, table, metric, subset", [
    ("eval_ssv2_temporal.csv", "eval_ssv2_temporal_scores.csv", "Table 4", "mAP", "SSv2-Temporal"),
    ("eval-nextqa-atphard.csv", "atphard_scores.csv", "Table 5", "acc", "ATP-Hard"),
])
def test_released_owl_con_scores_reproduce_the_paper_under_official(realdata, tmp_path, data, scores, table, metric,
                                                                    subset):
    from bench.config import DataSource
    from bench.importers.common import import_run
    from bench.metrics import Settings, run_table
    from bench.published import published
    from bench.store import read_run

    folder = _owlcon(realdata)
    run = read_run(import_run("videocon", [folder / scores], DataSource.of("videocon", folder / data),
                              tmp_path / "run", "owl-con"))
    paper = published("VideoCon", table=table)
    paper = paper[(paper["model"] == "Owl-Con") & (paper["metric"] == metric) & (paper["subset"] == subset)]
    ours = {p: run_table(run, Settings(n_boot=20), ties=p) for p in POLICIES}
    name = "mAP" if metric == "mAP" else "accuracy"
    value = {p: t[(t["metric"] == name) & (t["by"] == "all")].iloc[0] for p, t in ours.items()}
    assert round(100 * value["official"]["value"], 1) == pytest.approx(paper["value"].iloc[0])
    assert value["strict"]["value"] < value["official"]["value"]
    assert value["official"]["strict"] == value["strict"]["value"] and value["official"]["n_tie"] > 0


def test_owl_con_ssv2_official_ranking_matches_calc_ssv2_by_hand(realdata):
    """calc_ssv2.py's loop, run here on the official order, gives the same AP per caption as the metric module."""
    folder = _owlcon(realdata)
    from bench.loaders import load

    (item,) = load("videocon", folder / "eval_ssv2_temporal.csv").items
    with (folder / "eval_ssv2_temporal_scores.csv").open(newline="") as fh:
        prompts = {p: t for t, p in enumerate(item.labels["prompts"])}
        videos = {v: c for c, v in enumerate(item.labels["video_names"])}
        scores = np.full((len(item.clips), len(item.texts)), np.nan)
        for videopath, caption, entailment, *_ in csv.reader(fh):
            scores[videos[videopath], prompts[caption]] = float(entailment)
    pair = pair_frame([{"item_id": item.item_id, "clip": c, "text": t, "score": scores[c, t]}
                       for c in range(len(item.clips)) for t in range(len(item.texts))])
    found = videocon.outcomes([item], pair).set_index(["item_id", "metric"])["value"]
    names = item.labels["video_names"]
    for t in range(len(item.texts)):
        by_path = sorted(range(len(names)), key=lambda c: names[c])
        pred = scores[by_path, t]
        labels = [int(t in item.truth[c]) for c in by_path]
        hits, precisions = 0, []
        for rank, i in enumerate(introsort_argsort(-pred)):
            if labels[i]:
                hits += 1
                precisions.append(hits / (rank + 1))
        assert found[(f"{item.item_id}#{t}", "AP")] == pytest.approx(sum(precisions) / len(precisions))
