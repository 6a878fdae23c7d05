"""What differs between model architectures, as data: one row per architecture (transformers' model type) that the
test suite builds as a tiny random instance with its real processor classes and scores end to end, at both ends of
the supported transformers range (from ``since`` on).

The backends follow one generic path per family; a row says what that path meets in this architecture: what the
processor makes of the clip, what the model reads of its frames' true times and how (``time_text``: the text each
frame, or each group of ``time_step`` frames, carries in the prompt; tests read it back), the prompt's video
placeholder, where the answer tokens come from, and whether KV-prefix reuse is exact (``kv``: ``"exact"``, or why
it is off). A model whose type is not in the table goes through its family's generic path with one line saying it
is untested; a Video-LLM whose transformers ships no video processor cannot be scored on frames, said in one line
before anything loads.

Every Video-LLM is given its frames with their true times: transformers' ``video_metadata`` (the video's fps, each
frame's index from the clip's first frame, the clip's frame count and duration; :meth:`bench.frames.Frames.
video_metadata`), which the processors turn into prompt text or temporal positions.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

TESTED_TRANSFORMERS = ("5.16.0", "5.23.0")
"""The transformers versions the suite runs on: the oldest and the newest end of the supported range
(requirements-oldest.txt and constraints.txt; tests/test_versions.py keeps them equal)."""
VIDEO_INPUT = "videos=[[frames]] with video_metadata (fps, frame indices, frame count, duration)"


@dataclass(frozen=True)
class Architecture:
    """One architecture's facts (see the module's docstring). ``time_text`` is a format with ``t`` (seconds),
    ``i`` (whole seconds), ``m`` and ``s`` (minutes and seconds of ``mm:ss``); ``time_at``: which time of a group of
    ``time_step`` frames it shows (``first`` or ``mean``). ``since``: the oldest tested transformers version it works
    with, ``before``: what goes wrong with an older one. ``embeddings``: for a video-text encoder whose model class
    lacks ``get_video_features`` / ``get_text_features``, the forward outputs holding the video and text
    embeddings."""

    model_type: str
    name: str
    family: str
    clip: str
    times: str = "not read: the model sees the frames' order only"
    placeholder: str = ""
    time_text: str = ""
    time_step: int = 1
    time_at: str = "first"
    answers: str = ""
    kv: str = ""
    since: str = TESTED_TRANSFORMERS[0]
    before: str = ""
    embeddings: tuple[str, str] | None = None

    def time_texts(self, metadata: dict) -> list[str]:
        """The time texts the prompt carries for frames of this ``video_metadata`` (none for a model that reads no
        times as text)."""
        if not self.time_text:
            return []
        times = [i / metadata["fps"] for i in metadata["frames_indices"]]
        groups = [times[i:i + self.time_step] for i in range(0, len(times), self.time_step)]
        shown = [sum(g) / len(g) if self.time_at == "mean" else g[0] for g in groups]
        return [self.time_text.format(t=t, i=int(t), m=int(t // 60), s=int(t % 60)) for t in shown]

    def tested_versions(self, versions: tuple[str, ...] = TESTED_TRANSFORMERS) -> list[str]:
        """The tested transformers versions that ship this architecture."""
        from packaging.version import Version

        return [v for v in versions if Version(v) >= Version(self.since)]

    def describe(self) -> dict:
        """The row as plain data (manifests, ``foilbench models --json``)."""
        found = {k: v for k, v in asdict(self).items() if v not in ("", None)}
        if not self.time_text:
            found = {k: v for k, v in found.items() if k not in ("time_step", "time_at")}
        if self.family == "videollm":
            found["video"] = VIDEO_INPUT
        return found


TEMPLATE = "first token of the chat template's assistant turn"
_VLLM = "videollm"
ARCHITECTURES: dict[str, Architecture] = {a.model_type: a for a in (
    Architecture("qwen2_vl", "Qwen2-VL", _VLLM, "2-frame temporal patches of 14 px, merged 2x2",
                 "not read: M-RoPE's temporal positions count 2-frame groups", "<|video_pad|>", answers=TEMPLATE,
                 kv="exact"),
    Architecture("qwen2_5_vl", "Qwen2.5-VL", _VLLM, "2-frame temporal patches of 14 px, merged 2x2",
                 "M-RoPE temporal positions: second_per_grid_ts = 2 / sampled fps (tokens_per_second per second)",
                 "<|video_pad|>", answers=TEMPLATE, kv="exact"),
    Architecture("qwen3_vl", "Qwen3-VL", _VLLM, "2-frame temporal patches of 16 px, each group in its own "
                 "<|vision_start|>...<|vision_end|>", "prompt text before each 2-frame group (its mean time)",
                 "<|video_pad|>", "<{t:.1f} seconds>", 2, "mean", TEMPLATE, "exact"),
    Architecture("video_llama_3", "VideoLLaMA 3", _VLLM, "each frame's 14-px patches merged 2x2, tokens of frames "
                 "that barely change dropped", "prompt text before each frame", "<|video_pad|>", "Time {t:.1f}s:",
                 answers=TEMPLATE, kv="exact"),
    Architecture("gemma4", "Gemma 4", _VLLM, "each frame pooled to at most 70 soft tokens between <start_of_image> "
                 "and <end_of_image>", "prompt text (mm:ss) before each frame", "<|video|>",
                 "{m:02d}:{s:02d} <start_of_image>", answers=TEMPLATE,
                 kv="off: its sliding-window layers keep a rolling cache (DynamicSlidingWindowLayer), which the "
                    "shared-prefix copy does not reproduce"),
    Architecture("smolvlm", "SmolVLM 2", _VLLM, "each frame an image of <image> tokens between "
                 "<fake_token_around_image>, after an intro giving the frame count and the clip's duration",
                 "prompt text (mm:ss) before each frame, the duration (H:MM:SS) in the intro", "<video>",
                 "Frame from {m:02d}:{s:02d}:", answers=TEMPLATE, kv="exact"),
    Architecture("glm4v", "GLM-4.1V", _VLLM, "2-frame temporal patches of 14 px, merged 2x2, each group an image "
                 "<|begin_of_image|>...<|end_of_image|>", "prompt text (whole seconds) after each 2-frame group "
                 "(its first frame's time)", "<|video|>", "<|end_of_image|>{i}", 2, answers=TEMPLATE, kv="exact"),
    Architecture("glm46v", "GLM-4.6V", _VLLM, "as GLM-4.1V", "prompt text after each 2-frame group (its first "
                 "frame's time)", "<|video|>", "<|end_of_image|>{t:.1f} seconds", 2, answers=TEMPLATE, kv="exact"),
    Architecture("molmo2", "Molmo 2", _VLLM, "each frame's 14-px patches pooled 2x2 between <frame_start> and "
                 "<frame_end>", "prompt text before each frame", "<|video|>", "{t:.1f} <frame_start>",
                 answers=TEMPLATE, kv="exact", since="5.23.0", before="transformers 5.16 does not ship it"),
    Architecture("internvl", "InternVL 3", _VLLM, "each frame an image tile: 'FrameN: <img>...</img>'",
                 "not read: frames are numbered, not timed", "<video>", answers=TEMPLATE, kv="exact"),
    Architecture("llava_next_video", "LLaVA-NeXT-Video", _VLLM, "each frame's CLIP patches pooled 2x2, all frames "
                 "in place of <video>", placeholder="<video>", answers=TEMPLATE, kv="exact"),
    Architecture("llava_onevision", "LLaVA-OneVision", _VLLM, "each frame's SigLIP patches pooled 2x2, all frames "
                 "in place of <video>", placeholder="<video>", answers=TEMPLATE, kv="exact"),
    Architecture("video_llava", "Video-LLaVA", _VLLM, "each frame's CLIP patches (with their class token) in place "
                 "of <video>", placeholder="<video>", answers=TEMPLATE, kv="exact"),
    Architecture("perception_lm", "Perception LM", _VLLM, "each frame's Perception Encoder patches pooled 2x2 in "
                 "place of <|video|>", placeholder="<|video|>", answers=TEMPLATE, kv="exact"),
    Architecture("clip", "CLIP", "contrastive", "each frame an image; frame embeddings pooled per clip"),
    Architecture("siglip", "SigLIP", "contrastive", "each frame an image; frame embeddings pooled per clip"),
    Architecture("siglip2", "SigLIP 2", "contrastive", "each frame an image at its own aspect ratio (every "
                 "processor output: pixel_values, pixel_attention_mask, spatial_shapes); embeddings pooled per clip"),
    Architecture("xclip", "X-CLIP", "xclip", "videos=[frames], the model's fixed number of frames; its text "
                 "embedding depends on the clip"),
    Architecture("pe_video", "Perception Encoder (video)", "videotext", "videos=[frames], all frames with their "
                 "padding mask; one embedding per clip", since="5.23.0",
                 before="transformers 5.16 cannot build its ModernBERT text config (rope_parameters fails "
                        "huggingface-hub's validation)", embeddings=("video_embeds", "text_video_embeds")),
    Architecture("videoprism", "VideoPrism", "videotext", "videos=[frames]; one embedding per clip"),
    Architecture("gpt2", "GPT-2", "textlm", "no video: the text's log-likelihood", "not read: no frames"),
)}
"""Every tested architecture by model type."""


def architecture_of(model_type: str) -> Architecture | None:
    """The row of ``model_type`` (None: not among the tested)."""
    return ARCHITECTURES.get(model_type)


def takes_video(model_type: str) -> bool:
    """Whether transformers ships a video processor for ``model_type`` (what a Video-LLM needs to see frames)."""
    from transformers.models.auto.video_processing_auto import VIDEO_PROCESSOR_MAPPING_NAMES

    return model_type in ARCHITECTURES or model_type in VIDEO_PROCESSOR_MAPPING_NAMES


def check_architecture(model_type: str, family: str, uses_frames: bool) -> str | None:
    """Before any scoring: a one-line :class:`ValueError` for a model that cannot work (a Video-LLM asked about
    frames whose transformers has no video processor for it); the line to print for one that goes through the
    generic path untested; None for a tested architecture (or one of another family than its row's, whose
    mismatch :func:`~bench.scoring.families.check_fits` reports)."""
    import transformers
    from packaging.version import Version

    row = ARCHITECTURES.get(model_type)
    if row is not None and Version(transformers.__version__) < Version(row.since):
        raise ValueError(f"{row.name} ({model_type}) needs transformers >= {row.since}, this is "
                         f"{transformers.__version__}: {row.before}")
    if family == "videollm" and uses_frames and not takes_video(model_type):
        raise ValueError(f"{model_type!r} takes no video in transformers {transformers.__version__} (it ships no "
                         "video processor for it): it cannot be scored on frames (a blind run, --frames none, can)")
    if model_type in ARCHITECTURES:
        return None
    return (f"{model_type!r} is not among the tested architectures (foilbench models): it goes through the "
            f"generic {family} path untested")


def model_type_of(model) -> str:
    """The model type of ``model``: a hub id or folder (read from its ``config.json`` as it is, so a config this
    transformers cannot build still says what it is), or an object built in memory with a model."""
    inner = getattr(model, "model", None)
    if inner is not None and hasattr(inner, "config"):
        return str(getattr(inner.config, "model_type", ""))
    from transformers import PretrainedConfig

    try:
        return str(PretrainedConfig.get_config_dict(model)[0].get("model_type", ""))
    except (OSError, ValueError):
        return ""
