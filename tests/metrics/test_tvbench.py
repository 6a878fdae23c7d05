"""TVBench's official answer check and metrics: hand-made answers through ``check_ans`` (checked against the official
function itself when ``$FOILBENCH_TVBENCH_REPO`` names a checkout of daniel-cores/tvbench), the notebook's results
file imported by position, ties of scored runs, and the per-task accuracy with its mean over tasks."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import numpy as np
import pytest

from bench.importers.tvbench import check_ans, import_tvbench
from bench.loaders import load
from bench.metrics import tvbench
from bench.metrics.dispatch import metric_table
from bench.store.schema import choice_frame, pair_frame

REPO_ENV = "FOILBENCH_TVBENCH_REPO"
GT = "(B) standing up"
# (answer, accepted by check_ans, the option stored): vqa_dataset.py L163-178 takes the answer's first word
ANSWERS = [
    ("(B) standing up", True, 1), ("(b)", True, 1), ("b", True, 1), ("B.", True, 1), ("(B", True, 1),
    ("(A) sitting down", False, 0), ("a", False, 0), ("(C)", False, -1),  # a letter naming no option: unread
    ("I think (B)", False, -1), ("Standing up", False, -1),  # no option word first: unread
    ("(", True, 1), ("", True, 1), (")", True, 1),  # the notebook prepends "(": an empty reply is accepted
]


def official_check_ans():
    """``check_ans`` compiled alone from the official ``vqa_dataset.py`` (the module imports torch, video readers)."""
    repo = os.environ.get(REPO_ENV)
    source = Path(repo) / "vqa_dataset.py" if repo else None
    if source is None or not source.is_file():
        return None
    tree = ast.parse(source.read_text())
    function = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "check_ans")
    scope: dict = {}
    exec(compile(ast.Module([function], type_ignores=[]), str(source), "exec"), scope)  # noqa: S102
    return scope["check_ans"]


@pytest.mark.parametrize("answer, accepted, _", ANSWERS)
def test_check_ans_on_hand_made_answers(answer, accepted, _):
    assert check_ans(answer, GT) is accepted


@pytest.mark.skipif(official_check_ans() is None, reason=f"set {REPO_ENV} to a TVBench checkout")
def test_check_ans_is_the_official_function_on_every_hand_made_answer():
    official = official_check_ans()
    assert [official(answer, GT) for answer, _, _ in ANSWERS] == [check_ans(answer, GT) for answer, _, _ in ANSWERS]


ROWS = {
    "action_count": [{"video": f"c{i}.mp4", "question": "How many?", "candidates": ["1", "2", "3", "4"],
                      "answer": str(1 + i % 4)} for i in range(3)],
    "action_antonym": [{"video": f"a{i}.mp4", "question": "What is the person doing?",
                        "candidates": ["sitting down", "standing up"], "answer": "standing up"}
                       for i in range(len(ANSWERS))],
}


def _data(tmp_path):
    for task, records in ROWS.items():
        (tmp_path / "json").mkdir(exist_ok=True)
        (tmp_path / "json" / f"{task}.json").write_text(json.dumps(records))
    return load("tvbench", tmp_path).items


def _results(tmp_path, count_answers=("1", "(c)", "banana")):
    """The notebook's results: Action Count first (its data_list order), then Action Antonym."""
    counts = [{"pred": said, "gt": f"({'ABCD'[int(r['answer']) - 1]}) {r['answer']}"}
              for said, r in zip(count_answers, ROWS["action_count"])]
    antonyms = [{"pred": said, "gt": GT} for said, _, _ in ANSWERS]
    right = [0, sum(accepted for _, accepted, _ in ANSWERS)]  # "1", "(c)" and "banana" name no true option
    path = tmp_path / "test.json"
    path.write_text(json.dumps({"acc_dict": {"Action Count": [right[0], 3], "Action Antonym": [right[1], len(ANSWERS)]},
                                "res_list": counts + antonyms}))
    return path


