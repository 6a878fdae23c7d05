"""Loader options: every benchmark loader's keyword options and the ones all loaders share, checked against their
signatures (names and types) before any file is read, and the shared ones applied to the loaded items."""

from __future__ import annotations

import functools
import inspect
import json
import types
import typing
from pathlib import Path
from typing import Any, Callable

from bench.loaders.labels import join_labels


def _kinds(hint: Any) -> tuple[type, ...]:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return tuple(typing.get_origin(a) or a for a in typing.get_args(hint))
    return (typing.get_origin(hint) or hint,)


TYPE_NAMES = {bool: "true/false", str: "text", int: "integer", float: "number", type(None): "null", Path: "path"}


def _type_name(kinds: tuple[type, ...]) -> str:
    return " or ".join(TYPE_NAMES.get(k, k.__name__) for k in kinds)


def shared_options(*, labels: Path | None = None) -> None:
    """The options every loader takes (:func:`loader` applies them to the loaded items): ``labels``, a CSV of extra
    item labels joined by item id (:mod:`bench.loaders.labels`)."""


def check_options(load: Callable, options: dict[str, Any]) -> None:
    """Raise a one-line :class:`ValueError` for an option neither ``load`` nor :func:`shared_options` takes, or a
    value of the wrong type."""
    benchmark = load.__module__.rsplit(".", 1)[-1]
    parameters = {n: p for f in (load, shared_options) for n, p in inspect.signature(f).parameters.items()
                  if p.kind is p.KEYWORD_ONLY}
    hints = {**typing.get_type_hints(shared_options), **typing.get_type_hints(load)}
    accepted = ", ".join(f"{n}={json.dumps(p.default)} ({_type_name(_kinds(hints[n]))})" for n, p in parameters.items())
    unknown = sorted(set(options) - set(parameters))
    if unknown:
        raise ValueError(f"the {benchmark} loader has no option {' or '.join(map(repr, unknown))}; its options "
                         f"(with their defaults): {accepted or 'none'}")
    for name, value in options.items():
        kinds = _kinds(hints[name])
        if Path in kinds:
            kinds += (str,)
        if not isinstance(value, kinds) or isinstance(value, bool) and bool not in kinds:
            raise ValueError(f"the {benchmark} loader's option {name!r} must be {_type_name(_kinds(hints[name]))}, "
                             f"got {value!r}")


def loader(load: Callable) -> Callable:
    """Mark a benchmark's ``load(path, video_root=None, *, options...)``: its options and the
    :func:`shared_options` are checked against their signatures (names and types) before anything is read, by
    whichever layer calls it; the shared ones are then applied to the loaded items."""

    @functools.wraps(load)
    def checked(path, video_root=None, **options):
        check_options(load, options)
        labels = options.pop("labels", None)
        items = load(path, video_root, **options)
        if labels is None:
            return items
        return join_labels(items, labels)

    return checked
