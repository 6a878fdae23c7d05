"""The API client's parts without a server: recorded OpenAI responses (hand-written in the documented format, in
tests/scoring/openai/) read both ways, each paper's answer parsers, retries' waits, caps, key redaction, endpoint
checks, the response log torn by a kill, the token estimate, and a dry run that sends nothing (a listening proxy
counts the connections)."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

from bench.config import DataSource, Endpoint, ScoreConfig
from bench.frames import Frames
from bench.frames.decode import Fit
from bench.importers.common import parse_letter, parse_vitatecs_option, parse_yes_no
from bench.importers.velociti import parse_mcq_answer
from bench.items import Clip, Item
from bench.registry import spec
from bench.scoring.api.answers import AnsweredProtocol, answer_logprobs, answer_text, reply_of
from bench.scoring.api.client import Budget, RequestCapReached, chat_url, redact, retry_after
from bench.scoring.api.estimate import image_tokens, request_tokens, run_cost
from bench.scoring.api.messages import AskSettings, chat_body, request_key, visual_parts
from bench.scoring.chunks import planned_requests
from bench.scoring.protocols import make_protocol
from bench.store.responses import RESPONSES, ResponseLog, read_responses, usage_totals
from fixtures_api import FaultProxy

RECORDED = Path(__file__).parent / "openai"


def recorded(name: str) -> dict:
    return reply_of(json.loads((RECORDED / f"{name}.json").read_text()))


def asked(protocol: AnsweredProtocol, benchmark: str, texts=("x", "y")) -> AnsweredProtocol:
    """``protocol`` after it has asked item "i" (one clip, ``texts``), as a run asks before it reads the answers."""
    protocol.requests(Item(benchmark, "i", "s", (Clip("v.mp4"),), tuple(texts), ((0,),)))
    return protocol


def test_recorded_logprobs_give_the_answer_tokens_probabilities():
    reply = recorded("entail-logprobs")
    assert reply["model"] == "gpt-4o-2024-08-06" and reply["system_fingerprint"] == "fp_50cad350e4"
    assert reply["usage"]["prompt_tokens"] == 2148 and reply["logprobs"]
    yes, no = answer_logprobs(reply, ["Yes", "No"])
    assert yes == pytest.approx(np.logaddexp(-0.31, -3.2)) and no == pytest.approx(-1.4)  # "yes" is another word
    protocol = AnsweredProtocol(make_protocol("entail", spec("velociti")), "logprobs")
    keys = [("item", 0, 0)]
    row = protocol.rows(keys, np.array([reply], dtype=object)).pair[0]
    assert row["logit_yes"] == pytest.approx(yes) and row["logit_no"] == pytest.approx(no)
    assert row["score"] == pytest.approx(math.exp(yes) / (math.exp(yes) + math.exp(no)))
    assert row["answer"] == "Yes" and protocol.measure == "p_yes" and protocol.kinds == {"answered": 1}


def test_recorded_letter_logprobs_choose_as_a_local_model_does():
    reply = recorded("mc-logprobs")
    protocol = asked(AnsweredProtocol(make_protocol("mc", spec("velociti")), "logprobs"), "velociti")
    row = protocol.rows([("i", "text", 0, [1, 0])], np.array([reply], dtype=object)).choice[0]
    assert row["logits"] == pytest.approx([-2.25, -0.12]) and row["choice"] == 0  # B holds option 0
    assert protocol.measure == "letter_logits"


def test_an_answer_without_its_words_among_the_logprobs_is_a_bad_answer():
    reply = recorded("no-answer-token")
    entail = AnsweredProtocol(make_protocol("entail", spec("vitatecs")), "logprobs")
    row = entail.rows([("i", 0, 1)], np.array([reply], dtype=object)).pair[0]
    assert math.isnan(row["score"]) and row["answer"] == "The" and entail.kinds == {"unparsed": 1}
    mc = asked(AnsweredProtocol(make_protocol("mc", spec("vitatecs")), "logprobs"), "vitatecs")
    row = mc.rows([("i", "text", 0, [0, 1])], np.array([reply], dtype=object)).choice[0]
    assert row["choice"] == -1 and all(math.isnan(v) for v in row["logits"])


@pytest.mark.parametrize("name", ["refusal", "content-filter"])
def test_a_refusal_is_no_answer_whatever_its_words(name):
    reply = recorded(name)
    assert answer_text(reply) == "None"
    protocol = AnsweredProtocol(make_protocol("entail", spec("velociti")), "text", spec("velociti").answer_parser)
    row = protocol.rows([("i", 0, 0)], np.array([reply], dtype=object)).pair[0]
    assert math.isnan(row["score"]) and row["answer"] == "None" and protocol.kinds == {"refusal": 1}


def test_text_answers_are_read_by_the_papers_parser_and_stored_as_an_import_stores_them():
    reply = recorded("text-answer")
    assert not reply["logprobs"] and reply["system_fingerprint"] is None
    protocol = AnsweredProtocol(make_protocol("entail", spec("videocon")), "text", spec("videocon").answer_parser)
    assert protocol.measure == "answer"
    row = protocol.rows([("i", 0, 0)], np.array([reply], dtype=object)).pair[0]
    assert row["score"] == 1.0 == parse_yes_no(reply["text"]) and row["answer"] == reply["text"]
    empty = protocol.rows([("i", 0, 1)], np.array([{"text": ""}], dtype=object)).pair[0]
    assert empty["answer"] == "None" and math.isnan(empty["score"]) and protocol.kinds["empty"] == 1


@pytest.mark.parametrize("answer, index", [("A", 0), ("b) the second", 1), ("C", -1), ("", -1), (" A", -1)])
def test_vinogrounds_reader_takes_the_first_character(answer, index):
    assert parse_letter(answer, ["x", "y"]) == index


@pytest.mark.parametrize("answer, index", [("A", 0), ("B", 1), ("A) x", -1), ("A.", -1), ("", -1), ("a", -1),
                                           ("A because", 0)])
def test_velocitis_reader_takes_the_first_word_exactly(answer, index):
    assert parse_mcq_answer(answer, ["x", "y"]) == index


@pytest.mark.parametrize("answer, index", [
    ("Surely a man closes the door", 1), ("The man closes the door", -1), ("a man opens the door.", 0), ("A", 0),
    ("B.", 1), ("B) the door", 1), ("(B) whatever", 1), ("a man opens the door, not a man closes the door", -1),
    ("Option B", -1)])
def test_vitatecs_reader_follows_lmms_eval(answer, index):
    assert parse_vitatecs_option(answer, ["A man opens the door.", "a man closes the door"]) == index


def test_each_benchmark_reads_letters_its_own_way():
    replies = np.array([{"text": "A) first"}, {"text": "a"}], dtype=object)
    keys = [("i", "text", 0, [0, 1]), ("i", "text", 0, [1, 0])]
    found = {}
    for name in ("velociti", "vinoground"):
        protocol = asked(AnsweredProtocol(make_protocol("mc", spec(name)), "text", spec(name).answer_parser), name)
        found[name] = [r["choice"] for r in protocol.rows(keys, replies).choice]
    assert found == {"velociti": [-1, -1], "vinoground": [0, 1]}


def test_velocitis_closed_models_are_asked_its_closed_prompt():
    from bench.scoring import prompts

    closed = make_protocol("entail", spec("velociti"), closed=True).describe()
    assert closed["name"] == "velociti-entail-closed"
    assert prompts.PROMPTS["velociti-entail"] == closed["template"] + " "  # gemini/eval.py: no trailing space
    assert make_protocol("entail", spec("videocon"), closed=True).describe()["name"] == "videocon-entail"


def test_waits_follow_retry_after_in_every_form():
    from email.utils import formatdate
    import time

    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after({"retry-after": "100000"}) == 600.0
    assert 8 <= retry_after({"retry-after": formatdate(time.time() + 10, usegmt=True)}) <= 10
    assert retry_after({}) is None and retry_after(None) is None


def test_caps_stop_before_the_request_that_would_pass_them():
    budget = Budget(max_requests=2)
    budget.take(10)
    budget.take(10)
    with pytest.raises(RequestCapReached, match="--max-requests 2"):
        budget.take(10)
    tokens = Budget(max_tokens=100)
    tokens.take(60)
    with pytest.raises(RequestCapReached, match="--token-budget"):
        tokens.take(60)
    assert issubclass(RequestCapReached, KeyboardInterrupt)


def test_keys_are_cut_out_of_messages():
    key = "sk-proj-abcdefghijklmnop1234"
    assert redact(f"Incorrect API key provided: {key}.", key) == "Incorrect API key provided: [key]."
    assert "AIza" not in redact("key AIzaSyA-1234567890abcdefghijklmnopqrs is invalid", None)
    assert redact("Incorrect API key provided: sk-proj-****************1234", None).count("[key]") == 1


def test_endpoints_with_credentials_or_bad_values_are_refused():
    for url in ("https://user:secret@api.example.com/v1", "https://api.example.com/v1?key=secret", "ftp://x/v1",
                "api.openai.com/v1"):
        with pytest.raises(ValueError) as err:
            Endpoint(url).check()
        assert "secret" not in str(err.value)
    with pytest.raises(ValueError, match="concurrency"):
        Endpoint("http://127.0.0.1:8000/v1", concurrency=0).check()
    Endpoint("https://generativelanguage.googleapis.com/v1beta/openai/", key_env="GEMINI_API_KEY").check()
    assert chat_url("http://127.0.0.1:8000/v1/") == "http://127.0.0.1:8000/v1/chat/completions"
    assert chat_url("https://x/v1/chat/completions") == "https://x/v1/chat/completions"
    assert "secret" not in json.dumps(Endpoint("http://127.0.0.1:1/v1", key_env="MY_KEY").redacted())


def test_the_response_log_survives_a_torn_line(tmp_path):
    log = ResponseLog(tmp_path)
    log.add({"key": "a", "text": "Yes", "usage": {"prompt_tokens": 5}, "model": "m", "attempts": 2,
             "faults": ["HTTP 429"]})
    with open(tmp_path / RESPONSES, "a") as fh:
        fh.write('{"key": "b", "text": "N')  # a kill in the middle of a write
    assert [r["key"] for r in read_responses(tmp_path)] == ["a"]
    again = ResponseLog(tmp_path)
    assert len(again) == 1 and again.get("b") is None
    again.add({"key": "b", "text": "No", "usage": {"prompt_tokens": 7}, "model": "m", "attempts": 1, "faults": []})
    records = read_responses(tmp_path)
    assert [r["key"] for r in records] == ["a", "b"]
    totals = usage_totals(records)
    assert totals["tokens"] == {"prompt_tokens": 12} and totals["attempts"] == 3 and totals["faults"] == {
        "HTTP 429": 1}


def test_image_tokens_follow_openais_published_examples():
    assert image_tokens(1024, 1024) == 765
    assert image_tokens(2048, 4096) == 1105
    assert image_tokens(4096, 8192, "low") == 85
    assert image_tokens(512, 288) == 255


def _frames(count: int, seed: int, indices=None, fps: float = 30.0) -> Frames:
    """``count`` random frames of a clip at ``fps``, taken at ``indices`` (every frame from the first by default)."""
    indices = list(range(count)) if indices is None else list(indices)
    pixels = np.random.default_rng(seed).integers(0, 255, (count, 36, 64, 3), dtype=np.uint8)
    return Frames(pixels, indices, [i / fps for i in indices], fps, "v.mp4", window=(0, max(indices) + 1))


def test_a_request_holds_the_frames_as_jpeg_images_before_the_question():
    frames = _frames(3, 0)
    settings = AskSettings.of({"detail": "low"})
    body = chat_body("gpt-4o", "Is it?", visual_parts(frames, settings), settings, "logprobs")
    content = body["messages"][0]["content"]
    assert [p["type"] for p in content] == ["image_url"] * 3 + ["text"] and content[-1]["text"] == "Is it?"
    assert content[0]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert body["logprobs"] is True and body["max_tokens"] == 1 and body["temperature"] == 0.0
    again = chat_body("gpt-4o", "Is it?", visual_parts(frames, settings), settings, "logprobs")
    assert request_key(body) == request_key(again)
    assert request_tokens(body) == 7 + 2 + 3 * 85
    blind = Frames(np.zeros((0, 36, 64, 3), np.uint8), [], [], 30.0, "v.mp4")
    assert visual_parts(blind, settings) == [] and visual_parts(None, settings) == []
    with pytest.raises(ValueError, match="unknown backend option"):
        AskSettings.of({"image_sise": 3})


def _sent_video(frames: Frames, **options):
    """The MP4 ``send=video`` makes of ``frames``, decoded: (its stream's average rate, each frame's time and
    pixels)."""
    import base64
    import io

    import av

    (part,) = visual_parts(frames, AskSettings.of({"send": "video", **options}))
    url = part["video_url"]["url"]
    assert part["type"] == "video_url" and url.startswith("data:video/mp4;base64,")
    with av.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as container:
        stream = container.streams.video[0]
        decoded = [(float(f.time), f.to_ndarray(format="rgb24")) for f in container.decode(stream)]
        return float(stream.average_rate), decoded


def test_video_mode_sends_every_sampled_frame_once_in_one_mp4():
    frames = _frames(5, 1)
    rate, decoded = _sent_video(frames, video_fps=2.0)
    assert rate == 2.0 and [t for t, _ in decoded] == [n / 2.0 for n in range(len(frames.array))]
    assert len(decoded) == len(frames.array) and decoded[0][1].shape == frames.array[0].shape


def test_video_mode_shows_each_frame_at_its_true_time_in_the_clip_whatever_the_feeding_order():
    frames = _frames(5, 2, indices=[3, 9, 16, 22, 29], fps=30.0)
    metadata = frames.video_metadata()
    true = [(i - metadata["frames_indices"][0]) / metadata["fps"] for i in metadata["frames_indices"]]
    _, decoded = _sent_video(frames)
    assert [t for t, _ in decoded] == pytest.approx(true, abs=1e-3) and len(decoded) == len(frames.array)
    order = [4, 3, 2, 1, 0]  # a reversed control feeds the last frame first: the video is played that way
    fed = dataclasses.replace(frames, array=frames.array[order], indices=[frames.indices[i] for i in order],
                              timestamps=[frames.timestamps[i] for i in order])
    _, played = _sent_video(fed)
    assert [t for t, _ in played] == pytest.approx(true, abs=1e-3)
    shown = played[0][1].astype(int)
    assert np.abs(shown - frames.array[4]).mean() < np.abs(shown - frames.array[0]).mean(), "the first fed first"


def test_the_long_side_fit_never_enlarges():
    assert Fit("longest_edge", edge=512).target(1920, 1080) == (512, 288)
    assert Fit("longest_edge", edge=512).target(320, 240) == (320, 240)


def _config(sample, url, out, **kwargs):
    s = sample["velociti"]
    return ScoreConfig(DataSource.of("velociti", s.data_path, s.video_root), "gpt-4o", frame_policy="uniform:k=4",
                       out=out, endpoint=Endpoint(url), **kwargs)


def test_a_dry_run_counts_the_runs_requests_and_sends_nothing(sample, tmp_path, monkeypatch):
    import bench.scoring.hub as hub

    monkeypatch.setattr(hub, "hub_reachable", lambda *a, **k: pytest.fail("the hub was asked"))
    proxy = FaultProxy(None)
    try:
        found = run_cost(_config(sample, proxy.url, tmp_path / "run"))
        from bench.cli import main

        assert main(["score", "velociti", str(sample["velociti"].data_path), "--video-root",
                     str(sample["velociti"].video_root), "--endpoint", proxy.url, "--model", "gpt-4o", "--frames",
                     "uniform:k=4", "--out", str(tmp_path / "run"), "--dry-run"]) == 0
    finally:
        proxy.close()
    assert proxy.connections == 0 and not (tmp_path / "run").exists()
    items = spec("velociti").load(sample["velociti"].data_path, video_root=sample["velociti"].video_root).items
    planned = planned_requests(make_protocol("entail", spec("velociti"), closed=True), items, False)
    assert found.requests == len(planned) and found.items == len(items) and found.stored == 0
    assert found.images == 4 * len(planned) and found.images_exact
    assert found.output_tokens == 32 * len(planned)
    assert found.text_tokens == sum(7 + math.ceil(len(r.question) / 4) for r, _ in planned)


def test_a_study_dry_run_prints_each_api_run_per_benchmark(sample, tmp_path, capsys):
    from bench.cli import main

    proxy = FaultProxy(None)
    study = tmp_path / "study.toml"
    study.write_text(f"""
