"""The command line turns every error into one line (``--debug`` shows the traceback) and ends quietly on a closed
pipe."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def _run(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bench", *args], capture_output=True, text=True, timeout=120,
                          **kwargs)


def test_a_user_mistake_is_one_line_without_traceback(tmp_path):
    done = _run("summary", "vilma", str(tmp_path / "absent"))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("foilbench summary: error: ") and "absent" in lines[0]
    assert "Traceback" not in done.stderr


def test_debug_shows_the_traceback(tmp_path):
    done = _run("--debug", "summary", "vilma", str(tmp_path / "absent"))
    assert done.returncode != 0 and "Traceback" in done.stderr


FLOOD = """
import sys
import bench.cli


def register(subparsers):
    parser = subparsers.add_parser("flood")
    parser.set_defaults(func=lambda args: [print("x" * 99) for _ in range(200_000)] and 0)


bench.cli.SUBCOMMANDS["flood"] = __name__
"""


def test_a_closed_pipe_ends_quietly(tmp_path):
    (tmp_path / "flood.py").write_text(FLOOD)
    code = "import flood, sys, bench.cli; sys.exit(bench.cli.main(['flood']))"
    producer = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, "PYTHONPATH": f"{tmp_path}:{Path.cwd()}"})
    assert producer.stdout.readline().strip() == b"x" * 99
    producer.stdout.close()
    assert producer.wait(timeout=120) == 0
    err = producer.stderr.read().decode()
    assert "Traceback" not in err and "BrokenPipe" not in err


def _one_line(done: subprocess.CompletedProcess, command: str) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert lines[-1].startswith(f"foilbench {command}: error: "), done.stderr
    return lines[-1]


@pytest.mark.slow
def test_model_mistakes_are_one_line_before_anything_loads(sample, tiny, tmp_path):
    s = sample["vitatecs"]
    base = ["score", "vitatecs", str(s.data_path), "--video-root", str(s.video_root), "--out", str(tmp_path / "run")]
    offline = {**os.environ, "HF_HUB_OFFLINE": "1"}
    line = _one_line(_run(*base, "--model", "org/not-a-cached-model", env=offline), "score")
    assert "HF_HUB_OFFLINE is set" in line and "org/not-a-cached-model" in line
    line = _one_line(_run(*base, "--model", str(tmp_path / "typo" / "clip")), "score")
    assert "no model folder at" in line
    line = _one_line(_run(*base, "--model", tiny("gpt2"), "--family", "contrastive"), "score")
    assert "of the textlm family; --family contrastive does not fit it" in line
    line = _one_line(_run(*base, "--model", tiny("clip"), "--protocol", "entail"), "score")
    assert "serves the similarity protocol" in line
    line = _one_line(_run(*base, "--model", tiny("qwen2vl"), "--protocol", "entail", "--prompt", "Is it {colour}?"),
                     "score")
    assert "neither a known name" in line
    assert not (tmp_path / "run").exists()


def test_the_hub_is_not_asked_when_it_cannot_be_reached(monkeypatch):
    from bench.scoring import hub

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hub, "hub_reachable", lambda *a, **k: False)
    monkeypatch.setattr(hub, "cached_snapshot", lambda model: "/cache/snapshot" if model == "org/cached" else None)
    assert hub.locate("org/cached") == "/cache/snapshot"
    try:
        hub.locate("org/elsewhere")
    except ValueError as err:
        assert "cannot reach huggingface.co" in str(err)
    else:
        raise AssertionError("an unreachable, uncached model must be an error")
    monkeypatch.setattr(hub, "hub_reachable", lambda *a, **k: True)
    assert hub.locate("org/elsewhere") == "org/elsewhere"
