"""Tiny random Video-LLMs of every architecture in :data:`bench.scoring.architectures.ARCHITECTURES`, each with its
real processor classes (image, video and, for Gemma 4, audio processors as transformers ships them), an offline
byte-level BPE tokenizer carrying the model's special tokens, and a chat template in the layout of the model's own.

Each builder writes ``config.json``, the weights and the processor to a folder, so that the backend loads it by path
exactly as it loads a hub id. Sizes are the smallest each architecture accepts (2 decoder layers of 32 dimensions,
a 1-2 layer vision tower on 28-64 px frames), so that a model builds and scores a few items in seconds on a CPU.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import torch

from bench.devkit.tiny import QWEN_SPECIAL, QWEN_TEMPLATE, bpe_tokenizer

TEXT = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "max_position_embeddings": 4096}


def chatml(video: str, image: str = "<image>", video_after: str = "\n", bos: str = "") -> str:
    """A ChatML chat template whose user turn gives the video placeholder ``video`` (then ``video_after``) where
    the video part is, and its text parts after it."""
    return (
        bos + "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
        "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
        "{% for part in message['content'] %}{% if part['type'] == 'video' %}" + video + video_after +
        "{% elif part['type'] == 'image' %}" + image + "{% elif part['type'] == 'text' %}{{ part['text'] }}"
        "{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


CHATML = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def spaced_letters(tokenizer):
    """``tokenizer`` with " A" ... " E" as single tokens, as in the vocabularies of models whose answer follows a
    space ("ASSISTANT: A", "Assistant: A")."""
    from tokenizers import AddedToken

    tokenizer.add_tokens([AddedToken(" " + letter, normalized=False) for letter in "ABCDE"])
    return tokenizer


def _save(folder: str | Path, model_class, config, processor) -> Path:
    folder = Path(folder)
    torch.manual_seed(0)
    model_class(config).eval().save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


def _text(tokenizer, **more) -> dict:
    """A 2-layer decoder config over ``tokenizer``'s vocabulary (``more`` overrides)."""
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>") if "<|im_end|>" in tokenizer.get_vocab() else 0
    return {**TEXT, "vocab_size": len(tokenizer), "bos_token_id": 0, "eos_token_id": eos, "pad_token_id": 0, **more}


