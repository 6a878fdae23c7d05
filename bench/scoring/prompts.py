"""The benchmarks' published protocol prompts by name, and rendering of user templates.

Entailment templates take ``{caption}``; two-option multiple-choice templates take ``{option_a}`` and ``{option_b}``;
templates for any number of options take ``{options}`` (lines ``A. ...``, or as :data:`OPTION_LINES` styles them for
the prompt; an item that names its options, label ``option_names``, gets lines ``<name>: <text>``). Any other
placeholder names an item label, filled in from each item (``{question}``: the question MVP, TempCompass and TVBench
ask per item); a label an item lacks is a one-line error, checked for every item before a model loads
(:meth:`bench.scoring.protocols.Asking.check`). The text is sent as the user turn of the model's own chat template,
with the video before it.
"""

from __future__ import annotations

import string
from typing import Any, Mapping, Sequence

PROMPTS: dict[str, str] = {
    # VELOCITI vidllm_eval.py (verbatim, trailing space included)
    "velociti-entail": (
        "Carefully watch the video and pay attention to the sequence of events, the details and actions of persons.\n"
        "Here is a caption that describes the video: {caption}\nBased on your observation, does the given video "
        "entail the caption? Just answer with either Yes or No. "),
    # VELOCITI gemini/eval.py L90 (verbatim): the closed models' copy, without the trailing space
    "velociti-entail-closed": (
        "Carefully watch the video and pay attention to the sequence of events, the details and actions of persons.\n"
        "Here is a caption that describes the video: {caption}\nBased on your observation, does the given video "
        "entail the caption? Just answer with either Yes or No."),
    # VELOCITI vidllm_eval.py (verbatim; gemini/eval.py L92 asks closed models the same); asked with the positive as
    # A, then as B
    "velociti-mcq": (
        "Carefully watch the video and pay attention to the sequence of events, the details and actions of persons. "
        "Here are two captions that describe the video. A) {option_a} B) {option_b}\nBased on your observation, "
        "select the caption that best describes the video. Just print either A or B."),
    # VideoCon src/prepare_data_for_inference.py: the human turn of the mPLUG-Owl conversation
    "videocon-entail": 'Does this video entail the description: "{caption}"?',
    # Vinoground (lmms-eval, older prompt text, verbatim)
    "vinoground-text": (
        "Which caption best describes this video?\nA. {option_a}\nB. {option_b}\nAnswer with the option's letter "
        "from the given choices directly. Please only output 1 English character."),
    "vinoground-video": (
        "Which video segment matches this caption? Note: The video contains two segments separated by a 2-second "
        "black frame.\nCaption: {caption}\nA. The first fragment (before black frame)\nB. The second fragment (after "
        "black frame)\nAnswer with the option's letter from the given choices directly. Please only output 1 English "
        "character."),
    # VITATECS lmms_eval/tasks/vitatecs/utils.py: prompt + post_prompt (verbatim)
    "vitatecs-mc": ("Which of the following best describes the content of the video: \n(A) {option_a} \n(B) {option_b}"
                    "\nPlease response with a single letter (A or B):"),
    # MVP tasks/mvp/utils.py mvp_doc_to_text L52-56 with the post_prompt of tasks/mvp/_default_template_yaml L5
    # (verbatim; the pre_prompt is read but not used, L58)
    "mvp": ("Question: {question}\nOption:\n(A) {option_a}\n(B) {option_b} \nEven when unsure, always answer with a "
            "single letter from A or B, format exactly like: 'Answer: A/B'."),
    # TemporalBench: the released questions (README L193), sent as they are (eval/llava-onevision.py L77)
    "temporalbench": ("Which caption best describes this video?\nA. {option_a}\nB. {option_b}\nAnswer with the "
                      "option's letter from the given choices directly."),
    # TempCompass: the question as released (questions/*.json) and run_qwen2_vl.py L49-54's answer prompt after it
    "tempcompass-choice": "{question}\n{options}\nPlease directly give the best option:",
    "tempcompass-yes-no": "{caption}\nPlease answer yes or no:",
    # TVBench infer.ipynb (cell 11: system prompt and question_prompt, system_llm=True) around vqa_dataset.py L131-142
    "tvbench-mc": (
        "Carefully watch the video and pay attention to the cause and sequence of events, the detail and movement of "
        "objects, and the action and pose of persons. Based on your observations, select the best option that "
        "accurately addresses the question.\nQuestion: {question}\nOptions:\n{options}\nOnly give the best option."),
    # Ours, for benchmarks whose papers publish no generative prompt (ViLMA) and for more than two options
    "yes-no": "Does the following caption describe the video? Caption: {caption}\nAnswer with either Yes or No.",
    "choice": ("Which caption best describes the video?\n{options}\nAnswer with the option's letter from the given "
               "choices directly."),
    # Ours, for questions with candidate answers (MVP, TVBench): is one candidate the right answer?
    "answer-yes-no": ("Question: {question}\nProposed answer: {caption}\nIs the proposed answer correct? Answer with "
                      "either Yes or No."),
}
# The placeholders of the texts a question is about; any other placeholder names an item label.
TEXT_FIELDS = frozenset({"caption", "option_a", "option_b", "options"})
# Ours, where a benchmark names no prompt of its own (``BenchmarkSpec.prompts``).
FALLBACK = {"entail": "yes-no", "choice": "choice"}
CLOSED = "closed_"
"""Prefix of a ``BenchmarkSpec.prompts`` kind a paper asked closed (API) models in other words than open ones."""
# lmms-eval's VITATECS task (utils.py, process_option_for_question): a "." appended when missing, then capitalize()
OPTION_STYLE = {"vitatecs-mc": lambda text: (text if text.endswith(".") else text + ".").capitalize()}
# How an ``{options}`` line reads, per prompt (default ``A. text``): TVBench vqa_dataset.py L137 writes ``(A) text``
OPTION_LINES = {"tvbench-mc": "({letter}) {text}"}
OPTION_NAMES = "option_names"  # the item label naming its options (``Caption A``, ``Option 1``...), in letter order


