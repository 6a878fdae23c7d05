"""``foilbench metrics``: help text, table formatting, and the command on a run folder in the run-store layout."""

from __future__ import annotations

import argparse
import json
import re

import pytest

from bench.items import Clip, Item
from bench.commands import metrics as cli
from bench.metrics import Settings, metric_table
from bench.metrics.ties import DEFAULT_TIES
from bench.store.schema import choice_frame, failure_frame, pair_frame


def _parser():
    parser = argparse.ArgumentParser(prog="foilbench")
    cli.register(parser.add_subparsers(dest="command"))
    return parser


def test_help_shows_examples(capsys):
    with pytest.raises(SystemExit):
        _parser().parse_args(["metrics", "--help"])
    text = capsys.readouterr().out
    assert "foilbench metrics runs/vilma-clip" in text and "--bootstrap" in text and "--json" in text


def test_format_table_marks_significance_and_percentages():
    items = [Item("vitatecs", f"Type/{i}", "Type", (Clip("v.mp4"),), ("a dog runs", "a dog walks"), ((0,),))
             for i in range(20)]
    pair = pair_frame([{"item_id": it.item_id, "clip": 0, "text": t, "score": 1.0 - t} for it in items for t in (0, 1)])
    table = metric_table(items, pair, settings=Settings(n_boot=100))
    table.insert(0, "run", "toy")
    text = cli.format_table(table)
    lines = text.splitlines()
    assert "run" not in lines[0]  # one run: no run column
    assert "100.0*" in text and "[83.2, 100.0]" in text and "50.0" in text  # 20 of 20: Clopper-Pearson


VITATECS_LINES = [
    {"src_dataset": "MSRVTT", "video_name": "video8836.mp4", "caption": "a woman is cooking food",
     "counterfactual": "a woman is eating food", "aspect": "Direction"},
    {"src_dataset": "MSRVTT", "video_name": "video9770.mp4", "caption": "a person is connecting a cable",
     "counterfactual": "a person is disconnecting a cable", "aspect": "Direction"},
    {"src_dataset": "VATEX", "video_name": "i0ccSYMl0vo_000027_000037.mp4", "caption": "a man runs fast",
     "counterfactual": "a man runs slowly", "aspect": "Direction"},
]


def _write_run(folder, data_path, items, rows):
    (folder / "pair").mkdir(parents=True)
    (folder / "choice").mkdir()
    (folder / "failures").mkdir()
    manifest = {"benchmark": "vitatecs", "data_path": str(data_path), "video_root": None, "loader_options": {},
                "adapter": "toy", "model": "toy", "revision": None, "measure": "similarity", "dtype": "float32",
                "device": "cpu", "batch_size": 1, "frame_policy": {"name": "uniform", "k": 8},
                "prompt": {"name": None, "template": None}, "seed": 0, "versions": {}, "status": "complete",
                "name": "toy-run"}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    pair_frame(rows).to_parquet(folder / "pair" / "part-00000.parquet")
    choice_frame([]).to_parquet(folder / "choice" / "part-00000.parquet")
    failure_frame([{"item_id": items[2].item_id, "stage": "frames", "reason": "unreadable video"}]).to_parquet(
        folder / "failures" / "part-00000.parquet")


def test_metrics_command_on_a_stored_run(tmp_path, capsys):
    from bench import loaders

    data = tmp_path / "Direction.jsonl"
    data.write_text("".join(json.dumps(line) + "\n" for line in VITATECS_LINES))
    items = list(loaders.load("vitatecs", data))
    rows = []
    for it, right in zip(items[:2], (True, False)):
        cap = it.truth[0][0]
        rows += [{"item_id": it.item_id, "clip": 0, "text": cap, "score": 0.9 if right else 0.1},
                 {"item_id": it.item_id, "clip": 0, "text": 1 - cap, "score": 0.5}]
    _write_run(tmp_path / "run", data, items, rows)

    defaults = _parser().parse_args(["metrics", str(tmp_path / "run")])
    assert defaults.bootstrap == Settings().n_boot and defaults.level == Settings().level
    args = _parser().parse_args(["metrics", str(tmp_path / "run"), "--bootstrap", "100"])
    assert args.func(args) == 0
    assert args.ties == DEFAULT_TIES  # no --ties: the engine's default policy
    out = capsys.readouterr().out
    assert "== vitatecs: toy-run" in out
    assert "no score at all" in out and "scoring failure" in out
    assert "run [toy-run]: 3 items: 2 scored, 1 failed (1 x unreadable video)" in out
    assert "33.3" in out  # 1 of 3 items right; the unscored item counts as a failure

    args = _parser().parse_args(["metrics", str(tmp_path / "run"), "--json", "--bootstrap", "100"])
    assert args.func(args) == 0
    payload = json.loads(capsys.readouterr().out)
    overall = [r for r in payload["rows"] if r["metric"] == "accuracy" and r["by"] == "all"][0]
    assert overall["value"] == pytest.approx(1 / 3) and overall["n_missing"] == 1 and overall["run"] == "toy-run"
    assert payload["runs"][0]["benchmark"] == "vitatecs"
    assert (payload["runs"][0]["failed"], payload["runs"][0]["failure_reasons"]) == (1, {"unreadable video": 1})


