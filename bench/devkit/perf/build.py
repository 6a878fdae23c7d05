"""``foilbench perf build``: a world model (with the models it needs) built on an idle machine and again beside a busy
torch job, both times, their ratio and whether the two builds wrote the same weights, for it and for each model it
needed (each from its stamp's measured seconds).

The busy job is what a user's other work looks like: a child process multiplying matrices on ``threads`` torch threads
with OpenMP's default wait policy, until the second build ends. Each build starts from a fresh data home whose training
split is generated before the clock starts, so both times are the build's (the child's start, decoding, training).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 2.2  # the busy build may take at most this multiple of the idle one
JUDGED = 1.0  # seconds: a build shorter than this idle (the biased copy: a copy of files) is not judged by its ratio
BUSY = ("import torch\ntorch.set_num_threads({threads})\na = torch.randn(512, 512)\nwhile True:\n    a = (a @ a)"
        ".clamp(-1, 1)\n")


def timed_build(model: str, home: Path, scale) -> tuple[float, dict[str, tuple[float, str]]]:
    """Seconds to build ``model`` into ``home`` (its training split made first, untimed), and for it and each model
    it needs, in build order, the seconds its stamp measured and its weights' digest."""
    from bench.devkit.train.build import (DEFAULT_SEED, build_seconds, fingerprint, models_home, needed,
                                          trained_model)
    from bench.devkit.world.split import training_split

    training_split(models_home(home) / ".split", scale.videos_per_kind, scale.pairs, DEFAULT_SEED)
    start = time.perf_counter()
    folder = trained_model(model, home, scale=scale, progress=False)
    seconds = time.perf_counter() - start
    each = {name: (build_seconds(name, home), fingerprint(folder.parent / name)) for name in needed([model])}
    return seconds, each


def measure(model: str = "clip-world", scale=None, threads: int = 2) -> dict:
    """Build ``model`` idle, then beside a busy ``threads``-thread torch job; print and return both times, the ratio
    and whether the weights are identical, for the whole build and for each model in it."""
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
    found = {"idle_s": idle, "busy_s": busy, "ratio": busy / idle,
             "identical": all(first[name][1] == second[name][1] for name in first),
             "models": {name: {"idle_s": first[name][0], "busy_s": second[name][0],
                               "ratio": second[name][0] / first[name][0], "identical": first[name][1] == second[name][1]}
                        for name in first}}
    if len(first) > 1:
        for name, each in found["models"].items():
            print(f"  {_line(name, each, threads)}")
    print(_line(model if len(first) == 1 else f"{model} with the models it needs", found, threads))
    return found


def verdict(idle: float, ratio: float) -> str:
    """Whether a build's ratio meets :data:`TARGET`; not judged under :data:`JUDGED` seconds idle, where the stamps'
    tenths of a second make the ratio noise."""
    if idle < JUDGED:
        return f"not judged, under {JUDGED:.0f} s idle"
    return "met" if ratio <= TARGET else "missed"


def _line(name: str, found: dict, threads: int) -> str:
    return (f"{name}: idle {found['idle_s']:.1f} s, beside a {threads}-thread torch job {found['busy_s']:.1f} s, "
            f"ratio {found['ratio']:.2f}x (target <= {TARGET}x: {verdict(found['idle_s'], found['ratio'])}); "
            f"weights identical: {'yes' if found['identical'] else 'NO'}")
