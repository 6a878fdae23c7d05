"""Tiny random-initialised models with offline tokenizers, saved to a folder and loaded back by path.

Tests, the main job and ``perf score`` use these through exactly the same ``from_pretrained(path)`` code as a hub id.
The CLIP tokenizer is the real CLIP BPE vocabulary shipped with ``open_clip_torch``; language-model tokenizers are
byte-level BPE trained here on a small caption corpus.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Callable

import torch

CORPUS = [
    "a red square moves from left to right", "a blue circle moves from right to left", "first a red square appears",
    "then a blue circle appears", "the square turns from green to red", "a yellow circle jumps exactly three times",
    "Yes", "No", "A", "B", "Which caption best describes this video?", "Does this video entail the description",
    "Carefully watch the video and pay attention to the sequence of events", "Answer with the option's letter",
    "The first fragment (before black frame)", "The second fragment (after black frame)", "Just answer Yes or No.",
]


def _bytes_to_unicode() -> dict[int, str]:
    """The byte-level BPE alphabet: printable bytes map to themselves, the rest to code points above 255."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), 256))
    chars = keep[:]
    extra = 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + extra)
            extra += 1
    return dict(zip(keep, map(chr, chars)))


def clip_vocabulary(folder: Path) -> tuple[Path, Path]:
    """Write CLIP's ``vocab.json`` and ``merges.txt`` from open_clip's ``bpe_simple_vocab_16e6.txt.gz``."""
    import open_clip

    source = Path(open_clip.__file__).parent / "bpe_simple_vocab_16e6.txt.gz"
    lines = gzip.open(source).read().decode("utf-8").split("\n")[1:49152 - 256 - 2 + 1]
    merges = [tuple(line.split()) for line in lines]
    symbols = list(_bytes_to_unicode().values())
    vocab = symbols + [s + "</w>" for s in symbols] + ["".join(m) for m in merges]
    vocab += ["<|startoftext|>", "<|endoftext|>"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.json").write_text(json.dumps({tok: i for i, tok in enumerate(vocab)}))
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(" ".join(m) for m in merges) + "\n")
    return folder / "vocab.json", folder / "merges.txt"


