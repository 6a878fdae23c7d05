"""Every benchmark's metrics read every table any protocol produces for it: each benchmark scored with each protocol
(tiny models, the sample suite) gives a headline metric computed from all the items scored, none missing."""

from __future__ import annotations

import pytest

from bench.frames import policy
from bench.loaders import load
from bench.metrics import benchmark_outcomes, metric_table
from bench.registry import names, spec
from bench.scoring.families import load_backend
from bench.scoring.protocols import make_protocol
from bench.scoring.chunks import answer_items
from bench.store.schema import choice_frame, pair_frame

PROTOCOLS = {"similarity": ("contrastive", "clip"), "entail": ("videollm", "qwen2vl"), "mc": ("videollm", "qwen2vl"),
             "loglik": ("textlm", "gpt2")}


@pytest.fixture(scope="module")
def backends(tiny):
    loaded = {}

    def get(family, model):
        if (family, model) not in loaded:
            loaded[(family, model)] = load_backend(family, tiny(model))
        return loaded[(family, model)]

    return get


def _unit(item_id: str) -> str:
    """The item an outcome row belongs to (retrieval queries are "<item>#<text>", per-clip rows "<item>@<clip>")."""
    return item_id.split("#")[0].split("@")[0]


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
@pytest.mark.parametrize("benchmark", names())
def test_headline_metric_uses_every_scored_item(sample, backends, benchmark, protocol):
    s = sample[benchmark]
    asking = make_protocol(protocol, spec(benchmark))
    items = [it for it in load(benchmark, s.data_path, video_root=s.video_root, **s.loader_options) if asking.asks(it)]
    frames = policy("uniform", k=2) if asking.uses_frames else policy("none")
    scored = answer_items(backends(*PROTOCOLS[protocol]), asking, items, frames, batch_size=8)
    pair, choice = pair_frame(scored.pair), choice_frame(scored.choice)
    table = metric_table(items, pair, choice, measure=asking.measure)
    overall = table[table["by"] == "all"]
    headline = overall.iloc[0]
    main = {it.item_id for it in items if it.role == "main"}
    assert headline["n"] > 0 and headline["n_missing"] == 0, (benchmark, protocol, headline["metric"])
    assert (overall["n_missing"] == 0).all(), overall[overall["n_missing"] > 0]["metric"].tolist()
    outcomes = benchmark_outcomes(items, pair, choice)
    assert set(outcomes["item_id"].map(_unit)) == main
    per_metric = outcomes.groupby("metric")["status"].apply(lambda st: (st == "ok").all())
    assert per_metric.all(), per_metric[~per_metric]
    assert 0.0 <= headline["value"] <= 1.0
