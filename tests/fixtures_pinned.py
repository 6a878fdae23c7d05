"""What MKL runs in a pinned build child on this CPU."""

from pathlib import Path

from bench.devkit.train import pinned


def pinned_mkl_branch() -> str:
    """:data:`~bench.devkit.train.pinned.MKL_BRANCH` on an Intel CPU; MKL's own ``AUTO`` elsewhere (MKL: "settings
    other than AUTO or COMPATIBLE are available only for Intel processors")."""
    info = Path("/proc/cpuinfo")
    intel = info.exists() and "GenuineIntel" in info.read_text()
    return pinned.MKL_BRANCH if intel else "AUTO"
