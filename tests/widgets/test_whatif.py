"""The pair viewer's what-if panel, driven from Python: the runs' models as targets, re-scoring edited texts (the
stored scores beside, the engine's number for unchanged texts), the controls, a model too big named not loaded,
and the probes kept."""

from __future__ import annotations

import pytest

from bench.paths import HOME_ENV
from bench.scoring import warm
from bench.scoring.probe import probe, run_setup
from bench.scoring.warm import WarmModels
from bench.store import read_run
from bench.store.probes import read_probes
from fixtures_widgets import BENCHMARK, demo_home
from widgets import PairViewer
from widgets.runs import find_runs
from widgets.whatif import stored_scores, targets_of


@pytest.fixture(scope="module")
def home(sample, tiny, tmp_path_factory):
    return demo_home(tmp_path_factory.mktemp("home"), sample, tiny)


@pytest.fixture(scope="module")
def runs(home):
    return [read_run(r) for r in find_runs(BENCHMARK, under=home / "runs")]


@pytest.fixture(scope="module")
def models():
    found = WarmModels()
    yield found
    found.clear()


@pytest.fixture()
def viewer(runs, models, tmp_path, monkeypatch):
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "home"))
    widget = PairViewer(runs, serve=False, proxy_folder=tmp_path / "proxies", models=models)
    item = runs[0].items()[0]
    widget.show(item)
    return widget, item


def test_the_targets_are_the_runs_models_each_asked_as_its_run(runs):
    targets = targets_of(runs)
    models = list(dict.fromkeys(r.manifest.model for r in runs))
    assert [t.setup["model"] for t in targets] == models
    for target in targets:
        assert target.run is not None and target.run.manifest.protocol in ("similarity", "entail", "loglik")
        assert target.setup == run_setup(target.run.manifest)


def test_rescoring_shows_each_models_new_scores_beside_the_stored_ones(viewer, runs, models):
    widget, item = viewer
    assert [t["text"] for t in widget.texts] == list(item.texts)
    edited = [item.texts[0], item.texts[1] + " twice", "an added foil"]
    rows = widget.probe(edited)
    assert [r["target"] for r in rows] == [t.label for t in widget.targets] and widget.probes == rows
    for row, target in zip(rows, widget.targets):
        assert row["error"] == "" and row["texts"] == edited and row["control"] == "as-is"
        run = target.run
        stored = run.pair[(run.pair["item_id"] == item.item_id) & (run.pair["text"] == 0)]["score"].iloc[0]
        assert row["stored"] == [pytest.approx(stored), None, None]
        assert row["scores"][0] == pytest.approx(stored, rel=1e-5, abs=1e-6)  # unchanged: the run's own number
        alone = probe(video=item.clips[0], texts=[edited[2]], models=models, **target.setup)
        assert row["scores"][2] == pytest.approx(alone.scores[0], rel=1e-5, abs=1e-6)
    assert widget.probing.startswith("done: 3 model(s)")
    kept = read_probes()
    assert len(kept) == len(rows) * len(edited) and set(kept["control"]) == {"as-is"}


def test_a_control_and_a_subset_of_the_models(viewer):
    widget, item = viewer
    entail = next(t for t in widget.targets if t.setup["family"] == "videollm")
    rows = widget.probe(list(item.texts), "blind", [entail.label])
    assert [r["target"] for r in rows] == [entail.label] and rows[0]["control"] == "blind"
    assert rows[0]["error"] == "" and rows[0]["scores"] != rows[0]["stored"]
    clip = next(t for t in widget.targets if t.setup["family"] == "contrastive")
    blank = widget.probe(list(item.texts), "blind", [clip.label])  # a model that needs frames sees a black one
    assert blank[0]["error"] == "" and len(blank[0]["scores"]) == len(item.texts)
    assert blank[0]["scores"] != widget.probe(list(item.texts), "as-is", [clip.label])[0]["scores"]


def test_a_model_too_big_is_named_not_loaded(runs, tmp_path, monkeypatch):
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "home"))
    monkeypatch.setattr(warm, "free_bytes", lambda device: 1)
    models = WarmModels()
    widget = PairViewer(runs, serve=False, models=models)
    notes = {t["label"]: t["note"] for t in widget.whatif["targets"]}
    assert all(note.startswith(f"{label} needs about ") and note.endswith("free: not loaded")
               for label, note in notes.items())
    widget.show(runs[0].items()[0])
    assert widget.probe(["a text"]) == [] and widget.probing == "no model picked"
    label = widget.targets[0].label
    rows = widget.probe(["a text"], targets=[label])
    assert rows[0]["error"] == notes[label] and len(models) == 0


def test_stored_scores_match_texts_by_their_words(runs):
    run = next(r for r in runs if r.manifest.protocol == "similarity")
    item = run.items()[0]
    found = stored_scores(item, run, 0, [item.texts[1], "something else", item.texts[0]])
    pair = run.pair[(run.pair["item_id"] == item.item_id) & (run.pair["clip"] == 0)].set_index("text")["score"]
    assert found == [pytest.approx(pair[1]), None, pytest.approx(pair[0])]
    assert stored_scores(item, None, 0, ["x"]) == [None]