def fields(template: str) -> set[str]:
    """The ``{placeholders}`` of a template."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def label_values(template: str, labels: Mapping[str, Any], item: str = "this item",
                 name: str | None = None) -> dict[str, Any]:
    """The values of a template's item-label placeholders from an item's ``labels``; a label the item lacks is a
    one-line error naming the prompt (``name``) and ``item``."""
    wanted = fields(template) - TEXT_FIELDS
    missing = sorted(w for w in wanted if labels.get(w) is None)
    if missing:
        prompt = f"the prompt {name!r}" if name else "the prompt"
        raise ValueError(f"{prompt} names {', '.join('{' + m + '}' for m in missing)}: no such label on {item} (its "
                         f"labels: {', '.join(sorted(labels)) or 'none'})")
    return {w: labels[w] for w in wanted}


def render_entail(template: str, caption: str, labels: Mapping[str, Any] | None = None) -> str:
    """A Yes/No question about ``caption``, with the item-label placeholders filled from ``labels``."""
    return template.format(caption=caption, **label_values(template, labels or {}))


def resolve(prompt: str | None, default: str | None, kind: str) -> tuple[str, str]:
    """(name, template) for ``prompt``: a name in :data:`PROMPTS`, a template, or None for ``default`` (the
    benchmark's prompt name for this kind, else ours); ``kind`` is "entail" or "choice"."""
    if prompt is None:
        name = default or FALLBACK[kind]
        return name, PROMPTS[name]
    if prompt in PROMPTS:
        return prompt, PROMPTS[prompt]
    found = fields(prompt) & TEXT_FIELDS
    if kind == "entail" and found != {"caption"} or kind == "choice" and found not in ({"options"},
                                                                                        {"option_a", "option_b"}):
        needs = "{caption}" if kind == "entail" else "{option_a} and {option_b}, or {options}"
        raise ValueError(f"prompt {prompt!r} is neither a known name ({', '.join(sorted(PROMPTS))}) nor a {kind} "
                         f"template with {needs} (and any item labels, such as {{question}})")
    return "custom", prompt


def letters(n: int) -> str:
    """The option letters for ``n`` options."""
    return string.ascii_uppercase[:n]


def answer_words(n: int, option_names: Sequence[str] | None = None) -> tuple[str, ...]:
    """The words that answer a question of ``n`` options: the letters, or the last word of each option's name
    (``Option 1`` -> ``1``, ``Caption A`` -> ``A``)."""
    if option_names:
        return tuple(name.split()[-1] for name in option_names)
    return tuple(letters(n))


def takes(template: str, n: int) -> bool:
    """Whether a choice template can show ``n`` options (a two-option template takes exactly two)."""
    return "options" in fields(template) or n == 2


def render_choice(template: str, options: list[str], name: str | None = None,
                  labels: Mapping[str, Any] | None = None, *, option_names: Sequence[str] | None = None) -> str:
    """A multiple-choice question with ``options`` in letter order (two-option templates need exactly two), styled
    as the protocol ``name`` shows them, with the item-label placeholders filled from ``labels``; ``option_names``
    (one per option) make the lines ``<name>: <text>``."""
    style = OPTION_STYLE.get(name or "", lambda text: text)
    options = [style(o) for o in options]
    values = label_values(template, labels or {})
    if "options" in fields(template):
        if option_names:
            lines = [f"{n}: {o}" for n, o in zip(option_names, options)]
        else:
            line = OPTION_LINES.get(name or "", "{letter}. {text}")
            lines = [line.format(letter=l, text=o) for l, o in zip(letters(len(options)), options)]
        return template.format(options="\n".join(lines), **values)
    if not takes(template, len(options)):
        raise ValueError(f"template takes two options, got {len(options)}")
    return template.format(option_a=options[0], option_b=options[1], **values)
