"""The world's models are built in a child process whose CPU kernels are pinned, so that a seed gives the same
weights bit for bit whatever else runs on the machine. Another kind of CPU can still draw other weights, like another
seed: :mod:`bench.devkit.train.crosscheck` tells at which stage two machines part.

The instruction set a CPU offers selects torch's vectorised kernels (ATen), MKL's matrix products and oneDNN's
convolutions, and each sums floats in its own order: left alone, an AVX-512 CPU draws other weights than an AVX2 one.
ATen is pinned to its AVX2 kernels. MKL is asked for its ``AVX2`` branch in its reproducible (CNR) mode: MKL honours a
named branch on Intel CPUs only, so every Intel CPU with AVX2 (with or without AVX-512) runs the same code, and other
CPUs (AMD) run MKL's ``AUTO`` branch, the code MKL picks for that CPU, still summed in a fixed order. Builds 16-19 ran
MKL's ``COMPATIBLE`` branch (SSE2), the one branch MKL runs on Intel and AMD alike; it did not give an AMD EPYC the
Intel Xeon's weights (something else differs) and made the builds about 1.7x slower, so build 20 gave it up.
oneDNN is switched off in the child (:func:`no_onednn`): its convolutions choose their kernels and blocking
by the CPU, and without it torch computes them with its own code (the models' only convolutions, their patch
embeddings, are computed while training as MKL's products: :mod:`bench.devkit.train.patches`). Those libraries read
their settings once, when they load, so the build runs in a child process started with :data:`PINNED` in its
environment; the parent (a notebook, the demo, a test) keeps its own settings. The child's OpenMP threads also wait
passively (they sleep instead of spinning between parallel regions), so that a build beside other jobs does not fight
them for the cores; that changes when threads run, never what they sum.

The child runs :mod:`bench.devkit.train.child`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

THREADS = 1  # torch's intra-op threads while building: how sums are split, so the weights, depend on it
CAPABILITY = "AVX2"  # the instruction set ATen's kernels use in every build, as torch.backends.cpu names it
MKL_BRANCH = "AVX2"  # MKL's branch in every build: run on Intel CPUs; MKL runs its AUTO branch on others
MKL_BRANCHES = {1: "OFF", 2: "AUTO", 3: "COMPATIBLE", 4: "SSE2", 8: "SSE4_2", 9: "AVX", 10: "AVX2", 12: "AVX512",
                14: "AVX512_E1"}  # MKL's named constants for its CNR branches (mkl_cbwr_get)
PINNED = {
    "ATEN_CPU_CAPABILITY": CAPABILITY.lower(),  # ATen's vectorised kernels (read when torch starts its dispatch)
    "MKL_CBWR": MKL_BRANCH,  # MKL's conditional numerical reproducibility, read when MKL loads
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


def no_onednn() -> None:
    """Switch torch's use of oneDNN off in this process (the build child): convolutions then run torch's own code."""
    import torch

    torch.backends.mkldnn.enabled = False


def release_memory() -> None:
    """Collect Python's garbage and hand the C heap's free pages back to the system (glibc's ``malloc_trim``; nothing
    elsewhere), between a build's stages: the child's resident memory is then what it holds, not what it held. Nothing
    computed changes."""
    import ctypes
    import gc

    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def mkl_branch() -> str | None:
    """The code branch MKL runs in this process (``COMPATIBLE``, ``AVX2``, ``AUTO``...; None where torch carries no MKL,
    as on ARM or with OpenBLAS): what MKL itself reports, not what the environment asked for."""
    import ctypes

    import torch

    try:
        get = ctypes.CDLL(str(Path(torch.__file__).parent / "lib" / "libtorch_cpu.so")).mkl_serv_cbwr_get
    except (OSError, AttributeError):
        return None
    get.argtypes, get.restype = [ctypes.c_int], ctypes.c_int
    code = get(1)  # MKL_CBWR_BRANCH: which branch
    return MKL_BRANCHES.get(code, str(code))


def built_with() -> dict:
    """What this process's kernels are: the instruction set torch dispatches to, the branch MKL runs, whether oneDNN
    is on, torch's version and threads, and the pinned settings as the environment holds them (recorded in each
    model's build stamp)."""
    import torch

    return {"cpu_capability": torch.backends.cpu.get_cpu_capability(), "mkl_branch": mkl_branch(),
            "onednn": torch.backends.mkldnn.enabled, "torch": torch.__version__, "threads": torch.get_num_threads(),
            "env": {k: os.environ.get(k) for k in sorted(PINNED)}}


def this_checkout() -> dict[str, str]:
    """This process's environment with this checkout's ``bench`` first on the path (however this process found it):
    what a child process of the demo starts with."""
    import bench

    root = str(Path(bench.__file__).resolve().parent.parent)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])}


def environment() -> dict[str, str]:
    """The environment of a pinned child: :func:`this_checkout`'s, with :data:`PINNED` and :data:`INSIDE`."""
    return {**this_checkout(), **PINNED, INSIDE: "1"}


def start(names: list[str], home: Path, seed: int, scale: dict, progress: bool,
          log: Path | None = None) -> subprocess.Popen:
    """Start building ``names`` (and the models they continue from or learn from) into ``home`` in a pinned child
    process, without waiting for it; its output goes to ``log`` when given (appended), else to this process's."""
    request = {"names": names, "home": str(home), "seed": seed, "scale": scale, "progress": progress}
    command = [sys.executable, "-m", "bench.devkit.train.child", json.dumps(request)]
    if log is None:
        return subprocess.Popen(command, env=environment())
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a") as out:
        return subprocess.Popen(command, env=environment(), stdout=out, stderr=subprocess.STDOUT)
