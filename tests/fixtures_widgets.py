"""A data home with runs of the tiny models of every family and protocol, for VELOCITI only (the widgets' tests need
no other benchmark; `foilbench demo` leaves runs of trained models in the same place)."""

from __future__ import annotations

from pathlib import Path

from bench.config import DataSource, ScoreConfig
from bench.scoring.runner import score

BENCHMARK = "velociti"
# tiny model -> (family, the protocols it is asked through)
TINY_RUNS: dict[str, tuple[str, tuple[str, ...]]] = {
    "clip": ("contrastive", ("similarity",)),
    "gpt2": ("textlm", ("loglik",)),
    "qwen2vl": ("videollm", ("entail", "mc")),
}


def demo_home(home: Path, sample: dict, tiny) -> Path:
    """Score the sample suite's VELOCITI with every :data:`TINY_RUNS` model and protocol into ``home/runs/sample``;
    ``tiny``: the conftest fixture giving a tiny model's folder."""
    s = sample[BENCHMARK]
    source = DataSource.of(BENCHMARK, s.data_path, s.video_root, s.loader_options)
    for model, (family, protocols) in TINY_RUNS.items():
        for protocol in protocols:
            score(ScoreConfig(source, tiny(model), family=family, protocol=protocol, frame_policy="uniform:k=8",
                              out=home / "runs" / "sample" / f"{BENCHMARK}-{protocol}-{model}",
                              name=f"{protocol} tiny-{model}", progress=False))
    return home
