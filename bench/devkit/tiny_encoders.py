"""Tiny random image-text and video-text encoders (SigLIP, SigLIP 2, PE-Video, VideoPrism) with their real processor
classes and an offline byte-level BPE tokenizer, saved to a folder and loaded back by path as a hub id is (CLIP and
X-CLIP, with the real CLIP vocabulary, are in :mod:`bench.devkit.tiny`)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import torch

from bench.devkit.tiny import bpe_tokenizer

TOWER = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2}
SPECIAL = ["<pad>", "<eos>", "<cls>", "<unk>", "<bos>"]


def _save(folder: str | Path, model_class, config, processor) -> Path:
    folder = Path(folder)
    torch.manual_seed(0)
    model_class(config).eval().save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


def _tokenizer():
    tokenizer = bpe_tokenizer(SPECIAL)
    tokenizer.pad_token, tokenizer.eos_token = "<pad>", "<eos>"
    tokenizer.unk_token, tokenizer.bos_token = "<unk>", "<bos>"
    return tokenizer


def build_siglip(folder: str | Path) -> Path:
    """SigLIP: 1-layer towers, 32-px images of 8-px patches, texts padded to 64 tokens."""
    from transformers import SiglipConfig, SiglipImageProcessor, SiglipModel, SiglipProcessor

    tokenizer = _tokenizer()
    config = SiglipConfig(text_config={**TOWER, "vocab_size": len(tokenizer), "max_position_embeddings": 64,
                                       "pad_token_id": 0, "eos_token_id": 1, "bos_token_id": 4},
                          vision_config={**TOWER, "image_size": 32, "patch_size": 8})
    processor = SiglipProcessor(image_processor=SiglipImageProcessor(size={"height": 32, "width": 32}),
                                tokenizer=tokenizer)
    return _save(folder, SiglipModel, config, processor)


def build_siglip2(folder: str | Path) -> Path:
    """SigLIP 2: 1-layer towers, each frame at its own aspect ratio in at most 256 patches of 16 px (the processor's
    ``pixel_values``, ``pixel_attention_mask`` and ``spatial_shapes``; the sizes its processor fixes), texts padded
    to 16 tokens."""
    from transformers import Siglip2Config, Siglip2ImageProcessor, Siglip2Model, Siglip2Processor

    tokenizer = _tokenizer()
    config = Siglip2Config(text_config={**TOWER, "vocab_size": len(tokenizer), "max_position_embeddings": 64,
                                        "pad_token_id": 0, "eos_token_id": 1, "bos_token_id": 4},
                           vision_config={**TOWER, "num_patches": 256, "patch_size": 16})
    processor = Siglip2Processor(image_processor=Siglip2ImageProcessor(patch_size=16, max_num_patches=256),
                                 tokenizer=tokenizer)
    return _save(folder, Siglip2Model, config, processor)


def build_pe_video(folder: str | Path) -> Path:
    """PE-Video: a 1-block Perception Encoder per frame (timm's ``vit_pe_core``, 8-px patches on 32-px frames), a
    1-layer temporal encoder over the frames, and a 1-layer ModernBERT text tower."""
    from transformers import PeVideoConfig, PeVideoModel, PeVideoProcessor, PeVideoVideoProcessor

    tokenizer = bpe_tokenizer(SPECIAL)
    tokenizer.pad_token, tokenizer.cls_token, tokenizer.sep_token = "<pad>", "<cls>", "<eos>"
    config = PeVideoConfig(
        text_config={"model_type": "modernbert", **TOWER, "vocab_size": len(tokenizer),
                     "max_position_embeddings": 64, "pad_token_id": 0, "bos_token_id": 2, "eos_token_id": 1,
                     "cls_token_id": 2, "sep_token_id": 1, "global_attn_every_n_layers": 1, "local_attention": 16},
        video_config={**TOWER, "num_key_value_heads": 2, "head_dim": 16,
                      "vision_config": {"architecture": "vit_pe_core_tiny_patch16_384", "num_classes": 16,
                                        "model_args": {"img_size": [32, 32], "patch_size": 8, "embed_dim": 32,
                                                       "depth": 1, "num_heads": 2, "ref_feat_shape": [4, 4]}}})
    video = PeVideoVideoProcessor(size={"height": 32, "width": 32}, do_resize=True)
    processor = PeVideoProcessor(video_processor=video, tokenizer=tokenizer)
    return _save(folder, PeVideoModel, config, processor)


def build_videoprism(folder: str | Path) -> Path:
    """VideoPrism: 1-layer spatial, temporal and auxiliary encoders over 4 frames of 36 px (18-px tubelets), a
    1-layer text tower over the processor's 64 padded tokens."""
    from transformers import (LlavaOnevisionVideoProcessor, VideoPrismClipModel, VideoPrismConfig,
                              VideoPrismProcessor)

    tokenizer = _tokenizer()
    config = VideoPrismConfig(
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_attention_heads": 2, "image_size": 36,
                       "num_frames": 4, "num_spatial_layers": 1, "num_temporal_layers": 1,
                       "num_auxiliary_layers": 1},
        text_config={**TOWER, "vocab_size": len(tokenizer), "max_position_embeddings": 64})
    video = LlavaOnevisionVideoProcessor(size={"height": 36, "width": 36}, do_normalize=False)
    processor = VideoPrismProcessor(video_processor=video, tokenizer=tokenizer)
    return _save(folder, VideoPrismClipModel, config, processor)


BUILDERS: dict[str, Callable[[str | Path], Path]] = {
    "siglip": build_siglip,
    "siglip2": build_siglip2,
    "pe_video": build_pe_video,
    "videoprism": build_videoprism,
}
