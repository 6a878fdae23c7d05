"""The optimiser, learning-rate schedule and step every trained model uses: AdamW, linear warm-up, cosine decay,
gradients clipped to norm 1."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch


@dataclass(frozen=True)
class Schedule:
    """The optimiser settings every training recipe has (each recipe sets its own defaults and adds its own fields)."""

    steps: int
    lr: float = 2e-3
    warmup: int = 30
    weight_decay: float = 0.05

    @property
    def total_steps(self) -> int:
        """Every step the recipe takes (what a progress bar counts)."""
        return self.steps

    def scaled(self, factor: float):
        """This recipe with its steps shortened by ``factor`` (at least one)."""
        return replace(self, steps=max(1, round(self.steps * factor)))


def optimizer_and_schedule(model: torch.nn.Module, recipe: Schedule):
    """AdamW (weight decay on matrices only) and a schedule warming up over ``recipe.warmup`` steps, then decaying
    along a cosine to a tenth of ``recipe.lr`` at ``recipe.steps``."""
    lr, weight_decay, warmup, steps = recipe.lr, recipe.weight_decay, recipe.warmup, recipe.steps
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.ndim >= 2], "weight_decay": weight_decay},
              {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.98))

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        progress = min(1.0, (step - warmup) / max(1, steps - warmup))
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))

    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def take_step(model: torch.nn.Module, optimizer, schedule, loss: torch.Tensor) -> None:
    """One optimiser step on ``loss``: gradients clipped to norm 1, then the schedule advanced."""
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    schedule.step()
