"""An API model on the newer benchmarks (MVP, TemporalBench, TempCompass, TVBench): a text answer is read by the
benchmark's own reader exactly as ``foilbench import`` reads the same answer in the benchmark's released answer format
(so the run's numbers are an import's), in any option order; named options are answered by their names' last words
with log-probabilities; and a benchmark without a reader of the answers asked says so in one line before anything is
sent."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from bench.config import DataSource, Endpoint, ScoreConfig
from bench.importers.mvp import import_mvp
from bench.importers.tempcompass import import_tempcompass
from bench.importers.temporalbench import import_temporalbench
from bench.importers.tvbench import check_ans, gt_of, import_tvbench
from bench.items import Clip, Item
from bench.loaders import load
from bench.loaders.mvp import official_order
from bench.registry import spec
from bench.scoring.api.answers import AnsweredProtocol
from bench.scoring.backends.api import ApiBackend
from bench.scoring.plan import make_plan
from bench.scoring.protocols import make_protocol

ENDPOINT = Endpoint("http://127.0.0.1:9/v1")  # never contacted: nothing here sends a request


def _items(sample, name: str) -> list[Item]:
    s = sample[name]
    return load(name, s.data_path, video_root=s.video_root, **s.loader_options).items


def stored(answer: str) -> str:
    """An answer as an API run stores it (no text is "None"): what an import of the run's answers reads."""
    return answer or "None"


def _read(name: str, items: list[Item], answers: list[str], orders: list[tuple[int, int, list[int]]]) -> list[int]:
    """The options an API run of the ``mc`` protocol stores for ``answers``, each to (item index, clip, order)."""
    protocol = AnsweredProtocol(make_protocol("mc", spec(name), closed=True), "text", spec(name).answer_parser)
    for item in items:
        protocol.requests(item)
    keys = [(items[i].item_id, "text", clip, order) for i, clip, order in orders]
    replies = np.array([{"text": a} for a in answers], dtype=object)
    return [row["choice"] for row in protocol.rows(keys, replies).choice]


def test_tvbench_answers_are_read_as_the_notebooks_results_are_imported(sample, tmp_path):
    items = _items(sample, "tvbench")
    kinds = ["(A)", "b", "(C) the left", "D.", "(b", "the answer is A", "(z)", "A)", "", "B. sitting down"]
    preds = [kinds[n % len(kinds)] for n in range(len(items))]
    tasks = list(dict.fromkeys(it.subset for it in items))
    results = {"acc_dict": {t: [sum(check_ans(stored(p), gt_of(it)) for p, it in zip(preds, items) if it.subset == t),
                                sum(it.subset == t for it in items)] for t in tasks},
               "res_list": [{"pred": stored(p), "gt": gt_of(it)} for t in tasks for p, it in zip(preds, items)
                            if it.subset == t]}
    (tmp_path / "results.json").write_text(json.dumps(results))
    _, imported, _ = import_tvbench(items, [tmp_path / "results.json"])
    identity = [(n, 0, list(range(len(it.texts)))) for n, it in enumerate(items)]
    read = _read("tvbench", items, preds, identity)
    assert read == [{r["item_id"]: r["choice"] for r in imported}[it.item_id] for it in items]
    assert {-1, 0, 1} <= set(read)
    # in another order a letter names the option shown there, and check_ans accepts the true one's
    item = max(items, key=lambda it: len(it.texts))
    order = [*range(1, len(item.texts)), 0]
    true_letter = "ABCD"[order.index(item.truth[0][0])]
    assert _read("tvbench", [item], [f"({true_letter})", "(A)"], [(0, 0, order)] * 2) == [item.truth[0][0], order[0]]


@pytest.mark.parametrize("task", ["multi-choice", "caption_matching"])
def test_tempcompass_answers_are_read_as_released_predictions_are_imported(sample, tmp_path, task):
    items = [it for it in _items(sample, "tempcompass") if it.labels["format"] == task]
    root = sample["tempcompass"].data_path
    questions = json.loads((root / "questions" / f"{task}.json").read_text())
    by_id = {f"{task}/{v}/{a}/{n}": q for v, aspects in questions.items() for a, qs in aspects.items()
             for n, q in enumerate(qs)}

    def answers(item: Item) -> list[str]:
        lines = by_id[item.item_id]["question"].split("\n")[1:]
        truth = item.truth[0][0]
        other = (truth + 1) % len(lines)
        named = [line.split(": " if task == "caption_matching" else ". ", 1) for line in lines]
        found = [by_id[item.item_id]["answer"], lines[other], named[other][1], "I cannot tell", ""]
        if task == "caption_matching":
            return found + [named[other][0], named[truth][0].split()[-1] + "."]
        return found + [named[other][0], f"{named[truth][0].rstrip('.')}) yes"]

    seen = []
    for k in range(len(answers(items[0]))):
        predicted: dict = {}
        for item in items:
            video, aspect, _ = item.item_id.split("/")[1:]
            predicted.setdefault(video, {}).setdefault(aspect, []).append(
                {**by_id[item.item_id], "prediction": stored(answers(item)[k])})
        path = tmp_path / f"{k}" / f"{task}.json"
        path.parent.mkdir()
        path.write_text(json.dumps(predicted))
        _, imported, _ = import_tempcompass(items, [path])
        chosen = {row["item_id"]: row["choice"] for row in imported}
        identity = [(n, 0, list(range(len(it.texts)))) for n, it in enumerate(items)]
        read = _read("tempcompass", items, [answers(it)[k] for it in items], identity)
        assert read == [chosen[it.item_id] for it in items], k
        seen += [("true" if r == it.truth[0][0] else "none" if r < 0 else "other") for r, it in zip(read, items)]
    assert set(seen) == {"true", "other", "none"}


