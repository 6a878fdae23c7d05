"""The command line turns every error into one line (``--debug`` shows the traceback) and ends quietly on a closed
pipe."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


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