def test_the_notebooks_results_file_is_read_by_position_with_check_ans(tmp_path):
    items = _data(tmp_path)
    pair, choice, measure = import_tvbench(items, [_results(tmp_path)])
    assert pair == [] and measure == "answer"
    stored = {r["item_id"]: r["choice"] for r in choice}
    assert [stored[f"action_antonym/{n}"] for n in range(len(ANSWERS))] == [option for _, _, option in ANSWERS]
    assert [stored[f"action_count/{n}"] for n in range(3)] == [-1, 2, -1]  # "1" vs "(a)": not a substring
    out = tvbench.outcomes(items, None, choice_frame(choice)).set_index("item_id")
    assert [out.loc[f"action_antonym/{n}", "value"] for n in range(len(ANSWERS))] == \
        [float(accepted) for _, accepted, _ in ANSWERS]


def test_a_results_file_of_other_questions_is_one_line(tmp_path):
    items = _data(tmp_path)
    path = _results(tmp_path)
    data = json.loads(path.read_text())
    data["res_list"][0]["gt"] = "(D) 4"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"res_list\[0\]: gt '\(D\) 4' is not action_count/0's answer '\(A\) 1'"):
        import_tvbench(items, [path])
    data = json.loads(_results(tmp_path).read_text())
    data["acc_dict"]["Action Antonym"][0] += 1
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"acc_dict\['Action Antonym'\]: acc_dict counts \d+ right; check_ans accepts"):
        import_tvbench(items, [path])
    data["acc_dict"] = {"Action Count": [0, 5]}
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"5 questions asked; the loaded data has 3 of Action Count"):
        import_tvbench(items, [path])
    path.write_text(json.dumps({"res_list": []}))
    with pytest.raises(ValueError, match="expected the official notebook's results"):
        import_tvbench(items, [path])


def test_per_task_accuracy_its_mean_over_tasks_and_the_total(tmp_path):
    items = _data(tmp_path)
    _, choice, _ = import_tvbench(items, [_results(tmp_path)])
    table = metric_table(items, None, choice_frame(choice))
    accepted = [float(a) for _, a, _ in ANSWERS]
    per_task = {"Action Count": 0.0, "Action Antonym": float(np.mean(accepted))}
    rows = table[table.metric == "accuracy"]
    assert rows[rows.by == "subset"].set_index("subset")["value"].to_dict() == pytest.approx(per_task)
    assert rows.loc[rows.by == "all", "value"].item() == pytest.approx(sum(accepted) / len(items))  # Total Acc
    assert rows.loc[rows.by == "average", "value"].item() == pytest.approx(np.mean(list(per_task.values())))
    chance = rows[rows.by == "subset"].set_index("subset")["chance"]
    assert chance.to_dict() == pytest.approx({"Action Count": 0.25, "Action Antonym": 0.5})
    assert rows.loc[rows.by == "all", "n_unparsed"].item() == 2 + sum(o == -1 for _, _, o in ANSWERS)


def test_ties_of_scores_and_letters(tmp_path):
    items = _data(tmp_path)
    item = next(it for it in items if it.item_id == "action_count/0")  # the answer is "1", option A
    pair = pair_frame([{"item_id": item.item_id, "clip": 0, "text": t, "score": s} for t, s in enumerate((5, 5, 1, 1))])
    for ties, value in (("official", 0.0), ("strict", 0.0), ("expected", 0.5)):
        assert tvbench.outcomes([item], pair, None, ties=ties)["value"].tolist() == [value]
    choice = choice_frame([{"item_id": item.item_id, "axis": "text", "query": 0, "options": [0, 1, 2, 3],
                            "logits": [3.0, 3.0, 0.0, 0.0], "choice": 0},
                           {"item_id": item.item_id, "axis": "text", "query": 0, "options": [1, 2, 3, 0],
                            "logits": [0.0, 0.0, 0.0, 4.0], "choice": 0}])
    for ties, value, orders in (("official", 1.0, 1.0), ("strict", 0.0, 0.0), ("expected", 0.5, 0.5)):
        out = tvbench.outcomes([item], None, choice, ties=ties).set_index("metric")["value"]
        assert (out["accuracy"], out["accuracy (all orders)"]) == (value, orders), ties
