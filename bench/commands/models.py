"""``foilbench models``: every architecture the test suite builds and scores, with what each is given and how, from
the table in :mod:`bench.scoring.architectures`, the families of models served elsewhere (no architecture of their
own: tested against ``transformers serve``), and the families installed packages add."""

from __future__ import annotations

import argparse
import json

from bench.commands.options import add_command

EXAMPLE = """examples:
  foilbench models
  foilbench models --json
  foilbench models --all    # also every other image-text-to-text model type transformers ships, untested

A model whose type is not listed as tested goes through its family's generic path, with one line saying so; a
Video-LLM without a video processor in transformers is refused before scoring (a blind run can still score it).
"""


# The test that builds and scores each tested architecture, by family (``[model type]`` its parameter).
TESTS = {
    "videollm": "tests/scoring/test_architectures.py::test_a_video_llm_scores_end_to_end_with_its_frames_true_times",
    "contrastive": "tests/scoring/test_architectures.py::test_an_encoder_scores_similarities_end_to_end",
    "xclip": "tests/scoring/test_architectures.py::test_an_encoder_scores_similarities_end_to_end",
    "videotext": "tests/scoring/test_architectures.py::test_an_encoder_scores_similarities_end_to_end",
    "textlm": "tests/scoring/test_backends.py::test_text_lm_log_likelihoods_match_an_unbatched_reference",
    "api": "tests/scoring/test_api_live.py::test_reference_run_is_an_answers_run_with_parsed_and_bad_answers",
}
SERVED = ("any model an OpenAI-compatible endpoint serves (--endpoint URL --model NAME), no architecture of its own; "
          "tested against `transformers serve` on the loopback with a tiny Qwen2-VL")
SENT = "the frames as JPEG images, one per frame (-b send=video: one MP4, each frame at its true time in the clip)"


def listing(everything: bool = False) -> list[dict]:
    """The table as ``foilbench models --json`` prints it: one object per tested architecture (``architecture``,
    ``name``, ``family``, ``protocols``, ``tested``, ``test``: the test that builds and scores it, ``transformers``:
    the versions the suite ran it on, ``shipped``: whether the installed transformers has it, and its facts), one per
    family of models served elsewhere (``remote``: no architecture; ``transformers``: the ``transformers serve`` its
    test scores through, the newest end only), then one per family an installed package adds (``tested`` false: this
    suite does not build it); with ``everything``,
    also every other model type the installed transformers ships as an image-text-to-text model, untested, with what
    the generic path makes of it."""
    import transformers
    from transformers.models.auto import modeling_auto

    from bench.scoring.architectures import ARCHITECTURES, TESTED_TRANSFORMERS, VIDEO_INPUT, takes_video
    from bench.scoring.families import FAMILIES, families, plugins

    known = families()
    rows = []
    for row in ARCHITECTURES.values():
        test = TESTS[row.family] + (f"[{row.model_type}]" if row.family != "textlm" else "")
        rows.append({"architecture": row.model_type, "name": row.name, "family": row.family,
                     "protocols": list(known[row.family].protocols), "tested": True, "test": test,
                     "transformers": row.tested_versions(), "shipped": _shipped(row.model_type),
                     **{k: v for k, v in row.describe().items() if k not in ("model_type", "name", "family", "since")}})
    for family in (f for f in FAMILIES.values() if f.remote):
        rows.append({"architecture": None, "name": family.summary, "family": family.name,
                     "protocols": list(family.protocols), "tested": True, "test": TESTS[family.name],
                     "transformers": [TESTED_TRANSFORMERS[-1]], "remote": True, "served": SERVED, "video": SENT,
                     "times": "not given with images; the MP4 of -b send=video shows each frame at its true time",
                     "kv": "n/a: the server's own"})
    for name, (family, source) in plugins().items():
        rows.append({"architecture": ", ".join(family.model_types) or None, "name": family.summary, "family": name,
                     "protocols": list(family.protocols), "tested": False, "transformers": [],
                     "source": f"entry point of {source}"})
    if everything:
        for model_type in sorted(set(modeling_auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES) - set(ARCHITECTURES)):
            video = takes_video(model_type)
            rows.append({"architecture": model_type, "name": model_type, "family": "videollm",
                         "protocols": list(known["videollm"].protocols), "tested": False, "transformers": [],
                         "shipped": True, "video": VIDEO_INPUT if video else
                         f"none: transformers {transformers.__version__} ships no video processor for it (blind "
                         "runs only)"})
    return rows


def _shipped(model_type: str) -> bool:
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    return model_type in CONFIG_MAPPING_NAMES


