"""How well the world's Qwen2-VL fits its own training split, piece by piece: whether it chooses, whether its vision
tower holds what its teacher sees, and what its decoder's states at the answer position hold.

    python -m bench.devkit.train.diagnose [--home DIR] [--clips 150]

Every measure is over training claims (a caption and its first foil, of clips drawn with a fixed seed), read from the
built ``qwen2vl-world`` and its teacher ``xclip-world`` (built first when absent). The decoder's probes are linear
maps fitted by least squares on half of the questions and measured on the other half.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

PROBE_SEED = 5


def fit_report(home: str | Path | None = None, clips: int = 150) -> dict[str, float]:
    """Each measure's value (a share in [0, 1], or a cosine or correlation) for the Qwen2-VL built in ``home``."""
    from bench.devkit.train import build, videollm

    root = build.models_home(home)
    built = root / "qwen2vl-world" / build.STAMP
    default = {"seed": build.DEFAULT_SEED, "scale": asdict(build.FULL)}
    stamp = json.loads(built.read_text()) if built.is_file() else default
    scale, seed = build.Scale(**stamp["scale"]), stamp["seed"]  # the seed and scale it was built with
    folder = build.trained_model("qwen2vl-world", home, seed=seed, scale=scale)
    backend = build.cpu_backend("videollm", folder)
    data = build.training_data(root, scale, seed, backend.frame_fit(), progress=False)
    teacher = build.teacher_view(build.MODELS["xclip-world"], root / "xclip-world", root, scale, seed, data, False)
    model, questions = backend.model, videollm.Questions(backend.processor)
    tokens = videollm.video_tokens(model, videollm.video_inputs(backend.processor, data.frames))
    by_video = data.claims()[0]
    rng = np.random.default_rng(PROBE_SEED)
    drawn = rng.choice(sorted(by_video), min(clips, len(by_video)), replace=False)
    claims = [(int(v), by_video[v][int(rng.integers(len(by_video[v])))].texts[:2]) for v in drawn]
    with torch.no_grad():
        found = {**_choosing(model, questions, tokens, claims), **_tower(tokens, teacher, claims)}
        found.update(_probes(model, questions, tokens, teacher, claims, rng))
    return found


def _margins(model, questions, rows, first: str, second: str) -> torch.Tensor:
    from bench.devkit.train.videollm import answer_outputs

    logits = answer_outputs(model, questions, rows)[0]
    return logits[:, questions.answer[first]] - logits[:, questions.answer[second]]


def option_rankings(first: list[float], second: list[float]) -> tuple[bool, bool, bool]:
    """From the options' own Yes-minus-No margins in letter order, ``first`` with the caption at A and ``second`` with
    it at B: whether both questions rank the caption above its foil, and whether the option at A, then the one at B,
    answers the caption above the foil that stood at the same letter in the other order."""
    within = first[0] > first[1] and second[1] > second[0]
    return within, first[0] > second[0], second[1] > first[1]


def _choosing(model, questions, tokens, claims) -> dict[str, float]:
    """Per two-option prompt: A/B right in both option orders, the same letter in both (a lean that no option order
    changes: what makes both orders fail), and each option's own Yes/No at its last token (decoder layer
    ``option_layer`` through the final norm and the head, as training teaches it) ranking the caption above its foil
    in both orders, and each letter's option ranking them across the two orders (:func:`option_rankings`), and the last
    layer's first head at the answer position attending to the caption's last token above the foil's in both orders
    (what training's select term teaches); then Yes/No ranking the caption above its foil."""
    from bench.devkit.train.build import MODELS
    from bench.devkit.train.videollm import (CHOICE_PROMPTS, answer_outputs, head_scores, lay_out, option_logits,
                                             select_layer)
    from bench.scoring import prompts

    layer = MODELS["qwen2vl-world"].recipe.option_layer
    last = select_layer(model)
    found = {}
    for name in CHOICE_PROMPTS[:-1]:
        shown = prompts.OPTION_STYLE.get(name, lambda text: text)
        right, same, ends_right, selected, across = [], [], [], [], []
        for v, (caption, foil) in claims:
            orders = ([caption, foil], [foil, caption])
            rows = [(prompts.render_choice(prompts.PROMPTS[name], order, name), tokens[v]) for order in orders]
            laid = lay_out(model, questions, rows)
            logits, _, hidden = answer_outputs(model, questions, rows, laid=laid)
            attended = head_scores(model, hidden, last, laid.positions, [(i, int(laid.answers[i])) for i in range(2)])
            margin = logits[:, questions.answer["A"]] - logits[:, questions.answer["B"]]
            right.append(bool(margin[0] > 0) and bool(margin[1] < 0))
            same.append(bool(margin[0] > 0) == bool(margin[1] > 0))
            looked, yes = [], []
            for i, ((question, video), order) in enumerate(zip(rows, orders)):
                ends = questions.ends(question, video.grid[0], [shown(o) for o in order])
                said = option_logits(model, hidden, layer, (i, ends))
                yes.append([float(m) for m in said[:, questions.answer["Yes"]] - said[:, questions.answer["No"]]])
                looked.append(bool(attended[i, ends[order.index(caption)]] > attended[i, ends[order.index(foil)]]))
            within, at_a, at_b = option_rankings(yes[0], yes[1])
            ends_right.append(within)
            across += [at_a, at_b]
            selected.append(all(looked))
        found[f"A/B right in both orders ({name})"] = float(np.mean(right))
        found[f"A/B the same letter in both orders ({name})"] = float(np.mean(same))
        found[f"A/B options' own Yes/No rank the caption above its foil in both orders ({name})"] = \
            float(np.mean(ends_right))
        found[f"A/B the answer attends to the caption's option above its foil's in both orders ({name})"] = \
            float(np.mean(selected))
        for k, letter in enumerate("AB"):
            found[f"A/B the option at {letter} answers Yes/No ranking the caption above its foil across the two "
                  f"orders ({name})"] = float(np.mean(across[k::2]))
    template = prompts.PROMPTS["yes-no"]
    ranked = [bool((m := _margins(model, questions, [(template.format(caption=t), tokens[v]) for t in texts],
                                  "Yes", "No"))[0] > m[1]) for v, texts in claims]
    found["Yes/No ranks the caption above its foil"] = float(np.mean(ranked))
    return found


