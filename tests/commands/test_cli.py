"""The command line: help, the summary command and the main job."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from bench.cli import SUBCOMMANDS, build_parser, main


def test_every_command_has_help_with_an_example(capsys):
    parser = build_parser()
    for name in SUBCOMMANDS:
        with pytest.raises(SystemExit):
            parser.parse_args([name, "--help"])
        assert "example" in capsys.readouterr().out, name


def test_summary_reports_counts_and_missing_videos(tmp_path, capsys):
    data = tmp_path / "Direction.jsonl"
    data.write_text('{"src_dataset": "MSRVTT", "video_name": "video1.mp4", "caption": "a", "counterfactual": "b", '
                    '"aspect": "Direction"}\n'
                    '{"src_dataset": "MSRVTT", "video_name": "video2.mp4", "caption": "c", "counterfactual": "d", '
                    '"aspect": "Direction"}\n')
    (tmp_path / "MSRVTT").mkdir()
    (tmp_path / "MSRVTT" / "video1.mp4").write_bytes(b"")
    assert main(["summary", "vitatecs", str(data), "--video-root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"Direction\s+2\n", out) and re.search(r"total\s+2\n", out)
    assert "2 distinct files, 1 missing on disk (1 items affected, kept and flagged)" in out


def test_summary_bad_input_is_one_clear_line(tmp_path, capsys):
    bad = tmp_path / "Direction.jsonl"
    bad.write_text('{"src_dataset": "MSRVTT"\n')
    assert main(["summary", "vitatecs", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("foilbench summary: error: ") and "Direction.jsonl, line 1: malformed JSON" in err


def test_main_job_on_the_generated_world(trained_world, tmp_path):
    from bench.devkit.demo import DEMO_MODELS, DEMO_RUNS, TABLE_RUNS
    from bench.devkit.train.build import fingerprint, models_home, reference

    home = tmp_path / "home"
    shutil.copytree(trained_world[0] / "models", home / "models")  # trained once per session
    done = subprocess.run([sys.executable, "-m", "bench", "demo", "--home", str(home), "--size", "small", "--quiet"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # quiet: no bars, and the runner's messages are in the log
    for name in ("vilma", "vitatecs", "velociti", "videocon", "vinoground"):
        assert re.search(rf"{name}: \d+ items, \d+ foil types, 0 missing on disk", done.stdout), name
    table = done.stdout[done.stdout.index("Accuracy by foil type"):done.stdout.index("Answer bias")]
    assert all(run in table for run in TABLE_RUNS) and "order" in table and "chance" in table
    runs = sorted(p.parent for p in (home / "runs" / "sample-small").rglob("manifest.json"))
    assert len(runs) == 5 * len(DEMO_RUNS) and (home / "runs" / "sample-small" / "demo.log").stat().st_size > 0
    assert (home / "reports" / "sample-small" / "index.html").is_file()
    done_in = re.search(r"done in \d+ s \(world \d+ s, scoring \d+ s, report [1-9]\d* s(; (\d) of the 5 report "
                        r"notebooks ran beside the scoring)?\)", done.stdout)
    assert done_in, done.stdout
    early = re.search(r"4/4 the report of all five papers \(papermill(; the notebooks of ([a-z, ]+) ran beside the "
                      r"scoring)?\)", done.stdout)
    assert early and len(early[2].split(", ") if early[2] else []) == int(done_in[2] or 0)
    assert "(already built)" in done.stdout and "the models were already built" in done.stdout
    assert "background" not in done.stdout  # nothing to build: no child started
    recorded = reference()
    same = bool(recorded) and all(fingerprint(models_home(home) / n) == recorded.get(n) for n in DEMO_MODELS)
    verdict = ("no fingerprints of build" if not recorded else
               "the same bytes as the models the README's" if same else "not the bytes the README's")
    assert f"\n    {verdict}" in done.stdout  # what the engine finds comparing the files, not what the demo assumes
    # ties are not knowing: the blind runs' all-tied numbers are never starred, never better than with the video,
    # and the blind A/B run, whose letters all tie, is not said to choose "A"
    reports = home / "reports" / "sample-small"
    headline = pd.read_csv(reports / "headline.csv")
    all_tied = headline[(headline["n_tie"] == headline["n"]) & (headline["n"] > 0)]
    assert len(all_tied) and not (all_tied["significant"] | all_tied["significant_holm"]).any()
    for found in (reports / "compared").glob("*-controls.csv"):
        controls = pd.read_csv(found)
        tied = controls[controls["tied control"] == controls["n"]]
        assert (tied["with control"] <= tied["full"]).all(), found.name
    assert "Qwen2-VL blind on vilma: every item" in done.stdout
    blind_ab = next(line for line in done.stdout[done.stdout.index("Answer bias"):].splitlines()
                    if line.strip().startswith("Qwen2-VL blind A/B"))
    assert "tied" in blind_ab and "not a bias" in blind_ab, blind_ab


