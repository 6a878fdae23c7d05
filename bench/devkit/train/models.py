"""The trained models' architectures: small configurations of the transformers classes real checkpoints use, with
their processors and offline tokenizers (the real CLIP BPE vocabulary from ``open_clip``; for Qwen2-VL a byte-level
BPE trained on the world's sentences and the benchmarks' prompts, so that words are single tokens)."""

from __future__ import annotations

from pathlib import Path

from bench.devkit.tiny import QWEN_SPECIAL, QWEN_TEMPLATE, bpe_tokenizer, clip_vocabulary

PIXELS = 32  # CLIP and X-CLIP frames (the 128-px world scaled by 4: a shape is 6 px across)
QWEN_PIXELS = 84  # Qwen2-VL frames: 6 x 6 patches of 14 px, 3 x 3 tokens per pair of frames
TEXT_POSITIONS = 48  # CLIP pads every text to this; the world's longest sentence has about 30 tokens
WIDTH = 64
QWEN_LAYERS = 4  # two read the texts, one matches each text with the video, one turns the matches into the answer
TEXT_WINDOW = 10  # the text layers' attention window: a read holds its own text, not the option before it


def clip_tokenizer(folder: Path):
    """The real CLIP tokenizer (vocabulary files written into ``folder``)."""
    from transformers import CLIPTokenizer

    vocab, merges = clip_vocabulary(folder)
    return CLIPTokenizer(str(vocab), str(merges))


def _text_config(tokenizer) -> dict:
    return {"vocab_size": len(tokenizer), "hidden_size": WIDTH, "intermediate_size": 2 * WIDTH,
            "num_hidden_layers": 2, "num_attention_heads": 2, "max_position_embeddings": TEXT_POSITIONS}


def _vision_config() -> dict:
    return {"image_size": PIXELS, "patch_size": 8, "hidden_size": WIDTH, "intermediate_size": 2 * WIDTH,
            "num_hidden_layers": 2, "num_attention_heads": 2}


def build_clip(tokenizer):
    """An untrained CLIP (an image model: frames are embedded one by one) and its processor."""
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor

    config = CLIPConfig(text_config=_text_config(tokenizer), vision_config=_vision_config(), projection_dim=WIDTH)
    image = CLIPImageProcessor(size={"shortest_edge": PIXELS}, crop_size={"height": PIXELS, "width": PIXELS})
    return _salient_places(CLIPModel(config)), CLIPProcessor(image_processor=image, tokenizer=tokenizer)


def build_xclip(tokenizer, frames: int):
    """An untrained X-CLIP (frames exchange messages, then a temporal transformer with frame positions pools them)
    for clips of ``frames`` frames, and its processor."""
    from transformers import VideoMAEImageProcessor, XCLIPConfig, XCLIPModel, XCLIPProcessor

    vision = {**_vision_config(), "num_frames": frames, "mit_hidden_size": WIDTH, "mit_intermediate_size": 2 * WIDTH,
              "mit_num_hidden_layers": 1, "mit_num_attention_heads": 2}
    config = XCLIPConfig(text_config=_text_config(tokenizer), vision_config=vision, projection_dim=WIDTH,
                         prompt_layers=1, prompt_attention_heads=2, prompt_alpha=0.0)
    image = VideoMAEImageProcessor(size={"shortest_edge": PIXELS}, crop_size={"height": PIXELS, "width": PIXELS})
    return _salient_places(XCLIPModel(config)), XCLIPProcessor(image_processor=image, tokenizer=tokenizer)


RENAMED = {"pre_layrnorm": "pre_layernorm"}  # CLIP's vision tower spells it so; X-CLIP's does not


def start_from(model, folder: Path) -> list[str]:
    """Copy into ``model`` every tensor of the checkpoint in ``folder`` that it has under the same name (CLIP's
    :data:`RENAMED` spellings read as X-CLIP's) and shape; the names copied (an X-CLIP started from a CLIP keeps its
    own messages between frames, temporal transformer and prompts)."""
    from safetensors.torch import load_file

    own = model.state_dict()
    found = {}
    for name, tensor in load_file(str(folder / "model.safetensors")).items():
        for old, new in RENAMED.items():
            name = name.replace(old, new)
        if name in own and own[name].shape == tensor.shape:
            found[name] = tensor
    model.load_state_dict(found, strict=False)
    return sorted(found)