def build_qwen2_5_vl(folder: str | Path) -> Path:
    """Qwen2.5-VL: 1-block windowed vision tower (14-px patches, 56-112 px frames), M-RoPE timed by
    ``second_per_grid_ts``."""
    from transformers import (Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration, Qwen2_5_VLProcessor,
                              Qwen2VLImageProcessor, Qwen2VLVideoProcessor)

    tokenizer = bpe_tokenizer(QWEN_SPECIAL, QWEN_TEMPLATE)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in QWEN_SPECIAL}
    config = Qwen2_5_VLConfig(
        text_config=_text(tokenizer, rope_parameters={"rope_type": "default", "mrope_section": [1, 1, 2],
                                                      "rope_theta": 10000.0}),
        vision_config={"depth": 1, "hidden_size": 32, "out_hidden_size": 32, "intermediate_size": 64,
                       "num_heads": 2, "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2,
                       "window_size": 56, "fullatt_block_indexes": [0], "tokens_per_second": 2},
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"])
    pixels = {"min_pixels": 56 * 56, "max_pixels": 112 * 112}
    processor = Qwen2_5_VLProcessor(image_processor=Qwen2VLImageProcessor(**pixels), tokenizer=tokenizer,
                                    video_processor=Qwen2VLVideoProcessor(**pixels), chat_template=QWEN_TEMPLATE)
    return _save(folder, Qwen2_5_VLForConditionalGeneration, config, processor)


def build_qwen3_vl(folder: str | Path) -> Path:
    """Qwen3-VL: 1-block vision tower (16-px patches, 64-128 px frames) with one deepstack level, each 2-frame
    group after its time in the prompt (``<t seconds>``)."""
    from transformers import (Qwen2VLImageProcessor, Qwen3VLConfig, Qwen3VLForConditionalGeneration,
                              Qwen3VLProcessor, Qwen3VLVideoProcessor)

    tokenizer = bpe_tokenizer(QWEN_SPECIAL, QWEN_TEMPLATE)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in QWEN_SPECIAL}
    config = Qwen3VLConfig(
        text_config=_text(tokenizer, head_dim=8, rope_parameters={
            "rope_type": "default", "mrope_section": [1, 1, 2], "mrope_interleaved": True, "rope_theta": 10000.0}),
        vision_config={"depth": 1, "hidden_size": 32, "out_hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
                       "patch_size": 16, "spatial_merge_size": 2, "temporal_patch_size": 2,
                       "num_position_embeddings": 64, "deepstack_visual_indexes": [0]},
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"])
    image = Qwen2VLImageProcessor(patch_size=16, size={"shortest_edge": 64 * 64, "longest_edge": 128 * 128})
    video = Qwen3VLVideoProcessor(size={"shortest_edge": 64 * 64, "longest_edge": 8 * 128 * 128})
    processor = Qwen3VLProcessor(image_processor=image, tokenizer=tokenizer, video_processor=video,
                                 chat_template=QWEN_TEMPLATE)
    return _save(folder, Qwen3VLForConditionalGeneration, config, processor)


VIDEO_LLAMA_3_SPECIAL = CHATML + ["<|image_pad|>", "<|video_pad|>"]


def build_video_llama_3(folder: str | Path) -> Path:
    """VideoLLaMA 3: 1-layer SigLIP-style tower (14-px patches), every frame after its time (``Time t s:``)."""
    from transformers import (VideoLlama3Config, VideoLlama3ForConditionalGeneration, VideoLlama3ImageProcessor,
                              VideoLlama3Processor, VideoLlama3VideoProcessor)

    template = chatml("<|video_pad|>")
    tokenizer = bpe_tokenizer(VIDEO_LLAMA_3_SPECIAL, template)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in VIDEO_LLAMA_3_SPECIAL}
    config = VideoLlama3Config(
        text_config={"model_type": "qwen2", **_text(tokenizer)},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2,
                       "patch_size": 14},
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"])
    pixels = {"shortest_edge": 28 * 28, "longest_edge": 8 * 56 * 56}
    processor = VideoLlama3Processor(image_processor=VideoLlama3ImageProcessor(size=pixels), tokenizer=tokenizer,
                                     video_processor=VideoLlama3VideoProcessor(size=pixels), chat_template=template)
    return _save(folder, VideoLlama3ForConditionalGeneration, config, processor)


GLM_SPECIAL = ["<|endoftext|>", "[gMASK]", "<sop>", "<|system|>", "<|user|>", "<|assistant|>", "<|begin_of_image|>",
               "<|end_of_image|>", "<|image|>", "<|begin_of_video|>", "<|end_of_video|>", "<|video|>"]
# GLM-4.1V's layout: "[gMASK]<sop><|user|>\n<|begin_of_video|><|video|><|end_of_video|>{question}<|assistant|>\n".
GLM_TEMPLATE = (
    "[gMASK]<sop>{% for message in messages %}<|{{ message['role'] }}|>\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}{% if part['type'] == 'video' %}<|begin_of_video|><|video|><|end_of_video|>"
    "{% elif part['type'] == 'image' %}<|begin_of_image|><|image|><|end_of_image|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}")