@pytest.mark.parametrize("reader, copies, extra", [("head -n 1", 16, ["--json"]), ("head -n 2", 16, []),
                                                   ("true", 1, [])])
def test_metrics_into_a_closed_pipe_exits_quietly(tmp_path, reader, copies, extra):
    """``foilbench metrics RUN | head``: a real pipe, closed before (``true``) or while (``head``, output larger than
    the pipe's buffer) the command writes."""
    import subprocess
    import sys

    from bench.config import DataSource
    from bench.importers.common import import_run
    from bench import loaders

    data = tmp_path / "Direction.jsonl"
    data.write_text("".join(json.dumps(line) + "\n" for line in VITATECS_LINES))
    answers = tmp_path / "answers.csv"
    answers.write_text("item_id,text,answer\n" + "".join(f"{it.item_id},{t},Yes\n"
                                                        for it in loaders.load("vitatecs", data) for t in (0, 1)))
    run = import_run("answers", [answers], DataSource.of("vitatecs", data), tmp_path / "run", "toy")
    runs = " ".join([str(run)] * copies)
    command = f"{sys.executable} -m bench metrics {runs} {' '.join(extra)} 2>{tmp_path / 'err'}"
    done = subprocess.run(["bash", "-c", f"{command} | {reader}; exit ${{PIPESTATUS[0]}}"], capture_output=True,
                          text=True)
    errors = (tmp_path / "err").read_text()
    assert done.returncode == 0 and "Traceback" not in errors and "BrokenPipe" not in errors, errors


def test_a_run_with_no_scored_item_says_so_and_shows_no_value(tmp_path, capsys):
    from bench import loaders
    from bench.metrics import run_table
    from bench.store import read_run
    from bench.store.schema import failure_frame

    data = tmp_path / "Direction.jsonl"
    data.write_text("".join(json.dumps(line) + "\n" for line in VITATECS_LINES))
    items = list(loaders.load("vitatecs", data))
    _write_run(tmp_path / "run", data, items, [])
    failure_frame([{"item_id": it.item_id, "stage": "frames", "reason": "no such file"} for it in items]).to_parquet(
        tmp_path / "run" / "failures" / "part-00000.parquet")
    assert run_table(read_run(tmp_path / "run")).empty
    args = _parser().parse_args(["metrics", str(tmp_path / "run"), "--bootstrap", "10"])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert f"{len(items)} items: 0 scored, {len(items)} failed" in out
    assert f"no item of this run was scored (0 of {len(items)}): no value to show" in out
    assert "accuracy" not in out and "0.0 [" not in out and "(no rows)" in out
    args = _parser().parse_args(["metrics", str(tmp_path / "run"), "--json"])
    assert args.func(args) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["rows"] == [] and "no item of this run was scored" in payload["runs"][0]["notes"][0]


def test_an_unknown_tie_policy_is_one_line_naming_every_policy(tmp_path, capsys):
    from bench.cli import main
    from bench.metrics.ties import TIES

    assert main(["metrics", str(tmp_path), "--ties", "lenient"]) == 2
    err = capsys.readouterr().err
    assert "'lenient'" in err and all(p in err for p in TIES) and err.count("\n") == 1


def test_the_ties_help_names_every_tie_policy_and_the_default():
    """The help spells the policies (importing the metrics for ``--help`` would cost seconds): it must name each of
    :data:`~bench.metrics.ties.TIES`, and the default, and no other."""
    from bench.metrics.ties import TIES

    subparsers = argparse.ArgumentParser().add_subparsers()
    cli.register(subparsers)
    ties = next(a for a in subparsers.choices["metrics"]._actions if "--ties" in a.option_strings)
    named = re.findall(r"(\w+) \(", ties.help.split(":", 1)[1])
    assert sorted(named) == sorted(TIES) and f"{DEFAULT_TIES} (each benchmark's released code, default)" in ties.help
