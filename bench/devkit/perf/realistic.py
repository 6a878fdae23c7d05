"""Models and processors at the real sizes, built offline (no hub): CLIP ViT-L/14, Qwen2-VL-2B (and 7B),
LLaVA-OneVision-0.5B.

The configs are the released ones (``config.json`` and ``preprocessor_config.json`` of
``openai/clip-vit-large-patch14``, ``Qwen/Qwen2-VL-2B-Instruct``, ``Qwen/Qwen2-VL-7B-Instruct``,
``llava-hf/llava-onevision-qwen2-0.5b-ov-hf``) written out here; the weights are random. The tokenizers are
offline stand-ins: CLIP's real BPE vocabulary, and for the Qwen-based models a byte-level BPE trained on the prompts
and captions with the real special tokens (it spends a few more tokens per caption than Qwen's own, so text lengths
are, if anything, longer than real). ``overrides`` shrink a config for tests (``{"text": {...}, "vision": {...}}``):
the processors, and so the frames and token counts, stay real.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import torch

from bench.devkit.tiny import CORPUS, LLAVA_OV_SPECIAL, LLAVA_OV_TEMPLATE, QWEN_SPECIAL, QWEN_TEMPLATE, bpe_tokenizer
from bench.devkit.perf.prebuilt import Prebuilt

Overrides = dict[str, dict[str, Any]]


@dataclass(frozen=True)
class Realistic:
    """A model at a released size: its family, the protocol it is scored with, and a builder of (processor, config,
    model class)."""

    name: str
    family: str
    protocol: str
    parts: Callable[[Overrides], tuple[Any, Any, Any]]


def _corpus() -> list[str]:
    from bench.scoring.prompts import PROMPTS

    return CORPUS + list(PROMPTS.values())


def _qwen_tokenizer():
    return bpe_tokenizer(QWEN_SPECIAL, QWEN_TEMPLATE, corpus=_corpus(), vocab_size=2000)


def clip_vit_l14(overrides: Overrides):
    """CLIP ViT-L/14 at 224 px (``openai/clip-vit-large-patch14``)."""
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizer

    from bench.devkit.tiny import clip_vocabulary

    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        vocab, merges = clip_vocabulary(Path(tmp))
        tokenizer = CLIPTokenizer(str(vocab), str(merges))
    text = {"vocab_size": 49408, "hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12,
            "num_attention_heads": 12, "max_position_embeddings": 77, "projection_dim": 768}
    vision = {"image_size": 224, "patch_size": 14, "hidden_size": 1024, "intermediate_size": 4096,
              "num_hidden_layers": 24, "num_attention_heads": 16, "projection_dim": 768}
    config = CLIPConfig(text_config={**text, **overrides.get("text", {})},
                        vision_config={**vision, **overrides.get("vision", {})}, projection_dim=768)
    image = CLIPImageProcessor(size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224},
                               resample=3, do_center_crop=True)
    return CLIPProcessor(image_processor=image, tokenizer=tokenizer), config, CLIPModel


def _qwen2vl(text: dict, vision: dict, overrides: Overrides):
    from transformers import (Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLImageProcessor,
                              Qwen2VLProcessor, Qwen2VLVideoProcessor)

    tokenizer = _qwen_tokenizer()
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in QWEN_SPECIAL}
    text = {**text, "bos_token_id": ids["<|endoftext|>"], "eos_token_id": ids["<|im_end|>"],
            "max_position_embeddings": 32768, "rms_norm_eps": 1e-6,
            "rope_parameters": {"rope_type": "default", "mrope_section": [16, 24, 24], "rope_theta": 1000000.0}}
    vision = {"depth": 32, "embed_dim": 1280, "num_heads": 16, "mlp_ratio": 4, "patch_size": 14,
              "spatial_merge_size": 2, "temporal_patch_size": 2, "in_channels": 3, **vision}
    config = Qwen2VLConfig(
        text_config={**text, **overrides.get("text", {})}, vision_config={**vision, **overrides.get("vision", {})},
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"], bos_token_id=ids["<|endoftext|>"],
        eos_token_id=ids["<|im_end|>"], vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"], tie_word_embeddings=text.get("tie_word_embeddings", False))
    processor = Qwen2VLProcessor(
        image_processor=Qwen2VLImageProcessor(min_pixels=56 * 56, max_pixels=28 * 28 * 1280),
        video_processor=Qwen2VLVideoProcessor(), tokenizer=tokenizer, chat_template=QWEN_TEMPLATE)
    return processor, config, Qwen2VLForConditionalGeneration


def qwen2vl_2b(overrides: Overrides):
    """Qwen2-VL-2B-Instruct (video frames to at most 768 x 28 x 28 pixels: 448 x 448 stays 448 x 448)."""
    text = {"vocab_size": 151936, "hidden_size": 1536, "intermediate_size": 8960, "num_hidden_layers": 28,
            "num_attention_heads": 12, "num_key_value_heads": 2, "tie_word_embeddings": True}
    return _qwen2vl(text, {"hidden_size": 1536}, overrides)


def qwen2vl_7b(overrides: Overrides):
    """Qwen2-VL-7B-Instruct."""
    text = {"vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
            "num_attention_heads": 28, "num_key_value_heads": 4}
    return _qwen2vl(text, {"hidden_size": 3584}, overrides)


def llava_onevision_05b(overrides: Overrides):
    """LLaVA-OneVision-Qwen2-0.5B (SigLIP at 384 px, 196 tokens per video frame)."""
    from transformers import (LlavaOnevisionConfig, LlavaOnevisionForConditionalGeneration,
                              LlavaOnevisionImageProcessor, LlavaOnevisionProcessor, LlavaOnevisionVideoProcessor)

    tokenizer = bpe_tokenizer(LLAVA_OV_SPECIAL, LLAVA_OV_TEMPLATE, corpus=_corpus(), vocab_size=2000)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in LLAVA_OV_SPECIAL}
    text = {"model_type": "qwen2", "vocab_size": 152000, "hidden_size": 896, "intermediate_size": 4864,
            "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2, "rope_theta": 1000000.0,
            "max_position_embeddings": 32768, "tie_word_embeddings": True, "bos_token_id": ids["<|endoftext|>"],
            "eos_token_id": ids["<|im_end|>"]}
    vision = {"model_type": "siglip_vision_model", "hidden_size": 1152, "intermediate_size": 4304,
              "num_hidden_layers": 26, "num_attention_heads": 16, "image_size": 384, "patch_size": 14,
              "vision_use_head": False}
    config = LlavaOnevisionConfig(text_config={**text, **overrides.get("text", {})},
                                  vision_config={**vision, **overrides.get("vision", {})},
                                  image_token_index=ids["<image>"], video_token_index=ids["<video>"],
                                  vision_feature_select_strategy="full", vision_feature_layer=-1,
                                  tie_word_embeddings=True)
    size = {"height": 384, "width": 384}
    processor = LlavaOnevisionProcessor(
        image_processor=LlavaOnevisionImageProcessor(size=size),
        video_processor=LlavaOnevisionVideoProcessor(size=size),
        tokenizer=tokenizer, num_image_tokens=729, vision_feature_select_strategy="full",
        chat_template=LLAVA_OV_TEMPLATE)
    return processor, config, LlavaOnevisionForConditionalGeneration


# Overrides that shrink each model to a few layers of a few units while its processor, token ids and vision grid
# stay real (tests; the zero-cost models of ``perf pipeline``).
TINY: dict[str, Overrides] = {
    "clip-vit-l14": {"text": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                              "num_attention_heads": 2},
                     "vision": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                                "num_attention_heads": 2}},
    "qwen2vl-2b": {"text": {"hidden_size": 128, "intermediate_size": 64, "num_hidden_layers": 1,
                            "num_attention_heads": 1, "num_key_value_heads": 1},
                   "vision": {"depth": 1, "embed_dim": 32, "num_heads": 1, "hidden_size": 128}},
    "llava-ov-0.5b": {"text": {"hidden_size": 64, "intermediate_size": 64, "num_hidden_layers": 1,
                               "num_attention_heads": 2, "num_key_value_heads": 1},
                      "vision": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                                 "num_attention_heads": 2}},
}
TINY["qwen2vl-7b"] = TINY["qwen2vl-2b"]

MODELS: dict[str, Realistic] = {m.name: m for m in (
    Realistic("clip-vit-l14", "contrastive", "similarity", clip_vit_l14),
    Realistic("qwen2vl-2b", "videollm", "entail", qwen2vl_2b),
    Realistic("qwen2vl-7b", "videollm", "entail", qwen2vl_7b),
    Realistic("llava-ov-0.5b", "videollm", "entail", llava_onevision_05b),
)}


def build(name: str, overrides: Overrides | None = None, device: str = "cpu",
          dtype: torch.dtype = torch.float32) -> Prebuilt:
    """The random-initialised model ``name`` with its processor, created directly on ``device`` in ``dtype``."""
    processor, config, model_class = MODELS[name].parts(overrides or {})
    default = torch.get_default_dtype()
    torch.manual_seed(0)
    try:
        torch.set_default_dtype(dtype)
        with torch.device(device):
            model = model_class(config).eval()
    finally:
        torch.set_default_dtype(default)
    return Prebuilt(name, processor, model)


def save(name: str, folder: str | Path, device: str = "cpu", dtype: torch.dtype = torch.float32,
         overrides: Overrides | None = None) -> Path:
    """The model ``name`` written to ``folder`` (weights, config, processor), to be loaded by path like a hub id."""
    folder = Path(folder)
    if not (folder / "config.json").is_file():
        built = build(name, overrides, device, dtype)
        built.model.save_pretrained(folder)
        built.processor.save_pretrained(folder)
    return folder
