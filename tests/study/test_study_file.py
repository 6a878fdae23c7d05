"""Study files: the shipped examples read and checked, the demo's file lists exactly the demo's runs, and every
mistake is one line naming the table and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.cli import main
from bench.devkit.demo import DEMO_ITEMS, DEMO_RUNS
from bench.devkit.train.build import MODELS
from bench.devkit.train.evaluate import Model, world_configs
from bench.devkit.world.suite import _sets_at
from bench.frames import parse_policy
from bench.frames.controls import control_policy
from bench.paths import PROJECT_ROOT
from bench.registry import names
from bench.scoring.protocols import PROTOCOLS
from bench.study.plan import StudyError, read_study

EXAMPLES = PROJECT_ROOT / "examples"


def _policy(config) -> object:
    own = parse_policy(config.frame_policy)
    if config.control is None:
        return own
    return control_policy(config.control, own, PROTOCOLS[config.protocol].blind_ok)


def test_the_demo_study_lists_exactly_the_demos_runs(tmp_path):
    study = read_study(EXAMPLES / "demo-study.toml", tmp_path)
    assert study.world == "full" and study.runs == tmp_path / "runs" / "sample-full"
    models = {run: Model(f"world:{s.model}", MODELS[s.model].family, s.protocol, s.frame_policy,
                         DEMO_ITEMS[MODELS[s.model].family], True) for run, s in DEMO_RUNS.items()}
    expected = world_configs(models, _sets_at(tmp_path / "sample-full"), study.runs)
    assert [(c.name, c.source, c.out) for c in study.configs] == [(c.name, c.source, c.out) for c in expected]
    for ours, theirs in zip(study.configs, expected):
        assert (ours.model, ours.family, ours.protocol, ours.limit, ours.spread) == \
            (theirs.model, theirs.family, theirs.protocol, theirs.limit, theirs.spread)
        assert _policy(ours) == parse_policy(theirs.frame_policy)


def test_the_real_benchmarks_example_covers_every_benchmark_with_every_control():
    study = read_study(EXAMPLES / "real-benchmarks.toml", check_files=False)
    assert [b.name for b in study.benchmarks] == names()
    controls = {(c.name.split()[0], c.control) for c in study.configs}
    assert {c for _, c in controls} == {None, "blind", "one-frame", "shuffled", "reversed"}
    assert all("/" in c.model for c in study.configs)  # hub ids


GOOD = """
[study]
runs = "runs"
[[benchmarks]]
name = "vitatecs"
data = "{data}"
[[models]]
name = "m"
model = "openai/clip-vit-base-patch32"
family = "contrastive"
"""


@pytest.mark.parametrize("change, message", [
    ("[study]\nruns = 3", r"\[study\] runs must be a path \(text\), got 3"),
    ("[extra]\nx = 1", r"unknown table\(s\) extra"),
    ("[[benchmarks]]\nname = 'vitatecs'\ndata = '{data}'\nvideo = 'x'",
     r"\[\[benchmarks\]\] #2: unknown key\(s\) video"),
    ("[[benchmarks]]\nname = 'nosuch'\ndata = '{data}'", r"\[\[benchmarks\]\] #2: unknown benchmark 'nosuch'"),
    ("[[models]]\nname = 'n'\nmodel = 'x/y'\nframes = 'uniform:k=0'", r"\[\[models\]\] 'n': frame policy 'uniform': k"),
    ("[[models]]\nname = 'n'\nmodel = 'x/y'\ncontrols = ['mirrored']", r"\[\[models\]\] 'n': unknown control"),
    ("[[models]]\nname = 'n'\nmodel = 'x/y'\nfamily = 'xclip'\nprotocol = 'entail'", r"\[\[models\]\] 'n': "),
    ("[[models]]\nname = 'n'\nmodel = 'x/y'\nlimit = 0", r"limit must be at least 1"),
    ("[[models]]\nname = 'n'\nmodel = 'x/y'\nspread = 'yes'", r"spread must be true or false"),
    ("[[models]]\nname = 'M'\nmodel = 'x/y'", r"goes to vitatecs-m, as 'm' does"),
    ("[[models]]\nname = 'n'\nmodel = 'x/y'\nbenchmarks = ['vilma']", r"vilma not among the study's"),
    ("[[benchmarks]]\nname = 'vilma'\ndata = 'nowhere'", r"\(vilma\) data: .*nowhere does not exist"),
    ("[study", r"not valid TOML"),
])
def test_mistakes_are_one_line_errors_naming_the_place(tmp_path, change, message):
    data = tmp_path / "data"
    data.mkdir()
    text = GOOD.format(data=data)
    if change.startswith("[study]"):
        text = text.replace('[study]\nruns = "runs"', change)
    else:
        text += change.replace("{data}", str(data)) + "\n"
    path = tmp_path / "s.toml"
    path.write_text(text)
    with pytest.raises(StudyError, match=message) as caught:
        read_study(path)
    assert "\n" not in str(caught.value)


def test_the_command_prints_a_mistake_as_one_line(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text("[study]\nruns = 'r'\n")
    assert main(["study", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "foilbench study: error: a study needs at least one [[benchmarks]] table"


def test_paths_resolve_home_study_and_relative(tmp_path):
    data = tmp_path / "home" / "d"
    data.mkdir(parents=True)
    path = tmp_path / "s.toml"
    path.write_text(GOOD.format(data="{home}/d").replace('runs = "runs"', 'runs = "out/runs"'))
    study = read_study(path, tmp_path / "home")
    assert study.runs == tmp_path / "out" / "runs" and study.report == tmp_path / "out" / "runs-report"
    assert Path(study.configs[0].source.data_path) == data
    assert study.configs[0].out == tmp_path / "out" / "runs" / "vitatecs-m"


def test_an_unknown_world_model_is_a_one_line_error_before_anything_is_scored(tmp_path, capsys):
    from bench.cli import main

    data = tmp_path / "data"
    data.mkdir()
    study = tmp_path / "study.toml"
    study.write_text(GOOD.format(data=data) + "[[models]]\nname = 'n'\nmodel = 'world:gpt'\nfamily = 'contrastive'\n")
    assert main(["study", str(study), "--check"]) == 2
    err = capsys.readouterr().err.strip()
    assert "unknown world model 'world:gpt'" in err and "\n" not in err
