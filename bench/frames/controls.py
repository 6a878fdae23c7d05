"""Shortcut controls: what a model gets right with less of the video. Each control is a frame policy derived from
the run's own (the one place that maps a control's name to its policy, and a policy back to its control).

- ``blind``: no video. Protocols that ask a question (entail, mc) are asked without frames (policy ``none``);
  similarity models, which need a video, see one black frame (``single:blank=true``): what is left is the text
  side's prior.
- ``one-frame``: the middle frame of the window (``single:mode=middle``).
- ``shuffled``: the run's frames fed in a seeded random order (``order=shuffle``, one permutation per clip).
- ``reversed``: the run's frames fed backwards (``order=reverse``).
"""

from __future__ import annotations

from typing import Callable, Mapping

from bench.frames.sampling import FramePolicy, policy


def _reordered(order: str) -> Callable[[FramePolicy, bool], FramePolicy]:
    def derive(base: FramePolicy, blind_ok: bool) -> FramePolicy:
        if base.name in ("single", "none"):
            raise ValueError(f"the {order}d-frames control needs a frame policy of several frames, got {base.name!r}")
        return policy(base.name, **{**dict(base.params), "order": order})

    return derive


CONTROLS: dict[str, Callable[[FramePolicy, bool], FramePolicy]] = {
    "blind": lambda base, blind_ok: policy("none") if blind_ok else policy("single", mode="middle", blank=True),
    "one-frame": lambda base, blind_ok: policy("single", mode="middle"),
    "shuffled": _reordered("shuffle"),
    "reversed": _reordered("reverse"),
}


def check_control(name: str) -> str:
    """``name`` if it is a control; a one-line error naming them otherwise."""
    if name not in CONTROLS:
        raise ValueError(f"unknown control {name!r}; choose among {', '.join(CONTROLS)}")
    return name


def control_policy(name: str, base: FramePolicy, blind_ok: bool) -> FramePolicy:
    """The frame policy of control ``name`` for a run whose own policy is ``base``; ``blind_ok``: whether the run's
    protocol can be asked without frames."""
    return CONTROLS[check_control(name)](base, blind_ok)


def control_of(frame_policy: Mapping | None) -> str | None:
    """The control a run's frame policy (as its manifest describes it) amounts to, or None for a full run."""
    found = dict(frame_policy or {})
    name = found.get("name")
    if name == "none":
        return "blind"
    if name == "single":
        return "blind" if found.get("blank") else "one-frame"
    return {"shuffle": "shuffled", "reverse": "reversed"}.get(found.get("order"))


def base_policy(frame_policy: Mapping | None) -> dict:
    """A run's frame policy without what a reordering control adds (its order and the shuffle's seed)."""
    found = dict(frame_policy or {})
    if found.get("name") in ("single", "none"):
        return found
    added = ("order",) if found.get("name") == "consecutive" else ("order", "seed")
    return {k: v for k, v in found.items() if k not in added}