def test_mvp_and_temporalbench_answers_are_read_as_their_answer_files_are_imported(sample, tmp_path):
    responses = ["Answer: B", "A", "I think (a) because", "neither", "", "b. then"]
    items = _items(sample, "mvp")[:3]
    asked = [(n, c) for n in range(len(items)) for c in range(2)]
    lines = [{"video_id": items[n].labels["video_ids"][c], "response": stored(r)}
             for (n, c), r in zip(asked, responses)]
    (tmp_path / "mvp.jsonl").write_text("\n".join(map(json.dumps, lines)))
    _, imported, _ = import_mvp(items, [tmp_path / "mvp.jsonl"])
    read = _read("mvp", items, responses, [(n, c, official_order(items[n], c)) for n, c in asked])
    assert read == [row["choice"] for row in imported] and -1 in read and set(read) - {-1}

    items = _items(sample, "temporalbench")[:len(responses)]
    lines = [{"idx": it.item_id, "response": stored(r)} for it, r in zip(items, responses)]
    (tmp_path / "tb.jsonl").write_text("\n".join(map(json.dumps, lines)))
    _, imported, _ = import_temporalbench(items, [tmp_path / "tb.jsonl"])
    read = _read("temporalbench", items, responses, [(n, 0, [0, 1]) for n in range(len(items))])
    assert read == [row["choice"] for row in imported] == [0, 0, -1, -1, -1, 1]  # "Answer: B" begins with A


def test_named_options_are_answered_by_their_names_last_words_with_logprobs():
    item = Item("tempcompass", "caption_matching/v/speed/0", "speed", (Clip("v.mp4"),), ("slowly", "quickly"), ((1,),),
                {"format": "caption_matching", "question": "Which caption matches?",
                 "option_names": ["Option 1", "Option 2"]})
    protocol = AnsweredProtocol(make_protocol("mc", spec("tempcompass")), "logprobs")
    assert {r.answers for r, _ in protocol.requests(item)} == {("1", "2")}
    reply = {"text": "2", "top_logprobs": [["2", -0.1], [" 2", -3.0], ["1", -2.5], ["A", -0.5]]}
    keys = [(item.item_id, "text", 0, [0, 1]), (item.item_id, "text", 0, [1, 0])]
    rows = protocol.rows(keys, np.array([reply, reply], dtype=object)).choice
    assert rows[0]["logits"] == pytest.approx([-2.5, np.logaddexp(-0.1, -3.0)])
    assert [r["choice"] for r in rows] == [1, 0]  # "2" names the second option shown


def test_no_text_is_no_answer_even_where_the_reader_reads_none_as_no():
    protocol = AnsweredProtocol(make_protocol("entail", spec("tempcompass")), "text", spec("tempcompass").answer_parser)
    replies = [{"text": "None of them"}, {"text": "Yes, it does"}, {"text": ""}, {"text": "No", "refusal": "x"}]
    replies = np.array(replies, dtype=object)
    rows = protocol.rows([("i", 0, t) for t in range(4)], replies).pair
    assert [r["score"] for r in rows[:2]] == [0.0, 1.0]  # eval_yes_no.py: a prediction starting with "no" is No
    assert all(math.isnan(r["score"]) for r in rows[2:]) and [r["answer"] for r in rows[2:]] == ["None", "None"]


@pytest.mark.parametrize("name", ["mvp", "tvbench"])
def test_yes_no_answers_nobody_reads_as_text_are_said_before_anything_is_sent(sample, name, capsys):
    s = sample[name]
    source = DataSource.of(name, s.data_path, s.video_root, {})

    def plan(answers: str, protocol: str = "entail"):
        return make_plan(ScoreConfig(source, "gpt-4o", family="api", protocol=protocol, endpoint=ENDPOINT,
                                     options={"answers": answers}))

    said = f"{spec(name).title} has no reader of Yes/No answers given as text"
    with pytest.raises(ValueError, match=f"{said} .*: ask with -b answers=logprobs"):
        plan("text")
    capsys.readouterr()
    plan("auto")
    assert capsys.readouterr().err.splitlines() == [f"note: {said} (its papers and code read none): this run scores "
                                                    "only if the endpoint returns logprobs"]
    plan("logprobs")
    plan("text", "mc")  # its letters have a reader
    assert capsys.readouterr().err == ""
    backend = ApiBackend("gpt-4o", endpoint=vars(ENDPOINT))
    backend.mode = "text"  # as prepare() leaves it for an endpoint that returns no logprobs
    with pytest.raises(ValueError, match=f"{said} .*, and http://127.0.0.1:9/v1 returns no logprobs"):
        backend.answering(make_protocol("entail", spec(name), closed=True), spec(name))