def _glm(folder: str | Path, version: str) -> Path:
    import transformers

    names = {"glm4v": ("Glm4v", "Glm4v"), "glm46v": ("Glm46V", "Glm46V")}[version]
    tokenizer = bpe_tokenizer(GLM_SPECIAL, GLM_TEMPLATE)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in GLM_SPECIAL}
    config = getattr(transformers, f"{names[0]}Config")(
        text_config={"model_type": "glm4v_text", **_text(tokenizer, eos_token_id=ids["<|user|>"]),
                     "num_attention_heads": 2, "num_key_value_heads": 1,  # 16-dim heads, half of them rotary
                     "rope_parameters": {"rope_type": "default", "mrope_section": [1, 1, 2], "rope_theta": 10000.0,
                                         "partial_rotary_factor": 0.5}},
        vision_config={"depth": 1, "hidden_size": 32, "out_hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
                       "image_size": 28, "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2},
        image_token_id=ids["<|image|>"], video_token_id=ids["<|video|>"],
        image_start_token_id=ids["<|begin_of_image|>"], image_end_token_id=ids["<|end_of_image|>"],
        video_start_token_id=ids["<|begin_of_video|>"], video_end_token_id=ids["<|end_of_video|>"])
    pixels = {"shortest_edge": 28 * 28, "longest_edge": 8 * 56 * 56}
    processor = getattr(transformers, f"{names[1]}Processor")(
        image_processor=getattr(transformers, f"{names[1]}ImageProcessor")(size=pixels), tokenizer=tokenizer,
        video_processor=getattr(transformers, f"{names[1]}VideoProcessor")(size=pixels), chat_template=GLM_TEMPLATE)
    return _save(folder, getattr(transformers, f"{names[0]}ForConditionalGeneration"), config, processor)


def build_glm4v(folder: str | Path) -> Path:
    """GLM-4.1V: 1-block vision tower (14-px patches), each 2-frame group followed by its whole second."""
    return _glm(folder, "glm4v")


def build_glm46v(folder: str | Path) -> Path:
    """GLM-4.6V: GLM-4.1V's layout with its own processor and model classes."""
    return _glm(folder, "glm46v")


INTERNVL_SPECIAL = CHATML + ["<img>", "</img>", "<IMG_CONTEXT>", "<video>"]


def build_internvl(folder: str | Path) -> Path:
    """InternVL 3: 1-layer InternViT on 28-px frames (one 4-token tile per frame), frames given as ``FrameN:``."""
    from transformers import (GotOcr2ImageProcessor, InternVLConfig, InternVLForConditionalGeneration,
                              InternVLProcessor, InternVLVideoProcessor)

    template = chatml("<video>")
    tokenizer = bpe_tokenizer(INTERNVL_SPECIAL, template, start_image_token="<img>", end_image_token="</img>",
                              context_image_token="<IMG_CONTEXT>", video_token="<video>")
    config = InternVLConfig(
        text_config={"model_type": "qwen2", **_text(tokenizer)},
        vision_config={"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 64,
                       "image_size": [28, 28], "patch_size": [7, 7]},
        image_token_id=tokenizer.convert_tokens_to_ids("<IMG_CONTEXT>"), image_seq_length=4)
    size = {"height": 28, "width": 28}
    processor = InternVLProcessor(image_processor=GotOcr2ImageProcessor(size=size), tokenizer=tokenizer,
                                  video_processor=InternVLVideoProcessor(size=size), image_seq_length=4,
                                  chat_template=template)
    return _save(folder, InternVLForConditionalGeneration, config, processor)


def build_llava_next_video(folder: str | Path) -> Path:
    """LLaVA-NeXT-Video: 1-layer CLIP tower on 32-px frames, each frame's 16 patches pooled to 4 tokens; Video-LLaVA's
    prompt layout, " A", " B"... single tokens as in Llama's vocabulary."""
    from transformers import (LlavaNextImageProcessor, LlavaNextVideoConfig, LlavaNextVideoForConditionalGeneration,
                              LlavaNextVideoProcessor, LlavaNextVideoVideoProcessor)

    from bench.devkit.tiny import VIDEO_LLAVA_TEMPLATE

    tokenizer = spaced_letters(bpe_tokenizer(["<|endoftext|>", "<image>", "<video>"], VIDEO_LLAVA_TEMPLATE))
    config = LlavaNextVideoConfig(
        text_config={"model_type": "llama", **_text(tokenizer)},
        vision_config={"model_type": "clip_vision_model", "image_size": 32, "patch_size": 8, "hidden_size": 32,
                       "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2,
                       "projection_dim": 32},
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        video_token_index=tokenizer.convert_tokens_to_ids("<video>"), vision_feature_layer=-1,
        image_grid_pinpoints=[[32, 32]], image_seq_length=16, video_seq_length=4, spatial_pool_stride=2)
    size, crop = {"shortest_edge": 32}, {"height": 32, "width": 32}
    processor = LlavaNextVideoProcessor(
        video_processor=LlavaNextVideoVideoProcessor(size=size, crop_size=crop),
        image_processor=LlavaNextImageProcessor(size=size, crop_size=crop, image_grid_pinpoints=[[32, 32]]),
        tokenizer=tokenizer, patch_size=8, vision_feature_select_strategy="default", chat_template=VIDEO_LLAVA_TEMPLATE)
    return _save(folder, LlavaNextVideoForConditionalGeneration, config, processor)


SMOLVLM_SPECIAL = ["<|endoftext|>", "<end_of_utterance>", "<fake_token_around_image>", "<global-img>", "<image>",
                   "<video>"]
# SmolVLM 2's layout: "<|im_start|>User: {question}<end_of_utterance>\nAssistant:".
SMOLVLM_TEMPLATE = (
    "<|im_start|>{% for message in messages %}{{ message['role'] | capitalize }}"
    "{% if message['content'][0]['type'] == 'image' %}{{ ':' }}{% else %}{{ ': ' }}{% endif %}"
    "{% for part in message['content'] %}{% if part['type'] == 'text' %}{{ part['text'] }}"
    "{% elif part['type'] == 'image' %}<image>{% elif part['type'] == 'video' %}<video>{% endif %}{% endfor %}"
    "<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}Assistant:{% endif %}")


def build_smolvlm(folder: str | Path) -> Path:
    """SmolVLM 2: 1-layer SigLIP-style tower on 32-px frames, 4 tokens per frame after its ``mm:ss`` time."""
    from transformers import (SmolVLMConfig, SmolVLMForConditionalGeneration, SmolVLMImageProcessor,
                              SmolVLMProcessor, SmolVLMVideoProcessor)

    tokenizer = spaced_letters(bpe_tokenizer(
        SMOLVLM_SPECIAL + ["<|im_start|>"], SMOLVLM_TEMPLATE, fake_image_token="<fake_token_around_image>",
        image_token="<image>", end_of_utterance_token="<end_of_utterance>", global_image_token="<global-img>",
        video_token="<video>"))
    config = SmolVLMConfig(
        text_config={"model_type": "llama", **_text(tokenizer)},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2,
                       "image_size": 32, "patch_size": 8},
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"), scale_factor=2)
    longest = {"longest_edge": 32}
    processor = SmolVLMProcessor(
        image_processor=SmolVLMImageProcessor(size=longest, max_image_size=longest, do_image_splitting=False),
        video_processor=SmolVLMVideoProcessor(size=longest, max_image_size=longest), tokenizer=tokenizer,
        image_seq_len=4, chat_template=SMOLVLM_TEMPLATE)
    return _save(folder, SmolVLMForConditionalGeneration, config, processor)


GEMMA_SPECIAL = ["<pad>", "<eos>", "<bos>", "<start_of_turn>", "<end_of_turn>", "<start_of_image>", "<end_of_image>",
                 "<image_soft_token>", "<start_of_audio>", "<end_of_audio>", "<audio_soft_token>", "<|video|>"]
# The Gemma turn layout: "<bos><start_of_turn>user\n{video}\n\n{question}<end_of_turn>\n<start_of_turn>model\n".
GEMMA_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}<start_of_turn>{{ 'model' if message['role'] == 'assistant' else "
    "message['role'] }}\n{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}{% if part['type'] == 'video' %}<|video|>\n\n"
    "{% elif part['type'] == 'image' %}<start_of_image>{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<end_of_turn>\n{% endfor %}{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}")


def build_gemma4(folder: str | Path) -> Path:
    """Gemma 4: 1-layer vision tower (8-px patches pooled 2x2, at most 70 soft tokens per frame, the fewest its
    processor accepts), every frame after its ``mm:ss`` time; its audio feature extractor as shipped (no audio is
    given)."""
    from transformers import (Gemma4AudioFeatureExtractor, Gemma4Config, Gemma4ForConditionalGeneration,
                              Gemma4ImageProcessor, Gemma4Processor, Gemma4VideoProcessor)

    tokenizer = bpe_tokenizer(GEMMA_SPECIAL, GEMMA_TEMPLATE, image_token="<image_soft_token>",
                              boi_token="<start_of_image>", eoi_token="<end_of_image>",
                              audio_token="<audio_soft_token>", boa_token="<start_of_audio>",
                              eoa_token="<end_of_audio>")
    tokenizer.pad_token, tokenizer.bos_token, tokenizer.eos_token = "<pad>", "<bos>", "<eos>"
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in GEMMA_SPECIAL}
    config = Gemma4Config(
        text_config={**_text(tokenizer, bos_token_id=ids["<bos>"], eos_token_id=ids["<end_of_turn>"],
                             pad_token_id=ids["<pad>"]),
                     "head_dim": 8, "global_head_dim": 8, "vocab_size_per_layer_input": len(tokenizer),
                     "hidden_size_per_layer_input": 8, "sliding_window": 16,
                     "layer_types": ["sliding_attention", "full_attention"]},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2,
                       "num_key_value_heads": 2, "head_dim": 16, "patch_size": 8, "pooling_kernel_size": 2,
                       "position_embedding_size": 64},
        audio_config=None,
        boi_token_id=ids["<start_of_image>"], eoi_token_id=ids["<end_of_image>"],
        image_token_id=ids["<image_soft_token>"], video_token_id=ids["<|video|>"],
        boa_token_id=ids["<start_of_audio>"], eoa_token_index=ids["<end_of_audio>"],
        audio_token_id=ids["<audio_soft_token>"])
    small = {"patch_size": 8, "max_soft_tokens": 70, "pooling_kernel_size": 2}  # 70: the fewest it accepts
    processor = Gemma4Processor(feature_extractor=Gemma4AudioFeatureExtractor(),
                                image_processor=Gemma4ImageProcessor(**small), tokenizer=tokenizer,
                                video_processor=Gemma4VideoProcessor(**small), chat_template=GEMMA_TEMPLATE,
                                image_seq_length=4)
    return _save(folder, Gemma4ForConditionalGeneration, config, processor)


