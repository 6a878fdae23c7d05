"""Generative Video-LLMs (every ``AutoModelForImageTextToText`` architecture with a video processor and a chat
template; the tested ones are the rows of :data:`bench.scoring.architectures.ARCHITECTURES`), answering
:class:`~bench.scoring.requests.Ask` requests from next-token logits in one forward pass, never from generated and
parsed text. The question goes in the user turn of the model's own chat template, after the video (none for blind
runs); the answer is the logit of each answer word's first token at the answer position.

The answer token ids are read off the model's own chat template: the first token of the assistant turn that answers
"Yes" (or "A"), which must decode to that word alone and differ from the other answers' tokens.

Every clip reaches the processor with its frames' true times (``video_metadata``: the video's fps, the frames'
indices from the clip's first frame, the clip's frame count and duration), which processors turn into prompt text
(Qwen3-VL's ``<t seconds>``, VideoLLaMA 3's ``Time t s:``, Gemma 4's and SmolVLM's ``mm:ss``...) or positions
(Qwen2.5-VL's ``second_per_grid_ts``); the manifest says so (``details.frame_times``).

Speed: each video goes through the processor once, on a decode worker (:meth:`VideoLLMBackend.encode`), with a probe
question; the processor also says what text it put in place of the video placeholder (its frames' tokens and times),
and every request's text is tokenized with that text in place (checked to give the processor's own tokens on the
probe, else every request is processed on its own). On CUDA the processor runs on the GPU (``preprocess="auto"``):
the worker only pins the decoded frames for an asynchronous copy. With KV reuse, the tokens a video's prompts share
(the video and the prompt text before the caption) run once per video, the videos of several groups in one
vision-tower call, and only the differing suffixes run, batched against a copy of that cache. Without it, requests
are batched whole with left padding. Both pass explicit position ids (M-RoPE's 3-D ones included), so a padded row
computes exactly what the row computes alone. Blind runs (frame policy ``none``) send the same prompts without the
video. Answers stay on the device until the whole call is done.

KV reuse checks itself (``reuse="auto"``): the runner's first batch is scored both ways (:meth:`VideoLLMBackend.check`)
and a run whose cached answers differ from whole requests beyond the dtype's tolerance, or fail, or where no request
went through the cache, scores whole requests; an architecture whose table row says reuse is off is not tried. The
manifest records the check (``details.reuse_check``) and the console line says how many requests went through the
cache.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from bench.scoring.architectures import architecture_of
from bench.scoring.backends.base import Backend, Videos, has_frames
from bench.scoring.requests import Ask

REUSE_MODES = ("auto", "kv", "none")
PREPROCESS_MODES = ("auto", "cpu", "device")
PROBE = "?"
FRAME_TIMES = ("true times: video_metadata (the video's fps, each frame's index from the clip's first frame in time "
               "order, the clip's frame count and duration) with every clip")
# (absolute, relative) tolerance of the self-check on logits: float32, and 16-bit floats (about two bfloat16 steps).
TOLERANCE = {"float32": (1e-3, 1e-3), "16-bit": (0.05, 0.02)}


def user_turn(text: str, video: bool) -> list[dict]:
    """The user turn: the video (unless blind) followed by the question."""
    content = ([{"type": "video"}] if video else []) + [{"type": "text", "text": text}]
    return [{"role": "user", "content": content}]


def chat_prompt(processor, text: str, video: bool) -> str:
    """The full prompt up to the answer position, through ``processor``'s chat template (what the backend sends, and
    what the world's Video-LLM is trained on)."""
    return processor.apply_chat_template(user_turn(text, video), add_generation_prompt=True, tokenize=False)


@dataclass
class _Prompt:
    """One question through the chat template, and the key of its video in the videos mapping (None: no video)."""

    prompt: str
    video: Hashable | None


@dataclass
class _Video:
    """A clip through the processor once, with the probe question: its pixel tensors and how the processor expands
    the prompt's video placeholder (``replacement``, the text it puts there, with the frames' times; None when that
    cannot be reproduced from the text alone: each request is then processed with ``frames``, ``alone`` says why),
    the tokens the processor puts before the tokenizer's (``lead``), and each per-token output's value per token id
    (with the value of tokens the probe did not have)."""

    frames: object
    pixels: dict[str, torch.Tensor]
    replacement: str | None = None
    lead: list[int] = field(default_factory=list)
    values: dict[str, tuple[dict[int, int], int]] = field(default_factory=dict)
    alone: str = ""


