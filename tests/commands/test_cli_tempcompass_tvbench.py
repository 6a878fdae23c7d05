"""TempCompass and TVBench through the commands, on the generated world's files in their released layouts with the tiny
models: a study of a Video-LLM's letters and a contrastive model with shortcut controls, metrics, compare, the report
(whose tables must hold the numbers `metrics` computes) and an import in each benchmark's released format."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from fixtures_study import world_benchmarks

from bench.cli import main
from bench.metrics import Settings, run_table
from bench.store import read_run

pytestmark = pytest.mark.slow
BENCHMARKS = ("tempcompass", "tvbench")
N_BOOT = 50


@pytest.fixture(scope="module")
def studied(sample, tiny, tmp_path_factory):
    """A study of both benchmarks: Qwen2-VL's letters (and its reversed-frames control), CLIP's similarities (and its
    blind control); the run folders."""
    root = tmp_path_factory.mktemp("study")
    parts = ['[study]\nruns = "runs"\n']
    parts += world_benchmarks(sample, BENCHMARKS)
    parts.append(f'[[models]]\nname = "qwen"\nmodel = "{tiny("qwen2vl")}"\nfamily = "videollm"\nprotocol = "mc"\n'
                 f'frames = "uniform:k=4"\ncontrols = ["reversed"]\n')
    parts.append(f'[[models]]\nname = "clip"\nmodel = "{tiny("clip")}"\nfamily = "contrastive"\n'
                 f'frames = "uniform:k=4"\ncontrols = ["blind"]\n')
    (root / "study.toml").write_text("\n".join(parts))
    assert main(["study", str(root / "study.toml"), "--no-report", "--quiet"]) == 0
    return root / "runs"


def test_every_run_of_the_study_is_complete_and_asks_only_its_protocols_formats(studied, sample):
    folders = sorted(p.name for p in studied.iterdir() if (p / "manifest.json").is_file())
    assert folders == sorted(f"{b}-{m}" for b in BENCHMARKS for m in ("qwen", "qwen-reversed", "clip", "clip-blind"))
    for folder in folders:
        run = read_run(studied / folder)
        assert run.manifest.status == "complete" and not len(run.failures)
        if folder.startswith("tempcompass"):
            formats = {it.labels["format"] for it in run.items()}
            assert formats == {"multi-choice", "caption_matching"}  # mc and similarity ask these two
    mc = read_run(studied / "tempcompass-qwen")
    asked = mc.choice.groupby("item_id").size()
    assert asked.to_dict() == {it.item_id: len(it.texts) for it in mc.items()}  # every cyclic order


def test_metrics_and_compare_on_both(studied, capsys):
    for name in BENCHMARKS:
        capsys.readouterr()
        assert main(["metrics", str(studied / f"{name}-qwen"), str(studied / f"{name}-qwen-reversed")]) == 0
        out = capsys.readouterr().out
        assert ("all formats" if name == "tempcompass" else "Avg.") in out and "(all orders)" in out
        assert main(["compare", str(studied / f"{name}-qwen"), str(studied / f"{name}-qwen-reversed"), "--by",
                     "foil_type", "--json"]) == 0
        found = json.loads(capsys.readouterr().out)
        run = read_run(studied / f"{name}-qwen")
        assert found["pairs"] and found["pairs"][0]["n"] == len(run.items())
        assert {i["item_id"] for i in found["items"]} <= {it.item_id for it in run.items()}


def test_the_report_shows_both_notebooks_with_the_numbers_metrics_computes(studied, tmp_path):
    runs = [str(p) for p in sorted(studied.iterdir()) if (p / "manifest.json").is_file()]
    out = tmp_path / "report"
    assert main(["report", *runs, "--out", str(out), "--notebooks", ",".join(BENCHMARKS), "--bootstrap",
                 str(N_BOOT), "--jobs", "1", "--quiet"]) == 0
    index = (out / "index.html").read_text()
    assert "id='tempcompass'" in index and "id='tvbench'" in index
    checks = {"tempcompass": ("accuracy.csv", ("multi-choice", "caption matching")),
              "tvbench": ("accuracy.csv", ("accuracy",))}
    for name, (table, metrics) in checks.items():
        shown = pd.read_csv(out / name / table)
        for folder in (f"{name}-qwen", f"{name}-clip"):
            run = read_run(studied / folder)
            expected = run_table(run, Settings(n_boot=N_BOOT))
            for metric in metrics:
                mine = expected[(expected.metric == metric) & (expected.by == "subset")].set_index("subset")["value"]
                theirs = shown[(shown.run == run.label) & (shown.metric == metric) & (shown.by == "subset")]
                assert theirs.set_index("subset")["value"].sort_index().tolist() == \
                    pytest.approx(mine.sort_index().tolist())
        assert (out / name / "leaderboard.csv").is_file()
    assert list((out / "tempcompass").glob("fine_aspects_*.png"))
    assert (out / "tvbench" / "accuracy_by_task.png").is_file()


def test_imports_in_the_released_formats(sample, tmp_path, capsys):
    from bench.importers.tvbench import gt_of
    from bench.loaders import load

    s = sample["tvbench"]
    items = [it for it in load("tvbench", s.data_path) if it.subset in ("Action Count", "Moving Direction")]
    by_task: dict[str, list] = {}
    for it in items:
        by_task.setdefault(it.subset, []).append(it)
    results = {"acc_dict": {task: [sum(1 for it in group if it.truth[0][0] == 0), len(group)]
                            for task, group in by_task.items()},
               "res_list": [{"pred": "(A)", "gt": gt_of(it)} for group in by_task.values() for it in group]}
    path = tmp_path / "test.json"
    path.write_text(json.dumps(results))
    assert main(["import", "tvbench", str(path), "--benchmark", "tvbench", "--data", str(s.data_path),
                 "--model-name", "always A", "--out", str(tmp_path / "tv")]) == 0
    table = run_table(read_run(tmp_path / "tv"), Settings(n_boot=N_BOOT))
    overall = table[(table.metric == "accuracy") & (table.by == "all")].iloc[0]
    assert overall["n"] == len(items) and overall["value"] == pytest.approx(
        sum(it.truth[0][0] == 0 for it in items) / len(items))

    tc = sample["tempcompass"]
    root = Path(tc.data_path)
    predictions = tmp_path / "predictions"
    predictions.mkdir()
    for task in ("multi-choice", "yes_no"):
        questions = json.loads((root / "questions" / f"{task}.json").read_text())
        answered = {v: {a: [{**q, "prediction": q["answer"] if task == "multi-choice" else "No"} for q in qs]
                        for a, qs in aspects.items()} for v, aspects in questions.items()}
        (predictions / f"{task}.json").write_text(json.dumps(answered))
    assert main(["import", "tempcompass", str(predictions / "multi-choice.json"), str(predictions / "yes_no.json"),
                 "--benchmark", "tempcompass", "--data", str(root), "--model-name", "oracle", "--out",
                 str(tmp_path / "tc")]) == 0
    table = run_table(read_run(tmp_path / "tc"), Settings(n_boot=N_BOOT)).set_index(["metric", "by", "subset"])
    assert table.loc[("multi-choice", "all", "all"), "value"] == 1.0
    run = read_run(tmp_path / "tc")
    no = [it for it in run.items() if it.labels["format"] == "yes_no"]
    assert table.loc[("yes/no", "all", "all"), "value"] == pytest.approx(sum(not it.truth[0] for it in no) / len(no))