[study]
runs = "{tmp_path / 'runs'}"
[[benchmarks]]
name = "velociti"
data = "{sample['velociti'].data_path}"
videos = "{sample['velociti'].video_root}"
[[benchmarks]]
name = "vinoground"
data = "{sample['vinoground'].data_path}"
videos = "{sample['vinoground'].video_root}"
[[models]]
name = "GPT-4o"
model = "gpt-4o"
endpoint = "{proxy.url}"
api_key_env = "NO_SUCH_KEY"
concurrency = 4
frames = "uniform:k=4"
protocol = "mc"
""")
    try:
        assert main(["study", str(study), "--dry-run"]) == 0
    finally:
        proxy.close()
    out = capsys.readouterr().out
    assert proxy.connections == 0
    assert "velociti GPT-4o:" in out and "vinoground GPT-4o:" in out and "nothing sent" in out
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("args, says", [
    (["--concurrency", "2"], "--concurrency applies to models served elsewhere"),
    (["--dry-run"], "--dry-run applies to models served elsewhere"),
    (["--family", "api"], "needs --endpoint URL"),
    (["--endpoint", "https://u:pw@x/v1"], "carries credentials"),
    (["--endpoint", "http://127.0.0.1:9/v1", "--family", "textlm"], "--endpoint is for models served elsewhere"),
    (["--endpoint", "http://127.0.0.1:9/v1", "-b", "answers=maybe", "--dry-run"], "answers must be one of"),
])
def test_api_mistakes_are_one_line(sample, tmp_path, capsys, args, says):
    from bench.cli import main

    s = sample["velociti"]
    code = main(["score", "velociti", str(s.data_path), "--video-root", str(s.video_root), "--model", "gpt-4o",
                 "--out", str(tmp_path / "run"), *args])
    err = capsys.readouterr().err
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1 and "pw" not in err
