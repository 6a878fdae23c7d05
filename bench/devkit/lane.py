"""A second scoring process for the demo: once the build ends, its core is free, and the demo's own process scores one
set-up at a time on one core (the world's models are too small for a second torch thread to help, and Python runs one
thread at a time). The demo hands this process whole benchmarks of its last models' set-ups, one at a time, as it
asks for them; it scores each on one torch thread, as the demo scores beside a build, so every run stores the scores
the demo's own process would have stored.

    python -m bench.devkit.lane '{"out": RUNS, "home": HOME, "world": WORLD, "size": "full",
                                  "models": {RUN: {"path": ..., "family": ..., ...}, ...}}'

``models``: each set-up it may be handed, as :class:`bench.devkit.train.evaluate.Model` fields. It talks on its
standard streams, one line each: it says ``ready``, is sent a benchmark (an empty line: nothing is left, it ends),
waits for the models that benchmark's set-ups need, and says ``stored RUN`` for each run folder it stored, then
``ready`` again. The runner's messages are appended to ``RUNS/demo.log``, its own errors too.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable


class Lane:
    """The parent's end: start the process, answer its ``ready`` with ``take()`` (the next benchmark, or None) and
    call ``stored(path)`` for every run it stores, on a thread of its own."""

    def __init__(self, request: dict, take: Callable[[], str | None], stored: Callable[[Path], object],
                 log: Path):
        from bench.devkit.train.pinned import this_checkout

        self.log, self.take, self.stored = log, take, stored
        self.taken: list[str] = []  # the benchmarks handed to it, in order
        with open(log, "a") as errors:
            self.process = subprocess.Popen([sys.executable, "-m", "bench.devkit.lane", json.dumps(request)],
                                            env=this_checkout(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=errors, text=True, bufsize=1)
        self._talk = threading.Thread(target=self._answer, daemon=True)
        self._talk.start()

    def _answer(self) -> None:
        for line in self.process.stdout:
            said, _, rest = line.rstrip("\n").partition(" ")
            if said == "stored":
                self.stored(Path(rest))
            elif said == "ready":
                benchmark = self.take()
                if benchmark is not None:
                    self.taken.append(benchmark)
                try:
                    self.process.stdin.write(f"{benchmark or ''}\n")
                    self.process.stdin.flush()
                except BrokenPipeError:
                    return

    def wait(self) -> str | None:
        """Wait for the process to end (every run it stored reported); None when it ended well, else one line saying
        how it failed and where its messages are."""
        self._talk.join()
        code = self.process.wait()
        if code == 0:
            return None
        scoring = f"while scoring {self.taken[-1]}" if self.taken else "before scoring"
        return f"the second scoring process failed (exit {code}, {scoring}; its messages are in {self.log})"

    def close(self) -> None:
        """Stop the process if it still runs (what it stored is kept; a run cut short resumes next time)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def main(argv: list[str] | None = None) -> None:
    """The process's end (the module docstring)."""
    from bench.devkit.train.pinned import passive_waits

    passive_waits()  # before torch loads, as the demo
    from bench.devkit.threads import torch_threads
    from bench.devkit.train.build import is_current
    from bench.devkit.train.evaluate import Model, score_configs, world_configs
    from bench.devkit.train.models import quiet_window_warning
    from bench.devkit.world import ensure_sample
    from bench.scoring.console import quiet_library_bars

    request = json.loads((argv if argv is not None else sys.argv[1:])[0])
    quiet_library_bars()
    quiet_window_warning()
    home, out = Path(request["home"]), Path(request["out"])
    models = {run: Model(**fields) for run, fields in request["models"].items()}
    samples = ensure_sample(request["world"], size=request["size"])

    def built(folder: str) -> None:  # a model folder is named after its model
        while not is_current(Path(folder).name, home):
            time.sleep(0.25)

    def say(line: str) -> None:
        print(line, flush=True)

    with torch_threads(1):
        while True:
            say("ready")
            benchmark = sys.stdin.readline().strip()
            if not benchmark:
                return
            score_configs(world_configs(models, samples, out, benchmarks=[benchmark]), log=out / "demo.log",
                          before=built, after=lambda config, path: say(f"stored {path}"))


if __name__ == "__main__":
    main()
