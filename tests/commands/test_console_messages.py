"""What ``foilbench score`` and ``demo`` say as a new user meets them: missing videos named before the model loads,
resuming and interrupted runs, a finished run not scored (nor its model loaded) again, progress in a log as a few
lines, no library bars, and one-line errors for an unknown option and a folder of models."""

from __future__ import annotations

import io
import re

import pytest

from bench.cli import main
from bench.scoring import families, runner
from bench.scoring.console import LINE_EVERY_SHARE, LineProgress, progress_bar, quiet_library_bars
from bench.store import read_run


def _score(capsys, *args: str) -> tuple[int, str]:
    code = main(["score", *args])
    return code, capsys.readouterr().err


def test_missing_videos_are_named_before_the_model_loads(sample, tiny, tmp_path, capsys, monkeypatch):
    s = sample["velociti"]
    monkeypatch.chdir(tmp_path)
    code, err = _score(capsys, "velociti", str(s.data_path), "--model", tiny("clip"), "--limit", "3",
                       "--out", str(tmp_path / "run"), "--quiet")
    assert code == 1
    found = re.search(r"(\d+) of (\d+) videos not found \(first tried: (\S+);", err)
    assert found and found[1] == found[2] and found[3].startswith(str(tmp_path))
    assert "no --video-root was given" in err
    assert err.index("videos not found") < err.index("scoring 3 items")  # said before the model loads


def test_interrupted_resumed_and_finished_runs_say_so(sample, tiny, tmp_path, capsys, monkeypatch):
    s = sample["velociti"]
    out = tmp_path / "run"
    args = ["velociti", str(s.data_path), "--video-root", str(s.video_root), "--model", tiny("clip"), "--limit", "6",
            "--chunk-size", "1", "--out", str(out)]
    scored = runner.score_items
    calls = []

    def interrupted(*a, **k):
        calls.append(1)
        if len(calls) > 2:
            raise KeyboardInterrupt
        return scored(*a, **k)

    monkeypatch.setattr(runner, "score_items", interrupted)
    code, err = _score(capsys, *args)
    assert code == 130 and "run the same command again to resume" in err
    monkeypatch.setattr(runner, "score_items", scored)
    total = len(read_run(out).items())
    code, err = _score(capsys, *args)
    assert code == 0 and f"resuming: 2 of {total} items already scored" in err
    progress = [line for line in err.splitlines() if "items (" in line]  # a log: a few lines, no redraws
    assert "\r" not in err and 1 <= len(progress) <= 1 / LINE_EVERY_SHARE + 2 and f"{total}/{total}" in progress[-1]

    def no_model(*a, **k):
        raise AssertionError("the model was loaded for a complete run")

    monkeypatch.setattr(families, "load_backend", no_model)
    code, err = _score(capsys, *args)
    assert code == 0 and f"{out}: already complete ({total} items); nothing to score" in err


def test_a_log_gets_a_few_progress_lines():
    log = io.StringIO()
    bar = LineProgress(total=1000, unit="item", desc="velociti similarity clip", file=log, mininterval=0)
    for _ in range(1000):
        bar.update(1)
    bar.close()
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue() and len(lines) <= 1 / LINE_EVERY_SHARE + 2
    assert lines[-1].startswith("velociti similarity clip: 1000/1000 items (100 %)")
    assert isinstance(progress_bar(total=3), LineProgress)  # pytest's stderr is no terminal


def test_library_bars_are_quiet(capsys):
    from transformers.utils import logging

    try:
        quiet_library_bars()
        for _ in logging.tqdm(range(3), desc="Loading weights"):
            pass
        assert "Loading weights" not in capsys.readouterr().err
    finally:
        logging.set_tqdm_hook(None)


def test_an_unknown_option_is_one_line_naming_the_command(capsys):
    assert main(["demo", "--limit", "5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["foilbench demo: error: unrecognized arguments: --limit 5 (see foilbench demo --help)"]


def test_a_folder_of_models_names_them(sample, tiny, tmp_path, capsys):
    import shutil

    models = tmp_path / "models"
    for name in ("clip-world", "xclip-world"):
        shutil.copytree(tiny("clip"), models / name)
    s = sample["velociti"]
    code, err = _score(capsys, "velociti", str(s.data_path), "--model", str(models))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"{models} is a folder of models (clip-world, xclip-world), not a model" in err
    assert f"--model {models / 'clip-world'}" in err and "--family" not in err
    code, err = _score(capsys, "velociti", str(s.data_path), "--model", str(tmp_path))
    assert code == 2 and "has no config.json: it is not a model folder" in err


@pytest.fixture(autouse=True)
def _no_hook_left():
    yield
    from transformers.utils import logging

    logging.set_tqdm_hook(None)
