"""Prompt snapshots: the exact text each benchmark's protocol sends through a Video-LLM's chat template."""

from __future__ import annotations

import pytest

from bench.registry import spec
from bench.scoring import prompts
from bench.scoring.families import load_backend
from bench.scoring.protocols import make_protocol

CAPTION = "a red square moves from left to right"
FOIL = "a red square moves from right to left"
LABELS = {"question": "Which way does the square move?"}  # the item labels a prompt may name (MVP's question)

SNAPSHOTS = {
    ("entail", "velociti"): (
        "<|im_start|>user\n<|vision_start|><|video_pad|><|vision_end|>Carefully watch the video and pay attention to "
        "the sequence of events, the details and actions of persons.\nHere is a caption that describes the video: "
        "a red square moves from left to right\nBased on your observation, does the given video entail the caption? "
        "Just answer with either Yes or No. <|im_end|>\n<|im_start|>assistant\n"),
    ("entail", "videocon"): (
        "<|im_start|>user\n<|vision_start|><|video_pad|><|vision_end|>Does this video entail the description: "
        "\"a red square moves from left to right\"?<|im_end|>\n<|im_start|>assistant\n"),
    ("entail", "vilma"): (
        "<|im_start|>user\n<|vision_start|><|video_pad|><|vision_end|>Does the following caption describe the video? "
        "Caption: a red square moves from left to right\nAnswer with either Yes or No.<|im_end|>\n"
        "<|im_start|>assistant\n"),
    ("mc", "velociti"): (
        "<|im_start|>user\n<|vision_start|><|video_pad|><|vision_end|>Carefully watch the video and pay attention to "
        "the sequence of events, the details and actions of persons. Here are two captions that describe the video. "
        "A) a red square moves from left to right B) a red square moves from right to left\nBased on your "
        "observation, select the caption that best describes the video. Just print either A or B.<|im_end|>\n"
        "<|im_start|>assistant\n"),
    ("mc", "vinoground"): (
        "<|im_start|>user\n<|vision_start|><|video_pad|><|vision_end|>Which caption best describes this video?\n"
        "A. a red square moves from left to right\nB. a red square moves from right to left\nAnswer with the option's "
        "letter from the given choices directly. Please only output 1 English character.<|im_end|>\n"
        "<|im_start|>assistant\n"),
    ("mc", "mvp"): (
        "<|im_start|>user\n<|vision_start|><|video_pad|><|vision_end|>Question: Which way does the square move?\n"
        "Option:\n(A) a red square moves from left to right\n(B) a red square moves from right to left \nEven when "
        "unsure, always answer with a single letter from A or B, format exactly like: 'Answer: A/B'.<|im_end|>\n"
        "<|im_start|>assistant\n"),
    ("entail", "mvp"): (
        "<|im_start|>user\n<|vision_start|><|video_pad|><|vision_end|>Question: Which way does the square move?\n"
        "Proposed answer: a red square moves from left to right\nIs the proposed answer correct? Answer with either "
        "Yes or No.<|im_end|>\n<|im_start|>assistant\n"),
    ("mc", "temporalbench"): (
        "<|im_start|>user\n<|vision_start|><|video_pad|><|vision_end|>Which caption best describes this video?\n"
        "A. a red square moves from left to right\nB. a red square moves from right to left\nAnswer with the option's "
        "letter from the given choices directly.<|im_end|>\n<|im_start|>assistant\n"),
    ("mc", "vitatecs"): (
        "<|im_start|>user\n<|vision_start|><|video_pad|><|vision_end|>Which of the following best describes the "
        "content of the video: \n(A) A red square moves from left to right. \n(B) A red square moves from right to "
        "left.\nPlease response with a single letter (A or B):<|im_end|>\n<|im_start|>assistant\n"),
}


@pytest.fixture(scope="module")
def qwen(tiny):
    return load_backend("videollm", tiny("qwen2vl"))


@pytest.mark.parametrize("protocol, benchmark", sorted(SNAPSHOTS))
def test_rendered_prompt_snapshots(qwen, protocol, benchmark):
    asked = make_protocol(protocol, spec(benchmark))
    if protocol == "entail":
        text = prompts.render_entail(asked.template, CAPTION, LABELS)
    else:
        text = prompts.render_choice(asked.template, [CAPTION, FOIL], asked.prompt_name, LABELS)
    assert qwen.render(text, True) == SNAPSHOTS[(protocol, benchmark)]
    assert asked.describe()["name"] == asked.prompt_name and asked.describe()["template"] == asked.template


def test_choice_templates_for_many_options_and_custom_prompts():
    assert prompts.render_choice(prompts.PROMPTS["choice"], ["x", "y", "z"]).splitlines()[1:4] == ["A. x", "B. y",
                                                                                                 "C. z"]
    with pytest.raises(ValueError, match="takes two options"):
        prompts.render_choice(prompts.PROMPTS["vinoground-text"], ["x", "y", "z"])
    assert prompts.resolve("Is this {caption}?", None, "entail") == ("custom", "Is this {caption}?")
    assert prompts.resolve(None, None, "entail") == ("yes-no", prompts.PROMPTS["yes-no"])
    with pytest.raises(ValueError, match="neither a known name"):
        prompts.resolve("Pick {option_a}", None, "choice")


def test_prompts_fill_item_labels_and_name_a_missing_one():
    template = "Q: {question}\n{options}"
    rendered = prompts.render_choice(template, ["x", "y"], labels=LABELS)
    assert rendered == "Q: Which way does the square move?\nA. x\nB. y"
    assert prompts.resolve(template, None, "choice") == ("custom", template)
    assert prompts.resolve("Is it {caption} at {place}?", None, "entail")[0] == "custom"
    with pytest.raises(ValueError, match=r"the prompt names \{question\}: no such label on this item \(its labels: "
                                         r"source\)"):
        prompts.render_choice(prompts.PROMPTS["mvp"], ["x", "y"], "mvp", {"source": "clevrer"})
    with pytest.raises(ValueError, match=r"names \{question\}"):
        prompts.render_entail(prompts.PROMPTS["answer-yes-no"], "x")