MOLMO2_SPECIAL = CHATML + ["<im_patch>", "<im_col>", "<im_start>", "<low_res_im_start>", "<frame_start>",
                           "<im_end>", "<frame_end>", "<im_low>", "<|image|>", "<|video|>"]


def build_molmo2(folder: str | Path) -> Path:
    """Molmo 2: 1-layer ViT on 56-px frames (16 patches pooled 2x2), every frame after its time (``t.t``)."""
    from transformers import (Molmo2Config, Molmo2ForConditionalGeneration, Molmo2ImageProcessor, Molmo2Processor,
                              Molmo2VideoProcessor)

    template = chatml("<|video|>")
    tokenizer = bpe_tokenizer(MOLMO2_SPECIAL, template, image_token="<|image|>", video_token="<|video|>")
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in MOLMO2_SPECIAL}
    config = Molmo2Config(
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2,
                       "num_key_value_heads": 2, "head_dim": 16, "image_size": [56, 56], "patch_size": 14,
                       "num_position_embeddings": 16},
        adapter_config={"vision_feature_layer": [-1], "hidden_size": 32, "num_attention_heads": 2,
                        "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 64, "text_hidden_size": 32},
        text_config={**_text(tokenizer), "head_dim": 8, "additional_vocab_size": 8},
        image_start_token_id=ids["<im_start>"], low_res_image_start_token_id=ids["<low_res_im_start>"],
        image_end_token_id=ids["<im_end>"], image_patch_id=ids["<im_patch>"],
        frame_start_token_id=ids["<frame_start>"], frame_end_token_id=ids["<frame_end>"])
    size = {"height": 56, "width": 56}
    processor = Molmo2Processor(image_processor=Molmo2ImageProcessor(size=size, max_crops=1),
                                video_processor=Molmo2VideoProcessor(size=size, pooling_size=[2, 2]),
                                tokenizer=tokenizer, chat_template=template)
    return _save(folder, Molmo2ForConditionalGeneration, config, processor)


