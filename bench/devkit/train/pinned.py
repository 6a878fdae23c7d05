"""The world's models are built in a child process whose CPU kernels are pinned, so that a seed gives the same
weights bit for bit whatever else runs on the machine and on any x86-64 CPU with AVX2.

The instruction set a CPU offers selects torch's vectorised kernels (ATen), MKL's matrix products and oneDNN's
convolutions, and each sums floats in its own order: left alone, an AVX-512 CPU draws other weights than an AVX2 one,
like another seed. Those libraries read their settings once, when they load, so the build runs in a child process
started with :data:`PINNED` in its environment; the parent (a notebook, the demo, a test) keeps its own settings. The
child's OpenMP threads also wait passively (they sleep instead of spinning between parallel regions), so that a build
beside other jobs does not fight them for the cores; that changes when threads run, never what they sum.

The child runs :mod:`bench.devkit.train.child`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

THREADS = 2  # torch's intra-op threads while building: how sums are split, so the weights, depend on it
CAPABILITY = "AVX2"  # the instruction set every build's kernels use, as torch.backends.cpu names it
PINNED = {
    "ATEN_CPU_CAPABILITY": CAPABILITY.lower(),  # ATen's vectorised kernels (read when torch starts its dispatch)
    "MKL_CBWR": CAPABILITY,  # MKL's conditional numerical reproducibility: its AVX2 code path on Intel and AMD alike
    "DNNL_MAX_CPU_ISA": CAPABILITY,  # oneDNN (convolutions): no AVX-512 or AMX kernels
    "ONEDNN_MAX_CPU_ISA": CAPABILITY,
    "OMP_NUM_THREADS": str(THREADS),
    "MKL_NUM_THREADS": str(THREADS),
    "OMP_WAIT_POLICY": "PASSIVE",  # idle threads sleep: no spinning against other processes
    "KMP_BLOCKTIME": "0",  # the same for Intel's OpenMP runtime, where a torch build links it
}
INSIDE = "FOILBENCH_PINNED_BUILD"  # set in the child: build here, do not start another child


def inside() -> bool:
    """Whether this process is a pinned build child."""
    return os.environ.get(INSIDE) == "1"


def passive_waits() -> None:
    """Let OpenMP's idle threads sleep rather than spin (unless the user chose otherwise); effective only before torch
    is imported, when its OpenMP runtime reads the setting."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("KMP_BLOCKTIME", "0")


def built_with() -> dict:
    """What this process's kernels are: the instruction set torch dispatches to, torch's version and threads, and the
    pinned settings as the environment holds them (recorded in each model's build stamp)."""
    import torch

    return {"cpu_capability": torch.backends.cpu.get_cpu_capability(), "torch": torch.__version__,
            "threads": torch.get_num_threads(), "env": {k: os.environ.get(k) for k in sorted(PINNED)}}


def build(names: list[str], home: Path, seed: int, scale: dict, progress: bool) -> None:
    """Build ``names`` (and the models they continue from or learn from) into ``home`` in a pinned child process."""
    import bench

    root = str(Path(bench.__file__).resolve().parent.parent)  # this checkout's bench, however the parent found it
    env = {**os.environ, **PINNED, INSIDE: "1",
           "PYTHONPATH": os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])}
    request = {"names": names, "home": str(home), "seed": seed, "scale": scale, "progress": progress}
    done = subprocess.run([sys.executable, "-m", "bench.devkit.train.child", json.dumps(request)], env=env)
    if done.returncode != 0:
        raise RuntimeError(f"building {', '.join(names)} failed (exit {done.returncode}; its error is printed above)")
