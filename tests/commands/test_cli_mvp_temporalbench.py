"""MVP and TemporalBench through the command line on the generated world's files (their released formats) with the
tiny models: ``score`` (every protocol that fits, a control), ``metrics`` (its numbers are the engine's), ``compare``,
``import`` of each benchmark's answer files, and, slow, ``study`` and the ``report`` it builds."""

from __future__ import annotations

import json

import pytest
from fixtures_study import world_benchmarks

from bench.cli import main
from bench.metrics import Settings, run_table
from bench.store import read_run

SETTINGS = Settings(n_boot=100)
BENCHMARKS = ("mvp", "temporalbench")


def _source(sample, benchmark: str) -> list[str]:
    s = sample[benchmark]
    return [benchmark, str(s.data_path), "--video-root", str(s.video_root), "-o",
            f"labels={s.loader_options['labels']}"]


def _score(sample, tiny, benchmark: str, out, model: str, *extra: str) -> None:
    assert main(["score", *_source(sample, benchmark), "--model", tiny(model), "--frames", "uniform:k=2",
                 "--out", str(out), "--quiet", *extra]) == 0


def _metrics(capsys, *runs) -> dict:
    capsys.readouterr()
    assert main(["metrics", *map(str, runs), "--json", "--bootstrap", "100"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_score_metrics_and_compare(sample, tiny, tmp_path, capsys, benchmark):
    # (entailment and text-only runs: tests/metrics/test_protocol_tables.py scores every protocol on both; the slow
    # study below scores both with controls)
    runs = {"clip": tmp_path / "clip", "shuffled": tmp_path / "clip-shuffled", "mc": tmp_path / "qwen-mc"}
    _score(sample, tiny, benchmark, runs["clip"], "clip")
    _score(sample, tiny, benchmark, runs["shuffled"], "clip", "--control", "shuffled")
    _score(sample, tiny, benchmark, runs["mc"], "qwen2vl", "--protocol", "mc", "--limit", "3")
    found = _metrics(capsys, *runs.values())
    headline = "paired accuracy" if benchmark == "mvp" else "MBA"
    for name, path in runs.items():
        run = read_run(path)
        assert run.manifest.status == "complete" and not len(run.failures), name
        engine = run_table(run, Settings(n_boot=1000)).set_index(["metric", "by", "subset"])
        rows = [r for r in found["rows"] if r["run"] == run.label]
        assert {r["metric"] for r in rows} >= {headline}, name
        for r in rows:
            expected = engine.loc[(r["metric"], r["by"], str(r["subset"]))]
            assert r["value"] == pytest.approx(expected["value"]) and r["n"] == expected["n"], (name, r["metric"])
    assert read_run(runs["shuffled"]).manifest.control == "shuffled"
    both = {r["metric"] for r in found["rows"] if r["run"] == read_run(runs["mc"]).label}
    assert any(m.endswith("(both orders)") for m in both)
    capsys.readouterr()
    assert main(["compare", str(runs["clip"]), str(runs["shuffled"]), str(runs["mc"]), "--by", "foil_type",
                 "--json"]) == 0
    compared = json.loads(capsys.readouterr().out)
    items = {it.item_id for it in read_run(runs["clip"]).items()}
    assert {i["item_id"] for i in compared["items"]} == items and len(compared["pairs"]) >= 3


def test_import_mvp_answers_and_its_metrics(sample, tmp_path, capsys):
    from bench.loaders import load

    s = sample["mvp"]
    items = load("mvp", s.data_path).items
    answers = tmp_path / "mvp_answers.jsonl"
    lines = []
    for n, it in enumerate(items):
        for c, video_id in enumerate(it.labels["video_ids"]):
            right = "AB"[it.labels["orders"][c].index(it.truth[c][0])]
            lines.append({"video_id": video_id, "response": f"Answer: {right}" if n % 2 == 0 else "unsure"})
    answers.write_text("".join(json.dumps(line) + "\n" for line in lines))  # "unsure": no letter a or b to read
    out = tmp_path / "imported"
    assert main(["import", "mvp", str(answers), "--benchmark", "mvp", "--data", str(s.data_path),
                 "--model-name", "closed", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"{len(items)} of the benchmark's {len(items)} items answered" in printed
    assert f"{len(lines) // 2} answer(s) read as no option" in printed
    found = {(r["metric"], r["by"], r["subset"]): r for r in _metrics(capsys, out)["rows"]}
    right = sum(1 for n in range(len(items)) if n % 2 == 0)
    assert found[("paired accuracy", "all", "all")]["value"] == pytest.approx(right / len(items))
    assert found[("paired accuracy", "all", "all")]["n_unparsed"] == len(items) - right


def test_import_temporalbench_predictions(sample, tmp_path, capsys):
    from bench.loaders import load

    s = sample["temporalbench"]
    items = load("temporalbench", s.data_path).items
    short = [it for it in items if it.subset == "short"]
    path = tmp_path / "outputs" / "temporalbench_short_qa" / "model-frame8.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps({"idx": it.item_id, "response": it.labels["gt"] + ". because"}) + "\n"
                            for it in short))
    out = tmp_path / "imported"
    assert main(["import", "temporalbench", str(path), "--benchmark", "temporalbench", "--data", str(s.data_path),
                 "--model-name", "model", "--out", str(out)]) == 0
    assert f"{len(short)} of the benchmark's {len(items)} items answered" in capsys.readouterr().out
    found = {(r["metric"], r["by"], r["subset"]): r for r in _metrics(capsys, out)["rows"]}
    assert found[("binary accuracy", "all", "all")]["value"] == 1.0
    assert found[("MBA", "all", "all")]["n"] == len({it.labels["video_name"] for it in short})
    assert ("MBA", "subset", "long") not in found  # the long questions were not answered: not part of the run


def test_a_study_reading_mvp_from_the_world_has_the_world_write_it(tmp_path, monkeypatch):
    from bench.commands.study import _with_world
    from bench.devkit.world import suite
    from bench.study.plan import read_study

    def folders(root, size, seed=0):  # the suite's bookkeeping without rendering a video
        (root / "data").mkdir()
        (root / "videos").mkdir()

    monkeypatch.setattr(suite, "WRITERS", {name: suite.Writer(folders, default=writer.default)
                                           for name, writer in suite.WRITERS.items()})
    path = tmp_path / "study.toml"
    path.write_text('[study]\nruns = "runs"\nworld = "small"\n[[benchmarks]]\nname = "mvp"\n'
                    'data = "{home}/sample-small/mvp/data"\nvideos = "{home}/sample-small/mvp/videos"\n'
                    '[[models]]\nname = "m"\nmodel = "org/model"\nfamily = "contrastive"\n')
    home = tmp_path / "home"
    _with_world(read_study(path, home), home)
    assert (home / "sample-small" / suite.STAMP).read_text().split()[3] == "mvp"
    assert not (home / "sample-small" / "vilma").exists()  # nothing the study does not read


@pytest.mark.slow
def test_a_study_of_both_with_controls_and_its_report(sample, tiny, tmp_path, capsys):
    parts = ['[study]\nruns = "runs"\nreport = "report"\n']
    parts += world_benchmarks(sample, BENCHMARKS)
    parts.append(f'[[models]]\nname = "tiny"\nmodel = "{tiny("clip")}"\nfamily = "contrastive"\n'
                 f'frames = "uniform:k=2"\ncontrols = ["shuffled", "blind"]\n')
    parts.append(f'[[models]]\nname = "tiny qwen"\nmodel = "{tiny("qwen2vl")}"\nfamily = "videollm"\n'
                 f'protocol = "mc"\nframes = "uniform:k=2"\n')
    study = tmp_path / "study.toml"
    study.write_text("\n".join(parts))
    assert main(["study", str(study), "--quiet"]) == 0
    runs = tmp_path / "runs"
    for name in BENCHMARKS:
        for suffix in ("", "-shuffled", "-blind"):
            assert read_run(runs / f"{name}-tiny{suffix}").manifest.status == "complete"
        assert read_run(runs / f"{name}-tiny-qwen").manifest.protocol == "mc"
    index = (tmp_path / "report" / "index.html").read_text()
    for name in BENCHMARKS:
        assert f"notebooks/{name}.html" in index and f"id='{name}'" in index
        entries = json.loads((tmp_path / "report" / name / "contents.json").read_text())["entries"]
        assert {"headline", "scores"} <= {e["name"] for e in entries}
        assert any(e["kind"] == "figure" for e in entries)
    assert "id='controls'" in index and "shuffled" in index
    headline = (tmp_path / "report" / "mvp" / "headline.csv").read_text()
    assert "paired accuracy (mean of subsets)" in headline
