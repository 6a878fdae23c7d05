"""Patch embeddings as matrix products while training: the same outputs and gradients as the convolution, for the
world's models' patch convolutions (CLIP's and X-CLIP's 2-D, the Qwen2-VL tower's 3-D one that holds a whole clip);
no convolution runs inside the block; the model's own forward is back after it; other convolutions are left alone."""

from __future__ import annotations

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

from bench.devkit.train.build import FRAMES
from bench.devkit.train.models import PIXELS, build_clip, build_qwen2vl, build_xclip, clip_tokenizer
from bench.devkit.train.patches import is_patch_convolution, patch_product, patches_as_products

SHAPES = [  # (convolution, input): the CLIP/X-CLIP patch embedding, the Qwen2-VL tower's, several patches per axis
    (lambda: torch.nn.Conv2d(3, 64, 8, stride=8), (6, 3, PIXELS, PIXELS)),
    (lambda: torch.nn.Conv3d(3, 64, (FRAMES, 14, 14), stride=(FRAMES, 14, 14), bias=False), (9, 3, FRAMES, 14, 14)),
    (lambda: torch.nn.Conv3d(2, 5, (2, 3, 4), stride=(2, 3, 4)), (2, 2, 4, 9, 12)),
]


def _output_and_gradients(forward, conv, x):
    out = forward(x)
    return (out, *torch.autograd.grad(out.square().sum(), [x, *conv.parameters()]))


@pytest.mark.parametrize("make, shape", SHAPES)
def test_the_product_gives_the_convolutions_output_and_gradients(make, shape):
    torch.manual_seed(0)
    conv = make()
    x = torch.randn(shape, requires_grad=True)
    assert is_patch_convolution(conv)
    for own, product in zip(_output_and_gradients(conv, conv, x),
                            _output_and_gradients(lambda t: patch_product(conv, t), conv, x)):
        assert own.shape == product.shape
        torch.testing.assert_close(product, own, rtol=1e-4, atol=1e-4)


def test_inside_the_block_no_convolution_runs_and_after_it_the_models_own_forward_is_back():
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 4, stride=4), torch.nn.Conv2d(8, 8, 3, padding=1))
    x = torch.randn(2, 3, 16, 16)

    def convolutions() -> int:
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            model(x).sum().backward()
        return sum(e.count for e in prof.key_averages() if e.key == "aten::convolution")

    before = convolutions()
    assert before == 2
    with patches_as_products(model) as count:
        assert count == 1  # the padded 3x3 convolution is not over patches: left alone
        assert convolutions() == before - count
    assert "forward" not in vars(model[0]) and convolutions() == before


@pytest.mark.parametrize("conv", [torch.nn.Conv2d(3, 8, 4, stride=2), torch.nn.Conv2d(3, 8, 4, stride=4, padding=1),
                                  torch.nn.Conv2d(4, 8, 4, stride=4, groups=2), torch.nn.Conv1d(3, 8, 4, stride=4)])
def test_overlapping_padded_grouped_or_1d_convolutions_are_not_patch_convolutions(conv):
    assert not is_patch_convolution(conv)


def test_an_input_not_a_multiple_of_the_kernel_falls_back_to_the_convolution():
    conv = torch.nn.Conv2d(3, 8, 4, stride=4)
    x = torch.randn(1, 3, 18, 16)
    torch.testing.assert_close(patch_product(conv, x), conv(x))


def test_every_convolution_of_the_worlds_models_is_a_patch_convolution(tmp_path):
    """So the build, which computes patch convolutions as products, runs no convolution at all."""
    from bench.devkit.tiny import QWEN_SPECIAL, QWEN_TEMPLATE, bpe_tokenizer

    tokenizer = clip_tokenizer(tmp_path / "vocab")
    qwen = bpe_tokenizer(QWEN_SPECIAL, QWEN_TEMPLATE)
    models = [build_clip(tokenizer)[0], build_xclip(tokenizer, FRAMES)[0], build_qwen2vl(qwen, FRAMES)[0]]
    kinds = (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d,
             torch.nn.ConvTranspose1d, torch.nn.ConvTranspose2d, torch.nn.ConvTranspose3d)
    for model in models:
        convolutions = [m for m in model.modules() if isinstance(m, kinds)]
        assert convolutions and all(is_patch_convolution(m) for m in convolutions)
    for model in models[:2]:  # their frames are whole patches: the product, never the fallback
        assert PIXELS % model.config.vision_config.patch_size == 0
