"""Shortcut controls: what a model gets right with less of the video. Each control is a frame policy derived from
the run's own (the one place that maps a control's name to its policy, and a policy back to its control).

- ``blind``: no video. Protocols that ask a question (entail, mc) are asked without frames (policy ``none``);
  similarity models, which need a video, see a black frame (``single:blank=true``, repeated as below): what is
  left is the text side's prior.
- ``one-frame``: the middle frame of the window as a still, repeated as many times as the run samples frames
  (``single:mode=middle,repeat=k``), so a model that takes a fixed number of frames (X-CLIP) can be asked.
- ``shuffled``: the run's frames fed in a seeded random order (``order=shuffle``, one permutation per clip).
- ``reversed``: the run's frames fed backwards (``order=reverse``).

``as-is`` (:data:`AS_IS`) names the run's own frames where a choice among controls is offered (probes, the pair
viewer); it is no control.
"""

from __future__ import annotations

from typing import Callable, Mapping

from bench.frames.sampling import FramePolicy, policy

AS_IS = "as-is"


def _reordered(order: str) -> Callable[[FramePolicy, bool], FramePolicy]:
    def derive(base: FramePolicy, blind_ok: bool) -> FramePolicy:
        if base.name in ("single", "none"):
            raise ValueError(f"the {order}d-frames control reorders frames: the frame policy {base.name!r} has none "
                             "to reorder")
        return policy(base.name, **{**dict(base.params), "order": order})

    return derive


def _still(base: FramePolicy, **blank: bool) -> FramePolicy:
    """The middle frame (or a black frame with ``blank=True``), as many times as ``base`` samples frames."""
    repeat = int(dict(base.params).get("k", 1))
    return policy("single", mode="middle", **blank, **({"repeat": repeat} if repeat > 1 else {}))


CONTROLS: dict[str, Callable[[FramePolicy, bool], FramePolicy]] = {
    "blind": lambda base, blind_ok: policy("none") if blind_ok else _still(base, blank=True),
    "one-frame": lambda base, blind_ok: _still(base),
    "shuffled": _reordered("shuffle"),
    "reversed": _reordered("reverse"),
}


def check_control(name: str) -> str:
    """``name`` if it is a control; a one-line error naming them otherwise."""
    if name not in CONTROLS:
        raise ValueError(f"unknown control {name!r}; choose among {', '.join(CONTROLS)}")
    return name


def control_policy(name: str, base: FramePolicy, blind_ok: bool = True) -> FramePolicy:
    """The frame policy of control ``name`` (or ``as-is``: ``base`` itself) for a run whose own policy is ``base``;
    ``blind_ok``: whether the run's protocol can be asked without frames."""
    if name == AS_IS:
        return base
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


def run_control(manifest) -> str | None:
    """The control a run is (a manifest, ``bench.config.Manifest``): the one it was scored as (``--control``), else the
    one its frame policy amounts to (:func:`control_of`); None for a full run."""
    policy = manifest.frame_policy
    return manifest.control or control_of(policy if isinstance(policy, Mapping) else None)


def base_policy(frame_policy: Mapping | None) -> dict:
    """A run's frame policy without what a reordering control adds (its order and the shuffle's seed)."""
    found = dict(frame_policy or {})
    if found.get("name") in ("single", "none"):
        return found
    added = ("order",) if found.get("name") == "consecutive" else ("order", "seed")
    return {k: v for k, v in found.items() if k not in added}
