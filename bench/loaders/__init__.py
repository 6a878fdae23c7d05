"""Loaders for the five benchmarks' released files.

Each loader is ``load(path, video_root=None, **options) -> ItemSet``; :data:`LOADERS` maps benchmark names to them.
"""

from __future__ import annotations

from typing import Callable

from bench.items import ItemSet
from bench.loaders import videocon, velociti, vilma, vinoground, vitatecs
from bench.loaders.common import LoaderError

LOADERS: dict[str, Callable[..., ItemSet]] = {
    "vilma": vilma.load,
    "vitatecs": vitatecs.load,
    "velociti": velociti.load,
    "videocon": videocon.load,
    "vinoground": vinoground.load,
}


def load(benchmark: str, path, video_root=None, **options) -> ItemSet:
    """Load ``benchmark`` from ``path`` (a file or folder as released)."""
    try:
        loader = LOADERS[benchmark]
    except KeyError:
        raise ValueError(f"unknown benchmark {benchmark!r}; choose one of {sorted(LOADERS)}") from None
    return loader(path, video_root=video_root, **options)


__all__ = ["LOADERS", "LoaderError", "load"]
