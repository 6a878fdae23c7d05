"""The command line: help, the summary command and the main job."""

from __future__ import annotations

import re
import subprocess
import sys

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


def test_main_job_on_the_sample_suite(tmp_path):
    done = subprocess.run([sys.executable, "-m", "bench", "demo", "--home", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for name in ("vilma", "vitatecs", "velociti", "videocon", "vinoground"):
        assert f"{name}: " in done.stdout
    assert done.stdout.count(", 0 missing on disk") == 5
    assert (tmp_path / "sample" / "SAMPLE_VERSION").is_file()
