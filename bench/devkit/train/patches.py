"""Patch embeddings computed as matrix products while a model trains.

Every trained model cuts its frames into patches with a convolution whose kernel equals its stride (CLIP's and X-CLIP's
``Conv2d``, the Qwen2-VL tower's ``Conv3d``): each output is the product of one patch's pixels with the kernel, so the
convolution is a reshape and a matrix product. The pinned build runs without oneDNN, where torch's own convolutions
(NNPACK forward, a direct backward) took a fifth to a third of each step; as a product the work goes to MKL's pinned
matrix products like the rest of the model. Only the build computes this way: the saved weights are the convolution's,
and scoring runs the model's own convolution.
"""

from __future__ import annotations

import contextlib
import math
from typing import Iterator

import torch
import torch.nn.functional as F


def is_patch_convolution(module: torch.nn.Module) -> bool:
    """Whether ``module`` is a convolution over disjoint patches (kernel = stride, no padding, dilation or groups)."""
    return (isinstance(module, (torch.nn.Conv2d, torch.nn.Conv3d)) and module.kernel_size == module.stride
            and all(p == 0 for p in module.padding) and all(d == 1 for d in module.dilation) and module.groups == 1)


def patch_product(conv: torch.nn.Conv2d | torch.nn.Conv3d, x: torch.Tensor) -> torch.Tensor:
    """``conv(x)`` for a patch convolution (:func:`is_patch_convolution`), computed as one matrix product of the
    patches' pixels with the kernel; input sizes not a multiple of the kernel fall back to the convolution."""
    kernel = conv.kernel_size
    batch, channels, sizes = x.shape[0], x.shape[1], x.shape[2:]
    if any(s % k for s, k in zip(sizes, kernel)):
        return type(conv).forward(conv, x)
    counts = [s // k for s, k in zip(sizes, kernel)]
    d = len(kernel)
    split = x.reshape(batch, channels, *[n for pair in zip(counts, kernel) for n in pair])
    # (batch, channels, n1, k1, n2, k2, ...) -> (batch, n1, n2, ..., channels, k1, k2, ...)
    order = [0, *range(2, 2 + 2 * d, 2), 1, *range(3, 3 + 2 * d, 2)]
    patches = split.permute(order).reshape(batch * math.prod(counts), channels * math.prod(kernel))
    out = F.linear(patches, conv.weight.reshape(conv.out_channels, -1), conv.bias)
    return out.reshape(batch, *counts, conv.out_channels).movedim(-1, 1)


@contextlib.contextmanager
def patches_as_products(*models: torch.nn.Module) -> Iterator[int]:
    """Inside the block, every patch convolution of ``models`` computes :func:`patch_product` (yields how many);
    their own forward is restored after."""
    convolutions = [m for model in models for m in model.modules() if is_patch_convolution(m)]
    for conv in convolutions:
        conv.forward = lambda x, conv=conv: patch_product(conv, x)
    try:
        yield len(convolutions)
    finally:
        for conv in convolutions:
            del conv.forward
