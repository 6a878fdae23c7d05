"""Text-only language models (GPT-2, OPT...): each text's log-likelihood, the papers' unimodal baselines.

ViLMA's ``models/text/run.py`` ranks a caption against its foils by perplexity; we keep the sum and mean token
log-likelihood and the token count, so either ranking can be computed.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from bench.scoring.backends.base import Backend, Videos
from bench.scoring.requests import Likelihood


class TextLMBackend(Backend):
    """Log-likelihood of every text, batched with right padding (scores read per position, so padding is inert)."""

    def __init__(self, model: str, **kwargs):
        super().__init__(model, **kwargs)
        self.load("AutoModelForCausalLM", preprocessor="AutoTokenizer")
        self.tokenizer = self.processor
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self._cache: dict[str, tuple[float, float, int]] = {}

    def reset(self) -> None:
        self._cache.clear()

    @torch.inference_mode()
    def loglik(self, texts: Sequence[str], batch_size: int) -> dict[str, tuple[float, float, int]]:
        """(sum, mean, count) of token log-likelihoods per text, the first token conditioned on BOS/EOS."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        bos = self.tokenizer.bos_token_id if self.tokenizer.bos_token_id is not None else self.tokenizer.eos_token_id
        for start in range(0, len(todo), batch_size):
            batch = todo[start:start + batch_size]
            ids = [[bos] + self.tokenizer(t, add_special_tokens=False).input_ids for t in batch]
            width = max(map(len, ids))
            input_ids = torch.full((len(ids), width), self.tokenizer.pad_token_id, dtype=torch.long)
            mask = torch.zeros((len(ids), width), dtype=torch.long)
            for row, seq in enumerate(ids):
                input_ids[row, :len(seq)] = torch.tensor(seq)
                mask[row, :len(seq)] = 1
            logits = self.model(input_ids=input_ids.to(self.device), attention_mask=mask.to(self.device)).logits
            logp = torch.log_softmax(logits[:, :-1].float(), dim=-1)
            target = input_ids[:, 1:].to(self.device)
            token_lp = logp.gather(-1, target.unsqueeze(-1)).squeeze(-1) * mask[:, 1:].to(self.device)
            for row, text in enumerate(batch):
                n = len(ids[row]) - 1
                total = float(token_lp[row].sum())
                self._cache[text] = (total, total / n, n)
        return {t: self._cache[t] for t in texts}

    def answer(self, requests: Sequence[Likelihood], videos: Videos, batch_size: int) -> np.ndarray:
        found = self.loglik([r.text for r in requests], batch_size)
        return np.array([found[r.text] for r in requests], dtype=float).reshape(-1, 3)
