"""What runs scored one after another in one process share (a study, the demo): decoded clips, loaded models and
read benchmark files, each decoded, loaded or read once for all of them. A run scored with or without it stores the
same scores."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from bench.config import DataSource
from bench.frames import FrameCache
from bench.items import ItemSet
from bench.scoring.warm import WarmModels


@dataclass
class Shared:
    """Decoded clips (:class:`~bench.frames.FrameCache`), loaded backends (:class:`~bench.scoring.warm.WarmModels`)
    and the items of each :class:`~bench.config.DataSource` read so far."""

    frames: FrameCache = field(default_factory=FrameCache)
    models: WarmModels = field(default_factory=WarmModels)
    sources: dict[tuple, ItemSet] = field(default_factory=dict)

    def load(self, source: DataSource) -> ItemSet:
        """``source.load()``, read once (each call gets its own list of the same items)."""
        key = (source.benchmark, source.data_path, source.video_root, json.dumps(source.options, sort_keys=True))
        if key not in self.sources:
            self.sources[key] = source.load()
        found = self.sources[key]
        return replace(found, items=list(found.items), notes=list(found.notes))
