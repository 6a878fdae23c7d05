"""Models the speed benchmarks build in memory (random-initialised at real configs, or with zero-cost parts)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Prebuilt:
    """A processor and a model built in memory, passed instead of a model id (to a backend, or as
    ``ScoreConfig.model``) and loaded as they are; ``name`` stands for them in manifests."""

    name: str
    processor: Any
    model: Any

    def __str__(self) -> str:
        return self.name
