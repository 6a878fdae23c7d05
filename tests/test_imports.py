"""Importing released scores and closed models' answers into run stores."""

from __future__ import annotations

import csv
import json
import math

import pytest

from bench.loaders import LoaderError, load
from bench.metrics import metric_table
from bench.config import DataSource
from bench.importers.common import import_run, parse_yes_no
from bench.store import read_run


def test_yes_no_parsing_follows_velociti():
    assert parse_yes_no("Yes.") == 1.0 and parse_yes_no("No, it does not") == 0.0
    assert math.isnan(parse_yes_no("Yes and No")) and math.isnan(parse_yes_no("error"))


def test_velociti_closed_answers(sample, tmp_path):
    s = sample["velociti"]
    n = len(load("velociti", s.data_path).items)
    preds = tmp_path / "gemini.csv"
    preds.write_text("pos_pred,neg_pred\n" + "Yes,No\n" * (n - 1) + "Yes,Yes\n")
    run = read_run(import_run("velociti-closed", [preds], DataSource.of("velociti", s.data_path),
                       tmp_path / "run", "gemini"))
    assert run.manifest["measure"] == "answer" and run.manifest["family"] == "import:velociti-closed"
    assert len(run.pair) == 2 * n and list(run.pair["answer"][:2]) == ["Yes", "No"]
    table = metric_table(load("velociti", s.data_path).items, run.pair, benchmark="velociti", measure="answer")
    strict = table[(table.metric == "StrictVLE") & (table.by == "all")].iloc[0]
    assert strict.value == pytest.approx((n - 1) / n)
    preds.write_text("pos_pred,neg_pred\nYes,No\n")
    with pytest.raises(LoaderError, match=f"1 prediction rows for {n} items"):
        import_run("velociti-closed", [preds], DataSource.of("velociti", s.data_path), tmp_path / "run2", "gemini")


def test_vinoground_responses(sample, tmp_path):
    s = sample["vinoground"]
    text = tmp_path / "textscore-response.jsonl"
    video = tmp_path / "videoscore-response.jsonl"
    text.write_text("".join(json.dumps({"idx": f"{i}_{side}", "response": "A" if side == "pos" else "B"}) + "\n"
                            for i in range(4) for side in ("pos", "neg")))
    video.write_text("".join(json.dumps({"idx": f"{i}_{side}", "response": "A. The first"}) + "\n"
                             for i in range(4) for side in ("pos", "neg")))
    run = read_run(import_run("vinoground", [text, video], DataSource.of("vinoground", s.data_path),
                       tmp_path / "run", "gpt-4o"))
    rows = run.choice.set_index(["item_id", "axis", "query"])
    # the neg clip is asked the same question (A = pos caption) with GT "B"
    assert rows.loc[("0", "text", 1), "choice"] == 1 and rows.loc[("0", "text", 1), "options"] == [0, 1]
    assert rows.loc[("0", "video", 1), "choice"] == 0  # "A" = the first fragment = the pos clip
    table = metric_table(load("vinoground", s.data_path).items, choice=run.choice, benchmark="vinoground")
    overall = table[table.by == "all"].set_index("metric")["value"]
    assert overall["text (A/B)"] == 1.0 and overall["video (A/B)"] == 0.0 and overall["group (A/B)"] == 0.0


def test_vilma_results_json_in_every_mode(sample, tmp_path):
    s = sample["vilma"]
    ann = s.data_path / "relations.json"
    keys = json.loads(ann.read_text())
    results = tmp_path / "results.json"
    results.write_text(json.dumps({k: {"scores": [2.0, 5.0]} for k in keys}))
    sim = read_run(import_run("vilma", [results], DataSource.of("vilma", ann),
                       tmp_path / "sim", "clip", mode="similarity"))
    ppl = read_run(import_run("vilma", [results], DataSource.of("vilma", ann),
                       tmp_path / "ppl", "gpt2", mode="perplexity"))
    assert list(sim.pair["score"][:2]) == [2.0, 5.0] and list(ppl.pair["score"][:2]) == [-2.0, -5.0]
    assert ppl.manifest["measure"] == "neg_perplexity"
    results.write_text(json.dumps({next(iter(keys)): {"scores": [1.0]}}))
    with pytest.raises(LoaderError, match="expected 2 scores"):
        import_run("vilma", [results], DataSource.of("vilma", ann), tmp_path / "bad", "clip")


def test_videocon_score_csv(sample, tmp_path):
    s = sample["videocon"]
    data = s.data_path / "eval_ssv2_temporal.csv"
    with data.open() as fh:
        records = list(csv.DictReader(fh))
    scores = tmp_path / "scores.csv"
    with scores.open("w", newline="") as fh:
        writer = csv.writer(fh)
        for i, r in enumerate(records):
            writer.writerow([r["videopath"], r["caption"], 0.9 if r["match"] == "1" else 0.1 * (i % 3), 0.9, 0.1])
    run = read_run(import_run("videocon", [scores], DataSource.of("videocon", data), tmp_path / "run", "owl-con",
                              video_root=s.video_root))
    assert len(run.pair) == len(records) and run.manifest["measure"] == "p_yes"
    table = metric_table(load("videocon", data, video_root=s.video_root).items, run.pair, benchmark="videocon")
    assert table[(table.metric == "mAP") & (table.by == "all")]["value"].iloc[0] == pytest.approx(1.0)
