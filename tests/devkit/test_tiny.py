"""The offline tokenizers of the tiny and trained models."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bench.devkit.tiny import bpe_tokenizer


@pytest.mark.slow
def test_an_offline_tokenizer_is_trained_without_printing_anything():
    tokenizer = bpe_tokenizer(["<|endoftext|>"])
    assert tokenizer.convert_tokens_to_ids("<|endoftext|>") == tokenizer.eos_token_id
    # in a process of its own: the trainer's progress wrote three blank lines to the demo's output
    done = subprocess.run([sys.executable, "-c", "from bench.devkit.tiny import bpe_tokenizer; "
                           "bpe_tokenizer(['<|endoftext|>'])"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (done.stdout, done.stderr) == ("", "")
