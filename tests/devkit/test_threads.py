"""The thread-count block the training builds and the perf measurements use."""

import pytest
import torch

from bench.devkit.threads import torch_threads


def test_torch_threads_sets_the_count_inside_and_restores_it_after_an_error():
    before = torch.get_num_threads()
    other = 1 if before != 1 else 2
    with pytest.raises(RuntimeError, match="inside"):
        with torch_threads(other):
            assert torch.get_num_threads() == other
            raise RuntimeError("inside")
    assert torch.get_num_threads() == before