EXAMPLE_CLIP = {"fps": 10.0, "frames_indices": [0, 6, 11, 17], "total_num_frames": 40, "duration": 4.0}
"""Four frames of a 4-second clip at 10 fps, as ``uniform:k=4`` takes them: the times docs/models.md shows."""


def _prose(text: str) -> str:
    """``text`` for Markdown: a token such as ``<image>`` shown, not taken for an HTML tag; a table's ``|`` kept."""
    return text.replace("<", "&lt;").replace("|", "\\|")


def markdown_table(rows: list[dict]) -> str:
    """The tested architectures as a Markdown table (docs/models.md holds it; a test keeps the two equal)."""
    head = ["model type", "name", "family", "transformers tested", "what the processor makes of the clip",
            "the frames' times", "KV-prefix reuse"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in (r for r in rows if r["tested"] and not r.get("remote")):
        cells = [f"`{r['architecture']}`", r["name"], r["family"], ", ".join(r["transformers"]), r["clip"],
                 r["times"], r.get("kv", "n/a")]
        lines.append("| " + " | ".join(_prose(c) for c in cells) + " |")
    return "\n".join(lines)


def markdown_details() -> str:
    """Per tested architecture: its clip, its frames' times (with :data:`EXAMPLE_CLIP`'s as the prompt shows them),
    its prompt's placeholder and answers, KV reuse, and where it is tested (docs/models.md holds it)."""
    from bench.scoring.architectures import ARCHITECTURES

    seconds = ", ".join(f"{i / EXAMPLE_CLIP['fps']:.1f}" for i in EXAMPLE_CLIP["frames_indices"])
    parts = []
    for row in ARCHITECTURES.values():
        lines = [f"### {row.name} (`{row.model_type}`, {row.family})", "", f"- The clip: {_prose(row.clip)}.",
                 f"- Its frames' times: {_prose(row.times)}."]
        shown = row.time_texts(EXAMPLE_CLIP)
        if shown:
            lines.append(f"  Frames at {seconds} s (4 of a 4-s clip at 10 fps) read: "
                         + " ".join(f"`{t}`" for t in shown) + ".")
        if row.placeholder:
            lines.append(f"- The prompt: `{row.placeholder}` where the video goes in the user turn of the model's "
                         f"chat template, replaced by the processor; answers: {row.answers}.")
        if row.kv:
            lines.append(f"- KV-prefix reuse: {_prose(row.kv)}.")
        tested = ", ".join(row.tested_versions())
        lines.append(f"- Tested with transformers {tested}" + (f" ({row.before})." if row.before else "."))
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def format_table(rows: list[dict]) -> str:
    """One line per architecture: type, family, protocols, tested transformers versions (for a remote family, the
    ``transformers serve`` it was tested against), its times (for an untested one, how its video is given), KV
    reuse."""
    header = ("architecture", "family", "protocols", "tested on", "times", "KV reuse")
    remote = {True: ("(remote)", "transformers serve "), False: ("-", "")}
    table = [header] + [(r["architecture"] or remote[bool(r.get("remote"))][0], r["family"], ",".join(r["protocols"]),
                         remote[bool(r.get("remote"))][1] + ", ".join(r["transformers"]) or "untested",
                         _short(r.get("times") or r.get("video", "")), _short(r.get("kv", "")) or "n/a")
                        for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(header) - 1)]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths)) + "  " + line[-1] for line in table)


def _short(text: str, width: int = 44) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def run(args: argparse.Namespace) -> int:
    """Print the table (or JSON)."""
    import sys

    from bench.scoring.families import plugin_problems

    rows = listing(everything=args.all)
    for problem in plugin_problems():
        print(f"foilbench models: {problem}", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(format_table(rows))
    tested = [r for r in rows if r["tested"] and not r.get("remote")]
    print(f"\n{sum(r['family'] == 'videollm' for r in tested)} Video-LLM and "
          f"{sum(r['family'] not in ('videollm', 'textlm') for r in tested)} encoder architectures tested "
          "(foilbench models --json for what each is given; docs/models.md)")
    for r in (r for r in rows if r.get("remote")):
        print(f"{r['family']}: {SERVED.replace('`', '')} (docs/api.md)")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``models`` command."""
    p = add_command(subparsers, "models", "list the model architectures the tests build and score, and how",
                    "List every architecture the test suite builds as a tiny model and scores end to end: its family "
                    "and protocols, the transformers versions it was tested on, what its processor makes of a clip, "
                    "how the frames' true times reach it, and whether KV-prefix reuse is exact.", EXAMPLE)
    p.add_argument("--json", action="store_true", help="print a JSON list of objects, one per architecture")
    p.add_argument("--all", action="store_true", help="also list the image-text-to-text model types transformers "
                                                      "ships that no test builds (untested)")
    p.set_defaults(func=run)
