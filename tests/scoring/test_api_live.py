"""A remote model scored end to end through a real OpenAI-compatible server: ``transformers serve`` on the loopback
with a tiny Video-LLM (tests/fixtures_api.py), directly and behind a fault-injecting proxy that counts what the
server sees. Checked: one stored answer per question and the same answers as a run without faults; no request sent
again once answered (through the faults, and across a kill -9 and its resume); the answers run's metrics equal an
import of the same answers; the key in no file, report or output line; the console's bad-answer counts equal the
metric table's."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter

import pandas as pd
import pytest

from bench.cli import main
from bench.metrics.dispatch import run_table
from bench.store import read_run
from bench.store.responses import RESPONSES, read_responses
from fixtures_api import FAULTS, FaultProxy, answering_model, serving

pytestmark = pytest.mark.slow
SETTINGS = ["--frames", "uniform:k=4", "-b", "image_size=64", "-b", "max_tokens=2", "--quiet"]
VALUES = ["metric", "by", "subset", "value", "n", "n_unparsed", "n_dropped", "strict"]


@pytest.fixture(scope="module")
def served(tiny, tmp_path_factory):
    """(base URL, model name) of ``transformers serve`` with the answering tiny Qwen2-VL."""
    root = tmp_path_factory.mktemp("api")
    model = answering_model(tiny("qwen2vl"), root / "qwen2vl-answers")
    with serving(model, root / "serve.log") as url:
        yield url, str(model)


def _args(sample, url, model, out, *extra):
    s = sample["velociti"]
    return ["score", "velociti", str(s.data_path), "--video-root", str(s.video_root), "--endpoint", url, "--model",
            model, "--out", str(out), *SETTINGS, *extra]


def _answers(path):
    pair = read_run(path).pair
    return pair.sort_values(["item_id", "clip", "text"]).reset_index(drop=True)[
        ["item_id", "clip", "text", "score", "answer"]]


@pytest.fixture(scope="module")
def reference(served, sample, tmp_path_factory):
    """The run straight against the server: no proxy, no fault."""
    url, model = served
    out = tmp_path_factory.mktemp("reference") / "run"
    assert main(_args(sample, url, model, out)) == 0
    return out


def test_reference_run_is_an_answers_run_with_parsed_and_bad_answers(reference, sample):
    run = read_run(reference)
    answers = _answers(reference)
    items = run.items()
    assert run.manifest.family == "api" and run.manifest.measure == "answer"
    assert run.manifest.prompt["name"] == "velociti-entail-closed"
    assert run.manifest.details["check"]["logprobs_returned"] is False  # transformers serve returns no logprobs
    assert len(answers) == 2 * len(items) and not answers.duplicated(["item_id", "clip", "text"]).any()
    from bench.importers.common import parse_yes_no

    expected = [parse_yes_no(a) for a in answers["answer"]]
    pd.testing.assert_series_equal(answers["score"], pd.Series(expected, name="score"), check_exact=True)
    assert answers["score"].notna().any() and answers["score"].isna().any(), "the fixture should answer both ways"


def test_faults_lose_nothing_double_nothing_and_the_key_stays_secret(served, sample, reference, tmp_path, capsys,
                                                                      monkeypatch):
    url, model = served
    key = f"sk-test-{uuid.uuid4().hex}"
    monkeypatch.setenv("FOILBENCH_TEST_KEY", key)
    proxy = FaultProxy(url, rate=0.7, slow=1.0, hold=5.0)
    out = tmp_path / "faulty"
    try:
        code = main(_args(sample, proxy.url, model, out, "--api-key-env", "FOILBENCH_TEST_KEY", "--concurrency", "3",
                          "--request-timeout", "4"))
    finally:
        proxy.close()
    shown = capsys.readouterr()
    assert code == 0, shown.err
    pd.testing.assert_frame_equal(_answers(out), _answers(reference), check_exact=True)
    assert {fault for _, fault, _ in proxy.faults} == set(FAULTS), "every kind of fault should have been met"

    journal = read_responses(out)
    assert len({r["key"] for r in journal}) == len(journal), "one stored response per request"
    holds = Counter(k for k, fault, _ in proxy.faults if fault == "hold")
    for record in journal:  # the server saw each request once, more only when the client gave up on a slow answer
        timeouts = sum(f.startswith("time-out") for f in record["faults"])
        assert proxy.forwarded[record["key"]] == 1 + timeouts - holds[record["key"]]
        assert record["attempts"] == 1 + len(record["faults"])
    for k, fault, at in proxy.faults:  # Retry-After: 1 honoured
        if fault == "429":
            later = [t for key, t in proxy.arrivals if key == k and t > at]
            assert later and later[0] - at >= 0.95

    assert f"Bearer {key}" in proxy.auth, "the key is sent to the endpoint"
    report = tmp_path / "report"
    assert main(["report", str(out), "--out", str(report), "--format", "png", "--bootstrap", "50", "--jobs", "1",
                 "--quiet"]) == 0
    shown = shown.out + shown.err + "".join(capsys.readouterr())
    assert key not in shown
    for folder in (out, report):
        for path in folder.rglob("*"):
            if path.is_file():
                assert key.encode() not in path.read_bytes(), f"the key is in {path}"
    manifest = read_run(out).manifest
    assert manifest.details["api_key_env"] == "FOILBENCH_TEST_KEY"


def test_console_counts_bad_answers_as_the_metrics_do(reference, capsys):
    from bench.commands.score import answer_lines

    lines = answer_lines(reference)
    run = read_run(reference)
    bad = int(run.pair["score"].isna().sum())
    assert f"{len(run.pair)} stored, {bad} bad" in lines[0]
    table = run_table(run)
    row = table[(table["metric"] == "ClassicVLE") & (table["by"] == "all")].iloc[0]
    assert f"ClassicVLE: {int(row['n_unparsed'])} items with a bad answer: {int(row['n_dropped'])} dropped" in lines[1]
    assert row["n_dropped"] == row["n_unparsed"] > 0  # VELOCITI's closed-model scoring drops them


def test_metrics_equal_an_import_of_the_same_answers(reference, sample, tmp_path):
    pair = read_run(reference).pair
    answers = tmp_path / "answers.csv"
    with answers.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["item_id", "text", "answer"])
        writer.writerows(zip(pair["item_id"], pair["text"], pair["answer"]))
    s = sample["velociti"]
    imported = tmp_path / "imported"
    assert main(["import", "answers", str(answers), "--benchmark", "velociti", "--data", str(s.data_path),
                 "--video-root", str(s.video_root), "--model-name", "api", "--out", str(imported)]) == 0
    ours, theirs = (run_table(read_run(p))[VALUES].reset_index(drop=True) for p in (reference, imported))
    pd.testing.assert_frame_equal(ours, theirs, check_exact=True)
    assert ours["n_unparsed"].sum() > 0


def test_kill_9_resumes_without_sending_an_answered_request_again(served, sample, reference, tmp_path):
    url, model = served
    proxy = FaultProxy(url, delay=0.4)
    out = tmp_path / "killed"
    command = [sys.executable, "-m", "bench", *_args(sample, proxy.url, model, out, "--concurrency", "2",
                                                     "--chunk-size", "2")]
    try:
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        while time.time() < deadline and len(read_responses(out)) < 5:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        stored = {r["key"] for r in read_responses(out)}
        assert 5 <= len(stored) < len(read_responses(reference)), "the run should have been killed partway"
        before = Counter(proxy.seen)  # what had reached the proxy when the client died
        resumed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    finally:
        proxy.close()
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming:" in resumed.stderr
    final = {r["key"] for r in read_responses(out)}
    again = Counter(proxy.seen) - before
    assert not set(again) & stored, "a request answered before the kill was sent again"
    in_flight = {k for k in again if before[k] and k in final}
    assert len(in_flight) <= 2, f"more than the requests in flight at the kill were sent twice: {len(in_flight)}"
    assert all(proxy.seen[k] == 1 for k in final - in_flight)
    pd.testing.assert_frame_equal(_answers(out), _answers(reference), check_exact=True)
    run = read_run(out)
    assert run.manifest.status == "complete" and len(run.manifest.extra["launches"]) == 2
    assert (out / RESPONSES).read_bytes().endswith(b"\n")


def test_a_rejected_key_is_one_line_that_does_not_quote_it(served, sample, tmp_path, capsys, monkeypatch):
    url, model = served
    key = f"sk-proj-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    proxy = FaultProxy(url, unauthorized=True)
    try:
        code = main(_args(sample, proxy.url, model, tmp_path / "run"))
    finally:
        proxy.close()
    shown = capsys.readouterr()
    assert code == 2 and "HTTP 401" in shown.err and "$OPENAI_API_KEY" in shown.err
    assert key not in shown.err + shown.out and key[8:] not in shown.err
    assert len(shown.err.strip().splitlines()) <= 2


def test_multiple_choice_through_the_server_reads_letters_with_the_papers_parser(served, sample, tmp_path):
    url, model = served
    s = sample["vinoground"]
    out = tmp_path / "vino"
    assert main(["score", "vinoground", str(s.data_path), "--video-root", str(s.video_root), "--endpoint", url,
                 "--model", model, "--protocol", "mc", "--limit", "1", "--out", str(out), *SETTINGS]) == 0
    run = read_run(out)
    choice = run.choice
    assert set(choice["axis"]) == {"text", "video"} and run.manifest.measure == "answer"
    from bench.importers.common import parse_letter

    for _, row in choice.iterrows():
        index = parse_letter(row["answer"], row["options"])
        assert row["choice"] == (row["options"][index] if index >= 0 else -1)


@pytest.mark.parametrize("name", ["tempcompass", "tvbench", "mvp", "temporalbench"])
def test_the_newer_benchmarks_answers_are_read_by_their_own_readers_in_the_order_shown(served, sample, tmp_path,
                                                                                        capsys, name):
    from bench.loaders import load
    from bench.registry import spec

    url, model = served
    s = sample[name]
    out = tmp_path / name
    proxy = FaultProxy(url)
    try:
        entail = main(["score", name, str(s.data_path), "--video-root", str(s.video_root), "--endpoint", proxy.url,
                       "--model", model, "--protocol", "entail", "-b", "answers=text", "--limit", "1", "--out",
                       str(out), *SETTINGS])
        said = capsys.readouterr().err.strip().splitlines()
        if name in ("mvp", "tvbench"):  # Yes/No text they have no reader of: one line, and not one request sent
            assert entail == 2 and proxy.connections == 0 and len(said) == 1
            assert f"{spec(name).title} has no reader of Yes/No answers given as text" in said[0]
        else:
            assert entail == 0 and proxy.connections
        out = tmp_path / f"{name}-mc"
        assert main(["score", name, str(s.data_path), "--video-root", str(s.video_root), "--endpoint", proxy.url,
                     "--model", model, "--protocol", "mc", "--limit", "12", "--spread", "--out", str(out), *SETTINGS]) == 0
    finally:
        proxy.close()
    run = read_run(out)
    assert run.manifest.measure == "answer" and len(run.choice) and not len(run.failures)
    items = {it.item_id: it for it in load(name, s.data_path, video_root=s.video_root)}
    if name == "tempcompass":
        assert {items[i].labels["format"] for i in run.choice["item_id"]} <= {"multi-choice", "caption_matching"}
    read = spec(name).answer_parser("choice")
    for _, row in run.choice.iterrows():
        item = items[row["item_id"]]
        shown = [item.texts[o] for o in row["options"]]
        index = read(row["answer"], shown, item=item, order=list(row["options"])) if row["answer"] != "None" else -1
        assert row["choice"] == (row["options"][index] if index >= 0 else -1), row["answer"]
    # the fixture answers MVP's and TemporalBench's prompts with letters; TempCompass' and TVBench's with "No", "NoA",
    # "BA" or "Yes", which their rules read as no option (tests/scoring/test_api_benchmarks.py reads parsed ones)
    assert (run.choice["choice"] >= 0).any() == (name in ("mvp", "temporalbench"))


def test_a_probe_asks_as_the_run_did_and_gets_its_answers(served, reference):
    from bench.scoring.probe import probe, run_setup
    from bench.scoring.warm import WarmModels

    run = read_run(reference)
    setup = run_setup(run.manifest)
    assert setup["endpoint"].url == served[0]
    for item in run.items()[:2]:
        found = probe(video=item.clips[0], texts=list(item.texts), models=WarmModels(), cache=None, **setup)
        stored = run.pair[run.pair["item_id"] == item.item_id].sort_values("text")["score"].tolist()
        assert [round(s, 6) if s == s else "nan" for s in found.scores] == \
            [round(s, 6) if s == s else "nan" for s in stored]


def test_the_request_cap_stops_the_run_as_an_interrupt_and_it_resumes(served, sample, reference, tmp_path, capsys):
    url, model = served
    proxy = FaultProxy(url)
    out = tmp_path / "capped"
    try:
        code = main(_args(sample, proxy.url, model, out, "--max-requests", "4", "--concurrency", "1"))
        sent = sum(proxy.seen.values())
        assert main(_args(sample, proxy.url, model, out)) == 0
    finally:
        proxy.close()
    shown = capsys.readouterr()
    assert code == 3 and "--max-requests 4 reached" in shown.err and "run the same command again" in shown.err
    assert sent == 4  # the check and three answers: the fifth request was never sent
    assert sum(proxy.seen.values()) == sent + 1 + len(read_responses(out)) - 3
    pd.testing.assert_frame_equal(_answers(out), _answers(reference), check_exact=True)
