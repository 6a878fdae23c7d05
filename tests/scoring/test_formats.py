"""Protocols that ask per question format and per item: TempCompass' formats (which protocol asks which, with which
prompt), the items' own questions and option names, TVBench's option lines, and the one-line errors when a prompt or
a protocol cannot ask the data."""

from __future__ import annotations

import pytest

from bench.config import DataSource, ScoreConfig
from bench.items import Clip, Item
from bench.registry import BenchmarkSpec, spec
from bench.scoring import prompts
from bench.scoring.families import load_backend
from bench.scoring.plan import make_plan
from bench.scoring.protocols import make_protocol


def _item(fmt: str, texts: tuple[str, ...], truth: tuple[int, ...] = (0,), **labels) -> Item:
    return Item("tempcompass", f"{fmt}/v/direction/0", "direction", (Clip("v.mp4"),), texts, (truth,),
                {"format": fmt, **labels})


MC = _item("multi-choice", ("up", "left to right", "down"), question="Which way does it move?")
YES_NO = _item("yes_no", ("Is it moving up?",), (), question="Is it moving up?")
CAPTIONS = _item("caption_matching", ("It goes up.", "It goes right."), (1,), question="Which caption matches?",
                 option_names=["Option 1", "Option 2"])
CAPTIONING = _item("captioning", ("{'a': 1}", "{'a': 2}"), question="Describe it.")


def test_each_protocol_asks_the_formats_the_registry_names_with_their_prompts():
    tempcompass = spec("tempcompass")
    asked = {name: {it.labels["format"] for it in (MC, YES_NO, CAPTIONS, CAPTIONING)
                    if make_protocol(name, tempcompass).asks(it)} for name in ("similarity", "entail", "mc", "loglik")}
    assert asked == {"similarity": {"multi-choice", "caption_matching"},
                     "entail": {"multi-choice", "yes_no", "caption_matching"},
                     "mc": {"multi-choice", "caption_matching"}, "loglik": {"multi-choice", "caption_matching"}}
    entail = make_protocol("entail", tempcompass)
    assert [r.question for r, _ in entail.requests(YES_NO)] == ["Is it moving up?\nPlease answer yes or no:"]
    assert [r.question for r, _ in entail.requests(CAPTIONS)][0] == prompts.PROMPTS["yes-no"].format(
        caption="It goes up.")
    assert entail.describe()["name"] == "caption_matching: yes-no; multi-choice: yes-no; yes_no: tempcompass-yes-no"
    custom = make_protocol("entail", tempcompass, "Is it so: {caption}?")
    assert [r.question for r, _ in custom.requests(YES_NO)] == ["Is it so: Is it moving up??"]


def test_choices_carry_the_items_question_and_option_names_in_every_order():
    mc = make_protocol("mc", spec("tempcompass"))
    asked = mc.requests(MC)
    assert [k[3] for _, k in asked] == [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
    assert asked[1][0].question == ("Which way does it move?\nA. left to right\nB. down\nC. up\n"
                                    "Please directly give the best option:")
    assert asked[0][0].answers == ("A", "B", "C")
    named = mc.requests(CAPTIONS)
    prompt = "\nPlease directly give the best option:"
    assert [r.question for r, _ in named] == [
        "Which caption matches?\nOption 1: It goes up.\nOption 2: It goes right." + prompt,
        "Which caption matches?\nOption 1: It goes right.\nOption 2: It goes up." + prompt]
    assert {r.answers for r, _ in named} == {("1", "2")}


def test_tvbench_asks_its_question_with_lettered_lines(tiny):
    item = Item("tvbench", "action_antonym/0", "Action Antonym", (Clip("a.mp4"),), ("sitting down", "standing up"),
                ((1,),), {"question": "What is the person doing?"})
    asked = make_protocol("mc", spec("tvbench")).requests(item)[0][0].question
    assert asked.endswith("\nQuestion: What is the person doing?\nOptions:\n(A) sitting down\n(B) standing up\n"
                          "Only give the best option.")
    assert asked.startswith("Carefully watch the video and pay attention to the cause and sequence of events")
    qwen = load_backend("videollm", tiny("qwen2vl"))
    assert qwen.render(asked, True) == ("<|im_start|>user\n<|vision_start|><|video_pad|><|vision_end|>" + asked +
                                        "<|im_end|>\n<|im_start|>assistant\n")
    entail = make_protocol("entail", spec("tvbench")).requests(item)
    assert entail[1][0].question == ("Question: What is the person doing?\nProposed answer: standing up\nIs the "
                                     "proposed answer correct? Answer with either Yes or No.")


def test_a_protocol_no_format_lists_a_missing_label_or_too_many_options_is_one_line_before_a_model_loads(sample, tiny):
    mixed = BenchmarkSpec(name="toy", title="Toy", paper="-", loader="x:y", metrics="x", formats={"a": {"mc": None}})
    with pytest.raises(ValueError, match=r"Toy asks none of its question formats \(a\) with the entail protocol"):
        make_protocol("entail", mixed)
    s = sample["vitatecs"]
    config = ScoreConfig(DataSource.of("vitatecs", s.data_path, s.video_root, {}), tiny("qwen2vl"),
                         family="videollm", protocol="entail", prompt="{question} {caption}?")
    with pytest.raises(ValueError, match=r"the prompt 'custom' names \{question\}: no such label on vitatecs item .* "
                                         r"\(its labels: "):
        make_plan(config)
    s = sample["tvbench"]
    config = ScoreConfig(DataSource.of("tvbench", s.data_path, s.video_root, {}), tiny("qwen2vl"), family="videollm",
                         protocol="mc", prompt="vitatecs-mc")
    with pytest.raises(ValueError, match=r"the prompt 'vitatecs-mc' shows two options; tvbench item .* has [3-9] \(a "
                                         r"prompt with \{options\} shows any number\)"):
        make_plan(config)
    only = sample["tempcompass"].data_path / "questions" / "yes_no.json"
    config = ScoreConfig(DataSource.of("tempcompass", only, sample["tempcompass"].video_root, {}), tiny("qwen2vl"),
                         family="videollm", protocol="mc")
    with pytest.raises(ValueError, match=r"the mc protocol asks TempCompass's caption_matching, multi-choice items, "
                                         r"and the data holds only yes_no items"):
        make_plan(config)