def _salient_places(model):
    """The patch positions drawn as strong as the patch contents (transformers draws them 14 times weaker, and a
    model this small then hardly learns where things are: left of, right of, moving which way)."""
    import torch

    torch.nn.init.normal_(model.vision_model.embeddings.position_embedding.weight, std=0.3)
    return model


def qwen_tokenizer(corpus: list[str]):
    """A byte-level BPE tokenizer with Qwen2-VL's special tokens and chat template, trained on ``corpus``."""
    return bpe_tokenizer(QWEN_SPECIAL, QWEN_TEMPLATE, corpus=corpus, vocab_size=1200)


def build_qwen2vl(tokenizer, frames: int):
    """An untrained Qwen2-VL (2-block vision tower; 4-layer decoder with M-RoPE over time, height and width, the first
    two layers attending to the last :data:`TEXT_WINDOW` tokens, the head its own) for clips of ``frames`` frames, and
    its processor. Its temporal patch holds all the clip's frames: Qwen2-VL's tower attends only within a temporal patch
    (real checkpoints: two frames), and a tower this small must see the whole clip at once to tell its order. The
    decoder's shape is what :mod:`bench.devkit.train.videollm` assembles: two heads of 32 dimensions whose slowest
    rotary pairs (``rope_theta`` 1e6) hardly turn over a question's length."""
    from transformers import (Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLImageProcessor,
                              Qwen2VLProcessor, Qwen2VLVideoProcessor)

    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in QWEN_SPECIAL}
    config = Qwen2VLConfig(
        text_config={"vocab_size": len(tokenizer), "hidden_size": WIDTH, "intermediate_size": 2 * WIDTH,
                     "num_hidden_layers": QWEN_LAYERS, "num_attention_heads": 2, "num_key_value_heads": 2,
                     "max_position_embeddings": 4096, "bos_token_id": ids["<|endoftext|>"],
                     "eos_token_id": ids["<|im_end|>"], "use_sliding_window": True, "sliding_window": TEXT_WINDOW,
                     "max_window_layers": QWEN_LAYERS,
                     "layer_types": ["sliding_attention"] * 2 + ["full_attention"] * (QWEN_LAYERS - 2),
                     "rope_parameters": {"rope_type": "default", "mrope_section": [4, 6, 6], "rope_theta": 1e6}},
        vision_config={"depth": 2, "embed_dim": WIDTH, "hidden_size": WIDTH, "num_heads": 2, "patch_size": 14,
                       "spatial_merge_size": 2, "temporal_patch_size": frames},
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
        tie_word_embeddings=False)
    # smart_resize keeps 128-px frames at QWEN_PIXELS (a multiple of 28) when the cap sits a little above it
    settings = {"min_pixels": 56 * 56, "max_pixels": (QWEN_PIXELS + 6) ** 2, "temporal_patch_size": frames}
    processor = Qwen2VLProcessor(image_processor=Qwen2VLImageProcessor(**settings), tokenizer=tokenizer,
                                 video_processor=Qwen2VLVideoProcessor(**settings), chat_template=QWEN_TEMPLATE)
    return Qwen2VLForConditionalGeneration(config), processor


def quiet_window_warning() -> None:
    """Drop transformers' warning that sliding-window attention is "not implemented" for torch's fused attention: it
    predates the masks transformers now builds the window into (``create_sliding_window_causal_mask``), which every
    attention implementation honours; the world's Qwen2-VL relies on them (its first two layers)."""
    import logging

    class _Window(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            return not record.getMessage().startswith("Sliding Window Attention is enabled")

    logging.getLogger("transformers.models.qwen2_vl.modeling_qwen2_vl").addFilter(_Window())
