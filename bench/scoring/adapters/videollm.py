"""Generative Video-LLMs (Qwen2-VL, LLaVA-OneVision, Video-LLaVA and any ``AutoModelForImageTextToText`` model with a
chat template), scored from next-token logits, never from parsed text.

- ``entail``: P(Yes) / (P(Yes) + P(No)) at the answer position (VELOCITI ``vidllm_eval.py::entail_score``, VideoCon
  ``entailment_inference.py::get_entail``), both raw logits kept.
- ``mc``: A/B (or A, B, C...) letter logits, every question asked in every cyclic order of its options.

The Yes/No and letter token ids are read off the model's own chat template: the first token of the assistant turn
that answers "Yes" (or "A"), which must decode back to that word alone. Requests are batched with left padding, so the
answer position is the last one of every row. Blind runs (frame policy ``none``) send no video at all.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from bench.items import Item
from bench.scoring import prompts
from bench.scoring.adapters.base import Adapter, FrameSource, Scored, model_revision


class VideoLLMAdapter(Adapter):
    """Shared loading, prompt rendering, answer-token lookup and batched next-token logits."""

    kind = "entail"

    def __init__(self, model: str, *, benchmark: str = "", **kwargs):
        super().__init__(model, **kwargs)
        self.load("AutoModelForImageTextToText")
        self.prompt_name, self.template = prompts.resolve(self.prompt, benchmark, self.kind)
        self.benchmark = benchmark
        self._answer_ids: dict[str, int] = {}
        for word in ("Yes", "No") if self.kind == "entail" else ("A", "B"):
            self.answer_id(word)

    def messages(self, text: str, video: bool) -> list[dict]:
        """The user turn: the video (unless blind) followed by the question."""
        content = ([{"type": "video"}] if video else []) + [{"type": "text", "text": text}]
        return [{"role": "user", "content": content}]

    def render(self, text: str, video: bool) -> str:
        """The full prompt up to the answer position, through the model's chat template."""
        return self.processor.apply_chat_template(self.messages(text, video), add_generation_prompt=True,
                                                  tokenize=False)

    def answer_id(self, word: str) -> int:
        """The token the model's template emits first when the assistant answers ``word``; checked to be ``word``
        alone."""
        if word not in self._answer_ids:
            tokenizer = self.processor.tokenizer
            probe = self.messages("?", False)
            prefix = self.processor.apply_chat_template(probe, add_generation_prompt=True, tokenize=False)
            full = self.processor.apply_chat_template(probe + [{"role": "assistant", "content": word}],
                                                      tokenize=False)
            if not full.startswith(prefix):
                raise ValueError(f"{self.model_id}: the chat template's answer turn does not extend its generation "
                                 "prompt; cannot locate the answer token")
            head = tokenizer(prefix, add_special_tokens=False).input_ids
            ids = tokenizer(full, add_special_tokens=False).input_ids
            if ids[:len(head)] != head or len(ids) == len(head):
                raise ValueError(f"{self.model_id}: tokenizing the answer {word!r} changes the prompt's tokens")
            token = ids[len(head)]
            if tokenizer.decode([token]).strip() != word:
                raise ValueError(f"{self.model_id}: the answer {word!r} is not a single token "
                                 f"(first token decodes to {tokenizer.decode([token])!r})")
            self._answer_ids[word] = token
        return self._answer_ids[word]

    @torch.inference_mode()
    def next_logits(self, requests: Sequence[tuple[str, np.ndarray | None]], token_ids: list[int],
                    batch_size: int) -> np.ndarray:
        """Logits of ``token_ids`` at the answer position of each (prompt, frames) request, in batches."""
        out = []
        for start in range(0, len(requests), batch_size):
            batch = requests[start:start + batch_size]
            texts = [text for text, _ in batch]
            videos = [frames for _, frames in batch if frames is not None]
            if videos and len(videos) != len(batch):
                raise ValueError("a batch mixes requests with and without video")
            kwargs = {"videos": videos} if videos else {}
            inputs = self.processor(text=texts, return_tensors="pt", padding=True, padding_side="left", **kwargs)
            inputs = {k: (v.to(self.device, self.dtype) if v.is_floating_point() else v.to(self.device))
                      for k, v in inputs.items()}
            logits = self.model(**inputs).logits[:, -1, :].float()
            out.append(logits[:, token_ids].cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, len(token_ids)))

    def _frames(self, frames: FrameSource, item: Item, clip: int) -> np.ndarray | None:
        array = frames.clip(item, clip).array
        return array if len(array) else None

    def describe(self) -> dict:
        return {**super().describe(), "revision": model_revision(self.model), "model_class": type(self.model).__name__,
                "prompt": {"name": self.prompt_name, "template": self.template},
                "answer_tokens": dict(self._answer_ids)}


class EntailmentAdapter(VideoLLMAdapter):
    """P(Yes)/(P(Yes)+P(No)) for every (clip, text) pair."""

    name = "entail"
    measure = "p_yes"
    kind = "entail"

    def score(self, items: Sequence[Item], frames: FrameSource, batch_size: int) -> Scored:
        ids = [self.answer_id("Yes"), self.answer_id("No")]
        requests, keys = [], []
        for it in items:
            for c in range(len(it.clips)):
                video = self._frames(frames, it, c)
                for t, text in enumerate(it.texts):
                    requests.append((self.render(self.template.format(caption=text), video is not None), video))
                    keys.append((it.item_id, c, t))
        logits = self.next_logits(requests, ids, batch_size)
        p_yes = 1.0 / (1.0 + np.exp(logits[:, 1] - logits[:, 0]))
        return Scored(pair=[{"item_id": i, "clip": c, "text": t, "score": float(p), "logit_yes": float(ly),
                             "logit_no": float(ln)} for (i, c, t), p, (ly, ln) in zip(keys, p_yes, logits)])


class ChoiceAdapter(VideoLLMAdapter):
    """Letter logits for every question in every cyclic order of its options."""

    name = "mc"
    measure = "letter_logits"
    kind = "choice"

    def score(self, items: Sequence[Item], frames: FrameSource, batch_size: int) -> Scored:
        requests, keys = [], []
        for it in items:
            n = len(it.texts)
            for c in range(len(it.clips)):
                video = self._frames(frames, it, c)
                for shift in range(n):
                    options = [(shift + k) % n for k in range(n)]
                    text = prompts.render_choice(self.template, [it.texts[o] for o in options], self.prompt_name)
                    requests.append((self.render(text, video is not None), video))
                    keys.append((it.item_id, "text", c, options))
            if len(it.clips) == 2:
                for t, caption in enumerate(it.texts):
                    for order in ((0, 1), (1, 0)):
                        joined = frames.joined(it, order).array
                        question = prompts.PROMPTS[prompts.VIDEO_CHOICE].format(caption=caption)
                        requests.append((self.render(question, len(joined) > 0), joined if len(joined) else None))
                        keys.append((it.item_id, "video", t, list(order)))
        rows = []
        for width in sorted({len(k[3]) for k in keys}):
            chosen = [i for i, k in enumerate(keys) if len(k[3]) == width]
            token_ids = [self.answer_id(letter) for letter in prompts.letters(width)]
            logits = self.next_logits([requests[i] for i in chosen], token_ids, batch_size)
            for i, row in zip(chosen, logits):
                item_id, axis, query, options = keys[i]
                rows.append({"item_id": item_id, "axis": axis, "query": query, "options": options,
                             "logits": [float(x) for x in row], "choice": int(options[int(np.argmax(row))])})
        return Scored(choice=rows)
