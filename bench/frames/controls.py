"""Shortcut controls by name: what a model sees of a clip instead of its frames as a run samples them. Each control
is a frame policy made from the run's own (the frame policies are the mechanism; this is the one place that names
them)."""

from __future__ import annotations

from typing import Callable

from bench.frames.sampling import FramePolicy, policy


def _ordered(order: str) -> Callable[[FramePolicy, int], FramePolicy]:
    def make(base: FramePolicy, seed: int) -> FramePolicy:
        params = {**dict(base.params), "order": order}
        if order == "shuffle":
            params["order_seed"] = seed
        return policy(base.name, **params)

    return make


CONTROLS: dict[str, Callable[[FramePolicy, int], FramePolicy]] = {
    "as-is": lambda base, seed: base,
    "reversed": _ordered("reverse"),
    "shuffled": _ordered("shuffle"),
    "one-frame": lambda base, seed: policy("single", mode="middle", repeat=int(dict(base.params).get("k", 1))),
    "no-video": lambda base, seed: policy("none"),
}
"""Control name -> (the run's frame policy, a seed) -> the frame policy of the control: the frames as sampled,
the same frames backwards, in a seeded random order, the middle frame alone (as many times as the policy samples
frames, ``k``, so that a model taking a fixed number of frames sees a still), no frames at all."""


def control_policy(name: str, base: FramePolicy, seed: int = 0) -> FramePolicy:
    """The frame policy of the control ``name`` on top of ``base``; a one-line error for an unknown name or a base
    policy the control cannot reorder (``single``, ``none``)."""
    if name not in CONTROLS:
        raise ValueError(f"unknown control {name!r}; choose one of {', '.join(CONTROLS)}")
    if name in ("reversed", "shuffled") and base.name in ("single", "none"):
        raise ValueError(f"the {name} control reorders frames: the frame policy {base.name!r} has none to reorder")
    return CONTROLS[name](base, seed)
