"""docs/api.md's costs are what the dry-run code computes: its lines come out of ``foilbench study --dry-run`` on the
released annotation files, and its Vinoground sentence follows from the protocols' requests per item."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.cli import main
from bench.registry import spec
from bench.scoring.chunks import planned_requests
from bench.scoring.protocols import make_protocol

DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"
BENCHMARKS = {"vilma": "vilma", "vitatecs": "vitatecs", "velociti": "velociti_v1_subset", "videocon": "videocon",
              "tempcompass": "tempcompass"}


def _cost_lines() -> list[str]:
    text = DOC.read_text()
    section = text[text.index("## What each benchmark costs"):]
    block = section[section.index("```\n") + 4:]
    return block[:block.index("```")].rstrip("\n").splitlines()


@pytest.mark.slow
@pytest.mark.realdata
def test_the_docs_costs_are_the_dry_runs_output(realdata, tmp_path, capsys):
    study = tmp_path / "costs.toml"
    tables = "".join(f'[[benchmarks]]\nname = "{name}"\ndata = "{realdata / folder}"\n'
                     for name, folder in BENCHMARKS.items())
    models = "".join(f'[[models]]\nname = "{p}"\nmodel = "gpt-4o"\nendpoint = "https://api.openai.com/v1"\n'
                     f'frames = "uniform:k=8"\nprotocol = "{p}"\n' for p in ("entail", "mc"))
    study.write_text(f'[study]\nruns = "{tmp_path / "runs"}"\n{tables}{models}')
    assert main(["study", str(study), "--dry-run"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert _cost_lines() == [line for line in printed if re.match(r"  \w+ (entail|mc): ", line)]


def test_the_docs_vinoground_requests_follow_from_its_protocols(sample):
    s = sample["vinoground"]
    items = spec("vinoground").load(s.data_path, video_root=s.video_root).items
    text = " ".join(DOC.read_text().split())
    for protocol, words in (("entail", "Yes/No"), ("mc", "A/B")):
        per_pair = len(planned_requests(make_protocol(protocol, spec("vinoground"), closed=True), items, False))
        per_pair //= len(items)
        assert f"asks {per_pair} requests a pair {words}" in text or f"and {per_pair} {words}" in text
        assert f"{500 * per_pair:,}" in text
