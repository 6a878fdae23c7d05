"""The demo: the main job on the embedded sample suite.

Generates the sample suite (first use only), prints what the loaders read, scores every registered benchmark with
tiny offline models (a contrastive CLIP, a text-only GPT-2, and a Qwen2-VL asked Yes/No and A/B questions), prints
each run's headline metrics with chance level and confidence interval, and builds the HTML report of all five papers.
"""

from __future__ import annotations

from pathlib import Path

from bench.config import DataSource, ScoreConfig
from bench.registry import names

# tiny model -> (family, the protocols it is asked through); each scores every registered benchmark
DEMO_MODELS: dict[str, tuple[str, tuple[str, ...]]] = {
    "clip": ("contrastive", ("similarity",)),
    "gpt2": ("textlm", ("loglik",)),
    "qwen2vl": ("videollm", ("entail", "mc")),
}


def score_sample(home: Path, samples: dict, progress: bool = True) -> list[Path]:
    """Score the sample suite as :data:`DEMO_MODELS` says; runs already stored are resumed, not redone."""
    from bench.devkit.tiny import tiny_model
    from bench.scoring.runner import score

    runs = []
    for tiny, (family, protocols) in DEMO_MODELS.items():
        model = str(tiny_model(tiny, home / "models"))
        for protocol in protocols:
            for name in names():
                s = samples[name]
                source = DataSource.of(name, s.data_path, s.video_root, s.loader_options)
                runs.append(score(ScoreConfig(source, model, family=family, protocol=protocol, frames="uniform:k=8",
                                              out=home / "runs" / "sample" / f"{name}-{protocol}-{tiny}",
                                              name=f"{protocol} tiny-{tiny}", progress=progress)))
    return runs


def headline(runs: list[Path]) -> str:
    """Each run's overall metrics: value, confidence interval, chance level and significance."""
    from bench.metrics.dispatch import run_table
    from bench.store import read_run

    lines = []
    for path in runs:
        table = run_table(read_run(path))
        overall = table[table["by"] == "all"]
        lines.append(f"{table['benchmark'].iloc[0]:10s} {table['run'].iloc[0]}")
        for row in overall.itertuples():
            mark = "*" if row.significant is True else " "
            lines.append(f"    {row.metric:22s} {100 * row.value:6.1f}{mark} [{100 * row.ci_low:5.1f}, "
                         f"{100 * row.ci_high:5.1f}]  chance {100 * row.chance:5.1f}  n={row.n}")
    return "\n".join(lines)
