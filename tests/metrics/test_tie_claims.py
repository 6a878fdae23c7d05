"""Ties are not knowing: hand-made tied items on the five benchmarks, their tie count on every surface, a tie never
earning a star, one-class rows tested against the run's own answer rate, and answer shares that count a tie as
neither."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bench.analysis.items import item_outcomes, item_table, pair_table, tie_counts, tie_notes
from bench.commands.compare import format_text
from bench.config import Manifest
from bench.devkit.demo import bias_lines, foil_type_table, tie_lines
from bench.items import Clip, Item
from bench.metrics import Settings, metric_table
from bench.metrics.aggregate import BINOMIAL, MCNEMAR
from bench.metrics.answers import Leaning, first_letter_answers, yes_answers
from bench.metrics.flags import RunScores, item_flags, run_outcomes
from bench.metrics.dispatch import run_ties, tie_line
from bench.metrics.pooled import item_scores, pooled_table
from bench.metrics.ties import TIES, most_tied, notable, tie_warning
from bench.report.compared import controls_section, controls_table
from bench.report.index import _headline_cell
from bench.report.runs import headline_rows
from bench.report.tables import score_table, tie_text
from bench.store.run import Run
from bench.store.schema import choice_frame, failure_frame, pair_frame

N, TIED = 12, 4  # items per benchmark, and the first TIED of them scored with the true and a false text alike
SETTINGS = Settings(n_boot=200)
KINDS = ("order", "action", "count")
# each benchmark's headline metric (over all items) and the per-item score the cross-run tables judge by
HEADLINE = {"vilma": "T", "vitatecs": "accuracy", "velociti": "ClassicVLE", "videocon": "caption > contrast",
            "vinoground": "text"}


def _items(benchmark: str, n: int = N) -> list[Item]:
    labels = [{"foil_type": KINDS[k % len(KINDS)]} for k in range(n)]
    if benchmark == "vinoground":
        return [Item("vinoground", f"g{k}", "object", (Clip(f"a{k}.mp4"), Clip(f"b{k}.mp4")), (f"t{k}", f"u{k}"),
                     ((0,), (1,)), labels[k]) for k in range(n)]
    if benchmark == "vilma":
        return [it for k in range(n) for it in (
            Item("vilma", f"relations/{k}", "relations", (Clip(f"v{k}.mp4"),), (f"c{k}", f"f{k}"), ((0,),),
                 labels[k], twin_id=f"relations/{k}/proficiency"),
            Item("vilma", f"relations/{k}/proficiency", "relations", (Clip(f"v{k}.mp4"),), (f"pc{k}", f"pf{k}"),
                 ((0,),), role="proficiency", twin_id=f"relations/{k}"))]
    subset = {"vitatecs": "Direction", "velociti": "action_binding", "videocon": "llm"}[benchmark]
    return [Item(benchmark, f"i{k}", subset, (Clip(f"v{k}.mp4"),), (f"caption {k}", f"foil {k}"), ((0,),), labels[k])
            for k in range(n)]


def _pair(items: list[Item], tied: int = TIED, constant: float | None = None) -> pd.DataFrame:
    """Scores: the first ``tied`` main items (all of them with ``constant``) give every pair the same score; the
    others rank every true pair first (VELOCITI: P(Yes) 0.9 / 0.1)."""
    rows, main = [], 0
    for it in items:
        at = main if it.role == "main" else N  # proficiency twins are never tied
        main += it.role == "main"
        for c in range(len(it.clips)):
            for t in range(len(it.texts)):
                same = constant if constant is not None else 0.7 if at < tied else None
                rows.append({"item_id": it.item_id, "clip": c, "text": t,
                             "score": same if same is not None else 0.9 if t in it.truth[c] else 0.1})
    return pair_frame(rows)


def _run(name: str, items: list[Item], pair: pd.DataFrame, *, model: str = "m", frames: dict | None = None,
         measure: str = "similarity", choice: pd.DataFrame | None = None) -> Run:
    manifest = Manifest(benchmark=items[0].benchmark, data_path=None, model=model, measure=measure, name=name,
                        protocol="mc" if choice is not None else "similarity", prompt={},
                        frame_policy=frames or {"name": "uniform", "k": 8})
    run = Run(Path(name), manifest, pair, choice if choice is not None else choice_frame([]), failure_frame([]))
    run._items = items
    return run


def _overall(table: pd.DataFrame, metric: str) -> pd.Series:
    return table[(table["metric"] == metric) & (table["by"] == "all")].iloc[0]


@pytest.mark.parametrize("benchmark", list(HEADLINE))
def test_hand_made_ties_are_counted_on_every_surface(benchmark):
    items = _items(benchmark)
    tied, seeing = _run("tied", items, _pair(items)), _run("seeing", items, _pair(items, tied=0))
    table = metric_table(items, tied.pair, settings=SETTINGS, benchmark=benchmark, measure="p_yes")
    row = _overall(table, HEADLINE[benchmark])
    assert (row["n_tie"], row["n"]) == (TIED, N)
    assert row["strict"] == pytest.approx((N - TIED) / N)  # the others are right outright
    # the report's paper tables and headline cell carry the share and the strict value
    cell = score_table(table.assign(run="tied"), [HEADLINE[benchmark]], by="all").shown.iloc[0, 0]
    assert f"(ties {TIED / N:.0%}, strict {100 * (N - TIED) / N:.1f})" in cell
    headline = headline_rows([tied], table.assign(run="tied"), [(HEADLINE[benchmark], "all")]).iloc[0]
    assert f"ties {TIED / N:.0%} · strict {100 * (N - TIED) / N:.1f}" in _headline_cell(headline, "significant")
    # the per-item judgements of the pooled tables, compare and the controls
    rows = item_scores(tied)
    assert int(rows["tie"].sum()) == TIED and run_ties(tied) == (TIED, N)
    assert tie_line(tied) == tie_warning(TIED, N) and "4 of 12 items (33%)" in tie_line(tied)
    pooled = pooled_table(rows, "foil_type")
    assert pooled["tied"].sum() == TIED and pooled["n"].sum() == N
    assert pooled["accuracy"].sum() == pytest.approx(sum(100 * (g["tie"] == 0).mean() for _, g in
                                                         rows.groupby("foil_type")))  # a tie is not told apart
    assert "tied" in foil_type_table(pooled, ["tied"]) and foil_type_table(pooled, ["tied"]).splitlines()[-2].split() \
        == ["tied", str(TIED)]
    long, found = item_outcomes({"seeing": seeing, "tied": tied})
    pairs = pair_table(long)
    assert (pairs.iloc[0]["tied_a"], pairs.iloc[0]["tied_b"]) == (0, TIED)
    assert pairs.iloc[0]["accuracy_b"] == pytest.approx((N - TIED) / N)  # whatever the official rule gives a tie
    assert tie_counts(long).set_index("run")["tied"].to_dict() == {"seeing": 0, "tied": TIED}
    assert "seeing 0 of 12; tied 4 of 12" in tie_notes(long)[0] and len(tie_notes(long)) == 1  # no run tied most
    hardest = item_table(long, found)
    assert hardest["runs_tied"].sum() == TIED and (hardest.head(TIED)["runs_tied"] == 1).all()
    assert "[1] 0 of 12; [2] 4 of 12" in format_text(pairs, hardest, 3, tie_notes(long))  # runs by their tags
    blind = _run("tied", items, tied.pair, frames={"name": "none"})
    control = controls_table([seeing, blind], ["foil_type"]).set_index("foil_type").loc["all"]
    assert (control["tied full"], control["tied control"]) == (0, TIED)
    assert control["with control"] == pytest.approx((N - TIED) / N) and control["drop"] > 0
    # the explore notebook's marks: a tie is not right
    outcomes = run_outcomes(items, {"tied": RunScores(tied.pair, None, "p_yes")})
    mine = outcomes[outcomes["metric"] == HEADLINE[benchmark]]
    assert int(mine["tie"].sum()) == TIED and (mine.loc[mine["tie"], "strict"] == 0).all()
    flags = item_flags(items, outcomes, HEADLINE[benchmark]).set_index("item_id")
    assert flags.loc[mine.loc[mine["tie"], "item_id"], "wrong"].all()


@pytest.mark.parametrize("benchmark", list(HEADLINE))
@pytest.mark.parametrize("ties", TIES)
def test_a_constant_model_is_never_starred_and_its_ties_at_a_coins_share_are_chance(benchmark, ties):
    items = _items(benchmark, 40)  # enough for a star if ties counted as right
    table = metric_table(items, _pair(items, constant=0.5), settings=SETTINGS, benchmark=benchmark,
                         measure="p_yes", ties=ties)
    assert not table["significant"].any(), table[table["significant"]][["metric", "by", "subset", "value"]]
    fully = table[(table["n_tie"] == table["n"]) & (table["test"] == BINOMIAL)]
    assert len(fully)
    assert (fully["expected"] - fully["chance"]).abs().max() == pytest.approx(0.0, abs=1e-12)


def test_the_official_rule_keeps_its_value_but_not_its_star():
    items = _items("vilma", 40)
    table = metric_table(items, _pair(items, constant=0.3), settings=SETTINGS)
    t = _overall(table, "T")
    assert (t["value"], t["strict"], t["expected"], t["n_tie"]) == (1.0, 0.0, 0.5, 40)  # ViLMA: the caption wins
    assert t["ci_low"] > t["chance"] and not t["significant"] and t["p_value"] > 0.4
    # a model that knows is still starred, and its test is the interval's dual
    right = metric_table(items, _pair(items, tied=0), settings=SETTINGS)
    assert _overall(right, "T")["significant"] and _overall(right, "Avg. P+T")["significant"]


def test_one_class_rows_are_tested_against_the_runs_own_answer_rate():
    items = [Item("velociti", f"v{k}", "action_binding", (Clip("v.mp4"),), ("pos", "neg"), ((0,),))
             for k in range(40)]
    always_yes = pair_frame([{"item_id": it.item_id, "clip": 0, "text": t, "score": 0.9 if t == 0 else 0.8}
                             for it in items for t in (0, 1)])
    table = metric_table(items, always_yes, measure="p_yes", settings=SETTINGS)
    pos = _overall(table, "pos acc")
    assert pos["value"] == 1.0 and pos["chance"] == 1.0 and not pos["significant"]
    assert _overall(table, "ClassicVLE")["significant"]  # it does rank the positive first
    knows = pair_frame([{"item_id": it.item_id, "clip": 0, "text": t, "score": 0.9 if t == 0 else 0.1}
                        for it in items for t in (0, 1)])
    table = metric_table(items, knows, measure="p_yes", settings=SETTINGS)
    assert _overall(table, "pos acc")["chance"] == 0.5 and _overall(table, "pos acc")["significant"]
    assert _overall(table, "neg acc | pos")["chance"] == 0.5 and _overall(table, "neg acc | pos")["significant"]
    # always "A", letters never tied: MC A is right every time and exactly at its own rate
    choice = choice_frame([{"item_id": it.item_id, "axis": "text", "query": 0, "options": options,
                            "choice": options[0], "logits": [2.0, 1.0]}
                           for it in items for options in ([0, 1], [1, 0])])
    table = metric_table(items, None, choice, settings=SETTINGS)
    a = _overall(table, "MC A")
    assert (a["value"], a["chance"], a["significant"]) == (1.0, 1.0, False)
    bias = _overall(table, "MC bias (B-A)")
    assert bias["value"] == -1.0 and bias["significant"] and bias["test"] == MCNEMAR  # a real bias is one
    # the same answers reached only by tie-breaking: no letter chosen, no bias
    tied = choice.assign(logits=[[1.0, 1.0]] * len(choice))
    bias = _overall(metric_table(items, None, tied, settings=SETTINGS), "MC bias (B-A)")
    assert bias["value"] == -1.0 and bias["n_tie"] == len(items) and not bias["significant"]


def test_vilmas_probability_accuracy_is_tested_against_the_runs_own_rate():
    items = [it for k in range(60) for it in (
        [Item("vilma", f"SRL_Action_Replacement/{k}", "SRL_Action_Replacement", (Clip("v.mp4"),), ("c", "f", "g"),
              ((0,),))] if k % 2 else
        [Item("vilma", f"relations/{k}", "relations", (Clip("v.mp4"),), ("c", "f"), ((0,),))])]
    always_foil = pair_frame([{"item_id": it.item_id, "clip": 0, "text": t, "score": 0.2}
                              for it in items for t in range(len(it.texts))])
    acc = _overall(metric_table(items, always_foil, measure="p_yes", settings=SETTINGS), "acc")
    foils = sum(len(it.texts) - 1 for it in items) / sum(len(it.texts) for it in items)
    assert foils > 0.55 and acc["value"] == pytest.approx(foils) and acc["chance"] == pytest.approx(foils)
    assert not acc["significant"]


def test_answer_shares_count_a_tie_as_neither():
    assert yes_answers([0.9, 0.5, 0.2, 0.5, float("nan"), 0.7]) == Leaning(2, 1, 2)
    choice = choice_frame([
        {"item_id": "a", "axis": "text", "query": 0, "options": [0, 1], "choice": 0, "logits": [3.0, 1.0]},
        {"item_id": "a", "axis": "text", "query": 0, "options": [1, 0], "choice": 1, "logits": [2.0, 2.0]},
        {"item_id": "b", "axis": "text", "query": 0, "options": [0, 1], "choice": 1, "logits": [0.0, 1.0]},
        {"item_id": "b", "axis": "text", "query": 0, "options": [1, 0], "choice": -1, "logits": [float("nan")] * 2}])
    found = first_letter_answers(choice)
    assert found == Leaning(1, 1, 1) and found.share == 0.5
    every = first_letter_answers(choice.iloc[[1]])
    assert every.tied == every.n == 1 and np.isnan(every.share)
    lines = bias_lines(pd.DataFrame([{"run": "blind", "measure": "share A", "value": 100 * every.share, "n": every.n,
                                      "tied": every.tied},
                                     {"run": "seeing", "measure": "share A", "value": 100 * found.share,
                                      "n": found.n, "tied": found.tied}]))
    assert "every one of its 1 answers tied" in lines[0] and "not a bias" in lines[0] and "%" not in lines[0]
    assert "50.0 %" in lines[1] and "1 tied: neither" in lines[1]


def test_notable_ties_and_the_demos_warning(tmp_path):
    assert not notable(5, 100) and notable(6, 100) and not notable(0, 0)
    assert most_tied("x", 6, 12) == "" and "x tied 7 of 12 items (58%)" in most_tied("x", 7, 12)
    assert most_tied("x", 12, 12).startswith("x tied every item: the true and a false text scored alike, so it told "
                                             "none of them apart")
    assert tie_text({"n_tie": 5, "n": 100, "strict": 0.5}) == ""
    assert tie_text({"n_tie": 50, "n": 100, "strict": 0.25}) == "(ties 50%, strict 25.0)"
    items = _items("vitatecs")
    runs = [_run("seeing", items, _pair(items, tied=0)), _run("constant", items, _pair(items, constant=0.5))]
    lines = tie_lines(runs)
    assert len(lines) == 2 and "likely causes" in lines[0] and lines[1] == "  constant on vitatecs: every item"
    blind = _run("constant", items, runs[1].pair, frames={"name": "none"}, model="m")
    section = controls_section(tmp_path, [runs[0], blind], ["foil_type"])
    assert "constant tied every item" in section and "seeing tied" not in section
