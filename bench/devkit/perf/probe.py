"""``foilbench perf probe``: one probe of one item (its caption and foil, as the pair viewer's what-if panel asks
them) against the demo's four trained models, once they are loaded; the target is under 2 seconds on 2 cores."""

from __future__ import annotations

import time
from pathlib import Path

TARGET_SECONDS = 2.0


def measure(home: Path, size: str = "full", benchmark: str = "vitatecs", device: str = "cpu") -> dict[str, float]:
    """Load the demo's trained models under ``home`` (built first when absent), then time one probe of the first
    ``order`` item of ``benchmark`` in the world of ``size`` against each of them, twice (first with the frames
    decoded, then from the frame cache); print and return the seconds."""
    from bench.devkit.train.build import MODELS, trained_model
    from bench.devkit.world import ensure_sample
    from bench.frames import FrameCache
    from bench.loaders import load
    from bench.scoring.probe import probe
    from bench.scoring.warm import WarmModels

    samples = ensure_sample(home / f"sample-{size}", size=size)
    s = samples[benchmark]
    items = load(benchmark, s.data_path, video_root=s.video_root, **s.loader_options).items
    item = next((it for it in items if it.labels.get("foil_type") == "order"), items[0])
    folders = {name: str(trained_model(name, home)) for name in MODELS}
    models, cache = WarmModels(), FrameCache()
    started = time.perf_counter()
    for name, folder in folders.items():
        models.get(folder, MODELS[name].family, device)
    print(f"{len(folders)} models loaded in {time.perf_counter() - started:.2f} s ({', '.join(folders)}, {device})")
    print(f"item {item.item_id} of {benchmark} ({item.labels.get('foil_type')}): {len(item.texts)} texts")
    found = {}
    for attempt in ("first (frames decoded)", "again (frames cached)"):
        each = {}
        started = time.perf_counter()
        for name, folder in folders.items():
            one = time.perf_counter()
            probe(folder, item.clips[0], item.texts, family=MODELS[name].family, device=device, models=models,
                  cache=cache)
            each[name] = time.perf_counter() - one
        total = time.perf_counter() - started
        found[attempt] = total
        detail = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in each.items())
        print(f"one probe against {len(folders)} models, {attempt}: {total:.2f} s ({detail}); target under "
              f"{TARGET_SECONDS:.0f} s")
    return found
