"""A data home as `foilbench demo` leaves it, for VELOCITI only (the widgets' tests need no other benchmark)."""

from __future__ import annotations

from pathlib import Path

from bench.config import DataSource, ScoreConfig
from bench.devkit.demo import DEMO_MODELS
from bench.scoring.runner import score

BENCHMARK = "velociti"


def demo_home(home: Path, sample: dict, tiny) -> Path:
    """Score the sample suite's VELOCITI with every demo model and protocol into ``home/runs/sample`` (named as the
    demo names its runs); ``tiny``: the conftest fixture giving a tiny model's folder."""
    s = sample[BENCHMARK]
    source = DataSource.of(BENCHMARK, s.data_path, s.video_root, s.loader_options)
    for model, (family, protocols) in DEMO_MODELS.items():
        for protocol in protocols:
            score(ScoreConfig(source, tiny(model), family=family, protocol=protocol, frames="uniform:k=8",
                              out=home / "runs" / "sample" / f"{BENCHMARK}-{protocol}-{model}",
                              name=f"{protocol} tiny-{model}", progress=False))
    return home