def _tower(tokens, teacher, claims) -> dict[str, float]:
    """The mean of the tower's video tokens against X-CLIP's text embeddings, beside X-CLIP's own ranking."""
    mean = {v: torch.nn.functional.normalize(tokens[v].tokens.mean(dim=0), dim=-1) for v, _ in claims}
    tower = [bool((s := teacher.text(texts) @ mean[v])[0] > s[1]) for v, texts in claims]
    own = [bool((s := teacher.logits(v, False, list(texts)))[0] > s[1]) for v, texts in claims]
    return {"tower's mean token ranks the caption above its foil (against X-CLIP's texts)": float(np.mean(tower)),
            "X-CLIP ranks the caption above its foil": float(np.mean(own)),
            "tower's mean token, cosine to X-CLIP's video embedding":
                float(np.mean([float(mean[v] @ teacher.video[(v, False)]) for v, _ in claims]))}


def _probes(model, questions, tokens, teacher, claims, rng) -> dict[str, float]:
    """Linear probes of each decoder layer's state at the answer position of a Yes/No question: X-CLIP's text
    embedding of the asked text and its video embedding of the clip (held-out cosines), X-CLIP's similarity of text
    and clip (held-out correlation) and whether that probe ranks the caption above its foil."""
    from bench.devkit.train.videollm import ENTAIL_PROMPTS, answer_outputs
    from bench.scoring import prompts

    rows, texts, clips = [], [], []
    for v, pair in claims:
        for text in pair:
            name = ENTAIL_PROMPTS[int(rng.integers(len(ENTAIL_PROMPTS)))]
            rows.append((prompts.PROMPTS[name].format(caption=text), tokens[v]))
            texts.append(text)
            clips.append(v)
    states = answer_outputs(model, questions, rows)[2]
    at = (torch.arange(len(rows)), torch.tensor([len(questions.ids(q, video.grid[0])) - 1 for q, video in rows]))
    target = teacher.text(texts)
    video = torch.stack([teacher.video[(v, False)] for v in clips])
    similarity = (target * video).sum(-1)
    fit = torch.arange(len(rows)) < 2 * (len(claims) // 2)  # whole claims on each side
    found = {}
    for layer in range(1, len(states)):
        x = torch.cat([states[layer][at], torch.ones(len(rows), 1)], dim=1)
        text = x[~fit] @ torch.linalg.lstsq(x[fit], target[fit]).solution
        seen = x[~fit] @ torch.linalg.lstsq(x[fit], video[fit]).solution
        guess = (x[~fit] @ torch.linalg.lstsq(x[fit], similarity[fit, None]).solution)[:, 0]
        pairs = guess.view(-1, 2)
        found[f"layer {layer}: probe of the text embedding, cosine"] = \
            float(torch.nn.functional.cosine_similarity(text, target[~fit]).mean())
        found[f"layer {layer}: probe of the video embedding, cosine"] = \
            float(torch.nn.functional.cosine_similarity(seen, video[~fit]).mean())
        found[f"layer {layer}: probe of X-CLIP's similarity, correlation"] = \
            float(torch.corrcoef(torch.stack([guess, similarity[~fit]]))[0, 1])
        ranked = (pairs[:, 0] > pairs[:, 1]).float().mean()
        found[f"layer {layer}: that probe ranks the caption above its foil"] = float(ranked)
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.devkit.train.diagnose", description=__doc__.splitlines()[0])
    parser.add_argument("--home", help="data folder (default: the data home)")
    parser.add_argument("--clips", type=int, default=150, help="training clips asked (default 150)")
    args = parser.parse_args(argv)
    if args.clips < 4:
        parser.error(f"--clips needs at least 4 clips, got {args.clips}")
    for measure, value in fit_report(args.home, args.clips).items():
        print(f"{value:6.3f}  {measure}")


if __name__ == "__main__":
    main()
