"""The demo: the main job on the embedded sample suite.

Generates the sample suite (first use only), prints what the loaders read, scores every benchmark with tiny offline
models (a contrastive CLIP, a text-only GPT-2, and a Qwen2-VL asked Yes/No and A/B questions), prints each run's
headline metrics with chance level and confidence interval, and builds the HTML report of all five papers.
"""

from __future__ import annotations

from pathlib import Path


# adapter -> (tiny model, benchmarks it scores in the demo)
DEMO_RUNS: dict[str, tuple[str, tuple[str, ...]]] = {
    "contrastive": ("clip", ("vilma", "vitatecs", "velociti", "videocon", "vinoground")),
    "textlm": ("gpt2", ("vilma", "vitatecs", "velociti")),
    "entail": ("qwen2vl", ("velociti", "videocon")),
    "mc": ("qwen2vl", ("vitatecs", "velociti", "vinoground")),
}


def score_sample(home: Path, samples: dict, progress: bool = True) -> list[Path]:
    """Score the sample suite as :data:`DEMO_RUNS` says; runs already stored are resumed, not redone."""
    from bench.frames import policy
    from bench.scoring.run import score
    from bench.devkit.tiny import tiny_model

    runs = []
    for adapter, (tiny, benchmarks) in DEMO_RUNS.items():
        model = str(tiny_model(tiny, home / "models"))
        for name in benchmarks:
            s = samples[name]
            runs.append(score(name, s.data_path, model, adapter, video_root=s.video_root,
                              loader_options=s.loader_options, frame_policy=policy("uniform", k=8),
                              out=home / "runs" / "sample" / f"{name}-{adapter}-{tiny}",
                              name=f"{adapter} tiny-{tiny}", progress=progress))
    return runs


def headline(runs: list[Path]) -> str:
    """Each run's overall metrics: value, confidence interval, chance level and significance."""
    from bench.metrics.tables import Settings, run_table
    from bench.runstore import read_run

    lines = []
    for path in runs:
        table = run_table(read_run(path), Settings(n_boot=200))
        overall = table[table["by"] == "all"]
        lines.append(f"{table['benchmark'].iloc[0]:10s} {table['run'].iloc[0]}")
        for row in overall.itertuples():
            mark = "*" if row.significant is True else " "
            lines.append(f"    {row.metric:22s} {100 * row.value:6.1f}{mark} [{100 * row.ci_low:5.1f}, "
                         f"{100 * row.ci_high:5.1f}]  chance {100 * row.chance:5.1f}  n={row.n}")
    return "\n".join(lines)
