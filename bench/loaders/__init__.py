"""Loaders for the benchmarks' released files, one module per benchmark.

Each loader is ``load(path, video_root=None, **options) -> ItemSet``; the benchmark registry (:mod:`bench.registry`)
names each benchmark's loader, and :func:`load` reads any registered benchmark.
"""

from __future__ import annotations

from bench.items import ItemSet
from bench.loaders.common import LoaderError
from bench.registry import spec


def load(benchmark: str, path, video_root=None, **options) -> ItemSet:
    """Load ``benchmark`` from ``path`` (a file or folder as released)."""
    return spec(benchmark).load(path, video_root=video_root, **options)


__all__ = ["LoaderError", "load"]