PERCEPTION_LM_SPECIAL = ["<|end_of_text|>", "<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
                         "<|eot_id|>", "<|image|>", "<|video|>"]
# Perception LM's Llama 3 layout: "<|start_header_id|>user<|end_header_id|>\n\n{video}{question}<|eot_id|>...".
PERCEPTION_LM_TEMPLATE = (
    "<|begin_of_text|>{% for message in messages %}<|start_header_id|>{{ message['role'] }}<|end_header_id|>\n\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}{% if part['type'] == 'video' %}<|video|>"
    "{% elif part['type'] == 'image' %}<|image|>{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|eot_id|>{% endfor %}"
    "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}")


def build_perception_lm(folder: str | Path) -> Path:
    """Perception LM: a 1-block Perception Encoder (timm's ``vit_pe_core``, 8-px patches on 32-px frames) whose 16
    patch tokens per frame are pooled 2x2 to 4."""
    from transformers import (PerceptionLMConfig, PerceptionLMForConditionalGeneration, PerceptionLMImageProcessor,
                              PerceptionLMProcessor, PerceptionLMVideoProcessor)

    tokenizer = bpe_tokenizer(PERCEPTION_LM_SPECIAL, PERCEPTION_LM_TEMPLATE, image_token="<|image|>",
                              video_token="<|video|>")
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in PERCEPTION_LM_SPECIAL}
    config = PerceptionLMConfig(
        vision_config={"model_type": "timm_wrapper", "architecture": "vit_pe_core_tiny_patch16_384",
                       "num_classes": 0, "global_pool": "",
                       "model_args": {"img_size": [32, 32], "patch_size": 8, "embed_dim": 32, "depth": 1,
                                      "num_heads": 2, "ref_feat_shape": [4, 4]}},
        text_config={"model_type": "llama", **_text(tokenizer, eos_token_id=ids["<|eot_id|>"])},
        vision_use_cls_token=True, projector_pooling_ratio=2,
        image_token_id=ids["<|image|>"], video_token_id=ids["<|video|>"])
    size = {"height": 32, "width": 32}
    processor = PerceptionLMProcessor(
        video_processor=PerceptionLMVideoProcessor(size=size),
        image_processor=PerceptionLMImageProcessor(tile_size=32, max_num_tiles=1, vision_input_type="thumb+tile"),
        tokenizer=tokenizer, patch_size=8, pooling_ratio=2, chat_template=PERCEPTION_LM_TEMPLATE)
    return _save(folder, PerceptionLMForConditionalGeneration, config, processor)


BUILDERS: dict[str, Callable[[str | Path], Path]] = {
    "gemma4": build_gemma4,
    "molmo2": build_molmo2,
    "perception_lm": build_perception_lm,
    "qwen2_5_vl": build_qwen2_5_vl,
    "qwen3_vl": build_qwen3_vl,
    "video_llama_3": build_video_llama_3,
    "glm4v": build_glm4v,
    "glm46v": build_glm46v,
    "internvl": build_internvl,
    "llava_next_video": build_llava_next_video,
    "smolvlm": build_smolvlm,
}