def build_clip(folder: str | Path) -> Path:
    """A 2-layer CLIP (32-px images) with the real CLIP tokenizer."""
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizer

    folder = Path(folder)
    vocab, merges = clip_vocabulary(folder / "tokenizer-src")
    tokenizer = CLIPTokenizer(str(vocab), str(merges))
    torch.manual_seed(0)
    config = CLIPConfig(
        text_config={"vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 2, "max_position_embeddings": 77},
        vision_config={"image_size": 32, "patch_size": 8, "hidden_size": 32, "intermediate_size": 64,
                       "num_hidden_layers": 2, "num_attention_heads": 2},
        projection_dim=16)
    CLIPModel(config).eval().save_pretrained(folder)
    image = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    CLIPProcessor(image_processor=image, tokenizer=tokenizer).save_pretrained(folder)
    return folder


def build_xclip(folder: str | Path) -> Path:
    """A 2-layer X-CLIP (4 frames of 32 px) with the real CLIP tokenizer."""
    from transformers import CLIPTokenizer, VideoMAEImageProcessor, XCLIPConfig, XCLIPModel, XCLIPProcessor

    folder = Path(folder)
    vocab, merges = clip_vocabulary(folder / "tokenizer-src")
    tokenizer = CLIPTokenizer(str(vocab), str(merges))
    torch.manual_seed(0)
    config = XCLIPConfig(
        text_config={"vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 2, "max_position_embeddings": 77},
        vision_config={"image_size": 32, "patch_size": 8, "hidden_size": 32, "intermediate_size": 64,
                       "num_hidden_layers": 2, "num_attention_heads": 2, "num_frames": 4, "mit_hidden_size": 32,
                       "mit_intermediate_size": 64, "mit_num_hidden_layers": 1, "mit_num_attention_heads": 2},
        projection_dim=32, prompt_layers=1, prompt_attention_heads=2)
    XCLIPModel(config).eval().save_pretrained(folder)
    image = VideoMAEImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    XCLIPProcessor(image_processor=image, tokenizer=tokenizer).save_pretrained(folder)
    return folder


def bpe_tokenizer(special: list[str], chat_template: str | None = None, corpus: list[str] | None = None,
                  vocab_size: int = 400, **named: str):
    """A byte-level BPE tokenizer trained on ``corpus`` (default :data:`CORPUS`), with ``special`` tokens;
    ``named``: model-specific special tokens a processor reads as attributes (``image_token="<image>"`` gives
    ``tokenizer.image_token`` and ``tokenizer.image_token_id``)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=special, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    core.train_from_iterator((corpus or CORPUS) * 4, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=core, eos_token=special[0], pad_token=special[0],
                                   chat_template=chat_template, **named)


def build_gpt2(folder: str | Path) -> Path:
    """A 2-layer GPT-2 with an offline byte-level BPE tokenizer."""
    from transformers import GPT2Config, GPT2LMHeadModel

    folder = Path(folder)
    tokenizer = bpe_tokenizer(["<|endoftext|>"])
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=256, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=0, eos_token_id=0)
    GPT2LMHeadModel(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


# A ChatML template with Qwen2-VL's vision placeholders (the format of Qwen2-VL's own chat template).
QWEN_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}{% if part['type'] == 'video' %}<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif part['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
QWEN_SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>",
                "<|video_pad|>"]


def build_qwen2vl(folder: str | Path) -> Path:
    """A 2-layer Qwen2-VL (1-block vision tower, 56-224 px frames) with its processor and chat template."""
    from transformers import (Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLImageProcessor,
                              Qwen2VLProcessor, Qwen2VLVideoProcessor)

    folder = Path(folder)
    tokenizer = bpe_tokenizer(QWEN_SPECIAL, QWEN_TEMPLATE)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in QWEN_SPECIAL}
    config = Qwen2VLConfig(
        text_config={"vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 4096,
                     "bos_token_id": ids["<|endoftext|>"], "eos_token_id": ids["<|im_end|>"],
                     "rope_parameters": {"rope_type": "default", "mrope_section": [1, 1, 2], "rope_theta": 10000.0}},
        vision_config={"depth": 1, "embed_dim": 32, "hidden_size": 32, "num_heads": 2, "patch_size": 14,
                       "spatial_merge_size": 2, "temporal_patch_size": 2},
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"])
    torch.manual_seed(0)
    Qwen2VLForConditionalGeneration(config).eval().save_pretrained(folder)
    pixels = {"min_pixels": 56 * 56, "max_pixels": 112 * 112}
    processor = Qwen2VLProcessor(image_processor=Qwen2VLImageProcessor(**pixels), tokenizer=tokenizer,
                                 video_processor=Qwen2VLVideoProcessor(**pixels), chat_template=QWEN_TEMPLATE)
    processor.save_pretrained(folder)
    return folder


def build_constant_clip(folder: str | Path) -> Path:
    """:func:`build_clip` with a text tower that gives every text the same embedding, to the bit: its last layer
    norm's scale zeroed, its shift -1, 0 or 1 and the text projection's weights multiples of 1/8 in [-1, 1], so that
    every sum in the projection is exact and no batch's summation order changes a bit. A model that cannot tell one
    text from another: every caption ties with its foils, whichever texts are embedded together."""
    from transformers import CLIPModel

    folder = build_clip(folder)
    model = CLIPModel.from_pretrained(folder)
    draw = torch.Generator().manual_seed(0)
    with torch.no_grad():
        norm, projection = model.text_model.final_layer_norm, model.text_projection.weight
        norm.weight.zero_()
        norm.bias.copy_(torch.randint(-1, 2, norm.bias.shape, generator=draw).float())
        projection.copy_(torch.randint(-8, 9, projection.shape, generator=draw).float() / 8)
    model.save_pretrained(folder)
    return folder


def build_constant_qwen2vl(folder: str | Path) -> Path:
    """:func:`build_qwen2vl` with its output head zeroed: every token gets the same logit, so P(Yes) = P(No) for every
    question and the letters of every multiple-choice question tie."""
    from transformers import Qwen2VLForConditionalGeneration

    folder = build_qwen2vl(folder)
    model = Qwen2VLForConditionalGeneration.from_pretrained(folder)
    with torch.no_grad():
        model.get_output_embeddings().weight.zero_()
    model.save_pretrained(folder)
    return folder


BUILDERS: dict[str, Callable[[str | Path], Path]] = {
    "clip": build_clip,
    "xclip": build_xclip,
    "gpt2": build_gpt2,
    "qwen2vl": build_qwen2vl,
}
VARIANTS: dict[str, Callable[[str | Path], Path]] = {
    "clip-constant": build_constant_clip,
    "qwen2vl-constant": build_constant_qwen2vl,
}
"""Tiny models that are an architecture of :data:`BUILDERS` altered on purpose (not one more architecture): models
that cannot tell one text from another, for the tests of ties."""


# A ChatML template in LLaVA-OneVision's layout (the <video> placeholder opens the user turn).
LLAVA_OV_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] if part['type'] == 'video' %}<video>\n{% endfor %}"
    "{% for part in message['content'] if part['type'] == 'image' %}<image>\n{% endfor %}"
    "{% for part in message['content'] if part['type'] == 'text' %}{{ part['text'] }}{% endfor %}{% endif %}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
LLAVA_OV_SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<image>", "<video>"]


def build_llava_onevision(folder: str | Path) -> Path:
    """A 2-layer LLaVA-OneVision (SigLIP tower on 32-px frames, 4 pooled tokens per frame) with its processor."""
    from transformers import (LlavaOnevisionConfig, LlavaOnevisionForConditionalGeneration,
                              LlavaOnevisionImageProcessor, LlavaOnevisionProcessor, LlavaOnevisionVideoProcessor)

    folder = Path(folder)
    tokenizer = bpe_tokenizer(LLAVA_OV_SPECIAL, LLAVA_OV_TEMPLATE)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in LLAVA_OV_SPECIAL}
    config = LlavaOnevisionConfig(
        text_config={"model_type": "qwen2", "vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "max_position_embeddings": 4096, "bos_token_id": ids["<|endoftext|>"],
                     "eos_token_id": ids["<|im_end|>"]},
        vision_config={"model_type": "siglip_vision_model", "image_size": 32, "patch_size": 8, "hidden_size": 32,
                       "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "vision_use_head": False},
        image_token_index=ids["<image>"], video_token_index=ids["<video>"], image_grid_pinpoints=[[32, 32], [32, 64]])
    torch.manual_seed(0)
    LlavaOnevisionForConditionalGeneration(config).eval().save_pretrained(folder)
    size = {"height": 32, "width": 32}
    LlavaOnevisionProcessor(
        image_processor=LlavaOnevisionImageProcessor(size=size, image_grid_pinpoints=[[32, 32], [32, 64]]),
        video_processor=LlavaOnevisionVideoProcessor(size=size), tokenizer=tokenizer, num_image_tokens=16,
        vision_feature_select_strategy="full", chat_template=LLAVA_OV_TEMPLATE).save_pretrained(folder)
    return folder


# Video-LLaVA's layout: "USER: <video>\n{question} ASSISTANT:", the answer following after a space.
VIDEO_LLAVA_TEMPLATE = (
    "{% for message in messages %}{{ message['role'].upper() }}: "
    "{% if message['content'] is string %}{{ message['content'] }} {% else %}"
    "{% for part in message['content'] if part['type'] == 'video' %}<video>\n{% endfor %}"
    "{% for part in message['content'] if part['type'] == 'image' %}<image>\n{% endfor %}"
    "{% for part in message['content'] if part['type'] == 'text' %}{{ part['text'] }} {% endfor %}{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}ASSISTANT:{% endif %}")


def build_video_llava(folder: str | Path) -> Path:
    """A 2-layer Video-LLaVA (CLIP tower on 32-px frames, Llama decoder) with its processor; " A", " B"... are single
    tokens, as in Llama's vocabulary."""
    from tokenizers import AddedToken
    from transformers import (VideoLlavaConfig, VideoLlavaForConditionalGeneration, VideoLlavaImageProcessor,
                              VideoLlavaProcessor, VideoLlavaVideoProcessor)

    folder = Path(folder)
    tokenizer = bpe_tokenizer(["<|endoftext|>", "<image>", "<video>"], VIDEO_LLAVA_TEMPLATE)
    tokenizer.add_tokens([AddedToken(" " + letter, normalized=False) for letter in "ABCDE"])
    config = VideoLlavaConfig(
        text_config={"model_type": "llama", "vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "max_position_embeddings": 4096, "bos_token_id": 0, "eos_token_id": 0, "pad_token_id": 0},
        vision_config={"model_type": "clip_vision_model", "image_size": 32, "patch_size": 8, "hidden_size": 32,
                       "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "projection_dim": 32},
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        video_token_index=tokenizer.convert_tokens_to_ids("<video>"), vision_feature_layer=-2,
        image_seq_length=16, video_seq_length=8 * 17)
    torch.manual_seed(0)
    VideoLlavaForConditionalGeneration(config).eval().save_pretrained(folder)
    size = {"shortest_edge": 32}
    crop = {"height": 32, "width": 32}
    VideoLlavaProcessor(image_processor=VideoLlavaImageProcessor(size=size, crop_size=crop),
                        video_processor=VideoLlavaVideoProcessor(size=size, crop_size=crop), tokenizer=tokenizer,
                        patch_size=8, chat_template=VIDEO_LLAVA_TEMPLATE).save_pretrained(folder)
    return folder


BUILDERS.update({"llava_onevision": build_llava_onevision, "video_llava": build_video_llava})