@dataclass
class _Row:
    """A request as tokens: ``extras`` are the processor's other per-token outputs (e.g. ``mm_token_type_ids``);
    ``video_end``: the number of tokens up to the end of the video's expansion (0 without a video); ``alone``: why
    the request went through the processor on its own."""

    ids: list[int]
    extras: dict[str, list[int]]
    video: Hashable | None
    positions: torch.Tensor | None = None
    pixels: dict[str, torch.Tensor] = field(default_factory=dict)
    video_end: int = 0
    alone: str = ""


class VideoLLMBackend(Backend):
    """Loading, chat-template rendering, answer-token lookup and batched next-token logits.

    ``reuse``: "auto" caches each video's shared prompt prefix once :meth:`check` found it agrees with whole
    requests, "kv" caches without checking, "none" runs every request whole. ``preprocess``: where the processor
    works on the frames: "cpu" (on the decode workers), "device" (on the model's device), "auto" (the GPU when the
    model is on CUDA, else the CPU).
    """

    vision = "video_processor"

    def __init__(self, model, *, reuse: str = "auto", preprocess: str = "auto", **kwargs):
        super().__init__(model, **kwargs)
        if reuse not in REUSE_MODES:
            raise ValueError(f"reuse must be one of {REUSE_MODES}, got {reuse!r}")
        if preprocess not in PREPROCESS_MODES:
            raise ValueError(f"preprocess must be one of {PREPROCESS_MODES}, got {preprocess!r}")
        self.load("AutoModelForImageTextToText")
        self.model_type = getattr(self.model.config, "model_type", "")
        self.reuse_mode = reuse
        row = architecture_of(self.model_type)
        off = reuse == "auto" and row is not None and row.kv != "exact"  # the table says reuse is not exact
        self.reuse = "none" if reuse == "none" or off else "kv"
        self.reuse_check: dict = {"status": "pending" if reuse == "auto" else f"not checked (reuse={reuse})"}
        self.preprocess = "device" if preprocess == "device" or (preprocess == "auto" and self.on_cuda) else "cpu"
        self.tokenizer = self.processor.tokenizer
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        self._answer_ids: dict[str, int] = {}
        self._answer_source: dict[str, str] = {}
        self._kv_rows = 0
        self._whole_because: Counter[str] = Counter()
        self.placeholder = getattr(self.processor, "video_token", None)

    def prepare(self, answers: Sequence[str]) -> None:
        """Find (and check) the answer tokens before any scoring."""
        self.answer_ids(list(answers))

    def render(self, text: str, video: bool) -> str:
        """The full prompt up to the answer position, through the model's chat template (:func:`chat_prompt`)."""
        return chat_prompt(self.processor, text, video)

    def answer_id(self, word: str) -> int:
        """The token the model emits first when it answers ``word``: the first token after the generation prompt of
        the assistant turn the chat template renders for ``word`` (or, for a template whose assistant turn does not
        extend its generation prompt, of ``word`` appended to it); checked to decode to ``word`` alone."""
        if word not in self._answer_ids:
            prefix = chat_prompt(self.processor, "?", False)
            turn = user_turn("?", False) + [{"role": "assistant", "content": [{"type": "text", "text": word}]}]
            full = self.processor.apply_chat_template(turn, tokenize=False)
            source = "template" if full.startswith(prefix) and len(full) > len(prefix) else "appended"
            if source == "appended":
                full = prefix + word
            head = self.tokenizer(prefix, add_special_tokens=False).input_ids
            ids = self.tokenizer(full, add_special_tokens=False).input_ids
            if ids[:len(head)] != head or len(ids) == len(head):
                raise ValueError(f"{self.model_id}: tokenizing the answer {word!r} changes the prompt's tokens; "
                                 "cannot locate the answer token")
            token = ids[len(head)]
            if self.tokenizer.decode([token]).strip() != word:
                raise ValueError(f"{self.model_id}: the answer {word!r} is not a single token (its first token "
                                 f"decodes to {self.tokenizer.decode([token])!r})")
            self._answer_ids[word] = token
            self._answer_source[word] = source
        return self._answer_ids[word]

    def answer_ids(self, words: Sequence[str]) -> list[int]:
        """:meth:`answer_id` of each word, checked to be distinct."""
        ids = [self.answer_id(w) for w in words]
        if len(set(ids)) != len(ids):
            raise ValueError(f"{self.model_id}: the answers {list(words)} share tokens {ids}")
        return ids

    # -- tokens -------------------------------------------------------------------------------------------------------

    def _process(self, prompt: str, frames, replacements: bool = False) -> dict[str, torch.Tensor]:
        """The processor's output for one prompt and its video (:class:`~bench.frames.Frames`, pixels as an array or
        a tensor on the device), given as ``videos=[[frames]]`` with the frames' true times (``video_metadata``);
        with ``replacements``, also what the processor put in place of each placeholder."""
        kwargs: dict = {}
        if frames is not None:
            kwargs = {"videos": [[frames.array]], "video_metadata": [frames.video_metadata()]}
            if self.preprocess == "device":
                kwargs["device"] = self.device
        if replacements:
            kwargs["return_text_replacement_offsets"] = True
        return dict(self.processor(text=[prompt], return_tensors="pt", **kwargs))

    @staticmethod
    def _split(encoded: dict[str, torch.Tensor]) -> tuple[list[int], dict[str, list[int]], dict[str, torch.Tensor]]:
        """(ids, other per-token outputs, pixel tensors) of a one-row processor output."""
        shape = encoded["input_ids"].shape
        per_token = {k: v for k, v in encoded.items() if k != "attention_mask" and v.shape == shape
                     and not v.is_floating_point()}
        ids = per_token.pop("input_ids")[0].tolist()
        pixels = {k: v for k, v in encoded.items() if k not in per_token and k not in ("input_ids", "attention_mask")}
        return ids, {k: v[0].tolist() for k, v in per_token.items()}, pixels

    def _expanded(self, prompt: str, video: _Video) -> tuple[list[int], dict[str, list[int]], int]:
        """(ids, per-token outputs, tokens up to the video's end) of ``prompt`` with its one video placeholder
        replaced as the processor replaces it, tokenized as the processor tokenizes its text."""
        token = self.placeholder
        if token is None or prompt.count(token) != 1:
            raise ValueError("the prompt does not hold exactly one video placeholder")
        at = prompt.index(token)
        end = at + len(video.replacement)
        encoded = self.tokenizer(prompt[:at] + video.replacement + prompt[at + len(token):],
                                 return_offsets_mapping=True)
        ids = video.lead + list(encoded["input_ids"])
        inside = [i for i, (first, last) in enumerate(encoded["offset_mapping"]) if last > first and first < end]
        extras = {name: [found.get(t, default) for t in ids] for name, (found, default) in video.values.items()}
        return ids, extras, len(video.lead) + max(inside, default=-1) + 1

    def encode(self, frames):
        """A clip's frames through the processor (:class:`_Video`), on a decode worker; with ``preprocess="device"``
        only pinned for the copy to the device (the processor then runs there, in :meth:`answer`)."""
        if not has_frames(frames):
            return frames
        if self.preprocess == "device":
            return dataclasses.replace(frames, array=self.pinned(torch.from_numpy(np.ascontiguousarray(frames.array))))
        return self._probe(frames)

    def _probe(self, frames) -> _Video:
        """The video through the processor with the probe question, and how its placeholder expands: the
        processor's own replacement text, checked to give the processor's tokens from the text alone."""
        if self.preprocess == "device":
            frames = dataclasses.replace(frames, array=torch.as_tensor(frames.array).to(self.device,
                                                                                        non_blocking=self.on_cuda))
        prompt = self.render(PROBE, True)
        encoded = self._process(prompt, frames, replacements=True)
        offsets = encoded.pop("text_replacement_offsets", None) or [[]]
        ids, extras, pixels = self._split(encoded)
        pixels = {k: self.pinned(v.contiguous()) if v.is_floating_point() else v.cpu() for k, v in pixels.items()}
        video = _Video(frames, pixels)
        found = [o["replacement"] for o in offsets[0] if o.get("type") == "video"]
        if len(found) != 1 or self.placeholder is None:
            video.alone = "the processor does not say how it expands the video placeholder"
            return video
        for name, column in extras.items():
            per_token: dict[int, int] = {}
            if any(per_token.setdefault(t, v) != v for t, v in zip(ids, column)):
                video.alone = f"the processor's {name} is not one value per token"
                return video
            video.values[name] = (per_token, column[0])
        video.replacement = found[0]
        try:
            alone, _, _ = self._expanded(prompt, video)
            video.lead = ids[:len(ids) - len(alone)] if ids[len(ids) - len(alone):] == alone else []
            reproduced = self._expanded(prompt, video)[:2] == (ids, extras)
        except (ValueError, NotImplementedError, TypeError):
            reproduced = False
        if not reproduced:
            video.replacement = None
            video.alone = "the processor's tokens differ from those of its expanded text"
        return video

    def _video_rows(self, prompts_: list[str], key: Hashable, video: _Video) -> list[_Row]:
        """Rows for the prompts of one video: its placeholder expanded as the processor does; a request through the
        processor with its video only when that expansion cannot be reproduced."""
        rows = []
        for i, prompt in enumerate(prompts_):
            if video.replacement is not None and prompt.count(self.placeholder) == 1:
                ids, extras, end = self._expanded(prompt, video)
                rows.append(_Row(ids, extras, key, pixels=video.pixels, video_end=end))
                continue
            ids, extras, pixels = self._split(self._process(prompt, video.frames))
            rows.append(_Row(ids, extras, (key, i), pixels=pixels, video_end=len(ids),
                             alone=video.alone or "the prompt holds the video placeholder more than once"))
        return rows

    def _rows(self, requests: Sequence[_Prompt], videos: dict[Hashable, _Video]) -> list[_Row]:
        """Every request as tokens with its explicit positions, in request order."""
        rows: list[_Row | None] = [None] * len(requests)
        by_video: dict[Hashable, list[int]] = {}
        for i, req in enumerate(requests):
            by_video.setdefault(req.video, []).append(i)
        for key, indices in by_video.items():
            texts = [requests[i].prompt for i in indices]
            if key is None:
                made = [_Row(*self._split(self._process(t, None))[:2], None) for t in texts]
            else:
                made = self._video_rows(texts, key, videos[key])
            first = made[0]
            first.positions = self._positions(first)
            for i, row in zip(indices, made):
                if row is not first:
                    row.positions = self._continued(first, row)
                rows[i] = row
        return rows

    def _continued(self, first: _Row, row: _Row) -> torch.Tensor | None:
        """``row``'s positions from ``first``'s, when both have the same video and ``row`` only differs in text after
        a text token past the video: the shared part's positions, then one step further per token (text positions,
        M-RoPE's included, grow by one); else computed anew."""
        shared = self._shared([first, row])
        at = shared - 1
        if (first.positions is None or at < max(first.video_end, row.video_end) or row.pixels is not first.pixels
                or bool((first.positions[..., at:at + 1].diff(dim=0) != 0).any())):
            return self._positions(row)
        steps = torch.arange(1, len(row.ids) - shared + 1)
        return torch.cat([first.positions[..., :shared], first.positions[..., at:at + 1] + steps], dim=-1)

    def _positions(self, row: _Row) -> torch.Tensor | None:
        """The position ids the model gives the unpadded row: Qwen2-VL's M-RoPE index (3 x L), else 0..L-1; None for
        a model with its own position index that the processor's outputs do not let us compute."""
        rope_index = getattr(getattr(self.model, "model", None), "get_rope_index", None)
        if rope_index is None:
            return torch.arange(len(row.ids))
        if "mm_token_type_ids" not in row.extras:
            return None
        grids = {k: v for k, v in row.pixels.items() if k.endswith("grid_thw") or k == "second_per_grid_ts"}
        positions, _ = rope_index(torch.tensor([row.ids]),
                                  mm_token_type_ids=torch.tensor([row.extras["mm_token_type_ids"]]), **grids)
        return positions[:, 0]

    # -- forward passes -----------------------------------------------------------------------------------------------

    def _device_pixels(self, rows: Sequence[_Row]) -> dict[str, torch.Tensor]:
        """The rows' video tensors, each copied to the device (from pinned memory without blocking) and concatenated
        there in row order; pixel values in the model's dtype."""
        with_video = [r for r in rows if r.video is not None]
        if not with_video:
            return {}
        return {k: self.concat_on_device([r.pixels[k] for r in with_video]) for k in with_video[0].pixels}

    def _index(self, values: Sequence[int]) -> torch.Tensor:
        """A small index tensor on the device, copied without blocking."""
        return self.to_device(self.pinned(torch.tensor(values, dtype=torch.long)))

    @staticmethod
    def _padded(seqs: Sequence[Sequence[int] | torch.Tensor], fill: int) -> torch.Tensor:
        """Sequences (or position tensors, last dim the sequence) stacked along a new batch dim before the last,
        padded with ``fill`` on the left."""
        seqs = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
        width = max(s.shape[-1] for s in seqs)
        out = torch.full(seqs[0].shape[:-1] + (len(seqs), width), fill, dtype=torch.long)
        for i, s in enumerate(seqs):
            out[..., i, width - s.shape[-1]:] = s
        return out

    def _inputs(self, rows: Sequence[_Row], cut: Sequence[slice]) -> dict[str, torch.Tensor]:
        """Left-padded tensors of the ``cut`` part of each row."""
        ids = [r.ids[c] for r, c in zip(rows, cut)]
        inputs = {"input_ids": self._padded(ids, self.pad_id),
                  "attention_mask": self._padded([[1] * len(s) for s in ids], 0)}
        if all(r.positions is not None for r in rows):
            inputs["position_ids"] = self._padded([r.positions[..., c] for r, c in zip(rows, cut)], 0)
        for name in rows[0].extras:
            inputs[name] = self._padded([r.extras[name][c] for r, c in zip(rows, cut)], 0)
        return {k: self.to_device(self.pinned(v)) for k, v in inputs.items()}

    def _whole(self, rows: Sequence[_Row], token_ids: torch.Tensor) -> torch.Tensor:
        """Logits of ``token_ids`` after each whole row, left-padded in one batch (on the device)."""
        inputs = self._inputs(rows, [slice(None)] * len(rows))
        logits = self.model(**inputs, **self._device_pixels(rows), logits_to_keep=1).logits[:, -1]
        return logits.index_select(-1, token_ids).float()

    def _cached(self, groups: Sequence[tuple[list[_Row], int]], token_ids: torch.Tensor, batch_size: int):
        """Logits after each row of each (rows of one video, shared prefix length) group: the prefixes run once,
        left-padded, into a KV cache; the suffixes run left-padded too (padding between prefix and suffix is masked
        and positions are explicit), so every row's answer position is the last column and ``logits_to_keep=1``
        means the same in every transformers version. Returns None when the model's cache is not a plain dynamic
        cache (the caller runs the rows whole)."""
        from transformers import DynamicCache
        from transformers.cache_utils import DynamicLayer

        heads = [rows[0] for rows, _ in groups]
        prefix = self._inputs(heads, [slice(0, p) for _, p in groups])
        cache = self.model(**prefix, **self._device_pixels(heads), use_cache=True, logits_to_keep=1).past_key_values
        if not isinstance(cache, DynamicCache) or any(type(layer) is not DynamicLayer for layer in cache.layers):
            kinds = sorted({type(layer).__name__ for layer in getattr(cache, "layers", [])} - {"DynamicLayer"})
            because = f"the model's cache is not a plain dynamic cache ({', '.join(kinds) or type(cache).__name__})"
            self._whole_because[because] += sum(len(rows) for rows, _ in groups)
            return None
        members = [(g, row, p) for g, (rows, p) in enumerate(groups) for row in rows]
        out = []
        for start in range(0, len(members), batch_size):
            batch = members[start:start + batch_size]
            which = self._index([g for g, _, _ in batch])
            rows = [row for _, row, _ in batch]
            suffix = self._inputs(rows, [slice(p, None) for _, _, p in batch])
            suffix["attention_mask"] = torch.cat([prefix["attention_mask"][which], suffix["attention_mask"]], dim=1)
            copy = DynamicCache([(keys[which], values[which]) for keys, values, _ in cache])
            logits = self.model(**suffix, past_key_values=copy, use_cache=True, logits_to_keep=1).logits
            out.append(logits[:, -1].index_select(-1, token_ids).float())
        self._kv_rows += len(members)
        return torch.cat(out)

    @staticmethod
    def _shared(rows: Sequence[_Row]) -> int:
        """Length of the token prefix the rows share, leaving each row at least one token of its own."""
        n = min(len(r.ids) for r in rows) - 1
        first = rows[0].ids
        for r in rows[1:]:
            n = next((i for i in range(n) if r.ids[i] != first[i]), n)
        return n

    @staticmethod
    def _not_shareable(members: Sequence[_Row], shared: int) -> str | None:
        """Why the requests of one video cannot share a cached prefix ("" for a video asked once: nothing to share);
        None when they can."""
        if members[0].alone:
            return members[0].alone
        if len(members) == 1:
            return ""
        if members[0].positions is None:
            return "the model's positions cannot be computed from the processor's outputs"
        if shared <= 0 or shared < max(m.video_end for m in members):
            return "a video's requests share no prefix that holds the whole video"
        return None

    @staticmethod
    def _shape_key(row: _Row) -> tuple:
        """Rows batch together only when their pixel tensors concatenate (same shapes past the first dim)."""
        return (row.video is None,) + tuple((k, tuple(v.shape[1:])) for k, v in sorted(row.pixels.items()))

    @torch.inference_mode()
    def next_logits(self, requests: Sequence[_Prompt], videos: dict[Hashable, _Video], token_ids: list[int],
                    batch_size: int, reuse: str | None = None) -> np.ndarray:
        """Logits of ``token_ids`` at the answer position of each request (rows in request order), with KV reuse
        as ``reuse`` says (default: the backend's)."""
        reuse = reuse or self.reuse
        rows = self._rows(requests, videos)
        tokens = self._index(token_ids)
        done: list[tuple[list[int], torch.Tensor]] = []
        by_video: dict[Hashable, list[int]] = {}
        for i, row in enumerate(rows):
            by_video.setdefault(row.video, []).append(i)
        whole: list[int] = []
        groups: dict[tuple, list[tuple[list[int], int]]] = {}
        for key, indices in by_video.items():
            members = [rows[i] for i in indices]
            shared = self._shared(members)
            because = self._not_shareable(members, shared)
            if reuse == "kv" and because is None:
                groups.setdefault(self._shape_key(members[0]), []).append((indices, shared))
            else:
                whole += indices
                if reuse == "kv" and because:
                    self._whole_because[because] += len(indices)
        for same_shape in groups.values():
            batch: list[tuple[list[int], int]] = []
            for entry in same_shape + [None]:
                if entry is not None and (not batch or sum(len(i) for i, _ in batch) + len(entry[0]) <= batch_size):
                    batch.append(entry)
                    continue
                logits = self._cached([([rows[i] for i in idx], p) for idx, p in batch], tokens, batch_size)
                flat = [i for idx, _ in batch for i in idx]
                if logits is None:
                    whole += flat
                else:
                    done.append((flat, logits))
                batch = [entry] if entry is not None else []
        by_shape: dict[tuple, list[int]] = {}
        for i in whole:
            by_shape.setdefault(self._shape_key(rows[i]), []).append(i)
        for indices in by_shape.values():
            for start in range(0, len(indices), batch_size):
                chunk = indices[start:start + batch_size]
                done.append((chunk, self._whole([rows[i] for i in chunk], tokens)))
        result = np.zeros((len(rows), len(token_ids)), dtype=np.float32)
        if done:
            found = torch.cat([logits for _, logits in done]).cpu().numpy()
            result[[i for indices, _ in done for i in indices]] = found
        return result

    def _logits(self, requests: Sequence[Ask], videos: Videos, batch_size: int, reuse: str | None = None):
        """(logits of each request's answers, NaN-padded to the most answers of any request)."""
        words = list(dict.fromkeys(w for r in requests for w in r.answers))
        token_ids = self.answer_ids(words)
        encoded: dict[Hashable, _Video] = {}
        prompts_ = []
        for r in requests:
            frames = videos.get(r.video) if r.video is not None else None
            key = r.video if has_frames(frames) else None
            if key is not None and key not in encoded:
                encoded[key] = frames if isinstance(frames, _Video) else self._probe(frames)
            prompts_.append(_Prompt(self.render(r.question, key is not None), key))
        logits = self.next_logits(prompts_, encoded, token_ids, batch_size, reuse)
        out = np.full((len(requests), max((len(r.answers) for r in requests), default=0)), np.nan)
        for i, r in enumerate(requests):
            out[i, :len(r.answers)] = logits[i, [words.index(w) for w in r.answers]]
        return out

    def answer(self, requests: Sequence[Ask], videos: Videos, batch_size: int) -> np.ndarray:
        """The logits of each request's answers (NaN-padded to the most answers of any request)."""
        return self._logits(requests, videos, batch_size)

    def check(self, requests: Sequence[Ask], videos: Videos, batch_size: int) -> str | None:
        """With ``reuse="auto"``, once: KV reuse off when the architecture table says so; else score ``requests``
        with KV reuse and whole, and keep KV reuse only when some of them went through the cache and all agree
        within :data:`TOLERANCE`. Returns the line the runner prints, which says how many requests went through the
        cache and never says "reuse on" for none."""
        if self.reuse_mode != "auto" or self.reuse_check["status"] != "pending":
            return None
        row = architecture_of(self.model_type)
        untested = "" if row is not None else f" (model type {self.model_type!r} is not among the tested)"
        if row is not None and row.kv != "exact":
            self.reuse = "none"
            self.reuse_check = {"status": "off", "reason": row.kv.removeprefix("off: ")}
            return f"KV-prefix reuse off for {row.name}: {self.reuse_check['reason']}; whole requests"
        atol, rtol = TOLERANCE["float32" if self.dtype == torch.float32 else "16-bit"]
        try:
            whole = self._logits(requests, videos, batch_size, reuse="none")
        except Exception as err:  # noqa: BLE001 - the run goes on and records each item's failure
            self.reuse = "none"
            self.reuse_check = {"status": "not checked", "reason": f"whole requests failed: {type(err).__name__}"}
            return f"KV-prefix reuse not checked: whole requests fail ({type(err).__name__}: {err}); reuse off"
        self._kv_rows = 0
        self._whole_because.clear()
        try:
            cached = self._logits(requests, videos, batch_size, reuse="kv")
            gap = np.abs(cached - whole)
            bad = ~((gap <= atol + rtol * np.abs(whole)) | (np.isnan(cached) & np.isnan(whole)))
            worst = float(np.nanmax(gap)) if gap.size and not np.isnan(gap).all() else 0.0
            reason = f"max |diff| {worst:.3g} beyond {atol:g} + {rtol:g} x |logit|" if bad.any() else None
        except Exception as err:  # noqa: BLE001 - an error of the cached path means whole requests
            worst, reason = float("nan"), f"{type(err).__name__}: {err}"
        status = "passed" if reason is None and self._kv_rows else "failed" if reason else "off"
        self.reuse = "kv" if status == "passed" else "none"
        if status == "off":
            reason = "; ".join(self._whole_because) or "no video was asked more than once"
        self.reuse_check = {"status": status, "requests": len(requests), "cached_rows": self._kv_rows,
                            "max_abs_diff": worst, "atol": atol, "rtol": rtol, "reason": reason}
        if status == "passed":
            return (f"KV-prefix reuse checked{untested} on {len(requests)} requests ({self._kv_rows} through the "
                    f"cache) against whole requests: max |diff| {worst:.3g}, within tolerance; reuse on")
        if status == "off":
            return (f"KV-prefix reuse off{untested}: none of the first batch's {len(requests)} requests went through "
                    f"the cache ({reason}); whole requests")
        return (f"KV-prefix reuse disagrees with whole requests{untested} on the first batch ({reason}): this run "
                "scores whole requests")

    def describe(self) -> dict:
        return {**super().describe(), "reuse": self.reuse, "reuse_check": dict(self.reuse_check),
                "preprocess": self.preprocess, "answer_tokens": dict(self._answer_ids),
                "answer_token_source": dict(self._answer_source), "frame_times": FRAME_TIMES}
