"""``foilbench perf build``: a world model built on an idle machine and again beside a busy torch job, both times,
their ratio and whether the two builds wrote the same weights.

The busy job is what a user's other work looks like: a child process multiplying matrices on ``threads`` torch threads
with OpenMP's default wait policy, until the second build ends. Each build starts from a fresh data home whose training
split is generated before the clock starts, so both times are the build's (the child's start, decoding, training).
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 2.2  # the busy build may take at most this multiple of the idle one
BUSY = ("import torch\ntorch.set_num_threads({threads})\na = torch.randn(512, 512)\nwhile True:\n    a = (a @ a)"
        ".clamp(-1, 1)\n")


def timed_build(model: str, home: Path, scale) -> tuple[float, str]:
    """Seconds to build ``model`` into ``home`` (its training split made first, untimed) and its weights' digest."""
    from bench.devkit.train.build import models_home, trained_model
    from bench.devkit.world.split import training_split

    training_split(models_home(home) / ".split", scale.videos_per_kind, scale.pairs, 0)
    start = time.perf_counter()
    folder = trained_model(model, home, scale=scale, progress=False)
    seconds = time.perf_counter() - start
    return seconds, hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()


def measure(model: str = "clip-world", scale=None, threads: int = 2) -> dict:
    """Build ``model`` idle, then beside a busy ``threads``-thread torch job; print and return both times, the ratio
    and whether the weights are identical."""
    from bench.devkit.train.build import FULL

    scale = scale or FULL
    with tempfile.TemporaryDirectory(prefix="foilbench-perf-build-") as tmp:
        print(f"building {model} on an idle machine ...", flush=True)
        idle, first = timed_build(model, Path(tmp) / "idle", scale)
        print(f"building {model} beside a {threads}-thread torch job ...", flush=True)
        busy_job = subprocess.Popen([sys.executable, "-c", BUSY.format(threads=threads)])
        try:
            time.sleep(2)  # the job's threads running before the build starts
            busy, second = timed_build(model, Path(tmp) / "busy", scale)
        finally:
            busy_job.kill()
            busy_job.wait()
    found = {"idle_s": idle, "busy_s": busy, "ratio": busy / idle, "identical": first == second}
    print(f"{model}: idle {idle:.1f} s, beside a {threads}-thread torch job {busy:.1f} s, ratio {found['ratio']:.2f}x "
          f"(target <= {TARGET}x: {'met' if found['ratio'] <= TARGET else 'missed'}); weights identical: "
          f"{'yes' if found['identical'] else 'NO'}")
    return found
