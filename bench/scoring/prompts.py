"""The benchmarks' published protocol prompts by name, and rendering of user templates.

Entailment templates take ``{caption}``; two-option multiple-choice templates take ``{option_a}`` and ``{option_b}``;
templates for any number of options take ``{options}`` (lines ``A. ...``). The text is sent as the user turn of the
model's own chat template, with the video before it.
"""

from __future__ import annotations

import string

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
    # Ours, for benchmarks whose papers publish no generative prompt (ViLMA) and for more than two options
    "yes-no": "Does the following caption describe the video? Caption: {caption}\nAnswer with either Yes or No.",
    "choice": ("Which caption best describes the video?\n{options}\nAnswer with the option's letter from the given "
               "choices directly."),
}
# Ours, where a benchmark names no prompt of its own (``BenchmarkSpec.prompts``).
FALLBACK = {"entail": "yes-no", "choice": "choice"}
CLOSED = "closed_"
"""Prefix of a ``BenchmarkSpec.prompts`` kind a paper asked closed (API) models in other words than open ones."""
# lmms-eval's VITATECS task (utils.py, process_option_for_question): a "." appended when missing, then capitalize()
OPTION_STYLE = {"vitatecs-mc": lambda text: (text if text.endswith(".") else text + ".").capitalize()}


def fields(template: str) -> set[str]:
    """The ``{placeholders}`` of a template."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def resolve(prompt: str | None, default: str | None, kind: str) -> tuple[str, str]:
    """(name, template) for ``prompt``: a name in :data:`PROMPTS`, a template, or None for ``default`` (the
    benchmark's prompt name for this kind, else ours); ``kind`` is "entail" or "choice"."""
    if prompt is None:
        name = default or FALLBACK[kind]
        return name, PROMPTS[name]
    if prompt in PROMPTS:
        return prompt, PROMPTS[prompt]
    found = fields(prompt)
    if kind == "entail" and found != {"caption"} or kind == "choice" and found not in ({"options"},
                                                                                        {"option_a", "option_b"}):
        needs = "{caption}" if kind == "entail" else "{option_a} and {option_b}, or {options}"
        raise ValueError(f"prompt {prompt!r} is neither a known name ({', '.join(sorted(PROMPTS))}) nor a {kind} "
                         f"template with {needs}")
    return "custom", prompt


def letters(n: int) -> str:
    """The option letters for ``n`` options."""
    return string.ascii_uppercase[:n]


def render_choice(template: str, options: list[str], name: str | None = None) -> str:
    """A multiple-choice question with ``options`` in letter order (two-option templates need exactly two), styled
    as the protocol ``name`` shows them."""
    style = OPTION_STYLE.get(name or "", lambda text: text)
    options = [style(o) for o in options]
    names = fields(template)
    if "options" in names:
        return template.format(options="\n".join(f"{l}. {o}" for l, o in zip(letters(len(options)), options)))
    if len(options) != 2:
        raise ValueError(f"template takes two options, got {len(options)}")
    return template.format(option_a=options[0], option_b=options[1])
