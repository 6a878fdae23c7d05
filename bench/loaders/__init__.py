"""Loaders for the five benchmarks' released files.

Each loader is ``load(path, video_root=None, **options) -> ItemSet``; :data:`LOADERS` maps benchmark names to them.
:func:`load` adds one option every benchmark takes: ``labels=PATH`` joins extra item labels from a CSV
(:mod:`bench.loaders.labels`).
"""

from __future__ import annotations

from typing import Callable

from bench.items import ItemSet
from bench.loaders import videocon, velociti, vilma, vinoground, vitatecs
from bench.loaders.common import LoaderError
from bench.loaders.labels import join_labels

LOADERS: dict[str, Callable[..., ItemSet]] = {
    "vilma": vilma.load,
    "vitatecs": vitatecs.load,
    "velociti": velociti.load,
    "videocon": videocon.load,
    "vinoground": vinoground.load,
}


def load(benchmark: str, path, video_root=None, *, labels=None, **options) -> ItemSet:
    """Load ``benchmark`` from ``path`` (a file or folder as released); ``labels``: a CSV of extra item labels."""
    try:
        loader = LOADERS[benchmark]
    except KeyError:
        raise ValueError(f"unknown benchmark {benchmark!r}; choose one of {sorted(LOADERS)}") from None
    items = loader(path, video_root=video_root, **options)
    return items if labels is None else join_labels(items, labels)


__all__ = ["LOADERS", "LoaderError", "load"]
